//! `mutagraph recheck BUNDLE...`: runs a bug bundle again, from its files alone, in fresh
//! worker processes, through the same triage as the campaign: the bundle reproduces when a
//! reported finding has its signature. Where the library has a Python package (ONNX Runtime,
//! tract), `--repro` also runs the bundle's own `repro.py` in a fresh Python process and asks
//! that it says `REPRODUCED` too.
use super::PoolArgs;
use crate::bundle::read_meta;
use anyhow::{Context, Result, anyhow};
use mutagraph_backends::catalog;
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::inputs;
use mutagraph_backends::value::{NamedValues, Value};
use mutagraph_backends::worker::{Pool, PoolOptions};
use mutagraph_ir::Model;
use mutagraph_oracles::triage::{Reproducer, Triage, ValueMap, Verdict};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::process::ExitCode;

/// The arguments of `mutagraph recheck`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Bundle directories, or directories of bundles (a campaign or its `findings/`).
    #[arg(required = true)]
    pub bundles: Vec<PathBuf>,
    /// Backends (default: the campaign's).
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// Also run each bundle's `repro.py` (the library's own Python package) and require
    /// it to say REPRODUCED where the library has one.
    #[arg(long)]
    pub repro: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub pool: PoolArgs,
}

/// Runs `mutagraph recheck`.
pub fn main(a: Args, _g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args {
        bundles,
        backends,
        repro,
        json,
        pool,
    } = a;
    let opts = pool.options()?;
    let dirs = self::bundles(&bundles)?;
    let mut all = Vec::new();
    let mut failed = 0usize;
    for d in &dirs {
        let r = recheck(d, &backends, &opts, repro)?;
        let py_ok = r
            .repro_py
            .as_ref()
            .is_none_or(|l| l.starts_with("REPRODUCED") || !needs_python(d));
        if !(r.reproduced && py_ok) {
            failed += 1;
        }
        if !json {
            crate::outln!(
                "{} {}: {} ({})",
                if r.reproduced {
                    "REPRODUCED"
                } else {
                    "NOT REPRODUCED"
                },
                d.display(),
                r.signature,
                r.model
            );
            if !r.reproduced {
                crate::outln!("  {}", r.detail);
            }
            if let Some(l) = &r.repro_py {
                crate::outln!("  repro.py: {l}");
            }
        }
        all.push(r);
    }
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&all)?);
    } else {
        crate::outln!(
            "{} of {} bundles reproduce",
            dirs.len() - failed,
            dirs.len()
        );
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The outcome of re-checking one bundle.
#[derive(Clone, Debug, Serialize)]
pub struct Rechecked {
    /// The bundle directory.
    pub bundle: PathBuf,
    /// Its signature.
    pub signature: String,
    /// The model that was run (`minimized.onnx` or `original.onnx`).
    pub model: String,
    /// True when the triage reported the same signature again.
    pub reproduced: bool,
    /// What the re-run found instead, or the verdict.
    pub detail: String,
    /// `repro.py`'s last line, when it was run.
    pub repro_py: Option<String>,
}

/// Reads a bundle's model and inputs (the minimized ones when it has them).
pub fn bundle_case(dir: &Path) -> Result<(String, Model, NamedValues)> {
    let minimized = dir.join("minimized.onnx").exists();
    let (file, prefix) = if minimized {
        ("minimized.onnx", "minimized_")
    } else {
        ("original.onnx", "")
    };
    let path = dir.join(file);
    let model = Model::load(&path).map_err(|e| e.in_file(&path))?;
    let npz = dir.join(format!("{prefix}inputs.npz"));
    let values: NamedValues = if npz.exists() {
        mutagraph_oracles::bundle::read_npz(&npz)
            .with_context(|| format!("reading {}", npz.display()))?
            .into_iter()
            .map(|(n, t)| (n, Value::Tensor(t)))
            .collect()
    } else {
        inputs::read(&model, &dir.join(format!("{prefix}inputs")))
            .map_err(|e| anyhow!("{}: {e}", dir.display()))?
    };
    Ok((file.to_string(), model, values))
}

/// Re-checks one bundle with a fresh pool; `backends` overrides the campaign's set.
pub fn recheck(
    dir: &Path,
    backends: &[String],
    pool_opts: &PoolOptions,
    run_repro: bool,
) -> Result<Rechecked> {
    let meta = read_meta(dir)?;
    let (file, model, values) = bundle_case(dir)?;
    let campaign: Vec<String> = meta.config["backends"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|b| b.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let all = if !backends.is_empty() {
        backends.to_vec()
    } else if !campaign.is_empty() {
        campaign
    } else {
        catalog::default_set()
            .into_iter()
            .map(String::from)
            .collect()
    };
    let run_on = Reproducer::backends_for(&meta.finding, &all);
    let tol = Tolerance::by_name(&meta.tolerance).unwrap_or(Tolerance::APPROXIMATE);
    let mut pool = Pool::new(pool_opts.clone());
    let mut rep = Reproducer::new(
        &mut pool,
        Triage::new(&run_on, tol),
        meta.signature.clone(),
        ValueMap::default(),
    );
    let check = rep.check_with(&model, values);
    pool.shutdown();
    let (reproduced, detail) = match check {
        None => (false, "a backend's worker could not be started".to_string()),
        Some(c) => match c.found {
            // The same bug, under a narrower signature than the one the bundle was filed under
            // (the rewrite a newer triage finds it needs).
            Some(t) if t.finding.signature() != meta.signature => (
                true,
                format!(
                    "{} (now filed as {})",
                    t.finding.message,
                    t.finding.signature()
                ),
            ),
            Some(t) => (true, t.finding.message.clone()),
            None => {
                let seen: Vec<String> = c
                    .all
                    .iter()
                    .map(|t| match &t.verdict {
                        Verdict::Report => t.finding.signature(),
                        v => format!(
                            "{} ({}: {})",
                            t.finding.signature(),
                            v.name(),
                            verdict_why(v)
                        ),
                    })
                    .collect();
                (
                    false,
                    if seen.is_empty() {
                        "no finding at all".to_string()
                    } else {
                        format!("found instead: {}", seen.join("; "))
                    },
                )
            }
        },
    };
    let repro_py = if run_repro && dir.join("repro.py").exists() {
        Some(run_repro_py(dir)?)
    } else {
        None
    };
    Ok(Rechecked {
        bundle: dir.to_path_buf(),
        signature: meta.signature,
        model: file,
        reproduced,
        detail,
        repro_py,
    })
}

fn verdict_why(v: &Verdict) -> String {
    match v {
        Verdict::Report => String::new(),
        Verdict::Unstable(w)
        | Verdict::Undefined(w)
        | Verdict::Unwitnessed(w)
        | Verdict::Unsupported(w)
        | Verdict::Unlocalized(w)
        | Verdict::Ours(w) => w.chars().take(160).collect(),
    }
}

/// Runs `python3 repro.py` in the bundle and returns its last `REPRODUCED` / `NOT REPRODUCED`
/// / `CANNOT JUDGE` line (or what went wrong); only the first counts as reproduced.
fn run_repro_py(dir: &Path) -> Result<String> {
    let out = Command::new("python3")
        .arg("repro.py")
        .current_dir(dir)
        .output()
        .with_context(|| format!("running python3 repro.py in {}", dir.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .rev()
        .find(|l| {
            l.starts_with("REPRODUCED")
                || l.starts_with("NOT REPRODUCED")
                || l.starts_with("CANNOT JUDGE")
        })
        .map(str::to_string)
        .unwrap_or_else(|| {
            format!(
                "NOT REPRODUCED: repro.py ended without a verdict (exit {:?}): {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or_default()
            )
        }))
}

/// The bundles named by `paths`: bundle directories, or directories of bundles (a campaign's
/// `findings/`, or the campaign directory itself).
pub fn bundles(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.join("meta.json").exists() {
            out.push(p.clone());
            continue;
        }
        let dir = if p.join("findings").is_dir() {
            p.join("findings")
        } else {
            p.clone()
        };
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| format!("{}: not a bundle or a directory of bundles", p.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|d| d.join("meta.json").exists())
            .collect();
        found.sort();
        if found.is_empty() {
            return Err(anyhow!("{}: no bundle (no meta.json) in it", p.display()));
        }
        out.extend(found);
    }
    Ok(out)
}

/// Whether a bundle's library has a Python package `repro.py` runs (ONNX Runtime, tract).
fn needs_python(dir: &Path) -> bool {
    read_meta(dir).is_ok_and(|m| matches!(m.reproduce.library.as_str(), "onnxruntime" | "tract"))
}
