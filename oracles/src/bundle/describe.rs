//! What a report says about the values of a minimal model: the trigger facts a title names
//! (attributes, element types, special values such as NaN, negative or fractional indices,
//! empty tensors) and the inputs and weights shown in full or summarized.
use super::markdown::ShownValue;
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_ir::DType;
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;
use mutagraph_ir::registry::Registry;

/// Tensors up to this many elements are shown in full.
const FULL: usize = 32;

/// The node a report is about: the one producing `value`, else the model's only node, else
/// the last one.
pub fn focus<'m>(model: &'m Model, value: Option<&str>) -> Option<&'m Node> {
    let g = &model.graph;
    if let Some(v) = value
        && let Some(n) = g.nodes().find(|n| n.outputs.iter().any(|o| o == v))
    {
        return Some(n);
    }
    let order = g.topo_order().ok()?;
    order.last().and_then(|&id| g.node(id))
}

/// The facts about `node` and the values reaching it that can trigger a bug, in words:
/// its attributes, element types other than float32, NaN / Inf, empty tensors, negative or
/// fractional values where the op reads indices.
pub fn trigger_facts(model: &Model, node: &Node, inputs: &NamedValues) -> Vec<String> {
    let mut facts = Vec::new();
    let spec = Registry::global().for_node(node);
    let port_of =
        |slot: usize| spec.and_then(|s| s.inputs.get(slot.min(s.inputs.len().saturating_sub(1))));
    let port = |slot: usize| -> String {
        port_of(slot)
            .map(|p| p.name.to_lowercase())
            .unwrap_or_default()
    };
    // An optional input given as an empty 1-D tensor is how a model leaves it out (Resize's
    // roi and scales): no fact (round 13: "(an empty 'scales_1')" in a title whose trigger
    // was the mode).
    let left_out = |slot: usize, t: &HostTensor| {
        t.shape == [0]
            && port_of(slot).is_some_and(|p| p.kind == mutagraph_ir::registry::PortKind::Optional)
    };
    let attrs: Vec<String> = node
        .attributes
        .iter()
        .filter(|a| a.value.short().len() <= 40)
        .map(|a| format!("{}={}", a.name, a.value.short()))
        .collect();
    let mut dtypes: Vec<DType> = Vec::new();
    for (slot, name) in node.inputs.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        let Some(t) = mutagraph_backends::value::input_or_weight(model, inputs, name) else {
            continue;
        };
        let p = port(slot);
        if t.dtype != DType::F32 && !dtypes.contains(&t.dtype) && slot == 0 {
            dtypes.push(t.dtype);
        }
        if t.shape.contains(&0) && !left_out(slot, &t) {
            facts.push(format!("an empty '{name}'"));
        }
        let (nan, inf) = if t.dtype.is_float() {
            t.nan_inf_counts()
        } else {
            (0, 0)
        };
        if nan > 0 {
            facts.push(format!("NaN in '{name}'"));
        }
        if inf > 0 {
            facts.push(format!("infinity in '{name}'"));
        }
        if p.contains("indices") || p.contains("index") {
            let v = t.to_f64s().unwrap_or_default();
            if t.dtype.is_float() && v.iter().any(|x| x.is_finite() && x.fract() != 0.0) {
                facts.push(format!("fractional float indices in '{name}'"));
            }
            if v.iter().any(|&x| x < 0.0) {
                facts.push(format!("negative indices in '{name}'"));
            }
        }
    }
    for d in dtypes {
        facts.insert(0, format!("on {d}"));
    }
    facts.extend(attrs);
    facts
}

/// A tensor's values as text: all of them when few, else the range and the special values.
pub fn tensor_text(t: &HostTensor) -> String {
    let Some(v) = t.to_f64s() else {
        return format!("{} elements", t.num_elements());
    };
    let fmt = |x: f64| {
        if t.dtype.is_float() {
            format!("{x}")
        } else {
            format!("{}", x as i64)
        }
    };
    if v.len() <= FULL {
        return format!(
            "[{}]",
            v.iter().map(|&x| fmt(x)).collect::<Vec<_>>().join(", ")
        );
    }
    let finite: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut s = format!(
        "{} elements in [{}, {}]; first {}",
        v.len(),
        fmt(lo),
        fmt(hi),
        v.iter()
            .take(6)
            .map(|&x| fmt(x))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (nan, inf) = (
        v.iter().filter(|x| x.is_nan()).count(),
        v.iter().filter(|x| x.is_infinite()).count(),
    );
    if nan + inf > 0 {
        s.push_str(&format!("; {nan} NaN, {inf} infinite"));
    }
    s
}

/// The graph inputs and weights of `model` with their values.
pub fn shown_values(model: &Model, inputs: &NamedValues) -> Vec<ShownValue> {
    let mut out = Vec::new();
    let ty = |t: &HostTensor| format!("{}{:?}", t.dtype, t.shape);
    for (name, v) in inputs {
        if let Some(t) = v.tensor() {
            out.push(ShownValue {
                role: "input".into(),
                name: name.clone(),
                ty: ty(t),
                text: tensor_text(t),
            });
        }
    }
    for (name, t) in &model.graph.initializers {
        if let Ok(h) = HostTensor::from_proto(t) {
            out.push(ShownValue {
                role: "weight".into(),
                name: name.clone(),
                ty: ty(&h),
                text: tensor_text(&h),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_backends::value::{Data, Value};

    #[test]
    fn an_optional_input_left_out_as_empty_is_no_fact() {
        let m = mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 13]>\n\
             g (float[1,1,2,2] x, float[0] roi, float[0] scales, int64[4] sizes) => (float[1,1,4,4] y) \
             { y = Resize <mode: string = \"cubic\"> (x, roi, scales, sizes) }",
        )
        .expect("valid text");
        let t = |shape: Vec<usize>, d: Data| Value::Tensor(HostTensor::new(shape, d));
        let mut inputs: NamedValues = vec![
            ("x".into(), t(vec![1, 1, 2, 2], Data::F32(vec![1.0; 4]))),
            ("roi".into(), t(vec![0], Data::F32(vec![]))),
            ("scales".into(), t(vec![0], Data::F32(vec![]))),
            ("sizes".into(), t(vec![4], Data::I64(vec![1, 1, 4, 4]))),
        ];
        let node = m.graph.nodes().next().expect("one node");
        let facts = trigger_facts(&m, node, &inputs);
        assert!(
            !facts.iter().any(|f| f.starts_with("an empty")),
            "{facts:?}"
        );
        assert!(facts.iter().any(|f| f.starts_with("mode=")), "{facts:?}");
        // An empty data input is a fact.
        inputs[0].1 = t(vec![1, 1, 0, 2], Data::F32(vec![]));
        let facts = trigger_facts(&m, node, &inputs);
        assert!(facts.contains(&"an empty 'x'".to_string()), "{facts:?}");
    }
}
