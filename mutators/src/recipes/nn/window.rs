//! The spatial window of a convolution or pooling node (kernel, strides, dilations, pads or
//! `auto_pad`), drawn over its parameter buckets.
use crate::builder::SplitMix64;
use crate::ir::ops::auto_pad::{ceil_window_past_input, effective_kernel, is_same};
use crate::recipes::util::*;

/// Spatial window parameters drawn for one conv / pool node.
pub(super) struct Window {
    pub kernel: Vec<i64>,
    pub strides: Vec<i64>,
    pub dilations: Vec<i64>,
    /// Explicit pads (begin..., end...), when `auto_pad` is NOTSET and pads are given.
    pub pads: Option<Vec<i64>>,
    pub auto_pad: Option<&'static str>,
}

/// Draws a window over `spatial` dims; pads stay below the kernel; `dil` allows dilations.
pub(super) fn window(rng: &mut SplitMix64, spatial: &[i64], dil: bool) -> Window {
    let mut kernel = Vec::new();
    let mut dilations = Vec::new();
    let mut strides = Vec::new();
    let style = below(rng, 4);
    for &s in spatial {
        let d = if dil && s >= 3 && chance(rng, 0.3) {
            2
        } else {
            1
        };
        let kmax = ((s - 1) / d + 1).clamp(1, 3);
        // Uniform kernels more often, so all-1 and uniform buckets both come up.
        let k = match style {
            0 => 1,
            1 => kmax.min(2),
            _ => between(rng, 1, kmax),
        };
        kernel.push(k);
        dilations.push(d);
        strides.push(if s >= 2 && chance(rng, 0.4) { 2 } else { 1 });
    }
    let (pads, auto_pad) = match below(rng, 6) {
        0 | 1 => {
            let n = spatial.len();
            let mut p = Vec::new();
            let kmin = kernel.iter().copied().min().unwrap_or(1);
            let uniform = kmin - 1;
            let same = chance(rng, 0.4);
            for i in 0..2 * n {
                let k = kernel[i % n];
                p.push(if same {
                    uniform
                } else {
                    between(rng, 0, k - 1)
                });
            }
            (
                Some(p),
                if chance(rng, 0.3) {
                    Some("NOTSET")
                } else {
                    None
                },
            )
        }
        2 => (None, None),
        3 => (None, Some("SAME_UPPER")),
        4 => (None, Some("SAME_LOWER")),
        _ => (None, Some("VALID")),
    };
    // SAME with a window shorter than the stride needs negative padding, which ONNX leaves
    // undefined: the stride stays within the window there.
    if auto_pad.is_some_and(is_same) {
        for i in 0..strides.len() {
            strides[i] = strides[i].min(effective_kernel(kernel[i], dilations[i]));
        }
    }
    Window {
        kernel,
        strides,
        dilations,
        pads,
        auto_pad,
    }
}

impl Window {
    /// Whether `ceil_mode` would change the output length here in a way ONNX disputes (a
    /// last window starting past the input and its begin padding: ONNX's shape inference
    /// counts it, its reference does not).
    pub(super) fn ceil_disputed(&self, spatial: &[i64]) -> bool {
        let n = spatial.len();
        (0..n).any(|i| {
            let (pb, pe) = self.pads.as_ref().map_or((0, 0), |p| (p[i], p[i + n]));
            let eff = effective_kernel(self.kernel[i], self.dilations[i]);
            let span = spatial[i] + pb + pe - eff;
            span >= 0 && ceil_window_past_input(spatial[i], pb, span, self.strides[i])
        })
    }

    pub(super) fn attrs(
        &self,
        rng: &mut SplitMix64,
        a: &mut Attrs,
        kernel_required: bool,
        dil: bool,
    ) {
        if kernel_required || chance(rng, 0.7) {
            a.push(("kernel_shape", ais(&self.kernel)));
        }
        let ones = |v: &[i64]| v.iter().all(|&s| s == 1);
        if !ones(&self.strides) || chance(rng, 0.4) {
            a.push(("strides", ais(&self.strides)));
        }
        if dil && (!ones(&self.dilations) || chance(rng, 0.3)) {
            a.push(("dilations", ais(&self.dilations)));
        }
        if let Some(p) = &self.pads {
            a.push(("pads", ais(p)));
        }
        if let Some(ap) = self.auto_pad {
            a.push(("auto_pad", astr(ap)));
        }
    }
}
