//! tract (`tract-onnx`), plain and optimized.
use crate::backend::{Backend, BackendError, Capabilities, Prepared, Stage};

/// tract, plain (`tract`) or optimized (`tract-opt`).
pub struct TractBackend {
    optimized: bool,
}

impl TractBackend {
    /// A new backend.
    pub fn new(optimized: bool) -> TractBackend {
        TractBackend { optimized }
    }
}

impl Backend for TractBackend {
    fn name(&self) -> &str {
        if self.optimized { "tract-opt" } else { "tract" }
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
