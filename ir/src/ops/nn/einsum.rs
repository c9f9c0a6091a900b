//! Einsum.

use super::{concat, shape_of};
use crate::attr::{AttrKind, AttrLookup};
use crate::dtype::DType;
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry, Traits};
use crate::types::Dim;
use std::collections::BTreeMap;

/// A parsed einsum term: labels and where the ellipsis sits.
#[derive(Debug, PartialEq)]
struct Term {
    labels: Vec<char>,
    ellipsis: Option<usize>,
}

fn parse_term(t: &str) -> Result<Term, InferError> {
    let mut labels = Vec::new();
    let mut ellipsis = None;
    let mut rest = t;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("...") {
            if ellipsis.is_some() {
                return Err(rule!("einsum term '{t}' has two ellipses"));
            }
            ellipsis = Some(labels.len());
            rest = r;
            continue;
        }
        let c = rest.chars().next().unwrap();
        if !c.is_ascii_alphabetic() {
            return Err(rule!("einsum term '{t}' has the character '{c}'"));
        }
        labels.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Ok(Term { labels, ellipsis })
}

/// Einsum output shape from the equation and the input shapes (`None` = unknown rank).
pub(super) fn einsum_shape(
    eq: &str,
    inputs: &[Option<Vec<Dim>>],
) -> Result<Option<Vec<Dim>>, InferError> {
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let terms = lhs
        .split(',')
        .map(parse_term)
        .collect::<Result<Vec<_>, _>>()?;
    if terms.len() != inputs.len() {
        return Err(rule!(
            "einsum equation has {} operands but the node has {} inputs",
            terms.len(),
            inputs.len()
        ));
    }
    let mut dims: BTreeMap<char, Dim> = BTreeMap::new();
    let mut count: BTreeMap<char, usize> = BTreeMap::new();
    let mut ell: Option<Vec<Dim>> = Some(vec![]);
    let mut any_ell = false;
    for (t, s) in terms.iter().zip(inputs) {
        for c in &t.labels {
            *count.entry(*c).or_default() += 1;
        }
        any_ell |= t.ellipsis.is_some();
        let Some(s) = s else {
            if t.ellipsis.is_some() {
                ell = None;
            }
            continue;
        };
        let nl = t.labels.len();
        let ne = match t.ellipsis {
            Some(_) if s.len() >= nl => s.len() - nl,
            None if s.len() == nl => 0,
            _ => {
                return Err(rule!(
                    "einsum term with {nl} labels does not fit an input of rank {}",
                    s.len()
                ));
            }
        };
        let pos = t.ellipsis.unwrap_or(nl);
        for (j, c) in t.labels.iter().enumerate() {
            let d = &s[if j < pos { j } else { j + ne }];
            let e = dims.entry(*c).or_insert(Dim::Unknown);
            *e = match (&*e, d) {
                (Dim::Known(x), Dim::Known(y)) if x != y && *x != 1 && *y != 1 => {
                    return Err(rule!("einsum label '{c}' has sizes {x} and {y}"));
                }
                (Dim::Known(1), Dim::Known(y)) => Dim::Known(*y),
                (Dim::Known(x), _) => Dim::Known(*x),
                (_, Dim::Known(y)) => Dim::Known(*y),
                (Dim::Param(p), _) => Dim::Param(p.clone()),
                (_, d) => d.clone(),
            };
        }
        if t.ellipsis.is_some()
            && let Some(cur) = ell
        {
            ell = broadcast_shapes(&[Some(cur), Some(s[pos..pos + ne].to_vec())])?;
        }
    }
    let mut out: Vec<Dim> = Vec::new();
    match rhs {
        Some(r) => {
            let t = parse_term(r)?;
            for (j, c) in t.labels.iter().enumerate() {
                if t.ellipsis == Some(j) {
                    match &ell {
                        Some(e) => out.extend(e.iter().cloned()),
                        None => return Ok(None),
                    }
                }
                if !count.contains_key(c) {
                    return Err(rule!("einsum output label '{c}' is not in any input"));
                }
                if t.labels[..j].contains(c) {
                    return Err(rule!("einsum output label '{c}' is repeated"));
                }
                out.push(dims.get(c).cloned().unwrap_or(Dim::Unknown));
            }
            if t.ellipsis == Some(t.labels.len()) {
                match &ell {
                    Some(e) => out.extend(e.iter().cloned()),
                    None => return Ok(None),
                }
            }
        }
        None => {
            if any_ell {
                match &ell {
                    Some(e) => out.extend(e.iter().cloned()),
                    None => return Ok(None),
                }
            }
            for (c, n) in &count {
                if *n == 1 {
                    out.push(dims.get(c).cloned().unwrap_or(Dim::Unknown));
                }
            }
        }
    }
    Ok(Some(out))
}

/// For [`OpSpec::ambiguous`]: a label of size 1 in one operand and larger in another. ONNX's
/// text enables broadcasting only through an ellipsis ("The equation may contain ellipsis
/// ('...') to enable broadcasting"): numpy and ONNX Runtime broadcast such a label, tract
/// refuses it, and neither is what the text defines.
fn label_broadcast(ctx: &InferCtx) -> Result<(), InferError> {
    let eq: String = ctx
        .string("equation", "")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let lhs = eq.split_once("->").map_or(eq.as_str(), |(l, _)| l);
    let mut sizes: BTreeMap<char, Vec<i64>> = BTreeMap::new();
    for (i, t) in lhs.split(',').enumerate() {
        let (Ok(t), Some(s)) = (parse_term(t), shape_of(ctx, i)) else {
            continue;
        };
        let nl = t.labels.len();
        if s.len() < nl || t.ellipsis.is_none() && s.len() != nl {
            continue;
        }
        let (pos, ne) = (t.ellipsis.unwrap_or(nl), s.len() - nl);
        for (j, c) in t.labels.iter().enumerate() {
            if let Dim::Known(d) = s[if j < pos { j } else { j + ne }] {
                sizes.entry(*c).or_default().push(d);
            }
        }
    }
    for (c, v) in sizes {
        if let Some(&big) = v.iter().find(|&&d| d != 1)
            && v.contains(&1)
        {
            return Err(rule!(
                "einsum label '{c}' has size 1 in one operand and {big} in another: ONNX \
                 enables broadcasting only through an ellipsis (numpy and ONNX Runtime broadcast \
                 it, tract refuses it)"
            ));
        }
    }
    Ok(())
}

fn einsum(ctx: &InferCtx) -> Infer {
    let eq = ctx.string("equation", "");
    let shapes: Vec<Option<Vec<Dim>>> = (0..ctx.n_inputs()).map(|i| shape_of(ctx, i)).collect();
    Ok(vec![tensor(ctx.dtype(0), einsum_shape(&eq, &shapes)?)])
}

/// Registers Einsum.
pub(super) fn register(r: &mut Registry) {
    r.add(
        OpSpec::new("Einsum", &[12], Category::Linear)
            .traits(Traits::INF_UNSPECIFIED)
            .attr(AttrSpec::of("equation", AttrKind::String).required())
            .var_input("Inputs", "T", 1)
            .output("Output", "T")
            .types("T", &concat(&[INT, &[DType::F16, DType::F32, DType::F64]]))
            .infer(einsum)
            .ambiguous(label_broadcast),
    );
}
