//! Matrix products for Conv, ConvTranspose, MatMul and Gemm: a blocked f64 GEMM
//! (`matrixmultiply`'s `dgemm`, reached through ndarray's safe `general_mat_mul`) and the
//! lowerings of the convolutions onto it (im2col for Conv, col2im for ConvTranspose).
//!
//! What changes against a direct loop is only the order in which the f64 products are summed
//! (blocked, with fused multiply-adds where the CPU has them), so results agree with the direct
//! sums to f64 rounding. Integer data goes through the GEMM only when every partial sum is an
//! integer below 2^53 ([`exact_in_f64`]): then any order gives the same exact result.
use super::tensor::{R, err, numel, strides, unravel};
use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, ShapeBuilder};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Products with at most this many multiply-adds are summed by [`gemm_naive`]: the blocked
/// GEMM's setup (views, packing buffers) costs more than it saves on tiny matrices (many small
/// batched MatMuls).
const SMALL: usize = 4096;

/// Elements of an im2col / col2im buffer per block of columns (1 MiB of f64: the block stays in
/// cache between being written and being packed by the GEMM; from 256 KiB to 4 MiB the 3x3
/// convs measured alike). Unit tests use tiny blocks, so that their small convolutions cross
/// block boundaries inside rows too.
const COL_BUDGET: usize = if cfg!(test) { 128 } else { 1 << 17 };

/// Fewest columns per block, whatever the row count (a wide block keeps the GEMM efficient).
const MIN_COLS: usize = if cfg!(test) { 3 } else { 64 };

/// Multiply-adds from which a Conv is split over threads (starting them costs tens of
/// microseconds; unit tests split small convolutions too).
const PARALLEL_MIN: usize = if cfg!(test) { 1 } else { 1 << 22 };

/// Threads a Conv may use ([`set_threads`]).
static THREADS: AtomicUsize = AtomicUsize::new(1);

/// Sets how many threads the reference's Conv may use in this process (the backend's
/// intra-op threads: 1 unless the user asks for more). Each output element is summed in the
/// same order whatever the count, so results do not depend on it.
pub fn set_threads(n: usize) {
    THREADS.store(n.max(1), Ordering::Relaxed);
}

fn threads() -> usize {
    THREADS.load(Ordering::Relaxed)
}

/// A read-only matrix in a slice: element `(i, j)` at `data[i * rs + j * cs]`.
#[derive(Clone, Copy, Debug)]
pub(super) struct MatRef<'a> {
    pub data: &'a [f64],
    pub rows: usize,
    pub cols: usize,
    pub rs: usize,
    pub cs: usize,
}

impl<'a> MatRef<'a> {
    /// A row-major `rows × cols` matrix at the start of `data`.
    pub fn row_major(data: &'a [f64], rows: usize, cols: usize) -> MatRef<'a> {
        MatRef {
            data,
            rows,
            cols,
            rs: cols,
            cs: 1,
        }
    }

    /// The transpose (a view of the same elements).
    pub fn t(self) -> MatRef<'a> {
        MatRef {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
        }
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.rs + j * self.cs]
    }
}

/// `c = a · b`: `c` holds `a.rows` rows of `b.cols` elements, row `i` starting at `c[i * ldc]`;
/// those elements are overwritten, the others (between rows) left as they are.
pub(super) fn gemm(a: MatRef, b: MatRef, c: &mut [f64], ldc: usize) -> R<()> {
    if a.cols != b.rows {
        return Err(err(format!(
            "matrix product of {}x{} and {}x{}",
            a.rows, a.cols, b.rows, b.cols
        )));
    }
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 {
        return Ok(());
    }
    if m.saturating_mul(k).saturating_mul(n) <= SMALL {
        gemm_naive(a, b, c, ldc);
        return Ok(());
    }
    let shape_err = |e: ndarray::ShapeError| err(format!("matrix product layout: {e}"));
    let av = ArrayView2::from_shape((m, k).strides((a.rs, a.cs)), a.data).map_err(shape_err)?;
    let bv = ArrayView2::from_shape((k, n).strides((b.rs, b.cs)), b.data).map_err(shape_err)?;
    let mut cv = ArrayViewMut2::from_shape((m, n).strides((ldc, 1)), c).map_err(shape_err)?;
    // beta = 0: C is written, never read (matrixmultiply's contract), and k = 0 gives zeros.
    general_mat_mul(1.0, &av, &bv, 0.0, &mut cv);
    Ok(())
}

/// Row `i` of `a` times column `j` of `b`, summed from 0.0 in the order of the inner index.
fn dot(a: MatRef, b: MatRef, i: usize, j: usize) -> f64 {
    let mut s = 0.0;
    for q in 0..a.cols {
        s += a.at(i, q) * b.at(q, j);
    }
    s
}

/// [`gemm`] by the textbook loop: each element summed from 0.0 in the order of the inner index.
pub(super) fn gemm_naive(a: MatRef, b: MatRef, c: &mut [f64], ldc: usize) {
    for i in 0..a.rows {
        for j in 0..b.cols {
            c[i * ldc + j] = dot(a, b, i, j);
        }
    }
}

/// True when every partial sum of `k` products of an element of `a` and one of `b` is exact in
/// f64, the elements being integers: `max|a| · max|b| · k < 2^53`. (Computed in f64: each
/// rounding is monotone and an integer product above 2^53 cannot round below it, so a `true`
/// here is never wrong.)
pub(super) fn exact_in_f64(a: &[f64], b: &[f64], k: usize) -> bool {
    let max = |v: &[f64]| v.iter().fold(0.0f64, |m, &x| m.max(x.abs()));
    let bound = max(a) * max(b) * k as f64;
    bound < 9_007_199_254_740_992.0
}

/// [`exact_in_f64`] for i64 data (the values themselves must be exact in f64 too).
pub(super) fn exact_in_f64_i(a: &[i64], b: &[i64], k: usize) -> bool {
    let max = |v: &[i64]| v.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0) as u128;
    max(a).saturating_mul(max(b)).saturating_mul(k as u128) <= 1 << 53
}

/// The taps of a strided, dilated, padded window between a source grid and a target grid: source
/// position `o` and kernel position `k` meet target position `o * stride + k * dilation - pad`
/// in each dim, when that is inside the target. For Conv the source is the output and the target
/// the input (im2col reads the target); for ConvTranspose the source is the input and the target
/// the output (col2im adds into it).
///
/// Kept per row of the source's last dim: along it the target moves by a fixed stride, so a
/// row's taps are one contiguous run of valid positions between two runs outside the target.
pub(super) struct Taps {
    ksz: usize,
    /// Rows of the source (product of its leading dims).
    rows: usize,
    /// Source positions per row (its last dim).
    w: usize,
    /// Stride along the last dim.
    step: usize,
    /// Per (kernel position, source row): the flat target offset of the leading dims, `None`
    /// when a leading dim falls outside the target.
    lead: Vec<Option<usize>>,
    /// Per kernel position: the last dim's offset (`k * dilation - pad`) and the range of
    /// source positions in a row whose tap is inside the target.
    last: Vec<(i128, usize, usize)>,
    /// Every tap is inside the target.
    pub full: bool,
}

impl Taps {
    /// The taps between `src` and `tgt` (same rank, at least 1).
    pub fn new(
        src: &[usize],
        tgt: &[usize],
        kernel: &[usize],
        stride: &[usize],
        dil: &[usize],
        pad: &[i64],
    ) -> Taps {
        let r = src.len();
        let lead_src = &src[..r - 1];
        let lead_k = &kernel[..r - 1];
        let (w, kw) = (src[r - 1], kernel[r - 1]);
        let rows = numel(lead_src);
        let ksz = numel(kernel);
        let tst = strides(tgt);
        let tw = tgt[r - 1] as i128;
        let s = stride[r - 1] as i128;
        let mut full = true;
        let mut last = Vec::with_capacity(kw);
        for kl in 0..kw {
            let off = kl as i128 * dil[r - 1] as i128 - pad[r - 1] as i128;
            // Valid j: 0 <= j * s + off < tw.
            let lo = if off >= 0 { 0 } else { (-off + s - 1) / s };
            let hi = if tw - off <= 0 {
                0
            } else {
                (tw - off + s - 1) / s
            };
            let lo = lo.min(w as i128) as usize;
            let hi = hi.min(w as i128) as usize;
            if w > 0 && (lo > 0 || hi < w) {
                full = false;
            }
            last.push((off, lo, hi));
        }
        let mut lead = Vec::with_capacity(numel(lead_k) * rows);
        for kp in 0..numel(lead_k) {
            let ki = unravel(kp, lead_k);
            for row in 0..rows {
                let oi = unravel(row, lead_src);
                let mut flat = Some(0usize);
                for d in 0..r - 1 {
                    let p = oi[d] as i128 * stride[d] as i128 + ki[d] as i128 * dil[d] as i128
                        - pad[d] as i128;
                    if p < 0 || p >= tgt[d] as i128 {
                        flat = None;
                        break;
                    }
                    flat = flat.map(|f| f + p as usize * tst[d]);
                }
                if flat.is_none() && w > 0 {
                    full = false;
                }
                lead.push(flat);
            }
        }
        Taps {
            ksz,
            rows,
            w,
            step: stride[r - 1],
            lead,
            last,
            full,
        }
    }

    /// Calls `f(at, len, target)` for the runs of source positions `o0..o1` and kernel position
    /// `k`, in order: positions `o0 + at .. o0 + at + len` tap the target at `target + i * step`
    /// (`i` counting from the run's start), or fall outside it (`None`).
    pub fn runs(
        &self,
        k: usize,
        o0: usize,
        o1: usize,
        mut f: impl FnMut(usize, usize, Option<usize>),
    ) {
        let w = self.w;
        if w == 0 || o0 >= o1 {
            return;
        }
        let kw = self.last.len();
        let (off, lo, hi) = self.last[k % kw];
        let lead_k = k / kw;
        let mut o = o0;
        while o < o1 {
            let row = o / w;
            let a = o - row * w;
            let b = (o1 - row * w).min(w);
            let at = o - o0;
            match self.lead[lead_k * self.rows + row] {
                None => f(at, b - a, None),
                Some(base) => {
                    let l = lo.clamp(a, b);
                    let h = hi.clamp(l, b);
                    if l > a {
                        f(at, l - a, None);
                    }
                    if h > l {
                        let t = base as i128 + (l * self.step) as i128 + off;
                        f(at + l - a, h - l, Some(t as usize));
                    }
                    if b > h {
                        f(at + h - a, b - h, None);
                    }
                }
            }
            o = row * w + b;
        }
    }

    /// Kernel positions.
    pub fn kernel_size(&self) -> usize {
        self.ksz
    }
}

/// Columns per block of an im2col / col2im buffer with `rows` rows over `total` columns.
fn block_cols(rows: usize, total: usize) -> usize {
    (COL_BUDGET / rows.max(1)).max(MIN_COLS).min(total.max(1))
}

/// Shapes of a convolution: batch, channels in and out, groups, spatial sizes.
pub(super) struct ConvDims<'a> {
    pub batch: usize,
    pub c_in: usize,
    pub c_out: usize,
    pub groups: usize,
    pub input: &'a [usize],
    pub output: &'a [usize],
}

/// Conv without bias: `x` is `[batch, c_in, input..]`, `w` is `[c_out, c_in / groups,
/// kernel..]`; returns `[batch, c_out, output..]`. Per batch and group, the output block is the
/// group's weights (`c_out/g × c_in/g·K`) times the im2col matrix (`c_in/g·K × output`),
/// built a block of columns at a time; a pointwise conv that reads the input as it lies skips
/// the copy.
pub(super) fn conv_lowered(d: &ConvDims, taps: &Taps, x: &[f64], w: &[f64]) -> R<Vec<f64>> {
    conv_lowered_in(d, taps, x, w, threads())
}

/// [`conv_lowered`] on at most `max_threads` threads.
fn conv_lowered_in(
    d: &ConvDims,
    taps: &Taps,
    x: &[f64],
    w: &[f64],
    max_threads: usize,
) -> R<Vec<f64>> {
    let (cg, mg) = (d.c_in / d.groups, d.c_out / d.groups);
    let (isz, osz, ksz) = (numel(d.input), numel(d.output), taps.kernel_size());
    let kk = cg * ksz;
    let direct = ksz == 1 && taps.full && d.input == d.output && taps.step == 1;
    let mut out = vec![0.0; d.batch * d.c_out * osz];
    let cols = block_cols(kk, osz);
    // Threads take contiguous runs of whole blocks of columns; only a product big enough to
    // pay for starting them is split.
    let threads = if direct || mg * kk * osz < PARALLEL_MIN {
        1
    } else {
        max_threads.min(osz.div_ceil(cols)).max(1)
    };
    let mut col = if direct || threads > 1 {
        Vec::new()
    } else {
        vec![0.0; kk * cols]
    };
    for bi in 0..d.batch {
        for grp in 0..d.groups {
            let xg = &x[(bi * d.c_in + grp * cg) * isz..][..cg * isz];
            let wg = MatRef::row_major(&w[grp * mg * kk..][..mg * kk], mg, kk);
            let og = &mut out[(bi * d.c_out + grp * mg) * osz..][..mg * osz];
            if direct {
                gemm(wg, MatRef::row_major(xg, cg, isz), og, osz)?;
            } else if threads <= 1 {
                conv_columns(taps, xg, isz, cg, wg, cols, 0, osz, &mut col, og, osz)?;
            } else {
                let per = osz.div_ceil(cols).div_ceil(threads) * cols;
                let parts: Vec<R<(usize, usize, Vec<f64>)>> = std::thread::scope(|s| {
                    let handles: Vec<_> = (0..threads)
                        .map(|t| (t * per, ((t + 1) * per).min(osz)))
                        .filter(|(a, b)| a < b)
                        .map(|(a, b)| {
                            s.spawn(move || {
                                let len = b - a;
                                let mut local = vec![0.0; mg * len];
                                let mut col = vec![0.0; kk * cols];
                                conv_columns(
                                    taps, xg, isz, cg, wg, cols, a, b, &mut col, &mut local, len,
                                )?;
                                Ok((a, len, local))
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| {
                            h.join()
                                .unwrap_or_else(|_| Err(err("a Conv thread panicked")))
                        })
                        .collect()
                });
                for part in parts {
                    let (a, len, local) = part?;
                    for r in 0..mg {
                        og[r * osz + a..][..len].copy_from_slice(&local[r * len..][..len]);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Output columns `from..to` of one batch and group of a Conv, im2col block by im2col block:
/// `out` holds the group's `c_out/g` rows, row `i` starting at `out[i * ldo]`, column `from`
/// at its start.
#[allow(clippy::too_many_arguments)]
fn conv_columns(
    taps: &Taps,
    xg: &[f64],
    isz: usize,
    cg: usize,
    wg: MatRef,
    cols: usize,
    from: usize,
    to: usize,
    col: &mut [f64],
    out: &mut [f64],
    ldo: usize,
) -> R<()> {
    let (ksz, kk) = (taps.kernel_size(), wg.cols);
    let mut o0 = from;
    while o0 < to {
        let n = cols.min(to - o0);
        for ci in 0..cg {
            let xc = &xg[ci * isz..][..isz];
            for k in 0..ksz {
                let row = &mut col[(ci * ksz + k) * n..][..n];
                taps.runs(k, o0, o0 + n, |at, len, t| {
                    let dst = &mut row[at..at + len];
                    match t {
                        None => dst.fill(0.0),
                        Some(t) if taps.step == 1 => {
                            dst.copy_from_slice(&xc[t..t + len]);
                        }
                        Some(t) => {
                            for (i, v) in dst.iter_mut().enumerate() {
                                *v = xc[t + i * taps.step];
                            }
                        }
                    }
                });
            }
        }
        gemm(
            wg,
            MatRef::row_major(&col[..kk * n], kk, n),
            &mut out[o0 - from..],
            ldo,
        )?;
        o0 += n;
    }
    Ok(())
}

/// ConvTranspose without bias: `x` is `[batch, c_in, input..]`, `w` is `[c_in, c_out /
/// groups, kernel..]`; returns `[batch, c_out, output..]`. Per batch and group, the group's
/// weights transposed (`c_out/g·K × c_in/g`) times the input (`c_in/g × input`) give every
/// product of an input position with a kernel position summed over channels; col2im adds each
/// into the output position it lands on.
pub(super) fn conv_transpose_lowered(
    d: &ConvDims,
    taps: &Taps,
    x: &[f64],
    w: &[f64],
) -> R<Vec<f64>> {
    let (cg, mg) = (d.c_in / d.groups, d.c_out / d.groups);
    let (isz, osz, ksz) = (numel(d.input), numel(d.output), taps.kernel_size());
    let kk = mg * ksz;
    let mut out = vec![0.0; d.batch * d.c_out * osz];
    let cols = block_cols(kk, isz);
    let mut col = vec![0.0; kk * cols];
    for bi in 0..d.batch {
        for grp in 0..d.groups {
            let xg = &x[(bi * d.c_in + grp * cg) * isz..][..cg * isz];
            let wt = MatRef::row_major(&w[grp * cg * kk..][..cg * kk], cg, kk).t();
            let og = &mut out[(bi * d.c_out + grp * mg) * osz..][..mg * osz];
            let mut i0 = 0;
            while i0 < isz {
                let n = cols.min(isz - i0);
                let xb = MatRef {
                    data: &xg[i0..],
                    rows: cg,
                    cols: n,
                    rs: isz,
                    cs: 1,
                };
                gemm(wt, xb, &mut col[..kk * n], n)?;
                for j in 0..mg {
                    let oj = &mut og[j * osz..][..osz];
                    for k in 0..ksz {
                        let row = &col[(j * ksz + k) * n..][..n];
                        taps.runs(k, i0, i0 + n, |at, len, t| {
                            if let Some(t) = t {
                                for (i, v) in row[at..at + len].iter().enumerate() {
                                    oj[t + i * taps.step] += v;
                                }
                            }
                        });
                    }
                }
                i0 += n;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "gemm_tests.rs"]
mod tests;
