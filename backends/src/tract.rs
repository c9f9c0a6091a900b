//! tract (`tract-onnx`), plain (`tract`: the model translated to tract's typed form and
//! decluttered) and optimized (`tract-opt`: decluttered and mapped to tract's optimized
//! kernels). tract's Python package prepares a model with its default CPU runtime, which
//! optimizes it (`Model.into_runnable()`): what it runs is `tract-opt`'s pipeline, and a bundle's
//! `repro.py` says so.
//!
//! # Life of a model
//!
//! - [`Backend::prepare`] parses the ONNX bytes into tract's inference model (stage `Load`). An
//!   op tract does not know becomes a placeholder node there; such a model is refused as
//!   `unsupported` right away.
//! - [`Prepared::run`] fixes every input to the element type and shape of the value given,
//!   then types (and for `tract-opt` optimizes) the model and builds its plan (stage `Compile`),
//!   and runs it (stage `Run`). Plans, and compile errors, are cached by the element types and
//!   shapes of the inputs, so runs on inputs of the same types and shapes compile once.
//! - tract types some ops only when an input is a constant (a shape, axes, pads, scales given
//!   as graph inputs). When the model does not compile with types and shapes alone, it is
//!   compiled again with every input fixed to its value (tract then folds what depends on them
//!   at compile time) and that plan is run; the last few such plans are kept, keyed by the input
//!   values. When both attempts fail, the error is the first one, with the second appended.
//!
//! Errors whose chain names an unimplemented op, an unknown element type or a feature tract
//! says it does not support are `unsupported`; the rest are failures.
//!
//! tract panics on some malformed models (indices out of range, negative pads, ...). Panics are
//! not caught here: the worker process reports them as crashes.
//!
//! # Values
//!
//! Tensors of `bool`, all integer types, `f16`, `f32`, `f64` and strings (UTF-8) go in and come
//! out; an optional input holding a tensor is fed as that tensor. `bf16`, float8 and other raw
//! element types, sequences and empty optionals are `unsupported` (tract has none of them).
use crate::backend::{Backend, BackendError, Capabilities, Prepared, Stage};
use crate::value::{Data, HostTensor, NamedValues, Value};
use mutagraph_ir::dtype::DType;
use std::collections::HashMap;
use std::sync::Arc;
use tract_onnx::prelude::*;

/// The version of `tract-onnx` this crate is built against (pinned in `Cargo.toml`).
pub const TRACT_VERSION: &str = "0.23.9";

/// tract, plain (`tract`) or optimized (`tract-opt`).
pub struct TractBackend {
    optimized: bool,
    /// How many rewrites its declutter applies (`None`: all).
    steps: Option<usize>,
    /// Never compile a model again with its inputs fixed to their values
    /// ([`crate::catalog::Config::typed_only`]).
    typed_only: bool,
    onnx: tract_onnx::Onnx,
}

impl TractBackend {
    /// A new backend.
    pub fn new(optimized: bool) -> TractBackend {
        TractBackend {
            optimized,
            steps: None,
            typed_only: false,
            onnx: tract_onnx::onnx(),
        }
    }

    /// The backend that never compiles a model again with its inputs fixed to their values
    /// when `typed_only` (what tract's own Python package does: a model that does not compile
    /// from its inputs' types and shapes fails).
    pub fn typed_only(mut self, typed_only: bool) -> TractBackend {
        self.typed_only = typed_only;
        self
    }

    /// The backend whose declutter stops after `steps` rewrites (tract's `stopping_at`), then
    /// runs the model as it is (without the optimizer's kernel selection, for `tract-opt`
    /// too).
    pub fn with_declutter_steps(mut self, steps: usize) -> TractBackend {
        self.steps = Some(steps);
        self
    }
}

/// Whether the patches tract's optimizer applies now are recorded: those of a plan being
/// compiled ([`Recording`]), not those of anything else tract does in the process.
static RECORDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// While it lives, the patches tract's optimizer applies are recorded as rewrites of the model
/// ([`rewrote`], by rule: [`rule_name`]), whether the compile ends, fails or panics.
///
/// [`rewrote`]: crate::worker::context::rewrote
/// [`rule_name`]: crate::rewrites::rule_name
struct Recording;

impl Recording {
    fn start() -> Recording {
        record_patches();
        RECORDING.store(true, std::sync::atomic::Ordering::Relaxed);
        Recording
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        RECORDING.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Installs the logger that records each patch tract's optimizer applies while [`RECORDING`]
/// (it logs them at debug level: `applying patch #3: declutter/0 >> …`); other messages are
/// dropped. Once per process: later calls do nothing.
fn record_patches() {
    struct Patches;
    impl log::Log for Patches {
        fn enabled(&self, m: &log::Metadata) -> bool {
            m.target().starts_with("tract_core::optim")
        }
        fn log(&self, r: &log::Record) {
            if self.enabled(r.metadata()) && RECORDING.load(std::sync::atomic::Ordering::Relaxed) {
                let text = r.args().to_string();
                if let Some(name) = patch_applied(&text) {
                    crate::worker::context::rewrote(&crate::rewrites::rule_name(name));
                }
            }
        }
        fn flush(&self) {}
    }
    static PATCHES: Patches = Patches;
    if log::set_logger(&PATCHES).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
}

/// The patch a message of tract's optimizer says it applies (`applying patch #3: <name>`).
fn patch_applied(msg: &str) -> Option<&str> {
    let rest = msg.strip_prefix("applying patch #")?;
    let (_, name) = rest.split_once(": ")?;
    (!name.is_empty()).then_some(name)
}

impl Backend for TractBackend {
    fn name(&self) -> &str {
        if self.optimized { "tract-opt" } else { "tract" }
    }

    fn version(&self) -> String {
        TRACT_VERSION.into()
    }

    fn capabilities(&mut self) -> Capabilities {
        crate::probe::cached(self)
    }

    fn prepare(&mut self, model: &[u8]) -> Result<Box<dyn Prepared>, BackendError> {
        let proto = self
            .onnx
            .proto_model_for_read(&mut &model[..])
            .map_err(|e| classify(&e, Stage::Load))?;
        let parsed = self
            .onnx
            .model_for_proto_model(&proto)
            .map_err(|e| classify(&e, Stage::Load))?;
        let missing: Vec<String> = parsed
            .nodes()
            .iter()
            .filter_map(|n| {
                let op = n.op.name();
                op.strip_prefix("Unimplemented(")
                    .and_then(|s| s.strip_suffix(')'))
                    .map(str::to_string)
            })
            .collect();
        if !missing.is_empty() {
            return Err(BackendError::unsupported(
                Stage::Load,
                format!("tract does not implement {}", missing.join(", ")),
            ));
        }
        let inputs = parsed
            .input_outlets()
            .map_err(|e| classify(&e, Stage::Load))?
            .iter()
            .map(|o| parsed.node(o.node).name.clone())
            .collect();
        let outputs = proto
            .graph
            .as_ref()
            .map(|g| g.output.iter().map(|o| o.name.clone()).collect())
            .unwrap_or_default();
        Ok(Box::new(TractModel {
            model: parsed,
            optimized: self.optimized,
            steps: self.steps,
            typed_only: self.typed_only,
            inputs,
            outputs,
            plans: HashMap::new(),
            value_plans: Vec::new(),
        }))
    }
}

/// Element types and shapes of the inputs, in input order.
type PlanKey = Vec<(DatumType, Vec<usize>)>;

/// How many plans compiled for fixed input values are kept per model.
const VALUE_PLANS: usize = 4;

type Plan = Result<Arc<TypedRunnableModel>, BackendError>;

/// A parsed model and the plans compiled for it so far.
struct TractModel {
    model: InferenceModel,
    optimized: bool,
    steps: Option<usize>,
    typed_only: bool,
    inputs: Vec<String>,
    outputs: Vec<String>,
    /// Plans for input element types and shapes.
    plans: HashMap<PlanKey, Plan>,
    /// Plans for fixed input values (most recent last), for models that tract cannot type
    /// without knowing some input values.
    value_plans: Vec<(Vec<Tensor>, Plan)>,
}

impl TractModel {
    /// Compiles the model for inputs of these types and shapes or, with `values`, for exactly
    /// these input values. tract compiles at the first run of each input shape: the worker's
    /// step says it is preparing the model meanwhile (round 14: a hang in tract's declutter
    /// was titled "while running the model").
    fn compile(&self, key: &PlanKey, values: Option<&[Tensor]>) -> Plan {
        use crate::worker::context::{PREPARING, RUNNING, enter};
        enter(PREPARING);
        let plan = self.compile_unmarked(key, values);
        enter(RUNNING);
        plan
    }

    /// [`TractModel::compile`] without the worker's step.
    fn compile_unmarked(&self, key: &PlanKey, values: Option<&[Tensor]>) -> Plan {
        let err = |e: TractError| classify(&e, Stage::Compile);
        let mut m = self.model.clone();
        for (ix, (dt, shape)) in key.iter().enumerate() {
            let fact = match values {
                Some(v) => InferenceFact::from(v[ix].clone()),
                None => InferenceFact::dt_shape(*dt, shape.clone()),
            };
            m = m.with_input_fact(ix, fact).map_err(err)?;
        }
        let _recording = Recording::start();
        let typed = if let Some(steps) = self.steps {
            m.into_typed().and_then(|mut t| {
                tract_onnx::tract_core::optim::Optimizer::declutter()
                    .stopping_at(steps)
                    .optimize(&mut t)
                    .map(|()| t)
            })
        } else if self.optimized {
            m.into_optimized()
        } else {
            // What tract's own Python package and command line run: the typed model,
            // decluttered (normalized), without the optimizer's kernel selection.
            m.into_typed().and_then(|t| t.into_decluttered())
        }
        .map_err(err)?;
        typed.into_runnable().map_err(err)
    }

    /// The plan for these inputs: the one for their types and shapes when tract can type the
    /// model with those alone, else one for their values.
    fn plan(&mut self, key: PlanKey, tensors: &[Tensor]) -> Plan {
        if !self.plans.contains_key(&key) {
            let plan = self.compile(&key, None);
            self.plans.insert(key.clone(), plan);
        }
        let general = match &self.plans[&key] {
            Ok(p) => return Ok(p.clone()),
            Err(e) => e.clone(),
        };
        // Only integer inputs can be shapes, axes, pads or sizes that tract needs as constants:
        // a model of float inputs that does not compile is a failure of tract as its users
        // (and its Python package) see it, not a case for fixing the inputs' values.
        if self.typed_only
            || tensors.is_empty()
            || !tensors
                .iter()
                .any(|t| matches!(t.datum_type(), DatumType::I64 | DatumType::I32))
        {
            return Err(general);
        }
        let by_value = match self.value_plans.iter().position(|(v, _)| v == tensors) {
            Some(i) => {
                let hit = self.value_plans.remove(i);
                self.value_plans.push(hit);
                self.value_plans[self.value_plans.len() - 1].1.clone()
            }
            None => {
                let plan = self.compile(&key, Some(tensors));
                if self.value_plans.len() >= VALUE_PLANS {
                    drop(self.value_plans.remove(0));
                }
                self.value_plans.push((tensors.to_vec(), plan.clone()));
                plan
            }
        };
        by_value.map_err(|e| BackendError {
            message: format!(
                "{}; with the inputs fixed to their values: {}",
                general.message, e.message
            ),
            ..general
        })
    }
}

impl Prepared for TractModel {
    fn run(&mut self, inputs: &NamedValues) -> Result<NamedValues, BackendError> {
        if let Some((name, _)) = inputs.iter().find(|(n, _)| !self.inputs.contains(n)) {
            return Err(BackendError::failed(
                Stage::Run,
                format!("the model has no input named '{name}'"),
            ));
        }
        let mut tensors: Vec<Tensor> = Vec::with_capacity(self.inputs.len());
        for name in &self.inputs {
            let (_, v) = inputs.iter().find(|(n, _)| n == name).ok_or_else(|| {
                BackendError::failed(Stage::Run, format!("no value for input '{name}'"))
            })?;
            let t = to_tract(v).map_err(|mut e| {
                e.message = format!("input '{name}': {}", e.message);
                e
            })?;
            tensors.push(t);
        }
        let key: PlanKey = tensors
            .iter()
            .map(|t| (t.datum_type(), t.shape().to_vec()))
            .collect();
        let plan = self.plan(key, &tensors)?;
        let values: TVec<TValue> = tensors.into_iter().map(|t| t.into_tvalue()).collect();
        let out = plan.run(values).map_err(|e| classify(&e, Stage::Run))?;
        if out.len() != self.outputs.len() {
            return Err(BackendError::failed(
                Stage::Run,
                format!(
                    "tract returned {} outputs, the model has {}",
                    out.len(),
                    self.outputs.len()
                ),
            ));
        }
        let mut result = Vec::with_capacity(out.len());
        for (name, t) in self.outputs.iter().zip(out.iter()) {
            let v = from_tract(t).map_err(|mut e| {
                e.message = format!("output '{name}': {}", e.message);
                e
            })?;
            result.push((name.clone(), Value::Tensor(v)));
        }
        Ok(result)
    }
}

/// A tract error (with its whole chain of causes) as a [`BackendError`].
fn classify(e: &TractError, stage: Stage) -> BackendError {
    let msg = format!("{e:#}");
    let lower = msg.to_lowercase();
    let unsupported = msg.contains("Unimplemented(")
        || lower.contains("not implemented")
        || lower.contains("unimplemented")
        || lower.contains("unknown datumtype")
        || lower.contains("unsupported")
        || lower.contains("not supported")
        // A graph input of a type other than tensor (sequence, optional, map).
        || lower.contains("has no type value");
    if unsupported {
        BackendError::unsupported(stage, msg)
    } else {
        BackendError::failed(stage, msg)
    }
}

fn unsupported(msg: impl Into<String>) -> BackendError {
    BackendError::unsupported(Stage::Run, msg)
}

/// Our value as a tract tensor.
fn to_tract(v: &Value) -> Result<Tensor, BackendError> {
    let t = match v {
        Value::Tensor(t) => t,
        Value::Optional(Some(inner)) => return to_tract(inner),
        other => {
            return Err(unsupported(format!(
                "tract takes tensors only, not {}",
                other.describe()
            )));
        }
    };
    let s = &t.shape;
    let r = match &t.data {
        Data::F32(v) => Tensor::from_shape(s, v),
        Data::F64(v) => Tensor::from_shape(s, v),
        Data::F16(v) => Tensor::from_shape(s, v),
        Data::I8(v) => Tensor::from_shape(s, v),
        Data::I16(v) => Tensor::from_shape(s, v),
        Data::I32(v) => Tensor::from_shape(s, v),
        Data::I64(v) => Tensor::from_shape(s, v),
        Data::U8(v) => Tensor::from_shape(s, v),
        Data::U16(v) => Tensor::from_shape(s, v),
        Data::U32(v) => Tensor::from_shape(s, v),
        Data::U64(v) => Tensor::from_shape(s, v),
        Data::Bool(v) => Tensor::from_shape(s, v),
        Data::String(v) => {
            let mut strings = Vec::with_capacity(v.len());
            for b in v {
                strings.push(
                    String::from_utf8(b.clone())
                        .map_err(|_| unsupported("string elements that are not UTF-8"))?,
                );
            }
            let a = tract_ndarray::ArrayD::from_shape_vec(s.as_slice(), strings).map_err(|e| {
                BackendError::failed(Stage::Run, format!("creating an input tensor: {e}"))
            })?;
            Ok(Tensor::from(a))
        }
        Data::BF16(_) | Data::Raw(_) => {
            return Err(unsupported(format!("tract has no {} tensors", t.dtype)));
        }
    };
    r.map_err(|e| BackendError::failed(Stage::Run, format!("creating an input tensor: {e:#}")))
}

/// A tract tensor as ours.
fn from_tract(t: &Tensor) -> Result<HostTensor, BackendError> {
    fn plain<T: Datum + Clone>(t: &Tensor) -> TractResult<Vec<T>> {
        Ok(t.try_as_plain_ram()?.as_slice::<T>()?.to_vec())
    }
    let read = |e: TractError| {
        BackendError::failed(Stage::Run, format!("reading an output tensor: {e:#}"))
    };
    let shape = t.shape().to_vec();
    let (dtype, data) = match t.datum_type().unquantized() {
        DatumType::F32 => (DType::F32, plain(t).map(Data::F32)),
        DatumType::F64 => (DType::F64, plain(t).map(Data::F64)),
        DatumType::F16 => (DType::F16, plain(t).map(Data::F16)),
        DatumType::I8 => (DType::I8, plain(t).map(Data::I8)),
        DatumType::I16 => (DType::I16, plain(t).map(Data::I16)),
        DatumType::I32 => (DType::I32, plain(t).map(Data::I32)),
        DatumType::I64 => (DType::I64, plain(t).map(Data::I64)),
        DatumType::U8 => (DType::U8, plain(t).map(Data::U8)),
        DatumType::U16 => (DType::U16, plain(t).map(Data::U16)),
        DatumType::U32 => (DType::U32, plain(t).map(Data::U32)),
        DatumType::U64 => (DType::U64, plain(t).map(Data::U64)),
        DatumType::Bool => (DType::Bool, plain(t).map(Data::Bool)),
        DatumType::String => (
            DType::String,
            plain::<String>(t)
                .map(|v| Data::String(v.into_iter().map(String::into_bytes).collect())),
        ),
        // Symbolic dimensions that ended up concrete: ONNX sees them as int64.
        DatumType::TDim => (
            DType::I64,
            t.cast_to::<i64>()
                .and_then(|c| plain::<i64>(&c))
                .map(Data::I64),
        ),
        other => {
            return Err(unsupported(format!(
                "tract output of element type {other:?}"
            )));
        }
    };
    let data = data.map_err(read)?;
    Ok(HostTensor { dtype, shape, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_version() {
        assert_eq!(TractBackend::new(false).name(), "tract");
        assert_eq!(TractBackend::new(true).name(), "tract-opt");
        assert_eq!(TractBackend::new(true).version(), "0.23.9");
    }

    #[test]
    fn garbage_is_a_load_failure() {
        let e = TractBackend::new(false)
            .prepare(b"\xff\xff not a model")
            .err()
            .unwrap();
        assert_eq!(e.stage, Stage::Load);
        assert!(!e.unsupported, "{e}");
    }
}
