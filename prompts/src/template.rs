//! Prompt templates: versioned text files under `prompts/templates/`, named
//! `<name>.v<version>.txt`, embedded at build time.
//!
//! The syntax is deliberately small:
//! - `{{var}}` is replaced by the variable's value; an unknown variable is an error.
//! - `{{#if var}} ... {{/if}}` keeps its body when `var` is set and non-empty.
//! - `{{! comment }}` is dropped.
//!
//! Lists and tables are rendered by the caller into one string variable.
use std::collections::BTreeMap;

mod files {
    include!(concat!(env!("OUT_DIR"), "/templates.rs"));
}

/// Variables of one rendering.
pub type Vars = BTreeMap<String, String>;

/// One template file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// The name without version, e.g. `crossprobe-distinction`.
    pub name: &'static str,
    /// The version from the file name (`v2` → 2).
    pub version: u32,
    /// The template text.
    pub text: &'static str,
}

/// Template errors.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TemplateError {
    /// No template file has that name (or that version).
    #[error("no prompt template named '{0}' (known: {1})")]
    Unknown(String, String),
    /// The text names a variable the caller did not give.
    #[error("template '{template}': variable '{var}' is not set")]
    MissingVar { template: String, var: String },
    /// Unbalanced `{{#if}}` / `{{/if}}` or an unterminated `{{`.
    #[error("template '{template}': {problem} at byte {at}")]
    Syntax {
        template: String,
        problem: String,
        at: usize,
    },
}

/// Every embedded template, sorted by name then version.
pub fn all() -> Vec<Template> {
    let mut v: Vec<Template> = files::FILES
        .iter()
        .filter_map(|(stem, text)| {
            let (name, ver) = stem.rsplit_once(".v")?;
            Some(Template {
                name,
                version: ver.parse().ok()?,
                text,
            })
        })
        .collect();
    v.sort_by(|a, b| (a.name, a.version).cmp(&(b.name, b.version)));
    v
}

/// The newest version of the template `name`, or the given version with `name.vN`.
pub fn get(name: &str) -> Result<Template, TemplateError> {
    let all = all();
    let found = match name
        .rsplit_once(".v")
        .and_then(|(n, v)| Some((n, v.parse::<u32>().ok()?)))
    {
        Some((n, v)) => all.iter().find(|t| t.name == n && t.version == v).copied(),
        None => all
            .iter()
            .filter(|t| t.name == name)
            .max_by_key(|t| t.version)
            .copied(),
    };
    found.ok_or_else(|| {
        let mut names: Vec<&str> = all.iter().map(|t| t.name).collect();
        names.dedup();
        TemplateError::Unknown(name.to_string(), names.join(", "))
    })
}

impl Template {
    /// `name.vN`, the id recorded with every request made from this template.
    pub fn id(&self) -> String {
        format!("{}.v{}", self.name, self.version)
    }

    /// Renders with `vars`.
    pub fn render(&self, vars: &Vars) -> Result<String, TemplateError> {
        render_str(&self.id(), self.text, vars)
    }

    /// The variables the text uses, in order of first use.
    pub fn variables(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut rest = self.text;
        while let Some(i) = rest.find("{{") {
            let Some(j) = rest[i..].find("}}") else { break };
            let tag = rest[i + 2..i + j].trim();
            let var = tag.strip_prefix("#if").map(str::trim).unwrap_or(tag);
            if !var.is_empty()
                && !var.starts_with('/')
                && !var.starts_with('!')
                && !out.iter().any(|v| v == var)
            {
                out.push(var.to_string());
            }
            rest = &rest[i + j + 2..];
        }
        out
    }
}

/// A model a template shows as an example: a ```onnx block of its text that no variable fills.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    /// The template's id (`name.vN`).
    pub template: String,
    /// The block's ONNX text, rendered.
    pub text: String,
}

/// The example models of every template, rendered with `{{opset}}` set to `opset` (every
/// other variable is set, so that every `{{#if}}` block is shown, to a placeholder; a block
/// holding only a placeholder, such as ATOC's `{{model}}`, is no example).
pub fn examples(opset: i64) -> Result<Vec<Example>, TemplateError> {
    let placeholder = |v: &str| format!("<<{v}>>");
    let mut out = Vec::new();
    for t in all() {
        let vars: Vars = t
            .variables()
            .into_iter()
            .map(|v| {
                let value = if v == "opset" {
                    opset.to_string()
                } else {
                    placeholder(&v)
                };
                (v, value)
            })
            .collect();
        let text = t.render(&vars)?;
        let mut rest = text.as_str();
        while let Some(start) = rest.find("```onnx\n") {
            let body = &rest[start + "```onnx\n".len()..];
            let end = body.find("```").unwrap_or(body.len());
            let block = body[..end].trim();
            if !vars.values().any(|v| v == block) {
                out.push(Example {
                    template: t.id(),
                    text: block.to_string(),
                });
            }
            rest = &body[(end + 3).min(body.len())..];
        }
    }
    Ok(out)
}

/// Renders a template text (see the module docs for the syntax).
pub fn render_str(id: &str, text: &str, vars: &Vars) -> Result<String, TemplateError> {
    let syntax = |problem: &str, at: usize| TemplateError::Syntax {
        template: id.to_string(),
        problem: problem.to_string(),
        at,
    };
    let mut out = String::with_capacity(text.len());
    // Stack of "is this block kept"; the output is written only when all are true.
    let mut keep: Vec<bool> = Vec::new();
    let mut pos = 0;
    while let Some(off) = text[pos..].find("{{") {
        let start = pos + off;
        if keep.iter().all(|k| *k) {
            out.push_str(&text[pos..start]);
        }
        let Some(len) = text[start..].find("}}") else {
            return Err(syntax("unterminated '{{'", start));
        };
        let tag = text[start + 2..start + len].trim();
        pos = start + len + 2;
        if tag.starts_with('!') {
            continue;
        } else if let Some(var) = tag.strip_prefix("#if") {
            let set = vars.get(var.trim()).is_some_and(|v| !v.trim().is_empty());
            keep.push(set);
        } else if tag == "/if" {
            if keep.pop().is_none() {
                return Err(syntax("'{{/if}}' without '{{#if}}'", start));
            }
        } else if keep.iter().all(|k| *k) {
            match vars.get(tag) {
                Some(v) => out.push_str(v),
                None => {
                    return Err(TemplateError::MissingVar {
                        template: id.to_string(),
                        var: tag.to_string(),
                    });
                }
            }
        }
    }
    if !keep.is_empty() {
        return Err(syntax("'{{#if}}' without '{{/if}}'", text.len()));
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(kv: &[(&str, &str)]) -> Vars {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn substitutes_and_conditionals() {
        let t = "a {{x}} b{{#if y}} y={{y}}{{/if}}{{#if z}} z{{/if}}{{! note }}.";
        assert_eq!(
            render_str("t", t, &vars(&[("x", "1"), ("y", "2")])).unwrap(),
            "a 1 b y=2."
        );
        assert_eq!(
            render_str("t", t, &vars(&[("x", "1"), ("z", " ")])).unwrap(),
            "a 1 b."
        );
    }

    /// The models the prompts show are valid: an example that does not validate teaches the
    /// model to write graphs that do not validate.
    #[test]
    fn every_example_model_parses_and_validates() {
        let ex = examples(17).unwrap();
        let ids: Vec<&str> = ex.iter().map(|e| e.template.as_str()).collect();
        // The system prompts show one model each; ATOC's `{{model}}` block is no example.
        for t in ["crossprobe-system", "yanhui-system"] {
            let id = get(t).unwrap().id();
            assert!(ids.contains(&id.as_str()), "{id} shows no example: {ids:?}");
        }
        assert!(!ids.iter().any(|i| i.starts_with("atoc")), "{ids:?}");
        for e in &ex {
            let m = mutagraph_ir::text::parse_model(&e.text)
                .unwrap_or_else(|err| panic!("{}: {err}\n{}", e.template, e.text));
            if let Err(err) = mutagraph_ir::validate::validate_declared(&m) {
                panic!("{}: {err}\n{}", e.template, e.text);
            }
        }
        // One example carries trigger values in a literal initializer.
        assert!(
            ex.iter()
                .any(|e| e.text.contains("nan") && e.text.contains("1e30")),
            "no example shows NaN and a huge value: {ex:?}"
        );
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(
            render_str("t", "{{x}}", &Vars::new()),
            Err(TemplateError::MissingVar {
                template: "t".into(),
                var: "x".into()
            })
        );
        assert!(matches!(
            render_str("t", "{{#if a}}", &Vars::new()),
            Err(TemplateError::Syntax { .. })
        ));
        assert!(matches!(
            render_str("t", "{{/if}}", &Vars::new()),
            Err(TemplateError::Syntax { .. })
        ));
        assert!(matches!(
            render_str("t", "x {{y", &Vars::new()),
            Err(TemplateError::Syntax { .. })
        ));
        // An unset variable inside a dropped block is not an error.
        assert_eq!(
            render_str("t", "{{#if a}}{{b}}{{/if}}ok", &Vars::new()).unwrap(),
            "ok"
        );
    }
}
