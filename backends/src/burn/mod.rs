//! An interpreter of the IR over burn's tensor API, generic over burn's `Backend`.
//!
//! Every ONNX tensor is held as a burn tensor of one fixed rank ([`tensor::R`]) whose shape is
//! the ONNX shape padded on the left with ones, so that ONNX (numpy) broadcasting maps onto
//! burn's same-rank broadcasting; the ONNX shape and element type travel with it. Ops that burn
//! only offers at a given rank (convolution, pooling) reshape to that rank and back.
//!
//! Element types: f32/f64/f16/bf16 are computed in the backend's float type and each op's
//! result is rounded to its declared type (NdArray computes in f64 when the model holds any
//! f64 value, as a burn user would pick `NdArray<f64>` for it, else in f32; wgpu and CUDA in
//! f32); i8..i64 and u8..u32 in its int type (i64 on
//! NdArray); bool as burn bools. Everything else is refused as unsupported.
use crate::backend::{Backend, BackendError, Capabilities, Prepared, Stage};
use crate::value::{HostTensor, NamedValues, Value};
use burn::tensor::backend::Backend as BB;
use mutagraph_ir::attr::{AttrLookup, AttrValue, Attribute};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::{Graph, Node};
use mutagraph_ir::model::Model;
use mutagraph_ir::types::ValueType;
use std::collections::HashMap;

mod control;
mod ops;
pub mod repro;
mod rnn;
mod tensor;

use tensor::{Item, Val, class};

/// burn's version, as pinned in Cargo.toml.
pub const BURN_VERSION: &str = "0.21.0";

/// The ops the interpreter implements (default domain): those of `control` (control flow,
/// sequences, optionals, Identity) and those of `ops` (every other op), each listed once where
/// it is implemented.
pub static OPS: std::sync::LazyLock<Vec<&'static str>> =
    std::sync::LazyLock::new(|| [control::OPS, ops::OPS.as_slice()].concat());

/// The model, checked and ready to run on any burn backend.
struct Plan {
    opset: i64,
    /// The main graph; its inputs are the model's real inputs.
    main: Body<HostTensor>,
    /// The model's real inputs with their declared element types (tensors).
    inputs: Vec<(String, Option<DType>)>,
    /// Whether any input, weight or node output is f64 (in any graph of the model).
    holds_f64: bool,
}

/// A graph ready to run: its nodes in topological order (each with its subgraphs made ready
/// the same way), its weights (`W`: host tensors once planned, burn tensors once uploaded),
/// the names of its inputs (a subgraph's are bound by position) and of its outputs. Values a
/// subgraph captures from enclosing graphs are looked up in their scopes when it runs.
pub(crate) struct Body<W> {
    pub steps: Vec<Step<W>>,
    pub inits: Vec<(String, W)>,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

/// One node of a [`Body`] and its subgraphs, by attribute name.
pub(crate) struct Step<W> {
    pub node: Node,
    pub subs: Vec<(String, Body<W>)>,
}

impl<W> Step<W> {
    /// The subgraph of attribute `name`.
    pub fn sub(&self, name: &str) -> Result<&Body<W>, BackendError> {
        self.subs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b)
            .ok_or_else(|| {
                BackendError::failed(
                    Stage::Run,
                    format!("{} without attribute {name}", self.node.op_type),
                )
            })
    }
}

impl Body<HostTensor> {
    /// The same graph with its weights (and its subgraphs') uploaded to `dev`.
    fn upload<B: BB>(&self, dev: &B::Device) -> Result<Body<Val<B>>, BackendError> {
        let mut inits = Vec::with_capacity(self.inits.len());
        for (name, h) in &self.inits {
            let v = tensor::upload::<B>(h, dev).map_err(|mut e| {
                e.stage = Stage::Compile;
                e
            })?;
            inits.push((name.clone(), v));
        }
        let mut steps = Vec::with_capacity(self.steps.len());
        for s in &self.steps {
            let mut subs = Vec::with_capacity(s.subs.len());
            for (name, b) in &s.subs {
                subs.push((name.clone(), b.upload::<B>(dev)?));
            }
            steps.push(Step {
                node: s.node.clone(),
                subs,
            });
        }
        Ok(Body {
            steps,
            inits,
            inputs: self.inputs.clone(),
            outputs: self.outputs.clone(),
        })
    }
}

type Make = fn(Plan) -> Result<Box<dyn Prepared>, BackendError>;

/// The burn interpreter on one burn backend.
pub struct BurnBackend {
    name: &'static str,
    make: Make,
}

impl Backend for BurnBackend {
    fn name(&self) -> &str {
        self.name
    }
    fn version(&self) -> String {
        BURN_VERSION.into()
    }
    fn capabilities(&mut self) -> Capabilities {
        Capabilities::from_ops(self.name, BURN_VERSION, &OPS, tensor::DTYPES)
    }
    fn prepare(&mut self, model: &[u8]) -> Result<Box<dyn Prepared>, BackendError> {
        let plan = plan(model)?;
        (self.make)(plan)
    }
}

fn compile_unsup(msg: impl Into<String>) -> BackendError {
    BackendError::unsupported(Stage::Compile, msg)
}

fn compile_err(msg: impl Into<String>) -> BackendError {
    BackendError::failed(Stage::Compile, msg)
}

/// Refuses a declared type the interpreter cannot hold: a tensor of an element type or rank it
/// does not handle, or a value that is neither a tensor, a sequence nor an optional.
fn check_type(what: &str, ty: &ValueType) -> Result<(), BackendError> {
    match ty {
        ValueType::Tensor(t) => {
            if class(t.dtype).is_none() {
                return Err(compile_unsup(format!("{what}: element type {}", t.dtype)));
            }
            if let Some(s) = &t.shape
                && s.len() > tensor::R
            {
                return Err(compile_unsup(format!(
                    "{what}: rank {} above {}",
                    s.len(),
                    tensor::R
                )));
            }
            Ok(())
        }
        ValueType::Sequence(inner) | ValueType::Optional(inner) => check_type(what, inner),
        ValueType::Unknown => Ok(()),
        other => Err(compile_unsup(format!("{what}: type {other:?}"))),
    }
}

fn declared(vi: &mutagraph_ir::pb::ValueInfoProto) -> ValueType {
    vi.r#type
        .as_ref()
        .map(ValueType::from_proto)
        .unwrap_or(ValueType::Unknown)
}

/// Checks graph `g` (the main graph when `main`) and its subgraphs, in topological order.
fn plan_body(g: &Graph, opset: i64, main: bool) -> Result<Body<HostTensor>, BackendError> {
    let inputs: Vec<&mutagraph_ir::pb::ValueInfoProto> = if main {
        g.real_inputs()
    } else {
        g.inputs.iter().collect()
    };
    for vi in inputs.iter().copied().chain(g.outputs.iter()) {
        check_type(vi.name.as_deref().unwrap_or(""), &declared(vi))?;
    }
    let mut inits = Vec::new();
    for (name, t) in &g.initializers {
        let h = HostTensor::from_proto(t).map_err(|e| compile_err(format!("{name}: {e}")))?;
        if class(h.dtype).is_none() {
            return Err(compile_unsup(format!(
                "initializer {name}: element type {}",
                h.dtype
            )));
        }
        inits.push((name.clone(), h));
    }
    let order = g.topo_order().map_err(|e| compile_err(e.to_string()))?;
    let mut steps = Vec::new();
    for id in order {
        let n = g.node(id).ok_or_else(|| compile_err("dangling node id"))?;
        check_node(n, opset)?;
        let mut subs = Vec::new();
        for (name, sub) in n.subgraphs() {
            subs.push((name.to_string(), plan_body(sub, opset, false)?));
        }
        steps.push(Step {
            node: n.clone(),
            subs,
        });
    }
    let names = |v: &[&mutagraph_ir::pb::ValueInfoProto]| -> Vec<String> {
        v.iter()
            .map(|vi| vi.name.clone().unwrap_or_default())
            .collect()
    };
    Ok(Body {
        steps,
        inits,
        inputs: names(&inputs),
        outputs: names(&g.outputs.iter().collect::<Vec<_>>()),
    })
}

/// Whether graph `g` or one of its subgraphs holds an f64 value: a weight, an input, a node
/// output, or a Cast / Constant / ConstantOfShape making one.
fn holds_f64(g: &Graph, main: bool) -> bool {
    let f64_value =
        |name: &str| matches!(g.value_type(name), ValueType::Tensor(t) if t.dtype == DType::F64);
    let inputs = if main {
        g.real_inputs()
    } else {
        g.inputs.iter().collect()
    };
    g.initializers
        .values()
        .any(|t| t.data_type == Some(DType::F64.code()))
        || inputs
            .iter()
            .any(|v| v.name.as_deref().is_some_and(f64_value))
        || g.nodes().any(|n| {
            n.outputs.iter().any(|o| f64_value(o))
                || (matches!(n.op_type.as_str(), "Cast" | "Constant" | "ConstantOfShape")
                    && n.attributes.iter().any(|a| match &a.value {
                        AttrValue::Int(t) => a.name == "to" && *t == DType::F64.code() as i64,
                        AttrValue::Tensor(t) => t.data_type == Some(DType::F64.code()),
                        _ => false,
                    }))
                || n.subgraphs().any(|(_, sub)| holds_f64(sub, false))
        })
}

fn plan(bytes: &[u8]) -> Result<Plan, BackendError> {
    let model =
        Model::from_bytes(bytes).map_err(|e| BackendError::failed(Stage::Load, e.to_string()))?;
    let opset = model.default_opset();
    let g = &model.graph;
    let main = plan_body(g, opset, true)?;
    Ok(Plan {
        holds_f64: holds_f64(g, true),
        opset,
        main,
        inputs: g
            .real_inputs()
            .iter()
            .map(|v| {
                (
                    v.name.clone().unwrap_or_default(),
                    declared(v).tensor().map(|t| t.dtype),
                )
            })
            .collect(),
    })
}

/// Refuses, at prepare time, what the interpreter does not implement.
fn check_node(n: &Node, opset: i64) -> Result<(), BackendError> {
    let d = n.domain();
    if !(d.is_empty() || d == "ai.onnx") {
        return Err(compile_unsup(format!("op {d}::{}", n.op_type)));
    }
    let op = n.op_type.as_str();
    if !OPS.contains(&op) {
        return Err(compile_unsup(format!("op {op}")));
    }
    let a = &n.attributes;
    let unsup = |m: String| Err(compile_unsup(format!("{op}: {m}")));
    match op {
        "Cast" => {
            let to = DType::from_code(a.int("to", 0) as i32);
            if class(to).is_none() {
                return unsup(format!("to {to}"));
            }
            if a.int("saturate", 1) != 1 {
                return unsup("saturate = 0".into());
            }
        }
        "Constant" => {
            constant_value(a).map_err(|e| compile_unsup(format!("Constant: {}", e.message)))?;
        }
        "If" | "Loop" | "Scan" => {
            let graphs: &[&str] = if op == "If" {
                &["then_branch", "else_branch"]
            } else {
                &["body"]
            };
            for g in graphs {
                if a.graph(g).is_none() {
                    return Err(compile_err(format!("{op} without attribute {g}")));
                }
            }
        }
        "RNN" | "GRU" | "LSTM" => {
            // what ONNX does not define or burn cannot compute, refused before running
            crate::semantics::rnn::Spec::parse(n).map_err(|mut e| {
                e.stage = Stage::Compile;
                e.message = format!("{op}: {}", e.message);
                e
            })?;
        }
        "ConstantOfShape" => {
            if let Some(t) = a.tensor("value") {
                let h = HostTensor::from_proto(t).map_err(|e| compile_err(e.to_string()))?;
                if class(h.dtype).is_none() {
                    return unsup(format!("value of type {}", h.dtype));
                }
            }
        }
        "EyeLike" => {
            if let Some(c) = a.int_opt("dtype")
                && class(DType::from_code(c as i32)).is_none()
            {
                return unsup(format!("dtype {c}"));
            }
        }
        "MaxPool" | "AveragePool" => {
            if n.outputs.len() > 1 && !n.outputs[1].is_empty() {
                return unsup("the Indices output".into());
            }
            let k = a.ints("kernel_shape").map(|k| k.len()).unwrap_or(0);
            if !(1..=2).contains(&k) {
                return unsup(format!("{k} spatial dims (burn pools 1-D and 2-D only)"));
            }
            if op == "AveragePool"
                && a.ints("dilations")
                    .is_some_and(|d| d.iter().any(|&x| x != 1))
            {
                return unsup("dilations (burn's avg_pool has none)".into());
            }
        }
        "BatchNormalization" => {
            if a.int("training_mode", 0) != 0 || n.outputs.iter().skip(1).any(|o| !o.is_empty()) {
                return unsup("training mode".into());
            }
            if opset < 7 && a.int("is_test", 0) == 0 && n.outputs.len() > 1 {
                return unsup("training mode".into());
            }
        }
        "Pad" => {
            let m = a.string("mode", "constant");
            if !matches!(m.as_str(), "constant" | "reflect" | "edge") {
                return unsup(format!("mode {m}"));
            }
        }
        "GatherND" if a.int("batch_dims", 0) != 0 => {
            return unsup("batch_dims".into());
        }
        "ScatterElements" => {
            let r = a.string("reduction", "none");
            if r != "none" && r != "add" {
                return unsup(format!("reduction {r}"));
            }
        }
        "TopK" if a.int("sorted", 1) == 0 => {
            return unsup("sorted = 0".into());
        }
        "Gelu" => {
            let m = a.string("approximate", "none");
            if m != "none" && m != "tanh" {
                return unsup(format!("approximate = {m}"));
            }
        }
        "LpNormalization" => {
            let p = a.int("p", 2);
            if p != 1 && p != 2 {
                return unsup(format!("p = {p}"));
            }
        }
        "Resize" => {
            if a.int("antialias", 0) != 0 {
                return unsup("antialias".into());
            }
            let ctm = a.string("coordinate_transformation_mode", "half_pixel");
            if ctm == "tf_crop_and_resize" {
                return unsup(format!("coordinate_transformation_mode {ctm}"));
            }
            let kp = a.string("keep_aspect_ratio_policy", "stretch");
            if kp != "stretch" {
                return unsup(format!("keep_aspect_ratio_policy {kp}"));
            }
            let m = a.string("mode", "nearest");
            if !matches!(m.as_str(), "nearest" | "linear" | "cubic") {
                return unsup(format!("mode {m}"));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The value of a Constant node.
pub(crate) fn constant_value(a: &[Attribute]) -> Result<HostTensor, BackendError> {
    let bad = |m: String| BackendError::unsupported(Stage::Run, m);
    if let Some(t) = a.tensor("value") {
        let h = HostTensor::from_proto(t).map_err(|e| bad(e.to_string()))?;
        if class(h.dtype).is_none() {
            return Err(bad(format!("value of type {}", h.dtype)));
        }
        return Ok(h);
    }
    for at in a {
        let h = match (at.name.as_str(), &at.value) {
            ("value_float", AttrValue::Float(f)) => {
                HostTensor::new(vec![], crate::value::Data::F32(vec![*f]))
            }
            ("value_floats", AttrValue::Floats(f)) => {
                HostTensor::new(vec![f.len()], crate::value::Data::F32(f.clone()))
            }
            ("value_int", AttrValue::Int(i)) => {
                HostTensor::new(vec![], crate::value::Data::I64(vec![*i]))
            }
            ("value_ints", AttrValue::Ints(i)) => {
                HostTensor::new(vec![i.len()], crate::value::Data::I64(i.clone()))
            }
            _ => continue,
        };
        return Ok(h);
    }
    Err(bad(
        "a Constant without a numeric value (strings and sparse values are refused)".into(),
    ))
}

/// The prepared model on burn backend `B`.
struct BurnPrepared<B: BB> {
    opset: i64,
    inputs: Vec<(String, Option<DType>)>,
    main: Body<Val<B>>,
    device: B::Device,
}

fn make<B: BB>(plan: Plan) -> Result<Box<dyn Prepared>, BackendError> {
    let device = B::Device::default();
    // burn keeps one set of default dtypes per device and process, fixed by the first tensor
    // made on it: after a model ran on NdArray<f32>, NdArray<f64> would make f32 tensors (and
    // cosh(100) would be +inf). Such a model is run again in a fresh worker.
    let float = burn::tensor::get_device_settings::<B>(&device).float_dtype;
    let wanted = <B::FloatElem as burn::tensor::Element>::dtype();
    if burn::tensor::DType::from(float) != wanted {
        return Err(BackendError::fresh_process(
            Stage::Compile,
            format!(
                "this process made its first burn tensors in {float:?}; a model computed in \
                 {wanted:?} needs a fresh process"
            ),
        ));
    }
    let main = plan.main.upload::<B>(&device)?;
    Ok(Box::new(BurnPrepared::<B> {
        opset: plan.opset,
        inputs: plan.inputs,
        main,
        device,
    }))
}

impl<B: BB> Prepared for BurnPrepared<B> {
    fn run(&mut self, inputs: &NamedValues) -> Result<NamedValues, BackendError> {
        run_graph::<B>(self, inputs)
    }
}

/// Runs the model on burn backend `B`.
fn run_graph<B: BB>(
    prep: &BurnPrepared<B>,
    inputs: &NamedValues,
) -> Result<NamedValues, BackendError> {
    let dev = &prep.device;
    let mut bound = Vec::with_capacity(prep.inputs.len());
    for (name, declared) in &prep.inputs {
        let v = inputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| BackendError::failed(Stage::Run, format!("input '{name}' not given")))?;
        if let (Some(d), Value::Tensor(h)) = (declared, v)
            && *d != h.dtype
        {
            return Err(BackendError::failed(
                Stage::Run,
                format!("input '{name}' is {}, the model declares {d}", h.dtype),
            ));
        }
        bound.push((name.clone(), tensor::upload_value::<B>(v, dev)?));
    }
    let cx = ops::Cx::<B> {
        dev,
        opset: prep.opset,
    };
    let outs = eval(&prep.main, &cx, None, bound)?;
    let mut out = Vec::with_capacity(outs.len());
    for (name, v) in prep.main.outputs.iter().zip(&outs) {
        out.push((name.clone(), tensor::download_value(v)?));
    }
    Ok(out)
}

/// Values by name, with the enclosing graph's scope as parent (a subgraph reads the values of
/// the graphs around it).
pub(crate) struct Scope<'a, B: BB> {
    vars: HashMap<String, Item<B>>,
    parent: Option<&'a Scope<'a, B>>,
}

impl<B: BB> Scope<'_, B> {
    fn get(&self, name: &str) -> Option<&Item<B>> {
        match self.vars.get(name) {
            Some(v) => Some(v),
            None => self.parent.and_then(|p| p.get(name)),
        }
    }
}

/// Runs `body` with its inputs bound to `inputs` (by name) inside scope `parent`; returns its
/// outputs in order.
pub(crate) fn eval<B: BB>(
    body: &Body<Val<B>>,
    cx: &ops::Cx<B>,
    parent: Option<&Scope<B>>,
    inputs: Vec<(String, Item<B>)>,
) -> Result<Vec<Item<B>>, BackendError> {
    let mut scope = Scope {
        vars: HashMap::new(),
        parent,
    };
    for (name, v) in &body.inits {
        scope.vars.insert(name.clone(), Item::T(v.clone()));
    }
    for (name, v) in inputs {
        scope.vars.insert(name, v);
    }
    for step in &body.steps {
        let node = &step.node;
        let mut ins = Vec::with_capacity(node.inputs.len());
        for i in &node.inputs {
            if i.is_empty() {
                ins.push(None);
            } else {
                let v = scope.get(i).ok_or_else(|| {
                    BackendError::failed(
                        Stage::Run,
                        format!("{}: value '{i}' is not defined", node.label()),
                    )
                })?;
                ins.push(Some(v.clone()));
            }
        }
        let label = |mut e: BackendError| {
            e.message = format!("{}: {}", node.label(), e.message);
            e
        };
        let outs: Vec<Option<Item<B>>> = if control::OPS.contains(&node.op_type.as_str()) {
            control::exec(step, ins, cx, &scope).map_err(label)?
        } else {
            let mut vals = Vec::with_capacity(ins.len());
            for (k, v) in ins.into_iter().enumerate() {
                vals.push(match v {
                    Some(v) => Some(
                        v.into_tensor(&format!("input '{}'", node.inputs[k]))
                            .map_err(label)?,
                    ),
                    None => None,
                });
            }
            ops::exec(node, &vals, cx)
                .map_err(label)?
                .into_iter()
                .map(|v| v.map(|v| Item::T(ops::wrap_narrow(v))))
                .collect()
        };
        let mut outs = outs.into_iter();
        for name in &node.outputs {
            match outs.next().flatten() {
                Some(v) if !name.is_empty() => {
                    scope.vars.insert(name.clone(), v);
                }
                None if !name.is_empty() => {
                    return Err(BackendError::failed(
                        Stage::Run,
                        format!("{}: output '{name}' was not produced", node.label()),
                    ));
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::with_capacity(body.outputs.len());
    for name in &body.outputs {
        let v = scope.get(name).ok_or_else(|| {
            BackendError::failed(Stage::Run, format!("output '{name}' is not computed"))
        })?;
        out.push(v.clone());
    }
    Ok(out)
}

/// burn on NdArray.
pub fn ndarray() -> Box<dyn Backend> {
    Box::new(BurnBackend {
        name: "burn-ndarray",
        make: make_ndarray,
    })
}

/// NdArray in f64 for a model that holds f64 values (computing them in f32 would make every
/// overflow of f32's range a false finding), else in f32.
fn make_ndarray(plan: Plan) -> Result<Box<dyn Prepared>, BackendError> {
    if plan.holds_f64 {
        make::<burn::backend::NdArray<f64>>(plan)
    } else {
        make::<burn::backend::NdArray<f32>>(plan)
    }
}

/// burn on wgpu.
#[cfg(feature = "wgpu")]
pub fn wgpu() -> Result<Box<dyn Backend>, crate::catalog::CreateError> {
    let icd_dirs = ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"];
    let has_icd = icd_dirs
        .iter()
        .any(|d| std::fs::read_dir(d).is_ok_and(|mut r| r.next().is_some()));
    if cfg!(target_os = "linux") && !has_icd {
        return Err(crate::catalog::CreateError::Init {
            name: "burn-wgpu".into(),
            problem: "no Vulkan driver found (no ICD in /usr/share/vulkan/icd.d): install one, e.g. `apt-get install -y mesa-vulkan-drivers` for the lavapipe CPU driver".into(),
        });
    }
    Ok(Box::new(BurnBackend {
        name: "burn-wgpu",
        make: make::<burn::backend::Wgpu>,
    }))
}

/// burn on CUDA.
#[cfg(feature = "cuda")]
pub fn cuda() -> Result<Box<dyn Backend>, crate::catalog::CreateError> {
    if cfg!(target_os = "linux") && !std::path::Path::new("/proc/driver/nvidia/version").exists() {
        return Err(crate::catalog::CreateError::Init {
            name: "burn-cuda".into(),
            problem: "no NVIDIA driver loaded (/proc/driver/nvidia/version is missing): burn-cuda needs an NVIDIA GPU with its driver and the CUDA toolkit".into(),
        });
    }
    Ok(Box::new(BurnBackend {
        name: "burn-cuda",
        make: make::<burn::backend::Cuda>,
    }))
}

#[cfg(test)]
mod tests {
    /// Every op is listed once: by `control` or by `ops`, not by both.
    #[test]
    fn ops_listed_once() {
        let mut names = super::OPS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), super::OPS.len());
    }
}
