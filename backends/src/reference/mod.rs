//! The f64 reference interpreter (ground truth).
use crate::backend::{Backend, BackendError, Capabilities, Prepared, Stage};

/// The reference interpreter.
#[derive(Default)]
pub struct Reference;

impl Reference {
    /// A new interpreter.
    pub fn new() -> Reference {
        Reference
    }
}

impl Backend for Reference {
    fn name(&self) -> &str {
        "reference"
    }
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }
    fn capabilities(&mut self) -> Capabilities {
        Capabilities::from_ops("reference", &self.version(), &[], &[])
    }
    fn prepare(&mut self, _model: &[u8]) -> Result<Box<dyn Prepared>, BackendError> {
        Err(BackendError::unsupported(
            Stage::Load,
            "not implemented yet",
        ))
    }
}
