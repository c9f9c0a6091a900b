//! The oracles on hand-made runs.
use mutagraph_backends::backend::Stage;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::{Data, HostTensor, Value};
use mutagraph_backends::worker::{Outcome, RunReport};
use mutagraph_oracles::checks::{d_mad, mean_abs_diff};
use mutagraph_oracles::{Finding, Kind, MutantRuns, default_oracles, judge_all, slow_candidates};

fn out(v: &[f32]) -> Outcome {
    Outcome::Ok(vec![(
        "y".into(),
        Value::Tensor(HostTensor::new(vec![v.len()], Data::F32(v.to_vec()))),
    )])
}

fn report(backend: &str, outcome: Outcome) -> RunReport {
    RunReport {
        backend: backend.into(),
        version: "0".into(),
        outcome,
        wall_ms: 1.0,
        prepare_ms: 0.0,
        run_ms: 1.0,
        peak_rss: 100 << 20,
        cached: false,
        rewrites: Vec::new(),
    }
}

fn runs(list: Vec<RunReport>) -> MutantRuns {
    MutantRuns {
        runs: list,
        reference: Some(0),
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    }
}

fn judge(r: &MutantRuns) -> Vec<Finding> {
    let mut oracles = default_oracles(Tolerance::APPROXIMATE);
    // Debug builds leave the slowness oracle out of the default set (run times of unoptimized
    // libraries mean nothing); its logic is tested here in every build.
    if !mutagraph_oracles::checks::SLOWNESS_MEANINGFUL {
        oracles.push(Box::new(mutagraph_oracles::checks::Slow));
    }
    judge_all(&oracles, r)
}

fn kinds(f: &[Finding]) -> Vec<(Kind, &str, &str)> {
    f.iter()
        .map(|x| (x.kind, x.backends[0].as_str(), x.symptom.as_str()))
        .collect()
}

#[test]
fn agreeing_runs_and_unsupported_ops_have_no_findings() {
    let r = runs(vec![
        report("reference", out(&[1.0, 2.0])),
        report("ort", out(&[1.0, 2.0000005])),
        report(
            "tract",
            Outcome::Unsupported {
                stage: Stage::Load,
                message: "no".into(),
            },
        ),
    ]);
    assert!(judge(&r).is_empty());
}

#[test]
fn each_kind_is_found_on_its_backend() {
    let r = runs(vec![
        report("reference", out(&[1.0, 2.0])),
        report("ort", out(&[1.0, f32::NAN])),
        report("tract", out(&[1.0, 2.5])),
        report(
            "burn-ndarray",
            Outcome::Crash {
                signal: Some(11),
                exit_code: None,
                message: "boom".into(),
            },
        ),
        report(
            "ort-noopt",
            Outcome::Timeout {
                limit_ms: 10,
                step: None,
            },
        ),
        report(
            "tract-opt",
            Outcome::Error {
                stage: Stage::Compile,
                message: "cannot fuse \"n3\"".into(),
            },
        ),
    ]);
    let f = judge(&r);
    assert_eq!(
        kinds(&f),
        vec![
            (Kind::Crash, "burn-ndarray", "signal-SIGSEGV"),
            (Kind::Crash, "tract-opt", "error"),
            (Kind::Hang, "ort-noopt", "timeout"),
            (Kind::Nan, "ort", "partial"),
            (Kind::Inconsistency, "tract", "values"),
        ]
    );
    assert_eq!(f[1].stage, Some(Stage::Compile));
    // A backend given less than ten times the longest run of the others is slow, not hung.
    let mut slow = r.clone();
    slow.runs[4].outcome = Outcome::Timeout {
        limit_ms: 9,
        step: None,
    };
    assert!(judge(&slow).iter().all(|f| f.kind != Kind::Hang));
    let inc = &f[4];
    assert!((inc.metrics.as_ref().unwrap().max_abs - 0.5).abs() < 1e-9);
    // tract is 0.25 from the reference on average; ort (its finite part) 0: all of the error is
    // tract's.
    assert!((inc.d_mad.unwrap() - 1.0).abs() < 1e-12);
    let json = serde_json::to_string(&f).unwrap();
    let back: Vec<Finding> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, f);
}

#[test]
fn all_nan_is_kept_apart_from_partial() {
    let r = runs(vec![
        report("reference", out(&[1.0, 2.0])),
        report("ort", out(&[f32::NAN, f32::INFINITY])),
    ]);
    assert_eq!(kinds(&judge(&r)), vec![(Kind::Nan, "ort", "all")]);
}

#[test]
fn nothing_ran_means_no_crash_finding() {
    let err = |b: &str| {
        report(
            b,
            Outcome::Error {
                stage: Stage::Load,
                message: "invalid".into(),
            },
        )
    };
    let r = runs(vec![err("reference"), err("ort"), err("tract")]);
    assert!(judge(&r).is_empty());
    // The reference failing alone is a finding about the reference.
    let r = runs(vec![
        err("reference"),
        report("ort", out(&[1.0])),
        report("tract", out(&[1.0])),
    ]);
    assert_eq!(kinds(&judge(&r)), vec![(Kind::Crash, "reference", "error")]);
}

#[test]
fn the_others_agreeing_against_the_reference_blame_the_reference() {
    let r = runs(vec![
        report("reference", out(&[1.0, 2.0])),
        report("ort", out(&[1.0, 3.0])),
        report("tract", out(&[1.0, 3.0000001])),
    ]);
    let f = judge(&r);
    assert_eq!(
        kinds(&f),
        vec![(Kind::Inconsistency, "reference", "values")]
    );
    assert!(f[0].message.contains("ort, tract"), "{}", f[0].message);
    // Two backends that disagree with each other too are each blamed.
    let r = runs(vec![
        report("reference", out(&[1.0, 2.0])),
        report("ort", out(&[1.0, 3.0])),
        report("tract", out(&[1.0, 5.0])),
    ]);
    let f = judge(&r);
    assert_eq!(
        kinds(&f),
        vec![
            (Kind::Inconsistency, "ort", "values"),
            (Kind::Inconsistency, "tract", "values")
        ]
    );
    // D_MAD: ort is 0.5 from the reference on average, tract 1.5.
    assert!((f[0].d_mad.unwrap() - 0.5).abs() < 1e-12);
    assert!((f[1].d_mad.unwrap() - 0.5).abs() < 1e-12);
    // Two variants of one library are one witness: they are blamed, not the reference.
    let r = runs(vec![
        report("reference", out(&[1.0, 2.0])),
        report("ort", out(&[1.0, 3.0])),
        report("ort-noopt", out(&[1.0, 3.0])),
    ]);
    let f = judge(&r);
    assert_eq!(
        kinds(&f),
        vec![
            (Kind::Inconsistency, "ort", "values"),
            (Kind::Inconsistency, "ort-noopt", "values")
        ]
    );
}

#[test]
fn shape_mismatch_is_an_inconsistency_and_no_reference_means_no_comparison() {
    let r = runs(vec![
        report("reference", out(&[1.0, 2.0])),
        report("ort", out(&[1.0])),
    ]);
    let f = judge(&r);
    assert_eq!(kinds(&f), vec![(Kind::Inconsistency, "ort", "shape")]);
    let mut r = r;
    r.reference = None;
    assert!(judge(&r).is_empty());
}

#[test]
fn nan_where_the_reference_is_nan_is_fine() {
    let r = runs(vec![
        report("reference", out(&[f32::NAN, 2.0])),
        report("ort", out(&[f32::NAN, 2.0])),
    ]);
    assert!(judge(&r).is_empty());
}

#[test]
fn memory_over_cap_and_far_above_the_others() {
    let mut big = report("tract", out(&[1.0]));
    big.peak_rss = 3 << 30;
    let r = runs(vec![
        report("reference", out(&[1.0])),
        report("ort", out(&[1.0])),
        report("burn-ndarray", out(&[1.0])),
        big,
        report(
            "ort-noopt",
            Outcome::OutOfMemory {
                limit: 1 << 30,
                message: "rss".into(),
            },
        ),
    ]);
    assert_eq!(
        kinds(&judge(&r)),
        vec![
            (Kind::Memory, "ort-noopt", "over-cap"),
            (Kind::Memory, "tract", "peak")
        ]
    );
}

#[test]
fn slowness_needs_confirmation_by_reruns() {
    let mut slow = report("tract", out(&[1.0]));
    slow.run_ms = 900.0;
    let mut r = runs(vec![
        report("reference", out(&[1.0])),
        report("ort", out(&[1.0])),
        report("burn-ndarray", out(&[1.0])),
        slow.clone(),
    ]);
    assert_eq!(slow_candidates(&r), vec!["tract".to_string()]);
    assert!(judge(&r).is_empty(), "not confirmed yet");
    // A re-run that is fast: it was noise.
    let mut fast = slow.clone();
    fast.run_ms = 2.0;
    r.reruns = vec![fast];
    assert!(judge(&r).is_empty());
    // Re-runs that stay slow confirm it.
    let mut again = slow.clone();
    again.run_ms = 850.0;
    r.reruns = vec![again, report("ort", out(&[1.0]))];
    let f = judge(&r);
    assert_eq!(kinds(&f), vec![(Kind::Slow, "tract", "slower")]);
    assert!(f[0].message.contains("850.0 ms"), "{}", f[0].message);
    // A backend already 100 times slower than the others on the seed: 900 ms against ~1 ms
    // is the seed's slowness, not the mutant's.
    r.slow_baseline = [("tract".to_string(), 100.0)].into();
    assert!(slow_candidates(&r).is_empty());
    assert!(judge(&r).is_empty());
    // Ten times that again is the mutant's.
    r.slow_baseline = [("tract".to_string(), 5.0)].into();
    assert_eq!(slow_candidates(&r), vec!["tract".to_string()]);
}

#[test]
fn flaky_runs_differ_from_themselves() {
    let mut r = runs(vec![
        report("reference", out(&[1.0, 2.0])),
        report("ort", out(&[1.0, 2.0])),
        report("tract", out(&[1.0, 2.0])),
    ]);
    r.reruns = vec![
        report("ort", out(&[1.0, 2.0])),
        report("tract", out(&[1.0, 2.5])),
    ];
    assert_eq!(kinds(&judge(&r)), vec![(Kind::Flaky, "tract", "values")]);
    // A last bit of difference (a threaded sum in another order) is within the tolerance.
    r.reruns = vec![report("tract", out(&[1.0, 2.0000002]))];
    assert!(judge(&r).is_empty());
    r.reruns = vec![report(
        "ort",
        Outcome::Crash {
            signal: None,
            exit_code: None,
            message: "x".into(),
        },
    )];
    assert_eq!(kinds(&judge(&r)), vec![(Kind::Flaky, "ort", "outcome")]);
    r.reruns = vec![report(
        "ort",
        Outcome::Timeout {
            limit_ms: 1,
            step: None,
        },
    )];
    assert!(judge(&r).is_empty(), "timeouts are load, not flakiness");
}

#[test]
fn d_mad_matches_cradle() {
    assert_eq!(d_mad(0.0, 0.0), 0.0);
    assert!((d_mad(3.0, 1.0) - 0.5).abs() < 1e-12);
    assert!((d_mad(1.0, 0.0) - 1.0).abs() < 1e-12);
    let a = match out(&[1.0, 2.0, f32::NAN]) {
        Outcome::Ok(v) => v,
        _ => unreachable!(),
    };
    let b = match out(&[1.5, 1.0, 0.0]) {
        Outcome::Ok(v) => v,
        _ => unreachable!(),
    };
    assert!((mean_abs_diff(&a, &b).unwrap() - 0.75).abs() < 1e-9);
}

#[test]
fn variants_of_one_library_failing_alike_are_one_finding() {
    use mutagraph_oracles::triage::merge_by_library;
    let err = |m: &str| Outcome::Error {
        stage: Stage::Compile,
        message: m.into(),
    };
    let r = runs(vec![
        report("reference", out(&[1.0, 2.0])),
        report("ort", out(&[1.0, 3.0])),
        report("ort-noopt", out(&[1.0, 3.0])),
        report("tract", out(&[1.0, 4.0])),
        report("tract-opt", out(&[1.0, 5.0])),
        report("burn-ndarray", err("node \"a1\" failed")),
        report("burn-wgpu", err("node \"b2\" failed")),
    ]);
    let f = merge_by_library(judge(&r));
    let names: Vec<Vec<&str>> = f
        .iter()
        .map(|x| x.backends.iter().map(String::as_str).collect())
        .collect();
    // ort and ort-noopt computed wrong values: one finding of ONNX Runtime; tract and
    // tract-opt, each wrong in its own way, one of tract. The burn variants fail with the same
    // normalized message: one.
    assert_eq!(
        names,
        vec![
            vec!["burn-ndarray", "burn-wgpu"],
            vec!["ort", "ort-noopt"],
            vec!["tract", "tract-opt"],
        ]
    );
    assert!(f[1].signature().starts_with("inconsistency|ort|"));
    assert_eq!(
        f[1].signature(),
        f[2].signature().replace("|tract|", "|ort|")
    );
}
