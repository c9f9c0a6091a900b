//! The knowledge base of historical bug cases, shipped as data (`prompts/data/yanhui/`), plus
//! the campaign's own findings.
use serde::{Deserialize, Serialize};

const FILES: &[(&str, &str)] = &[
    (
        "cases-optimizer.toml",
        include_str!("../../data/yanhui/cases-optimizer.toml"),
    ),
    (
        "cases-kernels.toml",
        include_str!("../../data/yanhui/cases-kernels.toml"),
    ),
    (
        "cases-loaders.toml",
        include_str!("../../data/yanhui/cases-loaders.toml"),
    ),
];

/// One bug case, decomposed (model definition, API, input data) and summarized (exception,
/// location, reason).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    pub id: String,
    /// The library the bug is in.
    pub project: String,
    /// Where the facts come from.
    pub source: String,
    pub title: String,
    /// Root-cause category.
    pub category: String,
    /// Dotted component paths (`onnx.nn.Conv`, `ort.optimizer.fusion.conv_bn`).
    pub apis: Vec<String>,
    /// Exception / symptom type, as a hierarchy path from the root (`RuntimeError/ShapeError`).
    pub exception: String,
    /// Data types as hierarchy paths (`dtype/float/float16`).
    #[serde(default)]
    pub dtypes: Vec<String>,
    /// The component where the bug is.
    pub location: String,
    pub reason: String,
    /// The model (ONNX text), when there is one.
    #[serde(default)]
    pub model: String,
    /// The input data that triggers it.
    #[serde(default)]
    pub input: String,
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "case")]
    cases: Vec<Case>,
}

/// A knowledge base that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct KbError {
    pub file: String,
    pub message: String,
}

/// The knowledge base.
#[derive(Clone, Debug, Default)]
pub struct KnowledgeBase {
    cases: Vec<Case>,
}

impl KnowledgeBase {
    /// The shipped starter set.
    pub fn builtin() -> Result<KnowledgeBase, KbError> {
        let mut cases = Vec::new();
        for (name, text) in FILES {
            let f: File = toml::from_str(text).map_err(|e| KbError {
                file: name.to_string(),
                message: e.to_string(),
            })?;
            cases.extend(f.cases);
        }
        Ok(KnowledgeBase { cases })
    }

    /// A knowledge base of these cases.
    pub fn with_cases(cases: Vec<Case>) -> KnowledgeBase {
        KnowledgeBase { cases }
    }

    /// Every case.
    pub fn cases(&self) -> &[Case] {
        &self.cases
    }

    /// The case of an id.
    pub fn get(&self, id: &str) -> Option<&Case> {
        self.cases.iter().find(|c| c.id == id)
    }

    /// Adds a case (one of our findings: [`super::case_from_finding`]).
    pub fn add(&mut self, case: Case) {
        self.cases.push(case);
    }
}
