//! PPlant (OATest's pattern planting): puts one pattern of [`crate::patterns`] — the
//! subgraph a graph optimizer's rewrite matches, or a near miss of it — in the place of a
//! value of the model, so the optimizer meets its patterns in contexts nobody tested.
use crate::ir::Model;
use crate::mutation::{Ctx, Family, Mutator, Outcome, commit};
use crate::operators::common::{node_room, pick_value};
use crate::patterns::{Knobs, library};
use crate::site::Site;

/// Optimizer pattern planting.
pub struct PatternPlanting;

/// A pattern or its near miss: how often a near miss is built.
const NEAR_MISS: f64 = 0.25;

impl Mutator for PatternPlanting {
    fn name(&self) -> &'static str {
        "PPlant"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "plant a subgraph an optimizer rewrites (GELU, LayerNorm, MatMul/Conv fusions, QDQ, ...) or a near miss of it in place of a value"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(room) = node_room(model, ctx.limits) else {
            return Outcome::Skipped("model at the node limit".into());
        };
        let lib = library();
        let Some((x, t)) = pick_value(model, ctx, |_, t| lib.iter().any(|p| p.accepts(t))) else {
            return Outcome::Skipped("no value a pattern can follow".into());
        };
        let fits: Vec<usize> = (0..lib.len()).filter(|&i| lib[i].accepts(&t)).collect();
        let p = &lib[fits[ctx.below(fits.len())]];
        let near_miss = ctx.chance(NEAR_MISS);
        let (patch, missed) = {
            let mut site = Site::new(model, ctx.rng, ctx.limits);
            let mut k = Knobs {
                rng: ctx.rng,
                near_miss,
                missed: None,
            };
            let y = match (p.build)(&mut site, &x, &t, &mut k) {
                Ok(y) => y,
                Err(e) => return Outcome::Skipped(format!("{}: {e}", p.name)),
            };
            if site.added_nodes() > room {
                return Outcome::Skipped(format!("{} does not fit the node limit", p.name));
            }
            site.reroute(&x, &y);
            (site.into_patch(), k.missed)
        };
        let summary = match missed {
            Some(m) => format!(
                "planted a near miss of {} ({m}; for {}) at {x}",
                p.name,
                p.rewrites.join(", ")
            ),
            None => format!("planted {} (for {}) at {x}", p.name, p.rewrites.join(", ")),
        };
        commit(model, self.name(), summary, &patch)
    }
}
