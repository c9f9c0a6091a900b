//! The seeds' intake: every seed the user gave is admitted as given ([`admission`]), seeds are
//! derived from the admitted ones ([`derive`]), and what the campaign will mutate is decided:
//! the pool's seeds, each with how its mutants' inputs are made. All of it is recorded in
//! `admission.json` and printed; a resumed campaign reads the record instead.
use super::admission::{self, Admission, Admitted, Decisions, SeedRun, Sizing};
use super::derive::{self, Candidate, HEAVY_WORK, work};
use super::{Config, Seed, mix, seeds::typed, write_json};
use anyhow::{Context, Result, anyhow, bail};
use mutagraph_backends::inputs::GenOptions;
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_backends::worker::Pool;
use mutagraph_ir::Model;
use mutagraph_oracles::triage::Triage;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Tensors a seed's inputs always take (a window's captured values), by input name.
pub type Tensors = Arc<BTreeMap<String, HostTensor>>;

/// What the intake decided.
pub(super) struct Intake {
    /// Every seed: the admitted seeds as given (with their admitted shapes declared), then
    /// the derived seeds that are used.
    pub seeds: Vec<Seed>,
    /// How each seed's inputs are made.
    pub plans: Vec<(Admitted, Tensors)>,
    /// The seeds the campaign mutates (indices into `seeds`), in pool order.
    pub mutated: Vec<usize>,
    /// The admitted seeds' own runs (index into `seeds`), whose findings are seed findings.
    pub seed_runs: Vec<(usize, SeedRun)>,
    /// Seeds not admitted, with the reason.
    pub refused: BTreeMap<String, String>,
}

/// The resources of the intake's runs.
pub(super) struct Runs<'a> {
    pub pools: &'a mut [Vec<Pool>],
    pub stage: &'a mut Triage,
    pub triage: &'a mut Pool,
    pub reference: Option<usize>,
}

/// Admits `given` and derives seeds from them (a fresh campaign), or reads what a
/// campaign in `out` decided before.
pub(super) fn intake(
    out: &Path,
    config: &Config,
    given: Vec<Seed>,
    runs: Runs,
    quiet: bool,
) -> Result<Intake> {
    let path = out.join(admission::FILE);
    if path.exists() {
        let text = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let d: Decisions =
            serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))?;
        return resumed(out, given, d);
    }
    let (intake, decisions) = fresh(out, config, given, runs)?;
    write_json(&path, &decisions)?;
    if !quiet {
        for line in summary(&decisions) {
            eprintln!("{line}");
        }
    }
    Ok(intake)
}

fn fresh(out: &Path, config: &Config, given: Vec<Seed>, runs: Runs) -> Result<(Intake, Decisions)> {
    let Runs {
        pools,
        stage,
        triage,
        reference,
    } = runs;
    let sizing = match config.free_dim {
        Some(n) => Sizing::Uniform(n),
        None => Sizing::Solved,
    };
    let seeds_dir = out.join("seeds");
    std::fs::create_dir_all(&seeds_dir)
        .with_context(|| format!("creating {}", seeds_dir.display()))?;
    let mut d = Decisions::default();
    let mut it = Intake {
        seeds: Vec::new(),
        plans: Vec::new(),
        mutated: Vec::new(),
        seed_runs: Vec::new(),
        refused: BTreeMap::new(),
    };
    let mut derived: Vec<(Candidate, Admitted, Tensors, bool)> = Vec::new();
    for (i, s) in given.into_iter().enumerate() {
        if crate::interrupt::requested() {
            bail!(
                "stopped during seed admission; nothing was written (run the command again to start)"
            );
        }
        let input_seed = mix(config.seed, i as u64, 7);
        let b = &config.backends;
        let run = match admission::admit(
            &s,
            b,
            reference,
            pools,
            stage,
            triage,
            input_seed,
            sizing,
            &config.fixed,
        ) {
            Admission::Refused(why) => {
                tracing::warn!("{}", admission::advice(&s.name, &why));
                d.refused.insert(s.name.clone(), why);
                continue;
            }
            Admission::Admitted(run) => *run,
        };
        // Mutants are made from the seed with the shapes it was admitted at declared: every
        // value then has a static shape, so a mutant valid for the IR is valid at the sizes
        // it runs at. The seed itself ran as given.
        let mut s = s;
        s.model = mutagraph_ir::solve::concretize(&s.model, &run.chosen.shapes);
        let mut chosen = run.chosen.clone();
        chosen.work = work(&s.model);
        let heavy = chosen.work > HEAVY_WORK;
        let made = derive_seeds(&s, &chosen, &run.inputs, heavy, config, pools, reference, i);
        for m in made {
            match m.tensors {
                Some(tensors) => {
                    if m.mutated {
                        chosen.derived.push(m.c.record.name.clone());
                    }
                    let a = m.c.record.admitted.clone().unwrap_or_default();
                    derived.push((m.c, a, tensors, m.mutated));
                }
                None => d.derived.push(m.c.record),
            }
        }
        chosen.mutated = !heavy || chosen.derived.is_empty();
        d.admitted.insert(s.name.clone(), chosen.clone());
        if chosen.mutated {
            it.mutated.push(it.seeds.len());
        }
        it.seed_runs.push((it.seeds.len(), run));
        it.seeds.push(s);
        it.plans.push((chosen, Default::default()));
    }
    for (mut c, a, tensors, mutated) in derived {
        c.record.kept = true;
        if let Some(f) = &c.record.inputs_file {
            let arrays: Vec<(String, HostTensor)> = tensors
                .iter()
                .map(|(n, t)| (n.clone(), t.clone()))
                .collect();
            let p = seeds_dir.join(f);
            mutagraph_oracles::bundle::npz::write_npz(&p, &arrays)
                .map_err(|e| anyhow!("writing {}: {e}", p.display()))?;
        }
        d.derived.push(c.record);
        if mutated {
            it.mutated.push(it.seeds.len());
        }
        it.seeds.push(c.seed);
        it.plans.push((a, tensors));
    }
    it.refused = d.refused.clone();
    Ok((it, d))
}

/// A derived seed and what becomes of it.
struct Made {
    c: Candidate,
    /// The tensors its inputs take, when it is kept (else its record says why not).
    tensors: Option<Tensors>,
    /// Whether it is mutated (a kept seed that is not is the basis of others).
    mutated: bool,
}

/// The seeds derived from the admitted seed `s` (`chosen`, run on `inputs`): for a heavy seed,
/// the seed at smaller image sizes ([`derive::smaller`]), which the others are then derived
/// from (kept, mutated only when it is light); the reduced seed; for a heavy seed, its
/// windows. A derived seed still heavy is not mutated.
#[allow(clippy::too_many_arguments)]
fn derive_seeds(
    s: &Seed,
    chosen: &Admitted,
    inputs: &NamedValues,
    heavy: bool,
    config: &Config,
    pools: &mut [Vec<Pool>],
    reference: Option<usize>,
    i: usize,
) -> Vec<Made> {
    let b = &config.backends;
    let mut k = 0u64;
    let mut next_seed = || {
        k += 1;
        mix(config.seed, i as u64 * 64 + k, 8)
    };
    let mut out: Vec<Made> = Vec::new();
    // Keeps a light derived seed; a heavy one is not mutated (`basis`: kept all the same).
    let mut keep = |mut c: Candidate, admitted: Option<GenOptions>, basis: bool| {
        let w = work(&c.seed.model);
        if let Some(a) = &mut c.record.admitted {
            a.work = w;
        }
        let light = admitted.is_some() && w <= HEAVY_WORK;
        if admitted.is_some() && !light {
            c.record.not_used = Some(format!(
                "heavy too (work {w}){}",
                if basis {
                    "; the others are derived from it"
                } else {
                    ""
                }
            ));
        }
        let tensors = admitted.filter(|_| light || basis).map(|o| o.tensors);
        out.push(Made {
            c,
            tensors,
            mutated: light,
        });
    };
    // Without the reference (an op it lacks), only windows without such ops are judged: their
    // values come from a library that ran the seed.
    let lacks = chosen.reference_failed.is_some();
    // The basis of the others: the seed, or the seed at smaller image sizes.
    let mut basis: Option<(Seed, Admitted, NamedValues)> = None;
    if heavy
        && !lacks
        && let Some((mut c, shapes)) = derive::smaller(s, &chosen.shapes)
    {
        let base = Admitted {
            shapes,
            ..chosen.clone()
        };
        let admitted = derive::admit(&mut c, &base, b, reference, pools, next_seed());
        if let (Some((_, ins)), Some(a)) = (&admitted, &c.record.admitted) {
            let small = Seed {
                name: s.name.clone(),
                file: s.file.clone(),
                model: c.seed.model.clone(),
                given: None,
                origin: None,
            };
            basis = Some((small, a.clone(), ins.clone()));
        }
        keep(c, admitted.map(|(o, _)| o), true);
    }
    let basis_name = basis.as_ref().map(|_| format!("{}#small", s.name));
    let based = |mut c: Candidate| {
        c.record.basis = basis_name.clone();
        c.seed.origin = Some(c.record.origin());
        c
    };
    let (from, base, ins) = match &basis {
        Some((f, a, ins)) => (f, a, ins),
        None => (s, chosen, inputs),
    };
    if !lacks && let Some(c) = derive::reduced(from) {
        let mut c = based(c);
        let admitted = derive::admit(&mut c, base, b, reference, pools, next_seed());
        keep(c, admitted.map(|(o, _)| o), false);
    }
    // Who computes the values windows read: the reference, else a library that ran the seed.
    let by = match (reference, lacks) {
        (Some(r), false) => Some(r),
        _ => b
            .iter()
            .position(|n| base.outcomes.get(n).is_some_and(|o| o == "ok")),
    };
    let caps = match reference {
        Some(r) if lacks => pools[r][0].capabilities(&b[r]).ok(),
        _ => None,
    };
    if (heavy || lacks)
        && reference.is_some()
        && let Some(r) = by
    {
        let allowed = |d: &str, op: &str| caps.as_ref().is_none_or(|c| c.supports(d, op));
        let windows = derive::windows(from, &allowed);
        let read: BTreeSet<String> = windows.iter().flat_map(|w| w.inputs()).collect();
        let exposed = derive::exposing(&from.model, &read);
        let slow = Duration::from_secs_f64(base.baseline_ms * 4.0 / 1e3);
        let captured = capture(&mut pools[r][0], &b[r], &exposed, ins, slow);
        for w in windows {
            if let Some(c) = derive::window_seed(from, w, &captured, &b[r]) {
                let mut c = based(c);
                let admitted = derive::admit(&mut c, base, b, reference, pools, next_seed());
                keep(c, admitted.map(|(o, _)| o), false);
            }
        }
    }
    out
}

/// The values of one run of `model` on `inputs` by `backend` (a seed with the values its windows
/// read exposed as outputs), the inputs among them, with a time limit of at least `slow`;
/// only the inputs when that run fails.
fn capture(
    pool: &mut Pool,
    backend: &str,
    model: &Model,
    inputs: &NamedValues,
    slow: Duration,
) -> NamedValues {
    let limit = pool.options().timeout;
    pool.set_timeout(limit.max(slow));
    let mut all = inputs.clone();
    match pool.run(backend, &model.to_bytes(), inputs) {
        Ok(r) => match r.outcome.outputs() {
            Some(out) => all.extend(out.iter().cloned()),
            None => tracing::warn!(
                "the values windows read could not be captured: {}",
                r.outcome.detail()
            ),
        },
        Err(e) => tracing::warn!("the values windows read could not be captured: {e}"),
    }
    pool.set_timeout(limit);
    all
}

/// The intake of a campaign that decided before: the admitted seeds (as given, their shapes
/// declared) and the derived seeds it used, read back from `seeds/`.
fn resumed(out: &Path, given: Vec<Seed>, d: Decisions) -> Result<Intake> {
    let mut it = Intake {
        seeds: Vec::new(),
        plans: Vec::new(),
        mutated: Vec::new(),
        seed_runs: Vec::new(),
        refused: d.refused.clone(),
    };
    for mut s in given {
        if d.refused.contains_key(&s.name) {
            continue;
        }
        let a = d.admitted.get(&s.name).cloned().unwrap_or_default();
        s.model = mutagraph_ir::solve::concretize(&s.model, &a.shapes);
        if a.mutated {
            it.mutated.push(it.seeds.len());
        }
        it.seeds.push(s);
        it.plans.push((a, Default::default()));
    }
    for r in d.derived.iter().filter(|r| r.kept) {
        let mutated = r.not_used.is_none();
        let p = out.join("seeds").join(&r.file);
        let mut m =
            Model::load(&p).map_err(|e| anyhow!("resuming derived seed {}: {e}", r.name))?;
        typed(&mut m);
        let tensors: BTreeMap<String, HostTensor> = match &r.inputs_file {
            Some(f) => {
                let p = out.join("seeds").join(f);
                mutagraph_oracles::bundle::npz::read_npz(&p)
                    .map_err(|e| anyhow!("reading {}: {e}", p.display()))?
                    .into_iter()
                    .collect()
            }
            None => BTreeMap::new(),
        };
        if mutated {
            it.mutated.push(it.seeds.len());
        }
        it.seeds.push(Seed {
            name: r.name.clone(),
            file: r.file.clone(),
            model: m,
            given: None,
            origin: Some(r.origin()),
        });
        it.plans
            .push((r.admitted.clone().unwrap_or_default(), Arc::new(tensors)));
    }
    Ok(it)
}

/// What admission decided, a few lines per seed: its shapes and each backend's outcome, what
/// is mutated, and each derived seed with how it was made.
pub fn summary(d: &Decisions) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, a) in &d.admitted {
        lines.push(format!(
            "seed {name}: admitted as given at {} ({:.0} ms, work {}); {}",
            a.summary(),
            a.baseline_ms,
            a.work,
            match (&a.reference_failed, a.mutated) {
                (Some(_), true) => {
                    "mutated, judged by peers where the reference lacks an op (below): ONNX \
                     Runtime without its optimizer stands in for it, findings say so"
                }
                (Some(_), false) => {
                    "not mutated itself (heavy); the reference lacks an op (below): its \
                     windows without such ops are"
                }
                (None, true) => "mutated",
                (None, false) => "not mutated itself (heavy): its derived seeds are",
            }
        ));
        for w in a.why.iter().chain(&a.reference_failed) {
            lines.push(format!("  {w}"));
        }
        for r in d.derived.iter().filter(|r| &r.from == name) {
            let what = match &r.not_used {
                Some(why) => format!("not used: {why}"),
                None => "mutated".to_string(),
            };
            let dropped: Vec<String> = r.dropped.iter().map(|(o, n)| format!("{o}×{n}")).collect();
            lines.push(format!(
                "  derived {} ({} -> {} nodes{}): {}; {what}",
                r.name,
                r.nodes.0,
                r.nodes.1,
                if dropped.is_empty() {
                    String::new()
                } else {
                    format!("; dropped {}", dropped.join(" "))
                },
                r.how
            ));
        }
    }
    for (name, why) in &d.refused {
        lines.push(format!("seed {name}: refused: {why}"));
    }
    lines
}
