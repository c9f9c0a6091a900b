//! Index choices among near-equal values. TopK, ArgMax and ArgMin return positions: where two
//! values they rank are within rounding of each other, a library that computed them in another
//! precision upstream (ONNX Runtime's optimizer runs float16 models in float32 between casts)
//! may rank them the other way, and the indices differ while every value agrees. That is the
//! rounding upstream meeting a near-tie, not a wrong ranking.
use crate::checks::agree;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::{HostTensor, NamedValues, Value};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;

/// The outputs on which `got` leaves `want` beyond `tolerance`, when every one of them is the
/// indices of a TopK, ArgMax or ArgMin (the only case [`only_near_ties`] can explain); `None`
/// when one is not, or none differs. Reads no intermediate value: the triage runs the ground
/// again for those only when this holds.
pub(super) fn differing_indices(
    model: &Model,
    got: &NamedValues,
    want: &NamedValues,
    tolerance: Tolerance,
) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for (name, g) in got {
        let (_, w) = want.iter().find(|(n, _)| n == name)?;
        let one = |v: &Value| vec![(name.clone(), v.clone())];
        if agree(&one(w), &one(g), tolerance).is_ok() {
            continue;
        }
        ranking_node(model, name)?;
        names.push(name.clone());
    }
    (!names.is_empty()).then_some(names)
}

/// Why the index outputs `names` ([`differing_indices`]) pick among values within `tolerance`
/// of each other (`seen`: the ground's values of the model's inputs and intermediates, where
/// the ranked values are read); `None` when one does not.
pub(super) fn only_near_ties(
    model: &Model,
    names: &[String],
    (got, want): (&NamedValues, &NamedValues),
    seen: &[&NamedValues],
    tolerance: Tolerance,
) -> Option<String> {
    let mut widest: f64 = 0.0;
    for name in names {
        let value = |set: &NamedValues| set.iter().find(|(n, _)| n == name)?.1.tensor().cloned();
        let node = ranking_node(model, name)?;
        let ranked = seen
            .iter()
            .find_map(|s| s.iter().find(|(n, _)| *n == node.inputs[0]))?
            .1
            .tensor()?;
        let gap = index_gap(node, ranked, &value(got)?, &value(want)?)?;
        let tol = tolerance.for_dtype(ranked.dtype);
        if gap.0.is_nan() || gap.0 > tol.atol + tol.rtol * gap.1 {
            return None;
        }
        widest = widest.max(gap.0);
    }
    Some(format!(
        "the outputs that differ are indices of TopK/ArgMax/ArgMin that pick among values \
         within rounding of each other (largest gap {widest:.3e}): the values they rank \
         differ by rounding upstream, not the ranking"
    ))
}

/// The TopK (whose indices `output` is) or ArgMax/ArgMin (whose output it is).
fn ranking_node<'m>(model: &'m Model, output: &str) -> Option<&'m Node> {
    model.graph.nodes().find(|n| match n.op_type.as_str() {
        "TopK" => n.outputs.get(1).is_some_and(|o| o == output),
        "ArgMax" | "ArgMin" => n.outputs.first().is_some_and(|o| o == output),
        _ => false,
    })
}

/// Over the positions where the indices `got` and `want` differ, the largest difference between
/// the two values of `ranked` they point at, with the larger magnitude of that pair; `None`
/// when the shapes do not fit.
fn index_gap(
    node: &Node,
    ranked: &HostTensor,
    got: &HostTensor,
    want: &HostTensor,
) -> Option<(f64, f64)> {
    let x = ranked.to_f64s()?;
    let (g, w) = (got.to_i64s()?, want.to_i64s()?);
    let rank = ranked.shape.len() as i64;
    let default = if node.op_type == "TopK" { -1 } else { 0 };
    let axis = node.attributes.int("axis", default);
    let axis = usize::try_from(if axis < 0 { axis + rank } else { axis }).ok()?;
    let n = *ranked.shape.get(axis)?;
    let inner: usize = ranked.shape[axis + 1..].iter().product();
    // The indices keep every axis but the ranked one (TopK: k along it; ArgMax with keepdims
    // 0 drops it, which leaves the same layout as a length of 1).
    let k = if node.op_type == "TopK" {
        *got.shape.get(axis)?
    } else {
        1
    };
    if g.len() != w.len() || inner == 0 || k == 0 {
        return None;
    }
    let mut worst = (0.0f64, 0.0f64);
    for (p, (&a, &b)) in g.iter().zip(&w).enumerate() {
        if a == b {
            continue;
        }
        let (outer, i) = (p / (k * inner), p % inner);
        let at = |idx: i64| -> Option<f64> {
            let idx = usize::try_from(idx).ok().filter(|&j| j < n)?;
            x.get(outer * n * inner + idx * inner + i).copied()
        };
        let (va, vb) = (at(a)?, at(b)?);
        let gap = (va - vb).abs();
        // A NaN gap stays the worst: it is no near-tie.
        if gap.is_nan() || gap > worst.0 {
            worst = (gap, va.abs().max(vb.abs()));
        }
    }
    Some(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_backends::value::{Data, Value};

    fn topk_model() -> Model {
        mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2,4] x, int64[1] k) => (float[2,2] v, int64[2,2] i) { v, i = TopK (x, k) }",
        )
        .unwrap()
    }

    fn idx(v: &[i64]) -> NamedValues {
        vec![(
            "i".into(),
            Value::Tensor(HostTensor::new(vec![2, 2], Data::I64(v.to_vec()))),
        )]
    }

    #[test]
    fn indices_that_swap_near_equal_values_are_rounding() {
        let model = topk_model();
        let x: NamedValues = vec![(
            "x".into(),
            Value::Tensor(HostTensor::new(
                vec![2, 4],
                Data::F32(vec![0.5, 0.90001, 0.9, 0.1, 3.0, 1.0, 2.0, 0.0]),
            )),
        )];
        let tol = Tolerance::APPROXIMATE;
        let judge = |got: &[i64], want: &[i64]| {
            let (got, want) = (idx(got), idx(want));
            let names = differing_indices(&model, &got, &want, tol)?;
            only_near_ties(&model, &names, (&got, &want), &[&x], tol)
        };
        // Row 0: 1 and 2 hold 0.90001 and 0.9: either order is rounding.
        assert!(judge(&[2, 1, 0, 2], &[1, 2, 0, 2]).is_some());
        // Row 1: 3.0 and 2.0 are far apart: a wrong ranking.
        assert_eq!(judge(&[1, 2, 2, 0], &[1, 2, 0, 2]), None);
        // Nothing differs: nothing to explain.
        assert_eq!(judge(&[1, 2, 0, 2], &[1, 2, 0, 2]), None);
    }
}
