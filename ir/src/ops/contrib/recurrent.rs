//! DynamicQuantizeLSTM of `com.microsoft`: an LSTM (ONNX's equations, gates `i o f c`, time
//! steps first) whose weights are 8-bit with per-direction or per-column scales and zero
//! points, stored transposed: W is `[directions, input, 4 * hidden]`, R `[directions, hidden,
//! 4 * hidden]`. ONNX Runtime's kernel multiplies them by X and H quantized to uint8 on the
//! fly (per tensor, as DynamicQuantizeLinear does): X once, H at every step, over the batch
//! rows one intra-op thread computes.
use super::MS;
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType;
use crate::ops::common::*;
use crate::ops::nn::{activations_check, expect_dims, flag, rnn_infer, shape_of};
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};

fn directions(c: &InferCtx) -> i64 {
    if c.string("direction", "forward") == "bidirectional" {
        2
    } else {
        1
    }
}

/// A scale or zero point (input `i`): `[directions]` (per tensor) or `[directions, 4 *
/// hidden]` (per column), the zero point shaped as its scale.
fn quant_params(c: &InferCtx, i: usize, h: i64) -> Result<(), InferError> {
    let dirs = Some(directions(c));
    match shape_of(c, i).map(|s| s.len()) {
        Some(1) => expect_dims(c, i, &[dirs])?,
        Some(_) => expect_dims(c, i, &[dirs, Some(4 * h)])?,
        None => {}
    }
    if let (Some(s), Some(z)) = (shape_of(c, i), shape_of(c, i + 1))
        && s.len() != z.len()
    {
        return Err(rule!("input {} must have its scale's shape", i + 1));
    }
    Ok(())
}

/// Per-column zero points must be one value (uint8 weights) or zeros (int8): the kernel
/// reads one zero point per product and refuses others.
fn one_zero_point(c: &InferCtx, i: usize) -> Result<(), InferError> {
    let per_column = shape_of(c, i).is_some_and(|s| s.len() == 2);
    let Some(z) = c.const_i64s(i).filter(|_| per_column) else {
        return Ok(());
    };
    let want = if c.dtype(i) == DType::I8 {
        Some(&0)
    } else {
        z.first()
    };
    if z.iter().any(|v| Some(v) != want) {
        return Err(rule!(
            "input {i}: per-column zero points must be equal (uint8) or zero (int8)"
        ));
    }
    Ok(())
}

fn check(c: &InferCtx) -> Result<(), InferError> {
    rnn_infer(c)?;
    let Some(h) = c.int_opt("hidden_size") else {
        return Err(rule!("hidden_size is missing"));
    };
    let dirs = Some(directions(c));
    let input = shape_of(c, 0).and_then(|x| x[2].value());
    expect_dims(c, 1, &[dirs, input, Some(4 * h)])?;
    expect_dims(c, 2, &[dirs, Some(h), Some(4 * h)])?;
    expect_dims(c, 3, &[dirs, Some(8 * h)])?;
    expect_dims(c, 7, &[dirs, Some(3 * h)])?;
    for i in [8, 10] {
        quant_params(c, i, h)?;
        one_zero_point(c, i + 1)?;
    }
    activations_check(c, 3 * directions(c))
}

/// What the docs leave open: how `input_forget` couples the gates (as for ONNX's LSTM), and
/// a batch of more than one row, whose H the kernel quantizes per share of the batch that
/// one of ONNX Runtime's intra-op threads computes (the result depends on the thread count).
fn open_cases(c: &InferCtx) -> Result<(), InferError> {
    if c.int("input_forget", 0) != 0 {
        return Err(rule!(
            "input_forget = 1: how the gates are coupled is not defined"
        ));
    }
    if let Some(x) = shape_of(c, 0)
        && x.get(1).is_some_and(|b| b.value().is_some_and(|b| b > 1))
    {
        return Err(rule!(
            "a batch of {:?} rows: ONNX Runtime quantizes H per thread's share of the batch",
            x[1]
        ));
    }
    Ok(())
}

fn attrs(s: OpSpec) -> OpSpec {
    crate::ops::nn::cell_attrs(s, AttrSpec::of("activations", AttrKind::Strings))
        .attr(flag("input_forget"))
}

pub(super) fn register(r: &mut Registry) {
    let s = OpSpec::new("DynamicQuantizeLSTM", &[1], Category::Rnn)
        .domain(MS)
        .traits(Traits::NAN_UNSPECIFIED | Traits::INF_UNSPECIFIED);
    let s = attrs(s)
        .input("X", "T")
        .input("W", "T2")
        .input("R", "T2")
        .opt_input("B", "T")
        .opt_input("sequence_lens", "T1")
        .opt_input("initial_h", "T")
        .opt_input("initial_c", "T")
        .opt_input("P", "T")
        .input("W_scale", "T")
        .input("W_zero_point", "T2")
        .input("R_scale", "T")
        .input("R_zero_point", "T2")
        .opt_output("Y", "T")
        .opt_output("Y_h", "T")
        .opt_output("Y_c", "T");
    r.add(
        s.types("T", &[DType::F32])
            .types("T1", &[DType::I32])
            .types("T2", &[DType::U8, DType::I8])
            .infer(rnn_infer)
            .requires(check)
            .ambiguous(open_cases),
    );
}

#[cfg(test)]
mod tests {
    use crate::text::parse_model;
    use crate::validate::{Diagnostics, validate};

    const OK: &str = "g (float[3, 1, 2] x) => (float[3, 1, 1, 2] y)\n\
        <int8[1, 2, 8] w = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}, \
        int8[1, 2, 8] r = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}, \
        float[1] s = {0.01}, int8[1] z = {0}>\n\
        { y = com.microsoft.DynamicQuantizeLSTM <hidden_size = 2> \
        (x, w, r, \"\", \"\", \"\", \"\", \"\", s, z, s, z) }";

    fn check(body: &str) -> Result<Diagnostics, String> {
        let src =
            format!("<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n{body}");
        validate(&parse_model(&src).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn weights_are_transposed_and_zero_points_one_value() {
        let d = check(OK).unwrap();
        assert!(d.ambiguous.is_empty() && d.warnings.is_empty(), "{d:?}");
        // W in ONNX's LSTM layout [directions, 4 * hidden, input].
        assert!(check(&OK.replace("int8[1, 2, 8] w", "int8[1, 8, 2] w")).is_err());
        let eight = |v: &str| [v; 8].join(", ");
        let per_column = OK
            .replace(
                "float[1] s = {0.01}",
                &format!("float[1, 8] s = {{{}}}", eight("0.01")),
            )
            .replace(
                "int8[1] z = {0}",
                &format!("int8[1, 8] z = {{{}, 1}}", ["0"; 7].join(", ")),
            );
        let e = check(&per_column).unwrap_err();
        assert!(e.contains("per-column zero points"), "{e}");
    }

    #[test]
    fn a_batch_and_coupled_gates_are_left_open() {
        let batch = OK.replace("float[3, 1, 2] x", "float[3, 2, 2] x");
        let batch = batch.replace("float[3, 1, 1, 2] y", "float[3, 1, 2, 2] y");
        let d = check(&batch).unwrap();
        assert!(d.ambiguous.iter().any(|a| a.contains("thread")), "{d:?}");
        let coupled = OK.replace("<hidden_size = 2>", "<hidden_size = 2, input_forget = 1>");
        assert!(!check(&coupled).unwrap().ambiguous.is_empty());
    }
}
