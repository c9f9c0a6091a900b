//! LA (LEMON / How-Far): adds one op on the backbone that keeps the value's type, spliced in
//! between the value and its readers.
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::operators::common::pick_value;
use crate::site::Site;

/// Layer addition.
pub struct LayerAddition;

impl Mutator for LayerAddition {
    fn name(&self) -> &'static str {
        "LA"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "add one op after a value (backbone first) and feed its readers from it"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        if model.graph.node_count() >= ctx.limits.max_nodes {
            return Outcome::Skipped("model at the node limit".into());
        }
        let recipes = ctx.recipes;
        let Some((x, t)) = pick_value(model, ctx, |_, t| {
            t.rank()
                .is_some_and(|r| !recipes.accepting(t.dtype, r).is_empty())
        }) else {
            return Outcome::Skipped("no value any recipe accepts".into());
        };
        let rank = t.rank().unwrap_or(0);
        let mut candidates = recipes.accepting(t.dtype, rank);
        ctx.shuffle(&mut candidates);
        let mut last_err = String::new();
        for r in candidates.into_iter().take(8) {
            let patch = {
                let mut site = Site::new(model, ctx.rng, ctx.limits);
                let built = r
                    .build(&mut site, &x, &t, ctx.rng)
                    .and_then(|y| site.adapt(&y, &t));
                match built {
                    Ok(_)
                        if model.graph.node_count() + site.added_nodes() > ctx.limits.max_nodes =>
                    {
                        last_err = "over the node limit".into();
                        continue;
                    }
                    Ok(y) => {
                        site.reroute(&x, &y);
                        site.into_patch()
                    }
                    Err(e) => {
                        last_err = e.to_string();
                        continue;
                    }
                }
            };
            let summary = format!("added {} after {x}", r.op_type());
            return commit(model, self.name(), summary, &patch);
        }
        Outcome::Skipped(format!("no recipe could be built at {x}: {last_err}"))
    }
}
