//! Adjudication with an envelope, not one number.
//!
//! The f64 reference computes what the operators mean; an implementation computes in the
//! model's element types, and where ONNX defines an op by a function body (Softplus as
//! `Log(Add(Exp(X), 1))`) the body itself overflows, underflows or cancels in f32 where f64
//! does not. `reference-native` evaluates the model that way (see the reference's `native`
//! module). A backend's value is legitimate when it is within tolerance of either reference or
//! lies between them ([`mutagraph_backends::compare::compare_envelope`]).
//!
//! The tolerance of a value follows the narrowest float type on its path from the graph
//! inputs ([`Precision`]): an f32 output computed through an f16 intermediate (or a
//! LayerNormalization with f16 statistics) carries f16 rounding whatever its own type.
use crate::checks::{compare_outputs, count_new_nonfinite};
use mutagraph_backends::catalog::Arithmetic;
use mutagraph_backends::compare::{CompareOptions, Metrics, Tolerance, compare_envelope};
use mutagraph_backends::value::NamedValues;
use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::model::Model;
use mutagraph_ir::types::ValueType;
use std::collections::HashMap;

/// The tolerance of every value of a model: the base tolerance widened to the narrowest float
/// type on the value's path.
#[derive(Clone, Debug)]
pub struct Precision {
    /// The campaign's named tolerance.
    pub base: Tolerance,
    /// Narrowest float type on the path to each value (values without a float ancestor are
    /// absent).
    narrowest: HashMap<String, DType>,
    /// Integer values computed through an interpolation rounded back to an integer type (or
    /// from such values): off by one unit is legitimate.
    int_slack: std::collections::HashSet<String>,
    /// Float values dequantized from an integer value that may be one unit off
    /// (`int_slack`): one quantization step, the largest scale, is legitimate.
    dequantized_step: HashMap<String, f64>,
    /// The absolute tolerance of values in a half-precision type, widened to the rounding of
    /// the largest value on their path ([`Precision::conditioned`]).
    atol_floor: HashMap<String, f64>,
    /// The values a backend's arithmetic ([`Precision::for_arithmetic`]) may round more than
    /// IEEE arithmetic in their types does, with the largest unit of rounding it adds.
    arithmetic: HashMap<String, (f64, Arithmetic)>,
    /// The modes of [`Precision::for_arithmetic`] that apply to some op of the model.
    applied: Vec<Arithmetic>,
}

/// Units of rounding (half an ulp at 1: 2^-11 for f16, 2^-8 for bf16) of the largest value on
/// a half-precision path that a result may carry ([`Precision::conditioned`]).
pub(crate) const PATH_ROUNDINGS: f64 = 4.0;

/// The unit of rounding of a half-precision float type (`None` for wider ones).
fn half_roundoff(d: DType) -> Option<f64> {
    matches!(d, DType::F16 | DType::BF16)
        .then(|| crate::localize::unit_of(d))
        .flatten()
}

/// The largest finite magnitude on each value's path: the value's own, its inputs' paths',
/// and so on up to the graph inputs and weights, read from `values` (a run's intermediates
/// and the inputs) and the initializers. Every value the model computes, input and weight.
pub(crate) fn largest_on_path(model: &Model, values: &NamedValues) -> HashMap<String, f64> {
    use mutagraph_ir::tensor::TensorExt;
    let g = &model.graph;
    let mut path: HashMap<String, f64> = values
        .iter()
        .map(|(n, v)| (n.clone(), max_abs(v)))
        .collect();
    for (name, t) in &g.initializers {
        path.entry(name.clone()).or_insert_with(|| {
            t.to_f64s()
                .unwrap_or_default()
                .into_iter()
                .filter(|x| x.is_finite())
                .fold(0.0, |m, x| m.max(x.abs()))
        });
    }
    for id in g.topo_order().unwrap_or_default() {
        let Some(node) = g.node(id) else { continue };
        let before = node
            .present_inputs()
            .map(|i| path.get(i).copied().unwrap_or(0.0))
            .fold(0.0, f64::max);
        for o in node.outputs.iter().filter(|o| !o.is_empty()) {
            let m = path.get(o.as_str()).copied().unwrap_or(0.0).max(before);
            path.insert(o.clone(), m);
        }
    }
    path
}

/// The largest finite magnitude in a value (0 for non-float or empty values).
fn max_abs(v: &mutagraph_backends::value::Value) -> f64 {
    v.tensors()
        .iter()
        .filter_map(|t| t.to_f64s())
        .flatten()
        .filter(|x| x.is_finite())
        .fold(0.0, |m, x| m.max(x.abs()))
}

/// Ops that interpolate, average or requantize and may round the result back to an integer
/// type, a rounding ONNX does not fix: for QLinearConv and QLinearMatMul the precision of the
/// combined scale `x_scale * w_scale / y_scale` is left open (ONNX Runtime, tract and ONNX's
/// reference all round a tie of the f32 product, not of the exact one), and
/// DynamicQuantizeLinear computes its own scale. ONNX Runtime's `com.microsoft` QLinear ops
/// requantize through f32 products of the scales in the same way (their docs give the exact
/// formula, their kernel rounds the f32 one).
const INTERPOLATING: &[&str] = &[
    "Resize",
    "Upsample",
    "GridSample",
    "AffineGrid",
    "QLinearConv",
    "QLinearMatMul",
    "DynamicQuantizeLinear",
    "QLinearAdd",
    "QLinearMul",
    "QLinearSigmoid",
    "QLinearLeakyRelu",
];

/// One quantization step of a DequantizeLinear whose integer input may be one unit off
/// (`int_slack`, a requantized result): the largest of its constant scales. `None` for other
/// nodes, or a scale computed at run time. `consts`: the graph's constants, gathered on first
/// use (most models have no such node, and the walk runs on every mutant).
fn dequantized_step_of<'g>(
    g: &'g mutagraph_ir::graph::Graph,
    consts: &std::cell::OnceCell<HashMap<&'g str, &'g mutagraph_ir::tensor::Tensor>>,
    node: &mutagraph_ir::graph::Node,
    int_slack: &std::collections::HashSet<String>,
) -> Option<f64> {
    use mutagraph_ir::tensor::TensorExt;
    if node.op_type != "DequantizeLinear" || !int_slack.contains(node.inputs.first()?.as_str()) {
        return None;
    }
    let scale = consts
        .get_or_init(|| g.constants())
        .get(node.inputs.get(1)?.as_str())?
        .to_f64s()
        .ok()?;
    let step = scale.iter().map(|s| s.abs()).fold(0.0, f64::max);
    (step.is_finite() && step > 0.0).then_some(step)
}

/// Mantissa bits of a float type (fewer: narrower).
fn mantissa(d: DType) -> u32 {
    match d {
        DType::BF16 => 8,
        DType::F16 => 11,
        DType::F32 => 24,
        DType::F64 => 53,
        _ => u32::MAX,
    }
}

fn narrower(a: Option<DType>, b: DType) -> Option<DType> {
    if !b.is_float() || mantissa(b) == u32::MAX {
        return a;
    }
    match a {
        Some(x) if mantissa(x) <= mantissa(b) => Some(x),
        _ => Some(b),
    }
}

impl Precision {
    /// The tolerance `base` for every value, without path information.
    pub fn flat(base: Tolerance) -> Precision {
        Precision {
            base,
            narrowest: HashMap::new(),
            int_slack: Default::default(),
            dequantized_step: HashMap::new(),
            atol_floor: HashMap::new(),
            arithmetic: HashMap::new(),
            applied: Vec::new(),
        }
    }

    /// Walks `model` (inferred types) in topological order.
    pub fn of(model: &Model, base: Tolerance) -> Precision {
        let g = &model.graph;
        let mut narrowest: HashMap<String, DType> = HashMap::new();
        let mut int_slack = std::collections::HashSet::new();
        let mut dequantized_step = HashMap::new();
        let consts = std::cell::OnceCell::new();
        let ty = |name: &str| match g.value_type(name) {
            ValueType::Tensor(t) => Some(t.dtype),
            _ => None,
        };
        for vi in &g.inputs {
            if let Some(n) = vi.name.as_deref()
                && let Some(d) = ty(n)
                && let Some(x) = narrower(None, d)
            {
                narrowest.insert(n.to_string(), x);
            }
        }
        if let Ok(order) = g.topo_order() {
            for id in order {
                let Some(node) = g.node(id) else { continue };
                let mut acc: Option<DType> = None;
                for i in node.present_inputs() {
                    if let Some(&d) = narrowest.get(i) {
                        acc = narrower(acc, d);
                    } else if let Some(d) = ty(i) {
                        acc = narrower(acc, d);
                    }
                }
                // A compute type narrower than the data (LayerNormalization's stash_type).
                if let Some(code) = node.attributes.int_opt("stash_type") {
                    acc = narrower(acc, DType::from_code(code as i32));
                }
                let slack = INTERPOLATING.contains(&node.op_type.as_str())
                    || node.present_inputs().any(|i| int_slack.contains(i));
                for o in node.outputs.iter().filter(|o| !o.is_empty()) {
                    let mine = ty(o).map_or(acc, |d| narrower(acc, d));
                    if let Some(d) = mine {
                        narrowest.insert(o.clone(), d);
                    }
                    if slack && ty(o).is_some_and(|d| d.is_int()) {
                        int_slack.insert(o.clone());
                    }
                }
                if let Some(step) = dequantized_step_of(g, &consts, node, &int_slack) {
                    for o in node.outputs.iter().filter(|o| !o.is_empty()) {
                        dequantized_step.insert(o.clone(), step);
                    }
                }
            }
        }
        Precision {
            base,
            narrowest,
            int_slack,
            dequantized_step,
            atol_floor: HashMap::new(),
            arithmetic: HashMap::new(),
            applied: Vec::new(),
        }
    }

    /// This precision for a backend whose kernels compute in `modes` besides IEEE arithmetic
    /// in the model's types (its catalog row's [`Arithmetic`]): each float32 value computed by
    /// an op a mode applies to, or from such values, may carry that mode's rounding. TF32
    /// matrix units round like float16 (the tolerance of a float16 path, at least); every mode
    /// adds its unit of rounding of the largest value on the path ([`Precision::conditioned`]).
    pub fn for_arithmetic(&self, model: &Model, modes: &[Arithmetic]) -> Precision {
        let g = &model.graph;
        let mut arithmetic: HashMap<String, (f64, Arithmetic)> = HashMap::new();
        let mut applied: Vec<Arithmetic> = Vec::new();
        let is_f32 = |name: &str| matches!(g.value_type(name), ValueType::Tensor(t) if t.dtype == DType::F32);
        let Ok(order) = g.topo_order() else {
            return self.clone();
        };
        for id in order {
            let Some(node) = g.node(id) else { continue };
            let inherited = node
                .present_inputs()
                .filter_map(|i| arithmetic.get(i).copied())
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let computes_f32 = node.outputs.iter().any(|o| !o.is_empty() && is_f32(o));
            let mine: Vec<Arithmetic> = modes
                .iter()
                .copied()
                .filter(|m| {
                    computes_f32
                        && m.ops()
                            .is_none_or(|ops| ops.contains(&node.op_type.as_str()))
                })
                .collect();
            for m in &mine {
                if !applied.contains(m) {
                    applied.push(*m);
                }
            }
            let own = mine
                .into_iter()
                .map(|m| (m.unit(), m))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let Some(mode) = [inherited, own]
                .into_iter()
                .flatten()
                .max_by(|a, b| a.0.total_cmp(&b.0))
            else {
                continue;
            };
            for o in node.outputs.iter().filter(|o| !o.is_empty() && is_f32(o)) {
                arithmetic.insert(o.clone(), mode);
            }
        }
        applied.sort_by_key(|m| modes.iter().position(|x| x == m));
        Precision {
            arithmetic,
            applied,
            ..self.clone()
        }
    }

    /// This precision conditioned on the values a model computed (`values`: the reference's
    /// intermediates, its inputs and initializers): a value in a half-precision type may be
    /// off by a few roundings of the largest value on its path ([`PATH_ROUNDINGS`]), not of its
    /// own size. A small result of large intermediates cancels: an f16 BatchNormalization
    /// folded into the weights of the Conv before it rounds at the scale of the Conv's
    /// outputs, and ONNX does not fix the order of such arithmetic.
    pub fn conditioned(&self, model: &Model, values: &NamedValues) -> Precision {
        // Nothing to condition without a half-precision path or another arithmetic (most
        // models on CPU backends).
        if !self.narrowest.values().any(|&d| half_roundoff(d).is_some())
            && self.arithmetic.is_empty()
        {
            return self.clone();
        }
        let path = largest_on_path(model, values);
        let mut atol_floor = HashMap::new();
        for node in model.graph.nodes() {
            for o in node.outputs.iter().filter(|o| !o.is_empty()) {
                let half = self.narrowest(o).and_then(half_roundoff);
                let other = self.arithmetic.get(o.as_str()).map(|a| a.0);
                let unit = half.into_iter().chain(other).reduce(f64::max);
                if let (Some(u), Some(m)) = (unit, path.get(o.as_str())) {
                    atol_floor.insert(o.clone(), PATH_ROUNDINGS * u * m);
                }
            }
        }
        Precision {
            atol_floor,
            ..self.clone()
        }
    }

    /// The tolerance of value `name`.
    pub fn for_value(&self, name: &str) -> Tolerance {
        if self.int_slack.contains(name) {
            return Tolerance::INTEGER_ROUNDING;
        }
        let mut t = match self.narrowest.get(name) {
            Some(&d) => self.base.for_dtype(d),
            None => self.base,
        };
        if let Some((_, Arithmetic::Tf32MatrixUnits)) = self.arithmetic.get(name) {
            let tf32 = self.base.for_dtype(DType::F16);
            if tf32.rtol > t.rtol {
                t = Tolerance {
                    name: "tf32-matrix-units",
                    ..tf32
                };
            }
        }
        if let Some(&step) = self.dequantized_step.get(name)
            && step > t.atol
        {
            t = Tolerance {
                name: "one-quantization-step",
                atol: step,
                ..t
            };
        }
        match self.atol_floor.get(name) {
            Some(&floor) if floor > t.atol => Tolerance {
                name: "half-precision-path",
                atol: floor,
                ..t
            },
            _ => t,
        }
    }

    /// The arithmetic modes that apply to some value of the model, in the order given to
    /// [`Precision::for_arithmetic`] (empty: IEEE arithmetic in the model's types throughout).
    pub fn arithmetic_applied(&self) -> &[Arithmetic] {
        &self.applied
    }

    /// The narrowest float type on the path to `name`, if any.
    pub fn narrowest(&self, name: &str) -> Option<DType> {
        self.narrowest.get(name).copied()
    }
}

/// Compares `got` against the envelope of `want` (f64 reference) and `native`, output by
/// output, each with its own tolerance: `Ok(metrics)` when every output is inside, else the
/// symptom (`values`, `shape`, `dtype`, `missing-output`), a message and the metrics. As in
/// [`crate::checks::agree`], outputs whose only fault is a NaN/Inf of `got`'s own are left to
/// the NaN check ([`new_nonfinite`]).
pub fn inside(
    want: &NamedValues,
    native: Option<&NamedValues>,
    got: &NamedValues,
    precision: &Precision,
) -> Result<Metrics, (String, String, Metrics)> {
    compare_outputs(want, got, |name, w, h| {
        let n = native.and_then(|nv| nv.iter().find(|(k, _)| k == name).map(|(_, v)| v));
        let opts = CompareOptions {
            tolerance: precision.for_value(name),
            check_dtype: false,
        };
        (compare_envelope(w, n, h, opts), new_nonfinite_in(w, n, h))
    })
}

/// NaN / Inf elements of `got` where both the f64 reference and the native one are finite.
fn new_nonfinite_in(
    want: &mutagraph_backends::value::Value,
    native: Option<&mutagraph_backends::value::Value>,
    got: &mutagraph_backends::value::Value,
) -> usize {
    match native {
        None => count_new_nonfinite(want, got),
        Some(n) => {
            let (w, nn, h) = (want.tensors(), n.tensors(), got.tensors());
            if w.len() != h.len() || w.len() != nn.len() {
                return count_new_nonfinite(want, got);
            }
            w.iter()
                .zip(&nn)
                .zip(&h)
                .map(|((a, b), c)| {
                    if a.shape != c.shape || a.shape != b.shape {
                        return 0;
                    }
                    match (a.to_f64s(), b.to_f64s(), c.to_f64s()) {
                        (Some(x), Some(y), Some(z)) => x
                            .iter()
                            .zip(&y)
                            .zip(&z)
                            .filter(|((p, q), r)| p.is_finite() && q.is_finite() && !r.is_finite())
                            .count(),
                        _ => 0,
                    }
                })
                .sum()
        }
    }
}

/// Counts the elements `got` made NaN / Inf where both references are finite (the NaN
/// oracle's question asked of the envelope), the elements of the affected outputs, and the
/// first such output.
pub fn new_nonfinite(
    want: &NamedValues,
    native: Option<&NamedValues>,
    got: &NamedValues,
) -> (usize, usize, Option<String>) {
    let mut n = 0;
    let mut total = 0;
    let mut first = None;
    for (name, w) in want {
        let Some((_, h)) = got.iter().find(|(g, _)| g == name) else {
            continue;
        };
        let nv = native.and_then(|nv| nv.iter().find(|(k, _)| k == name).map(|(_, v)| v));
        let c = new_nonfinite_in(w, nv, h);
        if c > 0 {
            first.get_or_insert_with(|| name.clone());
            total += h.tensors().iter().map(|t| t.num_elements()).sum::<usize>();
        }
        n += c;
    }
    (n, total, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(text: &str) -> Model {
        let mut m = mutagraph_ir::text::parse_model(text).unwrap();
        mutagraph_ir::infer::infer_model(&mut m, Default::default());
        m
    }

    #[test]
    fn a_backends_arithmetic_widens_only_the_values_it_computes() {
        let m = model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2,2] a, float[2,2] b) => (float[2,2] y, float[2,2] z) {\n\
               p = MatMul (a, b)\n\
               y = Relu (p)\n\
               z = Sub (a, b)\n\
             }",
        );
        let plain = Precision::of(&m, Tolerance::CLOSE);
        // A CPU backend: IEEE arithmetic in the model's types.
        assert_eq!(plain.for_value("y"), Tolerance::CLOSE);
        assert!(plain.arithmetic_applied().is_empty());
        // TF32 matrix units round the MatMul's operands like float16: its result and what is
        // computed from it carry float16's tolerance; the Sub beside it does not.
        let gpu = plain.for_arithmetic(
            &m,
            &[Arithmetic::Tf32MatrixUnits, Arithmetic::FusedMultiplyAdd],
        );
        let tf32 = gpu.for_value("y");
        assert_eq!(tf32.name, "tf32-matrix-units");
        assert_eq!(tf32.rtol, Tolerance::CLOSE.for_dtype(DType::F16).rtol);
        assert_eq!(gpu.for_value("p").name, "tf32-matrix-units");
        assert_eq!(gpu.for_value("z"), Tolerance::CLOSE);
        assert_eq!(
            gpu.arithmetic_applied(),
            &[Arithmetic::Tf32MatrixUnits, Arithmetic::FusedMultiplyAdd]
        );
        // Fused multiply-adds round once less anywhere: at the scale of the largest value on
        // the path (a difference of two large values), not of the result.
        let fma = plain.for_arithmetic(&m, &[Arithmetic::FusedMultiplyAdd]);
        assert_eq!(fma.for_value("z"), Tolerance::CLOSE);
        let big = |name: &str, v: f64| {
            let t =
                mutagraph_backends::value::HostTensor::from_f64s(DType::F32, vec![2, 2], &[v; 4]);
            (
                name.to_string(),
                mutagraph_backends::value::Value::Tensor(t.unwrap()),
            )
        };
        let seen: NamedValues = vec![
            big("a", 3.0e4),
            big("b", 3.0e4),
            big("p", 1.8e9),
            big("y", 1.8e9),
            big("z", 0.0),
        ]
        .into_iter()
        .collect();
        let floor = fma.conditioned(&m, &seen).for_value("z").atol;
        assert!(
            (floor - PATH_ROUNDINGS * 2f64.powi(-24) * 3.0e4).abs() < 1e-9,
            "{floor}"
        );
        assert_eq!(
            plain.conditioned(&m, &seen).for_value("z"),
            Tolerance::CLOSE
        );
        // A GPU backend's catalog row says which arithmetic it computes in.
        let cuda = mutagraph_backends::catalog::info("burn-cuda")
            .unwrap()
            .arithmetic;
        assert!(cuda.contains(&Arithmetic::Tf32MatrixUnits), "{cuda:?}");
        let wgpu = mutagraph_backends::catalog::info("burn-wgpu")
            .unwrap()
            .arithmetic;
        assert!(!wgpu.contains(&Arithmetic::Tf32MatrixUnits), "{wgpu:?}");
        assert!(
            mutagraph_backends::catalog::info("ort")
                .unwrap()
                .arithmetic
                .is_empty()
        );
    }

    #[test]
    fn the_tolerance_follows_the_narrowest_float_on_the_path() {
        let m = model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[4] x) => (float[4] y, float[4] z) {\n\
               h = Cast <to: int = 10> (x)\n\
               y = Cast <to: int = 1> (h)\n\
               z = Relu (x)\n\
             }",
        );
        let p = Precision::of(&m, Tolerance::CLOSE);
        // y went through f16: it carries f16 rounding whatever its own type.
        assert_eq!(p.narrowest("y"), Some(DType::F16));
        assert_eq!(p.for_value("y"), Tolerance::CLOSE.for_dtype(DType::F16));
        assert_eq!(p.for_value("z"), Tolerance::CLOSE);
        // LayerNormalization with f16 statistics narrows its f32 output too.
        let m = model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2, 4] x, float[4] s) => (float[2, 4] y) {\n\
               y = LayerNormalization <stash_type: int = 10> (x, s)\n\
             }",
        );
        assert_eq!(
            Precision::of(&m, Tolerance::CLOSE).narrowest("y"),
            Some(DType::F16)
        );
    }

    #[test]
    fn integer_results_of_an_interpolation_allow_one_unit() {
        let m = model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (int8[1, 4] x) => (int8[1, 8] y, int8[1, 8] z) {\n\
               s = Constant <value = int64[2] {1, 8}> ()\n\
               y = Resize <mode: string = \"linear\"> (x, \"\", \"\", s)\n\
               z = Neg (y)\n\
             }",
        );
        let p = Precision::of(&m, Tolerance::APPROXIMATE);
        assert_eq!(p.for_value("y"), Tolerance::INTEGER_ROUNDING);
        assert_eq!(p.for_value("z"), Tolerance::INTEGER_ROUNDING);
    }

    #[test]
    fn requantized_results_allow_one_unit() {
        let m = model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (uint8[2, 3] a, uint8[3, 2] b) => (uint8[2, 2] y, int32[2, 2] z) {\n\
               s = Constant <value = float {0.05}> ()\n\
               zp = Constant <value = uint8 {3}> ()\n\
               y = QLinearMatMul (a, s, zp, b, s, zp, s, zp)\n\
               z = MatMulInteger (a, b)\n\
             }",
        );
        let p = Precision::of(&m, Tolerance::APPROXIMATE);
        assert_eq!(p.for_value("y"), Tolerance::INTEGER_ROUNDING);
        // Integer arithmetic without a float scale is exact.
        assert_ne!(p.for_value("z"), Tolerance::INTEGER_ROUNDING);
    }

    #[test]
    fn a_requantized_result_dequantized_allows_one_step() {
        // QLinearMatMul's result may be one unit off (its combined scale's rounding is open);
        // dequantized, that unit is one scale step of the float result, and no more.
        let m = model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (uint8[2, 3] a, uint8[3, 2] b) => (float[2, 2] y, float[2, 2] z) {\n\
               s = Constant <value = float {0.05}> ()\n\
               zp = Constant <value = uint8 {3}> ()\n\
               q = QLinearMatMul (a, s, zp, b, s, zp, s, zp)\n\
               y = DequantizeLinear (q, s, zp)\n\
               z = DequantizeLinear (a, s, zp)\n\
             }",
        );
        let p = Precision::of(&m, Tolerance::APPROXIMATE);
        let y = p.for_value("y");
        assert_eq!(y.name, "one-quantization-step");
        assert!((y.atol - 0.05).abs() < 1e-6, "{y:?}");
        // An exact integer input dequantizes exactly.
        assert_eq!(p.for_value("z"), Tolerance::APPROXIMATE);
    }

    #[test]
    fn contrib_requantized_results_allow_one_unit() {
        // ONNX Runtime's QLinearAdd rounds its f32 scale ratios (seen off by one from the
        // exact formula on 2 of 6 elements of a recipe's model).
        let m = model(
            "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (uint8[2, 3] a) => (uint8[2, 3] y) {\n\
               s = Constant <value = float {0.05}> ()\n\
               zp = Constant <value = uint8 {3}> ()\n\
               y = com.microsoft.QLinearAdd (a, s, zp, a, s, zp, s, zp)\n\
             }",
        );
        let p = Precision::of(&m, Tolerance::APPROXIMATE);
        assert_eq!(p.for_value("y"), Tolerance::INTEGER_ROUNDING);
    }

    /// Runs `text` (one input `x`: `xs`) on the f64 and the native reference.
    fn both_references(text: &str, xs: &[f32]) -> (NamedValues, NamedValues, Model) {
        use mutagraph_backends::backend::Backend;
        use mutagraph_backends::reference::Reference;
        use mutagraph_backends::value::{Data, HostTensor, Value};
        let m = model(text);
        let bytes = m.to_bytes();
        let inputs = vec![(
            "x".to_string(),
            Value::Tensor(HostTensor::new(vec![1, xs.len()], Data::F32(xs.to_vec()))),
        )];
        let run = |mut r: Reference| r.prepare(&bytes).unwrap().run(&inputs).unwrap();
        (run(Reference::new()), run(Reference::new_native()), m)
    }

    fn u8s(name: &str, v: &[u8]) -> NamedValues {
        use mutagraph_backends::value::{Data, HostTensor, Value};
        vec![(
            name.to_string(),
            Value::Tensor(HostTensor::new(vec![1, v.len()], Data::U8(v.to_vec()))),
        )]
        .into_iter()
        .collect()
    }

    #[test]
    fn a_quantization_quotient_at_an_f32_tie_may_round_either_way() {
        // Round 12: x / scale is -11.5 in f32 (ONNX Runtime and onnx.reference round the
        // quotient, half to even: -12 + 128 = 116) and -11.4999997 exactly (tract multiplies
        // by the reciprocal: 117). ONNX does not fix the quotient's precision.
        let text = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[1,3] x) => (uint8[1,3] y) {\n\
               s = Constant <value = float {0.02}> ()\n\
               zp = Constant <value = uint8 {128}> ()\n\
               y = QuantizeLinear (x, s, zp)\n\
             }";
        let (want, native, m) = both_references(text, &[-0.2, -0.229_999_99, 0.05]);
        let p = Precision::of(&m, Tolerance::APPROXIMATE);
        for got in [[118, 116, 130], [118, 117, 130]] {
            let r = inside(&want, Some(&native), &u8s("y", &got), &p);
            assert!(r.is_ok(), "{got:?}: {r:?}");
        }
        // Two units off at the tie, or one unit anywhere else, is outside.
        for got in [[118, 115, 130], [119, 116, 130]] {
            assert!(inside(&want, Some(&native), &u8s("y", &got), &p).is_err());
        }
        // An exact tie (1.25 / 0.5 = 2.5 in every precision) rounds half to even: a library
        // rounding it away from zero is wrong, and the envelope says so.
        let text = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[1,2] x) => (uint8[1,2] y) {\n\
               s = Constant <value = float {0.5}> ()\n\
               zp = Constant <value = uint8 {0}> ()\n\
               y = QuantizeLinear (x, s, zp)\n\
             }";
        let (want, native, m) = both_references(text, &[1.25, 1.75]);
        let p = Precision::of(&m, Tolerance::APPROXIMATE);
        assert!(inside(&want, Some(&native), &u8s("y", &[2, 4]), &p).is_ok());
        assert!(inside(&want, Some(&native), &u8s("y", &[3, 4]), &p).is_err());
        // Round 13: 1.9499999 / 0.1 is 19.499999 exactly and 19.499998 in f32 (both round to
        // 19); tract's product with the f32 reciprocal (10.0) is 19.5 in f32, and 20. Within a
        // few ulps of a tie either side is a correct rounding; one unit beyond is not.
        let text = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[1,2] x) => (uint8[1,2] y) {\n\
               s = Constant <value = float {0.1}> ()\n\
               zp = Constant <value = uint8 {0}> ()\n\
               y = QuantizeLinear (x, s, zp)\n\
             }";
        let (want, native, m) = both_references(text, &[1.949_999_9, 0.7]);
        let p = Precision::of(&m, Tolerance::APPROXIMATE);
        for got in [[19, 7], [20, 7]] {
            let r = inside(&want, Some(&native), &u8s("y", &got), &p);
            assert!(r.is_ok(), "{got:?}: {r:?}");
        }
        for got in [[21, 7], [18, 7], [19, 8]] {
            assert!(
                inside(&want, Some(&native), &u8s("y", &got), &p).is_err(),
                "{got:?}"
            );
        }
    }
}
