//! The `mutagraph` command line: a thin layer over the library crates.
use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use mutagraph_engine::inspect::inspect;
use mutagraph_ir::{Model, Registry, validate};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "mutagraph",
    version,
    about = "Find bugs in DL inference libraries by mutating ONNX model graphs"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Show a model: opsets, inputs/outputs, op histogram, parameters, every value's inferred type.
    Inspect {
        /// The model file.
        model: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Show the model even when it fails validation (exit code stays 1).
        #[arg(long)]
        no_fail: bool,
    },
    /// Re-export a model through the IR (validated first).
    Convert {
        /// Input model.
        input: PathBuf,
        /// Output model (written atomically).
        output: PathBuf,
        /// Write even when validation fails.
        #[arg(long)]
        force: bool,
    },
    /// List the ops of the registry with their opsets.
    Ops {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Serve one backend over the worker protocol on stdin/stdout (used by the engine).
    #[command(hide = true)]
    Worker,
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Worker => {
            mutagraph_backends::worker::serve().context("worker protocol")?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Inspect {
            model,
            json,
            no_fail,
        } => {
            let mut m = Model::load(&model)?;
            let ins = inspect(&model.display().to_string(), &mut m);
            if !ins.errors.is_empty() && !no_fail {
                bail!(
                    "{}: invalid model: {}",
                    model.display(),
                    ins.errors.join("; ")
                );
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&ins)?);
            } else {
                print!("{}", ins.to_text());
            }
            Ok(if ins.errors.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Cmd::Convert {
            input,
            output,
            force,
        } => {
            let m = Model::load(&input)?;
            if let Err(e) = validate::validate(&m) {
                if !force {
                    bail!("{}: {e} (use --force to write it anyway)", input.display());
                }
                eprintln!("warning: {}: {e}", input.display());
            }
            m.save(&output)
                .with_context(|| format!("writing {}", output.display()))?;
            eprintln!(
                "wrote {} ({} nodes)",
                output.display(),
                m.graph.node_count()
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Ops { json } => {
            let reg = Registry::global();
            if json {
                let specs: Vec<_> = reg.iter().collect();
                println!("{}", serde_json::to_string_pretty(&specs)?);
            } else {
                println!(
                    "{:<36} {:<10} {:<24} {:>7} {:>7} {:>6} {:>8}",
                    "op", "category", "opsets", "inputs", "outputs", "attrs", "buckets"
                );
                for s in reg.iter() {
                    let name = if s.domain.is_empty() {
                        s.op_type.to_string()
                    } else {
                        format!("{}.{}", s.domain, s.op_type)
                    };
                    let vers: Vec<String> = s.versions.iter().map(|v| v.to_string()).collect();
                    let (ilo, ihi) = s.input_arity();
                    let (olo, ohi) = s.output_arity();
                    let ar = |lo: usize, hi: Option<usize>| match hi {
                        Some(h) if h == lo => lo.to_string(),
                        Some(h) => format!("{lo}-{h}"),
                        None => format!("{lo}+"),
                    };
                    println!(
                        "{:<36} {:<10} {:<24} {:>7} {:>7} {:>6} {:>8}",
                        name,
                        format!("{:?}", s.category),
                        vers.join(","),
                        ar(ilo, ihi),
                        ar(olo, ohi),
                        s.attrs.len(),
                        s.bucket_count()
                    );
                }
                println!("{} ops", reg.len());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
