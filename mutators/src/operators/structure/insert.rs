//! Shared by NLA and LResh: splice a list of op types in at values of the model, chaining an
//! op after the previous one when it can read it.
use crate::error::BuildError;
use crate::ir::Model;
use crate::mutation::{Ctx, Outcome, commit};
use crate::operators::common::{Splice, model_op_types, node_room, pick_value, prefer};
use crate::recipes::Recipe;
use crate::site::Site;
use std::collections::HashSet;

/// Inserts up to `n` ∈ [1, 5] op types of `pool`, the ones not covered globally first, then
/// the ones absent from the model, then any.
pub(super) fn insert_new_ops(
    model: &mut Model,
    ctx: &mut Ctx<'_>,
    name: &str,
    pool: Vec<&dyn Recipe>,
) -> Outcome {
    let Some(room) = node_room(model, ctx.limits) else {
        return Outcome::Skipped("model at the node limit".into());
    };
    if pool.is_empty() {
        return Outcome::Skipped("no op type to insert".into());
    }
    let present = model_op_types(model);
    let cov = ctx.coverage;
    let ordered = prefer(
        ctx,
        pool,
        |r| !cov.has_op(r.op_type()),
        |r| !present.contains(r.op_type()),
    );
    let mut n = ctx.between(1, 5);
    let mut banned: HashSet<&'static str> = HashSet::new();
    let mut last_err = String::new();
    for _ in 0..12 {
        let want: Vec<&dyn Recipe> = ordered
            .iter()
            .filter(|r| !banned.contains(r.op_type()))
            .take(n)
            .copied()
            .collect();
        if want.is_empty() {
            break;
        }
        match build(model, ctx, &want) {
            Ok((patch, summary, added)) => {
                if added > room {
                    if n == 1 {
                        return Outcome::Skipped("no insertion fits the node limit".into());
                    }
                    n -= 1;
                    continue;
                }
                return commit(model, name, summary, &patch);
            }
            Err((op, e)) => {
                banned.insert(op);
                last_err = e.to_string();
            }
        }
    }
    Outcome::Skipped(format!("no op could be inserted: {last_err}"))
}

type Built = (crate::ir::patch::Patch, String, usize);

fn build(
    model: &Model,
    ctx: &mut Ctx<'_>,
    want: &[&dyn Recipe],
) -> Result<Built, (&'static str, BuildError)> {
    let mut site = Site::new(model, ctx.rng, ctx.limits);
    let mut splices: Vec<Splice> = Vec::new();
    let mut sites: HashSet<String> = HashSet::new();
    let mut words = Vec::new();
    for &r in want {
        let op = r.op_type();
        let chain = match splices.last() {
            Some(s) => s.accepts_now(r) && ctx.chance(0.6),
            None => false,
        };
        if chain {
            let s = splices.last_mut().unwrap();
            s.push(&mut site, r, ctx.rng).map_err(|e| (op, e))?;
            words.push(format!("{op} (chained)"));
            continue;
        }
        let Some((x, t)) = pick_value(model, ctx, |n, t| {
            !sites.contains(n) && t.rank().is_some_and(|rank| r.accepts(t.dtype, rank))
        }) else {
            return Err((op, BuildError::NoValue { op: op.to_string() }));
        };
        let mut s = Splice::new(&x, &t);
        s.push(&mut site, r, ctx.rng).map_err(|e| (op, e))?;
        words.push(format!("{op} after {x}"));
        sites.insert(x);
        splices.push(s);
    }
    for s in splices {
        let last = s.last_op().unwrap_or("adapt");
        s.finish(&mut site).map_err(|e| (last, e))?;
    }
    let added = site.added_nodes();
    Ok((
        site.into_patch(),
        format!("inserted {}", words.join(", ")),
        added,
    ))
}
