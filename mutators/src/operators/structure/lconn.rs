//! LConn (MEMO): connects op pairs not covered yet. First an op of the model whose output an
//! uncovered pair's second op can read gets that op spliced in after it; otherwise a chain
//! `a → b` of an uncovered pair is spliced in at a value; the chain then grows while further
//! uncovered pairs can follow (up to n ∈ [1, 5] new pairs). When every pair is covered, two
//! ops are connected at random.
use crate::error::BuildError;
use crate::ir::Model;
use crate::ir::types::TensorType;
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::operators::common::{
    Splice, backbone, model_op_types, model_pairs, node_room, pick_value, prefer, static_values,
};
use crate::recipes::Recipe;
use crate::site::Site;
use std::collections::HashSet;

/// Layer connecting.
pub struct LayerConnecting;

type Pairs = HashSet<(String, String)>;

/// Whether `a → b` is a pair of the universe not covered globally nor present in the model.
fn is_new(ctx: &Ctx<'_>, present: &Pairs, a: &str, b: &str) -> bool {
    ctx.coverage.universe().is_connectable(a, b) == Some(true)
        && !ctx.coverage.has_pair(a, b)
        && !present.contains(&(a.to_string(), b.to_string()))
}

/// A plan: splice at `x` (type `t`) the recipes `first` (a fixed start of the chain, which
/// then grows through new pairs).
struct Plan<'r> {
    x: String,
    t: TensorType,
    first: Vec<&'r dyn Recipe>,
    /// Whether the splice must realize at least one new pair.
    want_new: bool,
}

impl Mutator for LayerConnecting {
    fn name(&self) -> &'static str {
        "LConn"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "connect uncovered op pairs: splice b after an a of the model, or an a → b chain"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(room) = node_room(model, ctx.limits) else {
            return Outcome::Skipped("model at the node limit".into());
        };
        let recipes = ctx.recipes;
        let present = model_pairs(model);
        let n = ctx.between(1, 5);
        let mut last_err = String::new();
        for attempt in 0..8 {
            let Some(plan) = plan(model, ctx, &present, attempt) else {
                break;
            };
            let built = {
                let mut site = Site::new(model, ctx.rng, ctx.limits);
                let mut s = Splice::new(&plan.x, &plan.t);
                let mut new_pairs: Pairs = HashSet::new();
                let mut prev = model
                    .graph
                    .producer(&plan.x)
                    .and_then(|id| model.graph.node(id))
                    .map(|n| n.key());
                let mut res: Result<(), BuildError> = Ok(());
                for r in &plan.first {
                    if let Some(p) = &prev
                        && s.accepts_now(*r)
                        && is_new(ctx, &present, p, r.op_type())
                    {
                        new_pairs.insert((p.clone(), r.op_type().to_string()));
                    }
                    res = s.push(&mut site, *r, ctx.rng);
                    if res.is_err() {
                        break;
                    }
                    prev = Some(r.op_type().to_string());
                }
                // Grow the chain while uncovered pairs can follow.
                while res.is_ok() && new_pairs.len() < n {
                    let last = s.last_op().unwrap_or_default();
                    let mut next: Vec<&dyn Recipe> = recipes
                        .iter()
                        .filter(|c| {
                            s.accepts_now(*c)
                                && is_new(ctx, &present, last, c.op_type())
                                && !new_pairs.contains(&(last.to_string(), c.op_type().to_string()))
                        })
                        .collect();
                    ctx.shuffle(&mut next);
                    let Some(c) = next.first().copied() else {
                        break;
                    };
                    res = s.push(&mut site, c, ctx.rng);
                    new_pairs.insert((last.to_string(), c.op_type().to_string()));
                }
                if res.is_ok() && plan.want_new && new_pairs.is_empty() {
                    res = Err(BuildError::not_applicable("no new pair realized"));
                }
                let ops = s.ops.clone();
                res.and_then(|_| s.finish(&mut site)).map(|_| {
                    let added = site.added_nodes();
                    (site.into_patch(), ops, new_pairs, added)
                })
            };
            match built {
                Ok((patch, ops, pairs, added)) if added <= room => {
                    let mut p: Vec<String> =
                        pairs.iter().map(|(a, b)| format!("{a}→{b}")).collect();
                    p.sort();
                    let summary = format!(
                        "spliced {} after {} (new pairs: {})",
                        ops.join(" → "),
                        plan.x,
                        p.join(", ")
                    );
                    return commit(model, self.name(), summary, &patch);
                }
                Ok(_) => last_err = "over the node limit".into(),
                Err(e) => last_err = e.to_string(),
            }
        }
        Outcome::Skipped(format!("no connection could be built: {last_err}"))
    }
}

/// Chooses where and what to splice: attempt 0-2 look for an uncovered pair leaving an op of
/// the model, 3-5 for an uncovered pair of two new ops, later ones connect at random.
fn plan<'r>(model: &Model, ctx: &mut Ctx<'r>, present: &Pairs, attempt: usize) -> Option<Plan<'r>> {
    let recipes = ctx.recipes;
    if attempt < 3 {
        // (value, type, b) with the value made by an op `a` and `a → b` new.
        let g = &model.graph;
        let spine = backbone(model);
        let mut cands: Vec<(String, TensorType, &'r dyn Recipe)> = Vec::new();
        for (x, t) in static_values(model) {
            let Some(a) = g.producer(&x).and_then(|id| g.node(id)) else {
                continue;
            };
            let rank = t.rank().unwrap_or(0);
            for b in recipes.accepting(t.dtype, rank) {
                if is_new(ctx, present, &a.key(), b.op_type()) {
                    cands.push((x.clone(), t.clone(), b));
                }
            }
        }
        if !cands.is_empty() {
            let on: Vec<usize> = (0..cands.len())
                .filter(|&i| spine.contains(&cands[i].0))
                .collect();
            let i = if !on.is_empty() && ctx.chance(0.8) {
                on[ctx.below(on.len())]
            } else {
                ctx.below(cands.len())
            };
            let (x, t, b) = cands.swap_remove(i);
            return Some(Plan {
                x,
                t,
                first: vec![b],
                want_new: true,
            });
        }
    }
    if attempt < 6 {
        // An uncovered pair a → b of ops the book can build, `a` absent from the model first.
        let in_model = model_op_types(model);
        let mut pairs: Vec<(&'r dyn Recipe, &'r dyn Recipe)> = Vec::new();
        for a in recipes.iter() {
            for b in recipes.iter() {
                if is_new(ctx, present, a.op_type(), b.op_type()) {
                    pairs.push((a, b));
                }
            }
        }
        let pairs = prefer(
            ctx,
            pairs,
            |(a, _)| !in_model.contains(a.op_type()),
            |_| true,
        );
        for (a, _) in pairs.into_iter().take(4) {
            if let Some((x, t)) = pick_value(model, ctx, |_, t| {
                t.rank().is_some_and(|r| a.accepts(t.dtype, r))
            }) {
                // The second op of a new pair follows from the chain growth, which only takes
                // ops that read `a`'s actual output.
                return Some(Plan {
                    x,
                    t,
                    first: vec![a],
                    want_new: true,
                });
            }
        }
    }
    // Random connection: any accepted recipe after any value.
    let (x, t) = pick_value(model, ctx, |_, t| {
        t.rank()
            .is_some_and(|r| !recipes.accepting(t.dtype, r).is_empty())
    })?;
    let acc = recipes.accepting(t.dtype, t.rank().unwrap_or(0));
    let b = *ctx.pick(&acc)?;
    Some(Plan {
        x,
        t,
        first: vec![b],
        want_new: false,
    })
}
