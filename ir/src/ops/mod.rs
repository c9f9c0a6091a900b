//! Op specs of the default ONNX domain (and the preview training domain), one family per
//! folder and one file per op or small group of ops (each family's `mod.rs` says which file
//! holds which op). Each family has a `register` function that adds its specs to the registry.
//! `contrib/` holds ONNX Runtime's `com.microsoft` ops.
pub mod auto_pad;
pub mod common;
pub mod contrib;
pub mod control;
pub mod elementwise;
pub mod nn;
pub mod reduce;
pub mod shape;

use crate::registry::Registry;

/// Adds every known op spec to `r`.
pub fn register_all(r: &mut Registry) {
    elementwise::register(r);
    nn::register(r);
    reduce::register(r);
    shape::register(r);
    control::register(r);
    contrib::register(r);
}
