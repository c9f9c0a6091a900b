//! A self-contained reproduction of a burn finding: a cargo project whose `main.rs` calls
//! burn's tensor API the way this interpreter ran the minimized model's one node ([`super::ops`]:
//! every tensor held at rank [`R`], the ONNX shape padded on the left with ones), compares the
//! result with the expected values and prints `REPRODUCED` or `NOT REPRODUCED`. burn has no
//! ONNX runtime and no Python API: this is how a burn maintainer sees the bug without mutagraph.
//!
//! The ops covered are those whose interpreter code is a direct call of burn's API (unary and
//! parameterized activations, Softmax / LogSoftmax, the float reductions, 1-D / 2-D MaxPool and
//! AveragePool with explicit pads, 1-D / 2-D Conv and ConvTranspose with explicit pads,
//! element-wise binary arithmetic and Mod on floats or integers, Gemm, MatMul on floats or
//! integers, Trilu, MeanVarianceNormalization and InstanceNormalization as burn's `mean_dim`
//! over each axis, OneHot as burn's `one_hot_fill`, sorted TopK as its `topk_with_indices`),
//! and those ops after one of the [`PRODUCERS`] whose value burn holds in a layout of its own (a Transpose's permuted view, a
//! OneHot, a GatherElements' gathered tensor); for the others no project is written and the
//! report points at `mutagraph recheck`.
//! That includes the recurrent layers (RNN, GRU, LSTM) and the control-flow, sequence and
//! optional ops (If, Loop, Scan, Sequence*, Optional*): the interpreter runs them as a loop of
//! burn calls per time step or as subgraphs interpreted node by node, not as one call of
//! burn's API that a few lines could show a burn maintainer.
//! f32 models run on `NdArray<f32>`, f64 models on `NdArray<f64>`, as the interpreter does. A
//! panic inside burn is caught and printed: for a crash finding it is the reproduction.
use super::BURN_VERSION;
use super::tensor::R;
use crate::value::{HostTensor, NamedValues};
use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;

/// Largest input written into the source.
const MAX_ELEMENTS: usize = 4096;

/// The files of a reproduction project.
#[derive(Clone, Debug, PartialEq)]
pub struct Project {
    /// `Cargo.toml`.
    pub cargo_toml: String,
    /// `src/main.rs`.
    pub main_rs: String,
}

/// What the project must show.
pub struct Expect<'a> {
    /// The expected output of the node (the f64 reference's, in the declared type).
    pub expected: &'a HostTensor,
    /// Relative and absolute tolerance.
    pub tolerance: (f64, f64),
    /// `shape` when the bug is a wrong output shape, else values.
    pub symptom: &'a str,
    /// The report's title.
    pub title: &'a str,
}

/// `x` as a Rust literal of float type `ty` (`f32` or `f64`; NaN and the infinities as the
/// type's constants).
fn float_literal(x: f64, ty: &str) -> String {
    if x.is_nan() {
        format!("{ty}::NAN")
    } else if x.is_infinite() {
        let sign = if x > 0.0 { "" } else { "NEG_" };
        format!("{ty}::{sign}INFINITY")
    } else if ty == "f32" {
        format!("{:?}_f32", x as f32)
    } else {
        format!("{x:?}_f64")
    }
}

/// The values of `t` as Rust literals of element type `ty` (`f32`, `f64` or `i64`).
fn literal_list(t: &HostTensor, ty: &str) -> Option<String> {
    let items: Vec<String> = if ty == "i64" {
        t.to_i64s()?.iter().map(|x| format!("{x}_i64")).collect()
    } else {
        t.to_f64s()?.iter().map(|&x| float_literal(x, ty)).collect()
    };
    Some(items.join(", "))
}

/// Dimensions (or axes) as the items of a Rust array.
/// `var` reshaped to `dims` as the interpreter does it (its `ReshapeExact`): burn reads a 0 in
/// a reshape target as "keep this axis", so a tensor with an empty axis is made afresh.
/// `kind`: `""` or `", Int"`.
fn reshape_expr(var: &str, dims: &[usize], kind: &str) -> String {
    if dims.contains(&0) {
        format!(
            "Tensor::<B, {}{kind}>::empty([{}], &{var}.device())",
            dims.len(),
            dims_list(dims)
        )
    } else {
        format!("{var}.reshape([{}])", dims_list(dims))
    }
}

fn dims_list(s: &[usize]) -> String {
    s.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn f64_list(v: &[f64]) -> String {
    v.iter()
        .map(|&x| float_literal(x, "f64"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The burn axis of ONNX axis `a` of a rank-`r` tensor held at rank [`R`].
fn bax(r: usize, a: usize) -> usize {
    R - r + a
}

fn padded(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; R - shape.len()];
    s.extend_from_slice(shape);
    s
}

/// The node's value in input slot `i` (a graph input or a weight).
fn input(model: &Model, inputs: &NamedValues, node: &Node, i: usize) -> Option<HostTensor> {
    let name = node.inputs.get(i).filter(|n| !n.is_empty())?;
    crate::value::input_or_weight(model, inputs, name)
}

/// The statements computing `y` from `x` (and `z`, the second input, and `c`, the third) for
/// `node`, and the rank of `y` as burn holds it.
fn body(
    node: &Node,
    x: &HostTensor,
    second: Option<&HostTensor>,
    third: Option<&HostTensor>,
) -> Option<(String, usize)> {
    match node.op_type.as_str() {
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1"
        | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => {
            reduce_body(node, x, second)
        }
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" => binary_body(node, x, second),
        "Trilu" => trilu_body(node, x, second),
        "Gemm" => gemm_body(node, x, second),
        "MatMul" => matmul::matmul_body(x, second?),
        "MaxPool" | "AveragePool" => window::pool_body(node, x),
        "Conv" | "ConvTranspose" => window::conv_body(node, x, second?),
        "MeanVarianceNormalization" => norm::mvn_body(node, x),
        "InstanceNormalization" => norm::instance_norm_body(node, x, second?, third),
        _ => unary_body(node, x),
    }
}

/// [`body`] of the one-input element-wise ops and Softmax / LogSoftmax.
fn unary_body(node: &Node, x: &HostTensor) -> Option<(String, usize)> {
    let a = &node.attributes;
    let r = x.shape.len();
    let op = node.op_type.as_str();
    let unary = |call: &str| Some((format!("    let y = {call};\n"), R));
    match op {
        "Sqrt" | "Exp" | "Log" | "Sin" | "Cos" | "Tan" | "Asin" | "Acos" | "Atan" | "Sinh"
        | "Cosh" | "Asinh" | "Acosh" | "Atanh" | "Erf" | "Floor" | "Ceil" | "Round" | "Abs"
        | "Neg" => unary(&format!("x.{}()", op.to_lowercase())),
        "Reciprocal" => unary("x.recip()"),
        "Tanh" => unary("act::tanh(x)"),
        "Relu" => unary("act::relu(x)"),
        "Sigmoid" => unary("act::sigmoid(x)"),
        "Softsign" => unary("act::softsign(x)"),
        "Mish" => unary("act::mish(x)"),
        "HardSwish" => unary("act::hard_swish(x)"),
        "Softplus" => unary("act::softplus(x, 1.0)"),
        "LeakyRelu" => unary(&format!(
            "act::leaky_relu(x, {:?})",
            a.float("alpha", 0.01) as f64
        )),
        "Elu" => unary(&format!("act::elu(x, {:?})", a.float("alpha", 1.0) as f64)),
        "Celu" => unary(&format!("act::celu(x, {:?})", a.float("alpha", 1.0) as f64)),
        "Shrink" => unary(&format!(
            "act::shrink(x, {:?}, {:?})",
            a.float("lambd", 0.5) as f64,
            a.float("bias", 0.0) as f64
        )),
        "ThresholdedRelu" => unary(&format!(
            "act::thresholded_relu(x, {:?})",
            a.float("alpha", 1.0) as f64
        )),
        "HardSigmoid" => unary(&format!(
            "act::hard_sigmoid(x, {:?}, {:?})",
            a.float("alpha", 0.2) as f64,
            a.float("beta", 0.5) as f64
        )),
        "Swish" => unary(&format!(
            "act::sigmoid(x.clone().mul_scalar({:?})).mul(x)",
            a.float("alpha", 1.0) as f64
        )),
        "LpNormalization" => {
            let r = x.shape.len();
            let axis = a.int("axis", -1);
            let axis = usize::try_from(if axis < 0 { axis + r as i64 } else { axis })
                .ok()
                .filter(|&a| a < r)?;
            let d = bax(r, axis);
            let nrm = match a.int("p", 2) {
                1 => format!("x.clone().abs().sum_dim({d})"),
                _ => format!("x.clone().mul(x.clone()).sum_dim({d}).sqrt()"),
            };
            Some((
                format!(
                    "    let nrm = {nrm};\n    \
                     // a zero norm divides by one (the slice stays zero)\n    \
                     let nrm = nrm.clone().add(nrm.equal_elem(0.0).float());\n    \
                     let y = x.div(nrm);\n"
                ),
                R,
            ))
        }
        "Gelu" if a.string("approximate", "none") == "tanh" => unary("act::gelu_approximate(x)"),
        "Gelu" => unary("act::gelu(x)"),
        "Softmax" | "LogSoftmax" => {
            let axis = a.int("axis", -1);
            let axis = if axis < 0 { axis + r as i64 } else { axis } as usize;
            let f = if op == "Softmax" {
                "softmax"
            } else {
                "log_softmax"
            };
            unary(&format!("act::{f}(x, {})", bax(r, axis)))
        }
        _ => None,
    }
}

/// [`body`] of the Reduce* ops.
fn reduce_body(
    node: &Node,
    x: &HostTensor,
    second: Option<&HostTensor>,
) -> Option<(String, usize)> {
    let a = &node.attributes;
    let r = x.shape.len();
    let op = node.op_type.as_str();
    let axes: Vec<usize> = match (a.ints("axes"), second) {
        (Some(v), _) => v.to_vec(),
        (None, Some(t)) => t.to_i64s()?,
        (None, None) => (0..r as i64).collect(),
    }
    .into_iter()
    .map(|v| if v < 0 { v + r as i64 } else { v } as usize)
    .collect();
    if axes.iter().any(|&v| v >= r) || x.num_elements() == 0 {
        return None;
    }
    let mut s = String::from("    let mut t = x;\n");
    match op {
        "ReduceL1" => s.push_str("    t = t.abs();\n"),
        "ReduceL2" | "ReduceSumSquare" => s.push_str("    t = t.clone().mul(t);\n"),
        "ReduceLogSumExp" => s.push_str("    t = t.exp();\n"),
        _ => {}
    }
    let call = match op {
        "ReduceMean" => "mean_dim",
        "ReduceMax" => "max_dim",
        "ReduceMin" => "min_dim",
        "ReduceProd" => "prod_dim",
        _ => "sum_dim",
    };
    for &d in &axes {
        s.push_str(&format!("    t = t.{call}({});\n", bax(r, d)));
    }
    match op {
        "ReduceL2" => s.push_str("    t = t.sqrt();\n"),
        "ReduceLogSum" | "ReduceLogSumExp" => s.push_str("    t = t.log();\n"),
        _ => {}
    }
    // The reduced axes are kept as ones; without keepdims they go (a reshape).
    let out: Vec<usize> = if a.int("keepdims", 1) != 0 {
        (0..r)
            .map(|i| if axes.contains(&i) { 1 } else { x.shape[i] })
            .collect()
    } else {
        (0..r)
            .filter(|i| !axes.contains(i))
            .map(|i| x.shape[i])
            .collect()
    };
    s.push_str(&format!(
        "    let y = {};\n",
        reshape_expr("t", &padded(&out), "")
    ));
    Some((s, R))
}

/// [`body`] of Add, Sub, Mul, Div, Pow and Mod.
fn binary_body(
    node: &Node,
    x: &HostTensor,
    second: Option<&HostTensor>,
) -> Option<(String, usize)> {
    let a = &node.attributes;
    let op = node.op_type.as_str();
    let z = second?;
    if z.shape.len() > R || (op == "Pow" && x.dtype.is_int()) {
        return None;
    }
    let fmod = a.int("fmod", 0) != 0;
    let call = match op {
        "Add" => "x.add(z)",
        "Sub" => "x.sub(z)",
        "Mul" => "x.mul(z)",
        "Div" => "x.div(z)",
        "Pow" => "x.powf(z)",
        // the interpreter's Mod: burn's remainder (sign of the divisor), or for fmod
        // on integers x - trunc(x / z) * z
        _ if !fmod => "x.remainder(z)",
        _ if x.dtype.is_int() => "x.clone().sub(x.div(z.clone()).mul(z))",
        _ => "x.fmod(z)",
    };
    Some((format!("    let y = {call};\n"), R))
}

/// [`body`] of Gemm, as the interpreter computes it: A (`x`) and B (`z`) swapped when
/// transposed, burn's matmul, alpha, then C (`c`, when the node has it) times beta.
fn gemm_body(node: &Node, x: &HostTensor, second: Option<&HostTensor>) -> Option<(String, usize)> {
    let a = &node.attributes;
    if x.shape.len() != 2 || second?.shape.len() != 2 {
        return None;
    }
    let swap = format!("swap_dims({}, {})", R - 2, R - 1);
    let mut s = String::new();
    if a.int("transA", 0) != 0 {
        s.push_str(&format!("    let x = x.{swap};\n"));
    }
    if a.int("transB", 0) != 0 {
        s.push_str(&format!("    let z = z.{swap};\n"));
    }
    s.push_str("    let y = x.matmul(z);\n");
    let (alpha, beta) = (a.float("alpha", 1.0) as f64, a.float("beta", 1.0) as f64);
    if alpha != 1.0 {
        s.push_str(&format!("    let y = y.mul_scalar({alpha:?});\n"));
    }
    if node.inputs.get(2).is_some_and(|c| !c.is_empty()) {
        match beta {
            1.0 => s.push_str("    let y = y.add(c);\n"),
            _ => s.push_str(&format!("    let y = y.add(c.mul_scalar({beta:?}));\n")),
        }
    }
    Some((s, R))
}

/// [`body`] of Trilu.
fn trilu_body(node: &Node, x: &HostTensor, second: Option<&HostTensor>) -> Option<(String, usize)> {
    let a = &node.attributes;
    let r = x.shape.len();
    if r < 2 {
        return None;
    }
    let k = second
        .and_then(|t| t.to_i64s())
        .and_then(|v| v.first().copied());
    let f = if a.int("upper", 1) != 0 {
        "triu"
    } else {
        "tril"
    };
    Some((format!("    let y = x.{f}({});\n", k.unwrap_or(0)), R))
}

/// What a project's `main` is made of.
struct Plan {
    /// burn's float element type (`f32` or `f64`), that of the values written (that or
    /// `i64`) and their tensor kind (`""` or `", Int"`).
    float: &'static str,
    elem: &'static str,
    kind: &'static str,
    /// The statements writing the inputs (before the caught panic).
    inputs: String,
    /// The statements computing `y` (inside it), and the rank burn holds `y` at.
    stmts: String,
    held_rank: usize,
}

/// The project reproducing `expect` on the model's one node, when the node is one of the ops
/// covered and the values it reads are all f32, all f64, or (arithmetic, MatMul) all
/// integers. A model of two nodes, one of the [`PRODUCERS`] feeding the node's first input, is
/// reproduced with the producer too (burn's view or layout of its value; the value held
/// twice, as the interpreter holds every value it computed).
pub fn project(model: &Model, inputs: &NamedValues, expect: &Expect) -> Option<Project> {
    let (node, producer) = reproduced(model, inputs)?;
    let plan = match (&producer, node.op_type.as_str()) {
        (None, "OneHot") => onehot::OneHot::of(model, inputs, node)?.plan(),
        (None, "TopK") => topk::plan(model, inputs, node, expect.expected.dtype == DType::I64)?,
        _ => node_plan(model, inputs, node, producer.as_ref())?,
    };
    finish(&plan, node, expect)
}

/// The calls of burn's tensor API (`abs`, `sum_dim`, `act::softsign`) that the interpreter
/// runs the reproduced node with (see [`project`]), in order, without the bookkeeping ones
/// (`clone`, `reshape`, `float`): what a burn maintainer reads where a title names the
/// model's op (ReduceL1 is `abs` then `sum_dim`). Empty when no project would be written.
pub fn burn_calls(model: &Model, inputs: &NamedValues) -> Vec<String> {
    if let Some((node, producer)) = reproduced(model, inputs)
        && let Some(plan) = node_plan(model, inputs, node, producer.as_ref())
    {
        return calls_in(&plan.stmts);
    }
    last_node_calls(model, inputs).unwrap_or_default()
}

/// The calls of the model's last node on a stand-in of its first input's inferred type: the
/// calls depend on the node's attributes and ranks, not on the values (round 15: ReduceL1
/// after a Resize, a producer no project writes, was titled without them).
fn last_node_calls(model: &Model, inputs: &NamedValues) -> Option<Vec<String>> {
    let order = model.graph.topo_order().ok()?;
    let node = model.graph.node(*order.last()?)?;
    let ty = model.graph.value_type(node.inputs.first()?);
    let t = ty.tensor()?;
    let dims = t.static_dims()?;
    let shape: Vec<usize> = dims
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    let n: usize = shape.iter().product();
    let data = match t.dtype {
        DType::F32 => crate::value::Data::F32(vec![1.0; n]),
        DType::F64 => crate::value::Data::F64(vec![1.0; n]),
        _ => return None,
    };
    let x = HostTensor::new(shape, data);
    let (second, third) = (input(model, inputs, node, 1), input(model, inputs, node, 2));
    let (stmts, _) = body(node, &x, second.as_ref(), third.as_ref())?;
    Some(calls_in(&stmts))
}

/// The method and `act::` calls in Rust statements, first use order.
fn calls_in(stmts: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let b = stmts.as_bytes();
    for (i, _) in stmts.match_indices('(') {
        let start = stmts[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |k| k + 1);
        let name = &stmts[start..i];
        let act = stmts[..start].ends_with("act::");
        let method = start > 0 && b[start - 1] == b'.';
        let call = match (act, method) {
            (true, _) => format!("act::{name}"),
            (false, true) => name.to_string(),
            _ => continue,
        };
        let bookkeeping = matches!(name, "clone" | "reshape" | "float" | "int" | "into_data");
        if !name.is_empty() && !bookkeeping && !out.contains(&call) {
            out.push(call);
        }
    }
    out
}

/// The node reproduced (the model's one node, or the second of two) and its producer.
fn reproduced<'m>(model: &'m Model, inputs: &NamedValues) -> Option<(&'m Node, Option<Producer>)> {
    let order = model.graph.topo_order().ok()?;
    match order.as_slice() {
        [id] => Some((model.graph.node(*id)?, None)),
        [p, id] => {
            let (p, node) = (model.graph.node(*p)?, model.graph.node(*id)?);
            if node.inputs.first() != p.outputs.first() {
                return None;
            }
            Some((node, Some(Producer::of(model, inputs, p)?)))
        }
        _ => None,
    }
}

/// Whether the interpreter runs the op on integers as on floats (burn's Int tensors).
fn on_ints(op: &str) -> bool {
    matches!(op, "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "MatMul")
}

/// The [`Plan`] of a node whose first input is written as `x` (or made by its producer).
fn node_plan(
    model: &Model,
    inputs: &NamedValues,
    node: &Node,
    producer: Option<&Producer>,
) -> Option<Plan> {
    let x = match producer {
        Some(p) => p.output()?,
        None => input(model, inputs, node, 0)?,
    };
    let ints = on_ints(&node.op_type);
    // ops whose second input (and a bias, the third) is a tensor operand the project writes
    let operands = ints || has_bias(&node.op_type);
    // burn's element type for the model: the interpreter's choice
    let (elem, kind) = match x.dtype {
        DType::F32 => ("f32", ""),
        DType::F64 => ("f64", ""),
        d if ints && d.is_int() && d != DType::U64 => ("i64", ", Int"),
        _ => return None,
    };
    if x.shape.len() > R || x.num_elements() > MAX_ELEMENTS {
        return None;
    }
    let second = input(model, inputs, node, 1);
    if operands
        && second
            .as_ref()
            .is_none_or(|z| z.dtype != x.dtype || z.num_elements() > MAX_ELEMENTS)
    {
        return None;
    }
    let third = input(model, inputs, node, 2);
    let (stmts, held_rank) = body(node, &x, second.as_ref(), third.as_ref())?;
    let mut lines = match producer {
        Some(p) => p.lines(elem)?,
        None => first_input_lines(&node.inputs[0], &x, elem)?,
    };
    if operands {
        lines.push_str(&operand_lines(model, inputs, node, x.dtype, elem)?);
    }
    Some(Plan {
        float: if elem == "i64" { "f32" } else { elem },
        elem,
        kind,
        inputs: lines,
        stmts,
        held_rank,
    })
}

/// The statements writing `x`, the node's first input `name`, in element type `elem`.
fn first_input_lines(name: &str, x: &HostTensor, elem: &str) -> Option<String> {
    Some(format!(
        "    // input '{name}': {}{:?}\n    let x = tensor(vec![{}], [{}]);\n",
        x.dtype,
        x.shape,
        literal_list(x, elem)?,
        dims_list(&padded(&x.shape))
    ))
}

/// The project of `plan`: its inputs, the run with a panic caught, then for a crash what
/// burn gave, else the comparison with the expected values.
fn finish(plan: &Plan, node: &Node, expect: &Expect) -> Option<Project> {
    let want = expect.expected.to_f64s()?;
    let crash = !matches!(expect.symptom, "values" | "shape" | "nan" | "dtype");
    let mut main = preamble(expect, node, plan.float, plan.elem, plan.kind);
    main.push_str(&plan.inputs);
    main.push_str(&run_block(&plan.stmts, crash));
    if crash {
        main.push_str(
            "    println!(\"NOT REPRODUCED: burn runs the node (shape {:?}): {:?}\", dims, &got[..got.len().min(10)]);\n}\n",
        );
        return Some(Project {
            cargo_toml: cargo_toml(),
            main_rs: main,
        });
    }
    let out_rank = expect.expected.shape.len();
    main.push_str(&format!(
        "    let got_shape: Vec<usize> = dims[{}usize.saturating_sub({out_rank})..].to_vec();\n    \
         let expected_shape: Vec<usize> = vec![{}];\n    \
         let expected: Vec<f64> = vec![{}];\n    \
         check(&got_shape, &got, &expected_shape, &expected, {:?}, {:?}, {:?});\n}}\n\n",
        plan.held_rank,
        dims_list(&expect.expected.shape),
        f64_list(&want),
        expect.tolerance.0,
        expect.tolerance.1,
        expect.symptom
    ));
    main.push_str(CHECK_FN);
    Some(Project {
        cargo_toml: cargo_toml(),
        main_rs: main,
    })
}

/// Whether the op's third input is an operand the project writes out as `c` (Gemm's C, a
/// convolution's bias, InstanceNormalization's B).
fn has_bias(op: &str) -> bool {
    matches!(
        op,
        "Gemm" | "Conv" | "ConvTranspose" | "InstanceNormalization"
    )
}

/// The statements writing out the node's operands after its first input: `z` (the second
/// input) and, for the ops of [`has_bias`], `c` (the third, when present), each of the
/// first's element type.
fn operand_lines(
    model: &Model,
    inputs: &NamedValues,
    node: &Node,
    dtype: DType,
    elem: &str,
) -> Option<String> {
    let names: &[&str] = if has_bias(&node.op_type) {
        &["z", "c"]
    } else {
        &["z"]
    };
    let mut s = String::new();
    for (i, var) in names.iter().enumerate() {
        let Some(t) = input(model, inputs, node, i + 1) else {
            continue;
        };
        if t.dtype != dtype || t.num_elements() > MAX_ELEMENTS || t.shape.len() > R {
            return None;
        }
        s.push_str(&format!(
            "    // input '{}': {}{:?}\n    let {var} = tensor(vec![{}], [{}]);\n",
            node.inputs[i + 1],
            t.dtype,
            t.shape,
            literal_list(&t, elem)?,
            dims_list(&padded(&t.shape))
        ));
    }
    Some(s)
}

/// The `main` of a project up to its inputs: what it is, the imports and `tensor`.
fn preamble(expect: &Expect, node: &Node, float: &str, elem: &str, kind: &str) -> String {
    format!(
        "//! {}\n//!\n\
         //! Written by mutagraph (a fuzzer of ONNX inference libraries): burn's tensor API called\n\
         //! the way mutagraph's interpreter of ONNX models ran the `{}` node of minimized.onnx.\n\
         //! Every tensor is held at rank {R}, its ONNX shape padded on the left with ones, so that\n\
         //! ONNX broadcasting maps onto burn's. Run: cargo run --release\n\
         use burn::backend::NdArray;\n\
         #[allow(unused_imports)]\n\
         use burn::tensor::{{Int, Tensor, TensorData, activation as act, module}};\n\n\
         type B = NdArray<{float}>;\n\n\
         #[allow(dead_code)]\n\
         fn tensor(values: Vec<{elem}>, shape: [usize; {R}]) -> Tensor<B, {R}{kind}> {{\n    \
         Tensor::from_data(TensorData::new(values, shape), &Default::default())\n}}\n\n\
         fn main() {{\n",
        expect.title.replace('\n', " "),
        node.op_type
    )
}

/// The statements of `main` running `stmts` with a panic caught, and what is printed for a
/// panic (a reproduced crash, or what stands in the way of a wrong value).
fn run_block(stmts: &str, crash: bool) -> String {
    let mut main = String::new();
    main.push_str(
        "    // a panic inside burn is the finding (or stands in its way): caught and printed\n    \
         let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {\n",
    );
    for line in stmts.lines() {
        main.push_str(&format!("    {line}\n"));
    }
    main.push_str(
        "        let dims = y.dims().to_vec();\n        \
         let got: Vec<f64> = y.into_data().iter::<f64>().collect();\n        \
         (dims, got)\n    }));\n",
    );
    let on_panic = if crash {
        "REPRODUCED: burn panics"
    } else {
        "NOT REPRODUCED: burn panics instead"
    };
    main.push_str(&format!(
        "    let (dims, got) = match run {{\n        \
         Ok(r) => r,\n        \
         Err(p) => {{\n            \
         let why = p\n                \
         .downcast_ref::<String>()\n                \
         .cloned()\n                \
         .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))\n                \
         .unwrap_or_default();\n            \
         println!(\"{on_panic}: {{why}}\");\n            \
         return;\n        }}\n    }};\n"
    ));
    main
}

/// The project's `check`: prints the result beside the expected one and the verdict.
const CHECK_FN: &str = "/// Prints the result beside the expected one and the verdict: an element is wrong when\n\
         /// |got - expected| > atol + rtol * |expected| (NaN equals NaN).\n\
         fn check(\n    got_shape: &[usize],\n    got: &[f64],\n    expected_shape: &[usize],\n    \
         expected: &[f64],\n    rtol: f64,\n    atol: f64,\n    symptom: &str,\n) {\n    \
         println!(\"burn gives shape {got_shape:?}: {:?}\", &got[..got.len().min(10)]);\n    \
         println!(\"expected shape {expected_shape:?}: {:?}\", &expected[..expected.len().min(10)]);\n    \
         if got_shape != expected_shape {\n        \
         println!(\"REPRODUCED: burn's output has shape {got_shape:?}, ONNX's definition gives {expected_shape:?}\");\n        \
         return;\n    }\n    \
         if symptom == \"shape\" {\n        \
         println!(\"NOT REPRODUCED: the shape is right\");\n        return;\n    }\n    \
         let wrong: Vec<usize> = (0..expected.len())\n        \
         .filter(|&i| {\n            \
         let (e, g) = (expected[i], got[i]);\n            \
         !((e.is_nan() && g.is_nan()) || e == g || (e - g).abs() <= atol + rtol * e.abs())\n        \
         })\n        .collect();\n    \
         match wrong.first() {\n        \
         Some(&i) => println!(\n            \
         \"REPRODUCED: {} of {} elements differ; [{i}] expected {} got {}\",\n            \
         wrong.len(),\n            expected.len(),\n            expected[i],\n            got[i]\n        ),\n        \
         None => println!(\"NOT REPRODUCED: every element matches\"),\n    }\n}\n";

/// `Cargo.toml` of a project: burn at the interpreter's version, NdArray only.
/// burn's features as mutagraph builds it: the project runs the kernels the interpreter ran
/// (ndarray's SIMD paths among them).
pub const BURN_FEATURES: &[&str] = &["std", "ndarray", "simd"];

fn cargo_toml() -> String {
    let features = BURN_FEATURES
        .iter()
        .map(|f| format!("\"{f}\""))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "[package]\nname = \"mutagraph-burn-repro\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\nburn = {{ version = \"={BURN_VERSION}\", \
         default-features = false, features = [{features}] }}\n\n\
         # Not part of any enclosing workspace.\n[workspace]\n"
    )
}

mod matmul;
mod norm;
mod onehot;
mod producer;
mod topk;
mod window;

pub use producer::PRODUCERS;
use producer::Producer;

#[cfg(test)]
mod tests;
