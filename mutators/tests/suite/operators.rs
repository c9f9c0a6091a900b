//! Every operator on every zoo model: mutants validate, records replay to the same bytes.
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::coverage::Coverage;
use mutagraph_mutators::mutation::{Ctx, Limits, Outcome, replay_trace};
use mutagraph_mutators::operators;
use mutagraph_mutators::recipes::Recipes;
use mutagraph_mutators::zoo;

#[test]
fn every_operator_yields_valid_replayable_mutants() {
    let recipes = Recipes::builtin();
    let universe = std::sync::Arc::new(recipes.universe().unwrap());
    let coverage = Coverage::new(universe);
    let limits = Limits::default();
    let mut rng = SplitMix64::new(42);
    for op in operators::all() {
        let (mut mutated, mut rejected) = (0, 0);
        for name in zoo::names() {
            let seed = zoo::build(name).unwrap();
            let mut model = seed.clone();
            let mut trace = Vec::new();
            for _ in 0..3 {
                let mut ctx = Ctx {
                    rng: &mut rng,
                    coverage: &coverage,
                    recipes: &recipes,
                    limits: &limits,
                };
                match op.mutate(&mut model, &mut ctx) {
                    Outcome::Mutated(r) => {
                        mutated += 1;
                        mutagraph_mutators::ir::validate::validate(&model).unwrap();
                        trace.push(r);
                    }
                    Outcome::Rejected(e) => {
                        rejected += 1;
                        eprintln!("{} rejected on {name}: {e}", op.name());
                    }
                    Outcome::Skipped(_) => {}
                }
            }
            let (replayed, skipped) = replay_trace(&seed, &trace, |_| true);
            assert!(
                skipped.is_empty(),
                "{}: replay skipped {skipped:?}",
                op.name()
            );
            assert_eq!(
                replayed.to_bytes(),
                model.to_bytes(),
                "{} on {name}",
                op.name()
            );
        }
        assert!(mutated > 0, "{} never mutated a zoo model", op.name());
        assert_eq!(rejected, 0, "{} built invalid edits", op.name());
    }
}
