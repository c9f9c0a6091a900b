//! The GELU family of `com.microsoft`: Gelu, FastGelu (tanh approximation, optional bias),
//! BiasGelu (bias, then Gelu) and QuickGelu (x * sigmoid(alpha * x)).
use super::MS;
use crate::dtype::DType;
use crate::ops::common::*;
use crate::ops::nn::shape_of;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};

/// Input `i`, when present, is a 1-D vector as long as input 0's last axis (a bias).
fn bias_of_last_axis(c: &InferCtx, i: usize) -> Result<(), InferError> {
    let (Some(x), Some(b)) = (shape_of(c, 0), shape_of(c, i)) else {
        return Ok(());
    };
    let Some(last) = x.last() else {
        return Err(rule!(
            "input 0 is a scalar: there is no last axis for the bias"
        ));
    };
    match b.as_slice() {
        [d] if d.value().is_none() || last.value().is_none() || d == last => Ok(()),
        _ => Err(rule!(
            "input {i} must be a 1-D vector as long as input 0's last axis"
        )),
    }
}

pub(super) fn register(r: &mut Registry) {
    let a = Category::Activation;
    r.add(
        OpSpec::new("Gelu", &[1], a)
            .domain(MS)
            .traits(Traits::ACTIVATION)
            .input("X", "T")
            .output("Y", "T")
            .types("T", &[DType::F32])
            .infer(unary),
    );
    r.add(
        OpSpec::new("FastGelu", &[1], a)
            .domain(MS)
            .traits(Traits::ACTIVATION)
            .input("X", "T")
            .opt_input("bias", "T")
            .output("Y", "T")
            .types("T", &[DType::F32])
            .infer(unary)
            .requires(|c| bias_of_last_axis(c, 1)),
    );
    r.add(
        OpSpec::new("BiasGelu", &[1], a)
            .domain(MS)
            .traits(Traits::ACTIVATION)
            .input("A", "T")
            .input("B", "T")
            .output("C", "T")
            .types("T", &[DType::F32])
            .infer(unary)
            .requires(|c| bias_of_last_axis(c, 1)),
    );
    r.add(
        OpSpec::new("QuickGelu", &[1], a)
            .domain(MS)
            .traits(Traits::ACTIVATION)
            .attr(AttrSpec::float("alpha", 1.702).float_buckets(&[
                (f64::NEG_INFINITY, 0.0),
                (0.0, 1.0),
                (1.0, 2.0),
                (2.0, f64::INFINITY),
            ]))
            .input("X", "T")
            .output("Y", "T")
            .types("T", &[DType::F32])
            .infer(unary),
    );
}
