//! `mutagraph mutants`: writes the mutants the generator makes, without running them: the
//! input of the validity cross-check (every generated model must pass `onnx.checker` with
//! full, strict shape inference; `tests/python/checker_models.py`).
//!
//! The loop is the campaign's generation without backends: a pool of one model per seed, an
//! operator and a slot drawn per iteration from `--seed`, the mutant kept in its slot when it
//! grows the coverage (as the campaign's pool does), so that mutations build on mutations.
use crate::campaign::load_seeds;
use anyhow::{Context, Result, anyhow};
use mutagraph_ir::model::write_atomic;
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::coverage::Coverage;
use mutagraph_mutators::mutation::{Ctx, Limits, Outcome};
use mutagraph_mutators::operators;
use mutagraph_mutators::recipes::Recipes;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The arguments of `mutagraph mutants`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seeds: `zoo`, directories of .onnx files, or .onnx files.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub seeds: Vec<String>,
    /// How many mutants.
    #[arg(long, default_value_t = 1000)]
    pub count: usize,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output directory.
    #[arg(long)]
    pub out: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mutagraph mutants`.
pub fn main(a: Args, _g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args {
        seeds,
        count,
        seed,
        out,
        json,
    } = a;
    let w = run(&seeds, count, seed, &out)?;
    if json {
        crate::outln!(
            "{}",
            serde_json::json!({
                "out": out, "mutants": w.mutants, "iterations": w.iterations,
                "skipped": w.skipped, "refused": w.rejected
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!(
        "wrote {} mutants to {} ({} iterations, {} skipped, {} refused)",
        w.mutants,
        out.display(),
        w.iterations,
        w.skipped,
        w.rejected
    );
    Ok(ExitCode::SUCCESS)
}

/// What was written.
#[derive(Clone, Debug, Default)]
pub struct Written {
    /// Mutants written.
    pub mutants: usize,
    /// Iterations tried.
    pub iterations: usize,
    /// Operators that did not apply.
    pub skipped: usize,
    /// Operators whose edit the registry refused.
    pub rejected: usize,
}

/// Writes `count` mutants of `seeds` into `out` (`mutant-<n>.onnx`).
pub fn run(seeds: &[String], count: usize, seed: u64, out: &Path) -> Result<Written> {
    let seeds = load_seeds(seeds)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let opset = seeds
        .iter()
        .map(|s| s.model.default_opset())
        .min()
        .unwrap_or(17);
    let recipes = Recipes::for_opset(opset);
    let universe = Arc::new(
        recipes
            .universe()
            .map_err(|e| anyhow!("coverage universe: {e}"))?
            .params_at_opset(opset),
    );
    let mut coverage = Coverage::new(universe);
    for s in &seeds {
        coverage.add_model(&s.model);
    }
    let ops = operators::all();
    let limits = Limits::default();
    let mut pool: Vec<_> = seeds.iter().map(|s| s.model.clone()).collect();
    let mut rng = SplitMix64::new(seed);
    let mut w = Written::default();
    while w.mutants < count && w.iterations < count * 20 {
        w.iterations += 1;
        let slot = (rng.next_u64() % pool.len() as u64) as usize;
        let op = (rng.next_u64() % ops.len() as u64) as usize;
        let seed_nodes = seeds[slot].model.graph.node_count();
        if limits.grown_out(seed_nodes, pool[slot].graph.node_count()) {
            pool[slot] = seeds[slot].model.clone();
        }
        let slot_limits = limits.for_seed(seed_nodes);
        let mut model = pool[slot].clone();
        let mut mrng = SplitMix64::new(rng.next_u64());
        let outcome = {
            let mut ctx = Ctx {
                rng: &mut mrng,
                coverage: &coverage,
                recipes: &recipes,
                limits: &slot_limits,
            };
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ops[op].mutate(&mut model, &mut ctx)
            }))
            .unwrap_or_else(|_| Outcome::Rejected("panicked".into()))
        };
        match outcome {
            Outcome::Skipped(_) => w.skipped += 1,
            Outcome::Rejected(_) => w.rejected += 1,
            Outcome::Mutated(_) => {
                let bytes = model.to_bytes();
                let p = out.join(format!("mutant-{:05}-{}.onnx", w.mutants, ops[op].name()));
                write_atomic(&p, &bytes).with_context(|| format!("writing {}", p.display()))?;
                w.mutants += 1;
                if coverage.add_model(&model).is_diverse() {
                    let mut m = mutagraph_ir::Model::from_bytes(&bytes)
                        .map_err(|e| anyhow!("re-reading a mutant: {e}"))?;
                    mutagraph_ir::infer::infer_model(&mut m, Default::default());
                    pool[slot] = m;
                }
            }
        }
    }
    Ok(w)
}
