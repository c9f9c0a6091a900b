//! Bug snippets: the API calls of a Python program (or of the ```python blocks of a markdown
//! issue), with import aliases resolved.
use std::collections::BTreeMap;
use std::path::Path;

/// One call in a snippet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The resolved dotted path (`torch.nn.functional.relu`, `torch.Tensor.sum` for a method).
    pub api: String,
    /// The argument text between the parentheses.
    pub args: String,
    /// 1-based line in the code.
    pub line: usize,
    /// Whether it is a method call on a value (`x.sum()`).
    pub method: bool,
}

/// A parsed snippet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    /// `pytorch`, `tensorflow` or `unknown` (from the imports).
    pub framework: String,
    /// The Python code.
    pub code: String,
    /// The calls in order.
    pub calls: Vec<Call>,
}

/// A snippet that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct SnippetError {
    pub file: String,
    pub message: String,
}

/// Reads a `.py` file, or a markdown issue (`.md`) whose ```python blocks are the code.
pub fn load(path: &Path) -> Result<Snippet, SnippetError> {
    let err = |m: String| SnippetError {
        file: path.display().to_string(),
        message: m,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let is_md = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
    let code = if is_md {
        python_blocks(&text).ok_or_else(|| err("no ```python code block in this issue".into()))?
    } else {
        text
    };
    let s = parse(&code);
    if s.calls.is_empty() {
        return Err(err("no function calls found in the code".into()));
    }
    Ok(s)
}

/// The ```python / ```py blocks of a markdown text, joined (none: `None`).
pub fn python_blocks(md: &str) -> Option<String> {
    let mut out = String::new();
    let mut inside = false;
    for line in md.lines() {
        let t = line.trim_start();
        if let Some(lang) = t.strip_prefix("```") {
            if inside {
                inside = false;
            } else {
                let lang = lang.trim().to_ascii_lowercase();
                inside = lang == "python" || lang == "py" || lang == "python3";
                if !inside {
                    // Skip a block of another language up to its end.
                    inside = false;
                }
            }
            continue;
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    (!out.trim().is_empty()).then_some(out)
}

const KEYWORDS: &[&str] = &[
    "if",
    "elif",
    "while",
    "for",
    "return",
    "print",
    "assert",
    "with",
    "not",
    "and",
    "or",
    "in",
    "lambda",
    "range",
    "len",
    "int",
    "float",
    "str",
    "list",
    "tuple",
    "dict",
    "set",
    "super",
    "isinstance",
    "type",
    "enumerate",
    "zip",
    "max",
    "min",
    "abs",
    "sum",
    "round",
    "bool",
    "open",
    "format",
    "getattr",
    "hasattr",
    "setattr",
    "repr",
    "map",
    "sorted",
    "any",
    "all",
];

/// Parses Python code: resolves `import` / `from ... import` aliases and lists the calls.
pub fn parse(code: &str) -> Snippet {
    let aliases = import_aliases(code);
    let framework = framework_of(&aliases);
    let method_prefix = match framework {
        "tensorflow" => "tf.Tensor",
        _ => "torch.Tensor",
    };
    Snippet {
        framework: framework.into(),
        code: code.to_string(),
        calls: calls(code, &aliases, method_prefix),
    }
}

/// A module path as the snippet's APIs name it (`tensorflow` as `tf`, `keras` as `tf.keras`).
fn canon(m: &str) -> String {
    let m = m.trim();
    if m == "tensorflow" || m.starts_with("tensorflow.") {
        format!("tf{}", &m["tensorflow".len()..])
    } else if m == "keras" || m.starts_with("keras.") {
        format!("tf.{m}")
    } else {
        m.to_string()
    }
}

/// The names the code's `import` and `from ... import` lines bind, each with the dotted path
/// it stands for.
fn import_aliases(code: &str) -> BTreeMap<String, String> {
    let mut aliases: BTreeMap<String, String> = BTreeMap::new();
    for line in code.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("import ") {
            for part in rest.split(',') {
                let part = part.trim();
                let (module, alias) = match part.split_once(" as ") {
                    Some((m, a)) => (m.trim(), a.trim().to_string()),
                    None => (part, part.split('.').next().unwrap_or(part).to_string()),
                };
                let target = if part.contains(" as ") {
                    canon(module)
                } else {
                    canon(module.split('.').next().unwrap_or(module))
                };
                aliases.insert(alias, target);
            }
        } else if let Some(rest) = t.strip_prefix("from ")
            && let Some((module, names)) = rest.split_once(" import ")
        {
            let module = canon(module);
            for part in names.trim_matches(|c| c == '(' || c == ')').split(',') {
                let part = part.trim();
                if part.is_empty() || part == "*" {
                    continue;
                }
                let (name, alias) = match part.split_once(" as ") {
                    Some((n, a)) => (n.trim(), a.trim()),
                    None => (part, part),
                };
                aliases.insert(alias.to_string(), format!("{module}.{name}"));
            }
        }
    }
    aliases
}

/// `pytorch`, `tensorflow` or `unknown`, from what the imports bind.
fn framework_of(aliases: &BTreeMap<String, String>) -> &'static str {
    let uses = |root: &str| {
        aliases
            .values()
            .any(|v| v == root || v.starts_with(&format!("{root}.")))
    };
    if uses("torch") {
        "pytorch"
    } else if uses("tf") {
        "tensorflow"
    } else {
        "unknown"
    }
}

/// Whether a line starting at `i` holds no calls to collect: imports, definitions and
/// comments.
fn skipped_line(chars: &[char], i: usize) -> bool {
    let rest: String = chars[i..chars.len().min(i + 6)].iter().collect();
    rest.starts_with("import")
        || rest.starts_with("from ")
        || rest.starts_with("def ")
        || rest.starts_with("class ")
        || rest.starts_with('#')
}

/// The position of the parenthesis closing the one at `open` (or the end of the code).
fn closing_paren(chars: &[char], open: usize) -> usize {
    let (mut depth, mut k, mut q) = (0i32, open, None::<char>);
    while k < chars.len() {
        let ch = chars[k];
        if let Some(qq) = q {
            if ch == '\\' {
                k += 1;
            } else if ch == qq {
                q = None;
            }
        } else if ch == '"' || ch == '\'' {
            q = Some(ch);
        } else if ch == '(' {
            depth += 1;
        } else if ch == ')' {
            depth -= 1;
            if depth == 0 {
                break;
            }
        }
        k += 1;
    }
    k
}

/// The API a called dotted name stands for, and whether it is a method call: after a `.` on
/// a value, or a dotted name whose root is no import, it is a method of `method_prefix`.
fn resolve(
    name: &str,
    after_value: bool,
    aliases: &BTreeMap<String, String>,
    method_prefix: &str,
) -> (String, bool) {
    let parts: Vec<&str> = name.split('.').collect();
    let method = || {
        (
            format!("{method_prefix}.{}", parts.last().unwrap_or(&"")),
            true,
        )
    };
    if after_value {
        method()
    } else if let Some(target) = aliases.get(parts[0]) {
        let mut a = target.clone();
        for p in &parts[1..] {
            a.push('.');
            a.push_str(p);
        }
        (a, false)
    } else if parts.len() > 1 {
        method()
    } else {
        (name.to_string(), false)
    }
}

/// The calls of the code in order, outside strings, comments, imports and definitions.
fn calls(code: &str, aliases: &BTreeMap<String, String>, method_prefix: &str) -> Vec<Call> {
    let chars: Vec<char> = code.chars().collect();
    let mut calls = Vec::new();
    let mut line = 1usize;
    let mut i = 0usize;
    let mut quote: Option<char> = None;
    let mut line_start = true;
    let mut skip_line = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
            line_start = true;
            skip_line = false;
            continue;
        }
        if let Some(q) = quote {
            if c == '\\' {
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if line_start && !c.is_whitespace() {
            line_start = false;
            skip_line = skipped_line(&chars, i);
        }
        if skip_line {
            i += 1;
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '"' || c == '\'' {
            quote = Some(c);
            i += 1;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            // A dotted name, possibly after a `.` on a value (`x.sum`, `foo().bar`).
            let start = i;
            let after_value = start > 0 && chars[start - 1] == '.';
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect::<String>();
            let name = name.trim_end_matches('.');
            let mut j = i;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            if j >= chars.len() || chars[j] != '(' {
                continue;
            }
            // The arguments up to the matching parenthesis.
            let k = closing_paren(&chars, j);
            let args: String = chars[j + 1..k.min(chars.len())].iter().collect();
            let keyword = !after_value && !name.contains('.') && KEYWORDS.contains(&name);
            if !keyword {
                let (api, method) = resolve(name, after_value, aliases, method_prefix);
                calls.push(Call {
                    api,
                    args: args.split_whitespace().collect::<Vec<_>>().join(" "),
                    line,
                    method,
                });
            }
            // Continue inside the arguments: nested calls are calls too.
            i = j + 1;
            continue;
        }
        i += 1;
    }
    calls
}
