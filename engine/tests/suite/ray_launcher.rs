//! The Ray launcher (`engine/ray/mutagraph_ray.py`) on a local Ray head: two instances of a
//! campaign on the zoo, one of whose mutagraph processes is SIGKILLed once it has committed
//! iterations, corpus entries and a finding. The launcher must restart it with the time left;
//! the instance resumes (a second session in its state) without losing anything written before
//! the kill, and both instances end at the run's time limit with exit 0.
//!
//! Needs python3 with `ray` (`bash .ci/setup` installs it); fails, never skips, without it.
//! The head is `ray start --head --block` on loopback ports of its own, ended by SIGTERM to
//! that process when the test ends, however it ends (not `ray stop`, which stops every Ray
//! process on the machine, another test's or another user's included).
use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The ray version `.ci/setup` installs.
const RAY: &str = "2.60.0";

/// The Ray environment of the head and the launcher:
/// - Ray's single-node mode (made for the platforms without clusters, an ordinary switch
///   elsewhere): the head, its workers and the driver all use the loopback address (otherwise
///   Ray turns 127.0.0.1 into the machine's own address);
/// - token authentication with a token of the test's own, whatever `~/.ray/auth_token` holds
///   (Ray enables tokens for a head when that file exists, and a driver without it is refused);
/// - no usage statistics; no RAY_ADDRESS from the caller.
fn ray_env(cmd: &mut Command, dir: &Path) {
    let token = dir.join("ray-token");
    if !token.exists() {
        let mut bytes = [0u8; 16];
        let mut random = std::fs::File::open("/dev/urandom").unwrap();
        random.read_exact(&mut bytes).unwrap();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        std::fs::write(&token, hex).unwrap();
    }
    cmd.env("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        .env("RAY_AUTH_MODE", "token")
        .env("RAY_AUTH_TOKEN_PATH", &token)
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .env_remove("RAY_ADDRESS");
}

/// The run's length. Instance i1 (campaign seed 3: the launcher's `--seed 2` plus one) files
/// its first finding at iteration 1 of the zoo on reference and ORT; it is killed once it has
/// committed `KILL_AT` iterations.
const RUN_S: u64 = 70;
const KILL_AT: u64 = 60;

/// A child process ended when dropped: SIGTERM, then SIGKILL to its process group if it is
/// still there after `grace`.
struct Guard {
    child: Child,
    grace: Duration,
}

impl Guard {
    fn pid(&self) -> Pid {
        Pid::from_raw(self.child.id() as i32).unwrap()
    }

    /// Waits up to `limit` for the process to end.
    fn wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + limit;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s);
            }
            if Instant::now() > end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        let _ = kill_process(self.pid(), Signal::TERM);
        if self.wait(self.grace).is_none() {
            let _ = kill_process_group(self.pid(), Signal::KILL);
            let _ = self.child.wait();
        }
    }
}

/// `n` distinct loopback ports free at the time of the call.
fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<_> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

/// Starts a Ray head on this machine's loopback with 4 CPUs; returns it and its address.
fn start_head(dir: &Path) -> (Guard, String) {
    // Not --ray-client-server-port: the core package has no Ray Client server.
    let p = free_ports(8);
    let flags = [
        "--port",
        "--dashboard-port",
        "--dashboard-agent-grpc-port",
        "--dashboard-agent-listen-port",
        "--metrics-export-port",
        "--node-manager-port",
        "--object-manager-port",
        "--runtime-env-agent-port",
    ];
    let log_path = dir.join("head.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "ray.scripts.scripts", "start", "--head", "--block"])
        .args(["--node-ip-address", "127.0.0.1", "--num-cpus", "4"])
        .args(["--include-dashboard=false", "--disable-usage-stats"])
        .args(["--object-store-memory", "100000000"])
        .arg("--temp-dir")
        .arg(dir.join("ray"));
    for (flag, port) in flags.iter().zip(&p) {
        cmd.arg(flag).arg(port.to_string());
    }
    ray_env(&mut cmd, dir);
    let child = cmd
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .process_group(0)
        .spawn()
        .expect("python3 is needed");
    let mut head = Guard {
        child,
        grace: Duration::from_secs(45),
    };
    let end = Instant::now() + Duration::from_secs(90);
    loop {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        if text.contains("Ray runtime started") {
            break;
        }
        if let Some(s) = head.child.try_wait().unwrap() {
            panic!("ray start --head ended ({s}):\n{text}");
        }
        assert!(Instant::now() < end, "no Ray head after 90 s:\n{text}");
        std::thread::sleep(Duration::from_millis(200));
    }
    (head, format!("127.0.0.1:{}", p[0]))
}

fn json(p: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(p).ok()?).ok()
}

/// The files of `dir` (not the temporary ones, whose names start with a dot), with their bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && !p.file_name().unwrap().to_str().unwrap().starts_with('.'))
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// The bug bundles of a campaign (`findings/`), with their `original.onnx`.
fn bundles(out: &Path) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(out.join("findings")) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_str().unwrap().starts_with('.'))
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            (name, std::fs::read(p.join("original.onnx")).unwrap())
        })
        .collect()
}

fn committed(out: &Path) -> u64 {
    json(&out.join("state.json"))
        .and_then(|s| s["iteration"].as_u64())
        .unwrap_or(0)
}

/// Checks that the Ray package is installed (else the test fails saying what to install).
fn require_ray() {
    let have = Command::new("python3")
        .args(["-c", "import ray; print(ray.__version__)"])
        .output()
        .expect("python3 is needed: apt-get install python3");
    assert!(
        have.status.success(),
        "the Ray launcher test needs the ray package: pip install ray=={RAY} (bash .ci/setup \
         installs it)\n{}",
        String::from_utf8_lossy(&have.stderr)
    );
}

/// Starts the launcher: two instances on the zoo for [`RUN_S`] seconds, syncing through
/// `sync`, its output into `log`.
fn start_launcher(dir: &Path, address: &str, sync: &Path, log: &Path) -> Guard {
    let out = std::fs::File::create(log).unwrap();
    let mut cmd = Command::new("python3");
    ray_env(&mut cmd, dir);
    let child = cmd
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ray/mutagraph_ray.py"))
        .arg("--sync-dir")
        .arg(sync)
        .args(["--instances", "2", "--time", &format!("{RUN_S}s")])
        .args(["--binary", env!("CARGO_BIN_EXE_mutagraph")])
        .args(["--address", address, "--cpus-per-instance", "2"])
        // i1 runs campaign seed 3, which files a finding at iteration 1 (seeds 1 and 2 none
        // in their first 50).
        .args(["--seed", "2"])
        .args(["--", "--seeds", "zoo", "--backends", "reference,ort"])
        .args(["--no-minimize", "--quiet"])
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .process_group(0)
        .spawn()
        .unwrap();
    // Killed at once if the test fails while it runs: its actors go with it, and the campaigns
    // with them.
    Guard {
        child,
        grace: Duration::ZERO,
    }
}

/// Waits until instance i1 has committed [`KILL_AT`] iterations; returns its process id, as
/// the launcher's record names it.
fn wait_for_i1(launcher: &mut Guard, record: &Path, i1: &Path, log: &dyn Fn() -> String) -> u64 {
    let limit = Instant::now() + Duration::from_secs(RUN_S / 2 + 20);
    loop {
        if let Some(s) = launcher.child.try_wait().unwrap() {
            panic!("the launcher ended ({s}) early:\n{}", log());
        }
        let pid = json(record).and_then(|r| r["instances"]["i1"]["pid"].as_u64());
        if let Some(pid) = pid
            && committed(i1) >= KILL_AT
        {
            return pid;
        }
        assert!(
            Instant::now() < limit,
            "i1 did not commit {KILL_AT} iterations in time:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The launcher's record: both instances finished at the time limit, i1 restarted once after
/// the SIGKILL of `pid`, with the same command line and the time left.
fn check_record(r: &Value, pid: u64, text: &str) {
    assert_eq!(r["done"], true, "{r:#}");
    let deadline = r["deadline_unix"].as_f64().unwrap();
    for (name, restarts, codes) in [("i0", 0, vec![0]), ("i1", 1, vec![-9, 0])] {
        let inst = &r["instances"][name];
        assert_eq!(inst["state"], "finished", "{name}: {inst:#}\n{text}");
        assert_eq!(inst["restarts"], restarts, "{name}: {inst:#}\n{text}");
        assert_eq!(
            inst["exit_codes"],
            serde_json::json!(codes),
            "{name}: {inst:#}"
        );
        // It ended at the time limit: its last run was given the time left, and used it.
        let last = inst["runs"].as_array().unwrap().last().unwrap();
        let end = last["end"].as_f64().unwrap();
        assert!(
            end >= deadline - 1.0 && end <= deadline + 12.0,
            "{name} ended {:.1} s after the time limit: {inst:#}",
            end - deadline
        );
    }
    let runs = r["instances"]["i1"]["runs"].as_array().unwrap();
    assert_eq!(runs[0]["pid"].as_u64(), Some(pid));
    assert_eq!(runs[0]["signal"], "SIGKILL");
    assert_ne!(runs[1]["pid"].as_u64(), Some(pid));
    // The restart got the same command line with the time left, not the whole run again.
    let time_at = |run: &Value| -> (Vec<String>, usize) {
        let a = run["argv"].as_array().unwrap();
        let at = a.iter().position(|v| v == "--time").unwrap() + 1;
        (a.iter().map(|v| v.as_str().unwrap().into()).collect(), at)
    };
    for run in runs {
        let (argv, at) = time_at(run);
        let ms = argv[at].strip_suffix("ms").unwrap();
        let given = ms.parse::<f64>().unwrap() / 1000.0;
        let start = run["start"].as_f64().unwrap();
        assert!(
            (start + given - deadline).abs() < 0.5,
            "a run started at {start} was given {given} s, the time limit is {deadline}"
        );
    }
    let without_time = |run: &Value| -> Vec<String> {
        let (mut argv, at) = time_at(run);
        argv.remove(at);
        argv
    };
    assert_eq!(
        without_time(&runs[0]),
        without_time(&runs[1]),
        "restarted with another command line"
    );
}

/// What i1 had on disk before the kill.
struct BeforeKill {
    corpus: BTreeMap<String, Vec<u8>>,
    found: BTreeMap<String, Vec<u8>>,
    committed: u64,
}

/// i1 resumed (a second session, from at least what was committed before the kill; i0 had
/// one), and nothing written before the kill was lost or changed; returns where it resumed.
fn check_resumed(sync: &Path, i1: &Path, before: &BeforeKill) -> u64 {
    let state = json(&i1.join("state.json")).unwrap();
    let sessions = state["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "sessions of i1: {sessions:?}");
    let resumed = sessions[1]["iteration"].as_u64().unwrap();
    assert!(
        resumed >= before.committed,
        "i1 resumed at iteration {resumed}, before {} committed ahead of the kill",
        before.committed
    );
    assert!(
        state["iteration"].as_u64().unwrap() > resumed,
        "i1 made no progress after the restart"
    );
    let s0 = json(&sync.join("i0/state.json")).unwrap();
    assert_eq!(s0["sessions"].as_array().unwrap().len(), 1);
    // A bundle may since have moved to merged/ or unconfirmed/ (the campaign's own
    // judgement), never vanished.
    let now = files(&i1.join("corpus"));
    for (name, bytes) in &before.corpus {
        assert_eq!(now.get(name), Some(bytes), "corpus/{name} lost or changed");
    }
    for (id, original) in &before.found {
        let kept = ["findings", "merged", "unconfirmed"]
            .iter()
            .map(|d| i1.join(d).join(id).join("original.onnx"))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("bundle {id} lost"));
        assert_eq!(
            &std::fs::read(kept).unwrap(),
            original,
            "bundle {id} changed"
        );
    }
    resumed
}

#[test]
fn a_killed_instance_is_restarted_and_resumes_losing_nothing() {
    require_ray();
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let (_head, address) = start_head(dir.path());
    let sync = dir.path().join("sync");
    let launcher_log = dir.path().join("launcher.log");
    let mut launcher = start_launcher(dir.path(), &address, &sync, &launcher_log);
    let log = || std::fs::read_to_string(&launcher_log).unwrap_or_default();
    let record = sync.join("ray-launcher.json");
    let i1 = sync.join("i1");

    let pid = wait_for_i1(&mut launcher, &record, &i1, &log);
    // The lock names its holder: the record's pid is the campaign of i1.
    let holder = std::fs::read_to_string(i1.join(".lock")).unwrap();
    assert_eq!(
        holder.trim(),
        pid.to_string(),
        "the lock of i1 names another process"
    );
    let before = BeforeKill {
        corpus: files(&i1.join("corpus")),
        found: bundles(&i1),
        committed: committed(&i1),
    };
    kill_process(Pid::from_raw(pid as i32).unwrap(), Signal::KILL).unwrap();
    let killed_at = Instant::now();
    assert!(!before.corpus.is_empty(), "no corpus entry before the kill");
    assert!(
        !before.found.is_empty(),
        "no finding before the kill (i1 files one at iteration 1)"
    );

    let status = launcher
        .wait(Duration::from_secs(RUN_S + 60))
        .unwrap_or_else(|| {
            panic!(
                "the launcher still runs 60 s past the time limit:\n{}",
                log()
            )
        });
    let text = log();
    assert!(status.success(), "the launcher failed ({status}):\n{text}");
    check_record(&json(&record).expect("ray-launcher.json"), pid, &text);
    let resumed = check_resumed(&sync, &i1, &before);
    assert!(text.contains("report: "), "no report command:\n{text}");
    eprintln!(
        "ray launcher: killed i1 at iteration {} ({} corpus files, {} bundles), resumed \
         at {resumed}; {:.0} s after the kill, {:.0} s in all",
        before.committed,
        before.corpus.len(),
        before.found.len(),
        killed_at.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}
