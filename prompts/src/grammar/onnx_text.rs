//! The grammar of an ONNX text model (the syntax [`mutagraph_ir::text::parse_model`] reads)
//! that holds a node of one of a task's ops.
//!
//! Each op's grammar comes from the op registry and is checked against it before it is
//! offered: for each layout of the op's inputs (which optional inputs are written, how many
//! values a variadic port takes) a small search finds a concrete instance that parses, infers
//! and validates (one shape per port, chosen from candidates derived from the first input's
//! shape: the same shape, its last or channel dim, a matrix, a convolution weight, scalars;
//! constant integer inputs such as shapes, axes and pads get fixed values). The grammar then
//! offers:
//!
//! - the dtype bindings that validate with that instance (one dtype per type variable, bound
//!   once per alternative, so the inputs' types are consistent);
//! - for each input other than the first, every candidate shape that validates with the rest
//!   of the instance;
//! - for small inputs of float, integer or bool type, an initializer with literal values
//!   (small ordinary numbers and the task's [`Literal`]s: NaN, infinities, huge values), in the
//!   `<...>` list after the graph's outputs;
//! - each attribute that exists at the opset, optional unless required, with the values that
//!   validate with the instance (legal values from its [`Legal`], the op's default first) and
//!   the task's literals where the attribute's kind and legal values take them.
//!
//! Graph outputs are written without a type (`=> (Y)`; inference types them). Value names are
//! fixed (the schema's port names). Sentences stay short: at most four dims of at most six,
//! initializers of at most [`MAX_INIT_VALUES`] values.

use super::{Expr, Grammar, GrammarError, ordered_subset, rule_name};
use mutagraph_ir::DType;
use mutagraph_ir::attr::{AttrKind, AttrValue};
use mutagraph_ir::onnx_ops::{OpStatus, status};
use mutagraph_ir::registry::{AttrSpec, Legal, OpSpec, PortKind, Registry};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What a generated model must hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// The ops of interest: the model holds a node of one of them.
    pub ops: Vec<String>,
    /// The default domain's opset of the model.
    pub opset: i64,
    /// Values the model should be able to hold (trigger values, axes, pads, scales).
    pub literals: Vec<Literal>,
    /// Wrap the model in a "```onnx" fence (what the answer extractor looks for).
    pub fenced: bool,
    /// Every model writes one of `literals` (a float one into a float input, an integer one
    /// into an integer input; of the floats only the special ones, NaN, infinities, huge and
    /// tiny magnitudes, when there are any) in an input given as a literal initializer — the
    /// trigger value of a transferred snippet. Ops none of whose inputs can hold one are offered as if this
    /// were false.
    pub require_literal: bool,
}

/// A value a generated model may write in an initializer or an attribute.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// A float (NaN and infinities included): values of float and double initializers and
    /// float attributes.
    Float(f64),
    /// An integer: values of integer initializers and int attributes.
    Int(i64),
    /// A list of integers: the values of a constant integer input (axes, pads, a shape) and
    /// ints attributes.
    Ints(Vec<i64>),
}

/// Initializers with literal values hold at most this many values.
pub const MAX_INIT_VALUES: i64 = 12;

/// The grammar of a model holding a node of one of `task.ops`; the root rule is `root`.
/// An error names the first op that is not in the registry, not defined at the opset, or has
/// no instance that validates.
pub fn grammar(task: &Task) -> Result<Grammar, GrammarError> {
    if task.ops.is_empty() {
        return Err(GrammarError::NoOps);
    }
    let mut g = Grammar::new("root");
    let mut models = Vec::new();
    for op in &task.ops {
        let plan = plan(op, task.opset).map_err(|reason| GrammarError::Op {
            op: op.clone(),
            opset: task.opset,
            reason,
        })?;
        models.push(plan.add_rules(&mut g, task));
    }
    add_values(&mut g, task);
    let header = format!(
        "<ir_version: {}, opset_import: [\"\" : {}]>\n",
        ir_version(task.opset),
        task.opset
    );
    g.rule("model", Expr::alt(models));
    let body = Expr::seq([Expr::lit(header), Expr::r("model")]);
    g.rule(
        "root",
        if task.fenced {
            Expr::seq([Expr::lit("```onnx\n"), body, Expr::lit("```")])
        } else {
            body
        },
    );
    g.check()?;
    Ok(g)
}

/// Every op of the default domain that gets a grammar at `opset`, sorted by name.
pub fn supported_ops(opset: i64) -> Vec<&'static str> {
    Registry::global()
        .iter()
        .filter(|s| s.domain.is_empty())
        .filter(|s| plan(s.op_type, opset).is_ok())
        .map(|s| s.op_type)
        .collect()
}

/// The default domain's ops of the registry that get no grammar at `opset`, each with why.
pub fn unsupported_ops(opset: i64) -> Vec<(&'static str, String)> {
    Registry::global()
        .iter()
        .filter(|s| s.domain.is_empty())
        .filter_map(|s| plan(s.op_type, opset).err().map(|e| (s.op_type, e)))
        .collect()
}

/// The IR version written with an opset (the one ONNX released with it, at most 11).
fn ir_version(opset: i64) -> i64 {
    match opset {
        ..=18 => 8,
        19..=20 => 9,
        21..=22 => 10,
        _ => 11,
    }
}

// ---- dtypes and values ----

/// Dtypes a grammar offers, in the order preferred (the first that validates is the base).
const DTYPES: &[(DType, &str)] = &[
    (DType::F32, "float"),
    (DType::I64, "int64"),
    (DType::I32, "int32"),
    (DType::F64, "double"),
    (DType::F16, "float16"),
    (DType::U8, "uint8"),
    (DType::I8, "int8"),
    (DType::Bool, "bool"),
    (DType::I16, "int16"),
    (DType::U16, "uint16"),
    (DType::U32, "uint32"),
    (DType::U64, "uint64"),
    (DType::BF16, "bfloat16"),
    (DType::String, "string"),
];

fn dtype_text(d: DType) -> &'static str {
    DTYPES
        .iter()
        .find(|(x, _)| *x == d)
        .map_or("float", |(_, n)| n)
}

fn rank_of(d: DType) -> usize {
    DTYPES
        .iter()
        .position(|(x, _)| *x == d)
        .unwrap_or(usize::MAX)
}

/// A float as the text writes it (always with a point or exponent; `nan`, `inf`, `-inf`).
fn float_text(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        let s = format!("{f:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// f32 to IEEE half bits (round to nearest; subnormals flush to zero).
fn f16_bits(f: f32) -> u16 {
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if f.is_nan() {
        return sign | 0x7e00;
    }
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let man = b & 0x7f_ffff;
    if f.is_infinite() || exp >= 0x1f {
        return sign | 0x7c00;
    }
    if exp <= 0 {
        return sign;
    }
    let m = (man + 0x1000) >> 13; // rounded
    // A carry of the rounding into the exponent is right.
    (sign as u32 | (((exp as u32) << 10) + m)) as u16
}

/// A number written as a value of a tensor of dtype `d` (`None`: not representable).
fn value_text(d: DType, v: f64) -> Option<String> {
    let int = v.fract() == 0.0 && v.is_finite();
    match d {
        DType::F32 | DType::F64 => Some(float_text(v)),
        DType::F16 => Some(f16_bits(v as f32).to_string()),
        DType::BF16 => Some(((((v as f32).to_bits()) + 0x8000) >> 16).to_string()),
        DType::Bool => (v == 0.0 || v == 1.0).then(|| format!("{}", v as i64)),
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => {
            (int && v >= 0.0).then(|| format!("{}", v as i64))
        }
        DType::String => Some("\"a\"".into()),
        _ => int.then(|| format!("{}", v as i64)),
    }
}

fn dims_text(dims: &[i64]) -> String {
    if dims.is_empty() {
        String::new()
    } else {
        let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
        format!("[{}]", d.join(", "))
    }
}

fn count(dims: &[i64]) -> i64 {
    dims.iter().product()
}

// ---- instances ----

/// A candidate for one input: its dims and, for a constant, its values.
#[derive(Clone, Debug, PartialEq)]
struct Shape {
    dims: Vec<i64>,
    values: Option<Vec<f64>>,
}

impl Shape {
    fn input(dims: Vec<i64>) -> Shape {
        Shape { dims, values: None }
    }
    fn constant(dims: Vec<i64>, values: Vec<f64>) -> Shape {
        Shape {
            dims,
            values: Some(values),
        }
    }
}

/// A present input slot of a layout.
#[derive(Clone, Debug)]
struct Slot {
    /// The value's name.
    name: String,
    /// Index into the layout's type variables.
    tc: usize,
}

/// A layout: which inputs are written, the type variables they use.
#[derive(Clone, Debug)]
struct Layout {
    /// Per node input position: `None` for an absent optional input (`""`).
    args: Vec<Option<Slot>>,
    /// Output names (`""` for an absent optional output in the middle).
    outputs: Vec<String>,
    /// Type variables of the written inputs, each with the dtypes offered.
    tcs: Vec<Vec<DType>>,
}

impl Layout {
    /// The graph's outputs: the node's outputs that are present.
    fn graph_outputs(&self) -> Vec<&str> {
        self.outputs
            .iter()
            .filter(|o| !o.is_empty())
            .map(|s| s.as_str())
            .collect()
    }

    /// The node's outputs as the text writes them (`""` for an absent one).
    fn node_outputs(&self) -> Vec<String> {
        self.outputs
            .iter()
            .map(|o| {
                if o.is_empty() {
                    "\"\"".into()
                } else {
                    o.clone()
                }
            })
            .collect()
    }
}

/// A validated layout: the base instance and what may vary around it.
#[derive(Clone, Debug)]
struct Found {
    layout: Layout,
    /// Per written input (in `args` order, absent ones skipped): the base shape first, then
    /// the alternatives that validate.
    shapes: Vec<Vec<Shape>>,
    /// Dtype bindings that validate (one dtype per type variable), the base first.
    bindings: Vec<Vec<DType>>,
    /// Attributes: name, required, the values (rendered) that validate, the base's first
    /// when it writes the attribute.
    attrs: Vec<AttrChoice>,
}

#[derive(Clone, Debug)]
struct AttrChoice {
    spec: AttrSpec,
    required: bool,
    values: Vec<String>,
}

/// What the search found for one op.
#[derive(Debug)]
struct Plan {
    op: &'static str,
    found: Vec<Found>,
}

/// Everything needed to print one instance.
struct Instance<'a> {
    op: &'a str,
    opset: i64,
    layout: &'a Layout,
    binding: &'a [DType],
    /// Per written input: `None` = an input of unknown rank (while searching).
    shapes: Vec<Option<Shape>>,
    attrs: Vec<String>,
}

impl Instance<'_> {
    fn text(&self) -> Option<String> {
        let mut decls = Vec::new();
        let mut inits = Vec::new();
        let mut args = Vec::new();
        let mut k = 0;
        for a in &self.layout.args {
            let Some(s) = a else {
                args.push("\"\"".to_string());
                continue;
            };
            let d = self.binding[s.tc];
            let t = dtype_text(d);
            args.push(s.name.clone());
            match self.shapes.get(k).cloned().flatten().as_ref() {
                None => decls.push(format!("{t}[] {}", s.name)),
                Some(Shape { dims, values: None }) => {
                    decls.push(format!("{t}{} {}", dims_text(dims), s.name))
                }
                Some(Shape {
                    dims,
                    values: Some(v),
                }) => {
                    let vals = v
                        .iter()
                        .map(|x| value_text(d, *x))
                        .collect::<Option<Vec<_>>>()?;
                    inits.push(format!(
                        "{t}{} {} = {{{}}}",
                        dims_text(dims),
                        s.name,
                        vals.join(", ")
                    ));
                }
            }
            k += 1;
        }
        let attrs = if self.attrs.is_empty() {
            String::new()
        } else {
            format!(" <{}>", self.attrs.join(", "))
        };
        let inits = if inits.is_empty() {
            String::new()
        } else {
            format!(" <{}>", inits.join(", "))
        };
        let outs = self.layout.graph_outputs();
        let node_outs = self.layout.node_outputs();
        Some(format!(
            "<ir_version: {}, opset_import: [\"\" : {}]>\nmain ({}) => ({}){}\n{{\n  {} = {}{} ({})\n}}\n",
            ir_version(self.opset),
            self.opset,
            decls.join(", "),
            outs.join(", "),
            inits,
            node_outs.join(", "),
            self.op,
            attrs,
            args.join(", ")
        ))
    }

    fn valid(&self) -> bool {
        self.text().is_some_and(|t| valid_text(&t))
    }
}

/// Whether a model text parses, infers and validates without errors or ambiguous cases.
/// A panic of inference (a bug of the registry) counts as invalid.
fn valid_text(text: &str) -> bool {
    let Ok(mut m) = mutagraph_ir::text::parse_model(text) else {
        return false;
    };
    std::panic::catch_unwind(move || {
        mutagraph_ir::infer::infer_model(&mut m, Default::default());
        matches!(mutagraph_ir::validate::validate(&m), Ok(d) if d.ambiguous.is_empty())
    })
    .unwrap_or(false)
}

// ---- the search ----

type PlanCache = Mutex<HashMap<(String, i64), Result<Arc<Plan>, String>>>;

fn plan(op: &str, opset: i64) -> Result<Arc<Plan>, String> {
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

/// The dtypes the grammar offers on input `slot`, in preference order.
fn port_dtypes(spec: &OpSpec, slot: usize, opset: i64) -> Vec<DType> {
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
fn layouts(spec: &OpSpec, opset: i64) -> Vec<Layout> {
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

fn layout(
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
const MAIN_SHAPES: &[&[i64]] = &[
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
fn candidates(main: &[i64], same_tc: bool, d: DType) -> Vec<Shape> {
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
fn attr_candidates(a: &AttrSpec, rank: usize) -> Vec<String> {
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

/// `name: kind = value`.
fn attr_text(name: &str, v: &AttrValue) -> Option<String> {
    let s = |b: &[u8]| serde_json::to_string(&String::from_utf8_lossy(b)).unwrap_or_default();
    let val = match v {
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => float_text(*f as f64),
        AttrValue::String(b) => s(b),
        AttrValue::Ints(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AttrValue::Floats(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| float_text(*x as f64))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AttrValue::Strings(v) => format!(
            "[{}]",
            v.iter().map(|b| s(b)).collect::<Vec<_>>().join(", ")
        ),
        _ => return None,
    };
    Some(format!("{name}: {} = {val}", v.kind().name()))
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
    let base_binding = base_binding.to_vec();
    let slots: Vec<&Slot> = layout.args.iter().flatten().collect();
    let mains: Vec<&[i64]> = if slots.is_empty() {
        vec![&[]]
    } else {
        MAIN_SHAPES.to_vec()
    };
    for main in mains {
        let rank = main.len();
        let cands: Vec<Vec<String>> = attrs.iter().map(|a| attr_candidates(a, rank)).collect();
        // Base attribute sets: the required ones at each candidate (first the defaults), then
        // with one optional attribute added (ops that need one of several, like Constant).
        let required: Vec<usize> = (0..attrs.len()).filter(|&i| attrs[i].required).collect();
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
        if required.iter().any(|&i| cands[i].is_empty()) {
            continue;
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
        for set in &sets {
            let attr_texts: Vec<String> = set.iter().map(|&(i, j)| cands[i][j].clone()).collect();
            let main_shape = Shape::input(main.to_vec());
            let mut chosen: Vec<Shape> = Vec::new();
            if !slots.is_empty() {
                chosen.push(main_shape.clone());
            }
            let inst = |shapes: &[Shape]| Instance {
                op: spec.op_type,
                opset,
                layout,
                binding: &base_binding,
                shapes: (0..slots.len()).map(|k| shapes.get(k).cloned()).collect(),
                attrs: attr_texts.clone(),
            };
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            if !inst(&chosen).valid() {
                continue;
            }
            // Depth-first over the later inputs.
            let cand_lists: Vec<Vec<Shape>> = slots
                .iter()
                .skip(1)
                .map(|s| {
                    let d = base_binding[s.tc];
                    candidates(main, s.tc == slots[0].tc, d)
                })
                .collect();
            if !dfs(
                &|s: &[Shape]| inst(s).valid(),
                &cand_lists,
                &mut chosen,
                budget,
            ) {
                continue;
            }
            // The base: `chosen`, `attr_texts`. Now what may vary.
            let base = inst(&chosen);
            let mut shapes: Vec<Vec<Shape>> = chosen.iter().map(|s| vec![s.clone()]).collect();
            for (k, list) in cand_lists.iter().enumerate() {
                for c in list {
                    if *c == chosen[k + 1] || *budget == 0 {
                        continue;
                    }
                    let mut alt = chosen.clone();
                    alt[k + 1] = c.clone();
                    *budget -= 1;
                    if inst(&alt).valid() {
                        shapes[k + 1].push(c.clone());
                    }
                    if shapes[k + 1].len() >= 4 {
                        break;
                    }
                }
            }
            let mut bindings = vec![base_binding.clone()];
            for (t, dts) in layout.tcs.iter().enumerate() {
                for d in dts.iter().skip(1) {
                    let mut b = base_binding.clone();
                    b[t] = *d;
                    let i = Instance {
                        binding: &b,
                        shapes: base.shapes.clone(),
                        attrs: base.attrs.clone(),
                        ..base
                    };
                    if i.valid() {
                        bindings.push(b);
                    }
                }
            }
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
                        ..base
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
            return Some(Found {
                layout: layout.clone(),
                shapes,
                bindings,
                attrs: choices,
            });
        }
    }
    None
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

// ---- the grammar ----

/// The rules of the values initializers may hold: `fv` (floats), `iv` (signed integers),
/// `uv` (non-negative integers and bools).
fn add_values(g: &mut Grammar, task: &Task) {
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
fn trigger_rule(v: &str, task: &Task) -> Option<&'static str> {
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
fn values_with_trigger(v: &str, t: &str, n: i64) -> Expr {
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
fn values_expr(v: &str, n: i64) -> Expr {
    if n <= 0 {
        return Expr::Seq(vec![]);
    }
    Expr::seq([
        Expr::r(v),
        Expr::seq([Expr::lit(", "), Expr::r(v)]).repeat((n - 1) as u32, Some((n - 1) as u32)),
    ])
}

/// The value rule for free literal values of dtype `d` (`None`: no literal initializer).
fn value_rule(d: DType) -> Option<&'static str> {
    match d {
        DType::F32 | DType::F64 => Some("fv"),
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => Some("iv"),
        DType::U8 | DType::U16 | DType::U32 | DType::U64 | DType::Bool => Some("uv"),
        _ => None,
    }
}

impl Plan {
    /// Adds this op's rules; returns the expression of its models.
    fn add_rules(&self, g: &mut Grammar, task: &Task) -> Expr {
        let p = format!("o-{}", rule_name(self.op));
        let mut alts = Vec::new();
        let mut held = Vec::new();
        for (li, f) in self.found.iter().enumerate() {
            let lp = format!("{p}-l{li}");
            let node = self.node_rule(g, task, f, &lp);
            let outs = f.layout.graph_outputs();
            let outs = format!(") => ({})", outs.join(", "));
            let slots: Vec<&Slot> = f.layout.args.iter().flatten().collect();
            for (bi, b) in f.binding_list().iter().enumerate() {
                let bp = format!("{lp}-b{bi}");
                // Per input: its declaration (graph input) and, when it can be one, its
                // initializer.
                let mut decl = Vec::new();
                let mut init: Vec<Option<Expr>> = Vec::new();
                // The initializer holding a task literal, where the input can be one.
                let mut trig: Vec<Option<Expr>> = Vec::new();
                for (k, s) in slots.iter().enumerate() {
                    let d = b[s.tc];
                    let t = dtype_text(d);
                    let mut ins = Vec::new();
                    let mut consts = Vec::new();
                    let mut triggered = Vec::new();
                    for sh in &f.shapes[k] {
                        match &sh.values {
                            None => {
                                ins.push(Expr::lit(format!(
                                    "{t}{} {}",
                                    dims_text(&sh.dims),
                                    s.name
                                )));
                                if let Some(v) = value_rule(d)
                                    && count(&sh.dims) <= MAX_INIT_VALUES
                                    && k < 4
                                {
                                    let head = Expr::lit(format!(
                                        "{t}{} {} = {{",
                                        dims_text(&sh.dims),
                                        s.name
                                    ));
                                    consts.push(Expr::seq([
                                        head.clone(),
                                        values_expr(v, count(&sh.dims)),
                                        Expr::lit("}"),
                                    ]));
                                    if let Some(tr) = trigger_rule(v, task)
                                        && count(&sh.dims) > 0
                                    {
                                        triggered.push(Expr::seq([
                                            head,
                                            values_with_trigger(v, tr, count(&sh.dims)),
                                            Expr::lit("}"),
                                        ]));
                                    }
                                }
                            }
                            Some(vals) => {
                                if let Some(e) = fixed_init(t, d, &sh.dims, &s.name, vals, task) {
                                    consts.push(e);
                                }
                            }
                        }
                    }
                    let dn = format!("{bp}-i{k}");
                    let cn = format!("{bp}-c{k}");
                    let tn = format!("{bp}-t{k}");
                    if triggered.is_empty() {
                        trig.push(None);
                    } else {
                        g.rule(tn.clone(), Expr::Alt(triggered));
                        trig.push(Some(Expr::r(tn)));
                    }
                    if ins.is_empty() {
                        decl.push(None);
                    } else {
                        g.rule(dn.clone(), Expr::Alt(ins));
                        decl.push(Some(Expr::r(dn)));
                    }
                    if consts.is_empty() {
                        init.push(None);
                    } else {
                        g.rule(cn.clone(), Expr::Alt(consts));
                        init.push(Some(Expr::r(cn)));
                    }
                }
                // Which inputs are initializers: every mask where each input can be what the
                // mask says (all masks up to three free inputs, else at most one initializer
                // among them).
                let free: Vec<usize> = (0..slots.len())
                    .filter(|&k| decl[k].is_some() && init[k].is_some())
                    .collect();
                let masks: Vec<u32> = if free.len() <= 3 {
                    (0..(1u32 << free.len())).collect()
                } else {
                    std::iter::once(0)
                        .chain((0..free.len()).map(|i| 1 << i))
                        .collect()
                };
                for m in masks {
                    let as_init = |k: usize| match free.iter().position(|&x| x == k) {
                        Some(i) => m & (1 << i) != 0,
                        None => decl[k].is_none(),
                    };
                    let inits: Vec<usize> = (0..slots.len()).filter(|&k| as_init(k)).collect();
                    // Which initializer holds the task literal: each that can, when required.
                    // (None: no initializer must hold one; these models are offered unless
                    // literals are required and some model can hold one.)
                    let mut holders: Vec<Option<usize>> = vec![None];
                    if task.require_literal {
                        holders.extend(
                            inits
                                .iter()
                                .copied()
                                .filter(|&k| trig[k].is_some())
                                .map(Some),
                        );
                    }
                    for holder in holders {
                        let mut seq = vec![Expr::lit("main (")];
                        let mut first = true;
                        for k in (0..slots.len()).filter(|&k| !as_init(k)) {
                            if !first {
                                seq.push(Expr::lit(", "));
                            }
                            first = false;
                            if let Some(e) = &decl[k] {
                                seq.push(e.clone());
                            }
                        }
                        seq.push(Expr::lit(outs.clone()));
                        if !inits.is_empty() {
                            seq.push(Expr::lit(" <"));
                            for (j, &k) in inits.iter().enumerate() {
                                if j > 0 {
                                    seq.push(Expr::lit(", "));
                                }
                                let e = if holder == Some(k) {
                                    &trig[k]
                                } else {
                                    &init[k]
                                };
                                if let Some(e) = e {
                                    seq.push(e.clone());
                                }
                            }
                            seq.push(Expr::lit(">"));
                        }
                        seq.push(Expr::lit("\n{\n  "));
                        seq.push(Expr::r(node.clone()));
                        seq.push(Expr::lit("\n}\n"));
                        if holder.is_some() {
                            held.push(Expr::Seq(seq));
                        } else {
                            alts.push(Expr::Seq(seq));
                        }
                    }
                }
            }
        }
        // Required literals: the models that hold one, when the op has any.
        if task.require_literal && !held.is_empty() {
            alts = held;
        }
        let name = format!("{p}-model");
        g.rule(name.clone(), Expr::Alt(alts));
        Expr::r(name)
    }

    /// The node line of a layout: `Y = Op <attributes> (inputs)`.
    fn node_rule(&self, g: &mut Grammar, task: &Task, f: &Found, lp: &str) -> String {
        let outs = f.layout.node_outputs();
        let args: Vec<String> = f
            .layout
            .args
            .iter()
            .map(|a| a.as_ref().map_or("\"\"".to_string(), |s| s.name.clone()))
            .collect();
        let mut items = Vec::new();
        for (i, a) in f.attrs.iter().enumerate() {
            let mut values = a.values.clone();
            for l in &task.literals {
                let v = match l {
                    Literal::Int(x) if a.spec.kind == AttrKind::Int => AttrValue::Int(*x),
                    Literal::Ints(x) if a.spec.kind == AttrKind::Ints => AttrValue::Ints(x.clone()),
                    Literal::Float(x) if a.spec.kind == AttrKind::Float => {
                        AttrValue::Float(*x as f32)
                    }
                    _ => continue,
                };
                if a.spec.check(&v).is_ok()
                    && let Some(t) = attr_text(a.spec.name, &v)
                    && !values.contains(&t)
                {
                    values.push(t);
                }
            }
            let n = format!("{lp}-a{i}");
            g.rule(n.clone(), Expr::lits(values));
            items.push((Expr::r(n), a.required));
        }
        let attrs = match ordered_subset(g, &format!("{lp}-at"), &items, ", ") {
            None => Expr::Seq(vec![]),
            Some(list) => {
                let e = Expr::seq([Expr::lit(" <"), list, Expr::lit(">")]);
                if items.iter().any(|(_, r)| *r) {
                    e
                } else {
                    e.opt()
                }
            }
        };
        let name = format!("{lp}-node");
        g.rule(
            name.clone(),
            Expr::seq([
                Expr::lit(format!("{} = {}", outs.join(", "), self.op)),
                attrs,
                Expr::lit(format!(" ({})", args.join(", "))),
            ]),
        );
        name
    }
}

impl Found {
    fn binding_list(&self) -> &[Vec<DType>] {
        &self.bindings
    }
}

/// An initializer whose values the search fixed (a shape, axes, scales), with the task's
/// literals as alternatives: an integer list of the same rank-1 length in place of the
/// values, a float in place of each float value.
fn fixed_init(
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
