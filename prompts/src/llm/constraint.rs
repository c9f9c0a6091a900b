//! What an answer must look like, enforced while it is sampled: a [`Constraint`] carried by a
//! request, and how each provider applies it ([`ConstraintStyle`]).
//!
//! - `local` runs llama.cpp's grammar sampler on the constraint's GBNF grammar (a JSON schema
//!   carries the GBNF grammar of the same language, built from the schema when the constraint
//!   is made).
//! - `http` sends it the way the configured server takes it: the llama.cpp server reads a GBNF
//!   grammar from `grammar` and a JSON schema from `response_format`; vLLM reads the grammar
//!   from `structured_outputs.grammar` (0.10.2 and later) or `guided_grammar` (earlier), the
//!   schema from `response_format`; OpenAI's API takes only the schema (`response_format`).
//! - `replay` and `record` key a request by its constraint too ([`super::canonical_request`]):
//!   the same prompt with another grammar is another exchange.
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::LlmError;
use crate::grammar::{Grammar, GrammarError};

/// The root rule name llama.cpp's server always starts from.
pub const SERVER_ROOT: &str = "root";

/// A constraint on the text of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Constraint {
    /// A grammar in llama.cpp's GBNF syntax, sampled from its rule `root`.
    Grammar { gbnf: String, root: String },
    /// A JSON schema; `gbnf` (from rule `root`) is the grammar of the same JSON texts, for
    /// llama.cpp (the local provider, or a server given grammars rather than schemas).
    Json {
        schema: Value,
        gbnf: String,
        root: String,
    },
}

impl Constraint {
    /// The constraint of a grammar (checked first: every rule it names is defined).
    pub fn grammar(g: &Grammar) -> Result<Constraint, GrammarError> {
        g.check()?;
        Ok(Constraint::Grammar {
            gbnf: g.to_gbnf(),
            root: g.root().to_string(),
        })
    }

    /// The constraint of a JSON schema, with the GBNF grammar of its texts
    /// ([`crate::grammar::json::from_schema`]; an error for what the converter does not take).
    pub fn json(schema: Value) -> Result<Constraint, GrammarError> {
        let g = crate::grammar::json::from_schema(&schema)?;
        g.check()?;
        Ok(Constraint::Json {
            schema,
            gbnf: g.to_gbnf(),
            root: g.root().to_string(),
        })
    }

    /// The GBNF grammar and its root rule.
    pub fn gbnf(&self) -> (&str, &str) {
        match self {
            Constraint::Grammar { gbnf, root } | Constraint::Json { gbnf, root, .. } => {
                (gbnf, root)
            }
        }
    }

    /// The GBNF grammar with `root` as its start rule, as servers that always start from
    /// `root` need it (a `root ::= <rule>` line is added when the root has another name).
    pub fn gbnf_rooted(&self) -> String {
        let (gbnf, root) = self.gbnf();
        if root == SERVER_ROOT {
            gbnf.to_string()
        } else {
            format!("{SERVER_ROOT} ::= {root}\n{gbnf}")
        }
    }

    /// `grammar` or `json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Constraint::Grammar { .. } => "grammar",
            Constraint::Json { .. } => "json",
        }
    }

    /// The canonical JSON text of the constraint, part of a request's replay key: keys sorted,
    /// no spaces (serde_json's maps are sorted by key in this build).
    pub fn canonical(&self) -> String {
        serde_json::to_value(self)
            .map(|v| v.to_string())
            .unwrap_or_default()
    }

    /// Adds the constraint to an OpenAI-compatible chat-completions body in `style`.
    pub fn add_to_body(&self, body: &mut Value, style: ConstraintStyle) -> Result<(), LlmError> {
        let response_format = |schema: &Value| {
            json!({
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": true}
            })
        };
        match (self, style) {
            (_, ConstraintStyle::Off) => {}
            (Constraint::Json { schema, .. }, _) => {
                body["response_format"] = response_format(schema);
            }
            (Constraint::Grammar { .. }, ConstraintStyle::LlamaCpp) => {
                body["grammar"] = json!(self.gbnf_rooted());
            }
            (Constraint::Grammar { .. }, ConstraintStyle::Vllm) => {
                let g = self.gbnf_rooted();
                body["structured_outputs"] = json!({ "grammar": g });
                body["guided_grammar"] = json!(g);
            }
            (Constraint::Grammar { .. }, ConstraintStyle::OpenAi) => {
                return Err(LlmError::Config(
                    "this request carries a GBNF grammar, which the OpenAI API does not take: set \
                     constraints = \"off\" (MUTAGRAPH_LLM_CONSTRAINTS=off) to send it unconstrained, \
                     or use a llama.cpp or vLLM server"
                        .to_string(),
                ));
            }
        }
        Ok(())
    }
}

/// How constraints reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ConstraintStyle {
    /// The llama.cpp server's fields (`grammar`, `response_format`); the local provider
    /// applies them. The default.
    #[default]
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
    /// vLLM's fields (`structured_outputs.grammar` and `guided_grammar`, `response_format`).
    #[serde(rename = "vllm")]
    Vllm,
    /// OpenAI's API: JSON schemas only (`response_format`); a grammar is an error.
    #[serde(rename = "openai")]
    OpenAi,
    /// Never sent nor applied: answers are unconstrained.
    #[serde(rename = "off")]
    Off,
}

impl ConstraintStyle {
    pub const ALL: [ConstraintStyle; 4] = [
        ConstraintStyle::LlamaCpp,
        ConstraintStyle::Vllm,
        ConstraintStyle::OpenAi,
        ConstraintStyle::Off,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ConstraintStyle::LlamaCpp => "llama.cpp",
            ConstraintStyle::Vllm => "vllm",
            ConstraintStyle::OpenAi => "openai",
            ConstraintStyle::Off => "off",
        }
    }
}

impl fmt::Display for ConstraintStyle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ConstraintStyle {
    type Err = LlmError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let t = if t == "llamacpp" || t == "llama-cpp" {
            "llama.cpp".to_string()
        } else {
            t
        };
        ConstraintStyle::ALL
            .into_iter()
            .find(|c| c.as_str() == t)
            .ok_or_else(|| {
                LlmError::Config(format!(
                    "unknown constraint style `{s}` (expected one of llama.cpp, vllm, openai, off)"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grammar() -> Constraint {
        Constraint::Grammar {
            gbnf: "answer ::= \"yes\" | \"no\"\n".into(),
            root: "answer".into(),
        }
    }

    #[test]
    fn rooted_grammar_starts_from_root() {
        let g = grammar().gbnf_rooted();
        assert!(g.starts_with("root ::= answer\n"), "{g}");
        let same = Constraint::Grammar {
            gbnf: "root ::= \"x\"\n".into(),
            root: "root".into(),
        };
        assert_eq!(same.gbnf_rooted(), "root ::= \"x\"\n");
    }

    #[test]
    fn bodies_per_style() {
        let mut b = json!({});
        grammar()
            .add_to_body(&mut b, ConstraintStyle::LlamaCpp)
            .unwrap();
        assert!(b["grammar"].as_str().unwrap().contains("\"yes\""));
        let mut b = json!({});
        grammar()
            .add_to_body(&mut b, ConstraintStyle::Vllm)
            .unwrap();
        assert_eq!(b["structured_outputs"]["grammar"], b["guided_grammar"]);
        let mut b = json!({});
        grammar().add_to_body(&mut b, ConstraintStyle::Off).unwrap();
        assert_eq!(b, json!({}));
        assert!(
            grammar()
                .add_to_body(&mut json!({}), ConstraintStyle::OpenAi)
                .is_err()
        );
        let j = Constraint::Json {
            schema: json!({"type": "object"}),
            gbnf: "root ::= \"{}\"".into(),
            root: "root".into(),
        };
        let mut b = json!({});
        j.add_to_body(&mut b, ConstraintStyle::OpenAi).unwrap();
        assert_eq!(b["response_format"]["type"], "json_schema");
        assert_eq!(
            b["response_format"]["json_schema"]["schema"],
            json!({"type": "object"})
        );
    }

    #[test]
    fn styles_parse() {
        for s in ConstraintStyle::ALL {
            assert_eq!(s.as_str().parse::<ConstraintStyle>().unwrap(), s);
        }
        assert_eq!(
            "LlamaCpp".parse::<ConstraintStyle>().unwrap(),
            ConstraintStyle::LlamaCpp
        );
        assert!("grammar".parse::<ConstraintStyle>().is_err());
    }

    #[test]
    fn canonical_is_sorted_and_compact() {
        let c = grammar().canonical();
        assert_eq!(
            c,
            r#"{"gbnf":"answer ::= \"yes\" | \"no\"\n","kind":"grammar","root":"answer"}"#
        );
    }
}
