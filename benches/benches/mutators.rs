//! Mutations per second per operator, and the coverage update, on zoo models.
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

criterion_group!(benches, mutate, coverage);
criterion_main!(benches);
