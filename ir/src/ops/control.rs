//! Op specs of the control family: If / Loop / Scan, sequences and optionals, random
//! generators, string ops, ImageDecoder, and the preview training ops.
use super::common::*;
use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType::{
    self, BF16, Bool, C64, C128, F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64,
};
use crate::dtype::sets::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::{Dim, TensorType, ValueType};

/// Versions shared by If and Loop.
const IF_LOOP_VERSIONS: &[i64] = &[1, 11, 13, 16, 19, 21, 23, 24, 25];
/// Element types of sequences (no bf16 in most sequence ops).
const SEQ_ELEM: &[DType] = CLASSIC;
/// SplitToSequence also takes bf16.
const SEQ_ELEM_BF16: &[DType] = &[
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
    BF16,
    DType::String,
    Bool,
    C64,
    C128,
];
/// The training preview domain.
const TRAINING: &str = "ai.onnx.preview.training";
/// Buckets of an `axis` attribute: negative, 0, 1, 2 or more.
const AXIS_BUCKETS: &[(i64, i64)] = &[(i64::MIN, -1), (0, 0), (1, 1), (2, i64::MAX)];

/// ONNX codes of a dtype set (legal values of `dtype`-style attributes).
fn codes(set: &[DType]) -> Vec<i64> {
    set.iter().map(|d| d.code() as i64).collect()
}

/// Registers this family.
pub fn register(r: &mut Registry) {
    register_control_flow(r);
    register_sequences(r);
    register_random(r);
    register_strings(r);
    register_training(r);
}

fn register_control_flow(r: &mut Registry) {
    // Heterogeneous variadic ports carry tc "" (their values need not share a dtype, and may be
    // sequences or optionals).
    r.add(
        OpSpec::new("If", IF_LOOP_VERSIONS, Category::ControlFlow)
            .input("cond", "B")
            .var_output("outputs", "", 1)
            .attr(AttrSpec::of("then_branch", AttrKind::Graph).required())
            .attr(AttrSpec::of("else_branch", AttrKind::Graph).required())
            .types("B", BOOL)
            .infer(if_infer),
    );
    r.add(
        OpSpec::new("Loop", IF_LOOP_VERSIONS, Category::ControlFlow)
            .opt_input("M", "I")
            .opt_input("cond", "B")
            .var_input("v_initial", "", 0)
            .var_output("v_final_and_scan_outputs", "", 1)
            .attr(AttrSpec::of("body", AttrKind::Graph).required())
            .types("I", &[I64])
            .types("B", BOOL)
            .infer(loop_infer),
    );
    r.add(
        OpSpec::new(
            "Scan",
            &[8, 9, 11, 16, 19, 21, 23, 24, 25],
            Category::ControlFlow,
        )
        // Opset 8 only: an optional sequence_lens input precedes the variadic one. Later
        // opsets have a single variadic port; `scan_infer` looks at the opset.
        .var_input("initial_state_and_scan_inputs", "", 1)
        .var_output("final_state_and_scan_outputs", "", 1)
        .attr(AttrSpec::of("body", AttrKind::Graph).required())
        .attr(
            AttrSpec::of("num_scan_inputs", AttrKind::Int)
                .required()
                .range(1, i64::MAX)
                .int_buckets(&[(1, 1), (2, 2), (3, i64::MAX)]),
        )
        .attr(
            AttrSpec::of("directions", AttrKind::Ints)
                .one_of_ints(&[0, 1])
                .versions(8, Some(9)),
        )
        .attr(AttrSpec::of("scan_input_axes", AttrKind::Ints).versions(9, None))
        .attr(AttrSpec::of("scan_output_axes", AttrKind::Ints).versions(9, None))
        .attr(
            AttrSpec::of("scan_input_directions", AttrKind::Ints)
                .one_of_ints(&[0, 1])
                .versions(9, None),
        )
        .attr(
            AttrSpec::of("scan_output_directions", AttrKind::Ints)
                .one_of_ints(&[0, 1])
                .versions(9, None),
        )
        .requires(scan_requires)
        .infer(scan_infer),
    );
}

fn register_sequences(r: &mut Registry) {
    r.add(
        OpSpec::new("SequenceConstruct", &[11], Category::Sequence)
            .var_input("inputs", "T", 1)
            .output("output_sequence", "")
            .types("T", SEQ_ELEM)
            .infer(seq_construct_infer),
    );
    r.add(
        OpSpec::new("SequenceEmpty", &[11], Category::Sequence)
            .output("output", "")
            .attr(
                AttrSpec::of("dtype", AttrKind::Int)
                    .one_of_ints(&codes(SEQ_ELEM))
                    .int_buckets(&[(1, 1), (7, 7), (10, 10), (11, 11), (6, 6)]),
            )
            .infer(|c| {
                Ok(vec![ValueType::Sequence(Box::new(tensor(
                    dtype_attr(c, "dtype", F32),
                    None,
                )))])
            }),
    );
    r.add(
        OpSpec::new("SequenceAt", &[11], Category::Sequence)
            .input("input_sequence", "")
            .input("position", "I")
            .output("tensor", "T")
            .types("I", INDEX)
            .types("T", SEQ_ELEM)
            .infer(seq_at_infer),
    );
    r.add(
        OpSpec::new("SequenceInsert", &[11], Category::Sequence)
            .input("input_sequence", "")
            .input("tensor", "T")
            .opt_input("position", "I")
            .output("output_sequence", "")
            .types("T", SEQ_ELEM)
            .types("I", INDEX)
            .infer(seq_insert_infer),
    );
    r.add(
        OpSpec::new("SequenceErase", &[11], Category::Sequence)
            .input("input_sequence", "")
            .opt_input("position", "I")
            .output("output_sequence", "")
            .types("I", INDEX)
            .infer(|c| Ok(vec![seq_arg(c, 0)?])),
    );
    r.add(
        OpSpec::new("SequenceLength", &[11], Category::Sequence)
            .input("input_sequence", "")
            .output("length", "I")
            .types("I", &[I64])
            .infer(|c| {
                seq_arg(c, 0)?;
                Ok(vec![fixed(I64, &[])])
            }),
    );
    r.add(
        OpSpec::new("SplitToSequence", &[11, 24], Category::Sequence)
            .input("input", "T")
            .opt_input("split", "I")
            .output("output_sequence", "")
            .attr(AttrSpec::int("axis", 0).int_buckets(AXIS_BUCKETS))
            .attr(AttrSpec::int("keepdims", 1).one_of_ints(&[0, 1]))
            .types("T", SEQ_ELEM_BF16)
            .types("I", INDEX)
            .infer(split_to_seq_infer),
    );
    r.add(
        OpSpec::new("ConcatFromSequence", &[11], Category::Sequence)
            .input("input_sequence", "")
            .output("concat_result", "T")
            .attr(
                AttrSpec::of("axis", AttrKind::Int)
                    .required()
                    .int_buckets(AXIS_BUCKETS),
            )
            .attr(AttrSpec::int("new_axis", 0).one_of_ints(&[0, 1]))
            .types("T", SEQ_ELEM)
            .infer(concat_from_seq_infer),
    );
    r.add(
        OpSpec::new("SequenceMap", &[17], Category::Sequence)
            .input("input_sequence", "")
            .var_input("additional_inputs", "", 0)
            .var_output("out_sequence", "", 1)
            .attr(AttrSpec::of("body", AttrKind::Graph).required())
            .infer(seq_map_infer),
    );
    r.add(
        OpSpec::new("Optional", &[15], Category::Sequence)
            .opt_input("input", "")
            .output("output", "")
            .attr(AttrSpec::of("type", AttrKind::TypeProto))
            .infer(optional_infer),
    );
    r.add(
        OpSpec::new("OptionalGetElement", &[15, 18], Category::Sequence)
            .input("input", "")
            .output("output", "")
            .infer(optional_get_infer),
    );
    r.add(
        OpSpec::new("OptionalHasElement", &[15, 18], Category::Sequence)
            .opt_input("input", "")
            .output("output", "B")
            .types("B", BOOL)
            .infer(|_| Ok(vec![fixed(Bool, &[])])),
    );
}

fn register_random(r: &mut Registry) {
    let float_codes = codes(FLOAT);
    for name in ["RandomNormal", "RandomUniform"] {
        let (a, b, da, db) = if name == "RandomNormal" {
            ("mean", "scale", 0.0, 1.0)
        } else {
            ("low", "high", 0.0, 1.0)
        };
        r.add(
            OpSpec::new(name, &[1, 22], Category::Random)
                .output("output", "T")
                .attr(AttrSpec::of("shape", AttrKind::Ints).required())
                .attr(AttrSpec::int("dtype", 1).one_of_ints(&float_codes))
                .attr(AttrSpec::float(a, da))
                .attr(AttrSpec::float(b, db))
                .attr(AttrSpec::of("seed", AttrKind::Float).no_buckets())
                .types("T", FLOAT)
                .infer(random_infer),
        );
        let like: &'static str = if name == "RandomNormal" {
            "RandomNormalLike"
        } else {
            "RandomUniformLike"
        };
        r.add(
            OpSpec::new(like, &[1, 22], Category::Random)
                .input("input", "T1")
                .output("output", "T2")
                .attr(AttrSpec::of("dtype", AttrKind::Int).one_of_ints(&float_codes))
                .attr(AttrSpec::float(a, da))
                .attr(AttrSpec::float(b, db))
                .attr(AttrSpec::of("seed", AttrKind::Float).no_buckets())
                .types("T1", SEQ_ELEM_BF16)
                .types("T2", FLOAT)
                .infer(|c| {
                    Ok(vec![tensor(
                        dtype_attr(c, "dtype", c.dtype(0)),
                        c.tensor(0)?.shape,
                    )])
                }),
        );
    }
    r.add(
        OpSpec::new("Bernoulli", &[15, 22], Category::Random)
            .input("input", "T1")
            .output("output", "T2")
            .attr(
                AttrSpec::of("dtype", AttrKind::Int)
                    .one_of_ints(&codes(NUMERIC_BOOL))
                    .int_buckets(&[(1, 1), (11, 11), (9, 9), (7, 7), (10, 10)]),
            )
            .attr(AttrSpec::of("seed", AttrKind::Float).no_buckets())
            .types("T1", FLOAT)
            .types("T2", NUMERIC_BOOL)
            .infer(|c| {
                Ok(vec![tensor(
                    dtype_attr(c, "dtype", c.dtype(0)),
                    c.tensor(0)?.shape,
                )])
            }),
    );
    r.add(
        OpSpec::new("Multinomial", &[7, 22], Category::Random)
            .input("input", "T1")
            .output("output", "T2")
            .attr(AttrSpec::int("dtype", 6).one_of_ints(&[6, 7]))
            .attr(
                AttrSpec::int("sample_size", 1)
                    .range(1, i64::MAX)
                    .int_buckets(&[(1, 1), (2, 4), (5, i64::MAX)]),
            )
            .attr(AttrSpec::of("seed", AttrKind::Float).no_buckets())
            .types("T1", FLOAT)
            .types("T2", INDEX)
            .infer(multinomial_infer),
    );
}

fn register_strings(r: &mut Registry) {
    let string = &[DType::String][..];
    r.add(
        OpSpec::new("StringNormalizer", &[10], Category::Misc)
            .input("X", "tensor(string)")
            .output("Y", "tensor(string)")
            .attr(
                AttrSpec::string("case_change_action", "NONE").one_of(&["LOWER", "UPPER", "NONE"]),
            )
            .attr(AttrSpec::int("is_case_sensitive", 0).one_of_ints(&[0, 1]))
            .attr(AttrSpec::of("locale", AttrKind::String).no_buckets())
            .attr(AttrSpec::of("stopwords", AttrKind::Strings).no_buckets())
            .types("tensor(string)", string)
            .infer(string_normalizer_infer),
    );
    r.add(
        OpSpec::new("TfIdfVectorizer", &[9], Category::Misc)
            .input("X", "T")
            .output("Y", "T1")
            .attr(
                AttrSpec::of("mode", AttrKind::String)
                    .required()
                    .one_of(&["TF", "IDF", "TFIDF"]),
            )
            .attr(
                AttrSpec::of("min_gram_length", AttrKind::Int)
                    .required()
                    .range(1, i64::MAX)
                    .int_buckets(&[(1, 1), (2, 2), (3, i64::MAX)]),
            )
            .attr(
                AttrSpec::of("max_gram_length", AttrKind::Int)
                    .required()
                    .range(1, i64::MAX)
                    .int_buckets(&[(1, 1), (2, 2), (3, i64::MAX)]),
            )
            .attr(
                AttrSpec::of("max_skip_count", AttrKind::Int)
                    .required()
                    .range(0, i64::MAX)
                    .int_buckets(&[(0, 0), (1, 2), (3, i64::MAX)]),
            )
            .attr(
                AttrSpec::of("ngram_counts", AttrKind::Ints)
                    .required()
                    .no_buckets(),
            )
            .attr(
                AttrSpec::of("ngram_indexes", AttrKind::Ints)
                    .required()
                    .no_buckets(),
            )
            .attr(AttrSpec::of("pool_int64s", AttrKind::Ints).no_buckets())
            .attr(AttrSpec::of("pool_strings", AttrKind::Strings).no_buckets())
            .attr(AttrSpec::of("weights", AttrKind::Floats).no_buckets())
            .types("T", &[DType::String, I32, I64])
            .types("T1", &[F32])
            .infer(tfidf_infer),
    );
    r.add(
        OpSpec::new("StringConcat", &[20], Category::Misc)
            .input("X", "T")
            .input("Y", "T")
            .output("Z", "T")
            .types("T", string)
            .infer(|c| broadcast(c, Some(DType::String))),
    );
    r.add(
        OpSpec::new("RegexFullMatch", &[20], Category::Misc)
            .input("X", "T1")
            .output("Y", "T2")
            .attr(AttrSpec::of("pattern", AttrKind::String).no_buckets())
            .types("T1", string)
            .types("T2", BOOL)
            .infer(|c| unary_to(c, Bool)),
    );
    r.add(
        OpSpec::new("StringSplit", &[20], Category::Misc)
            .input("X", "T1")
            .output("Y", "T2")
            .output("Z", "T3")
            .attr(AttrSpec::of("delimiter", AttrKind::String).no_buckets())
            .attr(AttrSpec::of("maxsplit", AttrKind::Int).int_buckets(&[
                (i64::MIN, 0),
                (1, 1),
                (2, i64::MAX),
            ]))
            .types("T1", string)
            .types("T2", string)
            .types("T3", &[I64])
            .infer(|c| {
                let s = c.tensor(0)?.shape;
                let y = s.clone().map(|mut s| {
                    s.push(Dim::Unknown);
                    s
                });
                Ok(vec![tensor(DType::String, y), tensor(I64, s)])
            }),
    );
    r.add(
        OpSpec::new("ImageDecoder", &[20], Category::Misc)
            .input("encoded_stream", "T1")
            .output("image", "T2")
            .attr(AttrSpec::string("pixel_format", "RGB").one_of(&["RGB", "BGR", "Grayscale"]))
            .types("T1", &[U8])
            .types("T2", &[U8])
            .infer(|c| {
                if let Some(r) = c.tensor(0)?.rank()
                    && r != 1
                {
                    return Err(format!(
                        "ImageDecoder needs a 1-D byte stream, found rank {r}"
                    ));
                }
                let ch = if c.string("pixel_format", "RGB") == "Grayscale" {
                    1
                } else {
                    3
                };
                Ok(vec![tensor(
                    U8,
                    Some(vec![Dim::Unknown, Dim::Unknown, Dim::Known(ch)]),
                )])
            }),
    );
}

fn register_training(r: &mut Registry) {
    let f = &[F32, F64][..];
    r.add(
        OpSpec::new("Adagrad", &[1], Category::Misc)
            .domain(TRAINING)
            .input("R", "T1")
            .input("T", "T2")
            .var_input("inputs", "", 1)
            .var_output("outputs", "", 1)
            .attr(AttrSpec::float("decay_factor", 0.0))
            .attr(AttrSpec::float("epsilon", 1e-6))
            .attr(AttrSpec::float("norm_coefficient", 0.0))
            .types("T1", f)
            .types("T2", &[I64])
            .infer(|c| optimizer_infer(c, 3, &[0, 2])),
    );
    r.add(
        OpSpec::new("Adam", &[1], Category::Misc)
            .domain(TRAINING)
            .input("R", "T1")
            .input("T", "T2")
            .var_input("inputs", "", 1)
            .var_output("outputs", "", 1)
            .attr(AttrSpec::float("alpha", 0.9))
            .attr(AttrSpec::float("beta", 0.999))
            .attr(AttrSpec::float("epsilon", 1e-6))
            .attr(AttrSpec::float("norm_coefficient", 0.0))
            .attr(AttrSpec::float("norm_coefficient_post", 0.0))
            .types("T1", f)
            .types("T2", &[I64])
            .infer(|c| optimizer_infer(c, 4, &[0, 2, 3])),
    );
    r.add(
        OpSpec::new("Momentum", &[1], Category::Misc)
            .domain(TRAINING)
            .input("R", "T1")
            .input("T", "T2")
            .var_input("inputs", "", 1)
            .var_output("outputs", "", 1)
            .attr(AttrSpec::of("alpha", AttrKind::Float).required())
            .attr(AttrSpec::of("beta", AttrKind::Float).required())
            .attr(AttrSpec::of("norm_coefficient", AttrKind::Float).required())
            .attr(
                AttrSpec::of("mode", AttrKind::String)
                    .required()
                    .one_of(&["standard", "nesterov"]),
            )
            .types("T1", f)
            .types("T2", &[I64])
            .infer(|c| optimizer_infer(c, 3, &[0, 2])),
    );
    r.add(
        OpSpec::new("Gradient", &[1], Category::Misc)
            .domain(TRAINING)
            .var_input("Inputs", "", 1)
            .var_output("Outputs", "", 1)
            .attr(AttrSpec::of("xs", AttrKind::Strings).required())
            .attr(AttrSpec::of("y", AttrKind::String).required().no_buckets())
            .attr(AttrSpec::of("zs", AttrKind::Strings))
            .infer(gradient_infer),
    );
}

// ---------------------------------------------------------------------------------------------
// Type merging.

/// Merges two dims that describe the same value in different runs: equal facts stay.
fn merge_dim(a: &Dim, b: &Dim) -> Dim {
    if a == b { a.clone() } else { Dim::Unknown }
}

/// Merges two shapes: dimwise, or unknown rank when the ranks differ.
fn merge_shape(a: &Option<Vec<Dim>>, b: &Option<Vec<Dim>>) -> Option<Vec<Dim>> {
    match (a, b) {
        (Some(x), Some(y)) if x.len() == y.len() => {
            Some(x.iter().zip(y).map(|(d, e)| merge_dim(d, e)).collect())
        }
        _ => None,
    }
}

/// A type both `a` and `b` fit (If branches, sequence elements, loop-carried values).
/// An unknown side gives way to the other one; differing dtypes or kinds are an error.
fn merge_types(a: &ValueType, b: &ValueType) -> Result<ValueType, String> {
    Ok(match (a, b) {
        (ValueType::Unknown, x) | (x, ValueType::Unknown) => x.clone(),
        (ValueType::Tensor(x), ValueType::Tensor(y)) => {
            let dtype = match (x.dtype.is_known(), y.dtype.is_known()) {
                (true, true) if x.dtype != y.dtype => {
                    return Err(format!("element types differ: {} and {}", x.dtype, y.dtype));
                }
                (true, _) => x.dtype,
                _ => y.dtype,
            };
            ValueType::Tensor(TensorType {
                dtype,
                shape: merge_shape(&x.shape, &y.shape),
            })
        }
        (ValueType::Sequence(x), ValueType::Sequence(y)) => {
            ValueType::Sequence(Box::new(merge_types(x, y)?))
        }
        (ValueType::Optional(x), ValueType::Optional(y)) => {
            ValueType::Optional(Box::new(merge_types(x, y)?))
        }
        (x, y) if x == y => x.clone(),
        (x, y) => return Err(format!("types differ: {x} and {y}")),
    })
}

/// The type a value keeps across loop iterations, from its initial type and the body's output:
/// facts both agree on. When the body's type is unknown only the element type is kept.
fn loop_carried(init: &ValueType, body: &ValueType) -> Result<ValueType, String> {
    match (init, body) {
        (_, ValueType::Unknown) => Ok(drop_shapes(init)),
        (ValueType::Unknown, _) => Ok(body.clone()),
        // An optional initial value the body unwraps (as ONNX does, the body's form wins).
        (ValueType::Optional(inner), b) if !matches!(b, ValueType::Optional(_)) => {
            loop_carried(inner, b)
        }
        _ => merge_types(init, body),
    }
}

/// The same type with every shape forgotten.
fn drop_shapes(t: &ValueType) -> ValueType {
    match t {
        ValueType::Tensor(x) => tensor(x.dtype, None),
        ValueType::Sequence(e) => ValueType::Sequence(Box::new(drop_shapes(e))),
        ValueType::Optional(e) => ValueType::Optional(Box::new(drop_shapes(e))),
        other => other.clone(),
    }
}

/// Inserts `d` at `axis` (normalized against rank + 1) of a tensor type.
fn insert_dim(t: &ValueType, axis: i64, d: Dim) -> Result<ValueType, String> {
    Ok(match t {
        ValueType::Tensor(x) => {
            let shape = match &x.shape {
                Some(s) => {
                    let a = norm_axis(axis, s.len() + 1)?;
                    let mut s = s.clone();
                    s.insert(a, d);
                    Some(s)
                }
                None => None,
            };
            tensor(x.dtype, shape)
        }
        ValueType::Unknown => ValueType::Unknown,
        other => return Err(format!("a scan output must be a tensor, found {other}")),
    })
}

/// The body's output types (Unknown where the driver gave none).
fn body_outputs(ctx: &InferCtx, attr: &str, n: usize) -> Vec<ValueType> {
    let mut v = ctx.subgraph(attr).cloned().unwrap_or_default();
    v.resize(n.max(v.len()), ValueType::Unknown);
    v
}

// ---------------------------------------------------------------------------------------------
// If / Loop / Scan.

fn if_infer(ctx: &InferCtx) -> Infer {
    let n = ctx.n_outputs();
    let then = body_outputs(ctx, "then_branch", 0);
    let els = body_outputs(ctx, "else_branch", 0);
    if let (Some(t), Some(e)) = (
        ctx.subgraph_def("then_branch"),
        ctx.subgraph_def("else_branch"),
    ) {
        if t.outputs.len() != e.outputs.len() {
            return Err(format!(
                "If branches have {} and {} outputs",
                t.outputs.len(),
                e.outputs.len()
            ));
        }
        if t.outputs.len() != n {
            return Err(format!(
                "If has {n} outputs but its branches have {}",
                t.outputs.len()
            ));
        }
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let a = then.get(i).cloned().unwrap_or(ValueType::Unknown);
        let b = els.get(i).cloned().unwrap_or(ValueType::Unknown);
        out.push(merge_types(&a, &b).map_err(|e| format!("If output {i}: branch {e}"))?);
    }
    Ok(out)
}

fn loop_infer(ctx: &InferCtx) -> Infer {
    let n_carried = ctx.n_inputs().saturating_sub(2);
    let n_out = ctx.n_outputs();
    if let Some(body) = ctx.subgraph_def("body") {
        let (bi, bo) = (body.inputs.len(), body.outputs.len());
        if bi != n_carried + 2 {
            return Err(format!(
                "Loop body takes {bi} inputs, expected 2 + {n_carried} loop-carried"
            ));
        }
        if bo < n_carried + 1 {
            return Err(format!(
                "Loop body has {bo} outputs, expected at least 1 + {n_carried}"
            ));
        }
        if n_out != bo - 1 {
            return Err(format!(
                "Loop has {n_out} outputs, its body gives {} (besides cond)",
                bo - 1
            ));
        }
    }
    let body = body_outputs(ctx, "body", n_out + 1);
    // Iterations: exactly M when M is constant and there is no condition input.
    let iters = match (ctx.has_input(1), ctx.const_i64s(0)) {
        (false, Some(m)) if m.len() == 1 => Dim::Known(m[0].max(0)),
        _ => Dim::Unknown,
    };
    let mut out = Vec::with_capacity(n_out);
    for i in 0..n_out {
        let b = &body[i + 1];
        if i < n_carried {
            let init = ctx.input_type(i + 2);
            out.push(loop_carried(&init, b).map_err(|e| format!("Loop-carried value {i}: {e}"))?);
        } else {
            out.push(insert_dim(b, 0, iters.clone())?);
        }
    }
    Ok(out)
}

fn scan_requires(ctx: &InferCtx) -> Result<(), String> {
    let m = ctx.int("num_scan_inputs", 0);
    let first = if ctx.opset < 9 { 1 } else { 0 };
    let total = ctx.n_inputs().saturating_sub(first) as i64;
    if m < 1 || m > total {
        return Err(format!(
            "Scan num_scan_inputs = {m} but the node has {total} state and scan inputs"
        ));
    }
    Ok(())
}

fn scan_infer(ctx: &InferCtx) -> Infer {
    let old = ctx.opset < 9;
    let first = usize::from(old);
    let m = ctx.int("num_scan_inputs", 0).max(0) as usize;
    let total = ctx.n_inputs().saturating_sub(first);
    if m > total || m == 0 {
        return Err(format!(
            "Scan num_scan_inputs = {m} but the node has {total} state and scan inputs"
        ));
    }
    let n_state = total - m;
    let n_out = ctx.n_outputs();
    if n_out < n_state {
        return Err(format!(
            "Scan has {n_out} outputs, fewer than its {n_state} state values"
        ));
    }
    let k = n_out - n_state;
    if let Some(body) = ctx.subgraph_def("body") {
        if body.inputs.len() != n_state + m {
            return Err(format!(
                "Scan body takes {} inputs, expected {n_state} + {m}",
                body.inputs.len()
            ));
        }
        if body.outputs.len() != n_out {
            return Err(format!(
                "Scan body has {} outputs, the node {n_out}",
                body.outputs.len()
            ));
        }
    }
    let body = body_outputs(ctx, "body", n_out);
    let in_axes = ctx
        .ints("scan_input_axes")
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    let out_axes = ctx
        .ints("scan_output_axes")
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    if !in_axes.is_empty() && in_axes.len() != m {
        return Err(format!(
            "Scan scan_input_axes has {} entries for {m} scan inputs",
            in_axes.len()
        ));
    }
    if !out_axes.is_empty() && out_axes.len() != k {
        return Err(format!(
            "Scan scan_output_axes has {} entries for {k} scan outputs",
            out_axes.len()
        ));
    }
    // Sequence length (and, before opset 9, the batch dim) from the scan inputs.
    let mut seq_len = Dim::Unknown;
    let mut batch = Dim::Unknown;
    for i in 0..m {
        let Ok(t) = ctx.tensor(first + n_state + i) else {
            continue;
        };
        let Some(s) = &t.shape else { continue };
        let d = if old {
            if s.len() < 2 {
                return Err(format!(
                    "Scan input {i} needs rank >= 2 (batch, sequence), found {}",
                    s.len()
                ));
            }
            if batch == Dim::Unknown {
                batch = s[0].clone();
            }
            s[1].clone()
        } else {
            let a = norm_axis(in_axes.get(i).copied().unwrap_or(0), s.len())?;
            s[a].clone()
        };
        if seq_len == Dim::Unknown {
            seq_len = d;
        }
    }
    if old && batch == Dim::Unknown {
        for i in 0..n_state {
            if let Some(d) = ctx
                .tensor(first + i)
                .ok()
                .and_then(|t| t.shape)
                .and_then(|s| s.first().cloned())
            {
                batch = d;
                break;
            }
        }
    }
    let mut out = Vec::with_capacity(n_out);
    for (i, b) in body.iter().enumerate().take(n_out) {
        if i < n_state {
            let init = ctx.input_type(first + i);
            let t = if old {
                insert_dim(b, 0, batch.clone())?
            } else {
                b.clone()
            };
            let t = match t {
                ValueType::Unknown => init,
                t => merge_types(&init, &t).map_err(|e| format!("Scan state {i}: {e}"))?,
            };
            out.push(t);
        } else if old {
            let t = insert_dim(b, 0, seq_len.clone())?;
            out.push(insert_dim(&t, 0, batch.clone())?);
        } else {
            let axis = out_axes.get(i - n_state).copied().unwrap_or(0);
            out.push(insert_dim(b, axis, seq_len.clone())?);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Sequences and optionals.

/// Input `i` as a sequence; its element type (Unknown if the input's type is unknown).
fn seq_elem(ctx: &InferCtx, i: usize) -> Result<ValueType, String> {
    match ctx.input_type(i) {
        ValueType::Sequence(e) => Ok(*e),
        ValueType::Unknown => Ok(ValueType::Unknown),
        other => Err(format!("input {i} must be a sequence, found {other}")),
    }
}

/// Input `i` checked to be a sequence, returned whole.
fn seq_arg(ctx: &InferCtx, i: usize) -> Result<ValueType, String> {
    Ok(ValueType::Sequence(Box::new(seq_elem(ctx, i)?)))
}

fn seq_construct_infer(ctx: &InferCtx) -> Infer {
    let mut elem = ValueType::Unknown;
    for i in 0..ctx.n_inputs() {
        let t = ValueType::Tensor(ctx.tensor(i)?);
        elem = if i == 0 {
            t
        } else {
            merge_types(&elem, &t).map_err(|e| format!("SequenceConstruct input {i}: {e}"))?
        };
    }
    Ok(vec![ValueType::Sequence(Box::new(elem))])
}

fn seq_at_infer(ctx: &InferCtx) -> Infer {
    Ok(vec![seq_elem(ctx, 0)?])
}

fn seq_insert_infer(ctx: &InferCtx) -> Infer {
    let elem = seq_elem(ctx, 0)?;
    let t = ValueType::Tensor(ctx.tensor(1)?);
    // Nothing is known of the elements already there: only the dtype of the new one holds.
    let merged = match elem {
        ValueType::Unknown => drop_shapes(&t),
        elem => merge_types(&elem, &t).map_err(|e| format!("SequenceInsert: {e}"))?,
    };
    Ok(vec![ValueType::Sequence(Box::new(merged))])
}

fn split_to_seq_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let Some(s) = &x.shape else {
        return Ok(vec![ValueType::Sequence(Box::new(tensor(x.dtype, None)))]);
    };
    let a = norm_axis(ctx.int("axis", 0), s.len())?;
    let mut e = s.clone();
    if !ctx.has_input(1) {
        if ctx.int("keepdims", 1) != 0 {
            e[a] = Dim::Known(1);
        } else {
            e.remove(a);
        }
    } else {
        let split = ctx.const_i64s(1);
        let scalar = ctx.tensor(1)?.rank() == Some(0);
        e[a] = match (split, &s[a]) {
            (Some(v), d) if scalar && v.len() == 1 => {
                let k = v[0];
                if k <= 0 {
                    return Err(format!("SplitToSequence split = {k} must be positive"));
                }
                match d {
                    Dim::Known(n) if n % k == 0 => Dim::Known(k),
                    _ => Dim::Unknown,
                }
            }
            (Some(v), d) => {
                if let (Dim::Known(n), true) = (d, !v.is_empty()) {
                    let sum: i64 = v.iter().sum();
                    if sum != *n {
                        return Err(format!(
                            "SplitToSequence split sums to {sum}, axis {a} has size {n}"
                        ));
                    }
                }
                if !v.is_empty() && v.iter().all(|x| *x == v[0]) {
                    Dim::Known(v[0])
                } else {
                    Dim::Unknown
                }
            }
            (None, _) => Dim::Unknown,
        };
    }
    Ok(vec![ValueType::Sequence(Box::new(tensor(
        x.dtype,
        Some(e),
    )))])
}

fn concat_from_seq_infer(ctx: &InferCtx) -> Infer {
    let elem = seq_elem(ctx, 0)?;
    let t = match &elem {
        ValueType::Tensor(t) => t.clone(),
        ValueType::Unknown => TensorType::unranked(DType::Other(0)),
        other => {
            return Err(format!(
                "ConcatFromSequence needs a sequence of tensors, found elements {other}"
            ));
        }
    };
    let new_axis = ctx.int("new_axis", 0) != 0;
    let Some(axis) = ctx.int_opt("axis") else {
        return Err("ConcatFromSequence needs the axis attribute".into());
    };
    let shape = match &t.shape {
        None => None,
        Some(s) => {
            let mut s = s.clone();
            if new_axis {
                let a = norm_axis(axis, s.len() + 1)?;
                s.insert(a, Dim::Unknown);
            } else {
                let a = norm_axis(axis, s.len())?;
                s[a] = Dim::Unknown;
            }
            Some(s)
        }
    };
    Ok(vec![tensor(t.dtype, shape)])
}

fn seq_map_infer(ctx: &InferCtx) -> Infer {
    seq_elem(ctx, 0)?;
    let n = ctx.n_outputs();
    let body = body_outputs(ctx, "body", n);
    Ok(body
        .into_iter()
        .take(n)
        .map(|t| ValueType::Sequence(Box::new(t)))
        .collect())
}

fn optional_infer(ctx: &InferCtx) -> Infer {
    if ctx.has_input(0) {
        return Ok(vec![ValueType::Optional(Box::new(ctx.input_type(0)))]);
    }
    match ctx.attr("type") {
        Some(AttrValue::TypeProto(tp)) => Ok(vec![ValueType::Optional(Box::new(
            ValueType::from_proto(tp),
        ))]),
        _ => Err("Optional without an input needs the type attribute".into()),
    }
}

fn optional_get_infer(ctx: &InferCtx) -> Infer {
    Ok(vec![match ctx.input_type(0) {
        ValueType::Optional(e) => *e,
        // From opset 18 a plain tensor or sequence passes through.
        t @ (ValueType::Tensor(_) | ValueType::Sequence(_)) if ctx.opset >= 18 => t,
        ValueType::Unknown => ValueType::Unknown,
        other => {
            return Err(format!(
                "OptionalGetElement needs an optional, found {other}"
            ));
        }
    }])
}

// ---------------------------------------------------------------------------------------------
// Random, strings, training.

fn random_infer(ctx: &InferCtx) -> Infer {
    let dt = dtype_attr(ctx, "dtype", F32);
    let Some(shape) = ctx.ints("shape") else {
        return Err("the shape attribute is missing".into());
    };
    if let Some(d) = shape.iter().find(|d| **d < 0) {
        return Err(format!("shape {shape:?} has negative dim {d}"));
    }
    Ok(vec![fixed(dt, shape)])
}

fn multinomial_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let dt = dtype_attr(ctx, "dtype", I32);
    let n = ctx.int("sample_size", 1);
    let shape = match &x.shape {
        Some(s) if s.len() == 2 => Some(vec![s[0].clone(), Dim::Known(n)]),
        Some(s) => {
            return Err(format!(
                "Multinomial input must be [batch, classes], found rank {}",
                s.len()
            ));
        }
        None => Some(vec![Dim::Unknown, Dim::Known(n)]),
    };
    Ok(vec![tensor(dt, shape)])
}

fn string_normalizer_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    // Stopwords may drop entries; without them every entry stays.
    let keeps = ctx
        .attr("stopwords")
        .is_none_or(|s| matches!(s, AttrValue::Strings(v) if v.is_empty()));
    let shape = match &x.shape {
        None => None,
        Some(s) => {
            if s.is_empty() || s.len() > 2 {
                return Err(format!(
                    "StringNormalizer needs [C] or [1, C], found rank {}",
                    s.len()
                ));
            }
            if let (2, Dim::Known(b)) = (s.len(), &s[0])
                && *b != 1
            {
                return Err(format!(
                    "StringNormalizer needs [1, C] for 2-D input, found [{b}, ..]"
                ));
            }
            let mut s = s.clone();
            if !keeps {
                *s.last_mut().unwrap() = Dim::Unknown;
            }
            Some(s)
        }
    };
    Ok(vec![tensor(DType::String, shape)])
}

fn tfidf_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let width = ctx
        .ints("ngram_indexes")
        .and_then(|v| v.iter().max().map(|m| Dim::Known(m + 1)))
        .unwrap_or(Dim::Unknown);
    let shape = match &x.shape {
        None => None,
        Some(s) if s.len() == 1 || s.is_empty() => Some(vec![width]),
        Some(s) if s.len() == 2 => Some(vec![s[0].clone(), width]),
        Some(s) => {
            return Err(format!(
                "TfIdfVectorizer needs [C] or [N, C], found rank {}",
                s.len()
            ));
        }
    };
    Ok(vec![tensor(F32, shape)])
}

/// Optimizers: inputs R, T, then `groups` lists of n tensors (X first); outputs are the lists
/// named by `out_groups`, each of the type of that input list.
fn optimizer_infer(ctx: &InferCtx, groups: usize, out_groups: &[usize]) -> Infer {
    let rest = ctx.n_inputs().saturating_sub(2);
    if rest == 0 || !rest.is_multiple_of(groups) {
        return Err(format!(
            "{} takes R, T and {groups} lists of equal length, found {rest} tensors",
            ctx.node.op_type
        ));
    }
    let n = rest / groups;
    let mut out = Vec::new();
    for g in out_groups {
        for i in 0..n {
            out.push(ValueType::Tensor(ctx.tensor(2 + g * n + i)?));
        }
    }
    if ctx.n_outputs() > out.len() {
        return Err(format!(
            "{} gives {} outputs, found {}",
            ctx.node.op_type,
            out.len(),
            ctx.n_outputs()
        ));
    }
    Ok(out)
}

fn gradient_infer(ctx: &InferCtx) -> Infer {
    // One gradient per name in `xs`, shaped like the input fed for it.
    let xs = match ctx.attr("xs") {
        Some(AttrValue::Strings(v)) => v.len(),
        _ => 0,
    };
    if xs != ctx.n_outputs() {
        return Err(format!(
            "Gradient has {} outputs for {xs} names in xs",
            ctx.n_outputs()
        ));
    }
    Ok((0..xs)
        .map(|i| match ctx.input_type(i) {
            ValueType::Tensor(t) => tensor(t.dtype, t.shape),
            _ => ValueType::Unknown,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Node;
    use std::collections::HashMap;

    fn t(dt: DType, dims: &[i64]) -> Option<ValueType> {
        Some(fixed(dt, dims))
    }

    #[test]
    fn merging_branch_types() {
        let a = fixed(F32, &[2, 3]);
        let b = fixed(F32, &[2, 4]);
        assert_eq!(
            merge_types(&a, &b).unwrap(),
            tensor(F32, Some(vec![Dim::Known(2), Dim::Unknown]))
        );
        assert_eq!(
            merge_types(&a, &fixed(F32, &[2])).unwrap(),
            tensor(F32, None)
        );
        assert!(merge_types(&a, &fixed(I64, &[2, 3])).is_err());
        let s = ValueType::Sequence(Box::new(a.clone()));
        assert!(merge_types(&s, &a).is_err());
        assert_eq!(
            loop_carried(&a, &ValueType::Unknown).unwrap(),
            tensor(F32, None)
        );
        let opt = ValueType::Optional(Box::new(s.clone()));
        assert_eq!(loop_carried(&opt, &s).unwrap(), s);
    }

    #[test]
    fn loop_outputs_carried_then_scanned() {
        let n = Node::new("Loop", &["", "", "y"], &["y_final", "scan"]);
        let mut subs = HashMap::new();
        subs.insert(
            "body".to_string(),
            vec![vec![
                fixed(Bool, &[]),
                fixed(F32, &[1]),
                fixed(F32, &[1, 4]),
            ]],
        );
        let mut consts = vec![Some(i64_tensor(&[], vec![5])), None, None];
        let ctx = InferCtx {
            node: &n,
            opset: 13,
            inputs: crate::registry::owned_types(vec![t(I64, &[]), None, t(F32, &[1])]),
            consts: crate::registry::owned(consts.clone()),
            subgraph_outputs: subs.clone(),
        };
        let out = loop_infer(&ctx).unwrap();
        assert_eq!(out[0], fixed(F32, &[1]));
        assert_eq!(out[1], fixed(F32, &[5, 1, 4]));
        // With a condition input the trip count is unknown.
        consts[1] = None;
        let ctx = InferCtx {
            node: &n,
            opset: 13,
            inputs: crate::registry::owned_types(vec![t(I64, &[]), t(Bool, &[]), t(F32, &[1])]),
            consts: crate::registry::owned(consts),
            subgraph_outputs: subs,
        };
        assert_eq!(
            loop_infer(&ctx).unwrap()[1],
            tensor(F32, Some(vec![Dim::Unknown, Dim::Known(1), Dim::Known(4)]))
        );
    }

    #[test]
    fn scan_inserts_sequence_dim() {
        let n = Node::new("Scan", &["init", "x"], &["s", "z"])
            .with_attr("num_scan_inputs", AttrValue::Int(1))
            .with_attr("scan_input_axes", AttrValue::Ints(vec![1]))
            .with_attr("scan_output_axes", AttrValue::Ints(vec![-1]));
        let mut subs = HashMap::new();
        subs.insert(
            "body".to_string(),
            vec![vec![fixed(F32, &[2]), fixed(F32, &[2])]],
        );
        let ctx = InferCtx {
            node: &n,
            opset: 11,
            inputs: crate::registry::owned_types(vec![t(F32, &[2]), t(F32, &[2, 7])]),
            consts: vec![None, None],
            subgraph_outputs: subs,
        };
        let out = scan_infer(&ctx).unwrap();
        assert_eq!(out[0], fixed(F32, &[2]));
        assert_eq!(out[1], fixed(F32, &[2, 7]));
    }

    #[test]
    fn split_to_sequence_split_forms() {
        let n = Node::new("SplitToSequence", &["x", "s"], &["y"]);
        let run = |split: crate::tensor::Tensor| {
            let st = ValueType::Tensor(crate::tensor::TensorExt::tensor_type(&split));
            let ctx = InferCtx {
                node: &n,
                opset: 13,
                inputs: crate::registry::owned_types(vec![t(F32, &[6, 4]), Some(st)]),
                consts: crate::registry::owned(vec![None, Some(split)]),
                subgraph_outputs: HashMap::new(),
            };
            split_to_seq_infer(&ctx)
        };
        let seq = |dims: Vec<Dim>| vec![ValueType::Sequence(Box::new(tensor(F32, Some(dims))))];
        assert_eq!(
            run(i64_tensor(&[], vec![3])).unwrap(),
            seq(vec![Dim::Known(3), Dim::Known(4)])
        );
        assert_eq!(
            run(i64_tensor(&[], vec![4])).unwrap(),
            seq(vec![Dim::Unknown, Dim::Known(4)])
        );
        assert_eq!(
            run(i64_vec(vec![2, 4])).unwrap(),
            seq(vec![Dim::Unknown, Dim::Known(4)])
        );
        assert!(run(i64_vec(vec![2, 3])).is_err());
    }
}
