//! A report's title: the library, the op or the rewrite, what goes wrong and the trigger the
//! minimization kept.
use super::*;

/// A key phrase cut at its length limit ([`key_phrase`] keeps 100 characters) ends at its
/// last whole word, with an ellipsis, in a title.
pub(super) fn whole_words(k: &str) -> String {
    if k.chars().count() < 100 {
        return k.to_string();
    }
    let cut = k
        .rfind(' ')
        .map_or(k, |i| k[..i].trim_end_matches([',', ';', ':']));
    format!("{cut} …")
}

/// `k` with each bracketed list longer than a short shape written `[…]`: a title says what
/// failed, the report's message gives the values.
pub(super) fn short_lists(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    let mut rest = k;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let mut depth = 0usize;
        let close = rest[open..].char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(open + i)
        });
        let Some(close) = close else {
            out.push_str(&rest[open..]);
            return out;
        };
        let inner = &rest[open + 1..close];
        if inner.chars().count() > 24 {
            out.push_str("[…]");
        } else {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Where the faulty library's run past its time limit was stopped, in the minimized model's
/// runs, else the original's.
pub(super) fn hang_step<'m>(meta: &'m Meta, f: &Finding) -> Option<&'m str> {
    let faulty = f.backends.first()?;
    meta.minimized_runs
        .iter()
        .chain(&meta.runs)
        .filter(|r| &r.backend == faulty)
        .find_map(|r| r.step.as_deref())
}

/// The title of the report: the library, the op, what goes wrong and its trigger.
pub(in crate::bundle) fn title(
    meta: &Meta,
    f: &Finding,
    op: Option<&str>,
    facts: &[String],
    calls: &[String],
) -> String {
    let lib = if meta.library.is_empty() {
        meta.backends[0].clone()
    } else {
        meta.library.clone()
    };
    if let Some(pass) = f.optimizer_pass() {
        // `signal 11 (SIGSEGV)`: how the process ended, before the step it ended in.
        let how = f.message.split(": ").next().unwrap_or_default();
        let on = op
            .map(|o| format!(" on a model of {o}"))
            .unwrap_or_default();
        return format!("{lib}: the optimizer pass {pass} crashes{on}: {how}");
    }
    let what = match (meta.kind, f.symptom_class()) {
        // A panic is a crash at its source line, not a type the library declares it lacks.
        _ if f.gap.is_some() && f.panic_site().is_none() => {
            // The op this model shows it on; the ops other hits met it on are listed in the
            // report, not here (they are not in this model).
            let g = f.gap.clone().unwrap_or_default();
            let ops: Vec<&str> = meta.ops_seen.keys().map(String::as_str).collect();
            // The kernel may be an op the library derived from the model's (tract's Gelu runs
            // an Erf).
            let derived = f.gap_op().filter(|k| Some(*k) != f.op_type());
            let on = match (derived, op) {
                (Some(kernel), Some(op)) => format!("{kernel} inside {op}"),
                (kernel, op) => kernel
                    .or(op)
                    .or(ops.first().copied().filter(|_| ops.len() == 1))
                    .unwrap_or("?")
                    .to_string(),
            };
            // TDim is tract's own symbolic-dimension type, not one of ONNX's: the bug is an
            // int64 value tract holds as a dimension (a shape computed, a Cast to int64)
            // reaching an op without a TDim kernel, not a type ONNX allows.
            return if g == "tdim" {
                // The producers it needs made the value (a Cast to int64): the fault is theirs
                // as much as the consumer's missing kernel.
                let from = match &f.blame {
                    Some(Blame::WithProducers { ops }) if !ops.is_empty() => {
                        format!(" that {} gives it,", ops.join(" and "))
                    }
                    _ => String::new(),
                };
                format!(
                    "{lib}: {on} fails on an int64 value{from} held as tract's dimension type TDim"
                )
            } else {
                format!("{lib}: no support for element type {g} ({on}), which ONNX allows")
            };
        }
        (Kind::Crash, _) => match key_phrase(&f.message) {
            Some(k) => format!("fails: {}", whole_words(&short_lists(&k))),
            None => "fails on a valid model".into(),
        },
        (Kind::Inconsistency, "shape") => "gives an output of the wrong shape".into(),
        // burn computes the node right on fresh tensors: the kernel reads the strided view
        // its producers leave in memory order, and the attributes only decide whether that
        // shows (a full reduction of a permuted tensor is right whatever the order).
        _ if f.on_strided_input() => {
            let producers = match &f.blame {
                Some(Blame::WithProducers { ops }) if !ops.is_empty() => ops.join(" and "),
                _ => "its producers".into(),
            };
            // The op as burn's calls (`calls`: those the interpreter runs it with), where a
            // burn maintainer looks: one of them reads the view in memory order.
            // (An op that is one call of its own name, Abs as `abs`, says nothing more.)
            let own = |c: &[String]| matches!(c, [one] if op.is_some_and(|o| o.eq_ignore_ascii_case(one)));
            let calls = match calls {
                [] => String::new(),
                c if own(c) => String::new(),
                c => format!(" (burn's {})", c.join(", ")),
            };
            return format!(
                "{lib}: {}{calls} after {producers} gives wrong values on the memory layout \
                 {producers} leaves (right on a fresh tensor of the same values)",
                op.unwrap_or("an op"),
            );
        }
        (Kind::Inconsistency, _) => "gives wrong values".into(),
        (Kind::Nan, _) => "gives NaN/Inf where the result is finite".into(),
        // Where the library was when it was stopped: preparing (tract's compile, ONNX
        // Runtime's session) or running (round 13: a tract hang at compile read as one at run).
        (Kind::Hang, _) => match hang_step(meta, f) {
            Some(step) => format!("does not finish {step}"),
            None => "does not finish".into(),
        },
        (Kind::Slow, _) => "is far slower than other libraries".into(),
        (Kind::Memory, _) => "uses far more memory than other libraries".into(),
        (Kind::Flaky, _) => "gives different results on identical runs".into(),
    };
    let layer = match meta.layer {
        Some(Layer::Optimizer) => " with graph optimizations",
        _ => "",
    };
    // A node that shows it only after its producers: the title names them.
    let after = match &f.blame {
        Some(Blame::WithProducers { ops }) if !ops.is_empty() => {
            format!(" after {}", ops.join(" and "))
        }
        _ => String::new(),
    };
    // A rewrite rule that fails is the library's rule, not the op's kernel: the title names it.
    let mut t = match (rewrite(f), op) {
        (Some(rule), _) => format!("{lib}: {rule}{layer} {what}"),
        (None, Some(op)) => format!("{lib}: {op}{after}{layer} {what}"),
        (None, None) => format!("{lib}{layer} {what}"),
    };
    let facts: Vec<&String> = claimed(facts).take(4).collect();
    if !facts.is_empty() {
        t.push_str(&format!(
            " ({})",
            facts
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    t
}

/// The facts of a minimized node without the attributes the bug does not need: the trigger
/// search tried removing each, and the bug stayed without those not in `trigger`.
pub(super) fn without_incidental(facts: Vec<String>, trigger: &[String]) -> Vec<String> {
    facts
        .into_iter()
        .filter(|f| attr_name(f).is_none_or(|a| trigger.iter().any(|t| t == a)))
        .collect()
}

/// The attribute a fact of [`trigger_facts`] sets (`clip` of `clip=0.5`), if it is one.
fn attr_name(fact: &str) -> Option<&str> {
    let (name, _) = fact.split_once('=')?;
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(name)
}

/// How many ops a title lists of the part a rewrite changed (more are counted).
const MAX_TITLE_OPS: usize = 4;

/// The rewrite a failure happened in, in words (`the rewrite pulling Downsample over Conv`),
/// when tract's message names one, or ONNX Runtime's (`the rewrite LayerNormFusion`) when the
/// blame check found the failure only inside the part that rewrite matched.
pub(super) fn rewrite(f: &Finding) -> Option<String> {
    match &f.blame {
        Some(Blame::InRewrite { rule, .. }) => return Some(format!("the rewrite {rule}")),
        Some(Blame::Rewrite { rule, ops, .. }) if ops.len() <= MAX_TITLE_OPS => {
            return Some(format!("the rewrite {rule} of {}", ops.join(" → ")));
        }
        Some(Blame::Rewrite { rule, ops, .. }) => {
            return Some(format!(
                "the rewrite {rule} of a model of {} ops",
                ops.len()
            ));
        }
        _ => {}
    }
    let rule = f.tract_rule()?;
    Some(match rule.split_once('/') {
        Some((pulled, over)) => format!("the rewrite pulling {pulled} over {over}"),
        None => format!("the rewrite {rule}"),
    })
}
