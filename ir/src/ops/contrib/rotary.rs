//! RotaryEmbedding of `com.microsoft`: rotary position embeddings (RoPE). The input is
//! `(batch, sequence, hidden)` or `(batch, heads, sequence, head)`; in each head the first
//! `rotary_embedding_dim` values (all of the head by default) are rotated in pairs by the
//! angles whose cosines and sines are the caches' row at the token's position (a
//! `(batch, sequence)` tensor of positions, or one start position for every row). Pairs are
//! `(x[i], x[i + R/2])`, or `(x[2i], x[2i + 1])` when `interleaved`; the other values pass
//! through. ONNX Runtime's kernel reads the caches at `position * R/2` and refuses a
//! position outside the caches, so constant positions are checked here.
use super::MS;
use crate::attr::AttrLookup;
use crate::dtype::DType;
use crate::ops::common::*;
use crate::ops::nn::{flag, shape_of};
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

/// The geometry of one RotaryEmbedding node, from its input's and caches' shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rope {
    /// Rows of the batch.
    pub batch: i64,
    /// Tokens of a row.
    pub seq: i64,
    /// Heads of a token.
    pub heads: i64,
    /// Values of a head.
    pub head: i64,
    /// Values of a head that are rotated (`R`, even; the first ones).
    pub rotary: i64,
    /// Rows of the caches: one past the greatest position.
    pub max_seq: i64,
    /// Whether the input is `(batch, heads, sequence, head)`.
    pub four_d: bool,
}

/// The geometry of an input of shape `x` with caches of shape `cache` and the node's
/// `num_heads` and `rotary_embedding_dim` (0: unset), checked as ONNX Runtime's kernel checks
/// it, and the doc's shapes where the kernel does not check them. A cache of `head / 2`
/// columns with a smaller `rotary_embedding_dim` is accepted (see [`open_cases`]).
pub fn rope_geometry(x: &[i64], cache: &[i64], num_heads: i64, rot: i64) -> Result<Rope, String> {
    let (four_d, [batch, seq, hidden]) = match *x {
        [b, s, h] => (false, [b, s, h]),
        [b, n, s, h] => (true, [b, s, n * h]),
        _ => return Err(format!("input must be 3-D or 4-D, found rank {}", x.len())),
    };
    let &[max_seq, cols] = cache else {
        return Err(format!(
            "the caches must be 2-D, found rank {}",
            cache.len()
        ));
    };
    let head = match (rot, num_heads) {
        (0, _) => 2 * cols,
        (_, n) if n > 0 && hidden % n == 0 => hidden / n,
        _ => {
            return Err(format!(
                "num_heads {num_heads} must divide the hidden size {hidden}"
            ));
        }
    };
    if head <= 0 || hidden % head != 0 {
        return Err(format!(
            "head size {head} must divide the hidden size {hidden}"
        ));
    }
    let heads = if num_heads > 0 {
        num_heads
    } else {
        hidden / head
    };
    if heads * head != hidden || (four_d && heads != x[1]) {
        return Err(format!(
            "{heads} heads of {head} values do not make the input's shape {x:?}"
        ));
    }
    let rotary = if rot > 0 { rot } else { head };
    if rotary > head || (2 * cols != rotary && 2 * cols != head) {
        return Err(format!(
            "rotary_embedding_dim {rotary} of a head of {head} with caches of {cols} columns"
        ));
    }
    if seq > max_seq {
        return Err(format!("{seq} tokens for caches of {max_seq} positions"));
    }
    Ok(Rope {
        batch,
        seq,
        heads,
        head,
        rotary,
        max_seq,
        four_d,
    })
}

/// The positions of `ids` (of rank `rank`) against `g`: a position of each token, or the
/// first token's (rank 0 or 1), the others following it; all within the caches.
pub fn rope_positions(g: &Rope, ids: &[i64], rank: usize) -> Result<Vec<i64>, String> {
    let all: Vec<i64> = if rank < 2 && ids.len() == 1 {
        let p0 = ids[0];
        (0..g.batch)
            .flat_map(|_| (p0..).take(g.seq as usize))
            .collect()
    } else if ids.len() as i64 == g.batch * g.seq {
        ids.to_vec()
    } else {
        return Err(format!(
            "{} position ids for {} tokens",
            ids.len(),
            g.batch * g.seq
        ));
    };
    match all.iter().find(|&&p| p < 0 || p >= g.max_seq) {
        Some(p) => Err(format!(
            "position {p} is outside the caches' {} rows",
            g.max_seq
        )),
        None => Ok(all),
    }
}

fn known(c: &InferCtx, i: usize) -> Option<Vec<i64>> {
    shape_of(c, i)?.iter().map(Dim::value).collect()
}

/// The ranks and the shapes that do not need the whole geometry: positions of one element or
/// `(batch, sequence)`, caches of one 2-D shape, `num_heads` with `rotary_embedding_dim`, an
/// even `rotary_embedding_dim`.
fn shapes(c: &InferCtx) -> Result<(), InferError> {
    let (heads, rot) = (c.int("num_heads", 0), c.int("rotary_embedding_dim", 0));
    if rot > 0 && heads == 0 {
        return Err(rule!("rotary_embedding_dim needs num_heads"));
    }
    if rot % 2 != 0 {
        return Err(rule!("rotary_embedding_dim {rot} must be even"));
    }
    if let (Some(a), Some(b)) = (shape_of(c, 2), shape_of(c, 3))
        && (a.len() != b.len() || a.iter().zip(&b).any(|(p, q)| p.value() != q.value()))
    {
        return Err(rule!("cos_cache and sin_cache must have one shape"));
    }
    let (x, p) = (shape_of(c, 0), shape_of(c, 1));
    let one = |p: &[Dim]| p.len() == 1 && p[0].value().is_none_or(|v| v == 1);
    match (x, p) {
        // The docs give shape (1) or (batch, sequence): a scalar is neither (round 14: tract
        // filed on a rank-0 position_ids that ONNX Runtime happens to take).
        (_, Some(p)) if p.is_empty() || p.len() > 2 || (p.len() == 1 && !one(&p)) => Err(rule!(
            "position_ids must be of shape (1) or (batch, sequence)"
        )),
        (Some(x), Some(p)) if p.len() == 2 => {
            let s = if x.len() == 4 { 2 } else { 1 };
            expect_known(&p, &[x.first(), x.get(s)])
        }
        _ => Ok(()),
    }
}

/// `p` (2-D positions) has the known sizes of `want` (batch, sequence).
fn expect_known(p: &[Dim], want: &[Option<&Dim>]) -> Result<(), InferError> {
    for (got, w) in p.iter().zip(want) {
        if let (Some(g), Some(w)) = (got.value(), w.and_then(Dim::value))
            && g != w
        {
            return Err(rule!(
                "position_ids of shape {p:?} for an input of {w} there"
            ));
        }
    }
    Ok(())
}

fn check(c: &InferCtx) -> Result<(), InferError> {
    shapes(c)?;
    let (Some(x), Some(cache)) = (known(c, 0), known(c, 2)) else {
        return Ok(());
    };
    let (heads, rot) = (c.int("num_heads", 0), c.int("rotary_embedding_dim", 0));
    let g = rope_geometry(&x, &cache, heads, rot).map_err(InferError::Rule)?;
    if let (Some(ids), Some(p)) = (c.const_i64s(1), shape_of(c, 1)) {
        rope_positions(&g, &ids, p.len()).map_err(InferError::Rule)?;
    }
    Ok(())
}

/// What the docs leave open: `scale` ("custom scale will be used"), which ONNX Runtime's CPU
/// kernel ignores; `is_packed_batching` ("ragged batch inputs"), which it ignores too,
/// reading the input as a dense batch; caches of `head / 2` columns with a smaller
/// `rotary_embedding_dim`, which the doc allows and the kernel reads as rows of `R/2`
/// values (position `p` at `p * R/2` of the flat cache, not the first `R/2` values of row
/// `p`).
fn open_cases(c: &InferCtx) -> Result<(), InferError> {
    let scale = c.float("scale", 1.0);
    if scale != 1.0 {
        return Err(rule!(
            "scale = {scale}: ONNX Runtime's CPU kernel ignores it, the doc says it is used"
        ));
    }
    if c.int("is_packed_batching", 0) != 0 {
        return Err(rule!(
            "is_packed_batching = 1: ONNX Runtime's CPU kernel reads a dense batch"
        ));
    }
    let (Some(x), Some(cache)) = (known(c, 0), known(c, 2)) else {
        return Ok(());
    };
    let (heads, rot) = (c.int("num_heads", 0), c.int("rotary_embedding_dim", 0));
    match rope_geometry(&x, &cache, heads, rot) {
        Ok(g) if 2 * cache[1] != g.rotary => Err(rule!(
            "caches of {} columns for rotary_embedding_dim {}: ONNX Runtime reads rows of {}",
            cache[1],
            g.rotary,
            g.rotary / 2
        )),
        _ => Ok(()),
    }
}

pub(super) fn register(r: &mut Registry) {
    let count = |name| {
        AttrSpec::int(name, 0).range(0, i64::MAX).int_buckets(&[
            (0, 0),
            (1, 1),
            (2, 16),
            (17, i64::MAX),
        ])
    };
    r.add(
        OpSpec::new("RotaryEmbedding", &[1], Category::Misc)
            .domain(MS)
            .attr(count("num_heads"))
            .attr(count("rotary_embedding_dim"))
            .attr(flag("interleaved"))
            .attr(flag("is_packed_batching"))
            .attr(AttrSpec::float("scale", 1.0).no_buckets())
            .input("input", "T")
            .input("position_ids", "M")
            .input("cos_cache", "T")
            .input("sin_cache", "T")
            .output("output", "T")
            .types("T", &[DType::F32, DType::F16])
            .types("M", &[DType::I64])
            .infer(unary)
            .requires(check)
            .ambiguous(open_cases),
    );
}

#[cfg(test)]
mod tests {
    use crate::text::parse_model;
    use crate::validate::{Diagnostics, validate};

    /// Two rows of three tokens, two heads of four values, caches of four positions.
    const OK: &str = "g (float[2, 3, 8] x) => (float[2, 3, 8] y)\n\
        <int64[2, 3] pos = {0, 1, 2, 3, 2, 1}, float[4, 2] cos = {1, 1, 0.5, 0.9, 0, 0.8, \
        -0.5, 0.7}, float[4, 2] sin = {0, 0, 0.8, 0.1, 1, 0.2, 0.8, 0.3}>\n\
        { y = com.microsoft.RotaryEmbedding (x, pos, cos, sin) }";

    fn check(body: &str) -> Result<Diagnostics, String> {
        let src =
            format!("<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n{body}");
        validate(&parse_model(&src).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn positions_stay_within_the_caches() {
        let d = check(OK).unwrap();
        assert!(d.ambiguous.is_empty() && d.warnings.is_empty(), "{d:?}");
        let e = check(&OK.replace("{0, 1, 2, 3, 2, 1}", "{0, 1, 2, 4, 2, 1}")).unwrap_err();
        assert!(e.contains("outside the caches"), "{e}");
        // One start position: tokens 1, 2, 3 fit, 2, 3, 4 do not.
        let start = |p: &str| OK.replace("int64[2, 3] pos = {0, 1, 2, 3, 2, 1}", p);
        assert!(check(&start("int64[1] pos = {1}")).is_ok());
        assert!(check(&start("int64[1] pos = {2}")).is_err());
        assert!(check(&start("int64[2] pos = {0, 1}")).is_err());
        // A scalar is not among the documented shapes (round 14).
        let e = check(&start("int64 pos = {1}")).unwrap_err();
        assert!(e.contains("shape (1) or (batch, sequence)"), "{e}");
    }

    #[test]
    fn heads_and_rotary_dim_make_the_input() {
        let with = |a: &str| OK.replace("RotaryEmbedding (", &format!("RotaryEmbedding <{a}> ("));
        assert!(check(&with("num_heads = 2")).is_ok());
        for bad in [
            "num_heads = 3",
            "rotary_embedding_dim = 4",
            "num_heads = 2, rotary_embedding_dim = 3",
        ] {
            assert!(check(&with(bad)).is_err(), "{bad}");
        }
        let four = OK
            .replace("float[2, 3, 8] x", "float[2, 2, 3, 4] x")
            .replace("float[2, 3, 8] y", "float[2, 2, 3, 4] y");
        assert!(check(&four).is_ok());
        let e = check(&four.replace("RotaryEmbedding (", "RotaryEmbedding <num_heads = 1> ("));
        assert!(e.is_err());
    }

    #[test]
    fn scale_and_wide_caches_are_left_open() {
        let with = |a: &str| OK.replace("RotaryEmbedding (", &format!("RotaryEmbedding <{a}> ("));
        let d = check(&with("scale = 2.0")).unwrap();
        assert!(d.ambiguous.iter().any(|a| a.contains("ignores")), "{d:?}");
        // Caches of head / 2 = 2 columns for R = 2: ORT reads rows of one value.
        let d = check(&with("num_heads = 2, rotary_embedding_dim = 2")).unwrap();
        assert!(d.ambiguous.iter().any(|a| a.contains("rows of 1")), "{d:?}");
    }
}
