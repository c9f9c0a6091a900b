//! What ONNX Runtime removes or merges: a Reshape chain, a Transpose and its inverse, a Cast
//! to the type a value has, an Identity, a Dropout at inference.
use super::*;

fn reshape_chain(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let d = dims(t);
    let n: i64 = d.iter().product();
    let mid = if k.chance(0.5) || d.len() < 2 {
        vec![n]
    } else {
        vec![d[0], n / d[0].max(1)]
    };
    let s1 = site.constant_i64s("shape", &[mid.len() as i64], &mid);
    let a = site.op1("Reshape", &[x, &s1], vec![])?;
    let s2 = site.constant_i64s("shape", &[d.len() as i64], &d);
    site.op1("Reshape", &[&a, &s2], vec![])
}

fn transpose_pair(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    let r = dims(t).len();
    let mut perm: Vec<i64> = (0..r as i64).collect();
    for i in (1..r).rev() {
        let j = (k.rng.unit() * (i + 1) as f64) as usize % (i + 1);
        perm.swap(i, j);
    }
    let mut inv = vec![0i64; r];
    for (i, &p) in perm.iter().enumerate() {
        inv[p as usize] = i as i64;
    }
    let a = site.op1("Transpose", &[x], vec![("perm", ais(&perm))])?;
    site.op1("Transpose", &[&a], vec![("perm", ais(&inv))])
}

fn no_op(
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    k: &mut Knobs<'_>,
) -> Result<String, BuildError> {
    match k.pick(&[0, 1, 2]) {
        0 => site.op1("Cast", &[x], vec![("to", ai(t.dtype.code() as i64))]),
        1 => site.op1("Identity", &[x], vec![]),
        _ => site.op1("Dropout", &[x], vec![]),
    }
}

pub(super) fn register(v: &mut Vec<Pattern>) {
    v.push(Pattern {
        name: "ReshapeChain",
        rewrites: &["ReshapeFusion"],
        dtypes: F32_F64,
        ranks: RANK1,
        build: reshape_chain,
    });
    v.push(Pattern {
        name: "TransposePair",
        rewrites: &["TransposeOptimizer"],
        dtypes: F32_F64,
        ranks: RANK2,
        build: transpose_pair,
    });
    v.push(Pattern {
        name: "NoOp",
        rewrites: &["Level1_RuleBasedTransformer"],
        dtypes: F32_F64,
        ranks: ANY,
        build: no_op,
    });
}
