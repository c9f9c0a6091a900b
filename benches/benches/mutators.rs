//! Mutations per second per operator, seed selection (MCMC and random) and the coverage
//! update, on zoo models.
//!
//! `cargo bench -p mutagraph-benches --bench mutators`
use criterion::{Criterion, criterion_group, criterion_main};
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::coverage::Coverage;
use mutagraph_mutators::mutation::{Ctx, Limits};
use mutagraph_mutators::operators;
use mutagraph_mutators::recipes::Recipes;
use mutagraph_mutators::zoo;
use std::hint::black_box;
use std::sync::Arc;

/// The models mutated: a plain CNN, a residual CNN and the transformer block.
const MODELS: &[&str] = &["lenet5", "resnet_basic", "transformer_encoder"];

fn mutate(c: &mut Criterion) {
    let recipes = Recipes::builtin();
    let universe = Arc::new(recipes.universe().unwrap());
    let coverage = Coverage::new(universe);
    let limits = Limits::default();
    let seeds: Vec<_> = MODELS.iter().map(|n| zoo::build(n).unwrap()).collect();
    let mut g = c.benchmark_group("mutate");
    for op in operators::all() {
        let mut rng = SplitMix64::new(1);
        let mut i = 0usize;
        g.bench_function(op.name(), |b| {
            b.iter(|| {
                let mut m = seeds[i % seeds.len()].clone();
                i += 1;
                let mut ctx = Ctx {
                    rng: &mut rng,
                    coverage: &coverage,
                    recipes: &recipes,
                    limits: &limits,
                };
                black_box(op.mutate(&mut m, &mut ctx));
                m
            })
        });
    }
    g.finish();
}

fn coverage(c: &mut Criterion) {
    let recipes = Recipes::builtin();
    let universe = Arc::new(recipes.universe().unwrap());
    let models: Vec<_> = zoo::all().into_iter().map(|(_, m)| m).collect();
    let mut g = c.benchmark_group("coverage");
    g.bench_function("novelty-zoo-model", |b| {
        let cov = Coverage::new(universe.clone());
        let mut i = 0usize;
        b.iter(|| {
            i += 1;
            black_box(cov.novelty(&models[i % models.len()]))
        })
    });
    g.bench_function("add-zoo-model", |b| {
        let mut cov = Coverage::new(universe.clone());
        let mut i = 0usize;
        b.iter(|| {
            i += 1;
            black_box(cov.add_model(&models[i % models.len()]))
        })
    });
    g.finish();
}

fn select(c: &mut Criterion) {
    use mutagraph_engine::campaign::mcmc::{Mcmc, RandomSearch, Scheduler, SeedStats};
    // A zoo campaign's seed space: 12 models × 21 operators, with some history.
    let mut g = c.benchmark_group("select");
    for (name, sched) in [
        (
            "mcmc-252-seeds",
            Box::new(Mcmc { p: 0.02 }) as Box<dyn Scheduler>,
        ),
        ("random-252-seeds", Box::new(RandomSearch)),
    ] {
        let mut stats = SeedStats::new(12, 21);
        let mut rng = SplitMix64::new(3);
        for i in 0..2000usize {
            let s = sched.select(&mut stats, &mut rng);
            if i % 7 == 0 {
                stats.record_diverse(s);
            }
        }
        g.bench_function(name, |b| {
            b.iter(|| black_box(sched.select(&mut stats, &mut rng)))
        });
    }
    g.finish();
}

criterion_group!(benches, mutate, select, coverage);
criterion_main!(benches);
