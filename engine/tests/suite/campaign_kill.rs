//! `kill -9` a campaign at pseudo-random moments and resume it each time: the state always
//! parses and points at complete corpus files, counts never go backwards, nothing written
//! before is lost or changed; under a tiny disk budget (demotion, culling and eviction at every
//! commit) every entry left still rebuilds and nothing the state names is deleted.
use mutagraph_engine::corpus;
use mutagraph_mutators::mutation::replay_trace;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn start(out: &Path, iterations: &str, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args([
            "campaign",
            "--seeds",
            "zoo",
            "--out",
            out.to_str().unwrap(),
            "--seed",
            "3",
            "--backends",
            "reference,ort,tract,burn-ndarray",
            "--iterations",
            iterations,
            "--quiet",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap())
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", p.display()))
}

fn corpus(out: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::common::corpus_files(out)
}

/// The corpus files some entry names: its trace, its model, the records its trace names. A
/// record written for an entry whose trace the kill prevented names nothing; the resume deletes
/// it, by design.
fn named(out: &Path) -> BTreeMap<String, Vec<u8>> {
    let dir = out.join("corpus");
    let mut keep = std::collections::BTreeSet::new();
    for id in corpus::store::entry_ids(&dir).unwrap() {
        let t = corpus::read_trace(&dir, &id).unwrap();
        keep.insert(format!("{id}.trace.json"));
        keep.insert(format!("{id}.onnx"));
        keep.extend(t.refs.iter().map(|h| format!("records/{h}.json")));
    }
    let mut files = corpus(out);
    files.retain(|name, _| keep.contains(name));
    files
}

/// A fixed-seed generator for the kill delays.
struct Lcg(u64);
impl Lcg {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The entry's model is on disk, valid, and its trace (records by hash) replays to it.
fn check_entry(out: &Path, id: &str) {
    let p = out.join("corpus").join(format!("{id}.onnx"));
    let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let m = mutagraph_mutators::ir::Model::from_bytes(&bytes).unwrap();
    mutagraph_mutators::ir::validate::validate(&m).unwrap();
    let dir = out.join("corpus");
    let t = corpus::read_trace(&dir, id).unwrap();
    let seed = mutagraph_mutators::ir::Model::load(out.join(&t.seed_file)).unwrap();
    let records = corpus::records(&dir, id, &t).unwrap_or_else(|e| panic!("{id}: {e}"));
    let (r, skipped) = replay_trace(&seed, &records, |_| true);
    assert!(skipped.is_empty());
    assert_eq!(r.to_bytes(), bytes, "{id} does not replay");
}

/// The committed iteration count (0 before the first commit).
fn committed(out: &Path) -> u64 {
    std::fs::read(out.join("state.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v["iteration"].as_u64())
        .unwrap_or(0)
}

const COUNTS: &[&str] = &["iterations", "executions", "mutants", "diverse", "findings"];

#[test]
fn kill_nine_and_resume_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k");
    let mut rng = Lcg(20261122);
    let mut seen: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut last: BTreeMap<&str, u64> = BTreeMap::new();
    let mut checked = std::collections::BTreeSet::new();
    for round in 0..12 {
        let before = committed(&out);
        let mut child = start(&out, "100000", &[]);
        if round % 2 == 1 {
            // Half the kills land after this session committed something (past start-up).
            while committed(&out) == before && child.try_wait().unwrap().is_none() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let delay = 0.2 + 1.3 * rng.unit();
        std::thread::sleep(Duration::from_secs_f64(delay));
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!(
                "round {round}: the campaign exited by itself ({status}): {err}\n\
                 (campaigns need ONNX Runtime: `pip install onnxruntime==1.31.1`)"
            );
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        if !out.join("state.json").exists() {
            continue; // killed before the first commit
        }
        let state = json(&out.join("state.json"));
        let stats = json(&out.join("stats.json"));
        for k in COUNTS {
            let v = state["counters"][k].as_u64().unwrap();
            let s = stats[k].as_u64().unwrap();
            assert!(
                s <= v,
                "round {round}: stats.{k} = {s} ahead of the state's {v}"
            );
            let prev = last.get(k).copied().unwrap_or(0);
            assert!(v >= prev, "round {round}: {k} went back from {prev} to {v}");
            last.insert(k, v);
        }
        // Every bug bundle the state names is whole: meta.json parses and names it, the model
        // loads.
        for (sig, e) in state["signatures"].as_object().unwrap() {
            let b = out.join("findings").join(e["id"].as_str().unwrap());
            let meta = json(&b.join("meta.json"));
            assert_eq!(
                meta["signature"].as_str(),
                Some(sig.as_str()),
                "round {round}"
            );
            mutagraph_mutators::ir::Model::load(b.join("original.onnx"))
                .unwrap_or_else(|e| panic!("round {round}: {}: {e}", b.display()));
        }
        for slot in state["pool"].as_array().unwrap() {
            if let Some(id) = slot["corpus"].as_str() {
                check_entry(&out, id);
            }
        }
        let now = corpus(&out);
        for (name, bytes) in &seen {
            assert_eq!(
                now.get(name),
                Some(bytes),
                "round {round}: {name} lost or changed"
            );
        }
        for name in now.keys() {
            if let Some(id) = name.strip_suffix(".onnx")
                && checked.insert(id.to_string())
            {
                check_entry(&out, id);
            }
        }
        seen = named(&out);
    }
    // A last session that ends by itself.
    let target = last.get("iterations").copied().unwrap_or(0) + 5;
    let mut child = start(&out, &target.to_string(), &[]);
    let status = child.wait().unwrap();
    assert!(status.success());
    let state = json(&out.join("state.json"));
    assert_eq!(state["iteration"].as_u64().unwrap(), target);
    eprintln!("iterations committed across the kills: {}", target - 5);
    assert!(target > 5, "no progress was committed across the kills");
    let now = corpus(&out);
    for (name, bytes) in &seen {
        assert_eq!(now.get(name), Some(bytes), "{name} lost or changed");
    }
    // The time series has only whole lines.
    let ts = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    assert!(ts.ends_with('\n'));
    for l in ts.lines().skip(1) {
        assert_eq!(l.split(',').count(), 9, "bad line {l:?}");
    }
}

/// Every trace parses and names records that are on disk, every model has its trace, and every
/// entry rebuilds (its model, or its records replayed, matching the recorded SHA-256).
/// Returns how many entries are trace-only.
fn check_corpus(out: &Path, round: usize) -> usize {
    let dir = out.join("corpus");
    let mut trace_only = 0;
    for name in corpus(out).keys() {
        if let Some(id) = name.strip_suffix(".onnx") {
            assert!(
                dir.join(format!("{id}.trace.json")).exists(),
                "round {round}: model {id} without its trace"
            );
        }
    }
    for id in corpus::store::entry_ids(&dir).unwrap() {
        let t = corpus::read_trace(&dir, &id).unwrap();
        corpus::records(&dir, &id, &t).unwrap_or_else(|e| panic!("round {round}: {e}"));
        corpus::store::rebuild(out, &id, &t).unwrap_or_else(|e| panic!("round {round}: {e}"));
        if !dir.join(format!("{id}.onnx")).exists() {
            trace_only += 1;
        }
    }
    trace_only
}

#[test]
fn kill_nine_under_a_tiny_disk_budget_leaves_every_entry_rebuildable() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k");
    let mut rng = Lcg(20261127);
    let budget = ["--max-disk", "4M"];
    let mut last_iteration = 0;
    let mut trace_only_seen = 0;
    for round in 0..8 {
        let before = committed(&out);
        let mut child = start(&out, "100000", &budget);
        // Each kill lands after this session committed (pruning runs after commits).
        while committed(&out) == before && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_secs_f64(0.3 + 1.5 * rng.unit()));
        assert!(
            child.try_wait().unwrap().is_none(),
            "round {round}: the campaign exited by itself (needs `pip install onnxruntime==1.31.1`)"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        let state = json(&out.join("state.json"));
        let it = state["iteration"].as_u64().unwrap();
        assert!(it >= last_iteration, "round {round}: iterations went back");
        last_iteration = it;
        let p = &state["pruned"];
        // What the committed state names is whole.
        for slot in state["pool"].as_array().unwrap() {
            if let Some(id) = slot["corpus"].as_str() {
                check_entry(&out, id);
            }
        }
        let n = check_corpus(&out, round);
        eprintln!("round {round}: iteration {it}, {n} trace-only entries, pruned {p}");
        trace_only_seen += n;
    }
    assert!(trace_only_seen > 0, "no trace-only entry was ever checked");
    // A last session that ends by itself, then the export rebuilds every entry.
    let mut child = start(&out, &(last_iteration + 5).to_string(), &budget);
    assert!(child.wait().unwrap().success());
    check_corpus(&out, 99);
    let state = json(&out.join("state.json"));
    let p = &state["pruned"];
    assert!(
        p["demoted"].as_u64().unwrap() > 0,
        "the budget's deletions were never counted: {p}"
    );
    let export = dir.path().join("export");
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["corpus", "export", out.to_str().unwrap(), "--out"])
        .arg(&export)
        .args(["--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entries = r["entries"].as_u64().unwrap();
    assert!(entries > 0);
    assert_eq!(
        r["copied"].as_u64().unwrap() + r["rebuilt"].as_u64().unwrap(),
        entries
    );
    assert_eq!(std::fs::read_dir(&export).unwrap().count() as u64, entries);
}
