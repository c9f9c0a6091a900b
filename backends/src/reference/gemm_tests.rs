//! The GEMM lowerings of Conv, ConvTranspose, MatMul and Gemm against direct loops written here
//! from the ONNX definitions, on random small configurations (fixed seed).
use super::super::V;
use super::super::tensor::{T, numel, strides, unravel};
use mutagraph_ir::attr::AttrValue;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use mutagraph_ir::rng::SplitMix64;

/// A fixed stream ([`SplitMix64`]).
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    fn coin(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0.unit()
    }
    /// Values in [-1, 1), with a spread of magnitudes so that sums cancel and round.
    fn vals(&mut self, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| (self.unit() * 2.0 - 1.0) * 10f64.powi(self.range(0, 2) as i32 - 1))
            .collect()
    }
}

fn run(op: &str, node: &Node, ins: &[Option<V>]) -> T {
    let refs: Vec<Option<&V>> = ins.iter().map(|v| v.as_ref()).collect();
    let mut out =
        super::super::tests::run_refs(op, node, &refs).unwrap_or_else(|e| panic!("{op}: {e}"));
    match out.swap_remove(0) {
        V::T(t) => t,
        v => panic!("{op} gave {v:?}"),
    }
}

fn ft(shape: &[usize], v: Vec<f64>) -> Option<V> {
    Some(V::T(T::f(DType::F64, shape.to_vec(), v)))
}

fn ints(v: &[usize]) -> AttrValue {
    AttrValue::Ints(v.iter().map(|&x| x as i64).collect())
}

/// A direct result: the sum and the sum of the magnitudes of its terms (its rounding scale).
#[derive(Clone, Copy, Default)]
struct Acc {
    sum: f64,
    mag: f64,
}

impl Acc {
    fn add(&mut self, t: f64) {
        self.sum += t;
        self.mag += t.abs();
    }
}

/// `got` equals the direct sums to f64 rounding: within 1e-12 of each sum's magnitude.
fn assert_close(what: &str, got: &[f64], want: &[Acc]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-12 * w.mag + f64::MIN_POSITIVE;
        assert!(
            (g - w.sum).abs() <= tol,
            "{what}: element {i}: {g} vs direct {} (tolerance {tol})",
            w.sum
        );
    }
}

/// One random convolution: spatial rank 1 to 3, groups, strides, dilations, pads.
struct ConvCase {
    n: usize,
    g: usize,
    cg: usize,
    mg: usize,
    input: Vec<usize>,
    kernel: Vec<usize>,
    stride: Vec<usize>,
    dil: Vec<usize>,
}

impl ConvCase {
    fn random(rng: &mut Rng, big: bool) -> ConvCase {
        let r = rng.range(1, 3);
        let side = match (r, big) {
            (1, false) => 12,
            (2, false) => 7,
            (_, false) => 4,
            (1, true) => 700,
            (2, true) => 31,
            (_, true) => 9,
        };
        let g = rng.range(1, 3);
        ConvCase {
            n: rng.range(1, 2),
            g,
            cg: if big {
                rng.range(20, 40)
            } else {
                rng.range(1, 4)
            },
            mg: rng.range(1, 4),
            input: (0..r).map(|_| rng.range(1, side)).collect(),
            kernel: (0..r).map(|_| rng.range(1, 3)).collect(),
            // Unit strides half of the time (the common case; one of them pointwise).
            stride: if rng.coin(0.5) {
                vec![1; r]
            } else {
                (0..r).map(|_| rng.range(1, 3)).collect()
            },
            dil: (0..r).map(|_| rng.range(1, 2)).collect(),
        }
    }
}

/// Conv by the definition: padded input positions contribute nothing.
fn conv_direct(
    c: &ConvCase,
    x: &[f64],
    w: &[f64],
    b: Option<&[f64]>,
    pb: &[i64],
    out: &[usize],
) -> Vec<Acc> {
    let (cin, m) = (c.g * c.cg, c.g * c.mg);
    let (isz, osz, ksz) = (numel(&c.input), numel(out), numel(&c.kernel));
    let ist = strides(&c.input);
    let mut y = vec![Acc::default(); c.n * m * osz];
    for bi in 0..c.n {
        for oc in 0..m {
            let grp = oc / c.mg;
            for o in 0..osz {
                let oi = unravel(o, out);
                let acc = &mut y[(bi * m + oc) * osz + o];
                for ci in 0..c.cg {
                    let ic = grp * c.cg + ci;
                    for k in 0..ksz {
                        let ki = unravel(k, &c.kernel);
                        let mut flat = Some(0usize);
                        for d in 0..c.input.len() {
                            let p = (oi[d] * c.stride[d] + ki[d] * c.dil[d]) as i64 - pb[d];
                            if p < 0 || p >= c.input[d] as i64 {
                                flat = None;
                            }
                            flat = flat.map(|f| f + p as usize * ist[d]);
                        }
                        if let Some(p) = flat {
                            acc.add(x[(bi * cin + ic) * isz + p] * w[(oc * c.cg + ci) * ksz + k]);
                        }
                    }
                }
                if let Some(b) = b {
                    acc.add(b[oc]);
                }
            }
        }
    }
    y
}

/// The pads and output size of a Conv: explicit pads, or auto_pad (SAME_*: output
/// `ceil(in / stride)`, the total pad split with the odd one at the end or the start).
fn conv_pads(rng: &mut Rng, c: &ConvCase) -> (Node, Vec<i64>, Vec<usize>) {
    let r = c.input.len();
    let mut node = Node::new("Conv", &["x", "w", "b"], &["y"])
        .with_attr("strides", ints(&c.stride))
        .with_attr("dilations", ints(&c.dil))
        .with_attr("group", AttrValue::Int(c.g as i64));
    if rng.coin(0.5) {
        node = node.with_attr("kernel_shape", ints(&c.kernel));
    }
    let ek: Vec<i64> = (0..r)
        .map(|d| ((c.kernel[d] - 1) * c.dil[d] + 1) as i64)
        .collect();
    match rng.range(0, 3) {
        0 => {
            // Explicit pads (negative ones crop, now and then), large enough that the kernel
            // fits.
            let crop = rng.coin(0.2);
            let mut pads: Vec<i64> = (0..2 * r)
                .map(|_| rng.range(0, 2) as i64 - crop as i64)
                .collect();
            for d in 0..r {
                let short = ek[d] - c.input[d] as i64 - pads[d] - pads[d + r];
                if short > 0 {
                    pads[d + r] += short;
                }
            }
            node = node.with_attr("pads", AttrValue::Ints(pads.clone()));
            let out = (0..r)
                .map(|d| {
                    ((c.input[d] as i64 + pads[d] + pads[d + r] - ek[d]) / c.stride[d] as i64 + 1)
                        as usize
                })
                .collect();
            (node, pads[..r].to_vec(), out)
        }
        k => {
            let mode = ["SAME_UPPER", "SAME_LOWER", "SAME_UPPER"][k - 1];
            node = node.with_attr("auto_pad", AttrValue::String(mode.as_bytes().to_vec()));
            let mut pb = vec![];
            let mut out = vec![];
            for d in 0..r {
                let (i, s) = (c.input[d] as i64, c.stride[d] as i64);
                let o = (i + s - 1) / s;
                let total = ((o - 1) * s + ek[d] - i).max(0);
                pb.push(if mode == "SAME_UPPER" {
                    total / 2
                } else {
                    total - total / 2
                });
                out.push(o as usize);
            }
            (node, pb, out)
        }
    }
}

fn check_conv(rng: &mut Rng, big: bool, label: &str) {
    let c = ConvCase::random(rng, big);
    let (node, pb, out) = conv_pads(rng, &c);
    let (cin, m) = (c.g * c.cg, c.g * c.mg);
    let mut xs = vec![c.n, cin];
    xs.extend(&c.input);
    let mut ws = vec![m, c.cg];
    ws.extend(&c.kernel);
    let x = rng.vals(numel(&xs));
    let w = rng.vals(numel(&ws));
    let b = rng.coin(0.5).then(|| rng.vals(m));
    let y = run(
        "Conv",
        &node,
        &[
            ft(&xs, x.clone()),
            ft(&ws, w.clone()),
            b.as_ref().and_then(|b| ft(&[m], b.clone())),
        ],
    );
    let mut want_shape = vec![c.n, m];
    want_shape.extend(&out);
    assert_eq!(y.shape, want_shape, "{label}: Conv shape");
    let want = conv_direct(&c, &x, &w, b.as_deref(), &pb, &out);
    assert_close(label, y.fs().unwrap(), &want);
}

#[test]
fn conv_matches_the_direct_sum() {
    let mut rng = Rng(SplitMix64::from_state(0x5eed_c0de));
    for case in 0..300 {
        check_conv(&mut rng, false, &format!("Conv case {case}"));
    }
}

/// Wider and deeper convolutions (tens of channels, long rows): products large enough for the
/// blocked GEMM, many im2col blocks per output.
#[test]
fn conv_across_im2col_blocks() {
    let mut rng = Rng(SplitMix64::from_state(0xb10c));
    for case in 0..6 {
        check_conv(&mut rng, true, &format!("big Conv case {case}"));
    }
}

/// ConvTranspose by the definition: each input element times each kernel element lands on
/// `i * stride + k * dilation - pad_begin` when that is inside the output.
fn conv_transpose_direct(
    c: &ConvCase,
    x: &[f64],
    w: &[f64],
    b: Option<&[f64]>,
    pb: &[i64],
    out: &[usize],
) -> Vec<Acc> {
    let (cin, m) = (c.g * c.cg, c.g * c.mg);
    let (isz, osz, ksz) = (numel(&c.input), numel(out), numel(&c.kernel));
    let ost = strides(out);
    let mut y = vec![Acc::default(); c.n * m * osz];
    for bi in 0..c.n {
        for ic in 0..cin {
            let grp = ic / c.cg;
            for i in 0..isz {
                let ii = unravel(i, &c.input);
                for k in 0..ksz {
                    let ki = unravel(k, &c.kernel);
                    let mut flat = Some(0usize);
                    for d in 0..c.input.len() {
                        let o = (ii[d] * c.stride[d] + ki[d] * c.dil[d]) as i64 - pb[d];
                        if o < 0 || o >= out[d] as i64 {
                            flat = None;
                        }
                        flat = flat.map(|f| f + o as usize * ost[d]);
                    }
                    let Some(o) = flat else { continue };
                    for j in 0..c.mg {
                        let oc = grp * c.mg + j;
                        y[(bi * m + oc) * osz + o]
                            .add(x[(bi * cin + ic) * isz + i] * w[(ic * c.mg + j) * ksz + k]);
                    }
                }
            }
        }
    }
    if let Some(b) = b {
        for (i, acc) in y.iter_mut().enumerate() {
            acc.add(b[(i / osz.max(1)) % m]);
        }
    }
    y
}

fn check_conv_transpose(rng: &mut Rng, big: bool, label: &str) {
    let c = ConvCase::random(rng, big);
    let r = c.input.len();
    let (cin, m) = (c.g * c.cg, c.g * c.mg);
    let mut node = Node::new("ConvTranspose", &["x", "w", "b"], &["y"])
        .with_attr("strides", ints(&c.stride))
        .with_attr("dilations", ints(&c.dil))
        .with_attr("group", AttrValue::Int(c.g as i64));
    // The size of the full (unpadded) output, with output_padding below the stride.
    let opad: Vec<i64> = (0..r)
        .map(|d| rng.range(0, c.stride[d] - 1) as i64)
        .collect();
    if opad.iter().any(|&p| p > 0) {
        node = node.with_attr("output_padding", AttrValue::Ints(opad.clone()));
    }
    let full: Vec<i64> = (0..r)
        .map(|d| {
            (c.stride[d] * (c.input[d] - 1) + (c.kernel[d] - 1) * c.dil[d] + 1) as i64 + opad[d]
        })
        .collect();
    let (pb, out): (Vec<i64>, Vec<usize>) = match rng.range(0, 3) {
        0 => {
            let pads: Vec<i64> = (0..2 * r)
                .map(|d| rng.range(0, 2).min(full[d % r] as usize / 2) as i64)
                .collect();
            node = node.with_attr("pads", AttrValue::Ints(pads.clone()));
            let out = (0..r)
                .map(|d| (full[d] - pads[d] - pads[d + r]) as usize)
                .collect();
            (pads[..r].to_vec(), out)
        }
        k => {
            // An output shape (smaller or larger than the full one), or SAME_* (input times
            // stride); the difference to the full size is trimmed by the pads.
            let (want, upper): (Vec<i64>, bool) = if k == 1 {
                let o: Vec<i64> = (0..r)
                    .map(|d| (full[d] + rng.range(0, 4) as i64 - 2).max(1))
                    .collect();
                node = node.with_attr("output_shape", AttrValue::Ints(o.clone()));
                (o, false)
            } else {
                let upper = rng.coin(0.5);
                let mode = if upper { "SAME_UPPER" } else { "SAME_LOWER" };
                node = node.with_attr("auto_pad", AttrValue::String(mode.as_bytes().to_vec()));
                (
                    (0..r).map(|d| (c.input[d] * c.stride[d]) as i64).collect(),
                    upper,
                )
            };
            let pb = (0..r)
                .map(|d| {
                    let total = full[d] - want[d];
                    let half = total.div_euclid(2);
                    if upper { half } else { total - half }
                })
                .collect();
            (pb, want.iter().map(|&o| o as usize).collect())
        }
    };
    let mut xs = vec![c.n, cin];
    xs.extend(&c.input);
    let mut ws = vec![cin, c.mg];
    ws.extend(&c.kernel);
    let x = rng.vals(numel(&xs));
    let w = rng.vals(numel(&ws));
    let b = rng.coin(0.5).then(|| rng.vals(m));
    let y = run(
        "ConvTranspose",
        &node,
        &[
            ft(&xs, x.clone()),
            ft(&ws, w.clone()),
            b.as_ref().and_then(|b| ft(&[m], b.clone())),
        ],
    );
    let mut want_shape = vec![c.n, m];
    want_shape.extend(&out);
    assert_eq!(y.shape, want_shape, "{label}: ConvTranspose shape");
    let want = conv_transpose_direct(&c, &x, &w, b.as_deref(), &pb, &out);
    assert_close(label, y.fs().unwrap(), &want);
}

#[test]
fn conv_transpose_matches_the_direct_sum() {
    let mut rng = Rng(SplitMix64::from_state(0x7a45_905e));
    for case in 0..300 {
        check_conv_transpose(&mut rng, false, &format!("ConvTranspose case {case}"));
    }
}

/// As [`conv_across_im2col_blocks`], transposed.
#[test]
fn conv_transpose_across_col2im_blocks() {
    let mut rng = Rng(SplitMix64::from_state(0xc012));
    for case in 0..6 {
        check_conv_transpose(&mut rng, true, &format!("big ConvTranspose case {case}"));
    }
}

/// Random MatMul shapes: ranks 1 to 4, batch dims that broadcast (1 against n, missing).
fn matmul_shapes(rng: &mut Rng) -> (Vec<usize>, Vec<usize>) {
    let (n, k, m) = (rng.range(1, 24), rng.range(0, 24), rng.range(1, 24));
    let batch: Vec<usize> = (0..rng.range(0, 2)).map(|_| rng.range(1, 3)).collect();
    let side = |rng: &mut Rng, tail: Vec<usize>| {
        if rng.coin(0.2) {
            return tail[tail.len() - 1..].to_vec();
        }
        let keep = rng.range(0, batch.len());
        let mut s: Vec<usize> = batch[batch.len() - keep..]
            .iter()
            .map(|&d| if rng.coin(0.3) { 1 } else { d })
            .collect();
        s.extend(tail);
        s
    };
    let a = side(rng, vec![n, k]);
    let b = side(rng, vec![k, m]);
    // A 1-D B is a column: its single dim is the inner size.
    let b = if b.len() == 1 { vec![k] } else { b };
    (a, b)
}

/// MatMul by the definition (numpy semantics), generic over the summation.
fn matmul_direct<X: Copy, A: Default + Clone>(
    a: &[X],
    ash: &[usize],
    b: &[X],
    bsh: &[usize],
    add: impl Fn(&mut A, X, X),
) -> (Vec<usize>, Vec<A>) {
    let mut ash2 = ash.to_vec();
    let mut bsh2 = bsh.to_vec();
    if ash.len() == 1 {
        ash2.insert(0, 1);
    }
    if bsh.len() == 1 {
        bsh2.push(1);
    }
    let (n, k) = (ash2[ash2.len() - 2], ash2[ash2.len() - 1]);
    let m = bsh2[bsh2.len() - 1];
    let (ab, bb) = (&ash2[..ash2.len() - 2], &bsh2[..bsh2.len() - 2]);
    let r = ab.len().max(bb.len());
    let pad = |s: &[usize]| {
        let mut v = vec![1; r - s.len()];
        v.extend(s);
        v
    };
    let (ab, bb) = (pad(ab), pad(bb));
    let batch: Vec<usize> = (0..r).map(|d| ab[d].max(bb[d])).collect();
    let (ast, bst) = (strides(&ab), strides(&bb));
    let nb = numel(&batch);
    let mut out = vec![A::default(); nb * n * m];
    for bi in 0..nb {
        let idx = unravel(bi, &batch);
        let pick = |dims: &[usize], st: &[usize]| -> usize {
            (0..r)
                .map(|d| if dims[d] == 1 { 0 } else { idx[d] * st[d] })
                .sum()
        };
        let (ao, bo) = (pick(&ab, &ast) * n * k, pick(&bb, &bst) * k * m);
        for i in 0..n {
            for j in 0..m {
                let acc = &mut out[(bi * n + i) * m + j];
                for q in 0..k {
                    add(acc, a[ao + i * k + q], b[bo + q * m + j]);
                }
            }
        }
    }
    let mut shape = batch;
    if ash.len() > 1 {
        shape.push(n);
    }
    if bsh.len() > 1 {
        shape.push(m);
    }
    (shape, out)
}

#[test]
fn matmul_matches_the_direct_sum() {
    let mut rng = Rng(SplitMix64::from_state(0x3a73_0001));
    let node = Node::new("MatMul", &["a", "b"], &["y"]);
    for case in 0..300 {
        let (ash, bsh) = matmul_shapes(&mut rng);
        let a = rng.vals(numel(&ash));
        let b = rng.vals(numel(&bsh));
        let y = run("MatMul", &node, &[ft(&ash, a.clone()), ft(&bsh, b.clone())]);
        let (shape, want) = matmul_direct(&a, &ash, &b, &bsh, |acc: &mut Acc, x, y| acc.add(x * y));
        let label = format!("MatMul case {case}: {ash:?} x {bsh:?}");
        assert_eq!(y.shape, shape, "{label}");
        assert_close(&label, y.fs().unwrap(), &want);
    }
}

/// Integer MatMul is exact: small values through the f64 GEMM, large ones wrapping in i64.
#[test]
fn integer_matmul_is_exact_and_wraps() {
    let mut rng = Rng(SplitMix64::from_state(0x1a7e_9e25));
    let node = Node::new("MatMul", &["a", "b"], &["y"]);
    for case in 0..200 {
        let (ash, bsh) = matmul_shapes(&mut rng);
        let big = case % 2 == 1;
        let val = |rng: &mut Rng| {
            if big {
                rng.next() as i64
            } else {
                (rng.next() % 2001) as i64 - 1000
            }
        };
        let a: Vec<i64> = (0..numel(&ash)).map(|_| val(&mut rng)).collect();
        let b: Vec<i64> = (0..numel(&bsh)).map(|_| val(&mut rng)).collect();
        let it = |s: &[usize], v: &[i64]| Some(V::T(T::i(DType::I64, s.to_vec(), v.to_vec())));
        let y = run("MatMul", &node, &[it(&ash, &a), it(&bsh, &b)]);
        let (shape, want) = matmul_direct(&a, &ash, &b, &bsh, |acc: &mut i64, x, y| {
            *acc = acc.wrapping_add(x.wrapping_mul(y))
        });
        assert_eq!(y.shape, shape, "case {case}");
        assert_eq!(y.is().unwrap(), &want[..], "case {case}: {ash:?} x {bsh:?}");
    }
}

/// A Gemm case: sizes, transposes, alpha, beta and a C that broadcasts (or none).
fn gemm_case(rng: &mut Rng) -> (Node, [usize; 3], bool, bool, f64, f64, Option<Vec<usize>>) {
    let (m, k, n) = (rng.range(1, 40), rng.range(0, 40), rng.range(1, 40));
    let (ta, tb) = (rng.coin(0.5), rng.coin(0.5));
    let alpha = [1.0, 0.5, -2.25][rng.range(0, 2)];
    let beta = [1.0, 0.0, 3.5][rng.range(0, 2)];
    let c = match rng.range(0, 5) {
        0 => None,
        1 => Some(vec![m, n]),
        2 => Some(vec![n]),
        3 => Some(vec![m, 1]),
        4 => Some(vec![1, n]),
        _ => Some(vec![]),
    };
    let node = Node::new("Gemm", &["a", "b", "c"], &["y"])
        .with_attr("transA", AttrValue::Int(ta as i64))
        .with_attr("transB", AttrValue::Int(tb as i64))
        .with_attr("alpha", AttrValue::Float(alpha as f32))
        .with_attr("beta", AttrValue::Float(beta as f32));
    (node, [m, k, n], ta, tb, alpha, beta, c)
}

/// Gemm by the definition: `alpha · op(A) · op(B) + beta · C`, C broadcast.
#[allow(clippy::too_many_arguments)]
fn gemm_direct(
    [m, k, n]: [usize; 3],
    ta: bool,
    tb: bool,
    alpha: f64,
    beta: f64,
    a: &[f64],
    b: &[f64],
    c: Option<(&[usize], &[f64])>,
) -> Vec<Acc> {
    let mut y = vec![Acc::default(); m * n];
    for i in 0..m {
        for j in 0..n {
            let mut dot = Acc::default();
            for q in 0..k {
                let x = if ta { a[q * m + i] } else { a[i * k + q] };
                let z = if tb { b[j * k + q] } else { b[q * n + j] };
                dot.add(x * z);
            }
            let acc = &mut y[i * n + j];
            acc.sum = alpha * dot.sum;
            acc.mag = (alpha * dot.mag).abs();
            if let Some((cs, cv)) = c {
                let ci = match cs {
                    [] => 0,
                    [_] => j,
                    [r, cc] => (if *r == 1 { 0 } else { i }) * cc + if *cc == 1 { 0 } else { j },
                    _ => unreachable!(),
                };
                acc.add(beta * cv[ci]);
            }
        }
    }
    y
}

#[test]
fn gemm_matches_the_direct_sum() {
    let mut rng = Rng(SplitMix64::from_state(0x6e33_0002));
    for case in 0..300 {
        let (node, [m, k, n], ta, tb, alpha, beta, cs) = gemm_case(&mut rng);
        let ash = if ta { vec![k, m] } else { vec![m, k] };
        let bsh = if tb { vec![n, k] } else { vec![k, n] };
        let a = rng.vals(m * k);
        let b = rng.vals(k * n);
        let c = cs.as_ref().map(|s| rng.vals(numel(s)));
        let mut ins = vec![ft(&ash, a.clone()), ft(&bsh, b.clone())];
        if let (Some(s), Some(v)) = (&cs, &c) {
            ins.push(ft(s, v.clone()));
        }
        let y = run("Gemm", &node, &ins);
        let want = gemm_direct(
            [m, k, n],
            ta,
            tb,
            alpha,
            beta,
            &a,
            &b,
            cs.as_deref().zip(c.as_deref()),
        );
        let label = format!("Gemm case {case}: {m}x{k}x{n} ta={ta} tb={tb}");
        assert_eq!(y.shape, vec![m, n], "{label}");
        assert_close(&label, y.fs().unwrap(), &want);
    }
}

/// Integer Gemm keeps its results: exact sums where they fit f64 exactly (int32, wrapped to its
/// width), and beyond that (int64 products above 2^53, sums still inside i64) the same f64 sums
/// in the same order as before, rounding as they always did.
#[test]
fn integer_gemm_keeps_its_results() {
    let mut rng = Rng(SplitMix64::from_state(0x1e33));
    for case in 0..100 {
        let (node, [m, k, n], ta, tb, _, _, _) = gemm_case(&mut rng);
        let node = node
            .with_attr("alpha", AttrValue::Float(1.0))
            .with_attr("beta", AttrValue::Float(1.0));
        let ash = if ta { vec![k, m] } else { vec![m, k] };
        let bsh = if tb { vec![n, k] } else { vec![k, n] };
        let large = case % 2 == 1;
        let (dt, val): (DType, fn(&mut Rng) -> i64) = if large {
            (DType::I64, |rng| (rng.next() >> 35) as i64 - (1 << 28))
        } else {
            (DType::I32, |rng| (rng.next() % 20001) as i64 - 10000)
        };
        let a: Vec<i64> = (0..m * k).map(|_| val(&mut rng)).collect();
        let b: Vec<i64> = (0..k * n).map(|_| val(&mut rng)).collect();
        let it = |s: &[usize], v: &[i64]| Some(V::T(T::i(dt, s.to_vec(), v.to_vec())));
        let y = run("Gemm", &node, &[it(&ash, &a), it(&bsh, &b)]);
        let (af, bf): (Vec<f64>, Vec<f64>) = (
            a.iter().map(|&v| v as f64).collect(),
            b.iter().map(|&v| v as f64).collect(),
        );
        let want: Vec<i64> = gemm_direct([m, k, n], ta, tb, 1.0, 1.0, &af, &bf, None)
            .iter()
            .map(|acc| {
                if large {
                    acc.sum as i64
                } else {
                    acc.sum as i64 as i32 as i64
                }
            })
            .collect();
        assert_eq!(
            y.is().unwrap(),
            &want[..],
            "integer Gemm case {case} ({dt})"
        );
    }
}

/// ConvInteger sums exactly (uint8 data less zero points) whatever the lowering's order.
#[test]
fn conv_integer_is_exact() {
    let mut rng = Rng(SplitMix64::from_state(0xc0_1e));
    for case in 0..60 {
        let c = ConvCase::random(&mut rng, case % 10 == 9);
        let (node, pb, out) = conv_pads(&mut rng, &c);
        let node = Node {
            op_type: "ConvInteger".into(),
            ..node
        };
        let (cin, m) = (c.g * c.cg, c.g * c.mg);
        let mut xs = vec![c.n, cin];
        xs.extend(&c.input);
        let mut ws = vec![m, c.cg];
        ws.extend(&c.kernel);
        let x: Vec<i64> = (0..numel(&xs)).map(|_| rng.range(0, 255) as i64).collect();
        let w: Vec<i64> = (0..numel(&ws)).map(|_| rng.range(0, 255) as i64).collect();
        let (xz, wz) = (rng.range(0, 255) as i64, rng.range(0, 255) as i64);
        let u8s = |s: &[usize], v: Vec<i64>| Some(V::T(T::i(DType::U8, s.to_vec(), v)));
        let y = run(
            "ConvInteger",
            &node,
            &[
                u8s(&xs, x.clone()),
                u8s(&ws, w.clone()),
                u8s(&[], vec![xz]),
                u8s(&[], vec![wz]),
            ],
        );
        let xf: Vec<f64> = x.iter().map(|&v| (v - xz) as f64).collect();
        let wf: Vec<f64> = w.iter().map(|&v| (v - wz) as f64).collect();
        let want: Vec<i64> = conv_direct(&c, &xf, &wf, None, &pb, &out)
            .iter()
            .map(|a| a.sum as i64)
            .collect();
        assert_eq!(y.is().unwrap(), &want[..], "ConvInteger case {case}");
    }
}

/// An infinite weight meets the padding only where the direct sum skips it: outputs whose
/// window lies partly in the padding stay as the sum of their taps inside the input.
#[test]
fn infinite_weights_do_not_meet_the_padding() {
    let node = Node::new("Conv", &["x", "w"], &["y"]).with_attr("pads", ints(&[1, 1]));
    let y = run(
        "Conv",
        &node,
        &[
            ft(&[1, 1, 3], vec![1.0, 2.0, 3.0]),
            ft(&[1, 1, 3], vec![f64::INFINITY, 1.0, 1.0]),
        ],
    );
    // y[0] = pad*inf (skipped) + 1 + 2; y[1] = 1*inf + 2 + 3; y[2] = 2*inf + 3 + pad.
    assert_eq!(y.fs().unwrap(), &[3.0, f64::INFINITY, f64::INFINITY]);
}

/// The native reference computes these ops' sums in f64 and rounds each result once to the
/// element type: a Conv in f32 gives exactly the f64 result rounded to f32.
#[test]
fn native_conv_rounds_the_f64_sum_once() {
    use crate::backend::Backend;
    use crate::reference::Reference;
    use crate::value::{Data, HostTensor, Value};
    let text = "<ir_version: 8, opset_import: [\"\" : 18]>\n\
        g (float[1,3,9,9] x, float[4,3,3,3] w) => (float[1,4,9,9] y) \
        { y = Conv <pads: ints = [1, 1, 1, 1]> (x, w) }";
    let model = mutagraph_ir::text::parse_model(text).unwrap().to_bytes();
    let mut rng = Rng(SplitMix64::from_state(0xf32));
    let f32s = |rng: &mut Rng, n: usize| rng.vals(n).iter().map(|&v| v as f32).collect();
    let inputs = vec![
        (
            "x".to_string(),
            Value::Tensor(HostTensor::new(
                vec![1, 3, 9, 9],
                Data::F32(f32s(&mut rng, 243)),
            )),
        ),
        (
            "w".to_string(),
            Value::Tensor(HostTensor::new(
                vec![4, 3, 3, 3],
                Data::F32(f32s(&mut rng, 108)),
            )),
        ),
    ];
    let out = |mut r: Reference| {
        let mut p = r.prepare(&model).unwrap();
        p.run(&inputs).unwrap()[0]
            .1
            .tensor()
            .unwrap()
            .to_f64s()
            .unwrap()
    };
    let exact = out(Reference::new_f64());
    let native = out(Reference::new_native());
    assert_eq!(native.len(), 324);
    let rounded: Vec<f64> = exact.iter().map(|&v| v as f32 as f64).collect();
    assert_eq!(native, rounded);
    // The f64 results are not all f32 values already: the rounding above did something.
    assert_ne!(exact, rounded);
}

/// Split over threads (blocks of columns per thread), a Conv gives exactly the bits it gives
/// on one thread: every output element is summed in the same order.
#[test]
fn conv_on_threads_is_bitwise_the_one_thread_result() {
    use super::{ConvDims, Taps, conv_lowered_in};
    let mut rng = Rng(SplitMix64::from_state(0x7a5c_0de5));
    for case in 0..20 {
        let (c_in, c_out, groups) = [(3, 4, 1), (4, 6, 2), (2, 5, 1)][case % 3];
        let input = [rng.range(3, 12), rng.range(3, 12)];
        let kernel = [rng.range(1, 4), rng.range(1, 4)];
        let stride = [rng.range(1, 3), rng.range(1, 3)];
        let pads = [1i64, 0, 1, 0];
        let output: Vec<usize> = (0..2)
            .map(|i| (input[i] + 1 - kernel[i]) / stride[i] + 1)
            .collect();
        let taps = Taps::new(&output, &input, &kernel, &stride, &[1, 1], &pads);
        let dims = ConvDims {
            batch: 2,
            c_in,
            c_out,
            groups,
            input: &input,
            output: &output,
        };
        let x = rng.vals(2 * c_in * numel(&input));
        let w = rng.vals(c_out * (c_in / groups) * numel(&kernel));
        let one = conv_lowered_in(&dims, &taps, &x, &w, 1).unwrap();
        for threads in [2, 3, 7] {
            let many = conv_lowered_in(&dims, &taps, &x, &w, threads).unwrap();
            let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&many), bits(&one), "case {case}, {threads} threads");
        }
    }
}
