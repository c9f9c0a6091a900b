//! What `meta.json` holds: the finding, its hits and sightings, what a reproduction checks.
use super::*;

/// One backend's run, in `meta.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunLine {
    /// Backend.
    pub backend: String,
    /// Version.
    pub version: String,
    /// ok / error / crash / ...
    pub status: String,
    /// Failure text.
    pub detail: String,
    /// Run time, ms.
    pub run_ms: f64,
    /// Peak RSS, bytes.
    pub peak_rss: u64,
    /// Where a run past its time limit was when it was killed (`while preparing the model`,
    /// `while running the model`, an optimizer pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
}

/// What a reproduction checks, in `meta.json` (and `repro.py`'s header).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Reproduce {
    /// The library whose own API reproduces it: `onnxruntime`, `tract`, `burn`, or a
    /// test backend's name.
    pub library: String,
    /// The variants that showed the bug.
    pub showing: Vec<String>,
    /// The variants that ran the model correctly (the unoptimized variant of an optimizer
    /// bug).
    pub clean: Vec<String>,
    /// A phrase of the failure message a reproduction must see (crashes).
    pub expect_error: Option<String>,
    /// Per graph output: (rtol, atol), from the narrowest float type on its path.
    pub tolerances: BTreeMap<String, (f64, f64)>,
    /// (rtol, atol) of the campaign's tolerance.
    pub default_tolerance: (f64, f64),
    /// A steady-state run at least this long reproduces a slowness finding (seconds).
    pub slow_seconds: f64,
}

/// Where a derived seed came from: the seed the user gave, how it was derived, and the
/// region of the user's model it holds (a window's nodes, by name).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DerivedFrom {
    /// The user's seed (its path, or the zoo name).
    pub seed: String,
    /// How, in words.
    pub how: String,
    /// The nodes of the user's model it holds (a window), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub region: Vec<String>,
    /// The seed it was cut or reduced from, when that is not the user's model itself (the
    /// user's model at smaller image sizes): where its mutations are checked again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<String>,
}

/// `meta.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meta {
    /// Format version ([`Versioned::VERSION`]; 0: written before versions). [`read_meta`]
    /// reads older versions and brings them to the current one.
    #[serde(default)]
    pub version: u32,
    /// Directory name.
    pub id: String,
    /// Dedup signature.
    pub signature: String,
    /// Kind.
    pub kind: Kind,
    /// Faulty backends (the variants that showed it).
    pub backends: Vec<String>,
    /// The library, as its maintainers name it (`ONNX Runtime`).
    #[serde(default)]
    pub library: String,
    /// Kernel or optimizer.
    #[serde(default)]
    pub layer: Option<Layer>,
    /// Stage.
    pub stage: Option<Stage>,
    /// Symptom.
    pub symptom: String,
    /// Localized op type.
    pub op_type: Option<String>,
    /// Message.
    pub message: String,
    /// Hits.
    pub hits: u64,
    /// First seen.
    pub first_seen: Seen,
    /// Last seen.
    pub last_seen: Seen,
    /// Hits per set of variants that showed it.
    #[serde(default)]
    pub variants_seen: BTreeMap<String, u64>,
    /// Hits per op.
    #[serde(default)]
    pub ops_seen: BTreeMap<String, u64>,
    /// The finding.
    pub finding: Finding,
    /// Localization on the original model.
    pub localization: Option<Localization>,
    /// Minimization.
    pub minimized: Option<MinimizedInfo>,
    /// The runs on the minimized model.
    #[serde(default)]
    pub minimized_runs: Vec<RunLine>,
    /// The finding as it shows on the minimized model.
    #[serde(default)]
    pub minimized_finding: Option<Finding>,
    /// Seed model.
    pub seed: String,
    /// The seed's file under the campaign's `seeds/` (the model the trace replays on: what
    /// `mutagraph minimize` drops records from, as the campaign's minimizer does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_file: Option<String>,
    /// The user's seed the mutated seed was derived from (reduced, a window of it), with the
    /// region of it the seed holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<DerivedFrom>,
    /// For a finding on a derived seed: what the same mutations, replayed on the user's whole
    /// model, showed when they were checked once there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_model: Option<String>,
    /// Iteration.
    pub iteration: u64,
    /// Seed of the inputs.
    pub input_seed: u64,
    /// Mutation operators applied from the seed, in order.
    pub operators: Vec<String>,
    /// The full mutation trace (replayable on `seeds/<seed>.onnx`).
    pub trace: Vec<Record>,
    /// Backend versions.
    pub backend_versions: BTreeMap<String, String>,
    /// The runs.
    pub runs: Vec<RunLine>,
    /// Tolerance name.
    pub tolerance: String,
    /// What a reproduction checks.
    #[serde(default)]
    pub reproduce: Reproduce,
    /// The machine it was seen on.
    #[serde(default)]
    pub environment: Environment,
    /// Campaign configuration.
    pub config: serde_json::Value,
    /// Triage note (filled by hand).
    pub triage: Option<String>,
    /// The root cause's signature, once minimization found the attributes the bug needs
    /// ([`Finding::root_signature`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_signature: Option<String>,
    /// Those attributes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trigger: Vec<String>,
    /// Other signatures found to be this bundle's root cause (their bundles are under
    /// `merged/`, their hits counted here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// For a bundle under `merged/`: the bundle it was merged into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_into: Option<String>,
    /// For a bundle under `unconfirmed/`: what a fresh run of its model and inputs showed
    /// (each finding's verdict and signature; empty: nothing), the filed finding not among
    /// them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_shown_again: Option<Vec<String>>,
    /// What a search of the library's issue tracker found (`mutagraph report
    /// --known-upstream`); absent: not searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<super::upstream::Search>,
}

impl Versioned for Meta {
    const VERSION: u32 = 1;
}

pub(super) fn run_lines(runs: &MutantRuns) -> Vec<RunLine> {
    runs.runs
        .iter()
        .map(|r| RunLine {
            backend: r.backend.clone(),
            version: r.version.clone(),
            status: r.outcome.status().to_string(),
            detail: r.outcome.detail(),
            run_ms: r.run_ms,
            peak_rss: r.peak_rss,
            step: match &r.outcome {
                mutagraph_backends::worker::Outcome::Timeout { step, .. } => step.clone(),
                _ => None,
            },
        })
        .collect()
}

/// The library key `repro.py` runs (`onnxruntime`, `tract`, `burn`) for a backend.
pub(super) fn repro_library(backend: &str) -> String {
    match catalog::library(backend) {
        Library::OnnxRuntime => "onnxruntime".into(),
        Library::Tract => "tract".into(),
        Library::Burn => "burn".into(),
        _ => backend.into(),
    }
}

/// What a reproduction of `f` checks, on a model whose values have `precision`.
pub(super) fn reproduce_info(f: &Finding, precision: &Precision, runs: &MutantRuns) -> Reproduce {
    let mut tolerances = BTreeMap::new();
    if let Some(outs) = runs.reference_outputs() {
        for (name, _) in outs {
            let t = precision.for_value(name);
            tolerances.insert(name.clone(), (t.rtol, t.atol));
        }
    }
    let faulty = f.backends.first().cloned().unwrap_or_default();
    let slow_seconds = if f.kind == Kind::Slow {
        runs.runs
            .iter()
            .chain(&runs.reruns)
            .filter(|r| r.backend == faulty)
            .map(|r| r.run_ms)
            .fold(f64::INFINITY, f64::min)
            / 1e3
            * 0.5
    } else {
        0.0
    };
    Reproduce {
        library: repro_library(&faulty),
        showing: f.backends.clone(),
        clean: f
            .variants
            .iter()
            .filter(|(_, shows)| !shows)
            .map(|(n, _)| n.clone())
            .collect(),
        expect_error: match f.kind {
            Kind::Crash => key_phrase(&f.message),
            // a wrong shape upstream of a failure: the library shows it by that failure
            Kind::Inconsistency => f
                .message
                .split_once("; downstream: ")
                .and_then(|(_, failure)| key_phrase(failure)),
            _ => None,
        },
        tolerances,
        default_tolerance: (precision.base.rtol, precision.base.atol),
        slow_seconds: if slow_seconds.is_finite() {
            slow_seconds.max(mutagraph_oracles::checks::SLOW_MIN_MS / 1e3)
        } else {
            0.0
        },
    }
}
