//! The search per op: for each layout of its inputs, a concrete instance that validates,
//! then the shapes, dtype bindings and attribute values that validate around it.

use super::candidates::{MAIN_SHAPES, attr_candidates, candidates, layouts, port_dtypes};
use super::instance::{AttrChoice, Found, Instance, Layout, Plan, Shape, Slot};
use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrKind;
use mutagraph_ir::onnx_ops::{OpStatus, status};
use mutagraph_ir::registry::{AttrSpec, OpSpec, PortKind, Registry};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

type PlanCache = Mutex<HashMap<(String, i64), Result<Arc<Plan>, String>>>;

pub(super) fn plan(op: &str, opset: i64) -> Result<Arc<Plan>, String> {
    static CACHE: OnceLock<PlanCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (op.to_string(), opset);
    if let Some(p) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return p;
    }
    let p = search(op, opset).map(Arc::new);
    if let Ok(mut c) = cache.lock() {
        c.insert(key, p.clone());
    }
    p
}

fn search(op: &str, opset: i64) -> Result<Plan, String> {
    let reg = Registry::global();
    let spec = reg
        .get("", op)
        .ok_or_else(|| "not an op of the default domain in the registry".to_string())?;
    match status("", op, opset) {
        OpStatus::Defined(_) => {}
        OpStatus::NotYet(v) => return Err(format!("defined from opset {v} on")),
        OpStatus::Deprecated(v) => return Err(format!("deprecated (schema of opset {v})")),
        OpStatus::Unknown => return Err("ONNX defines no such op".into()),
        OpStatus::OrtSchema(_) => {
            return Err("only ONNX Runtime's own schema in the default domain".into());
        }
    }
    let attrs: Vec<&AttrSpec> = {
        let mut v: Vec<&AttrSpec> = Vec::new();
        for a in spec.attrs.iter().filter(|a| a.exists_at(opset)) {
            if !v.iter().any(|b| b.name == a.name) {
                v.push(a);
            }
        }
        v
    };
    if let Some(a) = attrs
        .iter()
        .find(|a| a.required && !attr_kind_supported(a.kind))
    {
        return Err(format!(
            "required attribute '{}' is a {} (not offered)",
            a.name,
            a.kind.name()
        ));
    }
    for (i, p) in spec.inputs.iter().enumerate() {
        if p.kind != PortKind::Optional && p.tc.is_empty() {
            return Err(format!(
                "input '{}' takes a sequence or optional value (no tensor type)",
                p.name
            ));
        }
        if p.kind != PortKind::Optional && port_dtypes(spec, i, opset).is_empty() {
            return Err(format!(
                "input '{}' takes no dtype the grammar writes",
                p.name
            ));
        }
    }
    let layouts = layouts(spec, opset);
    let mut found = Vec::new();
    let mut budget = 1500usize;
    for l in layouts {
        if found.len() >= 3 {
            break;
        }
        if let Some(f) = search_layout(spec, opset, &l, &attrs, &mut budget) {
            found.push(f);
        }
    }
    if found.is_empty() {
        return Err("no instance validates (shapes or attributes the candidates miss)".into());
    }
    Ok(Plan {
        op: spec.op_type,
        found,
    })
}

fn attr_kind_supported(k: AttrKind) -> bool {
    matches!(
        k,
        AttrKind::Int
            | AttrKind::Float
            | AttrKind::String
            | AttrKind::Ints
            | AttrKind::Floats
            | AttrKind::Strings
            | AttrKind::Tensor
            | AttrKind::TypeProto
    )
}

fn search_layout(
    spec: &OpSpec,
    opset: i64,
    layout: &Layout,
    attrs: &[&AttrSpec],
    budget: &mut usize,
) -> Option<Found> {
    if layout.tcs.iter().any(|t| t.is_empty()) {
        return None;
    }
    let first: Vec<DType> = layout.tcs.iter().map(|t| t[0]).collect();
    // Base bindings: the preferred dtypes, then the first type variable's next three.
    let mut bases = vec![first.clone()];
    if let Some(t0) = layout.tcs.first() {
        for d in t0.iter().skip(1).take(3) {
            let mut b = first.clone();
            b[0] = *d;
            bases.push(b);
        }
    }
    bases
        .iter()
        .find_map(|b| search_binding(spec, opset, layout, attrs, b, budget))
}

/// [`search_layout`] with the base dtype binding `base_binding`.
fn search_binding(
    spec: &OpSpec,
    opset: i64,
    layout: &Layout,
    attrs: &[&AttrSpec],
    base_binding: &[DType],
    budget: &mut usize,
) -> Option<Found> {
    let slots: Vec<&Slot> = layout.args.iter().flatten().collect();
    let mains: Vec<&[i64]> = if slots.is_empty() {
        vec![&[]]
    } else {
        MAIN_SHAPES.to_vec()
    };
    for main in mains {
        let rank = main.len();
        let cands: Vec<Vec<String>> = attrs.iter().map(|a| attr_candidates(a, rank)).collect();
        let Some(sets) = attr_sets(attrs, &cands) else {
            continue;
        };
        for set in &sets {
            let base = Base {
                spec,
                opset,
                layout,
                binding: base_binding,
                slots: &slots,
                attrs: set.iter().map(|&(i, j)| cands[i][j].clone()).collect(),
            };
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            let Some((chosen, cand_lists)) = base.shapes(main, budget) else {
                continue;
            };
            // The base: `chosen`, the set's attributes. Now what may vary.
            let shapes = base.shape_alternatives(&chosen, &cand_lists, budget);
            let base = base.instance(&chosen);
            return Some(Found {
                layout: layout.clone(),
                shapes,
                bindings: binding_alternatives(&base),
                attrs: attr_choices(&base, attrs, &cands, set),
            });
        }
    }
    None
}

/// Base attribute sets, each a list of (attribute, candidate) indices: the required
/// attributes at each candidate (first the defaults), then with one optional attribute added
/// (ops that need one of several, like Constant). `None`: a required attribute has no
/// candidate.
fn attr_sets(attrs: &[&AttrSpec], cands: &[Vec<String>]) -> Option<Vec<Vec<(usize, usize)>>> {
    let required: Vec<usize> = (0..attrs.len()).filter(|&i| attrs[i].required).collect();
    if required.iter().any(|&i| cands[i].is_empty()) {
        return None;
    }
    let mut sets: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut combo = vec![0usize; required.len()];
    'combos: loop {
        sets.push(
            required
                .iter()
                .copied()
                .zip(combo.iter().copied())
                .collect(),
        );
        if sets.len() > 24 {
            break;
        }
        for (k, &i) in required.iter().enumerate() {
            combo[k] += 1;
            if combo[k] < cands[i].len() {
                continue 'combos;
            }
            combo[k] = 0;
        }
        break;
    }
    let base_req = sets[0].clone();
    for (i, a) in attrs.iter().enumerate() {
        if !a.required {
            let skip = usize::from(a.default.is_some());
            for j in (skip..cands[i].len()).take(3) {
                let mut s = base_req.clone();
                s.push((i, j));
                sets.push(s);
            }
        }
    }
    Some(sets)
}

/// A base being tried: a layout with a dtype binding and attribute values; the shapes are
/// what is still to choose.
struct Base<'a> {
    spec: &'a OpSpec,
    opset: i64,
    layout: &'a Layout,
    binding: &'a [DType],
    /// The layout's written inputs.
    slots: &'a [&'a Slot],
    /// The attributes, rendered.
    attrs: Vec<String>,
}

impl Base<'_> {
    /// The instance with `shapes` for the first written inputs (the rest of unknown rank).
    fn instance(&self, shapes: &[Shape]) -> Instance<'_> {
        Instance {
            op: self.spec.op_type,
            opset: self.opset,
            layout: self.layout,
            binding: self.binding,
            shapes: (0..self.slots.len())
                .map(|k| shapes.get(k).cloned())
                .collect(),
            attrs: self.attrs.clone(),
        }
    }

    /// The base shapes: `main` for the first input, then depth-first the first candidates
    /// of the later inputs that validate; with the later inputs' candidate lists.
    fn shapes(&self, main: &[i64], budget: &mut usize) -> Option<(Vec<Shape>, Vec<Vec<Shape>>)> {
        let mut chosen: Vec<Shape> = Vec::new();
        if !self.slots.is_empty() {
            chosen.push(Shape::input(main.to_vec()));
        }
        if !self.instance(&chosen).valid() {
            return None;
        }
        // Depth-first over the later inputs.
        let cand_lists: Vec<Vec<Shape>> = self
            .slots
            .iter()
            .skip(1)
            .map(|s| {
                let d = self.binding[s.tc];
                candidates(main, s.tc == self.slots[0].tc, d)
            })
            .collect();
        let valid = |s: &[Shape]| self.instance(s).valid();
        if !dfs(&valid, &cand_lists, &mut chosen, budget) {
            return None;
        }
        Some((chosen, cand_lists))
    }

    /// Per written input, the base shape first, then the candidates that validate in its
    /// place with the rest of the base (at most four in all).
    fn shape_alternatives(
        &self,
        chosen: &[Shape],
        cand_lists: &[Vec<Shape>],
        budget: &mut usize,
    ) -> Vec<Vec<Shape>> {
        let mut shapes: Vec<Vec<Shape>> = chosen.iter().map(|s| vec![s.clone()]).collect();
        for (k, list) in cand_lists.iter().enumerate() {
            for c in list {
                if *c == chosen[k + 1] || *budget == 0 {
                    continue;
                }
                let mut alt = chosen.to_vec();
                alt[k + 1] = c.clone();
                *budget -= 1;
                if self.instance(&alt).valid() {
                    shapes[k + 1].push(c.clone());
                }
                if shapes[k + 1].len() >= 4 {
                    break;
                }
            }
        }
        shapes
    }
}

/// The dtype bindings that validate with the base's shapes and attributes, the base's
/// first: each type variable's other dtypes, one variable changed at a time.
fn binding_alternatives(base: &Instance) -> Vec<Vec<DType>> {
    let mut bindings = vec![base.binding.to_vec()];
    for (t, dts) in base.layout.tcs.iter().enumerate() {
        for d in dts.iter().skip(1) {
            let mut b = base.binding.to_vec();
            b[t] = *d;
            let i = Instance {
                binding: &b,
                shapes: base.shapes.clone(),
                attrs: base.attrs.clone(),
                ..*base
            };
            if i.valid() {
                bindings.push(b);
            }
        }
    }
    bindings
}

/// Per offered attribute, the candidate values that validate in place of the base's (the
/// base's value first, at most six); `set` is the base's attribute set.
fn attr_choices(
    base: &Instance,
    attrs: &[&AttrSpec],
    cands: &[Vec<String>],
    set: &[(usize, usize)],
) -> Vec<AttrChoice> {
    let mut choices = Vec::new();
    for (i, a) in attrs.iter().enumerate() {
        if !attr_kind_supported(a.kind) {
            continue;
        }
        let in_base = set.iter().find(|(x, _)| *x == i).map(|(_, j)| *j);
        let mut values: Vec<String> = Vec::new();
        if let Some(j) = in_base {
            values.push(cands[i][j].clone());
        }
        for (j, c) in cands[i].iter().enumerate() {
            if Some(j) == in_base || values.len() >= 6 {
                continue;
            }
            let mut at: Vec<String> = set
                .iter()
                .filter(|(x, _)| *x != i)
                .map(|&(x, y)| cands[x][y].clone())
                .collect();
            at.push(c.clone());
            let t = Instance {
                attrs: at,
                shapes: base.shapes.clone(),
                ..*base
            };
            if t.valid() {
                values.push(c.clone());
            }
        }
        if values.is_empty() {
            continue;
        }
        choices.push(AttrChoice {
            spec: (*a).clone(),
            // In the base: required, or needed (such as Constant's value).
            required: in_base.is_some(),
            values,
        });
    }
    choices
}

fn dfs(
    valid: &dyn Fn(&[Shape]) -> bool,
    lists: &[Vec<Shape>],
    chosen: &mut Vec<Shape>,
    budget: &mut usize,
) -> bool {
    let k = chosen.len().saturating_sub(1);
    if k == lists.len() {
        return true;
    }
    for c in &lists[k] {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        chosen.push(c.clone());
        if valid(chosen) && dfs(valid, lists, chosen, budget) {
            return true;
        }
        chosen.pop();
    }
    false
}
