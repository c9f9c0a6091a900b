//! `mutagraph prompt oracle CASE`: ATOC on one test case — a bug bundle directory (its
//! minimized model when there is one, its inputs and every backend's outputs) or a case file
//! (JSON of `atoc::Case`). The op's specification is read from the installed `onnx` package.
use anyhow::{Context, Result, anyhow, bail};
use mutagraph_backends::value::HostTensor;
use mutagraph_ir::pb::TensorProto;
use mutagraph_prompts::atoc::Case;
use prost::Message as _;
use std::path::Path;

/// How many values of a tensor the prompt shows.
const SHOWN: usize = 24;

/// `float[2,3] [1, 2, ...]` for a `.pb` tensor file.
fn describe_pb(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let t = TensorProto::decode(bytes.as_slice())
        .map_err(|e| anyhow!("{}: not a TensorProto: {e}", path.display()))?;
    let h = HostTensor::from_proto(&t).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let shape = h
        .shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let values = match h.to_f64s() {
        Some(v) => {
            let shown: Vec<String> = v.iter().take(SHOWN).map(|x| format!("{x}")).collect();
            let more = if v.len() > SHOWN {
                format!(", ... ({} values in all)", v.len())
            } else {
                String::new()
            };
            format!("[{}{more}]", shown.join(", "))
        }
        None => "(values not shown)".into(),
    };
    Ok(format!(
        "{}[{shape}] {values}",
        format!("{:?}", h.dtype).to_lowercase()
    ))
}

fn pb_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "pb"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The case of a bundle directory.
pub fn case_from_bundle(dir: &Path) -> Result<Case> {
    let meta_path = dir.join("meta.json");
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&meta_path)
            .with_context(|| format!("reading {}", meta_path.display()))?,
    )
    .with_context(|| format!("{}: not JSON", meta_path.display()))?;
    let minimized = dir.join("minimized.onnx").is_file();
    let (model_file, inputs_dir, outputs_dir) = if minimized {
        ("minimized.onnx", "minimized_inputs", "minimized_outputs")
    } else {
        ("original.onnx", "inputs", "outputs")
    };
    let model_path = dir.join(model_file);
    let model = mutagraph_ir::Model::load(&model_path).map_err(|e| e.in_file(&model_path))?;
    let op = meta
        .get("op_type")
        .and_then(|v| v.as_str())
        .map(String::from)
        .or_else(|| {
            let ops: Vec<String> = model.graph.nodes().map(|n| n.op_type.clone()).collect();
            (ops.len() == 1).then(|| ops[0].clone())
        })
        .ok_or_else(|| {
            anyhow!(
                "{}: the finding is not localized to an op (no op_type in meta.json)",
                dir.display()
            )
        })?;
    let opset = model.default_opset();
    let names: Vec<String> = model
        .graph
        .inputs
        .iter()
        .filter_map(|i| i.name.clone())
        .filter(|n| !model.graph.initializers.contains_key(n.as_str()))
        .collect();
    let inputs = pb_files(&dir.join(inputs_dir))
        .iter()
        .enumerate()
        .map(|(i, f)| {
            Ok((
                names
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("input_{i}")),
                describe_pb(f)?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut outputs = Vec::new();
    if let Some(runs) = meta.get("runs").and_then(|r| r.as_array()) {
        for r in runs {
            let b = r.get("backend").and_then(|v| v.as_str()).unwrap_or("?");
            let status = r.get("status").and_then(|v| v.as_str()).unwrap_or("");
            let files = pb_files(&dir.join(outputs_dir).join(b));
            let text = if !files.is_empty() {
                files
                    .iter()
                    .map(|f| describe_pb(f))
                    .collect::<Result<Vec<_>>>()?
                    .join("; ")
            } else if status == "ok" {
                continue;
            } else {
                format!(
                    "{status}: {}",
                    r.get("detail").and_then(|v| v.as_str()).unwrap_or("")
                )
            };
            outputs.push((b.to_string(), text));
        }
    }
    if outputs.is_empty() {
        bail!("{}: no backend outputs in the bundle", dir.display());
    }
    let mut text = mutagraph_ir::text::print_model(&model);
    if text.len() > 6000 {
        text.truncate(6000);
        text.push_str("\n# ... (truncated)");
    }
    Ok(Case {
        op,
        domain: String::new(),
        opset,
        model: text,
        inputs,
        outputs,
        question: String::new(),
    })
}

/// A bundle directory or a JSON case file.
pub fn load_case(path: &Path) -> Result<Case> {
    if path.is_dir() {
        case_from_bundle(path)
    } else {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| {
            anyhow!(
                "{}: not a bundle directory or a case file (JSON with op, opset, model, inputs, \
                 outputs): {e}",
                path.display()
            )
        })
    }
}
