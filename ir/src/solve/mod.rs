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
use crate::dtype::DType;
use crate::infer::{self, Options};
use crate::model::Model;
use crate::pb;
use crate::types::{Dim, TensorType, ValueType};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

mod hints;
mod search;

use hints::selector_hints;
use search::{Search, concrete};

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
    #[error("'{arg}': expected NAME:D1xD2x... (e.g. x:1x3x224x224 or x:[1,3,224,224])")]
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
    check_names(&real, fixed)?;
    let (inputs, symbols) = collect_inputs(m, &real, fixed)?;
    let mut plan = Plan {
        values: fixed.values.clone(),
        ..Plan::default()
    };
    for (name, v) in &fixed.values {
        plan.why.push(format!("{name} = {v}: given"));
    }
    selector_hints(g, &inputs, &mut plan);
    let found = {
        let mut search = Search::new(m, &inputs, &plan.values);
        search::find_sizes(&mut search, &symbols, plan.values.is_empty())
    };
    write_plan(&mut plan, &symbols, &inputs, found);
    Ok(plan)
}

/// Every input `fixed` names is a real input of the model.
fn check_names(real: &[&pb::ValueInfoProto], fixed: &Fixed) -> Result<(), SolveError> {
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
    Ok(())
}

/// The symbols of the search: one per `dim_param` name, one per unnamed dim.
#[derive(Default)]
struct Symbols {
    list: Vec<Symbol>,
    by_name: HashMap<String, usize>,
}

/// The tensor inputs among `real` as the search sees them (each dim fixed or a symbol), and
/// their symbols, with what `fixed` gives.
fn collect_inputs(
    m: &Model,
    real: &[&pb::ValueInfoProto],
    fixed: &Fixed,
) -> Result<(Vec<Input>, Vec<Symbol>), SolveError> {
    let mut symbols = Symbols::default();
    let hints = metadata_sizes(m);
    let mut inputs: Vec<Input> = Vec::new();
    for v in real {
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
            (Some(dims), given) => Some(declared_slots(
                &name,
                tt.dtype,
                dims,
                given.map(Vec::as_slice),
                &mut symbols,
                &hints,
            )?),
        };
        inputs.push(Input {
            name,
            dtype: tt.dtype,
            dims,
        });
    }
    Ok((inputs, symbols.list))
}

/// The slots of an input declared `dims`, with the shape `given` for it if any.
fn declared_slots(
    name: &str,
    dtype: DType,
    dims: &[Dim],
    given: Option<&[usize]>,
    symbols: &mut Symbols,
    hints: &[usize],
) -> Result<Vec<Slot>, SolveError> {
    let shape_error = |problem: String| SolveError::Shape {
        name: name.to_string(),
        problem,
    };
    if let Some(s) = given
        && s.len() != dims.len()
    {
        return Err(shape_error(format!(
            "the model declares {} dims ({}), the shape given has {}",
            dims.len(),
            show_dims(dims),
            s.len()
        )));
    }
    let mut out = Vec::new();
    for (axis, d) in dims.iter().enumerate() {
        let want = given.map(|s| s[axis]);
        let slot = match d {
            Dim::Known(k) => {
                if let Some(w) = want
                    && w as i64 != *k
                {
                    return Err(shape_error(format!(
                        "dim {axis} is {k} in the model, the shape given has {w}"
                    )));
                }
                Slot::Fixed(*k as usize)
            }
            Dim::Param(p) => {
                let i = *symbols.by_name.entry(p.clone()).or_insert_with(|| {
                    symbols.list.push(Symbol {
                        name: p.clone(),
                        batch: is_batch_name(p),
                        given: None,
                        floor: floor_of(dims, axis, dtype, Some(p), hints),
                    });
                    symbols.list.len() - 1
                });
                if let Some(w) = want {
                    match symbols.list[i].given {
                        Some(prev) if prev != w => {
                            return Err(shape_error(format!(
                                "dim {axis} is '{p}', which another given shape sets to \
                                 {prev}, this one to {w}"
                            )));
                        }
                        _ => symbols.list[i].given = Some(w),
                    }
                }
                Slot::Sym(i)
            }
            Dim::Unknown => match want {
                Some(w) => Slot::Fixed(w),
                None => {
                    symbols.list.push(Symbol {
                        name: format!("{name}[{axis}]"),
                        batch: false,
                        given: None,
                        floor: floor_of(dims, axis, dtype, None, hints),
                    });
                    Slot::Sym(symbols.list.len() - 1)
                }
            },
        };
        out.push(slot);
    }
    Ok(out)
}

/// Writes the sizes found into `plan`: each symbol with why, each input's shape.
fn write_plan(plan: &mut Plan, symbols: &[Symbol], inputs: &[Input], found: search::Found) {
    let search::Found {
        sizes,
        valid,
        reason,
        first_error,
    } = found;
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
    for inp in inputs {
        if let Some(d) = &inp.dims {
            plan.shapes.insert(inp.name.clone(), concrete(d, &sizes));
        }
    }
    plan.valid = valid;
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

/// Parses `name:1x3x320x320`, `name:1,3,320,320` or Polygraphy's `name:[1,3,320,320]` (an input
/// shape; `name:` alone is a scalar).
pub fn parse_shape(s: &str) -> Result<(String, Vec<usize>), SolveError> {
    let arg = || s.to_string();
    let (name, dims) = s
        .rsplit_once(':')
        .ok_or_else(|| SolveError::ShapeSyntax { arg: arg() })?;
    if name.is_empty() {
        return Err(SolveError::EmptyName { arg: arg() });
    }
    // Polygraphy's form `x:[1,3,224,224]` too.
    let dims = dims.trim();
    let dims = match dims.strip_prefix('[') {
        Some(inner) => inner
            .strip_suffix(']')
            .ok_or_else(|| SolveError::ShapeSyntax { arg: arg() })?
            .trim(),
        None => dims,
    };
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
