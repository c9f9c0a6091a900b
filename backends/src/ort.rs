//! ONNX Runtime through the `ort` crate (loaded dynamically).
use crate::backend::{Backend, BackendError, Capabilities, Prepared, Stage};
use crate::catalog::{Config, CreateError};

/// ONNX Runtime in one configuration.
pub struct OrtBackend {
    name: String,
}

impl OrtBackend {
    /// Creates `ort`, `ort-noopt` or `ort-cuda`.
    pub fn create(name: &str, _config: &Config) -> Result<OrtBackend, CreateError> {
        Ok(OrtBackend { name: name.into() })
    }
}

impl Backend for OrtBackend {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> String {
        String::new()
    }
    fn capabilities(&mut self) -> Capabilities {
        Capabilities::default()
    }
    fn prepare(&mut self, _model: &[u8]) -> Result<Box<dyn Prepared>, BackendError> {
        Err(BackendError::unsupported(
            Stage::Load,
            "not implemented yet",
        ))
    }
}
