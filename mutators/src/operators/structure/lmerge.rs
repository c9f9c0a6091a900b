//! LMerge (MEMO): merges two values with a merging op (uncovered types first) and feeds the
//! readers of the first from the result. The second value must not depend on the first (no
//! cycle); values of the same static type are preferred, otherwise the second is adapted.
use crate::error::BuildError;
use crate::ir::attr::AttrValue;
use crate::ir::types::TensorType;
use crate::ir::{DType, Model};
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::operators::common::{
    captured_by_subgraph, descendants, model_op_types, node_room, pick_value, prefer,
    static_type_of, static_values,
};
use crate::site::Site;

/// Layer merging.
pub struct LayerMerging;

/// The merging ops that can read two values of `dtype`.
pub fn merging_ops(dtype: DType) -> Vec<&'static str> {
    if dtype == DType::Bool {
        vec!["And", "Or", "Xor", "Concat"]
    } else if dtype.is_float() {
        vec!["Add", "Sub", "Mul", "Max", "Min", "Mean", "Sum", "Concat"]
    } else {
        vec!["Add", "Sub", "Mul", "Max", "Min", "Sum", "Concat"]
    }
}

impl Mutator for LayerMerging {
    fn name(&self) -> &'static str {
        "LMerge"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "merge two values with Add/Mul/Max/Concat/... and feed the first one's readers"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(room) = node_room(model, ctx.limits) else {
            return Outcome::Skipped("model at the node limit".into());
        };
        let Some((a, ta)) = pick_value(model, ctx, |n, _| !captured_by_subgraph(model, n)) else {
            return Outcome::Skipped("no static value".into());
        };
        let after = descendants(model, &a);
        let mut others: Vec<(String, TensorType)> = static_values(model);
        for v in model.graph.real_inputs() {
            if let Some(n) = &v.name
                && let Some(t) = static_type_of(model, n)
            {
                others.push((n.clone(), t));
            }
        }
        others.retain(|(n, _)| !after.contains(n));
        if others.is_empty() {
            return Outcome::Skipped(format!("no value independent of {a}"));
        }
        let same: Vec<&(String, TensorType)> = others.iter().filter(|(_, t)| *t == ta).collect();
        let (b, tb) = if !same.is_empty() && ctx.chance(0.9) {
            same[ctx.below(same.len())].clone()
        } else {
            others[ctx.below(others.len())].clone()
        };
        let present = model_op_types(model);
        let cov = ctx.coverage;
        let ops = prefer(
            ctx,
            merging_ops(ta.dtype),
            |o| !cov.has_op(o),
            |o| !present.contains(*o),
        );
        let rank = ta.rank().unwrap_or(0);
        let mut last_err = String::new();
        for op in ops {
            let built = {
                let mut site = Site::new(model, ctx.rng, ctx.limits);
                let res = (|| {
                    let b2 = if tb == ta {
                        b.clone()
                    } else {
                        site.adapt(&b, &ta)?
                    };
                    let m = if op == "Concat" {
                        if rank == 0 {
                            return Err(BuildError::not_applicable("Concat of scalars"));
                        }
                        let axis = ctx.below(rank) as i64;
                        let c =
                            site.op1("Concat", &[&a, &b2], vec![("axis", AttrValue::Int(axis))])?;
                        site.adapt(&c, &ta)?
                    } else {
                        site.op1(op, &[&a, &b2], vec![])?
                    };
                    if site.static_type(&m).as_ref() != Some(&ta) {
                        return Err(BuildError::not_applicable(format!("{op} changed the type")));
                    }
                    site.reroute(&a, &m);
                    Ok(())
                })();
                res.map(|_| {
                    let added = site.added_nodes();
                    (site.into_patch(), added)
                })
            };
            match built {
                Ok((patch, added)) if added <= room => {
                    let summary = format!("merged {a} and {b} with {op}");
                    return commit(model, self.name(), summary, &patch);
                }
                Ok(_) => last_err = "over the node limit".into(),
                Err(e) => last_err = e.to_string(),
            }
        }
        Outcome::Skipped(format!("no merge could be built at {a}: {last_err}"))
    }
}
