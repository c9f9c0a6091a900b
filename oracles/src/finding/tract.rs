//! What tract's failure messages say, the stage that met the fault aside: the rewrite rule
//! that failed and the phrase that names the fault.
use super::message::{collapse_lists, normalize_message, without_fact_annotations, without_stage};

/// The rewrite rule named by a tract message `Pulling #N "name" Op over #M "name" Other: ...`
/// as `Op/Other`, or by `declutter node #N "name" Op: ...` (the op's own declutter failed, as
/// EinSum's absorbing an Expand does whether a MatMul or a GRU's expansion made the EinSum) as
/// `declutter Op`; `None` when the message names no rule.
pub fn tract_rule(msg: &str) -> Option<String> {
    // A rewrite inside a subgraph's declutter (a Scan's body) is nested in the outer one's
    // message: the innermost is the one that failed.
    if !msg.contains("Pulling #")
        && let Some(at) = msg.rfind("declutter node #")
    {
        let (op, _) = op_after_node(&msg[at + "declutter node ".len()..])?;
        return Some(format!("declutter {op}"));
    }
    // A pull inside a Scan body's declutter is nested in the pull over the Scan. The innermost
    // failed on its own (`Invalid axis`) is its rule's fault; one whose result does not fit
    // (`Trying to substitute` the op's output by another shape) was handed facts the outer
    // pull made for the body (round 13: Downsample over the body's Tanh, made empty by the
    // pull over the RNN's Scan): the outer pull is the rule.
    let inner = msg.rfind("Pulling #")?;
    let outer = msg.find("Pulling #")?;
    let start = if outer < inner && msg[inner..].contains("Trying to substitute") {
        outer
    } else {
        inner
    };
    let (pulled, rest) = op_after_node(&msg[start + "Pulling ".len()..])?;
    let rest = rest.strip_prefix(" over ")?;
    let (over, _) = op_after_node(rest)?;
    // tract's axis ops (`AxisOp`: AddAxis, RmAxis, MoveAxis, Reshape) share one rule for each
    // op pulled over them (`pull_downsample_over_axis_op`, ...): one fault whichever it is.
    let over = match over {
        "AddAxis" | "RmAxis" | "MoveAxis" | "Reshape" => "AxisOp",
        other => other,
    };
    Some(format!("{pulled}/{over}"))
}

/// A node `#N "name" Op` at the start of `s`: tract's op name and what follows it (its op's name
/// runs up to the next space or colon), with the node's name.
fn op_after_node(s: &str) -> Option<(&str, &str)> {
    node_at(s).map(|(_, op, rest)| (op, rest))
}

/// [`op_after_node`] with the node's name first.
fn node_at(s: &str) -> Option<(&str, &str, &str)> {
    let s = s.strip_prefix('#')?;
    let s = s.trim_start_matches(|c: char| c.is_ascii_digit());
    let s = s.strip_prefix(" \"")?;
    let close = s.find("\" ")?;
    let (name, rest) = (&s[..close], &s[close + 2..]);
    let end = rest.find([' ', ':']).unwrap_or(rest.len());
    let op = &rest[..end];
    (!op.is_empty() && op.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some((
        name,
        op,
        &rest[end..],
    ))
}

/// tract's op of the first node a message names that tract derived from one of the model's
/// (its name is the model node's with a suffix: `#5 "Gelu_1.erf" Erf` is the Erf that tract
/// expands Gelu into): the kernel that failed is that op's, not the model node's.
pub fn tract_derived_op(msg: &str) -> Option<&str> {
    msg.match_indices('#').find_map(|(i, _)| {
        let (name, op, _) = node_at(&msg[i..])?;
        // `Equal_1.split-over-0.0..1` is a piece of the node itself, which tract split over an
        // axis: the node's own op, not one tract derived (round 14: Equal's bool gap filed
        // once as `Equal` and once as tract's `Eq`).
        let derived = name.contains('.') && !name.contains(".split-over-");
        derived.then_some(op)
    })
}

/// What a tract failure says went wrong, without the stage that met it: the innermost cause
/// of its chain ([`key_phrase`](super::key_phrase)), normalized. Messages about two element
/// types meeting in one op (`tensor is F16, accessed as F32`, `No super type for F32 and I32`,
/// an expansion whose output has another type than inferred) are one phrase whatever the
/// types: tract wiring its own f32 constants into a model of another type shows through every
/// one of them.
pub fn tract_phrase(msg: &str) -> Option<String> {
    let lower = msg.to_lowercase();
    let types_differ = || {
        let after = |pat: &str| -> Option<String> {
            let i = lower.rfind(pat)?;
            let rest = &lower[i + pat.len()..];
            let word = rest.split_whitespace().next()?;
            Some(
                word.rsplit(',')
                    .next()?
                    .trim_matches(|c: char| !c.is_ascii_alphanumeric())
                    .to_string(),
            )
        };
        matches!((after("expected "), after(" got ")), (Some(a), Some(b)) if !a.is_empty() && !b.is_empty() && a != b && is_type_word(&a) && is_type_word(&b))
    };
    if ["accessed as", "no super type for", "no supertype found for"]
        .iter()
        .any(|p| lower.contains(p))
        || types_differ()
    {
        return Some(MIXED_TYPES.into());
    }
    let mut m = without_stage(msg);
    for cut in [
        "; with the inputs fixed to their values",
        "ModelPatch {",
        " (at ",
    ] {
        if let Some(i) = m.find(cut) {
            m = &m[..i];
        }
    }
    let m = without_fact_annotations(m);
    let segs: Vec<String> = m.split(": ").map(|s| without_brackets(s.trim())).collect();
    // The innermost cause, joined with the one before when it says nothing alone (a word, or
    // only the facts an op was given: `Invalid inputs for Div: 8,1,F32 ; ,F32`, or a list of
    // facts in brackets: `inputs: [1,32,broadcast((4), (8)),8,F32, ...]`).
    let says_something = |s: &str| {
        s.split_whitespace().count() >= 2
            && s.split(|c: char| !c.is_ascii_alphabetic())
                .any(|w| w.len() >= 2 && !is_type_word(&w.to_ascii_lowercase()))
    };
    let mut plain = segs.last().cloned().unwrap_or_default();
    if !says_something(&plain) && segs.len() >= 2 {
        plain = segs[segs.len() - 2..].join(": ");
    }
    // A scalar's fact has no dims before its type (`,F32`): the rank is the model's.
    let n = collapse_lists(&normalize_message(&plain)).replace(" ,#", " #");
    (n.split_whitespace().count() >= 2).then(|| n.chars().take(100).collect())
}

/// `s` with what its brackets hold as `[_]` (shapes and fact lists are the model's, not the
/// fault's) and without backticks (code in them, `start <= end`, is the condition that failed,
/// not a name).
pub(super) fn without_brackets(s: &str) -> String {
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '[' => {
                if depth == 0 {
                    plain.push_str("[_]");
                }
                depth += 1;
            }
            ']' => depth = depth.saturating_sub(1),
            '`' => {}
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
}

/// Whether tract failed wiring the small graph of its own ops that it expands a node into
/// (RotaryEmbedding, Mean, the recurrent ops): an inner op of the expansion refused its facts
/// (`ToTypedTranslator: in output_facts invocation for X.concat_tail: Concat: ...`), or the
/// expansion's output is not what the node's was (`Output mismatch after rewiring
/// expansion`). Which inner op notices a wrong wiring varies with the model's shapes; a
/// failure of the node's own rule (`ToTypedTranslator: Reshape volume mismatch`) is not one.
pub fn in_expansion_wiring(msg: &str) -> bool {
    msg.contains("ToTypedTranslator: in output_facts invocation for")
        || msg.contains("after rewiring expansion")
}

/// The phrase naming tract's element types meeting in one op ([`tract_phrase`]).
pub const MIXED_TYPES: &str = "mixes element types";

/// tract's names of element types (`F32`, `I64`, `Bool`, `TDim`, ...), lowercased.
pub(super) fn is_type_word(w: &str) -> bool {
    matches!(w, "bool" | "tdim" | "string" | "blob")
        || (w.len() >= 2
            && matches!(w.as_bytes()[0], b'f' | b'i' | b'u' | b'q')
            && w[1..].chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tract_facts_lose_their_element_type() {
        let a = tract_phrase(
            "compile: running pass PushSliceUp: Trying to substitute a 0,4,F32🟰 0,4,F32  by 1,4,F32 as output #0 of #2 \"s\" Slice.",
        );
        let b = tract_phrase(
            "compile: running pass PushSliceUp: Trying to substitute a 1,1,0,Bool🟰 1,1,0,Bool  by 1,1,1,Bool as output #0 of #3 \"t\" Slice.",
        );
        assert_eq!(a, b);
        assert!(a.unwrap().contains("substitute"));
    }

    #[test]
    fn fact_values_and_their_emoji_stay_out_of_phrases() {
        // Two messages seen in campaigns (tract 0.23.9), whose signatures read
        // `msg=# ; ,#🟰 ,# # ◻️,# #` and `msg=trying to substitute a # by #🟰 # # ◻️,# # as ...`.
        let div = tract_phrase(
            "compile: Translating node #94 \"Mean_m04dc886a_4\" AddNary ToTypedTranslator: in output_facts invocation for Mean_m04dc886a_4.norm: Div: Typed ops require rank match. Invalid inputs for Div: 8,1,64,8,F32 ; ,F32🟰 ,F32 3 ◻️,F32 3",
        )
        .unwrap();
        assert_eq!(
            div,
            "typed ops require rank match. invalid inputs for div: # ; #"
        );
        // A rank-1 divisor fails the same way as the scalar one: one phrase.
        let rank1 = tract_phrase(
            "compile: Translating node #3 \"Mean_1\" AddNary ToTypedTranslator: in output_facts invocation for Mean_1.norm: Div: Typed ops require rank match. Invalid inputs for Div: 1,512,F32 ; 1,F32🟰 1,F32 3 ◻️,F32 3",
        );
        assert_eq!(rank1.as_deref(), Some(div.as_str()));
        let sub = tract_phrase(
            "compile: running pass FoldUniformMask(17): Trying to substitute a 1,512,F32 by 1,1,F32🟰 1,1,F32 0 ◻️,F32 0 as output #0 of #16 \"PRelu_mdba5d6a3_3.mul\" Mul.\nModelPatch { model: Graph { nodes: [] } }",
        )
        .unwrap();
        assert_eq!(
            sub,
            "trying to substitute a # by # as output # of # '_' mul."
        );
        assert_eq!(
            without_fact_annotations("a 2,F32🟰 2,F32 1.5 -inf ◻️,F32 1.5 📐S as b"),
            "a 2,F32 as b"
        );
    }
}
