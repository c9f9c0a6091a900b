//! Every operator ONNX defines in the default domain (`""`, also spelled `ai.onnx`) and in
//! `ai.onnx.ml`: the versions of its schema and those that are deprecated. Validation uses it
//! as `onnx.checker` uses ONNX's schema registry: an op of these domains that ONNX does not
//! define, or not at the model's opset, or only by a deprecated schema there, is an error
//! (an op the table knows but the op registry has no spec for is only not checked further).
//!
//! Generated from the installed `onnx` package's `onnx.defs.get_all_schemas_with_history()`
//! by the script in this module's test (`tests::GENERATOR`), which checks the table against
//! the installed package when its version is [`ONNX_VERSION`] and prints a fresh table when
//! they differ.
//!
//! ONNX Runtime's own schemas in the default domain (LayerNormalization before 17,
//! SimplifiedLayerNormalization), which ORT's transformer optimizer writes, are not ONNX's:
//! their one table is [`ort_default`], and [`status`] answers [`OpStatus::OrtSchema`] for them.

pub mod ort_default;

use crate::registry::FnvMap;

/// The `onnx` package the table was generated from.
pub const ONNX_VERSION: &str = "1.22.0";

/// The highest IR version that package (and this IR: int2/uint2, float8e8m0, float4e2m1)
/// knows: `onnx.IR_VERSION`.
pub const MAX_IR_VERSION: i64 = 13;

/// (domain, op type, the `since_version` of each of its schemas, those of deprecated schemas).
pub const OPS: &[(&str, &str, &[i64], &[i64])] = &[
    ("", "Abs", &[1, 6, 13], &[]),
    ("", "Acos", &[7, 22], &[]),
    ("", "Acosh", &[9, 22], &[]),
    ("", "Add", &[1, 6, 7, 13, 14], &[]),
    ("", "AffineGrid", &[20], &[]),
    ("", "And", &[1, 7], &[]),
    ("", "ArgMax", &[1, 11, 12, 13], &[]),
    ("", "ArgMin", &[1, 11, 12, 13], &[]),
    ("", "Asin", &[7, 22], &[]),
    ("", "Asinh", &[9, 22], &[]),
    ("", "Atan", &[7, 22], &[]),
    ("", "Atanh", &[9, 22], &[]),
    ("", "Attention", &[23, 24], &[]),
    ("", "AveragePool", &[1, 7, 10, 11, 19, 22], &[]),
    ("", "BatchNormalization", &[1, 6, 7, 9, 14, 15], &[]),
    ("", "Bernoulli", &[15, 22], &[]),
    ("", "BitCast", &[26], &[]),
    ("", "BitShift", &[11], &[]),
    ("", "BitwiseAnd", &[18], &[]),
    ("", "BitwiseNot", &[18], &[]),
    ("", "BitwiseOr", &[18], &[]),
    ("", "BitwiseXor", &[18], &[]),
    ("", "BlackmanWindow", &[17], &[]),
    ("", "Cast", &[1, 6, 9, 13, 19, 21, 23, 24, 25], &[]),
    ("", "CastLike", &[15, 19, 21, 23, 24, 25], &[]),
    ("", "CausalConvWithState", &[27], &[]),
    ("", "Ceil", &[1, 6, 13], &[]),
    ("", "Celu", &[12], &[]),
    ("", "CenterCropPad", &[18], &[]),
    ("", "Clip", &[1, 6, 11, 12, 13], &[]),
    ("", "Col2Im", &[18], &[]),
    ("", "Compress", &[9, 11], &[]),
    ("", "Concat", &[1, 4, 11, 13], &[]),
    ("", "ConcatFromSequence", &[11], &[]),
    ("", "Constant", &[1, 9, 11, 12, 13, 19, 21, 23, 24, 25], &[]),
    ("", "ConstantOfShape", &[9, 20, 21, 23, 24, 25], &[]),
    ("", "Conv", &[1, 11, 22], &[]),
    ("", "ConvInteger", &[10], &[]),
    ("", "ConvTranspose", &[1, 11, 22], &[]),
    ("", "Cos", &[7, 22], &[]),
    ("", "Cosh", &[9, 22], &[]),
    ("", "CumProd", &[26], &[]),
    ("", "CumSum", &[11, 14], &[]),
    ("", "DFT", &[17, 20], &[]),
    ("", "DeformConv", &[19, 22], &[]),
    ("", "DepthToSpace", &[1, 11, 13], &[]),
    ("", "DequantizeLinear", &[10, 13, 19, 21, 23, 24, 25], &[]),
    ("", "Det", &[11, 22], &[]),
    ("", "Div", &[1, 6, 7, 13, 14], &[]),
    ("", "Dropout", &[1, 6, 7, 10, 12, 13, 22], &[]),
    ("", "DynamicQuantizeLinear", &[11], &[]),
    ("", "Einsum", &[12], &[]),
    ("", "Elu", &[1, 6, 22], &[]),
    ("", "Equal", &[1, 7, 11, 13, 19], &[]),
    ("", "Erf", &[9, 13], &[]),
    ("", "Exp", &[1, 6, 13], &[]),
    ("", "Expand", &[8, 13], &[]),
    ("", "EyeLike", &[9, 22], &[]),
    ("", "Flatten", &[1, 9, 11, 13, 21, 23, 24, 25], &[]),
    ("", "Floor", &[1, 6, 13], &[]),
    ("", "GRU", &[1, 3, 7, 14, 22], &[]),
    ("", "Gather", &[1, 11, 13], &[]),
    ("", "GatherElements", &[11, 13], &[]),
    ("", "GatherND", &[11, 12, 13], &[]),
    ("", "Gelu", &[20], &[]),
    ("", "Gemm", &[1, 6, 7, 9, 11, 13], &[]),
    ("", "GlobalAveragePool", &[1, 22], &[]),
    ("", "GlobalLpPool", &[1, 2, 22], &[]),
    ("", "GlobalMaxPool", &[1, 22], &[]),
    ("", "Greater", &[1, 7, 9, 13], &[]),
    ("", "GreaterOrEqual", &[12, 16], &[]),
    ("", "GridSample", &[16, 20, 22], &[]),
    ("", "GroupNormalization", &[18, 21], &[18]),
    ("", "HammingWindow", &[17], &[]),
    ("", "HannWindow", &[17], &[]),
    ("", "HardSigmoid", &[1, 6, 22], &[]),
    ("", "HardSwish", &[14, 22], &[]),
    ("", "Hardmax", &[1, 11, 13], &[]),
    ("", "Identity", &[1, 13, 14, 16, 19, 21, 23, 24, 25], &[]),
    ("", "If", &[1, 11, 13, 16, 19, 21, 23, 24, 25], &[]),
    ("", "ImageDecoder", &[20], &[]),
    ("", "InstanceNormalization", &[1, 6, 22], &[]),
    ("", "IsInf", &[10, 20], &[]),
    ("", "IsNaN", &[9, 13, 20], &[]),
    ("", "LRN", &[1, 13], &[]),
    ("", "LSTM", &[1, 7, 14, 22], &[]),
    ("", "LayerNormalization", &[17], &[]),
    ("", "LeakyRelu", &[1, 6, 16], &[]),
    ("", "Less", &[1, 7, 9, 13], &[]),
    ("", "LessOrEqual", &[12, 16], &[]),
    ("", "LinearAttention", &[27], &[]),
    ("", "Log", &[1, 6, 13], &[]),
    ("", "LogSoftmax", &[1, 11, 13], &[]),
    ("", "Loop", &[1, 11, 13, 16, 19, 21, 23, 24, 25], &[]),
    ("", "LpNormalization", &[1, 22], &[]),
    ("", "LpPool", &[1, 2, 11, 18, 22], &[]),
    ("", "MatMul", &[1, 9, 13], &[]),
    ("", "MatMulInteger", &[10], &[]),
    ("", "Max", &[1, 6, 8, 12, 13], &[]),
    ("", "MaxPool", &[1, 8, 10, 11, 12, 22], &[]),
    ("", "MaxRoiPool", &[1, 22], &[]),
    ("", "MaxUnpool", &[9, 11, 22], &[]),
    ("", "Mean", &[1, 6, 8, 13], &[]),
    ("", "MeanVarianceNormalization", &[9, 13], &[]),
    ("", "MelWeightMatrix", &[17], &[]),
    ("", "Min", &[1, 6, 8, 12, 13], &[]),
    ("", "Mish", &[18, 22], &[]),
    ("", "Mod", &[10, 13], &[]),
    ("", "Mul", &[1, 6, 7, 13, 14], &[]),
    ("", "Multinomial", &[7, 22], &[]),
    ("", "Neg", &[1, 6, 13], &[]),
    ("", "NegativeLogLikelihoodLoss", &[12, 13, 22], &[]),
    ("", "NonMaxSuppression", &[10, 11], &[]),
    ("", "NonZero", &[9, 13], &[]),
    ("", "Not", &[1], &[]),
    ("", "OneHot", &[9, 11], &[]),
    ("", "Optional", &[15], &[]),
    ("", "OptionalGetElement", &[15, 18], &[]),
    ("", "OptionalHasElement", &[15, 18], &[]),
    ("", "Or", &[1, 7], &[]),
    ("", "PRelu", &[1, 6, 7, 9, 16], &[]),
    ("", "Pad", &[1, 2, 11, 13, 18, 19, 21, 23, 24, 25], &[]),
    ("", "Pow", &[1, 7, 12, 13, 15], &[]),
    ("", "QLinearConv", &[10], &[]),
    ("", "QLinearMatMul", &[10, 21], &[]),
    ("", "QuantizeLinear", &[10, 13, 19, 21, 23, 24, 25], &[]),
    ("", "RMSNormalization", &[23], &[]),
    ("", "RNN", &[1, 7, 14, 22], &[]),
    ("", "RandomNormal", &[1, 22], &[]),
    ("", "RandomNormalLike", &[1, 22], &[]),
    ("", "RandomUniform", &[1, 22], &[]),
    ("", "RandomUniformLike", &[1, 22], &[]),
    ("", "Range", &[11, 27], &[]),
    ("", "Reciprocal", &[1, 6, 13], &[]),
    ("", "ReduceL1", &[1, 11, 13, 18], &[]),
    ("", "ReduceL2", &[1, 11, 13, 18], &[]),
    ("", "ReduceLogSum", &[1, 11, 13, 18], &[]),
    ("", "ReduceLogSumExp", &[1, 11, 13, 18], &[]),
    ("", "ReduceMax", &[1, 11, 12, 13, 18, 20], &[]),
    ("", "ReduceMean", &[1, 11, 13, 18], &[]),
    ("", "ReduceMin", &[1, 11, 12, 13, 18, 20], &[]),
    ("", "ReduceProd", &[1, 11, 13, 18], &[]),
    ("", "ReduceSum", &[1, 11, 13], &[]),
    ("", "ReduceSumSquare", &[1, 11, 13, 18], &[]),
    ("", "RegexFullMatch", &[20], &[]),
    ("", "Relu", &[1, 6, 13, 14], &[]),
    ("", "Reshape", &[1, 5, 13, 14, 19, 21, 23, 24, 25], &[]),
    ("", "Resize", &[10, 11, 13, 18, 19], &[]),
    ("", "ReverseSequence", &[10], &[]),
    ("", "RoiAlign", &[10, 16, 22], &[]),
    ("", "RotaryEmbedding", &[23], &[]),
    ("", "Round", &[11, 22], &[]),
    ("", "STFT", &[17], &[]),
    ("", "Scan", &[8, 9, 11, 16, 19, 21, 23, 24, 25], &[]),
    ("", "Scatter", &[9, 11], &[11]),
    ("", "ScatterElements", &[11, 13, 16, 18], &[]),
    ("", "ScatterND", &[11, 13, 16, 18], &[]),
    ("", "Selu", &[1, 6, 22], &[]),
    ("", "SequenceAt", &[11], &[]),
    ("", "SequenceConstruct", &[11], &[]),
    ("", "SequenceEmpty", &[11], &[]),
    ("", "SequenceErase", &[11], &[]),
    ("", "SequenceInsert", &[11], &[]),
    ("", "SequenceLength", &[11], &[]),
    ("", "SequenceMap", &[17], &[]),
    ("", "Shape", &[1, 13, 15, 19, 21, 23, 24, 25], &[]),
    ("", "Shrink", &[9], &[]),
    ("", "Sigmoid", &[1, 6, 13], &[]),
    ("", "Sign", &[9, 13], &[]),
    ("", "Sin", &[7, 22], &[]),
    ("", "Sinh", &[9, 22], &[]),
    ("", "Size", &[1, 13, 19, 21, 23, 24, 25], &[]),
    ("", "Slice", &[1, 10, 11, 13], &[]),
    ("", "Softmax", &[1, 11, 13], &[]),
    ("", "SoftmaxCrossEntropyLoss", &[12, 13], &[]),
    ("", "Softplus", &[1, 22], &[]),
    ("", "Softsign", &[1, 22], &[]),
    ("", "SpaceToDepth", &[1, 13], &[]),
    ("", "Split", &[1, 2, 11, 13, 18], &[]),
    ("", "SplitToSequence", &[11, 24], &[]),
    ("", "Sqrt", &[1, 6, 13], &[]),
    ("", "Squeeze", &[1, 11, 13, 21, 23, 24, 25], &[]),
    ("", "StringConcat", &[20], &[]),
    ("", "StringNormalizer", &[10], &[]),
    ("", "StringSplit", &[20], &[]),
    ("", "Sub", &[1, 6, 7, 13, 14], &[]),
    ("", "Sum", &[1, 6, 8, 13], &[]),
    ("", "Swish", &[24], &[]),
    ("", "Tan", &[7, 22], &[]),
    ("", "Tanh", &[1, 6, 13], &[]),
    ("", "TensorScatter", &[24], &[]),
    ("", "TfIdfVectorizer", &[9], &[]),
    ("", "ThresholdedRelu", &[10, 22], &[]),
    ("", "Tile", &[1, 6, 13], &[]),
    ("", "TopK", &[1, 10, 11, 24], &[]),
    ("", "Transpose", &[1, 13, 21, 23, 24, 25], &[]),
    ("", "Trilu", &[14], &[]),
    ("", "Unique", &[11], &[]),
    ("", "Unsqueeze", &[1, 11, 13, 21, 23, 24, 25], &[]),
    ("", "Upsample", &[1, 7, 9, 10], &[10]),
    ("", "Where", &[9, 16], &[]),
    ("", "Xor", &[1, 7], &[]),
    ("ai.onnx.ml", "ArrayFeatureExtractor", &[1], &[]),
    ("ai.onnx.ml", "Binarizer", &[1], &[]),
    ("ai.onnx.ml", "CastMap", &[1], &[]),
    ("ai.onnx.ml", "CategoryMapper", &[1], &[]),
    ("ai.onnx.ml", "DictVectorizer", &[1], &[]),
    ("ai.onnx.ml", "FeatureVectorizer", &[1], &[]),
    ("ai.onnx.ml", "Imputer", &[1], &[]),
    ("ai.onnx.ml", "LabelEncoder", &[1, 2, 4], &[]),
    ("ai.onnx.ml", "LinearClassifier", &[1], &[]),
    ("ai.onnx.ml", "LinearRegressor", &[1], &[]),
    ("ai.onnx.ml", "Normalizer", &[1], &[]),
    ("ai.onnx.ml", "OneHotEncoder", &[1], &[]),
    ("ai.onnx.ml", "SVMClassifier", &[1], &[]),
    ("ai.onnx.ml", "SVMRegressor", &[1], &[]),
    ("ai.onnx.ml", "Scaler", &[1], &[]),
    ("ai.onnx.ml", "TreeEnsemble", &[5], &[]),
    ("ai.onnx.ml", "TreeEnsembleClassifier", &[1, 3, 5], &[5]),
    ("ai.onnx.ml", "TreeEnsembleRegressor", &[1, 3, 5], &[5]),
    ("ai.onnx.ml", "ZipMap", &[1], &[]),
];

/// How an op of an ONNX domain stands at an opset version of that domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpStatus {
    /// Defined, by the schema of this `since_version`.
    Defined(i64),
    /// ONNX defines the op, but only from this version on.
    NotYet(i64),
    /// The schema active at that version (this `since_version`) is deprecated.
    Deprecated(i64),
    /// ONNX defines no op of this name in this domain.
    Unknown,
    /// ONNX does not define the op at that version (not yet, or never), but ONNX Runtime
    /// registers this schema of its own in the default domain ([`ort_default::TABLE`]):
    /// admitted with a warning, never generated.
    OrtSchema(&'static ort_default::OrtSchema),
}

/// Whether `domain` is one whose operators ONNX defines all of ([`OPS`]): the default domain
/// (`""`, `ai.onnx`) and `ai.onnx.ml`.
pub fn is_onnx_domain(domain: &str) -> bool {
    matches!(domain, "" | "ai.onnx" | "ai.onnx.ml")
}

/// How `op` of `domain` (`""` or `ai.onnx` for the default domain) stands at `version`.
pub fn status(domain: &str, op: &str, version: i64) -> OpStatus {
    match onnx_status(domain, op, version) {
        s @ (OpStatus::NotYet(_) | OpStatus::Unknown) => {
            ort_default::lookup(domain, op, version).map_or(s, OpStatus::OrtSchema)
        }
        s => s,
    }
}

/// [`status`] by ONNX's table alone.
fn onnx_status(domain: &str, op: &str, version: i64) -> OpStatus {
    use std::sync::OnceLock;
    // Looked up for every node of every graph validated: hashed, not searched.
    static INDEX: OnceLock<FnvMap<(&'static str, &'static str), usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        OPS.iter()
            .enumerate()
            .map(|(i, (d, o, _, _))| ((*d, *o), i))
            .collect()
    });
    let domain = if domain == "ai.onnx" { "" } else { domain };
    let Some(&(_, _, versions, deprecated)) = index.get(&(domain, op)).map(|&i| &OPS[i]) else {
        return OpStatus::Unknown;
    };
    match versions.iter().rev().find(|&&v| v <= version) {
        None => OpStatus::NotYet(versions[0]),
        Some(&v) if deprecated.contains(&v) => OpStatus::Deprecated(v),
        Some(&v) => OpStatus::Defined(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prints the table's rows from the installed `onnx` package (first line: its version).
    const GENERATOR: &str = r#"
import onnx, onnx.defs
from collections import defaultdict
ops = defaultdict(lambda: ([], []))
for s in onnx.defs.get_all_schemas_with_history():
    if s.domain not in ("", "ai.onnx.ml"):
        continue
    v, d = ops[(s.domain, s.name)]
    v.append(s.since_version)
    if s.deprecated:
        d.append(s.since_version)
print(f"// onnx {onnx.__version__}")
for (dom, name), (v, d) in sorted(ops.items()):
    print(f'    ("{dom}", "{name}", &{sorted(v)}, &{sorted(d)}),')
"#;

    fn rows() -> Vec<String> {
        OPS.iter()
            .map(|(d, o, v, dep)| format!("    (\"{d}\", \"{o}\", &{v:?}, &{dep:?}),"))
            .collect()
    }

    #[test]
    fn the_table_is_sorted_and_answers() {
        assert!(OPS.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
        assert_eq!(status("", "Relu", 17), OpStatus::Defined(14));
        assert_eq!(status("ai.onnx", "Relu", 17), OpStatus::Defined(14));
        assert_eq!(status("", "Gelu", 17), OpStatus::NotYet(20));
        assert_eq!(status("", "Upsample", 10), OpStatus::Deprecated(10));
        assert_eq!(status("", "Upsample", 9), OpStatus::Defined(9));
        assert_eq!(status("", "Frobnicate", 17), OpStatus::Unknown);
        assert_eq!(status("ai.onnx.ml", "Binarizer", 1), OpStatus::Defined(1));
        assert_eq!(status("ai.onnx.ml", "Relu", 3), OpStatus::Unknown);
        let ort = |op: &str| ort_default::TABLE.iter().find(|s| s.op == op).unwrap();
        let ln = "LayerNormalization";
        assert_eq!(status("", ln, 13), OpStatus::OrtSchema(ort(ln)));
        assert_eq!(status("", ln, 17), OpStatus::Defined(17));
        let sln = "SimplifiedLayerNormalization";
        assert_eq!(status("", sln, 21), OpStatus::OrtSchema(ort(sln)));
        assert_eq!(status("com.microsoft", sln, 1), OpStatus::Unknown);
    }

    /// The table is what the installed `onnx` says (skipped without python3 and onnx, or with
    /// another onnx version: then regenerate the table with `GENERATOR` and update
    /// `ONNX_VERSION`).
    #[test]
    fn the_table_matches_the_installed_onnx() {
        let Ok(out) = std::process::Command::new("python3")
            .args(["-c", GENERATOR])
            .output()
        else {
            eprintln!("skipped: no python3");
            return;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let Some(version) = lines.next().and_then(|l| l.strip_prefix("// onnx ")) else {
            eprintln!("skipped: no onnx package");
            return;
        };
        if version != ONNX_VERSION {
            eprintln!("skipped: onnx {version} installed, the table is of {ONNX_VERSION}");
            return;
        }
        let fresh: Vec<&str> = lines.collect();
        assert_eq!(rows(), fresh, "regenerate the table:\n{}", fresh.join("\n"));
    }
}
