//! MultiHeadAttention of `com.microsoft`: scaled dot-product attention over `num_heads` heads
//! of query `(batch, sequence, hidden)`, key `(batch, kv_sequence, hidden)` and value `(batch,
//! kv_sequence, v_hidden)`, each plus its part of `bias` when given; the scaled scores plus
//! `attention_bias` (`(1 or batch, 1 or heads, sequence, kv_sequence)`), a causal mask when
//! `unidirectional`, softmax over the keys, times the values. Only that form is modelled: packed
//! QKV or KV, keys and values already split in heads, `key_padding_mask`, past and present
//! states, `cache_indirection` and the `qk` output are refused. ONNX Runtime's CPU kernel masks
//! key `j > i` of query `i` with -inf (not `mask_filter_value`) in every row but the last (see
//! [`causal_masked`], [`open_cases`]).
use super::MS;
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType;
use crate::ops::common::*;
use crate::ops::nn::{expect_dims, flag, shape_of};
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

/// The geometry of one attention node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heads {
    /// Rows of the batch.
    pub batch: i64,
    /// Queries of a row.
    pub seq: i64,
    /// Keys (and values) of a row.
    pub kv_seq: i64,
    /// Heads.
    pub heads: i64,
    /// Values of a query's or key's head.
    pub head: i64,
    /// Values of a value's head.
    pub v_head: i64,
}

/// The geometry of MultiHeadAttention's 3-D query, key and value of shapes `q`, `k`, `v` with
/// `heads` heads, checked as ONNX Runtime's kernel checks it.
pub fn mha_geometry(q: &[i64], k: &[i64], v: &[i64], heads: i64) -> Result<Heads, String> {
    let (&[b, s, d], &[kb, l, kd], &[vb, vl, dv]) = (q, k, v) else {
        return Err(format!(
            "query, key and value must be 3-D, found {q:?}, {k:?}, {v:?}"
        ));
    };
    if b != kb || b != vb || l != vl || d != kd {
        return Err(format!(
            "query {q:?}, key {k:?} and value {v:?} must share the batch, key and value \
             the sequence, query and key the hidden size"
        ));
    }
    if heads <= 0 || d % heads != 0 || dv % heads != 0 {
        return Err(format!(
            "num_heads {heads} must divide the hidden sizes {d} and {dv}"
        ));
    }
    Ok(Heads {
        batch: b,
        seq: s,
        kv_seq: l,
        heads,
        head: d / heads,
        v_head: dv / heads,
    })
}

/// Whether a causal (`unidirectional`) mask hides key `j` from query `i` of `seq` queries, as
/// ONNX Runtime's CPU kernel masks: keys after the query, in every row but the last (which
/// sees every key; the same as `j > i` when there are no more keys than queries).
pub fn causal_masked(i: usize, j: usize, seq: usize) -> bool {
    i + 1 < seq && j > i
}

/// The scale of the scores: `scale`, or `1 / sqrt(head)` when it is absent or 0 (ORT reads 0
/// as unset).
pub fn attention_scale(scale: f32, head: i64) -> f64 {
    if scale == 0.0 {
        1.0 / (head as f64).sqrt()
    } else {
        scale as f64
    }
}

fn known(c: &InferCtx, i: usize) -> Option<Vec<i64>> {
    shape_of(c, i)?.iter().map(Dim::value).collect()
}

fn mha_infer(c: &InferCtx) -> Infer {
    let (q, v) = (shape_of(c, 0), shape_of(c, 2));
    let shape = match (q, v) {
        (Some(q), Some(v)) if q.len() == 3 && v.len() == 3 => {
            Some(vec![q[0].clone(), q[1].clone(), v[2].clone()])
        }
        _ => None,
    };
    Ok(vec![tensor(c.dtype(0), shape)])
}

/// The inputs and outputs of the forms not modelled are absent.
fn only_modelled(c: &InferCtx) -> Result<(), InferError> {
    if !c.has_input(1) || !c.has_input(2) {
        return Err(rule!(
            "key and value are required (packed QKV or KV are refused)"
        ));
    }
    let refused = [
        "key_padding_mask",
        "past_key",
        "past_value",
        "past_sequence_length",
    ];
    for (i, name) in (4..).zip(refused.iter().chain(&["cache_indirection"])) {
        if i != 5 && c.has_input(i) {
            return Err(rule!("{name} is not modelled"));
        }
    }
    if c.node.outputs.iter().skip(1).any(|o| !o.is_empty()) {
        return Err(rule!(
            "only the output is modelled (no present_key, present_value, qk)"
        ));
    }
    Ok(())
}

/// `attention_bias` (input `i`) is `(1 or batch, 1 or heads, sequence, kv_sequence)`.
pub(super) fn attention_bias(c: &InferCtx, i: usize, g: &Heads) -> Result<(), InferError> {
    let Some(s) = known(c, i) else {
        return expect_dims(c, i, &[None, None, Some(g.seq), Some(g.kv_seq)]);
    };
    let fits = |d: i64, n: i64| d == 1 || d == n;
    if s.len() != 4 || !fits(s[0], g.batch) || !fits(s[1], g.heads) || s[2..] != [g.seq, g.kv_seq] {
        return Err(rule!(
            "attention_bias of shape {s:?} for {g:?}: (1 or batch, 1 or heads, sequence, \
             kv_sequence)"
        ));
    }
    Ok(())
}

fn mha_check(c: &InferCtx) -> Result<(), InferError> {
    only_modelled(c)?;
    let (Some(q), Some(k), Some(v)) = (known(c, 0), known(c, 1), known(c, 2)) else {
        return Ok(());
    };
    let g = mha_geometry(&q, &k, &v, c.int("num_heads", 0)).map_err(InferError::Rule)?;
    let (d, dv) = (g.heads * g.head, g.heads * g.v_head);
    expect_dims(c, 3, &[Some(2 * d + dv)])?;
    attention_bias(c, 5, &g)
}

/// A constant `attention_bias` (input `i`) hides no row of keys whole (all -inf: softmax of
/// no key, 0 / 0, which ORT computes as NaN).
pub(super) fn no_row_hidden(c: &InferCtx, i: usize, keys: i64) -> Result<(), InferError> {
    match c.const_f64s(i) {
        Some(b)
            if keys > 0
                && b.chunks(keys as usize)
                    .any(|r| r.iter().all(|&x| x == f64::NEG_INFINITY)) =>
        {
            Err(rule!(
                "attention_bias hides every key of a query: softmax of none is undefined"
            ))
        }
        _ => Ok(()),
    }
}

/// What the docs leave open, or where ORT's CPU kernel parts from them: `scale = 0` ("custom
/// scale will be used"; ORT uses `1 / sqrt(head)`); `unidirectional` with as many keys as
/// queries only ("each token only attends to previous tokens": with more keys ORT's last
/// query sees them all, its others the keys up to their own index); `mask_filter_value` with
/// `unidirectional` ("the value to be filled in the attention mask": ORT's causal mask is
/// -inf whatever it is); a query whose keys `attention_bias` hides whole.
fn mha_open_cases(c: &InferCtx) -> Result<(), InferError> {
    causal_and_scale(c)?;
    if c.int("unidirectional", 0) == 1
        && let (Some(q), Some(k)) = (known(c, 0), known(c, 1))
        && q.get(1) != k.get(1)
    {
        return Err(rule!(
            "unidirectional with {:?} queries and {:?} keys: which keys precede a query is \
             not defined",
            q.get(1),
            k.get(1)
        ));
    }
    no_row_hidden(
        c,
        5,
        known(c, 1).and_then(|k| k.get(1).copied()).unwrap_or(0),
    )
}

/// The open cases MultiHeadAttention and Attention share: `scale = 0` and
/// `mask_filter_value` with a causal mask.
pub(super) fn causal_and_scale(c: &InferCtx) -> Result<(), InferError> {
    if c.attr("scale").is_some() && c.float("scale", 1.0) == 0.0 {
        return Err(rule!(
            "scale = 0: ONNX Runtime uses 1 / sqrt(head_size) instead (the doc: custom scale)"
        ));
    }
    if c.int("unidirectional", 0) == 1 && c.attr("mask_filter_value").is_some() {
        return Err(rule!(
            "mask_filter_value with unidirectional: ONNX Runtime's causal mask is -inf"
        ));
    }
    Ok(())
}

/// The attributes the attention ops share.
pub(super) fn with_common_attrs(spec: OpSpec) -> OpSpec {
    spec.attr(
        AttrSpec::of("num_heads", AttrKind::Int)
            .required()
            .range(1, i64::MAX)
            .int_buckets(&[(1, 1), (2, 4), (5, i64::MAX)]),
    )
    .attr(flag("unidirectional"))
    .attr(AttrSpec::float("scale", 0.0).no_buckets())
    .attr(AttrSpec::float("mask_filter_value", -10000.0).no_buckets())
}

pub(super) fn register(r: &mut Registry) {
    let spec = OpSpec::new("MultiHeadAttention", &[1], Category::Linear).domain(MS);
    r.add(
        with_common_attrs(spec)
            .input("query", "T")
            .opt_input("key", "T")
            .opt_input("value", "T")
            .opt_input("bias", "T")
            .opt_input("key_padding_mask", "M")
            .opt_input("attention_bias", "T")
            .opt_input("past_key", "T")
            .opt_input("past_value", "T")
            .opt_input("past_sequence_length", "M")
            .opt_input("cache_indirection", "M")
            .output("output", "T")
            .opt_output("present_key", "T")
            .opt_output("present_value", "T")
            .opt_output("qk", "T")
            .types("T", &[DType::F32])
            .types("M", &[DType::I32])
            .infer(mha_infer)
            .requires(mha_check)
            .ambiguous(mha_open_cases),
    );
}

#[cfg(test)]
mod tests {
    use crate::text::parse_model;
    use crate::validate::{Diagnostics, validate};

    /// Two rows of three queries and four keys, two heads of 4 (values of 2).
    const MHA: &str = "g (float[2, 3, 8] q, float[2, 4, 8] k, float[2, 4, 4] v) => \
        (float[2, 3, 4] y)\n{ y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v) }";

    fn check(body: &str) -> Result<Diagnostics, String> {
        let src =
            format!("<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n{body}");
        validate(&parse_model(&src).unwrap()).map_err(|e| e.to_string())
    }

    fn with(attrs: &str) -> String {
        MHA.replace("num_heads = 2", attrs)
    }

    #[test]
    fn heads_divide_the_hidden_sizes_and_only_the_output_is_modelled() {
        let d = check(MHA).unwrap();
        assert!(d.ambiguous.is_empty() && d.warnings.is_empty(), "{d:?}");
        assert!(check(&with("num_heads = 3")).is_err());
        assert!(
            check(&with("num_heads = 8")).is_err(),
            "values of 4 in 8 heads"
        );
        let packed = MHA.replace("(q, k, v)", "(q)");
        assert!(check(&packed).is_err());
        let present = MHA.replace("y = com", "y, pk = com");
        assert!(check(&present).is_err());
        let bias = |n: usize| {
            MHA.replace("(q, k, v)", "(q, k, v, b)").replace(
                ") => (float[2, 3, 4] y)",
                &format!(", float[{n}] b) => (float[2, 3, 4] y)"),
            )
        };
        assert!(check(&bias(20)).is_ok());
        assert!(check(&bias(24)).is_err());
    }

    #[test]
    fn attention_bias_broadcasts_over_batch_and_heads_only() {
        let ab = |s: &str| {
            MHA.replace("(q, k, v)", "(q, k, v, \"\", \"\", ab)")
                .replace(
                    ") => (float[2, 3, 4] y)",
                    &format!(", float[{s}] ab) => (float[2, 3, 4] y)"),
                )
        };
        for ok in ["2, 2, 3, 4", "1, 2, 3, 4", "2, 1, 3, 4", "1, 1, 3, 4"] {
            assert!(check(&ab(ok)).is_ok(), "{ok}");
        }
        for bad in ["3, 4", "2, 3, 4", "1, 1, 1, 4", "1, 1, 3, 1", "3, 2, 3, 4"] {
            assert!(check(&ab(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn causal_masks_of_unequal_lengths_and_zero_scale_are_left_open() {
        let d = check(&with("num_heads = 2, unidirectional = 1")).unwrap();
        assert!(d.ambiguous.iter().any(|a| a.contains("precede")), "{d:?}");
        let square = MHA
            .replace(
                "float[2, 4, 8] k, float[2, 4, 4] v",
                "float[2, 3, 8] k, float[2, 3, 4] v",
            )
            .replace("num_heads = 2", "num_heads = 2, unidirectional = 1");
        assert!(check(&square).unwrap().ambiguous.is_empty());
        let d = check(&square.replace("= 1>", "= 1, mask_filter_value = -1.0>")).unwrap();
        assert!(d.ambiguous.iter().any(|a| a.contains("-inf")), "{d:?}");
        let d = check(&with("num_heads = 2, scale = 0.0")).unwrap();
        assert!(d.ambiguous.iter().any(|a| a.contains("sqrt")), "{d:?}");
        assert!(
            check(&with("num_heads = 2, scale = 0.5"))
                .unwrap()
                .ambiguous
                .is_empty()
        );
    }
}
