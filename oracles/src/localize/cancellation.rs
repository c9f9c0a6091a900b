//! Rounding that an algebraically equivalent evaluation order makes legitimate.
//!
//! Batch and instance normalization are defined as (x − mean) / sqrt(var + ε) · scale + B.
//! Implementations fold that into x · s + (B − mean · s), s = scale / sqrt(var + ε): the same
//! function, but each product is rounded at the size of |x| · s, which can dwarf the result.
//! Over an instance of one element x equals its mean and the definition gives B exactly, while
//! ONNX Runtime's folded form with |x| ≈ 3.4e3 and ε = 1e-5 loses 0.04 in f32 (a false finding
//! of an independent triage). [`normalization_rounding`] bounds that error so that a blamed
//! node whose whole difference lies within it is rounding, not a bug.
//!
//! Layer and group normalization are computed over contiguous groups, their variance often in
//! one pass as E[x²] − mean²: a difference rounded at the size of E[x²], which a group whose
//! values sit far from zero and close together turns into a large relative error of the
//! variance, divided by (var + ε)^{3/2} in the result.
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

/// Rounding steps of the folded form counted against it: two products, a difference, a sum.
const STEPS: f64 = 4.0;

/// The largest error an implementation evaluating `node` (BatchNormalization in inference,
/// InstanceNormalization) in its folded form may make at the values `seen`: [`STEPS`] units of
/// rounding of the element type at the largest |x| · s and |mean| · s. `None` for other
/// nodes, or when a value it needs is not known.
pub fn normalization_rounding(node: &Node, seen: &[(String, HostTensor)]) -> Option<f64> {
    let get = |i: usize| {
        let name = node.inputs.get(i).filter(|n| !n.is_empty())?;
        seen.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    };
    let x = get(0)?;
    if matches!(
        node.op_type.as_str(),
        "LayerNormalization" | "GroupNormalization"
    ) {
        return grouped_rounding(node, x, get(1)?);
    }
    let unit = match x.dtype {
        DType::F32 => f64::from(f32::EPSILON) / 2.0,
        DType::F16 => 2f64.powi(-11),
        DType::BF16 => 2f64.powi(-8),
        DType::F64 => f64::EPSILON / 2.0,
        _ => return None,
    };
    let epsilon = f64::from(node.attributes.float("epsilon", 1e-5));
    let scale = get(1)?.to_f64s()?;
    let xs = x.to_f64s()?;
    let (n, c) = (*x.shape.first()?, *x.shape.get(1).unwrap_or(&1));
    let inner = xs.len() / (n * c).max(1);
    let channel = |b: usize, ch: usize| &xs[(b * c + ch) * inner..(b * c + ch + 1) * inner];
    let mut magnitude = 0f64;
    for ch in 0..c {
        let s = scale.get(ch).copied().unwrap_or(1.0).abs();
        match node.op_type.as_str() {
            "InstanceNormalization" => {
                for b in 0..n {
                    let v = channel(b, ch);
                    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
                    let var =
                        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len().max(1) as f64;
                    let big = v.iter().fold(0f64, |m, x| m.max(x.abs()));
                    magnitude = magnitude.max((big + mean.abs()) * s / (var + epsilon).sqrt());
                }
            }
            "BatchNormalization" => {
                let mean = get(3)?.to_f64s()?.get(ch).copied()?;
                let var = get(4)?.to_f64s()?.get(ch).copied()?;
                let big = (0..n)
                    .flat_map(|b| channel(b, ch))
                    .fold(0f64, |m, x| m.max(x.abs()));
                magnitude = magnitude.max((big + mean.abs()) * s / (var + epsilon).sqrt());
            }
            _ => return None,
        }
    }
    Some(STEPS * unit * magnitude)
}

/// The unit of rounding of a float element type.
pub(crate) fn unit_of(d: DType) -> Option<f64> {
    Some(match d {
        DType::F32 => f64::from(f32::EPSILON) / 2.0,
        DType::F16 => 2f64.powi(-11),
        DType::BF16 => 2f64.powi(-8),
        DType::F64 => f64::EPSILON / 2.0,
        _ => return None,
    })
}

/// [`normalization_rounding`] for layer and group normalization: over each group, the rounding
/// of x − mean at the size of |x| and of the one-pass variance E[x²] − mean² at the size of
/// E[x²], carried to the result by 1/sqrt(var + ε) and its derivative, times the largest scale.
fn grouped_rounding(node: &Node, x: &HostTensor, scale: &HostTensor) -> Option<f64> {
    let unit = unit_of(x.dtype)?;
    let xs = x.to_f64s()?;
    let rank = x.shape.len() as i64;
    let size = match node.op_type.as_str() {
        "LayerNormalization" => {
            let axis = node.attributes.int("axis", -1);
            let axis = if axis < 0 { axis + rank } else { axis };
            x.shape.get(usize::try_from(axis).ok()?..)?.iter().product()
        }
        _ => {
            let groups = usize::try_from(node.attributes.int("num_groups", 1)).ok()?;
            let c = *x.shape.get(1)?;
            let inner: usize = x.shape.get(2..)?.iter().product();
            (c / groups.max(1)) * inner
        }
    };
    let epsilon = f64::from(node.attributes.float("epsilon", 1e-5));
    let s = scale
        .to_f64s()?
        .iter()
        .fold(0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    let mut magnitude = 0f64;
    for g in xs.chunks(size.max(1)) {
        let n = g.len() as f64;
        let mean = g.iter().sum::<f64>() / n;
        let square = g.iter().map(|v| v * v).sum::<f64>() / n;
        let var = g.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let big = g.iter().fold(0f64, |m, v| m.max(v.abs()));
        let dev = g.iter().fold(0f64, |m, v| m.max((v - mean).abs()));
        let sd = (var + epsilon).sqrt();
        magnitude = magnitude.max((big + mean.abs()) / sd + dev * square / (2.0 * sd.powi(3)));
    }
    Some(STEPS * unit * magnitude * s)
}

/// Rounding steps of the operands' type within which a comparison may go either way.
const TIE_STEPS: f64 = 4.0;

/// Whether a comparison (Greater, Less, GreaterOrEqual, LessOrEqual, Equal) differs from the
/// reference (`want`) only where its two operands, as fed (`seen`), lie within [`TIE_STEPS`]
/// roundings of their float type of each other: an implementation computing the operands in a
/// wider type (ONNX Runtime runs an f16 AveragePool before a GreaterOrEqual in f32) lands on
/// either side of such a tie, and ONNX does not fix the precision of what precedes.
pub fn comparison_at_tie(
    node: &Node,
    seen: &[(String, HostTensor)],
    want: &NamedValues,
    got: &NamedValues,
) -> bool {
    let compares = matches!(
        node.op_type.as_str(),
        "Greater" | "Less" | "GreaterOrEqual" | "LessOrEqual" | "Equal"
    );
    let input = |i: usize| {
        let name = node.inputs.get(i)?;
        seen.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    };
    let (Some(a), Some(b), Some(y)) = (input(0), input(1), node.outputs.first()) else {
        return false;
    };
    let value = |side: &NamedValues| side.iter().find(|(n, _)| n == y)?.1.tensor()?.to_f64s();
    let (Some(unit), Some(av), Some(bv), Some(w), Some(g)) = (
        unit_of(a.dtype).filter(|_| compares),
        a.to_f64s(),
        b.to_f64s(),
        value(want),
        value(got),
    ) else {
        return false;
    };
    let Some(shape) = want
        .iter()
        .find(|(n, _)| n == y)
        .and_then(|(_, v)| v.tensor())
    else {
        return false;
    };
    let shape = &shape.shape;
    let differing: Vec<usize> = (0..w.len().min(g.len()))
        .filter(|&i| w[i] != g[i])
        .collect();
    w.len() == g.len()
        && !differing.is_empty()
        && differing.iter().all(|&i| {
            let (x, z) = (
                av[broadcast_index(i, shape, &a.shape)],
                bv[broadcast_index(i, shape, &b.shape)],
            );
            (x - z).abs() <= TIE_STEPS * unit * x.abs().max(z.abs())
        })
}

/// The flat index in a value of shape `from` that numpy broadcasting reads for the flat index
/// `i` of a result of shape `to`.
fn broadcast_index(i: usize, to: &[usize], from: &[usize]) -> usize {
    let (mut rest, mut at, mut stride) = (i, 0, 1);
    for k in (0..to.len()).rev() {
        let coord = rest % to[k].max(1);
        rest /= to[k].max(1);
        if let Some(&d) = (k + from.len())
            .checked_sub(to.len())
            .and_then(|j| from.get(j))
        {
            if d > 1 {
                at += coord * stride;
            }
            stride *= d.max(1);
        }
    }
    at
}

/// The largest |a − b| over the outputs both hold, by name; `None` when a shape differs, a
/// value is not a tensor or a difference is not a number.
pub fn max_abs_diff(a: &NamedValues, b: &NamedValues) -> Option<f64> {
    let mut max = 0f64;
    for (name, va) in a {
        let (_, vb) = b.iter().find(|(n, _)| n == name)?;
        let (ta, tb) = (va.tensor()?, vb.tensor()?);
        if ta.shape != tb.shape {
            return None;
        }
        for (x, y) in ta.to_f64s()?.iter().zip(tb.to_f64s()?) {
            let d = (x - y).abs();
            if d.is_nan() {
                return None;
            }
            max = max.max(d);
        }
    }
    Some(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_backends::value::Data;

    fn f32s(shape: &[usize], v: &[f32]) -> HostTensor {
        HostTensor::new(shape.to_vec(), Data::F32(v.to_vec()))
    }

    #[test]
    fn a_comparison_differing_only_at_ties_is_rounding() {
        use mutagraph_backends::value::Value;
        let node = Node::new("GreaterOrEqual", &["a", "b"], &["y"]);
        let bools = |v: &[bool]| {
            vec![(
                "y".to_string(),
                Value::Tensor(HostTensor::new(vec![2, 2], Data::Bool(v.to_vec()))),
            )]
        };
        // b broadcast from [2, 1]: row 0 compares with 1.0, row 1 with 2.0.
        let seen = vec![
            ("a".to_string(), f32s(&[2, 2], &[1.0, 0.5, 2.0, 3.0])),
            ("b".to_string(), f32s(&[2, 1], &[1.0, 2.0])),
        ];
        let want = bools(&[true, false, true, true]);
        // The elements equal to their threshold may go either way...
        assert!(comparison_at_tie(
            &node,
            &seen,
            &want,
            &bools(&[false, false, false, true])
        ));
        // ...a far-apart pair may not.
        assert!(!comparison_at_tie(
            &node,
            &seen,
            &want,
            &bools(&[true, true, true, true])
        ));
        assert!(!comparison_at_tie(&node, &seen, &want, &want));
    }

    #[test]
    fn a_layer_whose_values_sit_far_from_zero_and_close_together_allows_the_one_pass_variance() {
        let node = Node::new("LayerNormalization", &["x", "s", "b"], &["y"]);
        // Values near 1e3 a thousandth apart: E[x²] − mean² loses the variance to rounding.
        let tight: Vec<f32> = (0..8).map(|i| 1000.0 + i as f32 * 1e-3).collect();
        let seen = vec![
            ("x".to_string(), f32s(&[2, 4], &tight)),
            ("s".to_string(), f32s(&[4], &[1.0; 4])),
            ("b".to_string(), f32s(&[4], &[0.0; 4])),
        ];
        let bound = normalization_rounding(&node, &seen).unwrap();
        assert!(bound > 1.0, "{bound}");
        // Centred, spread-out values: a few ulps.
        let spread = vec![
            (
                "x".to_string(),
                f32s(&[2, 4], &[-1.5, -0.5, 0.5, 1.5, -3.0, -1.0, 1.0, 3.0]),
            ),
            ("s".to_string(), f32s(&[4], &[1.0; 4])),
            ("b".to_string(), f32s(&[4], &[0.0; 4])),
        ];
        assert!(normalization_rounding(&node, &spread).unwrap() < 1e-5);
        // Groups of two channels: the same bound over a group as over a layer of its values.
        let group = Node::new("GroupNormalization", &["x", "s", "b"], &["y"])
            .with_attr("num_groups", mutagraph_ir::attr::AttrValue::Int(2));
        let seen = vec![
            ("x".to_string(), f32s(&[1, 4, 2], &tight)),
            ("s".to_string(), f32s(&[4], &[1.0; 4])),
            ("b".to_string(), f32s(&[4], &[0.0; 4])),
        ];
        let g = normalization_rounding(&group, &seen).unwrap();
        assert!((g - bound).abs() <= bound * 1e-9, "{g} vs {bound}");
    }

    #[test]
    fn an_instance_of_one_large_element_allows_the_folded_forms_rounding() {
        // The independent triage's case: one spatial element of 3.4e3, epsilon 1e-5: ONNX
        // Runtime was off by 0.04 from B.
        let node = Node::new("InstanceNormalization", &["x", "s", "b"], &["y"]);
        let seen = vec![
            ("x".to_string(), f32s(&[1, 2, 1], &[3400.0, -3.0])),
            ("s".to_string(), f32s(&[2], &[1.0, 1.0])),
            ("b".to_string(), f32s(&[2], &[0.5, 0.5])),
        ];
        let bound = normalization_rounding(&node, &seen).unwrap();
        assert!(bound > 0.04 && bound < 1.0, "{bound}");
        // Spread-out values are well conditioned: the bound is a few ulps of the result.
        let spread = vec![
            ("x".to_string(), f32s(&[1, 1, 4], &[1.0, 2.0, 3.0, 4.0])),
            ("s".to_string(), f32s(&[1], &[1.0])),
            ("b".to_string(), f32s(&[1], &[0.0])),
        ];
        assert!(normalization_rounding(&node, &spread).unwrap() < 1e-5);
        assert_eq!(
            normalization_rounding(&Node::new("Relu", &["x"], &["y"]), &seen),
            None
        );
    }
}
