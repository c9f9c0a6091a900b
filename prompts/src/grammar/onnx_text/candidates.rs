//! The candidates the search tries: layouts of an op's inputs (with their value names and
//! type variables), shapes of the inputs and values of the attributes.

use super::instance::{Layout, Shape, Slot};
use super::values::{DTYPES, attr_text, count, rank_of};
use mutagraph_ir::DType;
use mutagraph_ir::attr::{AttrKind, AttrValue};
use mutagraph_ir::registry::{AttrSpec, Legal, OpSpec, PortKind};

/// Names that cannot be value names without quotes.
fn reserved(name: &str) -> bool {
    DTYPES.iter().any(|(_, n)| *n == name)
        || matches!(
            name,
            "seq" | "optional" | "map" | "sparse_tensor" | "opaque" | "nan" | "inf" | "infinity"
        )
        || name.starts_with("float8")
        || name.starts_with("complex")
        || name.starts_with("int")
        || name.starts_with("uint")
}

fn value_name(port: &str, used: &mut Vec<String>) -> String {
    let mut base: String = port
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) || reserved(&base) {
        base = format!("x_{base}");
    }
    let mut name = base.clone();
    let mut i = 1;
    while used.contains(&name) {
        name = format!("{base}_{i}");
        i += 1;
    }
    used.push(name.clone());
    name
}

/// The dtypes the grammar offers on input `slot`, in preference order.
pub(super) fn port_dtypes(spec: &OpSpec, slot: usize, opset: i64) -> Vec<DType> {
    let mut v: Vec<DType> = spec
        .input_allowed_at(slot, opset)
        .unwrap_or_default()
        .into_iter()
        .filter(|d| rank_of(*d) != usize::MAX)
        .collect();
    v.sort_by_key(|d| rank_of(*d));
    v.dedup();
    v
}

/// Candidate layouts, the plainest first: required inputs only, then all optional inputs,
/// then each optional input alone; variadic ports with one, then two values.
pub(super) fn layouts(spec: &OpSpec, opset: i64) -> Vec<Layout> {
    let optional: Vec<usize> = spec
        .inputs
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            p.kind == PortKind::Optional
                && !p.tc.is_empty()
                && !port_dtypes(spec, *i, opset).is_empty()
        })
        .map(|(i, _)| i)
        .collect();
    let mut sets: Vec<Vec<usize>> = vec![vec![]];
    if !optional.is_empty() {
        for &o in &optional {
            sets.push(vec![o]);
        }
        sets.push(optional.clone());
    }
    sets.dedup();
    let variadic_min = spec.inputs.iter().find_map(|p| match p.kind {
        PortKind::Variadic { min } => Some(min),
        _ => None,
    });
    let counts: Vec<usize> = match variadic_min {
        Some(m) => {
            let lo = m.max(1);
            vec![lo.max(2), lo]
        }
        None => vec![0],
    };
    let out_variadic = spec
        .outputs
        .iter()
        .any(|p| matches!(p.kind, PortKind::Variadic { .. }));
    let out_counts: &[usize] = if out_variadic { &[2, 1, 3] } else { &[0] };
    let mut out = Vec::new();
    for set in &sets {
        for &c in &counts {
            for &oc in out_counts {
                out.push(layout(spec, opset, set, c, oc));
            }
        }
    }
    out
}

pub(super) fn layout(
    spec: &OpSpec,
    opset: i64,
    present: &[usize],
    var_count: usize,
    out_count: usize,
) -> Layout {
    let mut used: Vec<String> = Vec::new();
    let mut outputs = Vec::new();
    let mut pending_absent = 0;
    for p in &spec.outputs {
        match p.kind {
            PortKind::Single => {
                for _ in 0..pending_absent {
                    outputs.push(String::new());
                }
                pending_absent = 0;
                let n = if outputs.is_empty() {
                    "Y".to_string()
                } else {
                    format!("Y{}", outputs.len())
                };
                used.push(n.clone());
                outputs.push(n);
            }
            PortKind::Optional => pending_absent += 1,
            PortKind::Variadic { min } => {
                for _ in 0..out_count.max(min) {
                    let n = if outputs.is_empty() {
                        "Y".to_string()
                    } else {
                        format!("Y{}", outputs.len())
                    };
                    used.push(n.clone());
                    outputs.push(n);
                }
            }
        }
    }
    if outputs.is_empty() {
        // Every output optional: write the first.
        used.push("Y".into());
        outputs.push("Y".into());
    }
    let mut tc_names: Vec<&str> = Vec::new();
    let mut tcs: Vec<Vec<DType>> = Vec::new();
    let mut args = Vec::new();
    let mut pending = 0;
    let mut slot_of = |i: usize, name: &str, tc: &'static str, used: &mut Vec<String>| {
        let dts = port_dtypes(spec, i, opset);
        let k = match tc_names.iter().position(|t| *t == tc) {
            Some(k) => {
                tcs[k].retain(|d| dts.contains(d));
                k
            }
            None => {
                tc_names.push(tc);
                tcs.push(dts);
                tcs.len() - 1
            }
        };
        Slot {
            name: value_name(name, used),
            tc: k,
        }
    };
    for (i, p) in spec.inputs.iter().enumerate() {
        match p.kind {
            PortKind::Single => {
                args.extend((0..pending).map(|_| None));
                pending = 0;
                args.push(Some(slot_of(i, p.name, p.tc, &mut used)));
            }
            PortKind::Optional if present.contains(&i) => {
                args.extend((0..pending).map(|_| None));
                pending = 0;
                args.push(Some(slot_of(i, p.name, p.tc, &mut used)));
            }
            PortKind::Optional => pending += 1,
            PortKind::Variadic { .. } => {
                args.extend((0..pending).map(|_| None));
                pending = 0;
                for j in 0..var_count {
                    let n = format!("{}{j}", p.name);
                    args.push(Some(slot_of(i + j, &n, p.tc, &mut used)));
                }
            }
        }
    }
    let _ = &mut slot_of;
    Layout { args, outputs, tcs }
}

/// Shapes tried for the first input.
pub(super) const MAIN_SHAPES: &[&[i64]] = &[
    &[2, 3],
    &[1, 2, 4, 4],
    &[2, 3, 4],
    &[3],
    &[],
    &[1, 2, 6],
    &[2, 2, 3, 3],
    &[1, 4, 2],
];

/// Candidates for a later input, given the first input's dims and whether it shares the first
/// input's type variable.
pub(super) fn candidates(main: &[i64], same_tc: bool, d: DType) -> Vec<Shape> {
    let r = main.len() as i64;
    let last = main.last().copied().unwrap_or(1);
    let chan = main.get(1).copied().unwrap_or(1);
    let mut v = Vec::new();
    let ints = !d.is_float() && d != DType::String && d != DType::Bool;
    if same_tc || !ints {
        v.push(Shape::input(main.to_vec()));
        v.push(Shape::input(vec![last]));
        v.push(Shape::input(vec![]));
        v.push(Shape::input(vec![chan]));
        v.push(Shape::input(vec![last, 4]));
        if r >= 3 {
            let mut w = vec![2, chan];
            w.extend(std::iter::repeat_n(3, (r - 2) as usize));
            v.push(Shape::input(w));
        }
        v.push(Shape::input(vec![1]));
        if r == 3 {
            // Recurrent weights: [directions, gates * hidden, input] with hidden = input.
            for g in [1, 3, 4] {
                v.push(Shape::input(vec![1, g * last, last]));
            }
        }
        if r >= 3 {
            // A sampling grid, boxes.
            let mut grid = vec![main[0], 2];
            grid.extend(std::iter::repeat_n(2, (r - 3) as usize));
            grid.push(r - 2);
            v.push(Shape::input(grid));
            v.push(Shape::input(vec![1, 5]));
        }
        if d.is_float() && !same_tc {
            v.insert(0, Shape::constant(vec![r], vec![1.0; r as usize]));
        }
        if ints {
            v.push(Shape::constant(vec![1], vec![0.0]));
            v.push(Shape::constant(vec![], vec![1.0]));
        }
    } else {
        v.push(Shape::constant(
            vec![r],
            main.iter().map(|x| *x as f64).collect(),
        ));
        v.push(Shape::constant(vec![1], vec![0.0]));
        v.push(Shape::constant(vec![1], vec![1.0]));
        v.push(Shape::constant(vec![r], vec![1.0; r as usize]));
        v.push(Shape::constant(vec![2 * r], vec![0.0; 2 * r as usize]));
        v.push(Shape::constant(vec![1], vec![-1.0]));
        v.push(Shape::constant(vec![], vec![1.0]));
        v.push(Shape::constant(vec![], vec![0.0]));
        v.push(Shape::constant(vec![], vec![2.0]));
        v.push(Shape::constant(vec![2], vec![0.0, 1.0]));
        v.push(Shape::input(main.to_vec()));
        v.push(Shape::input(vec![]));
        v.push(Shape::input(vec![r]));
        v.push(Shape::input(vec![1]));
    }
    let mut out: Vec<Shape> = Vec::new();
    for s in v {
        if count(&s.dims) <= 64 && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Rendered candidate values of an attribute, the default first; `rank` is the first input's.
pub(super) fn attr_candidates(a: &AttrSpec, rank: usize) -> Vec<String> {
    let r = rank as i64;
    let sp = (r - 2).max(1) as usize;
    let mut vals: Vec<AttrValue> = Vec::new();
    if let Some(d) = &a.default {
        vals.push(d.clone());
    }
    match a.kind {
        AttrKind::Int => {
            let base: Vec<i64> = match &a.legal {
                Legal::Ints(v) => v.iter().copied().take(8).collect(),
                Legal::IntRange(lo, hi) => {
                    let mut v: Vec<i64> = [0, 1, -1, 2, 3]
                        .into_iter()
                        .filter(|x| lo <= x && x <= hi)
                        .collect();
                    v.push(*lo);
                    v
                }
                _ => vec![0, 1, -1, 2],
            };
            vals.extend(base.into_iter().map(AttrValue::Int));
        }
        AttrKind::Float => {
            let base: Vec<f64> = match &a.legal {
                Legal::FloatRange(lo, hi) => {
                    let mut v: Vec<f64> = [0.5, 1.0, 0.1, 2.0]
                        .into_iter()
                        .filter(|x| lo <= x && x <= hi)
                        .collect();
                    if lo.is_finite() {
                        v.push(*lo);
                    }
                    v
                }
                _ => vec![0.5, 1.0, 2.0, 0.001],
            };
            vals.extend(base.into_iter().map(|f| AttrValue::Float(f as f32)));
        }
        AttrKind::String => match &a.legal {
            Legal::Strings(v) => {
                vals.extend(v.iter().map(|s| AttrValue::String(s.as_bytes().to_vec())))
            }
            _ => vals.extend(
                ["ij,jk->ik", "ij->ji", "ij->i", "a"]
                    .iter()
                    .map(|s| AttrValue::String(s.as_bytes().to_vec())),
            ),
        },
        AttrKind::Ints => {
            let rev: Vec<i64> = (0..r).rev().collect();
            for l in [
                vec![1; sp],
                vec![2; sp],
                vec![0; 2 * sp],
                vec![1; 2 * sp],
                vec![0],
                vec![1],
                vec![-1],
                rev,
                vec![1; rank],
                vec![0, 1],
                vec![2, 2],
            ] {
                vals.push(AttrValue::Ints(l));
            }
        }
        AttrKind::Floats => {
            for l in [vec![1.0; rank], vec![1.0], vec![0.5, 1.0]] {
                vals.push(AttrValue::Floats(l));
            }
        }
        AttrKind::Strings => match &a.legal {
            Legal::Strings(v) => vals.push(AttrValue::Strings(
                v.iter().take(1).map(|s| s.as_bytes().to_vec()).collect(),
            )),
            _ => vals.push(AttrValue::Strings(vec![b"a".to_vec()])),
        },
        _ => {}
    }
    let mut out: Vec<String> = Vec::new();
    for v in vals {
        if a.check(&v).is_err() {
            continue;
        }
        if let Some(t) = attr_text(a.name, &v)
            && !out.contains(&t)
        {
            out.push(t);
        }
    }
    if a.kind == AttrKind::TypeProto {
        for t in ["float[2]", "int64[2]"] {
            out.push(format!("{}: type_proto = {t}", a.name));
        }
    }
    if a.kind == AttrKind::Tensor {
        for t in ["float[1] {1.0}", "int64[1] {1}", "float[2] {1.0, 2.0}"] {
            out.push(format!("{}: tensor = {t}", a.name));
        }
    }
    out
}
