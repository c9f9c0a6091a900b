//! A short self-contained Python snippet for an upstream report: the minimal model built with
//! `onnx.helper`, its inputs as literals, and the library's own API running it (ONNX Runtime or
//! tract's Python package), printing the result beside the expected one. When a tensor is too
//! large to write inline the snippet loads the bundle's files instead (`minimized.onnx`,
//! `inputs.npz`).
use super::npz::encode_key;
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrValue;
use mutagraph_ir::model::Model;
use mutagraph_ir::tensor::TensorExt;
use mutagraph_ir::types::ValueType;

/// Largest tensor written inline.
const INLINE: usize = 48;

/// The library API a snippet calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `onnxruntime`, with all graph optimizations (`true`) or none.
    OnnxRuntime {
        /// `ORT_ENABLE_ALL` rather than `ORT_DISABLE_ALL`.
        optimized: bool,
    },
    /// tract's Python package (`tract`).
    Tract,
}

fn np_dtype(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::F32 => "np.float32",
        DType::F64 => "np.float64",
        DType::F16 => "np.float16",
        DType::I8 => "np.int8",
        DType::I16 => "np.int16",
        DType::I32 => "np.int32",
        DType::I64 => "np.int64",
        DType::U8 => "np.uint8",
        DType::U16 => "np.uint16",
        DType::U32 => "np.uint32",
        DType::U64 => "np.uint64",
        DType::Bool => "np.bool_",
        _ => return None,
    })
}

fn proto_name(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::F32 => "FLOAT",
        DType::F64 => "DOUBLE",
        DType::F16 => "FLOAT16",
        DType::I8 => "INT8",
        DType::I16 => "INT16",
        DType::I32 => "INT32",
        DType::I64 => "INT64",
        DType::U8 => "UINT8",
        DType::U16 => "UINT16",
        DType::U32 => "UINT32",
        DType::U64 => "UINT64",
        DType::Bool => "BOOL",
        _ => return None,
    })
}

fn tract_type(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::F16 => "f16",
        DType::I8 => "i8",
        DType::I16 => "i16",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::U8 => "u8",
        DType::U16 => "u16",
        DType::U32 => "u32",
        DType::U64 => "u64",
        DType::Bool => "bool",
        _ => return None,
    })
}

/// A Python literal of one element.
fn py_num(d: DType, x: f64) -> String {
    if d == DType::Bool {
        return if x != 0.0 { "True" } else { "False" }.into();
    }
    if d.is_float() {
        if x.is_nan() {
            return "np.nan".into();
        }
        if x.is_infinite() {
            return if x > 0.0 { "np.inf" } else { "-np.inf" }.into();
        }
        // The shortest text that reads back as the same f32 (or f64) value.
        return if d == DType::F64 {
            format!("{x:?}")
        } else {
            format!("{:?}", x as f32)
        };
    }
    format!("{}", x as i64)
}

/// The values of a tensor as a flat Python list.
fn py_list(t: &HostTensor) -> Option<String> {
    let v = t.to_f64s()?;
    Some(format!(
        "[{}]",
        v.iter()
            .map(|&x| py_num(t.dtype, x))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// A Python identifier for a value name.
fn ident(name: &str, used: &mut Vec<String>) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    if [
        "np", "onnx", "helper", "T", "ort", "tract", "model", "graph", "y", "so",
    ]
    .contains(&s.as_str())
    {
        s.push('_');
    }
    while used.contains(&s) {
        s.push('_');
    }
    used.push(s.clone());
    s
}

fn attr_literal(v: &AttrValue) -> Option<String> {
    Some(match v {
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => format!("{f:?}"),
        AttrValue::String(s) => super::repro::py_str(&String::from_utf8_lossy(s)),
        AttrValue::Ints(v) => format!(
            "[{}]",
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ),
        AttrValue::Floats(v) => format!(
            "[{}]",
            v.iter()
                .map(|f| format!("{f:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AttrValue::Strings(v) => format!(
            "[{}]",
            v.iter()
                .map(|s| super::repro::py_str(&String::from_utf8_lossy(s)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AttrValue::Tensor(t) => {
            let h = HostTensor::from_proto(t).ok()?;
            format!(
                "helper.make_tensor(\"value\", T.{}, {:?}, {})",
                proto_name(h.dtype)?,
                h.shape,
                py_list(&h)?
            )
        }
        _ => return None,
    })
}

/// The snippet that runs `model` on `inputs` with `api`, printing each output beside the
/// `expected` one; `None` when the model holds what a snippet cannot write (subgraphs, other
/// domains, element types numpy lacks).
pub fn python_snippet(
    model: &Model,
    model_file: &str,
    inputs: &NamedValues,
    inputs_file: &str,
    expected: Option<&NamedValues>,
    api: Api,
) -> Option<String> {
    let mut lines: Vec<String> = vec!["import numpy as np".into()];
    let feeds = input_lines(&mut lines, inputs, inputs_file)?;
    if inlinable(model) {
        inline_model_lines(&mut lines, model)?;
    } else {
        lines.push("import onnx".into());
        lines.push(format!("model = onnx.load({model_file:?})"));
    }
    run_lines(&mut lines, api, &feeds, "model")?;
    print_lines(&mut lines, model, expected);
    let text = lines.join("\n");
    (text.lines().count() <= 40).then_some(text + "\n")
}

/// A graph input as the snippet feeds it.
struct Feed {
    /// The value name.
    name: String,
    /// The Python variable holding it.
    id: String,
    dtype: DType,
    shape: Vec<usize>,
}

/// The lines that define one variable per input: literals when every input is small enough,
/// else loads from the bundle's `inputs_file`.
fn input_lines(
    lines: &mut Vec<String>,
    inputs: &NamedValues,
    inputs_file: &str,
) -> Option<Vec<Feed>> {
    let inline_inputs = inputs.iter().all(|(_, v)| {
        v.tensor()
            .is_some_and(|t| t.num_elements() <= INLINE && np_dtype(t.dtype).is_some())
    });
    let mut used: Vec<String> = Vec::new();
    let mut feeds: Vec<Feed> = Vec::new();
    if !inline_inputs {
        lines.push(format!("inputs = np.load({:?})", inputs_file));
    }
    for (name, v) in inputs {
        let t = v.tensor()?;
        let id = ident(name, &mut used);
        if inline_inputs {
            lines.push(format!(
                "{id} = np.array({}, {}).reshape({:?})",
                py_list(t)?,
                np_dtype(t.dtype)?,
                t.shape
            ));
        } else {
            lines.push(format!("{id} = inputs[{:?}]", encode_key(name)));
        }
        feeds.push(Feed {
            name: name.clone(),
            id,
            dtype: t.dtype,
            shape: t.shape.clone(),
        });
    }
    Some(feeds)
}

/// True when the snippet can build `model` with `onnx.helper`: small weights of numpy types,
/// default-domain nodes without subgraphs whose attributes are literals, typed inputs.
fn inlinable(model: &Model) -> bool {
    let g = &model.graph;
    let inline_weights = g.initializers.values().all(|t| {
        t.dims.iter().product::<i64>() <= INLINE as i64
            && proto_name(t.dtype()).is_some()
            && !t.is_external()
    });
    inline_weights
        && g.nodes().all(|n| {
            n.domain().is_empty()
                && n.subgraphs().next().is_none()
                && n.attributes.iter().all(|a| attr_literal(&a.value).is_some())
        })
        && g.real_inputs().iter().all(|vi| {
            matches!(vi.name.as_deref().map(|n| g.value_type(n)), Some(ValueType::Tensor(t)) if proto_name(t.dtype).is_some())
        })
}

/// The lines that build `model` with `onnx.helper` as `model`.
fn inline_model_lines(lines: &mut Vec<String>, model: &Model) -> Option<()> {
    let g = &model.graph;
    lines.push("from onnx import helper, TensorProto as T".into());
    let mut nodes = Vec::new();
    for n in g.topo_order().ok()?.into_iter().filter_map(|id| g.node(id)) {
        let mut call = format!(
            "helper.make_node({:?}, {:?}, {:?}",
            n.op_type, n.inputs, n.outputs
        );
        for a in &n.attributes {
            call.push_str(&format!(", {}={}", a.name, attr_literal(&a.value)?));
        }
        call.push(')');
        nodes.push(call);
    }
    let vi = |name: &str| -> Option<String> {
        let ValueType::Tensor(t) = g.value_type(name) else {
            return None;
        };
        let dims = match t.shape.as_ref() {
            Some(s) if s.iter().all(|d| d.value().is_some()) => format!(
                "{:?}",
                s.iter().map(|d| d.value().unwrap_or(0)).collect::<Vec<_>>()
            ),
            _ => "None".into(),
        };
        Some(format!(
            "helper.make_tensor_value_info({name:?}, T.{}, {dims})",
            proto_name(t.dtype)?
        ))
    };
    let ins: Vec<String> = g
        .real_inputs()
        .iter()
        .filter_map(|v| vi(v.name.as_deref()?))
        .collect();
    let outs: Vec<String> = g
        .outputs
        .iter()
        .filter_map(|v| vi(v.name.as_deref()?))
        .collect();
    let mut weights = Vec::new();
    for (name, t) in &g.initializers {
        let h = HostTensor::from_proto(t).ok()?;
        weights.push(format!(
            "helper.make_tensor({name:?}, T.{}, {:?}, {})",
            proto_name(h.dtype)?,
            h.shape,
            py_list(&h)?
        ));
    }
    lines.push(format!("nodes = [{}]", nodes.join(",\n         ")));
    lines.push(format!(
        "graph = helper.make_graph(nodes, \"repro\", [{}],\n                          [{}], [{}])",
        ins.join(", "),
        outs.join(", "),
        weights.join(", ")
    ));
    lines.push(format!(
        "model = helper.make_model(graph, opset_imports=[helper.make_opsetid(\"\", {})])",
        model.default_opset()
    ));
    Some(())
}

/// The lines that run the model held in the variable `path` with `api`, into `y`.
fn run_lines(lines: &mut Vec<String>, api: Api, feeds: &[Feed], path: &str) -> Option<()> {
    match api {
        Api::OnnxRuntime { optimized } => {
            lines.push("import onnxruntime as ort".into());
            lines.push(format!(
                "so = ort.SessionOptions(); so.graph_optimization_level = \
                 ort.GraphOptimizationLevel.{}",
                if optimized {
                    "ORT_ENABLE_ALL"
                } else {
                    "ORT_DISABLE_ALL"
                }
            ));
            let feed = feeds
                .iter()
                .map(|f| format!("{:?}: {}", f.name, f.id))
                .collect::<Vec<_>>()
                .join(", ");
            lines.push(format!(
                "y = ort.InferenceSession({path}.SerializeToString(), so, \
                 providers=[\"CPUExecutionProvider\"]).run(None, {{{feed}}})"
            ));
        }
        Api::Tract => {
            lines.push("import onnx, tract".into());
            lines.push(format!("onnx.save({path}, \"snippet.onnx\")"));
            lines.push("m = tract.onnx().load(\"snippet.onnx\")".into());
            for (i, f) in feeds.iter().enumerate() {
                let mut spec: Vec<String> = f.shape.iter().map(usize::to_string).collect();
                spec.push(tract_type(f.dtype)?.to_string());
                lines.push(format!("m.set_input_fact({i}, {:?})", spec.join(",")));
            }
            let args = feeds
                .iter()
                .map(|f| f.id.clone())
                .collect::<Vec<_>>()
                .join(", ");
            lines.push(format!(
                "y = [t.to_numpy() for t in m.into_model().into_runnable().run([{args}])]"
            ));
        }
    }
    Some(())
}

/// One `print` per output: its first values beside the `expected` ones.
fn print_lines(lines: &mut Vec<String>, model: &Model, expected: Option<&NamedValues>) {
    for (k, o) in model.graph.outputs.iter().enumerate() {
        let name = o.name.clone().unwrap_or_default();
        let want = expected
            .and_then(|e| e.iter().find(|(n, _)| *n == name))
            .and_then(|(_, v)| v.tensor())
            .map(|t| {
                let v = t.to_f64s().unwrap_or_default();
                let head: Vec<String> = v.iter().take(8).map(|&x| py_num(t.dtype, x)).collect();
                format!(
                    ", \"expected\", [{}]{}",
                    head.join(", "),
                    if v.len() > 8 { ", \"...\"" } else { "" }
                )
            })
            .unwrap_or_default();
        lines.push(format!("print({name:?}, y[{k}].ravel()[:8]{want})"));
    }
}
