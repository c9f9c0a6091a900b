//! An interpreter of the IR over burn's tensor API, generic over burn's `Backend`.
use crate::backend::{Backend, BackendError, Capabilities, Prepared, Stage};

/// The burn interpreter on one burn backend.
pub struct BurnBackend {
    name: &'static str,
}

impl Backend for BurnBackend {
    fn name(&self) -> &str {
        self.name
    }
    fn version(&self) -> String {
        "0.21.0".into()
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

/// burn on NdArray.
pub fn ndarray() -> Box<dyn Backend> {
    Box::new(BurnBackend {
        name: "burn-ndarray",
    })
}

/// burn on wgpu.
#[cfg(feature = "wgpu")]
pub fn wgpu() -> Result<Box<dyn Backend>, crate::catalog::CreateError> {
    Ok(Box::new(BurnBackend { name: "burn-wgpu" }))
}

/// burn on CUDA.
#[cfg(feature = "cuda")]
pub fn cuda() -> Result<Box<dyn Backend>, crate::catalog::CreateError> {
    Ok(Box::new(BurnBackend { name: "burn-cuda" }))
}
