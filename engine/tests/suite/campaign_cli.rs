//! `mutagraph campaign` through the real binary: outputs, consistency, replay, exact resume.
use mutagraph_mutators::mutation::replay_trace;
use mutagraph_mutators::zoo;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BACKENDS: &str = "reference,ort,tract,burn-ndarray";

fn mg(args: &[&str]) -> Output {
    mg_env(args, &[])
}

/// `mutagraph ARGS` with environment variables set.
fn mg_env(args: &[&str], vars: &[(&str, &Path)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(args)
        .envs(vars.iter().copied())
        .output()
        .unwrap()
}

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "exit {:?}: {}\n(campaigns need ONNX Runtime: `pip install onnxruntime==1.31.1`)",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn campaign(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "campaign",
        "--seeds",
        "zoo",
        "--out",
        out.to_str().unwrap(),
        "--seed",
        "1",
        "--backends",
        BACKENDS,
        "--quiet",
    ];
    args.extend_from_slice(extra);
    mg(&args)
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn corpus(out: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::common::corpus_files(out)
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// The parts of the state that must not depend on how the campaign was split into sessions.
fn search_state(s: &Value) -> Value {
    serde_json::json!({
        "iteration": s["iteration"],
        "pool": s["pool"],
        "seeds": s["seeds"],
        "coverage": s["coverage"],
        "counters": search_counters(&s["counters"]),
    })
}

/// Counters without the ones that depend on timing (slowness confirmations, the background
/// minimizer, localization re-runs) rather than on the search.
fn search_counters(c: &Value) -> Value {
    let mut c = c.clone();
    for k in [
        "findings",
        "findings_by_kind",
        "unique_findings",
        "unstable",
        "unlocalized",
        "reruns",
        "minimized",
    ] {
        c.as_object_mut().unwrap().remove(k);
    }
    c
}

#[test]
fn campaign_writes_consistent_outputs_replays_and_resumes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    ok(campaign(&a, &["--iterations", "40"]));
    for f in [
        "campaign.toml",
        "stats.json",
        "state.json",
        "timeseries.csv",
    ] {
        assert!(a.join(f).is_file(), "{f} missing");
    }
    let cfg = std::fs::read_to_string(a.join("campaign.toml")).unwrap();
    assert!(
        cfg.contains("seed = 1") && cfg.contains("search = \"mcmc\""),
        "{cfg}"
    );
    let stats = json(&a.join("stats.json"));
    assert_eq!(u(&stats, "iterations"), 40);
    assert_eq!(
        u(&stats, "executions")
            + u(&stats, "skipped")
            + u(&stats, "rejected")
            + u(&stats, "inputs_failed"),
        40,
        "{stats}"
    );
    assert_eq!(u(&stats, "backend_runs"), 4 * u(&stats, "executions"));
    assert_optimizer_coverage(&stats);
    let files = corpus(&a);
    let diverse = u(&stats, "diverse");
    assert!(diverse > 0, "{stats}");
    // The MCMC scores count the diverse mutants and the mutants that showed a new combination
    // of ONNX Runtime's rewrites (the rewrite family of the fitness).
    let state = json(&a.join("state.json"));
    let scored: u64 = state["seeds"]["op_score"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    let credited = scored - diverse;
    let pending: usize = state["rewrite_credits"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_array().unwrap().len())
        .sum();
    assert!(
        credited > 0,
        "no rewrite credit reached the scores: {state}"
    );
    assert!(
        credited as usize + pending <= state["rewrite_sets"].as_array().unwrap().len(),
        "{state}"
    );
    let count = |suffix: &str| files.keys().filter(|k| k.ends_with(suffix)).count() as u64;
    assert_eq!(count(".onnx"), diverse, "{:?}", files.keys());
    assert_eq!(count(".trace.json"), diverse, "{:?}", files.keys());
    assert!(count(".json") > diverse, "no records: {:?}", files.keys());
    let per_op: u64 = stats["per_operator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| u(o, "selected"))
        .sum();
    assert_eq!(per_op, 40);
    let cov = &stats["coverage"];
    let seed_cov = &stats["seed_coverage"];
    let total = |r: &Value| {
        ["op_types", "op_pairs", "params"]
            .iter()
            .map(|f| u(&r[*f], "covered"))
            .sum::<u64>()
    };
    assert!(total(cov) > total(seed_cov), "{cov} vs {seed_cov}");
    assert!(stats["execs_per_s"].as_f64().unwrap() > 0.0);
    let tm = &stats["timings"];
    assert!(tm["backends_wait"].as_f64().unwrap() > 0.0, "{tm}");
    // Timeseries: a header and at least one full row.
    let ts = std::fs::read_to_string(a.join("timeseries.csv")).unwrap();
    let mut lines = ts.lines();
    assert!(lines.next().unwrap().starts_with("elapsed_s,executions"));
    let last: Vec<&str> = ts.lines().last().unwrap().split(',').collect();
    assert_eq!(last.len(), 9);
    assert_eq!(last[1], u(&stats, "executions").to_string());

    // Every corpus entry replays from its seed to the same bytes; the seed is the zoo model as
    // given (at its admitted shapes), or its reduction (a derived seed, `#reduced`).
    for (name, bytes) in &files {
        let Some(id) = name.strip_suffix(".onnx") else {
            continue;
        };
        let cdir = a.join("corpus");
        let t = mutagraph_engine::corpus::read_trace(&cdir, id).unwrap();
        let seed = mutagraph_mutators::ir::Model::load(a.join(&t.seed_file)).unwrap();
        let given = t.seed.strip_suffix("#reduced");
        let zoo_seed = zoo::build(given.unwrap_or(&t.seed)).unwrap();
        let (n, zoo_n) = (seed.graph.node_count(), zoo_seed.graph.node_count());
        if given.is_some() {
            assert!(n < zoo_n, "{}: {n} nodes, the zoo model {zoo_n}", t.seed);
        } else {
            assert_eq!(n, zoo_n, "{}", t.seed);
        }
        let records = mutagraph_engine::corpus::records(&cdir, id, &t).unwrap();
        assert!(!records.is_empty());
        let (m, skipped) = replay_trace(&seed, &records, |_| true);
        assert!(skipped.is_empty(), "{id}: {skipped:?}");
        assert_eq!(&m.to_bytes(), bytes, "{id} does not replay");
        assert_eq!(
            t.model_sha256.as_deref(),
            Some(mutagraph_engine::corpus::store::sha256_hex(bytes).as_str())
        );
    }
    // The pool points at corpus entries or seeds.
    let state = json(&a.join("state.json"));
    for slot in state["pool"].as_array().unwrap() {
        if let Some(id) = slot["corpus"].as_str() {
            assert!(files.contains_key(&format!("{id}.onnx")), "{id}");
        }
    }

    // 20 iterations, then resume to 40: the same search state and corpus.
    let b = dir.path().join("b");
    ok(campaign(&b, &["--iterations", "20"]));
    let half = json(&b.join("stats.json"));
    assert_eq!(u(&half, "iterations"), 20);
    ok(campaign(&b, &["--iterations", "40"]));
    let sb = json(&b.join("state.json"));
    assert_eq!(search_state(&sb), search_state(&state));
    assert_eq!(corpus(&b), files);

    // Resuming with another search configuration is refused.
    let o = campaign(&b, &["--iterations", "41", "--search", "random"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--search"), "{err}");
}

#[test]
fn random_search_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    ok(campaign(
        &out,
        &["--iterations", "12", "--search", "random", "-j", "2"],
    ));
    let stats = json(&out.join("stats.json"));
    assert_eq!(u(&stats, "iterations"), 12);
    let cfg = std::fs::read_to_string(out.join("campaign.toml")).unwrap();
    assert!(cfg.contains("search = \"random\""), "{cfg}");
    assert!(u(&stats, "executions") > 0);
}

#[test]
fn bad_seed_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("broken.onnx");
    std::fs::write(&bad, b"this is not a model").unwrap();
    let o = mg(&[
        "campaign",
        "--seeds",
        bad.to_str().unwrap(),
        "--out",
        dir.path().join("o").to_str().unwrap(),
        "--iterations",
        "1",
        "--backends",
        "reference",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("broken.onnx"), "{err}");
}

#[test]
fn findings_are_deduplicated_into_bundles() {
    // The `fault` backend runs any ordinary model as identity: its outputs never match the
    // reference, so every execution is an inconsistency finding on `fault`.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    let o = mg(&[
        "campaign",
        "--seeds",
        "zoo",
        "--out",
        out.to_str().unwrap(),
        "--seed",
        "5",
        // ONNX Runtime unoptimized witnesses the fault backend's findings (its optimizer's
        // own bugs would be bundles of another backend here).
        "--backends",
        "reference,ort-noopt,fault",
        "--iterations",
        "10",
        "--no-minimize",
        "--quiet",
    ]);
    ok(o);
    let stats = json(&out.join("stats.json"));
    let execs = u(&stats, "executions");
    assert!(execs > 3, "{stats}");
    let findings = u(&stats, "findings");
    assert_eq!(
        u(&stats["findings_by_kind"], "inconsistency"),
        findings,
        "{stats}"
    );
    // Every run of the fault backend is a finding or rounding: the mutants' and the seeds'
    // own runs at admission.
    assert!(u(&stats, "seed_runs") > 0, "{stats}");
    assert_eq!(
        findings + u(&stats, "unstable"),
        execs + u(&stats, "seed_runs"),
        "{stats}"
    );
    let state = json(&out.join("state.json"));
    let sigs = state["signatures"].as_object().unwrap();
    assert_eq!(sigs.len() as u64, u(&stats, "unique_findings"));
    assert!(
        sigs.len() < findings as usize,
        "dedup merges repeats: {sigs:?}"
    );
    let dirs: Vec<_> = std::fs::read_dir(out.join("findings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), sigs.len(), "{dirs:?}");
    let mut hits = 0;
    let mut seed_bundles = 0;
    for d in &dirs {
        let name = d.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("inconsistency-fault-"), "{name}");
        let model = std::fs::read(d.join("original.onnx")).unwrap();
        mutagraph_mutators::ir::Model::from_bytes(&model).unwrap();
        for f in [
            "inputs.npz",
            "inputs/input_0.pb",
            "outputs/reference/output_0.pb",
            "outputs/fault/output_0.pb",
            "expected.npz",
            "actual.npz",
            "repro.py",
            "REPORT.md",
        ] {
            assert!(d.join(f).is_file(), "{name}: {f} missing");
        }
        let meta = json(&d.join("meta.json"));
        assert_eq!(meta["kind"], "inconsistency");
        assert_eq!(meta["backends"][0], "fault");
        assert_eq!(meta["id"], name);
        let sig = meta["signature"].as_str().unwrap();
        assert_eq!(sigs[sig]["id"], name);
        assert_eq!(sigs[sig]["hits"], meta["hits"]);
        assert!(u(&meta["first_seen"], "iteration") <= u(&meta["last_seen"], "iteration"));
        // A bundle without mutation records is a seed finding: the fault backend is wrong on
        // the unmutated seed already, and admission filed it before any mutant ran.
        if meta["trace"].as_array().unwrap().is_empty() {
            assert_eq!(u(&meta["first_seen"], "iteration"), 0);
            seed_bundles += 1;
        }
        assert_eq!(meta["runs"].as_array().unwrap().len(), 3);
        let report = std::fs::read_to_string(d.join("REPORT.md")).unwrap();
        assert!(report.contains("## Steps to reproduce") && report.contains("fault"));
        // The documents, renewed at the end of the session, show the final hits.
        assert!(
            report.contains(&format!("- Hits: {}\n", u(&meta, "hits"))),
            "{name}: {report}"
        );
        hits += u(&meta, "hits");
    }
    assert_eq!(hits, findings);
    assert!(seed_bundles > 0, "the seeds' own findings are filed");
    assert_eq!(seed_bundles, u(&stats, "seed_findings"), "{stats}");
    let admission = json(&out.join("admission.json"));
    assert!(admission["refused"].as_object().unwrap().is_empty());
    // Resumed with `--json`: it says it resumes, and the summary lists every bundle's path.
    let o = mg(&[
        "campaign",
        "--out",
        out.to_str().unwrap(),
        "--iterations",
        "11",
        "--no-minimize",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("resuming the campaign in"), "{err}");
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    let listed: std::collections::BTreeSet<PathBuf> = summary["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| PathBuf::from(b["path"].as_str().unwrap()))
        .collect();
    let on_disk: std::collections::BTreeSet<PathBuf> = std::fs::read_dir(out.join("findings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(listed, on_disk, "{summary}");
}

#[test]
fn findings_a_fresh_process_does_not_show_are_withdrawn() {
    // With MUTAGRAPH_FAULT_WRONG_ONCE, the `fault` backend answers wrongly (identity) only the
    // first time a model is run anywhere: the campaign sees an inconsistency, the minimizer's
    // fresh workers, running the bundle's own model and inputs, do not.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    let marks = dir.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    ok(mg_env(
        &[
            "campaign",
            "--seeds",
            "zoo",
            "--out",
            out.to_str().unwrap(),
            "--seed",
            "5",
            "--backends",
            "reference,fault",
            "--iterations",
            "6",
            "--quiet",
        ],
        &[(mutagraph_backends::fault::WRONG_ONCE, &marks)],
    ));
    let stats = json(&out.join("stats.json"));
    let withdrawn = u(&stats, "unconfirmed");
    assert!(withdrawn > 0, "{stats}");
    assert_eq!(u(&stats, "unique_findings"), 0, "{stats}");
    let left: Vec<_> = std::fs::read_dir(out.join("findings"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "nothing stays filed: {left:?}");
    let state = json(&out.join("state.json"));
    assert!(state["signatures"].as_object().unwrap().is_empty());
    let moved: Vec<_> = std::fs::read_dir(out.join("unconfirmed"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // A withdrawn signature is forgotten, so a later hit files it again; withdrawn again, it
    // goes to the same directory (the count says how many withdrawals, the directories how
    // many signatures).
    assert!(
        !moved.is_empty() && moved.len() as u64 <= withdrawn,
        "{withdrawn}: {moved:?}"
    );
    for d in &moved {
        let meta = json(&d.join("meta.json"));
        let shown = meta["not_shown_again"].as_array().unwrap();
        let sig = meta["signature"].as_str().unwrap();
        assert!(
            shown.iter().all(|s| !s.as_str().unwrap().ends_with(sig)),
            "{shown:?}"
        );
        assert!(d.join("original.onnx").is_file() && d.join("inputs").is_dir());
    }
}

#[test]
fn seeds_the_reference_cannot_run_are_not_mutated() {
    // `pool` needs at least 20 elements along its dynamic axis: admission solves the smallest
    // size every node accepts from the graph at or above the dim's floor (24); at a size the
    // user fixes to 1 it is not mutated, and the user is told which flags change that.
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    let write = |name: &str, src: &str| {
        let m = mutagraph_ir::text::parse_model(src).unwrap();
        std::fs::write(seeds.join(name), m.to_bytes()).unwrap();
    };
    write(
        "a_relu.onnx",
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1,4] x) => (float[1,4] y) { y = Relu (x) }",
    );
    write(
        "b_pool.onnx",
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[batch,1,L] x) => (float[batch,1,?] y) { y = MaxPool <kernel_shape = [20]> (x) }",
    );
    let campaign = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "campaign",
            "--seeds",
            seeds.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backends",
            "reference",
            "--iterations",
            "4",
            "--no-minimize",
        ];
        args.extend_from_slice(extra);
        mg(&args)
    };
    let pool_size = |out: &Path| {
        json(&out.join("state.json"))["pool"]
            .as_array()
            .unwrap()
            .len()
    };
    // Sizes found per seed.
    let out = dir.path().join("c0");
    ok(campaign(&out, &[]));
    let admission = json(&out.join("admission.json"));
    assert!(
        admission["refused"].as_object().unwrap().is_empty(),
        "{admission}"
    );
    let chosen = admission["admitted"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.ends_with("b_pool.onnx"))
        .unwrap()
        .1
        .clone();
    assert_eq!(
        chosen["shapes"]["x"],
        serde_json::json!([1, 1, 24]),
        "{admission}"
    );
    let why = chosen["why"].to_string();
    assert!(why.contains("L = 24") && why.contains("MaxPool"), "{why}");
    assert_eq!(pool_size(&out), 2);
    // A shape the user gives is kept; one the reference cannot run refuses the seed.
    let out = dir.path().join("c5");
    ok(campaign(&out, &["--input-shape", "x:1x1x25"]));
    let admission = json(&out.join("admission.json"));
    let b = |a: &serde_json::Value| {
        a["admitted"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(k, _)| k.ends_with("b_pool.onnx"))
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        b(&admission).unwrap()["shapes"]["x"],
        serde_json::json!([1, 1, 25])
    );
    let out = dir.path().join("c6");
    let o = campaign(&out, &["--input-shape", "x:1x1x2"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    ok(o);
    assert!(b(&json(&out.join("admission.json"))).is_none());
    assert!(
        err.contains("b_pool.onnx: not mutated") && err.contains("x[1,1,2]"),
        "{err}"
    );
    // An input no seed has is an error before anything runs.
    let o = campaign(&dir.path().join("c7"), &["--input-shape", "nope:1x2"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("no seed has an input named 'nope'"), "{err}");
    // A size the user fixes: the seed the reference cannot run at it is left out.
    let out = dir.path().join("c1");
    let o = campaign(&out, &["--free-dim", "1"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    ok(o);
    assert!(
        err.contains("b_pool.onnx: not mutated") && err.contains("--input-shape NAME:"),
        "{err}"
    );
    let admission = json(&out.join("admission.json"));
    let refused = admission["refused"].as_object().unwrap();
    assert_eq!(refused.len(), 1, "{admission}");
    assert!(refused.keys().next().unwrap().ends_with("b_pool.onnx"));
    assert_eq!(pool_size(&out), 1, "only a_relu is mutated");
    // Resumed, the decision stands (the refused seed is not run again).
    ok(campaign(&out, &["--free-dim", "1"]));
    assert_eq!(pool_size(&out), 1);
    // A file of the directory that is no model is named and left out.
    std::fs::write(seeds.join("c_broken.onnx"), b"not a model").unwrap();
    let out = dir.path().join("c4");
    let o = campaign(&out, &[]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    ok(o);
    assert!(
        err.contains("c_broken.onnx: not a valid ONNX protobuf") && err.contains("not used"),
        "{err}"
    );
    assert_eq!(pool_size(&out), 2);
    std::fs::remove_file(seeds.join("c_broken.onnx")).unwrap();
    // No seed the reference runs: a clear error, not a campaign of nothing.
    std::fs::remove_file(seeds.join("a_relu.onnx")).unwrap();
    let o = campaign(&dir.path().join("c3"), &["--free-dim", "2"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no seed can be mutated"), "{err}");
    // The error itself names each refused seed and why, even when warnings are silenced.
    assert!(
        err.contains("b_pool.onnx: the reference cannot run it"),
        "{err}"
    );
}

/// The committed iteration count (0 before the first commit).
fn committed(out: &Path) -> u64 {
    std::fs::read(out.join("state.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v["iteration"].as_u64())
        .unwrap_or(0)
}

#[test]
fn sigint_stops_cleanly_with_a_summary_and_resumes_exactly() {
    const N: &str = "400";
    let dir = tempfile::tempdir().unwrap();
    // Uninterrupted.
    let a = dir.path().join("a");
    ok(campaign(&a, &["--iterations", N, "--no-minimize"]));
    let sa = json(&a.join("state.json"));

    // Interrupted by SIGINT once it has committed some iterations, then resumed.
    let b = dir.path().join("b");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args([
            "campaign",
            "--seeds",
            "zoo",
            "--out",
            b.to_str().unwrap(),
            "--seed",
            "1",
            "--backends",
            BACKENDS,
            "--iterations",
            N,
            "--no-minimize",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while committed(&b) == 0 && child.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the campaign ended before the signal (campaigns need ONNX Runtime: `pip install onnxruntime==1.31.1`)"
    );
    // A second campaign on the same directory is refused while this one holds it.
    let o = campaign(&b, &["--iterations", N]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("another campaign is running"), "{err}");

    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(err.contains("stopped by SIGINT"), "{err}");
    assert!(err.contains("unique findings"), "the summary: {err}");
    let stopped = committed(&b);
    assert!(
        stopped > 0 && stopped < N.parse::<u64>().unwrap(),
        "stopped at {stopped}"
    );
    // The state is consistent where it stopped: the stats agree with it, every pool entry is
    // on disk.
    let state = json(&b.join("state.json"));
    let stats = json(&b.join("stats.json"));
    assert_eq!(u(&stats, "iterations"), stopped);
    for slot in state["pool"].as_array().unwrap() {
        if let Some(id) = slot["corpus"].as_str() {
            assert!(
                b.join("corpus").join(format!("{id}.onnx")).is_file(),
                "{id}"
            );
        }
    }
    ok(campaign(&b, &["--iterations", N, "--no-minimize"]));
    let sb = json(&b.join("state.json"));
    assert_eq!(search_state(&sb), search_state(&sa));
    assert_eq!(corpus(&b), corpus(&a));
    // Both sessions are recorded, the second where the first stopped, and the report marks
    // the resume on its charts.
    let sessions = json(&b.join("stats.json"))["sessions"].clone();
    let sessions = sessions.as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    assert_eq!(u(&sessions[0], "iteration"), 0);
    assert_eq!(u(&sessions[1], "iteration"), stopped);
    ok(mg(&["report", b.to_str().unwrap()]));
    let html = std::fs::read_to_string(b.join("report.html")).unwrap();
    assert!(
        html.contains("session 2 resumed at") && html.contains("class=\"resume-line\""),
        "no resume marker in the report"
    );
}

#[test]
fn a_state_from_a_newer_mutagraph_is_not_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c");
    std::fs::create_dir_all(&out).unwrap();
    let state = out.join("state.json");
    std::fs::write(&state, r#"{"version": 999, "iteration": 5, "pool": "x"}"#).unwrap();
    let o = mg(&[
        "campaign",
        "--seeds",
        "zoo",
        "--out",
        out.to_str().unwrap(),
        "--backends",
        "reference",
        "--iterations",
        "1",
        "--quiet",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&state.display().to_string()), "{err}");
    assert!(err.contains("format version 999 is newer"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The optimizer and contrib-op coverage of a campaign's `stats.json`: ONNX Runtime's rewrites
/// that changed mutants, against those the pattern library is made for; tract's (its patches,
/// by rule), against those it applies over the ONNX backend test suite; the contrib ops of the
/// universe (ONNX Runtime is under test: all of them).
fn assert_optimizer_coverage(stats: &serde_json::Value) {
    let ort = stats["rewrites"]
        .as_array()
        .and_then(|v| v.iter().find(|r| r["backend"] == "ort"))
        .unwrap_or_else(|| panic!("no rewrites of ort: {stats}"));
    assert!(!ort["fired"].as_object().unwrap().is_empty(), "{ort}");
    assert!(ort["known"].as_array().unwrap().len() >= 15, "{ort}");
    assert_eq!(ort["known_from"], "the pattern library", "{ort}");
    let tract = stats["rewrites"]
        .as_array()
        .and_then(|v| v.iter().find(|r| r["backend"] == "tract"))
        .unwrap_or_else(|| panic!("no rewrites of tract: {stats}"));
    assert!(!tract["fired"].as_object().unwrap().is_empty(), "{tract}");
    assert!(tract["known_fired"].as_u64().unwrap() > 0, "{tract}");
    assert!(tract["known"].as_array().unwrap().len() >= 30, "{tract}");
    assert_eq!(
        tract["known_from"], "the ONNX backend test suite",
        "{tract}"
    );
    let contrib = &stats["contrib_ops"];
    let total = contrib["covered"].as_array().unwrap().len()
        + contrib["uncovered"].as_array().unwrap().len();
    let registered = mutagraph_ir::registry::Registry::global()
        .iter()
        .filter(|s| s.domain == mutagraph_ir::ops::contrib::MS)
        .count();
    assert!(registered >= 15);
    assert_eq!(total, registered, "{contrib}");
}
