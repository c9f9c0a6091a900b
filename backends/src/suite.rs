//! The ONNX backend test suite (Debian `libonnx-testdata`): discovery and loading of test cases
//! (`model.onnx` plus `test_data_set_N/{input,output}_K.pb`).
use crate::value::{NamedValues, Value, ValueError};
use mutagraph_ir::model::Model;
use mutagraph_ir::types::ValueType;
use std::path::{Path, PathBuf};

/// Where Debian's `libonnx-testdata` installs the suite.
pub const DEFAULT_ROOT: &str = "/usr/share/libonnx-testdata/data";

/// The parts of the suite.
pub const PARTS: &[&str] = &["node", "pytorch-converted", "pytorch-operator", "simple"];

/// The suite root: `MUTAGRAPH_SUITE_DIR`, else the Debian location.
pub fn root() -> PathBuf {
    std::env::var_os("MUTAGRAPH_SUITE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_ROOT))
}

/// Errors of suite loading.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The suite is not installed.
    #[error(
        "the ONNX backend test suite is missing at {0}: install it with `apt-get install -y libonnx-testdata` (or set MUTAGRAPH_SUITE_DIR)"
    )]
    Missing(PathBuf),
    /// A file could not be read or decoded.
    #[error("{path}: {problem}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}

/// A test case found on disk.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CaseRef {
    /// Part of the suite (`node`, `simple`, ...).
    pub part: String,
    /// Directory name (`test_abs`).
    pub name: String,
    /// The directory.
    pub dir: PathBuf,
}

impl CaseRef {
    /// `part/name`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.part, self.name)
    }
}

/// Tests whose expected outputs come from a random generator (Bernoulli sampling, training-mode
/// Dropout masks): no implementation can be expected to reproduce them, so conformance leaves
/// them out and says so.
pub const NONDETERMINISTIC: &[&str] = &[
    "node/test_bernoulli",
    "node/test_bernoulli_double",
    "node/test_bernoulli_double_expanded",
    "node/test_bernoulli_expanded",
    "node/test_bernoulli_seed",
    "node/test_bernoulli_seed_expanded",
    "node/test_training_dropout",
    "node/test_training_dropout_default",
    "node/test_training_dropout_default_mask",
    "node/test_training_dropout_mask",
];

/// Lists the cases of the given parts (sorted by part then name), leaving out the
/// [`NONDETERMINISTIC`] ones.
pub fn discover(root: &Path, parts: &[&str]) -> Result<Vec<CaseRef>, SuiteError> {
    if !root.join("node").is_dir() {
        return Err(SuiteError::Missing(root.to_path_buf()));
    }
    let mut out = Vec::new();
    for part in parts {
        let Ok(rd) = std::fs::read_dir(root.join(part)) else {
            continue;
        };
        for e in rd.flatten() {
            let dir = e.path();
            let id = format!("{part}/{}", e.file_name().to_string_lossy());
            if dir.join("model.onnx").is_file() && !NONDETERMINISTIC.contains(&id.as_str()) {
                out.push(CaseRef {
                    part: part.to_string(),
                    name: e.file_name().to_string_lossy().into_owned(),
                    dir,
                });
            }
        }
    }
    out.sort();
    Ok(out)
}

/// One recorded data set.
#[derive(Clone, Debug)]
pub struct DataSet {
    /// Inputs by graph input name.
    pub inputs: NamedValues,
    /// Expected outputs by graph output name.
    pub outputs: NamedValues,
}

/// A loaded test case.
#[derive(Clone, Debug)]
pub struct Case {
    /// Where it came from.
    pub case: CaseRef,
    /// The model file's bytes.
    pub model_bytes: Vec<u8>,
    /// The model, imported.
    pub model: Model,
    /// The data sets.
    pub sets: Vec<DataSet>,
}

impl Case {
    /// Op types used by the model (main graph and subgraphs), sorted, deduplicated.
    pub fn op_types(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_ops(&self.model.graph, &mut out);
        out.sort();
        out.dedup();
        out
    }
}

fn collect_ops(g: &mutagraph_ir::graph::Graph, out: &mut Vec<String>) {
    for n in g.nodes() {
        let d = n.domain.as_deref().unwrap_or("");
        out.push(crate::backend::Capabilities::key(d, &n.op_type));
        for (_, sub) in n.subgraphs() {
            collect_ops(sub, out);
        }
    }
}

fn file_err(path: &Path, problem: impl ToString) -> SuiteError {
    SuiteError::File {
        path: path.to_path_buf(),
        problem: problem.to_string(),
    }
}

/// Loads a case: the model and every `test_data_set_*` directory.
pub fn load(case: &CaseRef) -> Result<Case, SuiteError> {
    let mpath = case.dir.join("model.onnx");
    let model_bytes = std::fs::read(&mpath).map_err(|e| file_err(&mpath, e))?;
    let (model, external) =
        mutagraph_ir::external::decode_at(&model_bytes, &mpath).map_err(|e| match e {
            mutagraph_ir::Error::File { problem, .. } => file_err(&mpath, problem),
            e => file_err(&mpath, e),
        })?;
    // Backends get the model self-contained: with the data of its side files read in.
    let model_bytes = if external.is_empty() {
        model_bytes
    } else {
        model.to_bytes()
    };
    let g = &model.graph;
    let named = |vi: &mutagraph_ir::pb::ValueInfoProto| {
        let name = vi.name.clone().unwrap_or_default();
        let ty = vi
            .r#type
            .as_ref()
            .map(ValueType::from_proto)
            .unwrap_or(ValueType::Unknown);
        (name, ty)
    };
    let inputs: Vec<(String, ValueType)> = g.real_inputs().into_iter().map(named).collect();
    let outputs: Vec<(String, ValueType)> = g.outputs.iter().map(named).collect();
    let mut set_dirs: Vec<PathBuf> = std::fs::read_dir(&case.dir)
        .map_err(|e| file_err(&case.dir, e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("test_data_set_"))
        })
        .collect();
    set_dirs.sort();
    let mut sets = Vec::new();
    for d in set_dirs {
        sets.push(DataSet {
            inputs: read_values(&d, "input", &inputs)?,
            outputs: read_values(&d, "output", &outputs)?,
        });
    }
    Ok(Case {
        case: case.clone(),
        model_bytes,
        model,
        sets,
    })
}

fn read_values(
    dir: &Path,
    prefix: &str,
    decl: &[(String, ValueType)],
) -> Result<NamedValues, SuiteError> {
    let mut out = Vec::new();
    for i in 0.. {
        let p = dir.join(format!("{prefix}_{i}.pb"));
        if !p.is_file() {
            break;
        }
        let bytes = std::fs::read(&p).map_err(|e| file_err(&p, e))?;
        let Some((name, ty)) = decl.get(i) else {
            return Err(file_err(
                &p,
                format!("the model declares only {} {prefix}s", decl.len()),
            ));
        };
        let v = Value::decode(&bytes, ty).map_err(|e: ValueError| file_err(&p, e))?;
        out.push((name.clone(), bf16_fixup(v, ty)));
    }
    Ok(out)
}

/// The suite's data (written by onnx 1.12) stores bfloat16 values as UINT16 tensors holding the
/// bf16 bits; reinterpret them when the model declares bfloat16.
fn bf16_fixup(v: Value, ty: &ValueType) -> Value {
    use crate::value::{Data, HostTensor};
    use mutagraph_ir::dtype::DType;
    match (v, ty) {
        (
            Value::Tensor(HostTensor {
                dtype: DType::U16,
                shape,
                data: Data::U16(bits),
            }),
            ValueType::Tensor(t),
        ) if t.dtype == DType::BF16 => Value::Tensor(HostTensor {
            dtype: DType::BF16,
            shape,
            data: Data::BF16(bits.into_iter().map(half::bf16::from_bits).collect()),
        }),
        (v, _) => v,
    }
}
