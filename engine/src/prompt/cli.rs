//! The `mutagraph prompt` subcommands.
use super::judge::Judge;
use super::{LlmArgs, generate, oracle, oracle_eval, session, transfer};
use anyhow::{Result, anyhow, bail};
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::worker::{Pool, PoolOptions};
use mutagraph_prompts::atoc::{self, Decision, SpecCache, SpecSource};
use mutagraph_prompts::crossprobe::{self, AlignmentDb, SupportTable};
use mutagraph_prompts::grammar::onnx_text::{self, Task};
use mutagraph_prompts::llm::Message;
use mutagraph_prompts::template;
use mutagraph_prompts::yanhui;
use std::path::PathBuf;
use std::process::ExitCode;

/// `mutagraph prompt ...`.
#[derive(clap::Subcommand, Debug)]
pub enum PromptCmd {
    /// Show a prompt without calling a model: `list`, `template NAME [--var k=v]...`, or the
    /// prompt another subcommand would send (`transfer FILE`, `generate [--cluster ID]`,
    /// `oracle CASE`).
    Render {
        #[command(subcommand)]
        what: RenderWhat,
    },
    /// CrossProbe: transfer bug snippets from PyTorch / TensorFlow (`.py`, or `.md` issues
    /// with python blocks; directories are expanded) into ONNX tests, judged on the backends.
    Transfer {
        /// Snippet files or directories of them.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// YANHUI: generate tests from clusters of historical bugs (shipped cases, plus the
    /// findings of `--findings DIR`), judged on the backends.
    Generate {
        #[command(flatten)]
        kb_args: GenArgs,
        /// How many tests to generate (clusters are taken in turn).
        #[arg(short = 'n', long, default_value_t = 5)]
        n: usize,
        #[command(flatten)]
        run: RunArgs,
    },
    /// The knowledge base's clusters at YANHUI's threshold (6).
    Clusters {
        /// Campaign or findings directories whose bundles join the knowledge base.
        #[arg(long)]
        findings: Vec<PathBuf>,
    },
    /// ATOC: ask k times which backend is right on a test case (a bug bundle directory or a
    /// JSON case file), from the op's specification; prints the verdict as JSON. Temperature:
    /// --temperature, else $MUTAGRAPH_LLM_TEMPERATURE, else 0.7 when k > 1 and 0 when k = 1;
    /// k > 1 at temperature 0 is refused (k copies of one answer).
    Oracle {
        /// A bundle directory (`findings/<id>/`) or a case file.
        case: PathBuf,
        /// Answers to vote over.
        #[arg(short, long, default_value_t = 5)]
        k: usize,
    },
    /// ATOC's accuracy: labelled cases built from the ONNX backend test suite (expected
    /// outputs against planted wrong ones, and planted-bug backends), each asked k times;
    /// prints accuracy, decided share and parse rate (temperature as for `oracle`).
    OracleEval {
        /// Answers to vote over, per case.
        #[arg(short, long, default_value_t = 5)]
        k: usize,
        /// Output directory: `oracle-eval-report.json`.
        #[arg(long)]
        out: Option<PathBuf>,
        /// List the cases (id, op, label, prompt size) without asking the model.
        #[arg(long)]
        list: bool,
        /// Print the prompt of the case with this id (from --list) without asking the model.
        #[arg(long)]
        show: Option<String>,
        /// The suite's root (default: $MUTAGRAPH_SUITE_DIR, else
        /// /usr/share/libonnx-testdata/data).
        #[arg(long)]
        suite: Option<PathBuf>,
        /// Most characters of each op's documentation in the prompt (cut at its first
        /// example); 0 keeps the whole specification.
        #[arg(long, default_value_t = oracle_eval::DOC_CHARS)]
        doc_chars: usize,
    },
}

/// The temperature of `oracle` and `oracle-eval`: the flag or `MUTAGRAPH_LLM_TEMPERATURE`
/// (which the provider applies to every request), else 0.7 when k > 1 (k answers must be able
/// to differ) and 0 for one answer.
pub fn oracle_temperature(llm: &LlmArgs, k: usize) -> Result<f32> {
    Ok(llm
        .config()?
        .temperature
        .unwrap_or(if k > 1 { 0.7 } else { 0.0 }))
}

/// What a generating command runs on and where it writes.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// Output directory: `<command>-report.json` and bug bundles under `findings/`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Backends, comma-separated (default: reference,ort,tract,burn-ndarray).
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
}

/// How YANHUI picks its examples.
#[derive(clap::Args, Debug, Clone)]
pub struct GenArgs {
    /// Only this cluster (ids from `mutagraph prompt clusters`).
    #[arg(long)]
    pub cluster: Option<String>,
    /// Examples per prompt (2-5).
    #[arg(long, default_value_t = 3)]
    pub examples: usize,
    /// Campaign or findings directories whose bundles join the knowledge base.
    #[arg(long)]
    pub findings: Vec<PathBuf>,
}

fn default_backends(given: &[String]) -> Vec<String> {
    if given.is_empty() {
        mutagraph_backends::catalog::default_set()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        given.to_vec()
    }
}

/// What `prompt render` shows.
#[derive(clap::Subcommand, Debug)]
pub enum RenderWhat {
    /// Every template with its version and variables.
    List,
    /// One template file, rendered with the given variables.
    Template {
        /// `name` (newest version) or `name.vN`.
        name: String,
        /// Variables, `key=value` (repeatable; `key=@FILE` reads the value from FILE).
        #[arg(long = "var", value_parser = parse_var)]
        vars: Vec<(String, String)>,
    },
    /// The CrossProbe prompt of one snippet (after screening).
    Transfer {
        /// A `.py` snippet or a `.md` issue.
        file: PathBuf,
        /// Backends whose support the screening counts on (default: the default backends).
        #[arg(long, value_delimiter = ',')]
        backends: Vec<String>,
        /// Print the GBNF grammar the answers are sampled under instead of the prompt.
        #[arg(long)]
        grammar: bool,
    },
    /// The YANHUI prompt of generation `--index` (default 0).
    Generate {
        #[command(flatten)]
        kb_args: GenArgs,
        /// Print the GBNF grammar the answers are sampled under instead of the prompt.
        #[arg(long)]
        grammar: bool,
        /// Which generation (clusters are taken in turn).
        #[arg(long, default_value_t = 0)]
        index: usize,
    },
    /// The ATOC prompt of a case (reads the op's specification from the onnx package).
    Oracle {
        /// A bundle directory or a case file.
        case: PathBuf,
    },
}

fn parse_var(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not key=value"))?;
    let v = match v.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?,
        None => v.to_string(),
    };
    Ok((k.to_string(), v))
}

/// Prints messages as a chat transcript.
pub fn print_messages(messages: &[Message]) -> anyhow::Result<()> {
    for m in messages {
        crate::outln!("=== {:?} ===", m.role);
        crate::outln!("{}", m.content.trim_end());
    }
    Ok(())
}

fn support(backends: &[String]) -> Result<(SupportTable, Vec<String>)> {
    let table = SupportTable::builtin().map_err(|e| anyhow!("{e}"))?;
    Ok((table, transfer::families(backends)))
}

fn spec_for(case: &atoc::Case) -> Result<atoc::OpSpecText> {
    SpecCache::user()
        .spec(&case.domain, &case.op, case.opset)
        .map_err(|e| anyhow!("{e}"))
}

/// Runs a `prompt` subcommand.
pub fn run(cmd: PromptCmd, llm: &LlmArgs, pool: PoolOptions) -> Result<ExitCode> {
    let temperature = llm.temperature.unwrap_or(0.7);
    let sampling = session::Sampling {
        seed: llm.seed,
        temperature,
        max_tokens: llm.max_tokens.unwrap_or(1024),
    };
    match cmd {
        PromptCmd::Render { what } => render(what, llm.seed),
        PromptCmd::Transfer { inputs, run } => {
            let files = transfer::expand(&inputs)?;
            let backends = default_backends(&run.backends);
            let (table, families) = support(&backends)?;
            let support = transfer::Restricted::new(&table, families);
            let model = llm.connect()?;
            let mut pool = Pool::new(pool);
            let mut judge = judge_for(&mut pool, &backends, run.out.as_ref())?;
            let report = transfer::run(&*model, &files, &mut judge, &support, sampling)?;
            finish(&report, run.out.as_deref())
        }
        PromptCmd::Generate { kb_args, n, run } => {
            let kb = generate::knowledge(&kb_args.findings)?;
            let clusters = generate::chosen(&kb, kb_args.cluster.as_deref())?;
            let backends = default_backends(&run.backends);
            let model = llm.connect()?;
            let mut pool = Pool::new(pool);
            let mut judge = judge_for(&mut pool, &backends, run.out.as_ref())?;
            let report = generate::run(
                &*model,
                &kb,
                &clusters,
                n,
                kb_args.examples,
                &mut judge,
                sampling,
            )?;
            finish(&report, run.out.as_deref())
        }
        PromptCmd::Clusters { findings } => {
            generate::print_clusters(&generate::knowledge(&findings)?)?;
            Ok(ExitCode::SUCCESS)
        }
        PromptCmd::Oracle { case, k } => {
            let temperature = oracle_temperature(llm, k)?;
            atoc::check_sampling(k, temperature)?;
            let c = oracle::load_case(&case)?;
            let spec = spec_for(&c)?;
            let model = llm.connect()?;
            let asked = atoc::ask(&*model, &spec, &c, k, llm.seed, temperature)?;
            crate::outln!("{}", serde_json::to_string_pretty(&asked)?);
            match &asked.verdict.decision {
                Decision::Decided(v) => eprintln!(
                    "verdict: {v} (confidence {:.0} %)",
                    100.0 * asked.verdict.confidence
                ),
                Decision::Unknown => eprintln!(
                    "verdict: unknown (best {:?} at {:.0} %, below {:.0} %)",
                    asked.verdict.leader,
                    100.0 * asked.verdict.confidence,
                    100.0 * atoc::ACCEPT
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
        PromptCmd::OracleEval {
            k,
            out,
            list,
            show,
            suite,
            doc_chars,
        } => {
            let root = suite.unwrap_or_else(mutagraph_backends::suite::root);
            let cases = oracle_eval::cases(&root)?;
            let shorten = |s: &atoc::OpSpecText| {
                if doc_chars == 0 {
                    s.clone()
                } else {
                    s.brief(doc_chars)
                }
            };
            if list {
                return oracle_eval::list(&cases, &SpecCache::user(), &shorten);
            }
            if let Some(id) = show {
                let l = cases.iter().find(|l| l.id == id).ok_or_else(|| {
                    anyhow!("no case '{id}' (`mutagraph prompt oracle-eval --list` lists them)")
                })?;
                let spec = spec_for(&l.case)?;
                print_messages(
                    &atoc::oracle_prompt(&shorten(&spec), &l.case).map_err(|e| anyhow!("{e}"))?,
                )?;
                crate::outln!("=== label ===\n{} ({})", l.label, l.source);
                return Ok(ExitCode::SUCCESS);
            }
            let temperature = oracle_temperature(llm, k)?;
            atoc::check_sampling(k, temperature)?;
            let model = llm.connect()?;
            let asking = atoc::eval::Asking {
                k,
                seed: llm.seed,
                temperature,
            };
            let report = atoc::eval::evaluate(
                &*model,
                &SpecCache::user(),
                &cases,
                asking,
                &shorten,
                &mut |r| {
                    // A closed stdout shows again (and ends the command) at the summary.
                    let _ = oracle_eval::print_case(r);
                },
            )?;
            oracle_eval::print_summary(&report)?;
            match out {
                Some(dir) => {
                    let path = oracle_eval::write_report(&dir, &report)?;
                    eprintln!("wrote {}", path.display());
                }
                None => eprintln!("(pass --out DIR to keep the report)"),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn render(what: RenderWhat, seed: u64) -> Result<ExitCode> {
    match what {
        RenderWhat::List => {
            for t in template::all() {
                crate::outln!("{}  variables: {}", t.id(), t.variables().join(", "));
            }
        }
        RenderWhat::Template { name, vars } => {
            let t = template::get(&name).map_err(|e| anyhow!("{e}"))?;
            let text = t
                .render(&vars.into_iter().collect())
                .map_err(|e| anyhow!("{e}"))?;
            crate::out!("{text}");
        }
        RenderWhat::Transfer {
            file,
            backends,
            grammar,
        } => {
            let backends = default_backends(&backends);
            let (table, families) = support(&backends)?;
            let support = transfer::Restricted::new(&table, families);
            let db = AlignmentDb::builtin().map_err(|e| anyhow!("{e}"))?;
            let p = transfer::prepare(&file, &db, &support)?;
            if !p.screening.transferable {
                eprintln!(
                    "{}: {} (the prompt would not be sent)",
                    file.display(),
                    transfer::screened_out(&p.screening)
                );
                return Ok(ExitCode::from(1));
            }
            if grammar {
                let task = crossprobe::transfer_task(&p.snippet, &p.screening);
                return print_grammar(task, &file.display().to_string());
            }
            print_messages(&transfer::first_messages(&p, &db)?)?;
        }
        RenderWhat::Generate {
            kb_args,
            index,
            grammar,
        } => {
            let kb = generate::knowledge(&kb_args.findings)?;
            let clusters = generate::chosen(&kb, kb_args.cluster.as_deref())?;
            if grammar {
                let c = &clusters[index % clusters.len()];
                let task = yanhui::generation_task(&yanhui::cluster_ops(c, &kb));
                return print_grammar(task, &c.id);
            }
            print_messages(&generate::messages(
                &clusters,
                &kb,
                index,
                kb_args.examples,
                seed,
            )?)?;
        }
        RenderWhat::Oracle { case } => {
            let c = oracle::load_case(&case)?;
            let spec = spec_for(&c)?;
            print_messages(&atoc::oracle_prompt(&spec, &c).map_err(|e| anyhow!("{e}"))?)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a task's GBNF grammar (root rule `root`); exit 1 when the case has none.
fn print_grammar(task: Option<Task>, case: &str) -> Result<ExitCode> {
    let Some(task) = task else {
        eprintln!("{case}: no op of this case has a grammar (answers would be unconstrained)");
        return Ok(ExitCode::from(1));
    };
    let g = onnx_text::grammar(&task).map_err(|e| anyhow!("{case}: {e}"))?;
    crate::outln!("# ops: {}", task.ops.join(", "));
    crate::outln!("{}", g.to_gbnf().trim_end());
    Ok(ExitCode::SUCCESS)
}

/// Prints the summary and writes the report.
fn finish(report: &session::RunReport, out: Option<&std::path::Path>) -> Result<ExitCode> {
    session::print_summary(report)?;
    match out {
        Some(dir) => {
            let path = session::write_report(dir, report)?;
            eprintln!("wrote {}", path.display());
        }
        None => eprintln!("(pass --out DIR to keep the report and the bug bundles)"),
    }
    Ok(ExitCode::SUCCESS)
}

/// A judge over the given backends, writing bug bundles under `out/findings/`.
pub fn judge_for<'p>(
    pool: &'p mut Pool,
    backends: &[String],
    out: Option<&PathBuf>,
) -> Result<Judge<'p>> {
    if backends.is_empty() {
        bail!("no backends");
    }
    let mut j = Judge::new(pool, backends.to_vec(), Tolerance::APPROXIMATE);
    j.findings_dir = out.map(|o| o.join("findings"));
    Ok(j)
}
