//! Failure messages with what varies between hits of one bug taken out: the normalized
//! message, its core, and the innermost cause in the library's own words.
use super::tract::{is_type_word, tract_phrase};

/// The part of a failure message that names the failure, normalized
/// ([`normalize_message`]): the stage prefix our backends add (`run: `), the second attempt
/// that the tract backend appends (`; with the inputs fixed to their values: ...`), source
/// locations of panics (`(at .../lib.rs:#)`), node names and the "running X node" preamble of
/// ONNX Runtime go; at most 100 characters stay.
pub fn core_message(msg: &str) -> String {
    let mut m = without_context(msg);
    if let Some(i) = m.find("Status Message: ") {
        m = &m[i + "Status Message: ".len()..];
    }
    let n = normalize_message(&without_fact_annotations(m));
    // Source paths of C++ exceptions (`/onnxruntime_src/.../lrn.h:# onnxruntime::...`): the
    // file name stays, the directories go.
    let n: String = n
        .split(' ')
        .map(|w| match w.rfind('/') {
            Some(i) if w.starts_with('/') => &w[i + 1..],
            _ => w,
        })
        .collect::<Vec<_>>()
        .join(" ");
    collapse_lists(&n).chars().take(100).collect()
}

/// Whether two failure messages of `library` (`tract`, `ort`, ...) say the same thing went
/// wrong, the stage that met it and the model's names, numbers and shapes aside.
pub fn same_failure(library: &str, a: &str, b: &str) -> bool {
    let key = |m: &str| {
        (library == "tract")
            .then(|| tract_phrase(m))
            .flatten()
            .unwrap_or_else(|| core_message(m))
    };
    key(a) == key(b)
}

/// The innermost cause a failure message names, as the library itself words it (for a
/// reproduction to look for): the stage prefix, the second attempt the tract backend appends
/// and the panic's source location go; of the chain of causes (`a: b: c`) the last stays, and
/// of an ONNX Runtime exception what follows its source location. `None` when nothing usable
/// (at least two words) is left.
pub fn key_phrase(msg: &str) -> Option<String> {
    let m = without_context(msg);
    // ndarray words its bounds panic by build: "index [..] is out of bounds for array of shape
    // [..]" in debug builds, "index out of bounds" in release ones (a library's Python wheel):
    // the phrase both share.
    if m.contains("ndarray: index") && m.contains("out of bounds") {
        return Some("out of bounds".to_string());
    }
    // Causes are joined by `: ` outside brackets (`TypedConcat { axis: 3 } inputs: [..]` is
    // one cause and its values).
    let causes = split_outside(m, ": ");
    // The innermost cause worded in words: the values a library prints after it (shapes,
    // tract's facts) stay with it only when they are short and plain.
    let at = (0..causes.len())
        .rev()
        .find(|&i| worded(causes[i]))
        .unwrap_or(causes.len() - 1);
    let mut cause = causes[at].trim();
    // an ONNX Runtime exception: what follows its source location and function
    if let Some(rest) = after_source_location(cause) {
        cause = rest;
    }
    let after = causes[at + 1..].join(": ");
    let last = if after.is_empty() || after.len() > 40 || after.contains(FACT_MARKS) {
        cause.to_string()
    } else {
        format!("{cause}: {}", after.trim())
    };
    let last: String = last.chars().take(100).collect();
    (last.split_whitespace().count() >= 2).then_some(last)
}

/// `s` split at each `sep` where no bracket, brace or parenthesis is open.
fn split_outside<'a>(s: &'a str, sep: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 && i >= start && s[i..].starts_with(sep) => {
                out.push(&s[start..i]);
                start = i + sep.len();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// What an ONNX Runtime exception says after its source location and the function it was
/// thrown in (`/src/lrn.h:58 onnxruntime::LRN<T>::LRN(const OpKernelInfo&) [with T = float]
/// size_ > 0 was false.` says `size_ > 0 was false.`); `None` when `cause` starts with no
/// source location.
fn after_source_location(cause: &str) -> Option<&str> {
    let (at, rest) = cause.split_once(' ')?;
    let (file, line) = at.rsplit_once(':')?;
    let source = [".h", ".cc", ".cpp", ".c", ".hpp", ".cu"]
        .iter()
        .any(|e| file.ends_with(e));
    if !source || line.is_empty() || !line.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // The function: its name up to its parameters, the parameters, `const`, template
    // arguments in brackets.
    let mut rest = rest.trim_start();
    if let Some(open) = rest.find('(')
        && rest[..open].contains("::")
        && rest[..open].split_whitespace().count() <= 3
    {
        rest = after_group(&rest[open..], '(', ')').unwrap_or(rest);
        rest = rest.trim_start();
        rest = rest.strip_prefix("const").unwrap_or(rest).trim_start();
        if rest.starts_with('[') {
            rest = after_group(rest, '[', ']').unwrap_or(rest).trim_start();
        }
    }
    Some(rest.trim())
}

/// What follows the group that `s` opens with `open`, its nested groups included.
fn after_group(s: &str, open: char, close: char) -> Option<&str> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(&s[i + c.len_utf8()..]);
            }
        }
    }
    None
}

/// Whether a cause is worded (two words of three letters or more), not only values (what
/// brackets hold is values: a fact list's `broadcast((4), (8))` is no word).
fn worded(cause: &str) -> bool {
    super::tract::without_brackets(cause)
        .split_whitespace()
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 3)
        .count()
        >= 2
}

/// `msg` without the stage prefix our backends add (`run: `, `panic: `, ...).
pub(super) fn without_stage(msg: &str) -> &str {
    let mut m = msg;
    for p in ["load: ", "compile: ", "run: ", "panic: "] {
        m = m.strip_prefix(p).unwrap_or(m);
    }
    m
}

/// `msg` without its stage prefix ([`without_stage`]), the second attempt the tract backend
/// appends (`; with the inputs fixed to their values: ...`) and a panic's source location
/// (`(at .../lib.rs:#)`).
fn without_context(msg: &str) -> &str {
    let mut m = without_stage(msg);
    if let Some(i) = m.find("; with the inputs fixed to their values") {
        m = &m[..i];
    }
    // A dump of a library's own structures on lines of their own (tract's `ModelPatch { ..`
    // after a failed rewrite): the model it was rewriting, not the failure.
    if let Some((i, _)) = m
        .match_indices('\n')
        .find(|&(i, _)| debug_dump(&m[i + 1..]))
    {
        m = &m[..i];
    }
    if let Some(i) = m.rfind(" (at ") {
        m = &m[..i];
    }
    m
}

/// Whether `line` starts a Rust `Debug` dump of a struct (`ModelPatch { context: ...`).
fn debug_dump(line: &str) -> bool {
    let name = line.split(' ').next().unwrap_or_default();
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric())
        && line[name.len()..].starts_with(" {")
}

/// The marks with which tract prints what it knows of a value beside its shape and type (a
/// `TypedFact`: `1,1,F32🟰 1,1,F32 0 ◻️,F32 0`): the constant, the uniform value, the uniform
/// dimension, an exotic fact, a region of interest.
const FACT_MARKS: [char; 5] = ['🟰', '◻', '📐', '🔍', '🬳'];

/// `msg` without the values tract prints after a fact's marks ([`FACT_MARKS`]): each mark and
/// the shapes, types and numbers after it go, the fact's own shape and type stay. They are
/// the model's weights, not the fault, and emoji in a signature help nobody.
pub fn without_fact_annotations(msg: &str) -> String {
    if !msg.contains(FACT_MARKS) {
        return msg.to_string();
    }
    // A word of a fact's value: shapes, element types, numbers, an elided `...`.
    let value_word = |w: &str| {
        w.split(',').all(|p| {
            let p = p.trim_matches(|c: char| FACT_MARKS.contains(&c) || c == '\u{fe0f}');
            p.is_empty()
                || p == "..."
                || p.parse::<f64>().is_ok()
                || super::tract::is_type_word(&p.to_ascii_lowercase())
        })
    };
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find(FACT_MARKS) {
        out.push_str(rest[..i].trim_end());
        // The mark's own word goes whatever it holds (`📐S`: a dimension's expression).
        let marked = &rest[i..];
        let mut tail = &marked[marked.find(char::is_whitespace).unwrap_or(marked.len())..];
        loop {
            let t = tail.trim_start();
            let end = t.find(char::is_whitespace).unwrap_or(t.len());
            if end == 0 || !value_word(&t[..end]) {
                break;
            }
            tail = &t[end..];
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// A backend message with what varies between occurrences of one bug taken out: quoted names
/// become `'_'`, numbers `#`, hex addresses `0x#`, whitespace runs one space; lowercase;
/// at most 160 characters.
pub fn normalize_message(msg: &str) -> String {
    let msg = &special_values_as_numbers(msg);
    let mut out = String::new();
    let mut chars = msg.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                // A quoted span (on one line) is a name; an unmatched quote is kept.
                let rest: String = chars.clone().take_while(|&d| d != c && d != '\n').collect();
                if chars.clone().nth(rest.chars().count()) == Some(c) {
                    for _ in 0..=rest.chars().count() {
                        chars.next();
                    }
                    out.push_str("'_'");
                } else {
                    out.push(c);
                }
            }
            '0' if chars.peek() == Some(&'x') => {
                chars.next();
                while chars.peek().is_some_and(|d| d.is_ascii_hexdigit()) {
                    chars.next();
                }
                out.push_str("0x#");
            }
            // A sign before a number is the number's (`-0.5, -2` is a list of values, as
            // `0.5, 2` is); a hyphen inside a word stays.
            '-' if chars.peek().is_some_and(char::is_ascii_digit)
                && !out
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '#') => {}
            d if d.is_ascii_digit() => {
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '.' || *d == '_')
                {
                    chars.next();
                }
                // A word with a digit in it is a generated name or a number: `#`.
                while out
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '#')
                {
                    out.pop();
                }
                out.push('#');
            }
            w if w.is_whitespace() => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            other => out.extend(other.to_lowercase()),
        }
    }
    let t = out.trim();
    t.chars().take(160).collect()
}

/// `msg` with the words `inf`, `-inf` and `NaN` (any case) written `0`: a tensor's values a
/// library prints are numbers whichever they are (round 14: tract's Expand filed twice, once
/// printing finite values and once `-inf, -inf, ...`).
fn special_values_as_numbers(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let w = word.trim_start_matches('-').to_ascii_lowercase();
        if matches!(w.as_str(), "inf" | "nan" | "infinity") {
            out.push('0');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in msg.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || (c == '-' && word.is_empty()) {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `#, #, #` (and `#,#,#`) as one `#`: a shape printed in a message has the rank of the
/// model at hand, not of the bug.
pub(super) fn collapse_lists(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'#' {
            out.push('#');
            i += 1;
            loop {
                let mut j = i;
                if j < b.len() && b[j] == b',' {
                    j += 1;
                    while j < b.len() && b[j] == b' ' {
                        j += 1;
                    }
                    if j < b.len() && b[j] == b'#' {
                        i = j + 1;
                        continue;
                    }
                    // A tract fact ends its shape with the element type (`1,1,0,Bool`): the
                    // type is the model's too.
                    let end = s[j..]
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
                        .map_or(s.len(), |k| j + k);
                    let word = s[j..end].to_ascii_lowercase();
                    if end > j && is_type_word(&word.replace('#', "8")) {
                        i = end;
                        continue;
                    }
                }
                break;
            }
        } else {
            let c = s[i..].chars().next().expect("in bounds");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_normalize_names_numbers_and_addresses() {
        let a = normalize_message("Failed analyse for node #12 \"n3_conv\" Conv: shape [1, 3, 28]");
        let b = normalize_message("Failed analyse for node #7 \"n9_conv\" Conv: shape [2, 5, 14]");
        assert_eq!(a, b);
        assert!(a.contains("'_'") && a.contains("conv"), "{a}");
        assert_eq!(
            normalize_message("segfault at 0x7ffd1234 in   f"),
            "segfault at 0x# in f"
        );
        assert_eq!(
            normalize_message("onehot_mdddc3e1 (OneHot): index 7 out of range"),
            normalize_message("onehot_m4da9f_12 (OneHot): index 12 out of range")
        );
        assert_ne!(
            normalize_message("index out of range"),
            normalize_message("bad shape")
        );
        assert_eq!(normalize_message("it's fine"), "it's fine");
    }

    #[test]
    fn signs_belong_to_the_numbers_in_a_list_of_values() {
        // Round 13: one tract Expand fault filed twice, its message printing the tensor.
        let a = "Broadcasting 2,5,1,5,F32 0.21000239, 0.1638355, 0.2411571... to [2, 2, 1, 5, 5]";
        let b = "Broadcasting 2,5,1,5,F32 -0.099794425, -0.00026074052, 0.12110407... to [2, 2, 1, 5, 5]";
        assert_eq!(core_message(a), core_message(b));
        assert_eq!(tract_phrase(a), tract_phrase(b));
        // Infinities and NaN printed among the values are values too (round 14).
        let c = "Broadcasting 16,1,F32 -inf, -inf, NaN, inf... to [2, 1, 16]";
        assert_eq!(tract_phrase(a), tract_phrase(c));
        assert_eq!(core_message(a), core_message(c));
        assert_eq!(normalize_message("no info, nano"), "no info, nano");
        // A hyphen inside a word is no sign.
        assert_eq!(normalize_message("non-trivial x-1"), "non-trivial x-#");
    }

    #[test]
    fn core_messages_drop_what_varies_between_hits() {
        assert_eq!(
            core_message(
                "run: evaluating #12 \"n3_pad\" Pad: bool is not a number; with the inputs fixed to their values: failed analyse"
            ),
            "evaluating # '_' pad: bool is not a number"
        );
        assert_eq!(
            core_message(
                "panic: ndarray: index out of bounds (at /root/.cargo/registry/src/x/ndarray-0.16/src/arraytraits.rs:26)"
            ),
            "ndarray: index out of bounds"
        );
        assert_eq!(
            core_message(
                "run: Non-zero status code returned while running MaxPool node. Name:'mp_3' Status Message: padding values must be non-negative"
            ),
            "padding values must be non-negative"
        );
    }

    #[test]
    fn a_dump_after_the_message_is_no_cause() {
        let msg = "compile: running pass declutter: declutter node #86 \"s\" Downsample: Pulling #86 \"s\" Downsample over #74 \"c\" Conv: Trying to substitute a 1,32,7,8,F32 by 1,32,8,8,F32 as output #0 of #86 \"s\" Downsample.\nModelPatch { context: [], dont_apply_twice: None, model: Graph { nodes: [Node { id: 2, op: EinSum abcd->ad (F32), outputs: [1,8,F32 ] }] } }";
        let k = key_phrase(msg).unwrap();
        assert!(k.starts_with("Trying to substitute a 1,32,7,8,F32"), "{k}");
        assert!(!core_message(msg).contains("modelpatch"));
    }

    #[test]
    fn an_ndarray_bounds_panic_has_the_phrase_of_every_build() {
        for m in [
            "panic: ndarray: index [0, 2, 8, 0, 0] is out of bounds for array of shape [1, 2, 8, 1, 1] (at /x/ndarray-0.17.2/src/arraytraits.rs:36)",
            "panic: ndarray: index out of bounds (at /x/ndarray-0.17.2/src/arraytraits.rs:36)",
        ] {
            assert_eq!(key_phrase(m).as_deref(), Some("out of bounds"), "{m}");
        }
    }

    #[test]
    fn key_phrases_skip_the_function_and_keep_values_in_brackets_whole() {
        // Round 13 titles: "fails: == 0 was false." and a bare shape list.
        let ort = "run: Non-zero status code returned while running GlobalLpPool node. Name:'g' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/nn/pool_attributes.h:124 onnxruntime::TensorShapeVector onnxruntime::PoolAttributes::SetOutputSize(const onnxruntime::TensorShape&, int64_t, onnxruntime::TensorShapeVector*, bool) const input_shape.Size() > 0 || input_shape[0] == 0 was false. Invalid input shape.";
        let k = key_phrase(ort).unwrap();
        assert!(
            k.starts_with("input_shape.Size() > 0 || input_shape[0] == 0 was false."),
            "{k}"
        );
        let concat = "compile: Translating node #12 \"R_5\" RotaryEmbedding ToTypedTranslator: in output_facts invocation for R_5.concat_tail: Concat: Inconsistent concat TypedConcat { axis: 3 } inputs: [2,16,broadcast((broadcast((3), (8))), (broadcast((3), (8)))),6,F32, 2,16,8,10,F32]";
        assert_eq!(
            key_phrase(concat).as_deref(),
            Some("Inconsistent concat TypedConcat { axis: 3 } inputs")
        );
        let reshape = "compile: Translating node #28 \"R_14\" RotaryEmbedding ToTypedTranslator: in output_facts invocation for R_14: Reshape: Incompatible reshape for shape [Val(1), Val(8), Broadcast([Val(2), Val(8)])] and Reshape(2, [8,4], [32])";
        let k = key_phrase(reshape).unwrap();
        assert!(
            k.starts_with("Incompatible reshape for shape [Val(1)"),
            "{k}"
        );
    }

    #[test]
    fn key_phrases_are_the_innermost_cause() {
        assert_eq!(
            key_phrase("run: Evaluating #78 \"Pad_1\" Pad: Bool is not a number; with the inputs fixed to their values: x").as_deref(),
            Some("Bool is not a number")
        );
        assert_eq!(
            key_phrase("run: Non-zero status code returned while running MaxPool node. Name:'m' Status Message: padding values must be non-negative").as_deref(),
            Some("padding values must be non-negative")
        );
        assert_eq!(
            key_phrase("compile: Exception during initialization: /src/lrn.h:58 onnxruntime::LRN<T>::LRN(const onnxruntime::OpKernelInfo&) [with T = float] size_ > 0 && size_ % 2 == 1 was false.").as_deref(),
            Some("size_ > 0 && size_ % 2 == 1 was false.")
        );
        assert_eq!(
            key_phrase("panic: ndarray: index out of bounds (at /x/ndarray/src/arraytraits.rs:26)")
                .as_deref(),
            Some("out of bounds")
        );
        assert_eq!(key_phrase("panic: boom"), None);
        // Values after the cause: short plain ones stay with it, tract's facts do not.
        assert_eq!(
            key_phrase("panic: ndarray: could not broadcast array from shape: [2, 2] to: [0, 2] (at /x/lib.rs:1)")
                .as_deref(),
            Some("could not broadcast array from shape: [2, 2] to: [0, 2]")
        );
        assert_eq!(
            key_phrase("compile: Translating node #5 \"m\" Mean: Typed ops require rank match. Invalid inputs for Div: 1,1,1,1,F32 ; ,F32\u{1f7f0} ,F32 2").as_deref(),
            Some("Typed ops require rank match. Invalid inputs for Div")
        );
    }

    #[test]
    fn one_failure_met_at_two_stages_is_the_same_failure() {
        let panic = "panic: ndarray: could not broadcast array from shape: [0] to: [1] (at /x/ndarray/src/lib.rs:1801)";
        assert!(same_failure(
            "tract",
            panic,
            "panic: ndarray: could not broadcast array from shape: [0] to: [1] (at /x/lib.rs:9)"
        ));
        assert!(!same_failure(
            "tract",
            panic,
            "run: Evaluating #1 \"/Erf\" Erf: Erf does not support F64"
        ));
        assert!(same_failure(
            "tract",
            "compile: Failed analyse for node #4 \"q\" Pad: start <= axis_len failed",
            "run: Evaluating #1 \"p\" Pad: start <= axis_len failed"
        ));
        assert!(!same_failure("ort", "run: a failed", "run: b failed"));
    }
}
