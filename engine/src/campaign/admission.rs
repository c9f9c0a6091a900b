//! Seed admission: before the campaign mutates anything, every seed runs once, unmutated and as
//! the user gave it (byte for byte), on every backend, through the campaign's own triage.
//!
//! - Dynamic input dims get representative sizes the reference can run the seed at:
//!   `--free-dim` when the user gave one; else the sizes [`solve`] finds from the graph (the
//!   model's metadata first, then the smallest valid size at or above each dim's floor: an
//!   image's side at least 64, a sequence at least 16, a batch 1), and should the reference
//!   not run it there, the sizes of [`SIZES`] for every dynamic dim, most representative first
//!   (a dim named as a batch stays 1). Shapes and values the user gave (`--input-shape`,
//!   `--input-value`) are kept in every case. Inputs at which more than [`MAX_NONFINITE`] of
//!   the reference's output elements are NaN or Inf test nothing: other sizes and values are
//!   tried ([`choose`], which `run` and `consistency` use too, so that all of them run a
//!   model the same way).
//! - A seed the reference cannot run at any of them is not mutated: every mutant of it would
//!   fail the same way, and the failures of the libraries on it would be the seed's, not bugs.
//!   The user is told why and what to change.
//! - A library bug on the unmutated seed is a **seed finding**, the most valuable kind (a bug
//!   on the user's own model): it is filed once, as iteration 0 with an empty trace and the
//!   user's file as `original.onnx`, before any mutant runs, so the mutants that still show it
//!   count as its hits instead of new bundles.
//! - Seeds derived from an admitted seed (reduced, windows of a heavy model:
//!   [`super::derive`]) run once on every backend too, only to learn their baselines; what they
//!   show is a mutant's finding, never a seed finding.
//!
//! What admission decided is kept in `admission.json` in the output directory, and printed: a
//! resumed campaign reads it instead of running the seeds again, so its seed list cannot change.
use super::Seed;
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Pool, RunReport};
use mutagraph_ir::solve::{Fixed, SolveError, solve};
use mutagraph_oracles::triage::{Triage, Triaged, Verdict};
use mutagraph_oracles::{Mutant, MutantRuns};
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
    /// Seeds derived from the admitted ones, in the order they were made.
    #[serde(default)]
    pub derived: Vec<Derived>,
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
    /// The range float inputs were drawn from, when not the default [-1, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub float_range: Option<(f64, f64)>,
    /// Each backend's outcome on the unmutated seed: `ok`, or the status and its detail.
    #[serde(default)]
    pub outcomes: BTreeMap<String, String>,
    /// Share of the reference's output elements that are NaN or Inf, percent.
    #[serde(default)]
    pub nonfinite_percent: f64,
    /// Whether the seed itself is mutated (a heavy seed with derived seeds is not: its
    /// derived seeds are).
    #[serde(default = "yes")]
    pub mutated: bool,
    /// Why the reference cannot run it, when it cannot (an op it lacks) but a library does:
    /// then the seed and its mutants that keep such an op are judged by peers (the triage's
    /// weaker oracle: ONNX Runtime without its optimizer as the ground truth, findings marked
    /// so), and its windows without the ops the reference lacks are judged by the reference,
    /// fed the values that library computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_failed: Option<String>,
    /// What a run of it costs, from its graph alone (`derive::work`): above
    /// `derive::HEAVY_WORK` it is heavy.
    #[serde(default)]
    pub work: u64,
    /// The seeds derived from it that are mutated, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<String>,
}

fn yes() -> bool {
    true
}

/// A seed derived from an admitted one, as saved in [`FILE`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Its name: the seed's, with `#reduced` or `#window-K`.
    pub name: String,
    /// The seed it was derived from.
    pub from: String,
    /// Its file under `seeds/`.
    pub file: String,
    /// How it was made, in words.
    pub how: String,
    /// Ops of the seed, and of this model.
    pub nodes: (usize, usize),
    /// Op types the seed has more of, with how many fewer this model has.
    #[serde(default)]
    pub dropped: BTreeMap<String, usize>,
    /// The derived seed it was made from, when not the user's seed itself (`#small`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<String>,
    /// The seed's nodes it holds (a window: the region of the user's model), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub region: Vec<String>,
    /// Its inputs, captured from the seed's own run (a window), as a file under `seeds/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_file: Option<String>,
    /// Its run on every backend, when it is mutated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted: Option<Admitted>,
    /// Why it is not mutated, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_used: Option<String>,
    /// Whether the campaign keeps it (mutated, or the basis of other derived seeds), its
    /// file under `seeds/`.
    #[serde(default)]
    pub kept: bool,
}

impl Derived {
    /// What its findings say of where it came from.
    pub fn origin(&self) -> crate::bundle::DerivedFrom {
        crate::bundle::DerivedFrom {
            seed: self.from.clone(),
            how: self.how.clone(),
            region: self.region.clone(),
            basis: self.basis.clone(),
        }
    }
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
            float_range: self
                .float_range
                .unwrap_or(GenOptions::default().float_range),
            ..GenOptions::default()
        }
    }

    /// One line: the shapes and values its inputs were given, and each backend's outcome.
    pub fn summary(&self) -> String {
        let shapes: Vec<String> = self
            .shapes
            .iter()
            .map(|(n, s)| {
                let dims: Vec<String> = s.iter().map(|d| d.to_string()).collect();
                format!("{n}[{}]", dims.join(","))
            })
            .chain(self.values.iter().map(|(n, v)| format!("{n}={v}")))
            .collect();
        let outcomes: Vec<String> = self
            .outcomes
            .iter()
            .map(|(b, o)| format!("{b} {}", o.split(':').next().unwrap_or(o)))
            .collect();
        format!("{}; {}", shapes.join(" "), outcomes.join(", "))
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
pub fn candidates(
    model: &mutagraph_ir::Model,
    sizing: Sizing,
    fixed: &Fixed,
) -> Result<Vec<Admitted>, SolveError> {
    let mine = fixed_for(model, fixed);
    let plan = solve(model, &mine)?;
    let uniform = |size: usize, batch_one: bool| Admitted {
        mutated: true,
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
        ..Admitted::default()
    };
    Ok(match sizing {
        Sizing::Uniform(n) => vec![uniform(n, false)],
        Sizing::Solved => {
            let mut v = vec![Admitted {
                mutated: true,
                free_dim: 1,
                batch_one: true,
                shapes: plan.shapes.clone(),
                values: plan.values.clone(),
                ranges: plan.ranges.clone(),
                why: plan.why.clone(),
                ..Admitted::default()
            }];
            v.extend(SIZES.iter().map(|&s| uniform(s, true)));
            v
        }
    })
}

/// The sizes tried, in order, for every dynamic dim of a seed when the solved sizes do not run
/// and `--free-dim` is not given: the most representative first, degenerate ones last.
pub const SIZES: &[usize] = &[64, 32, 128, 224, 16, 8, 4, 2, 1];

/// The most a chosen input may make the reference's outputs NaN or Inf (a share of their
/// elements): beyond, the seed computes nothing testable there.
pub const MAX_NONFINITE: f64 = 0.10;

/// The float ranges tried at each size, in order: the default, then non-negative values (an
/// image's pixels; a log or a square root downstream).
const FLOAT_RANGES: &[Option<(f64, f64)>] = &[None, Some((0.0, 1.0))];

/// The share of the elements of the float outputs in `outputs` that are NaN or Inf.
pub fn nonfinite_share(outputs: &NamedValues) -> f64 {
    let (mut bad, mut all) = (0usize, 0usize);
    for (_, v) in outputs {
        if let Some(x) = v
            .tensor()
            .filter(|t| t.dtype.is_float())
            .and_then(|t| t.to_f64s())
        {
            all += x.len();
            bad += x.iter().filter(|e| !e.is_finite()).count();
        }
    }
    if all == 0 {
        0.0
    } else {
        bad as f64 / all as f64
    }
}

/// Runs the reference on some inputs ([`choose`]); `Err` when it cannot be started.
pub type RunReference<'a> = dyn FnMut(&NamedValues) -> Result<RunReport, String> + 'a;

/// The inputs chosen for a model ([`choose`]).
pub struct Choice {
    /// How they were chosen.
    pub chosen: Admitted,
    /// The inputs.
    pub inputs: NamedValues,
    /// The reference's run at them, when it ran there.
    pub reference: Option<RunReport>,
    /// Why the reference runs the model at none of the inputs tried (then `inputs` are the
    /// first ones generated).
    pub refused: Option<String>,
}

/// Chooses the inputs of `model`, as every command that generates inputs does: the first of
/// [`candidates`] (each with the ranges of [`FLOAT_RANGES`]) at which `reference` (when given)
/// runs the model with at most [`MAX_NONFINITE`] of its outputs NaN or Inf. `Err` when no input
/// can be generated at all, or `reference` cannot be started.
pub fn choose(
    model: &mutagraph_ir::Model,
    sizing: Sizing,
    fixed: &Fixed,
    input_seed: u64,
    mut reference: Option<&mut RunReference>,
) -> Result<Choice, String> {
    let tries = candidates(model, sizing, fixed).map_err(|e| e.to_string())?;
    let mut why = String::from("no size to try");
    let mut first: Option<(Admitted, NamedValues, String)> = None;
    let mut tried: Vec<String> = Vec::new();
    for (shape_try, range) in tries
        .into_iter()
        .flat_map(|c| FLOAT_RANGES.iter().map(move |r| (c.clone(), *r)))
    {
        let mut chosen = shape_try;
        chosen.float_range = range;
        let inputs = match inputs::generate(model, input_seed, &chosen.gen_options()) {
            Ok(v) => v,
            Err(e) => {
                why = format!("its inputs cannot be generated: {e}");
                continue;
            }
        };
        // Sizes and values that give the same inputs as an earlier try are not run again.
        let key = format!("{} {range:?}", shapes(&inputs));
        if tried.contains(&key) {
            continue;
        }
        tried.push(key);
        let Some(run_reference) = reference.as_deref_mut() else {
            return Ok(Choice {
                chosen,
                inputs,
                reference: None,
                refused: None,
            });
        };
        let run = run_reference(&inputs)?;
        let problem = match run.outcome.outputs() {
            Some(out) => {
                let share = nonfinite_share(out);
                chosen.nonfinite_percent = 100.0 * share;
                if share <= MAX_NONFINITE {
                    return Ok(Choice {
                        chosen,
                        inputs,
                        reference: Some(run),
                        refused: None,
                    });
                }
                format!(
                    "{:.0} % of the reference's output elements are NaN or Inf at {}",
                    100.0 * share,
                    shapes(&inputs)
                )
            }
            None => format!(
                "the reference cannot run it at the generated inputs ({}): {}, {}",
                shapes(&inputs),
                run.outcome.status(),
                run.outcome.detail()
            ),
        };
        why = problem.clone();
        if first.is_none() {
            first = Some((chosen, inputs, problem));
        }
    }
    let Some((chosen, inputs, first_why)) = first else {
        return Err(why);
    };
    let refused = if tried.len() > 1 {
        format!("{first_why}; nor at any other size of {SIZES:?} or value range tried ({why})")
    } else {
        first_why
    };
    Ok(Choice {
        chosen,
        inputs,
        reference: None,
        refused: Some(refused),
    })
}

/// Each backend's outcome in one line: `ok`, or its status and detail.
pub fn outcome_line(run: &RunReport) -> String {
    match run.outcome.outputs() {
        Some(_) => "ok".to_string(),
        None => {
            let d = run.outcome.detail();
            let d: String = d
                .lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(160)
                .collect();
            format!("{}: {d}", run.outcome.status())
        }
    }
}

/// Runs `bytes` on every backend (`pools[i]` runs `backends[i]`), with the reference's run
/// already made kept; `Err` names a backend whose worker cannot start.
pub fn run_everywhere(
    backends: &[String],
    pools: &mut [Vec<Pool>],
    bytes: &[u8],
    inputs: &NamedValues,
    mut kept: Option<(usize, RunReport)>,
) -> Result<Vec<RunReport>, String> {
    let mut runs: Vec<RunReport> = Vec::new();
    for (i, (b, lanes)) in backends.iter().zip(pools.iter_mut()).enumerate() {
        if let Some((k, r)) = kept.take() {
            if k == i {
                runs.push(r);
                continue;
            }
            kept = Some((k, r));
        }
        match lanes[0].run(b, bytes, inputs) {
            Ok(r) => runs.push(r),
            Err(e) => return Err(format!("backend {b} could not be started: {e}")),
        }
    }
    Ok(runs)
}

/// What a seed's runs at admission teach its mutants: the slowest run, how much slower each
/// backend is, and each backend's outcome.
pub fn baselines(chosen: &mut Admitted, mr: &MutantRuns, inputs: &NamedValues) {
    chosen.baseline_ms = mr.runs.iter().map(|r| r.wall_ms).fold(0.0, f64::max);
    // The shapes the inputs were generated at, whichever way they were chosen: its mutants are
    // made from the seed with these shapes declared ([`mutagraph_ir::solve::concretize`]).
    chosen.shapes = inputs
        .iter()
        .filter_map(|(n, v)| Some((n.clone(), v.tensor()?.shape.clone())))
        .collect();
    chosen.slowness = mutagraph_oracles::checks::slowness(mr)
        .into_iter()
        .map(|(b, ratio, _)| (b, ratio))
        .collect();
    chosen.outcomes = mr
        .runs
        .iter()
        .map(|r| (r.backend.clone(), outcome_line(r)))
        .collect();
}

/// One seed's run, admitted.
pub struct SeedRun {
    /// The model that ran: the seed as the user gave it, byte for byte, dynamic dims and all.
    pub model: Mutant,
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

/// Chooses the inputs of `seed` ([`choose`]), runs the seed as the user gave it once on every
/// backend (`pools[i]` runs `backends[i]`), judges the runs with `stage` (its extra runs on
/// `triage`), and decides.
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
    let bytes = seed.given.clone().unwrap_or_else(|| seed.model.to_bytes());
    let choice = match reference {
        Some(r) => {
            let mut run_ref = |inputs: &NamedValues| {
                pools[r][0]
                    .run(&backends[r], &bytes, inputs)
                    .map_err(|e| format!("the reference could not be started: {e}"))
            };
            choose(&seed.model, sizing, fixed, input_seed, Some(&mut run_ref))
        }
        None => choose(&seed.model, sizing, fixed, input_seed, None),
    };
    let choice = match choice {
        Ok(c) => c,
        Err(why) => return Admission::Refused(why),
    };
    let Choice {
        mut chosen,
        inputs,
        reference: reference_run,
        refused,
    } = choice;
    let kept = reference.zip(reference_run);
    let model = Mutant::new(bytes);
    let runs = match run_everywhere(backends, pools, model.bytes(), &inputs, kept) {
        Ok(r) => r,
        Err(why) => return Admission::Refused(why),
    };
    if let Some(why) = refused {
        // A library runs what the reference lacks an op for: its windows can be judged.
        let lacks = why.contains("): unsupported, ");
        let ran = runs
            .iter()
            .enumerate()
            .any(|(i, r)| Some(i) != reference && r.outcome.outputs().is_some());
        if !(lacks && ran) {
            return Admission::Refused(why);
        }
        chosen.reference_failed = Some(why);
    }
    let mr = MutantRuns {
        runs,
        reference,
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    baselines(&mut chosen, &mr, &inputs);
    // Without the reference (an op it lacks) the triage judges the seed by peers.
    let judged = stage.judge_mutant(triage, &model, &inputs, &mr);
    chosen.findings = judged
        .iter()
        .filter(|t| t.verdict == Verdict::Report)
        .count();
    Admission::Admitted(Box::new(SeedRun {
        model,
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
