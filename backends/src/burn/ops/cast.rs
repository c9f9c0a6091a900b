//! Cast and CastLike, and the rounding / wrapping of every op's result to its declared element
//! type ([`wrap_narrow`]).
use super::{Cx, Outs, Res, one, req};
use crate::burn::tensor::{Class, K, R, Val, class, run_unsup};
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::{Int, Tensor, TensorData};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

/// Cast, CastLike.
pub(super) fn cast_op<B: BurnBackend>(
    node: &Node,
    ins: &[Option<Val<B>>],
    _cx: &Cx<B>,
) -> Res<Outs<B>> {
    let op = node.op_type.as_str();
    let a = &node.attributes;
    let x = req(ins, 0, op)?;
    let to = if op == "Cast" {
        DType::from_code(a.int("to", 0) as i32)
    } else {
        req(ins, 1, op)?.dtype
    };
    one(cast(x, to)?)
}

pub(super) fn cast<B: BurnBackend>(x: &Val<B>, to: DType) -> Res<Val<B>> {
    let cls = class(to).ok_or_else(|| run_unsup(format!("Cast to {to}")))?;
    let k = match cls {
        Class::Float => K::F(x.f()),
        Class::Int => match &x.k {
            K::F(t) => {
                if x.host_f64().iter().any(|v| !v.is_finite()) {
                    return Err(run_unsup("Cast of non-finite floats to integers"));
                }
                K::I(t.clone().int())
            }
            _ => K::I(x.i()),
        },
        Class::Bool => K::B(x.b()),
    };
    Ok(wrap_narrow(Val::new(k, x.shape.clone(), to)))
}

/// `v` with its integer elements wrapped around to the values its element type stores when
/// that type is narrower than burn's one integer type (i64 on NdArray): a u8 subtraction that
/// goes below 0 gives 255 - .., as in the library the model describes, not a negative number
/// the next op would then compute with.
///
/// Floats of a type narrower than the backend's float type (f16 and bf16, and f32 when the
/// backend computes in f64) are rounded to that type: each op computes wide and stores its
/// result in the declared type, as ONNX Runtime's kernels do, so a Cast or a Floor downstream
/// sees the value the model holds.
pub(crate) fn wrap_narrow<B: BurnBackend>(v: Val<B>) -> Val<B> {
    let wide = 8 * std::mem::size_of::<B::IntElem>();
    let to = v.dtype;
    if let K::F(t) = &v.k
        && to.is_float()
        && to
            .bits()
            .is_some_and(|b| b < 8 * std::mem::size_of::<B::FloatElem>())
        && v.numel() > 0
    {
        let x: Vec<f64> = t.to_data().iter::<f64>().collect();
        let r: Vec<f64> = match to {
            DType::F16 => x.iter().map(|&a| half::f16::from_f64(a).to_f64()).collect(),
            DType::BF16 => x
                .iter()
                .map(|&a| half::bf16::from_f64(a).to_f64())
                .collect(),
            _ => x.iter().map(|&a| a as f32 as f64).collect(),
        };
        let t = Tensor::<B, R>::from_data(TensorData::new(r, t.dims()), &t.device());
        return Val::new(K::F(t), v.shape.clone(), to);
    }
    match (&v.k, to.bits()) {
        (K::I(t), Some(bits)) if bits < wide && to.is_int() => {
            let m = 1i64 << bits;
            // ((v mod m) + m) mod m, whatever sign the remainder takes.
            let modulo =
                |t: Tensor<B, R, Int>| t.remainder_scalar(m).add_scalar(m).remainder_scalar(m);
            let wrapped = if to.is_signed_int() {
                modulo(t.clone().add_scalar(m / 2)).sub_scalar(m / 2)
            } else {
                modulo(t.clone())
            };
            Val::new(K::I(wrapped), v.shape.clone(), to)
        }
        _ => v,
    }
}

// The ops of this file, found from their names (see `super::find`).
table! {
    "Cast" | "CastLike" => cast_op,
}
