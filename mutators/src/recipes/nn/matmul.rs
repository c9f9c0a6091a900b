//! `MatMul`, `MatMulInteger` (a constant right operand, batched or a vector sometimes) and
//! `Gemm` (transposes, `alpha` / `beta`, every broadcastable `C`).
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn matmul(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let k = d[d.len() - 1];
    let n = between(rng, 1, 8);
    let shape = if d.len() >= 3 && chance(rng, 0.3) {
        // Batched right operand with the same (or size-1) batch dims.
        let mut s: Vec<i64> = d[..d.len() - 2]
            .iter()
            .map(|&v| if chance(rng, 0.5) { 1 } else { v })
            .collect();
        s.push(k);
        s.push(n);
        s
    } else if chance(rng, 0.15) {
        vec![k]
    } else {
        vec![k, n]
    };
    let b = if op == "MatMulInteger" {
        konst(site, "b", t.dtype, &shape, -4.0, 4.0, rng)
    } else {
        konst(site, "b", t.dtype, &shape, -1.0, 1.0, rng)
    };
    if op == "MatMulInteger" && chance(rng, 0.5) {
        let za = site.constant_f64s("a_zero_point", t.dtype, &[], &[1.0]);
        return site.op1(op, &[x, &b, &za], vec![]);
    }
    site.op1(op, &[x, &b], vec![])
}

pub(super) fn matmul_outs(d: DType, r: usize) -> Vec<(DType, usize)> {
    if r == 1 {
        vec![(d, 0), (d, 1)]
    } else {
        vec![(d, r), (d, r - 1)]
    }
}

pub(super) fn matmul_int_outs(_: DType, r: usize) -> Vec<(DType, usize)> {
    matmul_outs(DType::I32, r)
}

pub(super) fn gemm(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    gemm_with(op, site, x, t, rng, Attrs::new())
}

/// [`gemm`] with `extra` attributes on the node (a fused Gemm's activation).
pub(crate) fn gemm_with(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
    extra: Attrs,
) -> Result<String, BuildError> {
    let d = dims(t);
    let mut a = extra;
    let ta = chance(rng, 0.3);
    let tb = chance(rng, 0.5);
    if ta || chance(rng, 0.3) {
        a.push(("transA", ai(ta as i64)));
    }
    if tb || chance(rng, 0.3) {
        a.push(("transB", ai(tb as i64)));
    }
    let (m, k) = if ta { (d[1], d[0]) } else { (d[0], d[1]) };
    let n = between(rng, 1, 8);
    let bshape = if tb { vec![n, k] } else { vec![k, n] };
    let b = konst(site, "b", t.dtype, &bshape, -1.0, 1.0, rng);
    const AB: &[f64] = &[-0.5, 0.5, 1.0, 2.0];
    float_of(rng, &mut a, "alpha", AB);
    float_of(rng, &mut a, "beta", AB);
    let cshape = match below(rng, 6) {
        0 => None,
        1 => Some(vec![n]),
        2 => Some(vec![1, n]),
        3 => Some(vec![m, n]),
        4 => Some(vec![m, 1]),
        _ => Some(vec![]),
    };
    let cshape = if site.opset() < 7 {
        let full = vec![m, n];
        match cshape {
            Some(cs) if cs != full => {
                a.push(("broadcast", ai(1)));
                Some(cs)
            }
            other => {
                maybe_int(rng, &mut a, 0.5, "broadcast", &[0]);
                other.or(Some(full))
            }
        }
    } else {
        cshape
    };
    match cshape {
        Some(cs) => {
            let c = konst(site, "c", t.dtype, &cs, -1.0, 1.0, rng);
            site.op1(op, &[x, &b, &c], a)
        }
        None => site.op1(op, &[x, &b], a),
    }
}
