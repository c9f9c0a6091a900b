//! `mutagraph inspect`: what a model contains, with every value's inferred type.
use super::InputArgs;
use anyhow::bail;
use mutagraph_ir::solve::{Fixed, Plan, solve};
use mutagraph_ir::tensor::TensorExt;
use mutagraph_ir::validate;
use mutagraph_ir::{Model, ValueType};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `mutagraph inspect`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model file.
    pub model: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Show the model even when it fails validation (exit code stays 1).
    #[arg(long)]
    pub no_fail: bool,
    #[command(flatten)]
    pub given: InputArgs,
}

/// Runs `mutagraph inspect`.
pub fn main(a: Args, _g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args {
        model,
        json,
        no_fail,
        given,
    } = a;
    let fixed = given.fixed()?;
    let ins = inspect_file(&model, &fixed)?;
    if !ins.errors.is_empty() && !no_fail {
        bail!("{}: {}", model.display(), ins.errors.join("; "));
    }
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&ins)?);
    } else {
        crate::out!("{}", ins.to_text());
    }
    Ok(if ins.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A summary of one model.
#[derive(Debug, Serialize)]
pub struct Inspection {
    /// The file.
    pub path: String,
    /// IR version.
    pub ir_version: Option<i64>,
    /// Producer name and version.
    pub producer: String,
    /// Imported opsets, domain → version (`ai.onnx` for the default domain).
    pub opsets: BTreeMap<String, i64>,
    /// Real graph inputs (not initializers).
    pub inputs: Vec<Value>,
    /// Graph outputs.
    pub outputs: Vec<Value>,
    /// Number of ops in the main graph.
    pub nodes: usize,
    /// Number of ops including subgraphs.
    pub nodes_with_subgraphs: usize,
    /// Number of initializers.
    pub initializers: usize,
    /// Total number of elements in initializers (the parameter count).
    pub parameters: i64,
    /// Op type (domain-qualified outside the default domain) → count, subgraphs included.
    pub op_histogram: BTreeMap<String, usize>,
    /// Every value produced by an op of the main graph, in topological order.
    pub values: Vec<ProducedValue>,
    /// Validation errors (empty when valid).
    pub errors: Vec<String>,
    /// Validation warnings.
    pub warnings: Vec<String>,
    /// The inputs `run` and `campaign` generate: shapes solved from the graph (and those
    /// given), selector values, and why; `None` when what was given does not fit.
    pub input_plan: Option<Plan>,
}

/// A named value and its type.
#[derive(Debug, Serialize)]
pub struct Value {
    /// Name.
    pub name: String,
    /// Type as text (`f32[1,3,?,batch]`).
    #[serde(rename = "type")]
    pub ty: String,
}

/// A value produced by an op.
#[derive(Debug, Serialize)]
pub struct ProducedValue {
    /// Name.
    pub name: String,
    /// Inferred type as text.
    #[serde(rename = "type")]
    pub ty: String,
    /// The producing op type.
    pub op: String,
    /// The producing node's label.
    pub node: String,
    /// Its type at the generated inputs (`input_plan`'s shapes), when that differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_inputs: Option<String>,
}

/// Types longer than this are shown at the generated inputs in the text (the symbolic form
/// of a detector's head runs to hundreds of characters).
const TYPE_COLUMNS: usize = 40;

fn op_key(n: &mutagraph_ir::Node) -> String {
    if n.domain().is_empty() {
        n.op_type.clone()
    } else {
        format!("{}.{}", n.domain(), n.op_type)
    }
}

/// Counts the ops of `g` and its subgraphs by [`op_key`] into `h`; returns their number.
fn histogram(g: &mutagraph_ir::Graph, h: &mut BTreeMap<String, usize>) -> usize {
    // Counted by (domain, op type) first: a key string per node was most of the walk.
    let mut counts: std::collections::HashMap<(&str, &str), (usize, &mutagraph_ir::Node)> =
        std::collections::HashMap::new();
    let count = count_ops(g, &mut counts);
    for (n, node) in counts.into_values() {
        *h.entry(op_key(node)).or_default() += n;
    }
    count
}

fn count_ops<'g>(
    g: &'g mutagraph_ir::Graph,
    counts: &mut std::collections::HashMap<(&'g str, &'g str), (usize, &'g mutagraph_ir::Node)>,
) -> usize {
    let mut count = 0;
    for n in g.nodes() {
        counts.entry((n.domain(), &n.op_type)).or_insert((0, n)).0 += 1;
        count += 1;
        for (_, sub) in n.subgraphs() {
            count += count_ops(sub, counts);
        }
    }
    count
}

/// What `mutagraph inspect FILE` computes: the file read (protobuf or `.onnxtxt`), then
/// [`inspect`]. Only reading fails; what is wrong with the model is in `errors`.
pub fn inspect_file(
    path: &std::path::Path,
    fixed: &Fixed,
) -> Result<Inspection, mutagraph_ir::Error> {
    let mut m = Model::load(path)?;
    Ok(inspect(&path.display().to_string(), &mut m, fixed))
}

/// Inspects a loaded model (runs inference and validation on it), with the inputs solved for
/// it given what `fixed` fixes.
pub fn inspect(path: &str, model: &mut Model, fixed: &Fixed) -> Inspection {
    let (input_plan, plan_error) = match solve(model, fixed) {
        Ok(p) => (Some(p), None),
        Err(e) => (None, Some(e.to_string())),
    };
    // Inference (its types stored in the model) and validation, with one inference.
    let mut diag = validate::infer_and_check(model);
    diag.errors.extend(plan_error);
    // The types at the generated inputs: the model with the solved shapes declared.
    let concrete = input_plan.as_ref().map(|p| {
        let mut c = mutagraph_ir::solve::concretize(model, &p.shapes);
        mutagraph_ir::infer::infer_model(&mut c, Default::default());
        c
    });
    let concrete_types = concrete.as_ref().map(|c| c.graph.type_view());
    let g = &model.graph;
    let mut op_histogram = BTreeMap::new();
    let nodes_with_subgraphs = histogram(g, &mut op_histogram);
    // Declared types indexed once: `Graph::value_type` scans them per value.
    let types = g.type_view();
    let ty = |name: &str| -> String { types.value_type_ref(name).to_string() };
    let value = |v: &mutagraph_ir::pb::ValueInfoProto| {
        let name = v.name.clone().unwrap_or_default();
        Value {
            ty: ty(&name),
            name,
        }
    };
    let values = g
        .topo_order()
        .unwrap_or_else(|_| g.node_ids())
        .into_iter()
        .flat_map(|id| {
            let n = g.node(id).unwrap();
            n.outputs
                .iter()
                .filter(|o| !o.is_empty())
                .map(|o| {
                    let symbolic = ty(o);
                    let at_inputs = concrete_types
                        .as_ref()
                        .map(|t| t.value_type_ref(o).to_string())
                        .filter(|c| *c != symbolic);
                    ProducedValue {
                        name: o.clone(),
                        ty: symbolic,
                        op: n.op_type.clone(),
                        node: n.label(),
                        at_inputs,
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect();
    Inspection {
        path: path.to_string(),
        ir_version: model.ir_version,
        producer: format!(
            "{} {}",
            model.producer_name.as_deref().unwrap_or(""),
            model.producer_version.as_deref().unwrap_or("")
        )
        .trim()
        .to_string(),
        opsets: model
            .opset_import
            .iter()
            .map(|o| {
                let d = o.domain.clone().unwrap_or_default();
                (
                    if d.is_empty() {
                        "ai.onnx".to_string()
                    } else {
                        d
                    },
                    o.version.unwrap_or(0),
                )
            })
            .collect(),
        inputs: g.real_inputs().into_iter().map(value).collect(),
        outputs: g.outputs.iter().map(value).collect(),
        nodes: g.node_count(),
        nodes_with_subgraphs,
        initializers: g.initializers.len(),
        // Declared sizes (an invalid model may declare any): the sum saturates.
        parameters: g
            .initializers
            .values()
            .fold(0i64, |a, t| a.saturating_add(t.num_elements())),
        op_histogram,
        values,
        errors: diag.errors,
        warnings: mutagraph_ir::import::declared_dim_notes(g)
            .iter()
            .map(|n| n.to_string())
            .chain(diag.warnings)
            .collect(),
        input_plan,
    }
}

impl Inspection {
    /// Human-readable rendering.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        // About a line of 64 bytes per value, the bulk of the text.
        let mut s = String::with_capacity(1024 + 64 * self.values.len());
        let _ = writeln!(s, "model       {}", self.path);
        let _ = writeln!(
            s,
            "ir_version  {}",
            self.ir_version.map_or("-".into(), |v| v.to_string())
        );
        let _ = writeln!(
            s,
            "producer    {}",
            if self.producer.is_empty() {
                "-"
            } else {
                &self.producer
            }
        );
        let opsets: Vec<String> = self
            .opsets
            .iter()
            .map(|(d, v)| format!("{d} {v}"))
            .collect();
        let _ = writeln!(s, "opsets      {}", opsets.join(", "));
        let _ = writeln!(
            s,
            "size        {} nodes ({} with subgraphs), {} initializers, {} parameters",
            self.nodes, self.nodes_with_subgraphs, self.initializers, self.parameters
        );
        let _ = writeln!(s, "\ninputs");
        for v in &self.inputs {
            let _ = writeln!(s, "  {}: {}", v.name, v.ty);
        }
        let _ = writeln!(s, "outputs");
        let mut starred = false;
        for v in &self.outputs {
            let produced = self.values.iter().find(|p| p.name == v.name);
            let ty = short_type(&v.ty, produced.and_then(|p| p.at_inputs.as_deref()));
            starred |= ty.ends_with('*');
            let _ = writeln!(s, "  {}: {ty}", v.name);
        }
        if let Some(p) = self.input_plan.as_ref().filter(|p| !p.why.is_empty()) {
            let _ = writeln!(s, "\ngenerated inputs (solved from the graph)");
            for line in p.to_string().lines() {
                let _ = writeln!(s, "  {line}");
            }
        }
        let _ = writeln!(s, "\nops");
        let mut hist: Vec<_> = self.op_histogram.iter().collect();
        hist.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (op, n) in hist {
            let _ = writeln!(s, "  {n:>6}  {op}");
        }
        let _ = writeln!(s, "\nvalues");
        let w = self
            .values
            .iter()
            .map(|v| v.name.len())
            .max()
            .unwrap_or(0)
            .min(48);
        for v in &self.values {
            let ty = short_type(&v.ty, v.at_inputs.as_deref());
            starred |= ty.ends_with('*');
            let _ = writeln!(s, "  {:<w$}  {:<24} {}", v.name, ty, v.op, w = w);
        }
        if starred {
            let _ = writeln!(
                s,
                "  * at the generated inputs (its symbolic form is long: `--json` has it)"
            );
        }
        if !self.warnings.is_empty() {
            let _ = writeln!(s, "\nwarnings");
            for w in &self.warnings {
                let _ = writeln!(s, "  {w}");
            }
        }
        let _ = writeln!(
            s,
            "\nvalidation  {}",
            if self.errors.is_empty() {
                "ok".to_string()
            } else {
                format!("{} errors", self.errors.len())
            }
        );
        for e in &self.errors {
            let _ = writeln!(s, "  {e}");
        }
        s
    }
}

/// A type for the text: as inferred when short, else at the generated inputs (`*`), else cut.
fn short_type(ty: &str, at_inputs: Option<&str>) -> String {
    if ty.chars().count() <= TYPE_COLUMNS {
        return ty.to_string();
    }
    match at_inputs {
        Some(c) => format!("{c}*"),
        None => {
            let cut: String = ty.chars().take(TYPE_COLUMNS - 1).collect();
            format!("{cut}…")
        }
    }
}

/// Returns true when `t` has a fully static shape (used by reports).
pub fn is_static(t: &ValueType) -> bool {
    t.is_fully_known()
}

#[cfg(test)]
mod short_type_tests {
    use super::*;

    #[test]
    fn long_symbolic_types_are_shown_at_the_generated_inputs() {
        let long = format!("f32[batch,22,{}]", "(floor(height/2 - 1/2) + 1)".repeat(4));
        assert_eq!(short_type(&long, Some("f32[1,22,2100]")), "f32[1,22,2100]*");
        let cut = short_type(&long, None);
        assert_eq!(cut.chars().count(), TYPE_COLUMNS);
        assert!(cut.ends_with('…'));
        assert_eq!(short_type("f32[1,3]", Some("f32[1,3]")), "f32[1,3]");
    }
}
