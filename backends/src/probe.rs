//! Capability probing for libraries whose op coverage is not known statically (ONNX Runtime,
//! tract): every single-op model of the ONNX backend test suite (part `node`) is prepared and run
//! once on its recorded inputs (and a few models of ours for ops the suite lacks); an op is
//! supported when at least one of its models got past the backend without an `unsupported`
//! refusal, and the input dtypes of those models are recorded. The result is cached per backend
//! name and version in `$XDG_CACHE_HOME/mutagraph/capabilities/<name>-<version>-probe<N>.json`
//! (default `~/.cache`; N is the probe's revision).
use crate::backend::{Backend, Capabilities};
use crate::value::{HostTensor, NamedValues, Value};
use mutagraph_ir::DType;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

/// The header of a probe model that imports `com.microsoft`.
macro_rules! ms {
    () => {
        "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n"
    };
}

/// Single-op models (op key, ONNX text, dtype and shape of its input `x`) for ops that the
/// Debian suite has no single-op node test of; without them a backend would never be credited
/// with these ops and campaigns would leave them out of their universe. The `com.microsoft`
/// ops (ONNX Runtime's contrib ops) are all here: the suite has none.
const EXTRA_PROBES: &[(&str, &str, DType, &[usize])] = &[
    (
        "LpPool",
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 2, 4, 4] x) => (float[1, 2, 3, 3] y)\n{ y = LpPool <kernel_shape: ints = [2, 2]> (x) }",
        DType::F32,
        &[1, 2, 4, 4],
    ),
    (
        "GlobalLpPool",
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 2, 4, 4] x) => (float[1, 2, 1, 1] y)\n{ y = GlobalLpPool (x) }",
        DType::F32,
        &[1, 2, 4, 4],
    ),
    (
        "MaxRoiPool",
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 2, 4, 4] x) => (float[1, 2, 2, 2] y)\n<float[1, 5] rois = {0, 0, 0, 3, 3}>\n{ y = MaxRoiPool <pooled_shape: ints = [2, 2]> (x, rois) }",
        DType::F32,
        &[1, 2, 4, 4],
    ),
    (
        "com.microsoft::Gelu",
        concat!(
            ms!(),
            "g (float[2, 3] x) => (float[2, 3] y)\n{ y = com.microsoft.Gelu (x) }"
        ),
        DType::F32,
        &[2, 3],
    ),
    (
        "com.microsoft::FastGelu",
        concat!(
            ms!(),
            "g (float[2, 3] x) => (float[2, 3] y)\n<float[3] b = {0.1, 0.2, 0.3}>\n{ y = com.microsoft.FastGelu (x, b) }"
        ),
        DType::F32,
        &[2, 3],
    ),
    (
        "com.microsoft::BiasGelu",
        concat!(
            ms!(),
            "g (float[2, 3] x) => (float[2, 3] y)\n<float[3] b = {0.1, 0.2, 0.3}>\n{ y = com.microsoft.BiasGelu (x, b) }"
        ),
        DType::F32,
        &[2, 3],
    ),
    (
        "com.microsoft::QuickGelu",
        concat!(
            ms!(),
            "g (float[2, 3] x) => (float[2, 3] y)\n{ y = com.microsoft.QuickGelu (x) }"
        ),
        DType::F32,
        &[2, 3],
    ),
    (
        "com.microsoft::SkipLayerNormalization",
        concat!(
            ms!(),
            "g (float[1, 2, 3] x) => (float[1, 2, 3] y)\n<float[1, 2, 3] s = {1, 2, 3, 4, 5, 6}, float[3] g = {1, 1, 2}>\n{ y = com.microsoft.SkipLayerNormalization (x, s, g) }"
        ),
        DType::F32,
        &[1, 2, 3],
    ),
    (
        "com.microsoft::SkipSimplifiedLayerNormalization",
        concat!(
            ms!(),
            "g (float[1, 2, 3] x) => (float[1, 2, 3] y)\n<float[1, 2, 3] s = {1, 2, 3, 4, 5, 6}, float[3] g = {1, 1, 2}>\n{ y = com.microsoft.SkipSimplifiedLayerNormalization (x, s, g) }"
        ),
        DType::F32,
        &[1, 2, 3],
    ),
    (
        "com.microsoft::FusedConv",
        concat!(
            ms!(),
            "g (float[1, 1, 3, 3] x) => (float[1, 1, 2, 2] y)\n<float[1, 1, 2, 2] w = {1, 2, 3, 4}>\n{ y = com.microsoft.FusedConv <activation: string = \"Relu\"> (x, w) }"
        ),
        DType::F32,
        &[1, 1, 3, 3],
    ),
    (
        "com.microsoft::FusedGemm",
        concat!(
            ms!(),
            "g (float[2, 2] x) => (float[2, 2] y)\n<float[2, 2] w = {1, 2, 3, 4}>\n{ y = com.microsoft.FusedGemm <activation: string = \"Relu\"> (x, w) }"
        ),
        DType::F32,
        &[2, 2],
    ),
    (
        "com.microsoft::FusedMatMul",
        concat!(
            ms!(),
            "g (float[2, 2] x) => (float[2, 2] y)\n<float[2, 2] w = {1, 2, 3, 4}>\n{ y = com.microsoft.FusedMatMul <alpha: float = 2.0> (x, w) }"
        ),
        DType::F32,
        &[2, 2],
    ),
    (
        "com.microsoft::QLinearAdd",
        concat!(
            ms!(),
            "g (uint8[4] x) => (uint8[4] y)\n<float s = {0.1}, uint8 z = {3}>\n{ y = com.microsoft.QLinearAdd (x, s, z, x, s, z, s, z) }"
        ),
        DType::U8,
        &[4],
    ),
    (
        "com.microsoft::QLinearMul",
        concat!(
            ms!(),
            "g (uint8[4] x) => (uint8[4] y)\n<float s = {0.1}, uint8 z = {3}>\n{ y = com.microsoft.QLinearMul (x, s, z, x, s, z, s, z) }"
        ),
        DType::U8,
        &[4],
    ),
    (
        "com.microsoft::QLinearSigmoid",
        concat!(
            ms!(),
            "g (uint8[4] x) => (uint8[4] y)\n<float s = {0.1}, uint8 z = {3}>\n{ y = com.microsoft.QLinearSigmoid (x, s, z, s, z) }"
        ),
        DType::U8,
        &[4],
    ),
    (
        "com.microsoft::QLinearLeakyRelu",
        concat!(
            ms!(),
            "g (uint8[4] x) => (uint8[4] y)\n<float s = {0.1}, uint8 z = {3}>\n{ y = com.microsoft.QLinearLeakyRelu (x, s, z, s, z) }"
        ),
        DType::U8,
        &[4],
    ),
    (
        "com.microsoft::MatMulIntegerToFloat",
        concat!(
            ms!(),
            "g (uint8[2, 2] x) => (float[2, 2] y)\n<int8[2, 2] w = {1, 2, 3, 4}, float s = {0.1}>\n{ y = com.microsoft.MatMulIntegerToFloat (x, w, s, s) }"
        ),
        DType::U8,
        &[2, 2],
    ),
    (
        "com.microsoft::DynamicQuantizeMatMul",
        concat!(
            ms!(),
            "g (float[2, 2] x) => (float[2, 2] y)\n<int8[2, 2] w = {1, 2, 3, 4}, float s = {0.1}>\n{ y = com.microsoft.DynamicQuantizeMatMul (x, w, s) }"
        ),
        DType::F32,
        &[2, 2],
    ),
    (
        "com.microsoft::DynamicQuantizeLSTM",
        concat!(
            ms!(),
            "g (float[2, 1, 1] x) => (float[2, 1, 1, 1] y)\n<int8[1, 1, 4] w = {1, 2, 3, 4}, int8[1, 1, 4] r = {4, 3, 2, 1}, float[1] s = {0.1}, int8[1] z = {0}>\n{ y = com.microsoft.DynamicQuantizeLSTM <hidden_size = 1> (x, w, r, \"\", \"\", \"\", \"\", \"\", s, z, s, z) }"
        ),
        DType::F32,
        &[2, 1, 1],
    ),
    (
        "com.microsoft::RotaryEmbedding",
        concat!(
            ms!(),
            "g (float[1, 2, 4] x) => (float[1, 2, 4] y)\n<int64[1] p = {0}, float[2, 2] c = {1, 1, 0.5, 0.9}, float[2, 2] s = {0, 0, 0.8, 0.1}>\n{ y = com.microsoft.RotaryEmbedding (x, p, c, s) }"
        ),
        DType::F32,
        &[1, 2, 4],
    ),
    (
        "com.microsoft::MatMulNBits",
        concat!(
            ms!(),
            "g (float[1, 16] x) => (float[1, 1] y)\n<uint8[1, 1, 8] b = {1, 2, 3, 4, 5, 6, 7, 8}, float[1, 1] s = {0.1}>\n{ y = com.microsoft.MatMulNBits <K = 16, N = 1, block_size = 16> (x, b, s) }"
        ),
        DType::F32,
        &[1, 16],
    ),
    (
        "com.microsoft::MultiHeadAttention",
        concat!(
            ms!(),
            "g (float[1, 2, 2] q) => (float[1, 2, 2] y)\n<float[1, 2, 2] k = {1, 0, 0, 1}, float[1, 2, 2] v = {0.5, -1, 2, 0.25}>\n{ y = com.microsoft.MultiHeadAttention <num_heads = 1> (q, k, v) }"
        ),
        DType::F32,
        &[1, 2, 2],
    ),
];

/// Revision of the probe: part of the cache file's name, so that a probe that learns more ops
/// replaces the caches written by an older one.
const PROBE_REVISION: u32 = 7;

/// Where the cache file of a backend lives.
pub fn cache_path(name: &str, version: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let clean: String = format!("{name}-{version}-probe{PROBE_REVISION}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Some(
        base.join("mutagraph")
            .join("capabilities")
            .join(format!("{clean}.json")),
    )
}

/// The cached capabilities of `backend`, probing (and caching) them on first use. Without the
/// suite the result is empty with `source = "unprobed"` (nothing is cached then).
pub fn cached(backend: &mut dyn Backend) -> Capabilities {
    let name = backend.name().to_string();
    let version = backend.version();
    let path = cache_path(&name, &version);
    if let Some(p) = &path
        && let Ok(bytes) = std::fs::read(p)
        && let Ok(c) = serde_json::from_slice::<Capabilities>(&bytes)
        && c.version == version
    {
        return c;
    }
    let caps = probe(backend);
    if caps.source == "probed"
        && let Some(p) = &path
        && let Some(dir) = p.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(json) = serde_json::to_vec_pretty(&caps)
    {
        // A failed cache write only costs a later re-probe.
        let _ = mutagraph_ir::model::write_atomic(p, &json);
    }
    caps
}

/// Probes `backend` on the node tests of the suite (no cache).
pub fn probe(backend: &mut dyn Backend) -> Capabilities {
    let mut caps = Capabilities {
        backend: backend.name().to_string(),
        version: backend.version(),
        source: "unprobed".into(),
        ops: BTreeMap::new(),
    };
    let Ok(cases) = crate::suite::discover(&crate::suite::root(), &["node"]) else {
        return caps;
    };
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in cases {
        let Ok(case) = crate::suite::load(&c) else {
            continue;
        };
        let ops = case.op_types();
        if ops.len() != 1 || case.sets.is_empty() {
            continue;
        }
        let inputs = &case.sets[0].inputs;
        if supported(backend, &case.model_bytes, inputs) {
            let dts = seen.entry(ops[0].clone()).or_default();
            for (_, v) in inputs {
                for t in v.tensors() {
                    dts.insert(t.dtype.name().to_string());
                }
            }
        }
    }
    // Ops the suite has no single-op test of: their own small models, on inputs of ones.
    for (op, src, dtype, shape) in EXTRA_PROBES {
        if seen.contains_key(*op) {
            continue;
        }
        let Ok(model) = mutagraph_ir::text::parse_model(src) else {
            continue;
        };
        let n: usize = shape.iter().product();
        let Ok(x) = HostTensor::from_f64s(*dtype, shape.to_vec(), &vec![1.0; n]) else {
            continue;
        };
        let inputs: NamedValues = vec![("x".to_string(), Value::Tensor(x))];
        if supported(backend, &model.to_bytes(), &inputs) {
            seen.entry(op.to_string())
                .or_default()
                .insert(dtype.name().to_string());
        }
    }
    caps.source = "probed".into();
    caps.ops = seen
        .into_iter()
        .map(|(k, v)| (k, v.into_iter().collect()))
        .collect();
    caps
}

/// Whether `model` got past `backend` on `inputs` without an `unsupported` refusal.
fn supported(backend: &mut dyn Backend, model: &[u8], inputs: &NamedValues) -> bool {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut p = backend.prepare(model)?;
        p.run(inputs)
    }));
    match r {
        Ok(Ok(_)) => true,
        Ok(Err(e)) => !e.unsupported,
        // A panic means the op got past the importer: supported, and buggy.
        Err(_) => true,
    }
}
