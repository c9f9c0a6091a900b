//! MatMul in a burn reproduction, as the interpreter runs it: a 1-D operand made a matrix
//! (a leading or a trailing one), both operands reshaped to rank `R`, burn's `matmul`, then the
//! result reshaped to ONNX's shape (the axes added for 1-D operands dropped).
use super::{R, dims_list, padded, reshape_expr};
use crate::value::{HostTensor, broadcast_all};

/// The shape of ONNX's result of a MatMul of `a` (rank ≥ 2) by `b` (rank ≥ 2) and the
/// interpreter's refusals: inner dimensions that differ, batch dimensions that do not
/// broadcast, a result above rank [`R`].
fn result_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let (na, nb) = (a.len(), b.len());
    if a[na - 1] != b[nb - 2] {
        return None;
    }
    let mut out = broadcast_all(&[&a[..na - 2], &b[..nb - 2]])?;
    out.extend([a[na - 2], b[nb - 1]]);
    (out.len() <= R).then_some(out)
}

/// [`super::body`] of MatMul of `x` by `z` (floats or integers).
pub(super) fn matmul_body(x: &HostTensor, z: &HostTensor) -> Option<(String, usize)> {
    let (mut sa, mut sb) = (x.shape.clone(), z.shape.clone());
    if sa.is_empty() || sb.is_empty() || sa.len() > R || sb.len() > R {
        return None;
    }
    let (a1, b1) = (sa.len() == 1, sb.len() == 1);
    if a1 {
        sa.insert(0, 1);
    }
    if b1 {
        sb.push(1);
    }
    let mut fin = result_shape(&sa, &sb)?;
    if b1 {
        fin.pop();
    }
    if a1 {
        let l = fin.len();
        fin.remove(l - 1 - usize::from(!b1));
    }
    let kind = if x.dtype.is_int() { ", Int" } else { "" };
    let mut s = format!(
        "    let y = {}.matmul({});\n",
        reshape_expr("x", &padded(&sa), kind),
        reshape_expr("z", &padded(&sb), kind)
    );
    let to = dims_list(&padded(&fin));
    if fin.contains(&0) {
        // burn reads a 0 in a reshape target as "keep this axis": the interpreter makes an
        // empty result afresh
        s.push_str(&format!(
            "    let y: Tensor<B, {R}{kind}> = Tensor::empty([{to}], &y.device());\n"
        ));
    } else {
        s.push_str(&format!("    let y = y.reshape([{to}]);\n"));
    }
    Some((s, R))
}
