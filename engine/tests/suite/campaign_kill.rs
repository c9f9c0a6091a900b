//! `kill -9` a campaign at pseudo-random moments and resume it each time: the state always
//! parses and points at complete corpus files, counts never go backwards, nothing written
//! before is lost or changed.
use mutagraph_mutators::mutation::{Record, replay_trace};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn start(out: &Path, iterations: &str) -> std::process::Child {
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
    let dir = out.join("corpus");
    if !dir.exists() {
        return BTreeMap::new();
    }
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_str().unwrap().starts_with('.'))
        .map(|p| {
            (
                p.file_name().unwrap().to_str().unwrap().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
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

fn check_entry(out: &Path, id: &str) {
    let p = out.join("corpus").join(format!("{id}.onnx"));
    let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let m = mutagraph_mutators::ir::Model::from_bytes(&bytes).unwrap();
    mutagraph_mutators::ir::validate::validate(&m).unwrap();
    let t = json(&out.join("corpus").join(format!("{id}.trace.json")));
    let seed =
        mutagraph_mutators::ir::Model::load(out.join(t["seed_file"].as_str().unwrap())).unwrap();
    let records: Vec<Record> = serde_json::from_value(t["records"].clone()).unwrap();
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
        let mut child = start(&out, "100000");
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
        seen = now;
    }
    // A last session that ends by itself.
    let target = last.get("iterations").copied().unwrap_or(0) + 5;
    let mut child = start(&out, &target.to_string());
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
