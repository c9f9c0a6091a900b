//! The machine a finding was seen on, as an upstream report states it: OS, CPU, and the
//! versions of Python and of the packages a reproduction uses. Read once per process.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// OS, CPU and package versions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// The OS (`Debian GNU/Linux 12 (bookworm)`, else `linux x86_64`).
    pub os: String,
    /// The CPU model.
    pub cpu: String,
    /// Python's version, when a `python3` runs here.
    pub python: Option<String>,
    /// Versions of the Python packages a reproduction uses (`numpy`, `onnx`, `onnxruntime`,
    /// `tract`), those installed.
    pub packages: BTreeMap<String, String>,
}

/// The environment of this machine (computed once).
pub fn current() -> &'static Environment {
    static ENV: OnceLock<Environment> = OnceLock::new();
    ENV.get_or_init(read)
}

fn read() -> Environment {
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .map(|v| format!("{v} ({})", std::env::consts::ARCH))
        .unwrap_or_else(|| format!("{} {}", std::env::consts::OS, std::env::consts::ARCH));
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    let (python, packages) = python_versions();
    Environment {
        os,
        cpu,
        python,
        packages,
    }
}

/// Python's version and the versions of the reproduction packages, from one `python3` run
/// (at most 20 s; nothing when there is no Python).
fn python_versions() -> (Option<String>, BTreeMap<String, String>) {
    const SCRIPT: &str = "import sys, importlib.metadata as m\n\
        print(sys.version.split()[0])\n\
        for p in ('numpy', 'onnx', 'onnxruntime', 'tract'):\n    \
        try: print(p, m.version(p))\n    \
        except Exception: pass\n";
    let child = Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return (None, BTreeMap::new());
    };
    let t = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if t.elapsed() < Duration::from_secs(20) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return (None, BTreeMap::new());
            }
        }
    }
    let Ok(out) = child.wait_with_output() else {
        return (None, BTreeMap::new());
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let python = lines.next().map(str::to_string);
    let packages = lines
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect();
    (python, packages)
}
