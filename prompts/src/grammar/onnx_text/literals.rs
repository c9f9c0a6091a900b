//! Literal values: the value rules of initializers (`fv`, `iv`, `uv`), the task's trigger
//! values (`ft`, `it`, `ut`) and the initializers whose values the search fixed.

use super::values::{dims_text, float_text, value_text};
use super::{Literal, MAX_INIT_VALUES, Task};
use crate::grammar::{Expr, Grammar};
use mutagraph_ir::DType;

/// The rules of the values initializers may hold: `fv` (floats), `iv` (signed integers),
/// `uv` (non-negative integers and bools).
pub(super) fn add_values(g: &mut Grammar, task: &Task) {
    let mut f: Vec<String> = ["0.0", "1.0", "-1.0", "0.5", "2.0", "-3.5"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut i: Vec<String> = vec!["0".into(), "1".into()];
    for l in &task.literals {
        match l {
            Literal::Float(x) => f.push(float_text(*x)),
            Literal::Int(x) => i.push(x.to_string()),
            Literal::Ints(_) => {}
        }
    }
    f.dedup();
    let mut u: Vec<String> = vec!["0".into(), "1".into()];
    for x in &i {
        if !x.starts_with('-') && !u.contains(x) {
            u.push(x.clone());
        }
    }
    let mut seen = Vec::new();
    i.retain(|x| {
        let new = !seen.contains(x);
        seen.push(x.clone());
        new
    });
    let mut seen = Vec::new();
    f.retain(|x| {
        let new = !seen.contains(x);
        seen.push(x.clone());
        new
    });
    g.rule("fv", Expr::lits(f));
    g.rule("iv", Expr::lits(i));
    g.rule("uv", Expr::lits(u));
    for (v, t) in [("fv", "ft"), ("iv", "it"), ("uv", "ut")] {
        let texts = trigger_texts(v, task);
        if !texts.is_empty() {
            g.rule(t, Expr::lits(texts));
        }
    }
}

/// Whether a float is special enough to be what triggers a bug: NaN, an infinity, or a
/// magnitude of at least [`SPECIAL_MAGNITUDE`] (or a nonzero one below its inverse).
fn special(x: f64) -> bool {
    !x.is_finite()
        || x.abs() >= SPECIAL_MAGNITUDE
        || (x != 0.0 && x.abs() <= 1.0 / SPECIAL_MAGNITUDE)
}

/// See [`special`].
const SPECIAL_MAGNITUDE: f64 = 1e4;

/// The task's literals a value rule `v` (`fv`, `iv`, `uv`) can write, as text, without
/// repeats: for floats only the [`special`] ones when the task has any (a snippet's NaN or
/// 1e30 is its trigger, its 1.0 is not).
fn trigger_texts(v: &str, task: &Task) -> Vec<String> {
    let has_special = task
        .literals
        .iter()
        .any(|l| matches!(l, Literal::Float(x) if special(*x)));
    let mut out: Vec<String> = Vec::new();
    for l in &task.literals {
        let t = match (v, l) {
            ("fv", Literal::Float(x)) if !has_special || special(*x) => float_text(*x),
            ("iv", Literal::Int(x)) => x.to_string(),
            ("uv", Literal::Int(x)) if *x >= 0 => x.to_string(),
            _ => continue,
        };
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The trigger rule of value rule `v` when the task has literals it can write.
pub(super) fn trigger_rule(v: &str, task: &Task) -> Option<&'static str> {
    if trigger_texts(v, task).is_empty() {
        return None;
    }
    match v {
        "fv" => Some("ft"),
        "iv" => Some("it"),
        "uv" => Some("ut"),
        _ => None,
    }
}

/// `n` values of rule `v` separated by ", ", one of which (any position) is of rule `t`.
pub(super) fn values_with_trigger(v: &str, t: &str, n: i64) -> Expr {
    let n = n.max(1) as u32;
    Expr::Alt(
        (0..n)
            .map(|p| {
                let before = Expr::seq([Expr::r(v), Expr::lit(", ")]).repeat(p, Some(p));
                let after =
                    Expr::seq([Expr::lit(", "), Expr::r(v)]).repeat(n - 1 - p, Some(n - 1 - p));
                Expr::seq([before, Expr::r(t), after])
            })
            .collect(),
    )
}

/// `n` values of rule `v` separated by ", ".
pub(super) fn values_expr(v: &str, n: i64) -> Expr {
    if n <= 0 {
        return Expr::Seq(vec![]);
    }
    Expr::seq([
        Expr::r(v),
        Expr::seq([Expr::lit(", "), Expr::r(v)]).repeat((n - 1) as u32, Some((n - 1) as u32)),
    ])
}

/// The value rule for free literal values of dtype `d` (`None`: no literal initializer).
pub(super) fn value_rule(d: DType) -> Option<&'static str> {
    match d {
        DType::F32 | DType::F64 => Some("fv"),
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => Some("iv"),
        DType::U8 | DType::U16 | DType::U32 | DType::U64 | DType::Bool => Some("uv"),
        _ => None,
    }
}

/// An initializer whose values the search fixed (a shape, axes, scales), with the task's
/// literals as alternatives: an integer list of the same rank-1 length in place of the
/// values, a float in place of each float value.
pub(super) fn fixed_init(
    t: &str,
    d: DType,
    dims: &[i64],
    name: &str,
    vals: &[f64],
    task: &Task,
) -> Option<Expr> {
    let texts = vals
        .iter()
        .map(|x| value_text(d, *x))
        .collect::<Option<Vec<_>>>()?;
    let floats: Vec<String> = task
        .literals
        .iter()
        .filter_map(|l| match l {
            Literal::Float(x) if d.is_float() => value_text(d, *x),
            _ => None,
        })
        .collect();
    let per_value: Vec<Expr> = texts
        .iter()
        .map(|x| {
            let mut a = vec![Expr::lit(x.clone())];
            a.extend(floats.iter().map(|f| Expr::lit(f.clone())));
            Expr::Alt(a)
        })
        .collect();
    let mut body = Vec::new();
    for (i, e) in per_value.into_iter().enumerate() {
        if i > 0 {
            body.push(Expr::lit(", "));
        }
        body.push(e);
    }
    let mut alts = vec![Expr::seq([
        Expr::lit(format!("{t}{} {name} = {{", dims_text(dims))),
        Expr::Seq(body),
        Expr::lit("}"),
    ])];
    if dims.len() == 1 && !d.is_float() {
        for l in &task.literals {
            // A list of the fixed values' length only: how many values such an input holds
            // (axes, pads, a shape) is what makes the model valid.
            if let Literal::Ints(v) = l
                && !v.is_empty()
                && v.len() == vals.len()
                && v.len() as i64 <= MAX_INIT_VALUES
                && let Some(ts) = v
                    .iter()
                    .map(|x| value_text(d, *x as f64))
                    .collect::<Option<Vec<_>>>()
            {
                alts.push(Expr::lit(format!(
                    "{t}[{}] {name} = {{{}}}",
                    v.len(),
                    ts.join(", ")
                )));
            }
        }
    }
    Some(Expr::Alt(alts))
}
