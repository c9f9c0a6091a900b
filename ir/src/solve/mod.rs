//! Input shapes and values for a model whose inputs have dynamic dims, found from the graph.
//!
//! Exported models declare their inputs with symbolic dims (`batch`, `height`), unnamed ones
//! (`?`, `-1`) or none at all. To run such a model we need one concrete size per symbol,
//! everywhere the symbol appears, that makes every node valid: pool and conv windows no larger
//! than their padded input, strides and up/down-sampling that divide, reflect pads within the
//! axis, reshape products that match. [`solve`] finds them with the registry itself: each
//! candidate assignment is substituted into the inputs and the graph inferred
//! ([`crate::infer`]); its transfer functions and `requires` constraints say whether every node
//! accepts it. Sizes are representative, not degenerate: each symbol has a *floor* (see
//! [`Floor`]), the size below which a model stops meaning what it was made for (an image
//! 1 pixel wide, a sequence of one token), and the smallest valid size at or above it is
//! preferred (small inputs run fast on the f64 reference):
//!
//! 0. sizes the model's metadata names (`imgsz`, `input_size`, ...: what exporters such as
//!    Ultralytics write) are tried first, and kept when valid;
//! 1. dims named as a batch ([`is_batch_name`]) start at 1, the other symbols at the smallest
//!    candidate size at or above their floor that is valid for all of them at once;
//! 2. each symbol is then lowered on its own to the smallest size still valid, never below its
//!    floor.
//!
//! Integer inputs that select behaviour get values from the constants they are compared with
//! (`sr == 16000`) and index ranges from the tensors they index (`Gather` indices); such a
//! value is also propagated during the search, so the branch it selects is the one checked.
//!
//! What the user fixed ([`Fixed`]: whole input shapes and input values) is kept as given and
//! binds the symbols it covers. [`Plan`] says, for each input and symbol, what was chosen and
//! why.
use crate::attr::AttrValue;
use crate::dtype::DType;
use crate::graph::{Graph, NodeId};
use crate::infer::{self, Options, Scope};
use crate::model::Model;
use crate::pb;
use crate::tensor::{self, Tensor, TensorExt};
use crate::types::{Dim, TensorType, ValueType};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// Candidate sizes for a symbolic dim, in order of preference: small first; multiples of
/// the common strides and of the 3 · 2^k sizes OCR and detection models are exported at.
pub const CANDIDATES: &[usize] = &[
    1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 224, 256, 320, 416, 512, 640,
];

/// Step 2 of the search (each symbol lowered on its own) tries at most this many sizes in all:
/// each trial infers the whole graph, so a model with thousands of dynamic dims would cost
/// thousands of inferences (quadratic in its size). Beyond, symbols keep the size found for all.
pub const MAX_LOWERING_TRIALS: usize = 100;

/// Inputs larger than this many elements (all inputs together) are not tried.
pub const MAX_INPUT_ELEMENTS: usize = 1 << 24;

/// Whether a symbolic dim's name says it is a batch (`batch`, `batch_size`, `N`).
pub fn is_batch_name(p: &str) -> bool {
    p == "N" || p.to_ascii_lowercase().contains("batch")
}

/// The smallest size of a spatial dim of an image input (rank 4, float, axes 2 and 3): what
/// detectors and OCR models still read as an image (stride-32 backbones keep a 2×2 map).
pub const IMAGE_FLOOR: usize = 64;

/// The smallest size of another non-batch dim (a sequence, a number of samples or boxes).
pub const SEQUENCE_FLOOR: usize = 16;

/// The floor of one symbol: the smallest size it is given unless the user asks, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Floor {
    /// The size.
    pub size: usize,
    /// A size the model itself names for it (its metadata), tried first.
    pub hint: Option<usize>,
    /// Why, for [`Plan::why`].
    pub why: String,
}

/// The floor of the dim at `axis` of an input declared `dims` of element type `dtype`, named
/// `name` (a `dim_param`, or `None`), in a model whose metadata names the sizes `hints`.
pub fn floor_of(
    dims: &[Dim],
    axis: usize,
    dtype: DType,
    name: Option<&str>,
    hints: &[usize],
) -> Floor {
    let plain = |size: usize, why: &str| Floor {
        size,
        hint: None,
        why: why.to_string(),
    };
    if name.is_some_and(is_batch_name) {
        return plain(1, "named as a batch");
    }
    if axis == 0 && dims.len() >= 2 {
        return plain(1, "the leading dim of a batched input");
    }
    if dims.len() == 4 && axis >= 2 && dtype.is_float() {
        let sibling = dims[2..4]
            .iter()
            .filter_map(|d| match d {
                Dim::Known(k) if *k > 0 => Some(*k as usize),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            .min(CANDIDATES[CANDIDATES.len() - 1]);
        let hint = match hints {
            [] => None,
            [one] => Some(*one),
            more => more.get(axis - 2).copied(),
        };
        return Floor {
            size: IMAGE_FLOOR.max(sibling),
            hint,
            why: if sibling > IMAGE_FLOOR {
                format!("an image's spatial dim, at least its other side ({sibling})")
            } else {
                format!("an image's spatial dim, at least {IMAGE_FLOOR}")
            },
        };
    }
    plain(
        SEQUENCE_FLOOR,
        &format!("a sequence or count, at least {SEQUENCE_FLOOR}"),
    )
}

/// Sizes the model's metadata names for its inputs: the integers of the values of metadata
/// keys such as `imgsz`, `img_size`, `input_size`, `input_shape` (`"[320, 320]"`, `"640"`),
/// those from 8 to 4096 only.
pub fn metadata_sizes(m: &Model) -> Vec<usize> {
    const KEYS: &[&str] = &[
        "imgsz",
        "img_size",
        "image_size",
        "input_size",
        "input_shape",
    ];
    for e in &m.metadata_props {
        let key = e.key.as_deref().unwrap_or("").to_ascii_lowercase();
        if !KEYS.iter().any(|k| key == *k) {
            continue;
        }
        let sizes: Vec<usize> = e
            .value
            .as_deref()
            .unwrap_or("")
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|t| t.parse::<usize>().ok())
            .filter(|n| (8..=4096).contains(n))
            .collect();
        if !sizes.is_empty() {
            return sizes;
        }
    }
    Vec::new()
}

/// What the user fixed: whole shapes and fill values of inputs, by input name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fixed {
    /// Input shapes.
    pub shapes: BTreeMap<String, Vec<usize>>,
    /// Input values (every element of the input).
    pub values: BTreeMap<String, f64>,
}

impl Fixed {
    /// Whether nothing is fixed.
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty() && self.values.is_empty()
    }
}

/// Concrete inputs for a model, and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The shape of each tensor input whose declared shape has a rank.
    pub shapes: BTreeMap<String, Vec<usize>>,
    /// Inputs filled with one value.
    pub values: BTreeMap<String, f64>,
    /// Half-open ranges of integer inputs (indices into a tensor).
    pub ranges: BTreeMap<String, (i64, i64)>,
    /// The size chosen for each symbol (an unnamed dim is `input[axis]`).
    pub symbols: BTreeMap<String, usize>,
    /// Why each choice was made, one line per symbol or input.
    pub why: Vec<String>,
    /// Whether every node of the graph accepts the shapes as far as inference can tell.
    pub valid: bool,
}

/// A problem with what the user fixed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SolveError {
    /// The model has no real input of that name.
    #[error("the model has no input named '{name}' (its inputs: {known})")]
    NoInput {
        /// The name given.
        name: String,
        /// The model's real inputs.
        known: String,
    },
    /// A shape does not fit the input's declared shape.
    #[error("input '{name}': {problem}")]
    Shape {
        /// The input.
        name: String,
        /// What does not fit.
        problem: String,
    },
    /// An input shape as written for [`parse_shape`] lacks the `NAME:` part.
    #[error("'{arg}': expected NAME:D1xD2x... (e.g. x:1x3x224x224)")]
    ShapeSyntax {
        /// The text given.
        arg: String,
    },
    /// An input value as written for [`parse_value`] lacks the `NAME=` part.
    #[error("'{arg}': expected NAME=VALUE (e.g. sr=16000)")]
    ValueSyntax {
        /// The text given.
        arg: String,
    },
    /// An input shape or value names no input (`:2x3`, `=1`).
    #[error("'{arg}': the input name is empty")]
    EmptyName {
        /// The text given.
        arg: String,
    },
    /// A dim of an input shape is not a non-negative integer.
    #[error("'{arg}': '{dim}' is not a size (a non-negative integer)")]
    NotASize {
        /// The text given.
        arg: String,
        /// The dim as written.
        dim: String,
    },
    /// An input value is not a number.
    #[error("'{arg}': '{value}' is not a number")]
    NotANumber {
        /// The text given.
        arg: String,
        /// The value as written.
        value: String,
    },
}

/// Why the graph refuses the inputs of one candidate assignment.
#[derive(Clone, Debug, thiserror::Error)]
enum Rejection {
    /// The inputs together are larger than [`MAX_INPUT_ELEMENTS`].
    #[error("inputs of {0} elements are too large")]
    TooLarge(usize),
    /// The first node that inference finds in error.
    #[error("node {node}: {problem}")]
    Node {
        /// The node's label.
        node: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// One dim of an input during the search.
#[derive(Clone, Debug)]
enum Slot {
    Fixed(usize),
    Sym(usize),
}

struct Input {
    name: String,
    dtype: DType,
    /// `None`: rank unknown (generated as a vector of the default size).
    dims: Option<Vec<Slot>>,
}

struct Symbol {
    name: String,
    batch: bool,
    /// Set by a fixed shape.
    given: Option<usize>,
    /// The smallest size it is given.
    floor: Floor,
}

/// Finds concrete shapes and selector values for the real inputs of `m`.
pub fn solve(m: &Model, fixed: &Fixed) -> Result<Plan, SolveError> {
    let g = &m.graph;
    let real: Vec<&pb::ValueInfoProto> = g.real_inputs();
    let known = || {
        real.iter()
            .map(|v| v.name.clone().unwrap_or_default())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for name in fixed.shapes.keys().chain(fixed.values.keys()) {
        if !real
            .iter()
            .any(|v| v.name.as_deref() == Some(name.as_str()))
        {
            return Err(SolveError::NoInput {
                name: name.clone(),
                known: known(),
            });
        }
    }
    let mut symbols: Vec<Symbol> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let hints = metadata_sizes(m);
    let mut inputs: Vec<Input> = Vec::new();
    for v in &real {
        let name = v.name.clone().unwrap_or_default();
        let ty = v
            .r#type
            .as_ref()
            .map(ValueType::from_proto)
            .unwrap_or(ValueType::Unknown);
        let ValueType::Tensor(tt) = ty else {
            continue;
        };
        let given = fixed.shapes.get(&name);
        let dims = match (&tt.shape, given) {
            (None, Some(s)) => Some(s.iter().map(|&d| Slot::Fixed(d)).collect()),
            (None, None) => None,
            (Some(dims), given) => {
                if let Some(s) = given
                    && s.len() != dims.len()
                {
                    return Err(SolveError::Shape {
                        name,
                        problem: format!(
                            "the model declares {} dims ({}), the shape given has {}",
                            dims.len(),
                            show_dims(dims),
                            s.len()
                        ),
                    });
                }
                let mut out = Vec::new();
                for (axis, d) in dims.iter().enumerate() {
                    let want = given.map(|s| s[axis]);
                    let slot = match d {
                        Dim::Known(k) => {
                            if let Some(w) = want
                                && w as i64 != *k
                            {
                                return Err(SolveError::Shape {
                                    name,
                                    problem: format!(
                                        "dim {axis} is {k} in the model, the shape given has {w}"
                                    ),
                                });
                            }
                            Slot::Fixed(*k as usize)
                        }
                        Dim::Param(p) => {
                            let i = *by_name.entry(p.clone()).or_insert_with(|| {
                                symbols.push(Symbol {
                                    name: p.clone(),
                                    batch: is_batch_name(p),
                                    given: None,
                                    floor: floor_of(dims, axis, tt.dtype, Some(p), &hints),
                                });
                                symbols.len() - 1
                            });
                            if let Some(w) = want {
                                match symbols[i].given {
                                    Some(prev) if prev != w => {
                                        return Err(SolveError::Shape {
                                            name,
                                            problem: format!(
                                                "dim {axis} is '{p}', which another given \
                                                 shape sets to {prev}, this one to {w}"
                                            ),
                                        });
                                    }
                                    _ => symbols[i].given = Some(w),
                                }
                            }
                            Slot::Sym(i)
                        }
                        Dim::Unknown => match want {
                            Some(w) => Slot::Fixed(w),
                            None => {
                                symbols.push(Symbol {
                                    name: format!("{name}[{axis}]"),
                                    batch: false,
                                    given: None,
                                    floor: floor_of(dims, axis, tt.dtype, None, &hints),
                                });
                                Slot::Sym(symbols.len() - 1)
                            }
                        },
                    };
                    out.push(slot);
                }
                Some(out)
            }
        };
        inputs.push(Input {
            name,
            dtype: tt.dtype,
            dims,
        });
    }

    let mut plan = Plan {
        values: fixed.values.clone(),
        ..Plan::default()
    };
    for (name, v) in &fixed.values {
        plan.why.push(format!("{name} = {v}: given"));
    }
    selector_hints(g, &inputs, &mut plan);

    let mut position: HashMap<&str, usize> = HashMap::with_capacity(g.inputs.len());
    for (i, v) in g.inputs.iter().enumerate() {
        position.entry(v.name.as_deref().unwrap_or("")).or_insert(i);
    }
    let mut search = Search {
        model: m,
        position,
        inputs: &inputs,
        values: &plan.values,
    };
    let n = symbols.len();
    let mut sizes: Vec<usize> = symbols.iter().map(|s| s.given.unwrap_or(1)).collect();
    let free: Vec<usize> = (0..n).filter(|&i| symbols[i].given.is_none()).collect();
    // Nothing to choose (every input dim is known, no input value is chosen): the declared
    // sizes are the plan, and whether every node accepts them is validation's question, not
    // one more inference of the whole graph here.
    let mut valid = n == 0 && plan.values.is_empty();
    let mut first_error = None;
    let floor = |i: usize| symbols[i].floor.size;
    // 0. The sizes the model's metadata names, the other symbols at their floors.
    let hinted: Vec<usize> = free
        .iter()
        .copied()
        .filter(|&i| symbols[i].floor.hint.is_some())
        .collect();
    if !valid && !hinted.is_empty() {
        for &i in &free {
            sizes[i] = symbols[i].floor.hint.unwrap_or_else(|| floor(i));
        }
        valid = search.check(&sizes).is_ok();
    }
    // 1. One size for every free symbol that is not a batch (at least its floor); batches
    //    at 1. Then, should no size fit, batches too.
    'uniform: for batches_too in [false, true] {
        if valid {
            break;
        }
        if batches_too && !free.iter().any(|&i| symbols[i].batch) {
            break;
        }
        let mut last: Option<Vec<usize>> = None;
        for &c in CANDIDATES {
            for &i in &free {
                sizes[i] = if symbols[i].batch && !batches_too {
                    1
                } else {
                    c.max(floor(i))
                };
            }
            // Candidates under every floor give the same sizes: checked once.
            if last.as_ref() == Some(&sizes) {
                continue;
            }
            last = Some(sizes.clone());
            match search.check(&sizes) {
                Ok(()) => {
                    valid = true;
                    break 'uniform;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
            if free.iter().all(|&i| symbols[i].batch && !batches_too) {
                break;
            }
        }
    }
    let mut reason: Vec<String> = vec![String::new(); n];
    if valid {
        // 2. Each symbol on its own, down to the smallest valid size (within a budget of
        //    trials: each infers the whole graph).
        let mut trials = 0usize;
        for &i in &free {
            let mut blocked = None;
            let mut spent = false;
            if symbols[i].floor.hint == Some(sizes[i]) {
                reason[i] = "the size the model's metadata names".to_string();
                continue;
            }
            let lower = CANDIDATES
                .iter()
                .filter(|&&c| c >= floor(i))
                .take_while(|&&c| c < sizes[i]);
            for &c in lower {
                if trials == MAX_LOWERING_TRIALS {
                    spent = true;
                    break;
                }
                trials += 1;
                let mut trial = sizes.clone();
                trial[i] = c;
                match search.check(&trial) {
                    Ok(()) => {
                        sizes = trial;
                        blocked = None;
                        break;
                    }
                    Err(e) => blocked = Some((c, e)),
                }
            }
            reason[i] = match blocked {
                _ if spent => format!(
                    "kept at the size every symbol fits (the search for smaller sizes stops \
                     after {MAX_LOWERING_TRIALS} trials)"
                ),
                Some((c, e)) => format!(
                    "the smallest valid size ({}); at {c}: {e}",
                    symbols[i].floor.why
                ),
                None if sizes[i] == 1 && symbols[i].batch => "named as a batch".to_string(),
                None => format!("the smallest size ({})", symbols[i].floor.why),
            };
        }
    } else {
        for &i in &free {
            sizes[i] = if symbols[i].batch { 1 } else { floor(i) };
        }
    }
    for (i, s) in symbols.iter().enumerate() {
        plan.symbols.insert(s.name.clone(), sizes[i]);
        let why = match s.given {
            Some(_) => "given".to_string(),
            None if valid => reason[i].clone(),
            None => "no candidate size makes every node valid".to_string(),
        };
        plan.why.push(format!("{} = {}: {why}", s.name, sizes[i]));
    }
    if !valid && let Some(e) = first_error {
        plan.why.push(format!(
            "at the smallest sizes: {e}; sizes tried: {CANDIDATES:?}"
        ));
    }
    for inp in &inputs {
        if let Some(d) = &inp.dims {
            plan.shapes.insert(inp.name.clone(), concrete(d, &sizes));
        }
    }
    plan.valid = valid;
    Ok(plan)
}

fn show_dims(dims: &[Dim]) -> String {
    dims.iter()
        .map(|d| match d {
            Dim::Known(k) => k.to_string(),
            Dim::Param(p) => p.clone(),
            Dim::Unknown => "?".into(),
        })
        .collect::<Vec<_>>()
        .join("×")
}

fn concrete(dims: &[Slot], sizes: &[usize]) -> Vec<usize> {
    dims.iter()
        .map(|s| match s {
            Slot::Fixed(k) => *k,
            Slot::Sym(i) => sizes[*i],
        })
        .collect()
}

/// Inference of the graph at candidate sizes (the model is not copied: each candidate's input
/// types are handed to inference in place of the declared ones).
struct Search<'a> {
    model: &'a Model,
    /// The position of each graph input, by name (the first one of that name).
    position: HashMap<&'a str, usize>,
    inputs: &'a [Input],
    values: &'a BTreeMap<String, f64>,
}

impl Search<'_> {
    /// `Ok` when inference finds no node rejecting the inputs at `sizes`; else the first
    /// node's complaint.
    fn check(&mut self, sizes: &[usize]) -> Result<(), Rejection> {
        let mut scope = Scope::default();
        let mut types: Vec<Option<ValueType>> = vec![None; self.model.graph.inputs.len()];
        let mut total = 0usize;
        for inp in self.inputs {
            let Some(d) = &inp.dims else { continue };
            let shape = concrete(d, sizes);
            let n = shape.iter().fold(1usize, |a, &d| a.saturating_mul(d));
            total = total.saturating_add(n);
            if let Some(v) = self.values.get(&inp.name)
                && n <= 4096
            {
                let dims: Vec<i64> = shape.iter().map(|&x| x as i64).collect();
                let t = tensor::from_f64s(&inp.name, inp.dtype, &dims, &vec![*v; n]);
                scope.consts.insert(inp.name.clone(), t);
            }
            let dims: Vec<i64> = shape.iter().map(|&x| x as i64).collect();
            let ty = ValueType::Tensor(TensorType::fixed(inp.dtype, &dims));
            if let Some(&i) = self.position.get(inp.name.as_str()) {
                types[i] = Some(ty);
            }
        }
        if total > MAX_INPUT_ELEMENTS {
            return Err(Rejection::TooLarge(total));
        }
        // Valued inputs are constants of the outer scope: the graph sees them as consts, and
        // their types come from the graph's own inputs.
        let mut rep = infer::Report::default();
        infer::run_graph_with_inputs(
            &self.model.graph,
            self.model.default_opset(),
            &scope,
            Options {
                use_declared: false,
            },
            &types,
            &mut rep,
        );
        match rep.errors.into_iter().next() {
            None => Ok(()),
            Some((node, problem)) => Err(Rejection::Node { node, problem }),
        }
    }
}

/// Constants of the main graph: initializers and `Constant` node outputs, by value name.
fn constants(g: &Graph) -> HashMap<&str, &Tensor> {
    let mut out: HashMap<&str, &Tensor> = g
        .initializers
        .iter()
        .map(|(k, t)| (k.as_str(), t))
        .collect();
    for n in g.nodes() {
        if n.op_type == "Constant"
            && let Some(a) = n.attributes.iter().find(|a| a.name == "value")
            && let AttrValue::Tensor(t) = &a.value
            && let Some(o) = n.outputs.first()
        {
            out.insert(o.as_str(), t);
        }
    }
    out
}

/// [`Graph::consumers`] of every value at once (asking the graph walks every node per value).
struct Consumers<'a> {
    /// Nodes reading a value as an input.
    direct: HashMap<&'a str, Vec<NodeId>>,
    /// Nodes whose subgraphs capture a value.
    captured: HashMap<String, Vec<NodeId>>,
}

impl<'a> Consumers<'a> {
    fn new(g: &'a Graph) -> Consumers<'a> {
        let mut direct: HashMap<&str, Vec<NodeId>> = HashMap::new();
        let mut captured: HashMap<String, Vec<NodeId>> = HashMap::new();
        for n in g.nodes() {
            for i in n.present_inputs() {
                let list = direct.entry(i).or_default();
                if list.last() != Some(&n.id) {
                    list.push(n.id);
                }
            }
            for (_, sub) in n.subgraphs() {
                for c in sub.captured_names() {
                    let list = captured.entry(c).or_default();
                    if list.last() != Some(&n.id) {
                        list.push(n.id);
                    }
                }
            }
        }
        Consumers { direct, captured }
    }

    /// The nodes reading `v`, in id order.
    fn of(&self, v: &str) -> Vec<NodeId> {
        let mut ids: Vec<NodeId> = self
            .direct
            .get(v)
            .into_iter()
            .chain(self.captured.get(v))
            .flatten()
            .copied()
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

/// Values for integer inputs that select behaviour: the constant an input is compared with,
/// or the range of the axis it indexes. Looks through ops that keep values (Cast, Reshape,
/// Squeeze, Unsqueeze, Identity, Flatten).
fn selector_hints(g: &Graph, inputs: &[Input], plan: &mut Plan) {
    if !inputs
        .iter()
        .any(|inp| inp.dtype.is_int() && !plan.values.contains_key(&inp.name))
    {
        return;
    }
    let consts = constants(g);
    let consumers = Consumers::new(g);
    for inp in inputs {
        if !inp.dtype.is_int() || plan.values.contains_key(&inp.name) {
            continue;
        }
        let mut frontier = vec![inp.name.clone()];
        let mut seen = 0;
        let mut found = false;
        while let Some(v) = frontier.pop() {
            seen += 1;
            if seen > 64 || found {
                break;
            }
            for id in consumers.of(&v) {
                let Some(n) = g.node(id) else { continue };
                let slot = n.inputs.iter().position(|i| *i == v);
                match n.op_type.as_str() {
                    "Cast" | "Reshape" | "Squeeze" | "Unsqueeze" | "Identity" | "Flatten"
                        if slot == Some(0) =>
                    {
                        frontier.extend(n.outputs.iter().filter(|o| !o.is_empty()).cloned());
                    }
                    "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" => {
                        let other = n.inputs.iter().find(|i| **i != v);
                        if let Some(t) = other.and_then(|o| consts.get(o.as_str()))
                            && t.num_elements() >= 1
                            && let Ok(vals) = t.to_f64s()
                        {
                            let val = vals[0];
                            plan.values.insert(inp.name.clone(), val);
                            plan.why.push(format!(
                                "{} = {val}: compared with that constant by node {}",
                                inp.name,
                                n.label()
                            ));
                            found = true;
                            break;
                        }
                    }
                    "Gather" | "GatherElements" if slot == Some(1) => {
                        let axis = n
                            .attributes
                            .iter()
                            .find(|a| a.name == "axis")
                            .and_then(|a| match a.value {
                                AttrValue::Int(k) => Some(k),
                                _ => None,
                            })
                            .unwrap_or(0);
                        if let Some(t) = consts.get(n.inputs[0].as_str()) {
                            let r = t.dims.len() as i64;
                            let ax = if axis < 0 { axis + r } else { axis };
                            if let Some(&len) = usize::try_from(ax).ok().and_then(|a| t.dims.get(a))
                                && len > 0
                            {
                                plan.ranges.insert(inp.name.clone(), (0, len));
                                plan.why.push(format!(
                                    "{} in [0, {len}): indices into axis {ax} of '{}' by node {}",
                                    inp.name,
                                    n.inputs[0],
                                    n.label()
                                ));
                                found = true;
                                break;
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, s) in &self.shapes {
            if s.is_empty() {
                writeln!(f, "{name}: scalar")?;
            } else {
                writeln!(
                    f,
                    "{name}: {}",
                    s.iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join("x")
                )?;
            }
        }
        for w in &self.why {
            writeln!(f, "  {w}")?;
        }
        if !self.valid {
            writeln!(f, "  (no sizes found that every node accepts)")?;
        }
        Ok(())
    }
}

/// `m` with the declared shapes of its real inputs fixed to `shapes` (inputs of another rank,
/// and those not named, are left as they are), inferred again: every value of the graph then
/// has the static shape it will have at run time.
pub fn concretize(m: &Model, shapes: &BTreeMap<String, Vec<usize>>) -> Model {
    let mut out = m.clone();
    let inits: std::collections::HashSet<String> = out.graph.initializers.keys().cloned().collect();
    // The size each symbol of the inputs takes: declared types elsewhere (outputs, value_info)
    // that name it get that size too, else a library that checks declared types against the
    // inputs (tract: `Impossible to unify Sym(seq_len) with Val(16)`) refuses the model.
    let mut sizes: HashMap<String, i64> = HashMap::new();
    for v in &out.graph.inputs {
        let name = v.name.clone().unwrap_or_default();
        let (Some(shape), Some(ValueType::Tensor(tt))) = (
            shapes.get(&name),
            v.r#type.as_ref().map(ValueType::from_proto),
        ) else {
            continue;
        };
        for (d, &n) in tt.shape.iter().flatten().zip(shape) {
            if let Dim::Param(p) = d {
                sizes.entry(p.clone()).or_insert(n as i64);
            }
        }
    }
    let bind = |v: &mut pb::ValueInfoProto| {
        if let Some(ValueType::Tensor(tt)) = v.r#type.as_ref().map(ValueType::from_proto)
            && let Some(dims) = &tt.shape
            && dims
                .iter()
                .any(|d| matches!(d, Dim::Param(p) if sizes.contains_key(p)))
        {
            let dims = dims
                .iter()
                .map(|d| match d {
                    Dim::Param(p) => sizes.get(p).map_or(d.clone(), |&n| Dim::Known(n)),
                    d => d.clone(),
                })
                .collect();
            let t = TensorType {
                dtype: tt.dtype,
                shape: Some(dims),
            };
            v.r#type = Some(ValueType::Tensor(t).to_proto());
        }
    };
    out.graph.outputs.iter_mut().for_each(bind);
    out.graph.value_info.iter_mut().for_each(bind);
    for v in out.graph.inputs.iter_mut() {
        let name = v.name.clone().unwrap_or_default();
        if inits.contains(&name) {
            continue;
        }
        let Some(shape) = shapes.get(&name) else {
            continue;
        };
        let ty = v
            .r#type
            .as_ref()
            .map(ValueType::from_proto)
            .unwrap_or(ValueType::Unknown);
        if let ValueType::Tensor(tt) = ty
            && tt.shape.as_ref().is_none_or(|d| d.len() == shape.len())
        {
            let dims: Vec<i64> = shape.iter().map(|&x| x as i64).collect();
            v.r#type = Some(ValueType::Tensor(TensorType::fixed(tt.dtype, &dims)).to_proto());
        }
    }
    infer::infer_model(&mut out, Options::default());
    out
}

/// Parses `name:1x3x320x320` (an input shape; `name:` alone is a scalar).
pub fn parse_shape(s: &str) -> Result<(String, Vec<usize>), SolveError> {
    let arg = || s.to_string();
    let (name, dims) = s
        .rsplit_once(':')
        .ok_or_else(|| SolveError::ShapeSyntax { arg: arg() })?;
    if name.is_empty() {
        return Err(SolveError::EmptyName { arg: arg() });
    }
    let dims = dims.trim();
    let shape = if dims.is_empty() {
        Vec::new()
    } else {
        dims.split(['x', 'X', ','])
            .map(|d| {
                d.trim().parse::<usize>().map_err(|_| SolveError::NotASize {
                    arg: arg(),
                    dim: d.to_string(),
                })
            })
            .collect::<Result<_, _>>()?
    };
    Ok((name.to_string(), shape))
}

/// Parses `name=16000` (every element of the input gets that value).
pub fn parse_value(s: &str) -> Result<(String, f64), SolveError> {
    let arg = || s.to_string();
    let (name, v) = s
        .rsplit_once('=')
        .ok_or_else(|| SolveError::ValueSyntax { arg: arg() })?;
    if name.is_empty() {
        return Err(SolveError::EmptyName { arg: arg() });
    }
    let v: f64 = v.trim().parse().map_err(|_| SolveError::NotANumber {
        arg: arg(),
        value: v.to_string(),
    })?;
    Ok((name.to_string(), v))
}

#[cfg(test)]
mod tests;
