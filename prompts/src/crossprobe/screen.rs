//! Screening: which calls of a snippet can be transferred (an aligned ONNX op that some
//! backend under test runs), which are dropped and why, and which are not operators at all.
use super::db::{AlignmentDb, Pair, SupportSource};
use super::snippet::{Call, Snippet};

/// A kept call and its alignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    pub call: Call,
    pub pair: Pair,
    /// The backends that run the op.
    pub backends: Vec<String>,
}

/// The screening of one snippet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Screening {
    pub kept: Vec<Kept>,
    /// Framework calls that cannot be transferred, with the reason.
    pub dropped: Vec<(Call, String)>,
    /// Calls that are not operators (tensor creation, printing, helper methods).
    pub other: Vec<Call>,
    /// Whether at least one call is kept.
    pub transferable: bool,
}

impl Screening {
    /// The distinct ONNX ops of the kept calls, in first-seen order.
    pub fn ops(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for k in &self.kept {
            if !v.contains(&k.pair.onnx) {
                v.push(k.pair.onnx.clone());
            }
        }
        v
    }
}

/// Calls that make inputs or drive the program rather than compute: never transferred.
const NOT_OPS: &[&str] = &[
    "torch.tensor",
    "torch.Tensor",
    "torch.randn",
    "torch.rand",
    "torch.randint",
    "torch.zeros",
    "torch.ones",
    "torch.empty",
    "torch.full",
    "torch.from_numpy",
    "torch.manual_seed",
    "torch.no_grad",
    "torch.device",
    "torch.set_default_dtype",
    "torch.jit.script",
    "torch.jit.trace",
    "torch.compile",
    "torch.onnx.export",
    "torch.testing.assert_close",
    "torch.allclose",
    "torch.isclose",
    "torch.finfo",
    "torch.iinfo",
    "torch.nn.Module",
    "torch.nn.Sequential",
    "torch.arange",
    "torch.linspace",
    "tf.constant",
    "tf.Variable",
    "tf.random.normal",
    "tf.random.uniform",
    "tf.random.set_seed",
    "tf.function",
    "tf.zeros",
    "tf.ones",
    "tf.convert_to_tensor",
    "tf.keras.Input",
    "tf.keras.Model",
    "tf.keras.Sequential",
    "tf.test.TestCase",
    "tf.debugging.assert_near",
    "tf.print",
    "tf.config.set_visible_devices",
    "tf.device",
];

const NOT_OP_METHODS: &[&str] = &[
    "numpy",
    "item",
    "tolist",
    "cpu",
    "cuda",
    "detach",
    "eval",
    "train",
    "backward",
    "requires_grad_",
    "size",
    "dim",
    "shape",
    "append",
    "extend",
    "forward",
    "to",
    "format",
    "__init__",
    "parameters",
    "state_dict",
    "zero_",
    "fill_",
    "normal_",
    "uniform_",
    "copy_",
    "contiguous",
    "type",
    "data_ptr",
    "is_contiguous",
    "keys",
    "values",
    "items",
    "join",
    "startswith",
    "split_",
    "call",
    "build",
    "compile",
    "predict",
    "fit",
];

fn is_framework_api(api: &str) -> bool {
    api.starts_with("torch.") || api.starts_with("tf.")
}

/// Screens the calls of a snippet.
pub fn screen(snippet: &Snippet, db: &AlignmentDb, support: &dyn SupportSource) -> Screening {
    let mut s = Screening::default();
    for call in &snippet.calls {
        let last = call.api.rsplit('.').next().unwrap_or("");
        if NOT_OPS.contains(&call.api.as_str())
            || call.api.starts_with("numpy.")
            || call.api.starts_with("np.")
            || (call.method && NOT_OP_METHODS.contains(&last))
        {
            s.other.push(call.clone());
            continue;
        }
        match db.lookup(&call.api) {
            Some(pair) => {
                let backends = support.backends(&pair.onnx);
                if backends.is_empty() {
                    s.dropped.push((
                        call.clone(),
                        format!(
                            "aligned with ONNX {} but no backend under test runs it",
                            pair.onnx
                        ),
                    ));
                } else {
                    s.kept.push(Kept {
                        call: call.clone(),
                        pair: pair.clone(),
                        backends,
                    });
                }
            }
            None if is_framework_api(&call.api) && !call.method => s
                .dropped
                .push((call.clone(), "no aligned ONNX op".to_string())),
            None => s.other.push(call.clone()),
        }
    }
    s.transferable = !s.kept.is_empty();
    s
}
