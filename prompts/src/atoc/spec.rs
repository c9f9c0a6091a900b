//! Operator specifications read at run time from the installed Python `onnx` package
//! (`onnx.defs`), cached on the user's machine. Nothing of ONNX's documentation is stored in
//! this repository: the text is fetched from the user's own `onnx` install and cached under
//! `$XDG_CACHE_HOME/mutagraph/onnx-spec/` (else `~/.cache/mutagraph/onnx-spec/`).
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The helper script run by Python (ours): prints one schema as JSON.
const SCRIPT: &str = include_str!("../../scripts/onnx_spec.py");

/// One attribute of an operator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttrText {
    pub name: String,
    /// `int`, `float`, `ints`, `string`, ... (onnx's attribute type, lower case).
    #[serde(rename = "type")]
    pub kind: String,
    pub required: bool,
    /// The default value, when the schema has one.
    pub default: Option<serde_json::Value>,
}

/// One input or output of an operator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PortText {
    pub name: String,
    /// Type variable or type (`T`, `tensor(int64)`).
    pub type_str: String,
    /// `single`, `optional` or `variadic`.
    pub option: String,
}

/// A type constraint: a type variable and the types it allows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConstraintText {
    pub param: String,
    pub allowed: Vec<String>,
}

/// The specification of one operator at one opset, as the installed `onnx` states it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpSpecText {
    pub op: String,
    /// Empty for the default domain `ai.onnx`.
    pub domain: String,
    /// The opset asked for.
    pub opset: i64,
    /// The version of the schema in force at that opset.
    pub since_version: i64,
    /// The `onnx` package the text comes from.
    #[serde(default)]
    pub onnx_version: String,
    /// The operator's documentation text.
    pub doc: String,
    pub attributes: Vec<AttrText>,
    pub inputs: Vec<PortText>,
    pub outputs: Vec<PortText>,
    pub type_constraints: Vec<ConstraintText>,
}

impl OpSpecText {
    /// A shorter specification for small models: the documentation up to its first example
    /// (a line starting with `Example` or a code fence) and at most `max_doc` characters (cut
    /// after the last full sentence that fits, else at a word, marked `...`), without the
    /// type constraints (the inputs still name their type variables).
    pub fn brief(&self, max_doc: usize) -> OpSpecText {
        let mut doc = String::new();
        for line in self.doc.trim().lines() {
            let t = line.trim_start();
            if t.starts_with("Example") || t.starts_with("```") {
                break;
            }
            doc.push_str(line);
            doc.push('\n');
        }
        let mut doc = doc.trim().to_string();
        if doc.chars().count() > max_doc {
            let head: String = doc.chars().take(max_doc).collect();
            let cut = head
                .rfind(". ")
                .map(|i| i + 1)
                .filter(|&i| i > max_doc / 3)
                .or_else(|| head.rfind(char::is_whitespace))
                .unwrap_or(head.len());
            doc = format!("{} ...", head[..cut].trim_end());
        }
        OpSpecText {
            doc,
            type_constraints: Vec::new(),
            ..self.clone()
        }
    }

    /// The specification as plain text for a prompt: signature, attributes with defaults,
    /// type constraints, then the documentation.
    pub fn to_prompt_text(&self) -> String {
        let mut s = format!(
            "Operator {}{} (schema version {}, opset {})\n",
            if self.domain.is_empty() {
                String::new()
            } else {
                format!("{}::", self.domain)
            },
            self.op,
            self.since_version,
            self.opset
        );
        let ports = |ps: &[PortText]| {
            ps.iter()
                .map(|p| match p.option.as_str() {
                    "single" => format!("{}: {}", p.name, p.type_str),
                    o => format!("{}: {} ({o})", p.name, p.type_str),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        s += &format!("Inputs: {}\n", ports(&self.inputs));
        s += &format!("Outputs: {}\n", ports(&self.outputs));
        if !self.attributes.is_empty() {
            s += "Attributes:\n";
            for a in &self.attributes {
                let d = match (&a.default, a.required) {
                    (_, true) => "required".to_string(),
                    (Some(v), _) => format!("default {v}"),
                    (None, false) => "optional, no default".to_string(),
                };
                s += &format!("- {} ({}), {d}\n", a.name, a.kind);
            }
        }
        for c in &self.type_constraints {
            s += &format!("Type {}: {}\n", c.param, c.allowed.join(", "));
        }
        s += "\n";
        s += self.doc.trim();
        s += "\n";
        s
    }
}

/// Why a specification could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// Python could not be started.
    #[error(
        "cannot run {python} to read the ONNX operator specification ({message}); install \
         Python 3 and `pip install onnx`, or set MUTAGRAPH_PYTHON"
    )]
    NoPython { python: String, message: String },
    /// The `onnx` package is not installed.
    #[error("reading the ONNX operator specification needs the Python package onnx: {0}")]
    NoOnnx(String),
    /// The operator (or opset) is unknown to the installed `onnx`.
    #[error("unknown operator: {0}")]
    UnknownOp(String),
    /// Anything else (bad JSON, cache I/O).
    #[error("ONNX operator specification: {0}")]
    Other(String),
}

/// Where specifications come from.
pub trait SpecSource {
    /// The specification of `domain::op` at `opset` (`domain` empty for ai.onnx).
    fn spec(&self, domain: &str, op: &str, opset: i64) -> Result<OpSpecText, SpecError>;
}

/// Specifications from the installed `onnx` package, cached as one JSON file per
/// (domain, op, opset).
#[derive(Clone, Debug)]
pub struct SpecCache {
    dir: PathBuf,
    python: PathBuf,
}

impl SpecCache {
    /// A cache in `dir`, reading with `python3` (or `$MUTAGRAPH_PYTHON`).
    pub fn new(dir: impl Into<PathBuf>) -> SpecCache {
        let python = std::env::var_os("MUTAGRAPH_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("python3"));
        SpecCache {
            dir: dir.into(),
            python,
        }
    }

    /// The user's cache: `$XDG_CACHE_HOME/mutagraph/onnx-spec`, else
    /// `$HOME/.cache/mutagraph/onnx-spec`, else a folder under the temp directory.
    pub fn user() -> SpecCache {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        SpecCache::new(base.join("mutagraph").join("onnx-spec"))
    }

    /// Uses this Python interpreter.
    pub fn with_python(mut self, python: impl Into<PathBuf>) -> SpecCache {
        self.python = python.into();
        self
    }

    /// The cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cache file of one specification.
    pub fn file(&self, domain: &str, op: &str, opset: i64) -> PathBuf {
        let d = if domain.is_empty() { "ai.onnx" } else { domain };
        let clean = |s: &str| {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        };
        self.dir
            .join(format!("{}-{}-{opset}.json", clean(d), clean(op)))
    }

    fn read_python(&self, domain: &str, op: &str, opset: i64) -> Result<String, SpecError> {
        let out = Command::new(&self.python)
            .arg("-c")
            .arg(SCRIPT)
            .arg(op)
            .arg(opset.to_string())
            .arg(domain)
            .output()
            .map_err(|e| SpecError::NoPython {
                python: self.python.display().to_string(),
                message: e.to_string(),
            })?;
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        match out.status.code() {
            Some(0) => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
            Some(3) => Err(SpecError::NoOnnx(err)),
            Some(4) => Err(SpecError::UnknownOp(err)),
            _ => Err(SpecError::Other(format!(
                "{} exited with {}: {err}",
                self.python.display(),
                out.status
            ))),
        }
    }
}

impl SpecSource for SpecCache {
    fn spec(&self, domain: &str, op: &str, opset: i64) -> Result<OpSpecText, SpecError> {
        let file = self.file(domain, op, opset);
        if let Ok(text) = std::fs::read_to_string(&file)
            && let Ok(s) = serde_json::from_str::<OpSpecText>(&text)
        {
            return Ok(s);
        }
        let json = self.read_python(domain, op, opset)?;
        let spec: OpSpecText = serde_json::from_str(&json)
            .map_err(|e| SpecError::Other(format!("the schema of {op} is not JSON: {e}")))?;
        // The cache is a convenience: failing to write it is not an error of the request.
        if std::fs::create_dir_all(&self.dir).is_ok() {
            let tmp = file.with_extension(format!("json.tmp{}", std::process::id()));
            if std::fs::write(&tmp, &json).is_ok() && std::fs::rename(&tmp, &file).is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
        }
        Ok(spec)
    }
}

/// A fixed set of specifications (tests, or specifications built from our registry).
#[derive(Clone, Debug, Default)]
pub struct FixedSpecs(pub Vec<OpSpecText>);

impl SpecSource for FixedSpecs {
    fn spec(&self, domain: &str, op: &str, opset: i64) -> Result<OpSpecText, SpecError> {
        self.0
            .iter()
            .filter(|s| s.domain == domain && s.op == op && s.since_version <= opset)
            .max_by_key(|s| s.since_version)
            .cloned()
            .ok_or_else(|| SpecError::UnknownOp(format!("{op} at opset {opset}")))
    }
}
