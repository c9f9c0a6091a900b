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
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;
use mutagraph_ir::types::ValueType;
use std::collections::HashMap;

mod nn;
mod ops;
pub mod repro;
mod tensor;

use tensor::{Val, class};

/// burn's version, as pinned in Cargo.toml.
pub const BURN_VERSION: &str = "0.21.0";

/// The ops the interpreter implements (default domain).
pub const OPS: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "Add",
    "And",
    "ArgMax",
    "ArgMin",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "AveragePool",
    "BatchNormalization",
    "BitShift",
    "BitwiseAnd",
    "BitwiseNot",
    "BitwiseOr",
    "BitwiseXor",
    "Cast",
    "CastLike",
    "Ceil",
    "Celu",
    "Clip",
    "Compress",
    "Concat",
    "Constant",
    "ConstantOfShape",
    "Conv",
    "ConvTranspose",
    "Cos",
    "Cosh",
    "CumSum",
    "DepthToSpace",
    "Div",
    "Dropout",
    "Elu",
    "Equal",
    "Erf",
    "Exp",
    "Expand",
    "EyeLike",
    "Flatten",
    "Floor",
    "Gather",
    "GatherElements",
    "GatherND",
    "Gelu",
    "Gemm",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Greater",
    "GreaterOrEqual",
    "HardSigmoid",
    "HardSwish",
    "Hardmax",
    "Identity",
    "InstanceNormalization",
    "IsInf",
    "IsNaN",
    "LayerNormalization",
    "LeakyRelu",
    "Less",
    "LessOrEqual",
    "Log",
    "LogSoftmax",
    "LpNormalization",
    "MatMul",
    "Max",
    "MaxPool",
    "Mean",
    "MeanVarianceNormalization",
    "Min",
    "Mish",
    "Mod",
    "Mul",
    "Neg",
    "NegativeLogLikelihoodLoss",
    "NonZero",
    "OneHot",
    "Not",
    "Or",
    "PRelu",
    "Pad",
    "Pow",
    "Range",
    "Reciprocal",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
    "Relu",
    "Reshape",
    "Resize",
    "Round",
    "ScatterElements",
    "ScatterND",
    "Selu",
    "Shape",
    "Shrink",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Size",
    "Slice",
    "Softmax",
    "SoftmaxCrossEntropyLoss",
    "Softplus",
    "Softsign",
    "SpaceToDepth",
    "Split",
    "Sqrt",
    "Squeeze",
    "Sub",
    "Sum",
    "Tan",
    "Tanh",
    "ThresholdedRelu",
    "Tile",
    "TopK",
    "Transpose",
    "Trilu",
    "Unsqueeze",
    "Where",
    "Xor",
];

/// The model, checked and ready to run on any burn backend.
struct Plan {
    opset: i64,
    nodes: Vec<Node>,
    inits: Vec<(String, HostTensor)>,
    inputs: Vec<(String, Option<DType>)>,
    outputs: Vec<String>,
    /// Whether any input, weight or node output is f64.
    holds_f64: bool,
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
        Capabilities::from_ops(self.name, BURN_VERSION, OPS, tensor::DTYPES)
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
        ValueType::Unknown => Ok(()),
        other => Err(compile_unsup(format!("{what}: non-tensor type {other:?}"))),
    }
}

fn plan(bytes: &[u8]) -> Result<Plan, BackendError> {
    let model =
        Model::from_bytes(bytes).map_err(|e| BackendError::failed(Stage::Load, e.to_string()))?;
    let opset = model.default_opset();
    let g = &model.graph;
    for vi in g.real_inputs().into_iter().chain(g.outputs.iter()) {
        let name = vi.name.clone().unwrap_or_default();
        let ty = vi
            .r#type
            .as_ref()
            .map(ValueType::from_proto)
            .unwrap_or(ValueType::Unknown);
        check_type(&name, &ty)?;
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
    let mut nodes = Vec::new();
    for id in order {
        let n = g.node(id).ok_or_else(|| compile_err("dangling node id"))?;
        check_node(n, opset)?;
        nodes.push(n.clone());
    }
    let f64_value =
        |name: &str| matches!(g.value_type(name), ValueType::Tensor(t) if t.dtype == DType::F64);
    let holds_f64 = inits.iter().any(|(_, h)| h.dtype == DType::F64)
        || g.real_inputs()
            .iter()
            .any(|v| v.name.as_deref().is_some_and(f64_value))
        || nodes.iter().any(|n| {
            n.outputs.iter().any(|o| f64_value(o))
                || (matches!(n.op_type.as_str(), "Cast" | "Constant" | "ConstantOfShape")
                    && n.attributes.iter().any(|a| match &a.value {
                        AttrValue::Int(t) => a.name == "to" && *t == DType::F64.code() as i64,
                        AttrValue::Tensor(t) => t.data_type == Some(DType::F64.code()),
                        _ => false,
                    }))
        });
    Ok(Plan {
        holds_f64,
        opset,
        nodes,
        inits,
        inputs: g
            .real_inputs()
            .iter()
            .map(|v| {
                let ty = v.r#type.as_ref().map(ValueType::from_proto);
                (
                    v.name.clone().unwrap_or_default(),
                    ty.and_then(|t| t.tensor().map(|t| t.dtype)),
                )
            })
            .collect(),
        outputs: g
            .outputs
            .iter()
            .map(|v| v.name.clone().unwrap_or_default())
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
    plan: Plan,
    device: B::Device,
    inits: Vec<(String, Val<B>)>,
}

fn make<B: BB>(plan: Plan) -> Result<Box<dyn Prepared>, BackendError> {
    let device = B::Device::default();
    let mut inits = Vec::new();
    for (name, h) in &plan.inits {
        let v = tensor::upload::<B>(h, &device).map_err(|mut e| {
            e.stage = Stage::Compile;
            e
        })?;
        inits.push((name.clone(), v));
    }
    Ok(Box::new(BurnPrepared::<B> {
        plan,
        device,
        inits,
    }))
}

impl<B: BB> Prepared for BurnPrepared<B> {
    fn run(&mut self, inputs: &NamedValues) -> Result<NamedValues, BackendError> {
        run_graph::<B>(&self.plan, &self.inits, &self.device, inputs)
    }
}

/// Runs the plan on burn backend `B`.
fn run_graph<B: BB>(
    plan: &Plan,
    inits: &[(String, Val<B>)],
    dev: &B::Device,
    inputs: &NamedValues,
) -> Result<NamedValues, BackendError> {
    let mut env: HashMap<String, Val<B>> = HashMap::new();
    for (name, v) in inits {
        env.insert(name.clone(), v.clone());
    }
    for (name, declared) in &plan.inputs {
        let v = inputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| BackendError::failed(Stage::Run, format!("input '{name}' not given")))?;
        let h = match v {
            Value::Tensor(t) => t,
            _ => {
                return Err(BackendError::unsupported(
                    Stage::Run,
                    format!("input '{name}' is not a tensor"),
                ));
            }
        };
        if let Some(d) = declared
            && *d != h.dtype
        {
            return Err(BackendError::failed(
                Stage::Run,
                format!("input '{name}' is {}, the model declares {d}", h.dtype),
            ));
        }
        env.insert(name.clone(), tensor::upload::<B>(h, dev)?);
    }
    let cx = ops::Cx::<B> {
        dev,
        opset: plan.opset,
    };
    for node in &plan.nodes {
        let mut ins = Vec::with_capacity(node.inputs.len());
        for i in &node.inputs {
            if i.is_empty() {
                ins.push(None);
            } else {
                let v = env.get(i).ok_or_else(|| {
                    BackendError::failed(
                        Stage::Run,
                        format!("{}: value '{i}' is not defined", node.label()),
                    )
                })?;
                ins.push(Some(v.clone()));
            }
        }
        let outs = ops::exec(node, &ins, &cx).map_err(|mut e| {
            e.message = format!("{}: {}", node.label(), e.message);
            e
        })?;
        for (name, v) in node.outputs.iter().zip(outs) {
            if let (false, Some(v)) = (name.is_empty(), v) {
                env.insert(name.clone(), ops::wrap_narrow(v));
            }
        }
    }
    let mut out = Vec::new();
    for name in &plan.outputs {
        let v = env.get(name).ok_or_else(|| {
            BackendError::failed(Stage::Run, format!("output '{name}' is not computed"))
        })?;
        out.push((name.clone(), Value::Tensor(tensor::download(v)?)));
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
