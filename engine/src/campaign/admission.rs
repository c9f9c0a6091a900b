//! Seed admission: before the campaign mutates anything, every seed runs once, unmutated, on
//! every backend, through the campaign's own triage.
//!
//! - Dynamic input dims get sizes the reference can run the seed at: `--free-dim` when the
//!   user gave one; else the sizes [`solve`] finds from the graph (one per symbol, the smallest
//!   every node accepts; selector inputs from the constants they are compared with), and
//!   should the reference not run it there, the smallest of [`SIZES`] for every dynamic dim
//!   that works (a dim named as a batch stays 1). Shapes and values the user gave
//!   (`--input-shape`, `--input-value`) are kept in every case.
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
use mutagraph_ir::solve::{Fixed, SolveError, solve};
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
    /// Input shapes by name (solved from the graph, or given; once admitted, those the inputs
    /// were generated at), which `free_dim` does not override.
    #[serde(default)]
    pub shapes: BTreeMap<String, Vec<usize>>,
    /// Inputs filled with one value (given, or the constant a selector is compared with).
    #[serde(default)]
    pub values: BTreeMap<String, f64>,
    /// Ranges of integer inputs that index a tensor.
    #[serde(default)]
    pub ranges: BTreeMap<String, (i64, i64)>,
    /// How the shapes were chosen, one line per symbol or input.
    #[serde(default)]
    pub why: Vec<String>,
    /// The slowest backend's time on the unmutated seed, ms (its mutants' time limit is
    /// scaled from it: [`Admitted::run_timeout`]).
    #[serde(default)]
    pub baseline_ms: f64,
    /// How many times slower than the others each backend was on the unmutated seed (its
    /// mutants' runs are slow only beyond that: [`MutantRuns::slow_baseline`]).
    #[serde(default)]
    pub slowness: BTreeMap<String, f64>,
    /// Findings the triage reported on the unmutated seed.
    pub findings: usize,
}

/// How many times the seed's own time a mutant's run may take before it is a hang.
pub const TIMEOUT_SCALE: f64 = 20.0;

impl Admitted {
    /// The time limit of a run of a mutant of this seed: `floor` (`--timeout`), or
    /// [`TIMEOUT_SCALE`] times the seed's slowest run when that is longer (a large model
    /// that takes seconds is not a hang at the small models' limit).
    pub fn run_timeout(&self, floor: std::time::Duration) -> std::time::Duration {
        floor.max(std::time::Duration::from_secs_f64(
            self.baseline_ms * TIMEOUT_SCALE / 1e3,
        ))
    }

    /// The input options of this seed.
    pub fn gen_options(&self) -> GenOptions {
        GenOptions {
            free_dim: self.free_dim,
            batch_dim: self.batch_one.then_some(1),
            shapes: self.shapes.clone(),
            values: self.values.clone(),
            ranges: self.ranges.clone(),
            ..GenOptions::default()
        }
    }
}

/// How the input sizes of a seed are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizing {
    /// Every dynamic dim (batches too) takes this size (`--free-dim`).
    Uniform(usize),
    /// Solved from the graph, then [`SIZES`] should the reference not run it there.
    Solved,
}

/// What `fixed` fixes that fits `model`: values of inputs it has, shapes that fit its inputs'
/// declared shapes (a campaign's seeds may share an input name at different ranks).
pub fn fixed_for(model: &mutagraph_ir::Model, fixed: &Fixed) -> Fixed {
    let names: Vec<String> = model
        .graph
        .real_inputs()
        .iter()
        .filter_map(|v| v.name.clone())
        .collect();
    Fixed {
        shapes: fixed
            .shapes
            .iter()
            .filter(|(k, v)| {
                names.contains(k) && {
                    let one = Fixed {
                        shapes: [((*k).clone(), (*v).clone())].into(),
                        ..Fixed::default()
                    };
                    solve(model, &one).is_ok()
                }
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        values: fixed
            .values
            .iter()
            .filter(|(k, _)| names.contains(k))
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
    }
}

/// The input choices tried for `seed`, in order; `Err` when what the user fixed does not fit
/// the seed.
pub fn candidates(seed: &Seed, sizing: Sizing, fixed: &Fixed) -> Result<Vec<Admitted>, SolveError> {
    let mine = fixed_for(&seed.model, fixed);
    let plan = solve(&seed.model, &mine)?;
    let uniform = |size: usize, batch_one: bool| Admitted {
        free_dim: size,
        batch_one,
        shapes: mine.shapes.clone(),
        values: plan.values.clone(),
        ranges: plan.ranges.clone(),
        why: vec![format!(
            "every dynamic dim {}= {size}",
            if batch_one {
                "not named as a batch "
            } else {
                ""
            }
        )],
        baseline_ms: 0.0,
        slowness: BTreeMap::new(),
        findings: 0,
    };
    Ok(match sizing {
        Sizing::Uniform(n) => vec![uniform(n, false)],
        Sizing::Solved => {
            let mut v = vec![Admitted {
                free_dim: 1,
                batch_one: true,
                shapes: plan.shapes.clone(),
                values: plan.values.clone(),
                ranges: plan.ranges.clone(),
                why: plan.why.clone(),
                baseline_ms: 0.0,
                slowness: BTreeMap::new(),
                findings: 0,
            }];
            v.extend(SIZES.iter().map(|&s| uniform(s, true)));
            v
        }
    })
}

/// The sizes tried, in order, for the dynamic dims of a seed when `--free-dim` is not given.
pub const SIZES: &[usize] = &[1, 2, 4, 8, 16, 32, 64, 128, 224];

/// One seed's run, admitted.
pub struct SeedRun {
    /// The model that ran: the seed as the user gave it (reduced), dynamic dims and all.
    pub bytes: Vec<u8>,
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

/// Finds input sizes the reference runs `seed` at (the first of [`candidates`] that works),
/// then runs it once on every backend (`pools[i]` runs `backends[i]`), judges the runs with
/// `stage` (its extra runs on `triage`), and decides.
#[allow(clippy::too_many_arguments)]
pub fn admit(
    seed: &Seed,
    backends: &[String],
    reference: Option<usize>,
    pools: &mut [Vec<Pool>],
    stage: &mut Triage,
    triage: &mut Pool,
    input_seed: u64,
    sizing: Sizing,
    fixed: &Fixed,
) -> Admission {
    let bytes = seed.model.to_bytes();
    let tries = match candidates(seed, sizing, fixed) {
        Ok(c) => c,
        Err(e) => return Admission::Refused(e.to_string()),
    };
    let mut why = String::from("no size to try");
    let mut first_why = None;
    let mut found = None;
    let mut tried: Vec<String> = Vec::new();
    for chosen in tries {
        let inputs = match inputs::generate(&seed.model, input_seed, &chosen.gen_options()) {
            Ok(v) => v,
            Err(e) => {
                why = format!("its inputs cannot be generated: {e}");
                continue;
            }
        };
        // Sizes that give the same inputs as an earlier try are not run again.
        let key = shapes(&inputs);
        if tried.contains(&key) {
            continue;
        }
        tried.push(key);
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
                first_why.get_or_insert_with(|| why.clone());
            }
            Err(e) => {
                return Admission::Refused(format!("the reference could not be started: {e}"));
            }
        }
    }
    let Some((mut chosen, inputs, mut reference_run)) = found else {
        if tried.len() > 1 {
            // The solved shapes first, then every size for every dynamic dim.
            let first = first_why.unwrap_or_default();
            why =
                format!("{first}; nor at any of the sizes {SIZES:?} for its dynamic dims ({why})");
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
    chosen.baseline_ms = runs.iter().map(|r| r.wall_ms).fold(0.0, f64::max);
    // The shapes the inputs were generated at, whichever way they were chosen: its mutants are
    // made from the seed with these shapes declared ([`mutagraph_ir::solve::concretize`]).
    chosen.shapes = inputs
        .iter()
        .filter_map(|(n, v)| Some((n.clone(), v.tensor()?.shape.clone())))
        .collect();
    let mr = MutantRuns {
        runs,
        reference,
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    chosen.slowness = mutagraph_oracles::checks::slowness(&mr)
        .into_iter()
        .map(|(b, ratio, _)| (b, ratio))
        .collect();
    let judged = stage.judge(triage, &bytes, &inputs, &mr);
    chosen.findings = judged
        .iter()
        .filter(|t| t.verdict == Verdict::Report)
        .count();
    Admission::Admitted(Box::new(SeedRun {
        bytes,
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
        "seed {name}: not mutated: {why}. Give the shapes and values its inputs need with \
         `--input-shape NAME:1x3x224x224` and `--input-value NAME=16000` (try them with \
         `mutagraph run MODEL --input-shape ...`; `mutagraph inspect MODEL` shows the shapes \
         solved from the graph and why)"
    )
}
