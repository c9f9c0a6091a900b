//! The window geometry shared by the convolutions and the pools: the attributes `kernel_shape`,
//! `pads`, `strides`, `dilations` and `auto_pad`, and the output size they give.
use super::{MAX, known, shape_of};
use crate::attr::{AttrKind, AttrLookup};
use crate::ops::auto_pad::{
    ceil_output_len, effective_kernel, is_same, same_output_len, same_total_pad,
};
use crate::ops::common::{InferError, rule};
use crate::registry::{AttrSpec, InferCtx};
use crate::types::Dim;

pub(super) fn auto_pad_attr() -> AttrSpec {
    AttrSpec::string("auto_pad", "NOTSET").one_of(&["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
}

pub(super) fn kernel_attr(required: bool) -> AttrSpec {
    let a = AttrSpec::of("kernel_shape", AttrKind::Ints).range(1, MAX);
    if required { a.required() } else { a }
}

pub(super) fn pads_attr() -> AttrSpec {
    AttrSpec::of("pads", AttrKind::Ints).range(0, MAX)
}

pub(super) fn strides_attr() -> AttrSpec {
    AttrSpec::of("strides", AttrKind::Ints).range(1, MAX)
}

pub(super) fn dilations_attr() -> AttrSpec {
    AttrSpec::of("dilations", AttrKind::Ints).range(1, MAX)
}

/// `auto_pad` SAME_UPPER / SAME_LOWER where the padding it needs is negative (a window
/// shorter than the stride): ONNX does not define it (its shape inference and the runtimes
/// disagree: ONNX Runtime refuses such pools, ConvTranspose sizes differ).
pub(super) fn same_pad_negative(ctx: &InferCtx) -> Result<(), InferError> {
    let auto = ctx.string("auto_pad", "NOTSET");
    if !is_same(&auto) {
        return Ok(());
    }
    let Some(xs) = shape_of(ctx, 0) else {
        return Ok(());
    };
    let n = xs.len().saturating_sub(2);
    let w_slot = if ctx.node.op_type == "QLinearConv" {
        3
    } else {
        1
    };
    let ws = shape_of(ctx, w_slot);
    let kernel = match ctx.ints("kernel_shape") {
        Some(k) => Some(k.to_vec()),
        None => kernel_of(ctx, ws.as_deref(), n).ok().flatten(),
    };
    let Some(kernel) = kernel else { return Ok(()) };
    if kernel.len() != n {
        return Ok(());
    }
    let strides = list_attr(ctx, "strides", n, 1)?;
    let dil = list_attr(ctx, "dilations", n, 1)?;
    let transpose = ctx.node.op_type == "ConvTranspose";
    let out_pad = if transpose {
        list_attr(ctx, "output_padding", n, 0)?
    } else {
        vec![0; n]
    };
    for i in 0..n {
        let Some(x) = known(xs.get(2 + i)) else {
            continue;
        };
        let (s, ek) = (strides[i], effective_kernel(kernel[i], dil[i]));
        let total = if transpose {
            ek + out_pad[i] - s
        } else {
            same_total_pad(x, ek, s)
        };
        if total < 0 {
            return Err(rule!(
                "axis {i}: {auto} with window {ek} and stride {s} needs a negative total pad \
                 ({total})"
            ));
        }
    }
    Ok(())
}

/// Window geometry of a convolution or pooling over `n` spatial axes.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Window {
    pub(super) kernel: Vec<i64>,
    pub(super) strides: Vec<i64>,
    pub(super) dilations: Vec<i64>,
    /// Begin pads then end pads (2n values).
    pub(super) pads: Vec<i64>,
    pub(super) auto_pad: String,
    pub(super) ceil: bool,
}

pub(super) fn list_attr(
    ctx: &InferCtx,
    name: &str,
    n: usize,
    default: i64,
) -> Result<Vec<i64>, InferError> {
    match ctx.ints(name) {
        None => Ok(vec![default; n]),
        Some(v) if v.len() == n => Ok(v.to_vec()),
        Some(v) => Err(rule!(
            "'{name}' has {} values, expected {n} (one per spatial axis)",
            v.len()
        )),
    }
}

impl Window {
    pub(super) fn read(ctx: &InferCtx, kernel: Vec<i64>) -> Result<Window, InferError> {
        let n = kernel.len();
        let strides = list_attr(ctx, "strides", n, 1)?;
        let dilations = list_attr(ctx, "dilations", n, 1)?;
        let pads = list_attr(ctx, "pads", 2 * n, 0)?;
        if let Some(s) = strides.iter().find(|s| **s < 1) {
            return Err(rule!("stride {s} is not positive"));
        }
        if let Some(d) = dilations.iter().find(|d| **d < 1) {
            return Err(rule!("dilation {d} is not positive"));
        }
        if let Some(k) = kernel.iter().find(|k| **k < 1) {
            return Err(rule!("kernel size {k} is not positive"));
        }
        let auto_pad = ctx.string("auto_pad", "NOTSET");
        if auto_pad != "NOTSET" && ctx.ints("pads").is_some() {
            return Err(rule!("pads cannot be given with auto_pad {auto_pad}"));
        }
        Ok(Window {
            kernel,
            strides,
            dilations,
            pads,
            auto_pad,
            ceil: ctx.int("ceil_mode", 0) != 0,
        })
    }

    pub(super) fn effective(&self, i: usize) -> i64 {
        effective_kernel(self.kernel[i], self.dilations[i])
    }

    /// Output size of spatial axis `i` for an input of size `input`.
    pub(super) fn out_dim(&self, i: usize, input: &Dim) -> Result<Dim, InferError> {
        let n = self.kernel.len();
        let (k, s) = (self.effective(i), self.strides[i]);
        match self.auto_pad.as_str() {
            a if is_same(a) => Ok(match input {
                Dim::Known(x) => Dim::Known(same_output_len(*x, s)),
                d if s == 1 => d.clone(),
                _ => Dim::Unknown,
            }),
            ap => {
                let Dim::Known(x) = input else {
                    return Ok(Dim::Unknown);
                };
                let (pb, pe) = if ap == "VALID" {
                    (0, 0)
                } else {
                    (self.pads[i], self.pads[i + n])
                };
                let total = x + pb + pe;
                if total < k {
                    return Err(rule!(
                        "axis {i}: window of effective size {k} does not fit in padded input {total} ({x} + pads {pb}+{pe})"
                    ));
                }
                let span = total - k;
                Ok(Dim::Known(if self.ceil {
                    ceil_output_len(*x, pb, span, s)
                } else {
                    span / s + 1
                }))
            }
        }
    }

    pub(super) fn spatial(&self, input: &[Dim]) -> Result<Vec<Dim>, InferError> {
        input
            .iter()
            .enumerate()
            .map(|(i, d)| self.out_dim(i, d))
            .collect()
    }
}

/// Kernel sizes from the `kernel_shape` attribute or from the weight's spatial dims.
pub(super) fn kernel_of(
    ctx: &InferCtx,
    w: Option<&[Dim]>,
    n: usize,
) -> Result<Option<Vec<i64>>, InferError> {
    if let Some(k) = ctx.ints("kernel_shape") {
        if k.len() != n {
            return Err(rule!(
                "kernel_shape has {} values but the input has {n} spatial axes",
                k.len()
            ));
        }
        if let Some(w) = w {
            for (i, (a, b)) in k.iter().zip(w.iter().skip(2)).enumerate() {
                if let Some(b) = b.value()
                    && *a != b
                {
                    return Err(rule!("kernel_shape[{i}] = {a} but the weight has {b}"));
                }
            }
        }
        return Ok(Some(k.to_vec()));
    }
    let Some(w) = w else { return Ok(None) };
    if w.len() != n + 2 {
        return Ok(None);
    }
    Ok(w[2..].iter().map(Dim::value).collect())
}
