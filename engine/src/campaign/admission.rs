//! Seed admission: before the campaign mutates anything, every seed runs once, unmutated, on
//! every backend, through the campaign's own triage.
//!
//! - Dynamic input dims get a size the reference can run the seed at: `--free-dim` when the
//!   user gave one, else the smallest of [`SIZES`] that works (a dim named as a batch stays 1).
//! - A seed the reference cannot run at any of them is not mutated: every mutant of it would
//!   fail the same way, and the failures of the libraries on it would be the seed's, not bugs.
//!   The user is told why and what to change.
//! - A library bug on the unmutated seed is a **seed finding**, the most valuable kind (a bug
//!   on the user's own model): it is filed once, as iteration 0 with an empty trace, before any
//!   mutant runs, so the mutants that still show it count as its hits instead of new bundles.
//!
//! What admission decided is kept in `admission.json` in the output directory: a resumed
//! campaign reads it instead of running the seeds again, so its seed list cannot change.
use super::Seed;
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Pool, RunReport};
use mutagraph_oracles::MutantRuns;
use mutagraph_oracles::triage::{Triage, Triaged, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The file admission writes in the output directory.
pub const FILE: &str = "admission.json";

/// What admission decided, as saved in [`FILE`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Decisions {
    /// Seeds not mutated, by name, with the reason.
    pub refused: BTreeMap<String, String>,
    /// Seeds admitted, by name.
    pub admitted: BTreeMap<String, Admitted>,
}

/// What admission chose for a seed it admitted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Admitted {
    /// The size its dynamic input dims are generated at (a dim named as a batch: 1 when the
    /// size was searched).
    pub free_dim: usize,
    /// Whether batch-named dims stay 1.
    pub batch_one: bool,
    /// Findings the triage reported on the unmutated seed.
    pub findings: usize,
}

impl Admitted {
    /// The input options of this seed.
    pub fn gen_options(&self) -> GenOptions {
        GenOptions {
            free_dim: self.free_dim,
            batch_dim: self.batch_one.then_some(1),
            ..GenOptions::default()
        }
    }
}

/// The sizes tried, in order, for the dynamic dims of a seed when `--free-dim` is not given.
pub const SIZES: &[usize] = &[1, 2, 4, 8, 16, 32, 64, 128, 224];

/// One seed's run, admitted.
pub struct SeedRun {
    /// Its inputs.
    pub inputs: NamedValues,
    /// The seed the inputs were generated from.
    pub input_seed: u64,
    /// The runs on every backend.
    pub runs: MutantRuns,
    /// The input options chosen.
    pub chosen: Admitted,
    /// Every finding of the triage on the unmutated seed, with its verdict.
    pub judged: Vec<Triaged>,
}

/// Admission of one seed.
pub enum Admission {
    /// Mutated; with what its own run reported.
    Admitted(Box<SeedRun>),
    /// Not mutated, and why.
    Refused(String),
}

/// Finds input sizes the reference runs `seed` at (`sizes` in order; `batch_one`: batch-named
/// dims stay 1), then runs it once on every backend (`pools[i]` runs `backends[i]`), judges the
/// runs with `stage` (its extra runs on `triage`), and decides.
#[allow(clippy::too_many_arguments)]
pub fn admit(
    seed: &Seed,
    backends: &[String],
    reference: Option<usize>,
    pools: &mut [Vec<Pool>],
    stage: &mut Triage,
    triage: &mut Pool,
    input_seed: u64,
    sizes: &[usize],
    batch_one: bool,
) -> Admission {
    let bytes = seed.model.to_bytes();
    let mut why = String::from("no size to try");
    let mut found = None;
    for &size in sizes {
        let chosen = Admitted {
            free_dim: size,
            batch_one,
            findings: 0,
        };
        let inputs = match inputs::generate(&seed.model, input_seed, &chosen.gen_options()) {
            Ok(v) => v,
            Err(e) => {
                why = format!("its inputs cannot be generated: {e}");
                continue;
            }
        };
        let Some(r) = reference else {
            found = Some((chosen, inputs, None));
            break;
        };
        match pools[r][0].run(&backends[r], &bytes, &inputs) {
            Ok(run) if run.outcome.outputs().is_some() => {
                found = Some((chosen, inputs, Some(run)));
                break;
            }
            Ok(run) => {
                why = format!(
                    "the reference cannot run it at the generated inputs ({}): {}",
                    shapes(&inputs),
                    run.outcome.detail()
                );
            }
            Err(e) => {
                return Admission::Refused(format!("the reference could not be started: {e}"));
            }
        }
    }
    let Some((mut chosen, inputs, mut reference_run)) = found else {
        if sizes.len() > 1 {
            why = format!("{why} (sizes tried for its dynamic dims: {sizes:?})");
        }
        return Admission::Refused(why);
    };
    // The reference's run at the chosen size is kept; the others run now.
    let mut runs: Vec<RunReport> = Vec::new();
    for (i, (b, lanes)) in backends.iter().zip(pools.iter_mut()).enumerate() {
        if Some(i) == reference
            && let Some(r) = reference_run.take()
        {
            runs.push(r);
            continue;
        }
        match lanes[0].run(b, &bytes, &inputs) {
            Ok(r) => runs.push(r),
            Err(e) => return Admission::Refused(format!("backend {b} could not be started: {e}")),
        }
    }
    let mr = MutantRuns {
        runs,
        reference,
        reruns: Vec::new(),
    };
    let judged = stage.judge(triage, &bytes, &inputs, &mr);
    chosen.findings = judged
        .iter()
        .filter(|t| t.verdict == Verdict::Report)
        .count();
    Admission::Admitted(Box::new(SeedRun {
        inputs,
        input_seed,
        runs: mr,
        chosen,
        judged,
    }))
}

/// `x[1,3,8,8], ids[1,4]`: the shapes the inputs were given.
fn shapes(inputs: &NamedValues) -> String {
    inputs
        .iter()
        .map(|(n, v)| match v.tensor() {
            Some(t) => format!(
                "{n}[{}]",
                t.shape
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            None => n.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What to tell the user about a refused seed: the reason and what to change.
pub fn advice(name: &str, why: &str) -> String {
    format!(
        "seed {name}: not mutated: {why}. Try `mutagraph run {name} --free-dim N` (or \
         `--inputs DIR`) to find input sizes the model accepts, then start the campaign with \
         --free-dim N"
    )
}
