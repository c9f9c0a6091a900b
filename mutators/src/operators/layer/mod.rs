//! Layer, input and value operators: CShape, CMode (MEMO) and PM (How-Far) change an op's
//! attributes; SM and DM (How-Far) change the shape or rank an op sees; NaN (MEMO) feeds NaN /
//! Inf into an op.
//!
//! An attribute edit is checked with the registry's type transfer before anything is applied
//! ([`Site::add_node`]); when the new attributes change the op's output type, the output is
//! adapted back ([`Site::adapt`]) so that the rest of the model stays valid.
use crate::builder::SplitMix64;
use crate::ir::attr::{AttrKind, AttrValue};
use crate::ir::patch::PatchOp;
use crate::ir::registry::{AttrSpec, Buckets, Legal, Registry};
use crate::ir::types::TensorType;
use crate::ir::{Model, Node, NodeId};
use crate::mutation::{Ctx, Mutator, Outcome, commit};
use crate::operators::common::backbone;
use crate::site::Site;

mod cmode;
mod cshape;
mod dm;
mod nan;
mod pm;
mod sm;

pub use cmode::ChangeMode;
pub use cshape::ChangeShape;
pub use dm::DimensionMutation;
pub use nan::NanInjection;
pub use pm::ParameterMutation;
pub use sm::ShapeMutation;

/// The layer, input and value operators.
pub fn all() -> Vec<Box<dyn Mutator>> {
    vec![
        Box::new(ChangeShape),
        Box::new(ChangeMode),
        Box::new(ParameterMutation),
        Box::new(ShapeMutation),
        Box::new(DimensionMutation),
        Box::new(NanInjection),
    ]
}

/// Attributes that fix shapes (kernel sizes, strides, axes, groups, block sizes, ...).
pub(crate) fn is_shape_attr(a: &AttrSpec) -> bool {
    matches!(a.kind, AttrKind::Ints)
        || matches!(
            a.name,
            "axis"
                | "group"
                | "blocksize"
                | "k"
                | "size"
                | "hidden_size"
                | "start"
                | "end"
                | "batch_dims"
                | "num_groups"
                | "output_height"
                | "output_width"
                | "sampling_ratio"
                | "depth"
                | "p"
        )
}

/// Attributes that choose a mode (strings and flags).
pub(crate) fn is_mode_attr(a: &AttrSpec) -> bool {
    !is_shape_attr(a)
        && match a.kind {
            AttrKind::String | AttrKind::Strings => true,
            AttrKind::Int => {
                matches!(a.buckets, Buckets::Strings(_))
                    || matches!(&a.legal, Legal::Ints(v) if v.len() <= 8)
                    || matches!(&a.buckets, Buckets::IntRanges(r) if r.iter().all(|(lo, hi)| hi - lo <= 1))
            }
            _ => false,
        }
}

/// Plain numeric parameters (alpha, beta, epsilon, momentum, ...).
pub(crate) fn is_numeric_attr(a: &AttrSpec) -> bool {
    matches!(a.kind, AttrKind::Float | AttrKind::Floats)
}

fn below(rng: &mut SplitMix64, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// A value of attribute `a` in bucket `b` (`rank`: of the op's first input, for list lengths).
pub(crate) fn value_in_bucket(
    a: &AttrSpec,
    b: usize,
    rank: usize,
    current: Option<&AttrValue>,
    rng: &mut SplitMix64,
) -> Option<AttrValue> {
    let spatial = rank.saturating_sub(2).max(1);
    let cur_len = match current {
        Some(AttrValue::Ints(v)) => Some(v.len()),
        Some(AttrValue::Floats(v)) => Some(v.len()),
        _ => None,
    };
    Some(match (a.kind, &a.buckets) {
        (AttrKind::Int, Buckets::IntRanges(r)) => {
            let (lo, hi) = *r.get(b)?;
            let v = if hi.saturating_sub(lo) <= 6 {
                lo + below(rng, (hi - lo + 1) as usize) as i64
            } else if lo == i64::MIN {
                hi - below(rng, 3) as i64
            } else {
                lo + below(rng, 3) as i64
            };
            AttrValue::Int(v)
        }
        (AttrKind::Int, Buckets::Strings(s)) => AttrValue::Int(s.get(b)?.parse().ok()?),
        (AttrKind::Float, Buckets::FloatRanges(r)) => {
            let (lo, hi) = *r.get(b)?;
            let (lo, hi) = match (lo.is_finite(), hi.is_finite()) {
                (true, true) => (lo, hi),
                (false, true) => (hi - 2.0, hi),
                (true, false) => (lo, lo + 2.0),
                (false, false) => (-2.0, 2.0),
            };
            AttrValue::Float(rng.range(lo, hi) as f32)
        }
        (AttrKind::String, Buckets::Strings(s)) => AttrValue::String(s.get(b)?.as_bytes().to_vec()),
        (AttrKind::Ints, Buckets::IntsNonEmpty) => {
            return value_in_bucket(
                &AttrSpec {
                    buckets: Buckets::IntsShape,
                    ..a.clone()
                },
                b + 1,
                rank,
                current,
                rng,
            );
        }
        (AttrKind::Ints, Buckets::IntsShape) => {
            let len = cur_len.unwrap_or(match a.name {
                "pads" => 2 * spatial,
                "perm" => rank,
                _ => spatial,
            });
            let len = len.max(1);
            if a.name == "perm" {
                let mut p: Vec<i64> = (0..rank as i64).collect();
                for i in (1..p.len()).rev() {
                    let j = below(rng, i + 1);
                    p.swap(i, j);
                }
                return Some(AttrValue::Ints(p));
            }
            AttrValue::Ints(match b {
                0 => Vec::new(),
                1 => vec![0; len],
                2 => vec![1; len],
                3 => vec![2 + below(rng, 2) as i64; len],
                _ => {
                    let mut v: Vec<i64> = (0..len).map(|_| 1 + below(rng, 3) as i64).collect();
                    if v.iter().all(|&x| x == v[0]) {
                        if len == 1 {
                            return None;
                        }
                        v[0] = v[0] % 3 + 1;
                    }
                    v
                }
            })
        }
        (AttrKind::Floats, Buckets::FloatsShape) => {
            let len = cur_len.unwrap_or(2).max(1);
            AttrValue::Floats(match b {
                0 => Vec::new(),
                1 => vec![rng.range(0.1, 2.0) as f32; len],
                _ => (0..len.max(2))
                    .map(|_| rng.range(0.1, 2.0) as f32)
                    .collect(),
            })
        }
        _ => return None,
    })
}

/// Changes one or two attributes chosen by `want` on up to `n` ops (backbone first), new
/// parameter buckets first; ops whose new attributes the registry refuses are left alone.
pub(crate) fn retune(
    name: &str,
    model: &mut Model,
    ctx: &mut Ctx<'_>,
    want: fn(&AttrSpec) -> bool,
) -> Outcome {
    let opset = model.default_opset();
    let reg = Registry::global();
    let spine = backbone(model);
    let mut cands: Vec<NodeId> = model
        .graph
        .nodes()
        .filter(|n| {
            n.subgraphs().next().is_none()
                // MaxUnpool reads indices laid out by its MaxPool's window: changing the window
                // of either one would make the indices point elsewhere.
                && n.op_type != "MaxUnpool"
                && !(n.op_type == "MaxPool" && n.outputs.iter().filter(|o| !o.is_empty()).count() > 1)
                && reg.for_node(n).is_some_and(|s| {
                    s.attrs
                        .iter()
                        .any(|a| a.exists_at(opset) && want(a) && !a.buckets.is_empty())
                })
        })
        .map(|n| n.id)
        .collect();
    if cands.is_empty() {
        return Outcome::Skipped("no op with such attributes".into());
    }
    ctx.shuffle(&mut cands);
    // Ops with uncovered buckets among the wanted attributes first, then backbone ops.
    let uncovered = |id: &NodeId| -> usize {
        let Some(n) = model.graph.node(*id) else {
            return 0;
        };
        let Some(spec) = reg.for_node(n) else {
            return 0;
        };
        spec.attrs
            .iter()
            .filter(|a| a.exists_at(opset) && want(a))
            .map(|a| {
                (0..a.buckets.len())
                    .filter(|&b| ctx.coverage.has_param(&n.key(), a.name, opset, b) == Some(false))
                    .count()
            })
            .sum()
    };
    let keys: Vec<(NodeId, bool, bool)> = cands
        .iter()
        .map(|id| {
            let on = model
                .graph
                .node(*id)
                .and_then(|n| n.outputs.first())
                .is_some_and(|o| spine.contains(o));
            (*id, uncovered(id) == 0, !on)
        })
        .collect();
    let mut keyed = keys;
    keyed.sort_by_key(|&(_, covered, off)| (covered, off));
    let cands: Vec<NodeId> = keyed.into_iter().map(|(id, _, _)| id).collect();
    let n_ops = ctx.between(1, 5);
    let mut edits: Vec<(NodeId, Node, String)> = Vec::new();
    let patch = {
        let mut site = Site::new(model, ctx.rng, ctx.limits);
        for id in cands.into_iter().take(3 * n_ops) {
            if edits.len() >= n_ops {
                break;
            }
            let node = model.graph.node(id).unwrap().clone();
            if let Some((new, what)) = retune_node(&mut site, model, &node, opset, ctx, want) {
                edits.push((id, new, what));
            }
        }
        if edits.is_empty() {
            return Outcome::Skipped("no attribute change was valid".into());
        }
        site.into_patch()
    };
    let mut patch = patch;
    // The reroutes of this edit (applied first) must also reach the replaced nodes.
    let reroutes: Vec<(String, String)> = patch
        .ops
        .iter()
        .filter_map(|op| match op {
            PatchOp::ReplaceUses { old, new } => Some((old.clone(), new.clone())),
            _ => None,
        })
        .collect();
    // Ops this edit added read what the rest of the model reads.
    for op in patch.ops.iter_mut() {
        if let PatchOp::AddNode(n) = op {
            for i in n.inputs.iter_mut() {
                if let Some((_, to)) = reroutes.iter().find(|(from, _)| from == i) {
                    *i = to.clone();
                }
            }
        }
    }
    // Nodes whose outputs keep their types are replaced in place.
    for (id, new, _) in &edits {
        if new.outputs.is_empty() {
            patch.ops.push(PatchOp::RemoveNode(*id));
        } else {
            let mut new = new.clone();
            for i in new.inputs.iter_mut() {
                if let Some((_, to)) = reroutes.iter().find(|(from, _)| from == i) {
                    *i = to.clone();
                }
            }
            patch.ops.push(PatchOp::ReplaceNode(*id, new));
        }
    }
    let summary = edits
        .iter()
        .map(|(_, _, w)| w.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    commit(model, name, summary, &patch)
}

/// One node's new attributes: the replacement node (or, when its output type changed, an
/// empty marker: the site holds the new node and the adapters, and the old node is removed).
fn retune_node(
    site: &mut Site<'_>,
    model: &Model,
    node: &Node,
    opset: i64,
    ctx: &mut Ctx<'_>,
    want: fn(&AttrSpec) -> bool,
) -> Option<(Node, String)> {
    let spec = Registry::global().for_node(node)?;
    let rank = node
        .inputs
        .first()
        .and_then(|i| model.graph.value_type(i).tensor().and_then(|t| t.rank()))
        .unwrap_or(0);
    let attrs: Vec<&AttrSpec> = spec
        .attrs
        .iter()
        .filter(|a| a.exists_at(opset) && want(a) && !a.buckets.is_empty())
        .collect();
    let old_types: Vec<Option<TensorType>> = node
        .outputs
        .iter()
        .map(|o| model.graph.value_type(o).tensor().cloned())
        .collect();
    for _ in 0..8 {
        let a = attrs[below(ctx.rng, attrs.len())];
        let current = node
            .attributes
            .iter()
            .find(|x| x.name == a.name)
            .map(|x| &x.value);
        let cur_bucket = current
            .or(a.default.as_ref())
            .and_then(|v| a.buckets.bucket_of(v));
        let nb = a.buckets.len();
        let mut buckets: Vec<usize> = (0..nb).filter(|&b| Some(b) != cur_bucket).collect();
        ctx.shuffle(&mut buckets);
        buckets.sort_by_key(|&b| {
            ctx.coverage
                .has_param(&node.key(), a.name, opset, b)
                .unwrap_or(true)
        });
        let Some(&b) = buckets.first() else { continue };
        let Some(v) = value_in_bucket(a, b, rank, current, ctx.rng) else {
            continue;
        };
        if a.check(&v).is_err() {
            continue;
        }
        let mut new = node.clone();
        new.attributes.retain(|x| x.name != a.name);
        new = new.with_attr(a.name, v.clone());
        // `pads` and a non-NOTSET `auto_pad` exclude each other (Conv, ConvTranspose, pools):
        // the one set now wins.
        match (a.name, &v) {
            ("auto_pad", AttrValue::String(s)) if s.as_slice() != b"NOTSET" => {
                new.attributes.retain(|x| x.name != "pads");
            }
            ("pads", _) => new.attributes.retain(|x| x.name != "auto_pad"),
            _ => {}
        }
        // Check it under fresh output names.
        let mut probe = new.clone();
        let fresh: Vec<String> = probe
            .outputs
            .iter()
            .map(|o| {
                if o.is_empty() {
                    String::new()
                } else {
                    site.fresh("retuned")
                }
            })
            .collect();
        probe.outputs = fresh.clone();
        probe.name = Some(site.fresh(&node.op_type));
        let what = format!(
            "{}.{} = {} on {}",
            node.op_type,
            a.name,
            v.short(),
            node.outputs[0]
        );
        let Ok(types) = site.check_node(&probe) else {
            continue;
        };
        let same = types
            .iter()
            .zip(&old_types)
            .all(|(t, o)| t.tensor() == o.as_ref());
        if same {
            return Some((new, what));
        }
        // The output type changed: add the probe and adapt its used outputs back.
        if site.add_node(probe).is_err() {
            continue;
        }
        let mut ok = true;
        let mut reroutes = Vec::new();
        for ((o, f), ot) in node.outputs.iter().zip(&fresh).zip(&old_types) {
            if o.is_empty() || model.graph.consumers(o).is_empty() && !is_graph_output(model, o) {
                continue;
            }
            let Some(ot) = ot else {
                ok = false;
                break;
            };
            match site.adapt(f, ot) {
                Ok(z) => reroutes.push((o.clone(), z)),
                Err(_) => {
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        for (o, z) in reroutes {
            site.reroute(&o, &z);
        }
        let mut marker = new;
        marker.outputs.clear();
        return Some((marker, what));
    }
    None
}

fn is_graph_output(model: &Model, v: &str) -> bool {
    model
        .graph
        .outputs
        .iter()
        .any(|o| o.name.as_deref() == Some(v))
}

/// SM / DM: picks an op (backbone first) with one data input `x` of static type, feeds it
/// `x` adapted to the dims `reshape` proposes, and adapts its output back; ops the registry
/// refuses with the new shape are skipped.
pub(crate) fn reshape_around(
    name: &str,
    model: &mut Model,
    ctx: &mut Ctx<'_>,
    reshape: fn(&[i64], &mut SplitMix64) -> Option<Vec<i64>>,
) -> Outcome {
    if model.graph.node_count() + 8 > ctx.limits.max_nodes {
        return Outcome::Skipped("model at the node limit".into());
    }
    let spine = backbone(model);
    let g = &model.graph;
    let mut cands: Vec<NodeId> = g
        .nodes()
        .filter(|n| {
            n.subgraphs().next().is_none()
                && n.outputs.len() == 1
                && n.present_inputs()
                    .filter(|i| !g.initializers.contains_key(*i))
                    .count()
                    == 1
        })
        .map(|n| n.id)
        .collect();
    if cands.is_empty() {
        return Outcome::Skipped("no single-input op".into());
    }
    ctx.shuffle(&mut cands);
    cands.sort_by_key(|id| !g.node(*id).is_some_and(|n| spine.contains(&n.outputs[0])));
    for id in cands.into_iter().take(6) {
        let node = model.graph.node(id).unwrap().clone();
        let Some((slot, x)) = node
            .inputs
            .iter()
            .enumerate()
            .find(|(_, i)| !i.is_empty() && !model.graph.initializers.contains_key(*i))
            .map(|(s, i)| (s, i.clone()))
        else {
            continue;
        };
        let y = node.outputs[0].clone();
        let (Some(tx), Some(ty)) = (
            model.graph.value_type(&x).tensor().cloned(),
            model.graph.value_type(&y).tensor().cloned(),
        ) else {
            continue;
        };
        let (Some(dx), Some(_)) = (tx.static_dims(), ty.static_dims()) else {
            continue;
        };
        let Some(nd) = reshape(&dx, ctx.rng) else {
            continue;
        };
        if nd.iter().product::<i64>() > ctx.limits.max_elements {
            continue;
        }
        let target = TensorType::fixed(tx.dtype, &nd);
        let patch = {
            let mut site = Site::new(model, ctx.rng, ctx.limits);
            let Ok(x2) = site.adapt(&x, &target) else {
                continue;
            };
            let mut copy = node.clone();
            copy.inputs[slot] = x2;
            let y2 = site.fresh("reshaped");
            copy.outputs = vec![y2.clone()];
            copy.name = Some(site.fresh(&node.op_type));
            if site.add_node(copy).is_err() {
                continue;
            }
            let Ok(back) = site.adapt(&y2, &ty) else {
                continue;
            };
            site.reroute(&y, &back);
            let mut p = site.into_patch();
            p.ops.push(PatchOp::RemoveNode(id));
            p
        };
        return commit(
            model,
            name,
            format!("{} on {x} reshaped {dx:?} -> {nd:?}", node.op_type),
            &patch,
        );
    }
    Outcome::Skipped("no op accepted the new shape".into())
}
