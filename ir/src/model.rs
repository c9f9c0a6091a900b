//! A whole ONNX model.
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::pb;
use std::path::Path;

/// An ONNX model: header fields, the main graph, and what the IR keeps verbatim.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// IR version of the file format.
    pub ir_version: Option<i64>,
    /// Operator sets the model uses.
    pub opset_import: Vec<pb::OperatorSetIdProto>,
    /// Producer name.
    pub producer_name: Option<String>,
    /// Producer version.
    pub producer_version: Option<String>,
    /// Model domain.
    pub domain: Option<String>,
    /// Model version.
    pub model_version: Option<i64>,
    /// Documentation.
    pub doc_string: Option<String>,
    /// The main graph.
    pub graph: Graph,
    /// Metadata, verbatim.
    pub metadata_props: Vec<pb::StringStringEntryProto>,
    /// Training information, verbatim.
    pub training_info: Vec<pb::TrainingInfoProto>,
    /// Model-local functions, verbatim.
    pub functions: Vec<pb::FunctionProto>,
    /// Device configurations, verbatim.
    pub configuration: Vec<pb::DeviceConfigurationProto>,
}

impl Model {
    /// A new empty model with one default-domain opset import.
    pub fn new(opset: i64) -> Model {
        Model {
            ir_version: Some(if opset >= 21 { 10 } else { 8 }),
            opset_import: vec![pb::OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(opset),
            }],
            producer_name: Some("mutagraph".into()),
            producer_version: Some(env!("CARGO_PKG_VERSION").into()),
            domain: None,
            model_version: None,
            doc_string: None,
            graph: Graph::new("main"),
            metadata_props: Vec::new(),
            training_info: Vec::new(),
            functions: Vec::new(),
            configuration: Vec::new(),
        }
    }

    /// The imported version of `domain` (`""` and `"ai.onnx"` both name the default domain).
    pub fn opset(&self, domain: &str) -> Option<i64> {
        let norm = |d: &str| {
            if d == "ai.onnx" {
                String::new()
            } else {
                d.to_string()
            }
        };
        let want = norm(domain);
        self.opset_import
            .iter()
            .find(|o| norm(o.domain.as_deref().unwrap_or("")) == want)
            .and_then(|o| o.version)
    }

    /// The default-domain opset (1 when the model imports none, as ONNX reads it).
    pub fn default_opset(&self) -> i64 {
        self.opset("").unwrap_or(1)
    }

    /// Decodes and imports a model from protobuf bytes. A model that keeps tensor data in side
    /// files is refused ([`Error::ExternalData`]): bytes alone say nothing of where those files
    /// are; use [`Model::load`] or [`Model::from_bytes_at`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        use prost::Message;
        let proto = pb::ModelProto::decode(bytes)?;
        let mut m = crate::import::model_from_proto(proto)?;
        crate::external::refuse(&mut m)?;
        Ok(m)
    }

    /// Decodes and imports the bytes of the model file `path`, reading its external data from
    /// the files beside it ([`crate::external`]). Errors name the file.
    pub fn from_bytes_at(bytes: &[u8], path: impl AsRef<Path>) -> Result<Model> {
        crate::external::decode_at(bytes, path.as_ref()).map(|(m, _)| m)
    }

    /// Exports the model to protobuf bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        use prost::Message;
        crate::export::model_to_proto(self).encode_to_vec()
    }

    /// Reads, decodes and imports a model file, with the tensor data it keeps in side files
    /// beside it (the model holds those bytes: [`Model::to_bytes`] is self-contained). Errors
    /// name the file.
    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        crate::external::load(path.as_ref()).map(|(m, _)| m)
    }

    /// Writes the model atomically (temporary file in the same folder, then rename).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        write_atomic(path.as_ref(), &self.to_bytes())
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsync, then rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let io = |err| Error::Io {
        path: path.to_path_buf(),
        err,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{}.{}.tmp", file_name, std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}
