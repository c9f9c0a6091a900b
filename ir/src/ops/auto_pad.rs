//! The window geometry of ONNX's sliding-window ops (Conv, ConvTranspose, the pools) per
//! spatial axis: a dilated kernel's extent, the pads `auto_pad` asks for (`SAME_UPPER`,
//! `SAME_LOWER`, `VALID`, or the explicit `pads` under `NOTSET`) and the output lengths they
//! give. One place for these rules: the op specs' inference, the mutators' recipes and the
//! backends read them from here.

/// Whether `auto_pad` is `SAME_UPPER` or `SAME_LOWER` (pads chosen so the output length is
/// `ceil(input / stride)`).
pub fn is_same(auto_pad: &str) -> bool {
    matches!(auto_pad, "SAME_UPPER" | "SAME_LOWER")
}

/// The extent of a kernel of `kernel` taps spaced `dilation` apart.
pub fn effective_kernel(kernel: i64, dilation: i64) -> i64 {
    (kernel - 1) * dilation + 1
}

/// `ceil(a / b)` (for `b` > 0).
fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1).div_euclid(b)
}

/// The output length under `SAME_UPPER` / `SAME_LOWER`: `ceil(input / stride)`.
pub fn same_output_len(input: i64, stride: i64) -> i64 {
    ceil_div(input, stride)
}

/// The total padding `SAME_UPPER` / `SAME_LOWER` needs on an axis of length `input` for a
/// window of extent `effective` (see [`effective_kernel`]) and `stride`. Negative where the
/// window is shorter than the stride, a case ONNX leaves undefined; the runtimes pad
/// `max(0, total)`.
pub fn same_total_pad(input: i64, effective: i64, stride: i64) -> i64 {
    (same_output_len(input, stride) - 1) * stride + effective - input
}

/// A `SAME` total pad split into (begin, end): `SAME_UPPER` puts the odd one at the end,
/// `SAME_LOWER` at the beginning. A negative total (ConvTranspose cropping) splits with
/// floor division, so its odd one is cropped at the end under `SAME_UPPER`.
pub fn split_same_pad(auto_pad: &str, total: i64) -> (i64, i64) {
    let half = total.div_euclid(2);
    if auto_pad == "SAME_UPPER" {
        (half, total - half)
    } else {
        (total - half, half)
    }
}

/// The (begin, end) pads of one spatial axis of a (not transposed) window op: `SAME_*` pads
/// `max(0, `[`same_total_pad`]`)` split by [`split_same_pad`], `VALID` none, anything else
/// (`NOTSET`) the explicit pads `explicit`.
pub fn axis_pads(
    auto_pad: &str,
    input: i64,
    effective: i64,
    stride: i64,
    explicit: (i64, i64),
) -> (i64, i64) {
    match auto_pad {
        "VALID" => (0, 0),
        a if is_same(a) => split_same_pad(a, same_total_pad(input, effective, stride).max(0)),
        _ => explicit,
    }
}

/// With `ceil_mode`, whether the last of the `ceil(span / stride) + 1` windows (`span` =
/// padded length − window extent, ≥ 0) would start past the input and its begin pad
/// `pad_begin`: ONNX's shape inference counts it, its reference and ONNX Runtime drop it.
pub fn ceil_window_past_input(input: i64, pad_begin: i64, span: i64, stride: i64) -> bool {
    ceil_div(span, stride) * stride >= input + pad_begin
}

/// The output length of a window op with `ceil_mode` (explicit pads): `ceil(span / stride) + 1`
/// windows, less the last where it would start past the input and its begin padding (see
/// [`ceil_window_past_input`]).
pub fn ceil_output_len(input: i64, pad_begin: i64, span: i64, stride: i64) -> i64 {
    let o = ceil_div(span, stride) + 1;
    if ceil_window_past_input(input, pad_begin, span, stride) {
        o - 1
    } else {
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_pads_follow_onnx() {
        // Input 5, kernel 3, stride 2: output 3, total pad 2 (1 + 1).
        assert_eq!(same_output_len(5, 2), 3);
        assert_eq!(same_total_pad(5, 3, 2), 2);
        assert_eq!(axis_pads("SAME_UPPER", 5, 3, 2, (9, 9)), (1, 1));
        // Input 6, kernel 3, stride 2: total 1, the odd one at the end (UPPER) or the
        // beginning (LOWER).
        assert_eq!(axis_pads("SAME_UPPER", 6, 3, 2, (0, 0)), (0, 1));
        assert_eq!(axis_pads("SAME_LOWER", 6, 3, 2, (0, 0)), (1, 0));
        // A window shorter than the stride: negative total, padded as none.
        assert_eq!(same_total_pad(5, 1, 3), -1);
        assert_eq!(axis_pads("SAME_LOWER", 5, 1, 3, (0, 0)), (0, 0));
        assert_eq!(axis_pads("VALID", 5, 3, 2, (1, 2)), (0, 0));
        assert_eq!(axis_pads("NOTSET", 5, 3, 2, (1, 2)), (1, 2));
        assert_eq!(split_same_pad("SAME_UPPER", -3), (-2, -1));
        assert_eq!(split_same_pad("SAME_LOWER", -3), (-1, -2));
        assert_eq!(effective_kernel(3, 2), 5);
    }

    #[test]
    fn ceil_window_past_input_cases() {
        // Input 5, kernel 2, stride 2, no pads: span 3, ceil gives a third window at 4 (inside).
        assert!(!ceil_window_past_input(5, 0, 3, 2));
        // Input 4, kernel 1, stride 3, begin pad 0, end pad 2: span 5, the third window
        // would start at 6, past input + begin pad.
        assert!(ceil_window_past_input(4, 0, 5, 3));
    }
}
