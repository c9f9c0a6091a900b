//! The catalog of backends: names, how to create each one, and which are compiled in.
use crate::backend::Backend;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Settings shared by all backends of a run.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Path of `libonnxruntime.so` (else `ORT_DYLIB_PATH`, else found in the Python package).
    pub ort_dylib: Option<PathBuf>,
    /// Intra-op threads for libraries that take it, and for the reference's Conv (`None`: 1,
    /// for reproducible timings).
    pub threads: Option<usize>,
    /// Which of its rewrites the library applies to a model (all, for a campaign).
    pub rewrites: Rewrites,
    /// Compile a model from its inputs' element types and shapes only, never again with the
    /// inputs fixed to their values (tract's adapter does that for shapes given as inputs): a
    /// part of a model whose inputs the model computes is judged as the model meets it.
    pub typed_only: bool,
}

/// Which of its rewrites a library applies when it prepares a model: all of them (what a
/// campaign runs), or fewer, to find the one rewrite a finding needs. A worker records the
/// rewrites that changed the model (see [`crate::worker::context::rewrote`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rewrites {
    /// Every rewrite.
    #[default]
    All,
    /// ONNX Runtime without these graph transformers or rules (its `disabled_optimizers`).
    Without(Vec<String>),
    /// tract stopping its declutter after this many rewrites (its optimizer's `stopping_at`):
    /// 0 runs the typed model as translated.
    First(usize),
}

/// The library a backend runs: variants of one library (`ort` and `ort-noopt`) share their
/// kernels, so they are one witness against another backend, and one bug of the library shows up
/// in several of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Library {
    /// mutagraph's own f64 interpreter: the ground truth, never a faulty library.
    Reference,
    /// ONNX Runtime.
    OnnxRuntime,
    /// tract.
    Tract,
    /// burn (through mutagraph's interpreter over burn's tensor API).
    Burn,
    /// A test-only backend (fault injection, planted bugs): each is its own library.
    Test,
}

impl Library {
    /// The library's name in reports (`ONNX Runtime`, `tract`, `burn`).
    pub fn display(self) -> &'static str {
        match self {
            Library::Reference => "mutagraph reference",
            Library::OnnxRuntime => "ONNX Runtime",
            Library::Tract => "tract",
            Library::Burn => "burn",
            Library::Test => "test backend",
        }
    }

    /// A short key for signatures and file names (`ort`, `tract`, `burn`).
    pub fn key(self) -> &'static str {
        match self {
            Library::Reference => "reference",
            Library::OnnxRuntime => "ort",
            Library::Tract => "tract",
            Library::Burn => "burn",
            Library::Test => "test",
        }
    }
}

/// One backend of the catalog: every fact about a backend that another part of the tool acts
/// on is a field here, so that adding a backend is one row.
#[derive(Clone, Copy, Debug)]
pub struct BackendInfo {
    /// Its name (`ort-noopt`).
    pub name: &'static str,
    /// The library it runs.
    pub library: Library,
    /// The backend it is a variant of (`ort-noopt` of `ort`, `reference-f64` of `reference`);
    /// `None` for the first of its library.
    pub variant_of: Option<&'static str>,
    /// True when it runs the library's graph optimizer (`ort`, `tract-opt`): such a variant
    /// that runs a model is no witness that the model is runnable (an optimizer may delete the
    /// very node another backend fails on).
    pub optimized: bool,
    /// True for accelerator backends (their kernels differ from the CPU ones).
    pub gpu: bool,
    /// The cargo feature that compiles it in (`None`: always).
    pub feature: Option<&'static str>,
    /// In the default set of `run`, `campaign`, `minimize` and the LLM commands.
    pub default: bool,
    /// Its outputs are the ground truth of a campaign: the reference in f64 (`reference`,
    /// `reference-f64`; not `reference-native`, which computes in the model's own types).
    pub ground_truth: bool,
    /// Its known failures of the ONNX backend test suite (`backends/conformance/<name>.txt`).
    pub allowlist: &'static str,
    /// The known failures on other kinds of device, where they differ (a GPU backend on a
    /// real GPU against the CPU driver its main list was made on): device kind
    /// ([`device_kind`]) → `backends/conformance/<name>@<kind>.txt`.
    pub device_allowlists: &'static [(&'static str, &'static str)],
    /// The rewrites it applies over the ONNX backend test suite, one per line as
    /// [`crate::rewrites::rule_name`] words them (`backends/conformance/rewrites/<name>.txt`;
    /// empty: not listed): the known rewrites its campaign coverage counts against.
    pub suite_rewrites: &'static str,
    /// The arithmetic its kernels may compute in besides IEEE arithmetic in the model's own
    /// types (empty: none): what the precision envelope allows it on top.
    pub arithmetic: &'static [Arithmetic],
    /// A model that does not compile from its inputs' types and shapes is compiled again with
    /// the inputs fixed to their values (tract's adapter, for shapes given as inputs), unless
    /// the worker is [`Config::typed_only`].
    pub compiles_by_value: bool,
    /// Creates it (each library's constructor says when its feature is not compiled in).
    pub create: Constructor,
}

/// An arithmetic a GPU backend's kernels may compute in other than IEEE arithmetic in the
/// model's own types, op by op. Read from the libraries' sources at the pinned versions:
/// - burn-cuda (burn 0.21, cubecl 0.10, cubek-matmul 0.2): the tensor-core matmul stages
///   float32 operands as TF32 on devices that support it (`adjust_dtypes`), and its autotune
///   may pick that kernel for MatMul, Gemm, the convolutions and the recurrent ops; NVRTC
///   compiles its kernels without `--fmad=false`, so `a·b + c` may be one fused multiply-add.
/// - burn-wgpu: WGSL has no TF32 (cubecl-wgpu refuses it); the Vulkan driver may contract
///   multiply-adds (SPIR-V without `NoContraction`).
/// - ort-cuda: ONNX Runtime's CUDA provider leaves TF32 off unless `use_tf32` is set (this
///   tool does not set it); its kernels are compiled with nvcc's default `--fmad=true`.
///
/// None of them computes in fast math: cubecl only emits its fast instructions where a
/// kernel sets fast-math flags, which burn's kernels do not, and neither compiler is given
/// `--use_fast_math`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arithmetic {
    /// TensorFloat-32 matrix units: float32 operands of matrix products rounded to a 10-bit
    /// mantissa (float16's) before multiplying, sums kept in float32.
    Tf32MatrixUnits,
    /// Fused multiply-add: `a·b + c` rounded once instead of twice.
    FusedMultiplyAdd,
    /// Fast-math transcendental and division instructions (approximate `exp`, `log`, `tanh`,
    /// reciprocal).
    FastMath,
}

impl Arithmetic {
    /// The ops whose kernels compute in it (`None`: any op's).
    pub fn ops(self) -> Option<&'static [&'static str]> {
        match self {
            Arithmetic::Tf32MatrixUnits => Some(&[
                "MatMul",
                "Gemm",
                "Conv",
                "ConvTranspose",
                "Einsum",
                "GRU",
                "LSTM",
                "RNN",
            ]),
            Arithmetic::FusedMultiplyAdd => None,
            Arithmetic::FastMath => Some(&[
                "Exp", "Log", "Tanh", "Sin", "Cos", "Div", "Sigmoid", "Softmax", "Erf", "Pow",
            ]),
        }
    }

    /// The relative rounding unit it adds to a float32 result, at the scale of the largest
    /// value on the result's path: half an ulp at 1 of TF32's 10-bit mantissa (2^-11), of
    /// float32 for a fused multiply-add (2^-24: one rounding more or less), and the few ulps
    /// of CUDA's fast intrinsics (2^-21).
    pub fn unit(self) -> f64 {
        match self {
            Arithmetic::Tf32MatrixUnits => 2f64.powi(-11),
            Arithmetic::FusedMultiplyAdd => 2f64.powi(-24),
            Arithmetic::FastMath => 2f64.powi(-21),
        }
    }

    /// Its name in reports.
    pub fn describe(self) -> &'static str {
        match self {
            Arithmetic::Tf32MatrixUnits => "TF32 matrix units",
            Arithmetic::FusedMultiplyAdd => "fused multiply-add",
            Arithmetic::FastMath => "fast math",
        }
    }
}

/// How the catalog creates a backend from its name.
pub type Constructor = fn(&str, &Config) -> Result<Box<dyn Backend>, CreateError>;

/// A row with the most common values: a CPU backend, no optimizer, always compiled in, not in
/// the default set, no allowlist.
const fn row(name: &'static str, library: Library, create: Constructor) -> BackendInfo {
    BackendInfo {
        name,
        library,
        variant_of: None,
        optimized: false,
        gpu: false,
        feature: None,
        default: false,
        ground_truth: false,
        allowlist: "",
        device_allowlists: &[],
        suite_rewrites: "",
        arithmetic: &[],
        compiles_by_value: false,
        create,
    }
}

/// The kind of device a GPU backend runs on here: `nvidia` (CUDA, or a Vulkan driver of
/// NVIDIA's), `lavapipe` (Mesa's CPU Vulkan driver), `vulkan` (another one); `None` for a CPU
/// backend. The Vulkan driver is the one wgpu would pick: NVIDIA's when its driver manifest is
/// installed, else Mesa's CPU driver.
pub fn device_kind(backend: &str) -> Option<&'static str> {
    let b = info(backend)?;
    if !b.gpu {
        return None;
    }
    if b.feature == Some("cuda") {
        return Some("nvidia");
    }
    Some(vulkan_kind(&vulkan_drivers()))
}

/// The Vulkan driver manifests here: the files `VK_DRIVER_FILES` / `VK_ICD_FILENAMES` name,
/// else those of the standard manifest folders.
fn vulkan_drivers() -> Vec<String> {
    for var in ["VK_DRIVER_FILES", "VK_ICD_FILENAMES"] {
        if let Ok(v) = std::env::var(var)
            && !v.is_empty()
        {
            return v.split(':').map(str::to_string).collect();
        }
    }
    ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
        .collect()
}

/// The device kind of a set of Vulkan driver manifests (see [`device_kind`]).
fn vulkan_kind(drivers: &[String]) -> &'static str {
    let has = |k: &str| drivers.iter().any(|d| d.to_lowercase().contains(k));
    if has("nvidia") {
        "nvidia"
    } else if has("lvp") || has("lavapipe") {
        "lavapipe"
    } else {
        "vulkan"
    }
}

/// The known conformance failures of `backend` on the device it runs on here
/// ([`device_kind`]): the device's own list where there is one, else the backend's.
pub fn allowlist_here(backend: &str) -> &'static str {
    let Some(b) = info(backend) else {
        return "";
    };
    device_kind(backend)
        .and_then(|k| b.device_allowlists.iter().find(|(d, _)| *d == k))
        .map_or(b.allowlist, |(_, text)| text)
}

/// Every backend this tool knows, in report order (test-only backends are in [`TEST_TABLE`]).
/// The default set holds the reference and one CPU variant of each library; the triage runs a
/// library's other variants on demand to tell a kernel bug from an optimizer bug.
pub const TABLE: &[BackendInfo] = &[
    BackendInfo {
        default: true,
        ground_truth: true,
        allowlist: include_str!("../conformance/reference.txt"),
        ..row("reference", Library::Reference, create_reference)
    },
    BackendInfo {
        variant_of: Some("reference"),
        ground_truth: true,
        ..row("reference-f64", Library::Reference, create_reference)
    },
    BackendInfo {
        variant_of: Some("reference"),
        ..row("reference-native", Library::Reference, create_reference)
    },
    BackendInfo {
        optimized: true,
        feature: Some("ort"),
        default: true,
        allowlist: include_str!("../conformance/ort.txt"),
        ..row("ort", Library::OnnxRuntime, create_ort)
    },
    BackendInfo {
        variant_of: Some("ort"),
        feature: Some("ort"),
        allowlist: include_str!("../conformance/ort-noopt.txt"),
        ..row("ort-noopt", Library::OnnxRuntime, create_ort)
    },
    BackendInfo {
        variant_of: Some("ort"),
        optimized: true,
        gpu: true,
        feature: Some("ort-cuda"),
        arithmetic: &[Arithmetic::FusedMultiplyAdd],
        ..row("ort-cuda", Library::OnnxRuntime, create_ort)
    },
    BackendInfo {
        feature: Some("tract"),
        default: true,
        allowlist: include_str!("../conformance/tract.txt"),
        suite_rewrites: include_str!("../conformance/rewrites/tract.txt"),
        compiles_by_value: true,
        ..row("tract", Library::Tract, create_tract)
    },
    BackendInfo {
        variant_of: Some("tract"),
        optimized: true,
        feature: Some("tract"),
        allowlist: include_str!("../conformance/tract-opt.txt"),
        suite_rewrites: include_str!("../conformance/rewrites/tract-opt.txt"),
        compiles_by_value: true,
        ..row("tract-opt", Library::Tract, create_tract)
    },
    BackendInfo {
        feature: Some("burn"),
        default: true,
        allowlist: include_str!("../conformance/burn-ndarray.txt"),
        ..row("burn-ndarray", Library::Burn, create_burn)
    },
    BackendInfo {
        variant_of: Some("burn-ndarray"),
        gpu: true,
        feature: Some("wgpu"),
        // Made on lavapipe (Mesa's CPU Vulkan driver); NVIDIA's driver fails more.
        allowlist: include_str!("../conformance/burn-wgpu.txt"),
        device_allowlists: &[(
            "nvidia",
            include_str!("../conformance/burn-wgpu@nvidia.txt"),
        )],
        arithmetic: &[Arithmetic::FusedMultiplyAdd],
        ..row("burn-wgpu", Library::Burn, create_burn)
    },
    BackendInfo {
        variant_of: Some("burn-ndarray"),
        gpu: true,
        feature: Some("cuda"),
        allowlist: include_str!("../conformance/burn-cuda.txt"),
        arithmetic: &[Arithmetic::Tf32MatrixUnits, Arithmetic::FusedMultiplyAdd],
        ..row("burn-cuda", Library::Burn, create_burn)
    },
];

/// Test-only backends: fault injection and the planted bugs. Never in a default set.
pub const TEST_TABLE: &[BackendInfo] = &[
    row("fault", Library::Test, create_test),
    row(crate::fault::SLEEP, Library::Test, create_test),
    row(crate::planted::CONV_PAD, Library::Test, create_test),
    row(crate::planted::SOFTMAX, Library::Test, create_test),
    row(crate::planted::REDUCE_MEAN, Library::Test, create_test),
    row(crate::planted::MAXPOOL_SAME, Library::Test, create_test),
    row(crate::planted::RNN_CLIP, Library::Test, create_test),
    row(crate::planted::TWO, Library::Test, create_test),
];

/// Every backend name this tool knows (not the test-only ones), in report order: the names
/// of [`TABLE`].
pub const ALL: &[&str] = &{
    let mut names = [""; TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        names[i] = TABLE[i].name;
        i += 1;
    }
    names
};

/// The planted-bug backends ([`crate::planted`]): the reference with one op carrying a known
/// bug, for testing that campaigns find, localize and minimize bugs. Always compiled in, never
/// in the default set (nor in [`ALL`]).
pub const PLANTED: &[&str] = crate::planted::NAMES;

/// What the catalog knows of a backend name (test-only backends included).
pub fn info(name: &str) -> Option<&'static BackendInfo> {
    TABLE.iter().chain(TEST_TABLE).find(|b| b.name == name)
}

/// The library of a backend; an unknown name is its own test library.
pub fn library(name: &str) -> Library {
    info(name).map_or(Library::Test, |b| b.library)
}

/// The key that groups variants of one library (`ort` for `ort` and `ort-noopt`); a test-only
/// backend is its own group.
pub fn family(name: &str) -> &str {
    match info(name) {
        Some(b) if b.library != Library::Test => b.library.key(),
        _ => name,
    }
}

/// True for the backends whose outputs are a campaign's ground truth (the reference in f64).
pub fn is_ground_truth(name: &str) -> bool {
    info(name).is_some_and(|b| b.ground_truth)
}

/// True for the reference interpreter (in any of its precisions).
pub fn is_reference(name: &str) -> bool {
    library(name) == Library::Reference
}

/// True for the backends that run on a GPU.
pub fn is_gpu(name: &str) -> bool {
    info(name).is_some_and(|b| b.gpu)
}

/// Whether a GPU backend's panic `message` reports a device error after which the device is
/// unusable in that process (CUDA's `CUDA_ERROR_…` codes, cubecl's "server is in an invalid
/// state", a lost Vulkan device): every later launch there fails or computes garbage.
pub fn device_error(name: &str, message: &str) -> bool {
    const MARKS: &[&str] = &[
        "CUDA_ERROR_",
        "server is in an invalid state",
        "DeviceLost",
        "device lost",
        "VK_ERROR_DEVICE_LOST",
    ];
    is_gpu(name) && MARKS.iter().any(|m| message.contains(m))
}

/// True when the backend runs a graph optimizer.
pub fn is_optimized(name: &str) -> bool {
    info(name).is_some_and(|b| b.optimized)
}

/// The other compiled CPU variants of `name`'s library (for `ort`: `ort-noopt`), in table order.
pub fn sibling_variants(name: &str) -> Vec<&'static str> {
    let Some(me) = info(name) else {
        return Vec::new();
    };
    if matches!(me.library, Library::Reference | Library::Test) {
        return Vec::new();
    }
    TABLE
        .iter()
        .filter(|b| b.library == me.library && b.name != name && !b.gpu && is_compiled(b.name))
        .map(|b| b.name)
        .collect()
}

/// The unoptimized CPU variant of each library other than `name`'s, compiled in: the backends
/// that can witness that a model `name` fails on is runnable.
pub fn witnesses_for(name: &str) -> Vec<&'static str> {
    let mine = library(name);
    TABLE
        .iter()
        .filter(|b| {
            !b.optimized
                && !b.gpu
                && b.library != mine
                && !matches!(b.library, Library::Reference | Library::Test)
                && is_compiled(b.name)
        })
        .map(|b| b.name)
        .collect()
}

/// The default set for `run`, `campaign`, `minimize` and the LLM commands: the reference and
/// one CPU variant of each library, those compiled in.
pub fn default_set() -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|b| b.default && is_compiled(b.name))
        .map(|b| b.name)
        .collect()
}

/// Every CPU backend compiled in but the reference's other precisions (`conformance`, benches).
pub fn cpu_set() -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|b| {
            !b.gpu
                && is_compiled(b.name)
                && !(b.library == Library::Reference && b.variant_of.is_some())
        })
        .map(|b| b.name)
        .collect()
}

/// True when this build contains the backend.
pub fn is_compiled(name: &str) -> bool {
    match info(name) {
        Some(BackendInfo {
            feature: Some(f), ..
        }) => match *f {
            "ort" => cfg!(feature = "ort"),
            "ort-cuda" => cfg!(feature = "ort-cuda"),
            "tract" => cfg!(feature = "tract"),
            "burn" => cfg!(feature = "burn"),
            "wgpu" => cfg!(feature = "wgpu"),
            "cuda" => cfg!(feature = "cuda"),
            _ => false,
        },
        Some(_) => true,
        None => false,
    }
}

/// Why a backend could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// No backend has this name.
    #[error("unknown backend '{0}' (known: {known})", known = ALL.join(", "))]
    Unknown(String),
    /// The backend exists but this build does not contain it.
    #[error("backend '{name}' is not compiled in: rebuild with `--features {feature}`")]
    NotCompiled {
        /// The backend.
        name: String,
        /// The cargo feature that brings it.
        feature: &'static str,
    },
    /// The library behind it could not be initialized.
    #[error("backend '{name}': {problem}")]
    Init {
        /// The backend.
        name: String,
        /// What went wrong, with what to install.
        problem: String,
    },
}

/// Creates a backend by name.
pub fn create(name: &str, config: &Config) -> Result<Box<dyn Backend>, CreateError> {
    match info(name) {
        Some(b) => (b.create)(name, config),
        None => Err(CreateError::Unknown(name.to_string())),
    }
}

fn not_compiled(name: &str, feature: &'static str) -> CreateError {
    CreateError::NotCompiled {
        name: name.to_string(),
        feature,
    }
}

fn create_reference(name: &str, config: &Config) -> Result<Box<dyn Backend>, CreateError> {
    crate::reference::set_threads(config.threads.unwrap_or(1));
    Ok(Box::new(match name {
        "reference-f64" => crate::reference::Reference::new_f64(),
        "reference-native" => crate::reference::Reference::new_native(),
        _ => crate::reference::Reference::new(),
    }))
}

fn create_ort(name: &str, config: &Config) -> Result<Box<dyn Backend>, CreateError> {
    #[cfg(feature = "ort")]
    {
        if name == "ort-cuda" && !cfg!(feature = "ort-cuda") {
            return Err(not_compiled(name, "ort-cuda"));
        }
        crate::ort::OrtBackend::create(name, config).map(|b| Box::new(b) as Box<dyn Backend>)
    }
    #[cfg(not(feature = "ort"))]
    {
        let _ = config;
        Err(not_compiled(
            name,
            info(name).and_then(|b| b.feature).unwrap_or("ort"),
        ))
    }
}

fn create_tract(name: &str, config: &Config) -> Result<Box<dyn Backend>, CreateError> {
    #[cfg(feature = "tract")]
    {
        let b = crate::tract::TractBackend::new(info(name).is_some_and(|b| b.optimized))
            .typed_only(config.typed_only);
        Ok(Box::new(match config.rewrites {
            Rewrites::First(steps) => b.with_declutter_steps(steps),
            _ => b,
        }))
    }
    #[cfg(not(feature = "tract"))]
    {
        let _ = config;
        Err(not_compiled(name, "tract"))
    }
}

fn create_burn(name: &str, _: &Config) -> Result<Box<dyn Backend>, CreateError> {
    match name {
        #[cfg(feature = "burn")]
        "burn-ndarray" => Ok(crate::burn::ndarray()),
        #[cfg(feature = "wgpu")]
        "burn-wgpu" => crate::burn::wgpu(),
        #[cfg(feature = "cuda")]
        "burn-cuda" => crate::burn::cuda(),
        _ => Err(not_compiled(
            name,
            info(name).and_then(|b| b.feature).unwrap_or("burn"),
        )),
    }
}

fn create_test(name: &str, _: &Config) -> Result<Box<dyn Backend>, CreateError> {
    if name == "fault" {
        return Ok(Box::new(crate::fault::Fault));
    }
    if name == crate::fault::SLEEP {
        return Ok(Box::new(crate::fault::Sleep::from_env()));
    }
    match crate::planted::by_name(name) {
        Some(b) => Ok(Box::new(b)),
        None => Err(CreateError::Unknown(name.to_string())),
    }
}

/// The names ONNX Runtime registers a graph transformer under, for the name its rewritten
/// nodes carry (`…/LayerNormFusion/`) or the registered name itself: a transformer run at two
/// levels is registered once per level (`LayerNormFusionL1`, `LayerNormFusionL2`), and
/// `disabled_optimizers` takes only the registered names (measured on 1.31.1: disabling
/// `LayerNormFusion` leaves the fusion on).
pub fn ort_transformer_names(name: &str) -> Vec<String> {
    const PER_LEVEL: &[&str] = &["LayerNormFusion", "GeluFusion"];
    if PER_LEVEL.contains(&name) {
        vec![format!("{name}L1"), format!("{name}L2")]
    } else {
        vec![name.to_string()]
    }
}

/// The rewrite rules one of ONNX Runtime's rule-based graph transformers applies
/// (`Level1_RuleBasedTransformer`: it logs only its own name when one of them changes the
/// model), by the names `disabled_optimizers` takes for each (rules and transformers share
/// that list); empty for any other name. Read from ORT's sources (`GenerateRewriteRules` and
/// each rule's constructor; the Unsqueeze rule has had both names).
pub fn ort_rules_of(transformer: &str) -> &'static [&'static str] {
    match transformer {
        "Level1_RuleBasedTransformer" => &[
            "EliminateIdentity",
            "EliminateSlice",
            "EliminateUnsqueeze",
            "UnsqueezeElimination",
            "EliminateDropout",
            "ExpandElimination",
            "CastElimination",
            "PreShapeNodeElimination",
            "NoopElimination",
            "DivMulFusion",
            "FuseReluClip",
            "GemmSumFusion",
            "GemmTransposeFusion",
            "NotWhereFusion",
            "ConvAddFusion",
            "ConvMulFusion",
            "ConvBNFusion",
            "Pad_Fusion",
            "MatMul_BatchNormalization_Fusion",
            "LabelEncoderFusion",
        ],
        "Level2_RuleBasedTransformer" => &[
            "ClipQuantRewrite",
            "ReluQuantRewrite",
            "GemmTransposeFusion",
        ],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One allowlist cannot serve a CPU Vulkan driver and a GPU (on an H200 burn-wgpu fails
    /// ScatterND reductions and GRU seq_length that lavapipe passes): the list follows the
    /// driver wgpu would pick.
    #[test]
    fn the_allowlist_follows_the_device() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            vulkan_kind(&names(&["lvp_icd.x86_64.json", "intel_icd.x86_64.json"])),
            "lavapipe"
        );
        assert_eq!(
            vulkan_kind(&names(&["lvp_icd.x86_64.json", "nvidia_icd.json"])),
            "nvidia"
        );
        assert_eq!(vulkan_kind(&names(&["radeon_icd.x86_64.json"])), "vulkan");
        assert_eq!(device_kind("ort"), None);
        assert_eq!(device_kind("burn-cuda"), Some("nvidia"));
        let wgpu = info("burn-wgpu").unwrap();
        let (_, nvidia) = wgpu
            .device_allowlists
            .iter()
            .find(|(k, _)| *k == "nvidia")
            .unwrap();
        let ids = |t: &str| {
            t.lines()
                .filter_map(|l| l.split_whitespace().next())
                .filter(|l| !l.starts_with('#'))
                .map(str::to_string)
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert!(ids(nvidia).contains("node/test_scatternd_add"));
        assert!(!ids(wgpu.allowlist).contains("node/test_scatternd_add"));
        assert!(ids(nvidia).is_superset(&ids(wgpu.allowlist)));
        assert_eq!(allowlist_here("ort"), info("ort").unwrap().allowlist);
    }
}
