use super::*;
use crate::dtype::DType;
use crate::graph::Graph;
use crate::infer::MAX_SUBGRAPH_DEPTH;
use crate::model::Model;
use crate::onnx_ops::{self, MAX_IR_VERSION};
use crate::pb;
use crate::types::TensorType;
use crate::types::ValueType;

/// `x: f32[2] → op → y: f32[2]` at opset 17, IR version 8.
fn model(op: &str, domain: &str) -> pb::ModelProto {
    let vi = |name: &str| pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ValueType::Tensor(TensorType::fixed(DType::F32, &[2])).to_proto()),
        ..Default::default()
    };
    let mut opset_import = vec![pb::OperatorSetIdProto {
        domain: Some(String::new()),
        version: Some(17),
    }];
    if !domain.is_empty() && domain != "ai.onnx" {
        opset_import.push(pb::OperatorSetIdProto {
            domain: Some(domain.into()),
            version: Some(1),
        });
    }
    pb::ModelProto {
        ir_version: Some(8),
        opset_import,
        graph: Some(pb::GraphProto {
            name: Some("g".into()),
            node: vec![pb::NodeProto {
                name: Some("n0".into()),
                op_type: Some(op.into()),
                domain: Some(domain.into()),
                input: vec!["x".into()],
                output: vec!["y".into()],
                ..Default::default()
            }],
            input: vec![vi("x")],
            output: vec![vi("y")],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn diagnose(p: pb::ModelProto) -> Diagnostics {
    check(&crate::import::model_from_proto(p).unwrap())
}

fn errors(p: pb::ModelProto) -> Vec<String> {
    diagnose(p).errors
}

/// The tensor type of the first value info in `list`.
fn tensor_type(list: &mut [pb::ValueInfoProto]) -> &mut pb::type_proto::Tensor {
    match list[0].r#type.as_mut().and_then(|t| t.value.as_mut()) {
        Some(pb::type_proto::Value::TensorType(t)) => t,
        _ => unreachable!("a tensor type"),
    }
}

#[test]
fn the_model_used_below_is_valid() {
    let d = diagnose(model("Relu", ""));
    assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
}

#[test]
fn an_op_onnx_does_not_define_in_the_default_domain_is_an_error() {
    for domain in ["", "ai.onnx"] {
        let e = errors(model("Frobnicate", domain));
        assert_eq!(
            e,
            vec![
                "main graph: node n0 (Frobnicate): op type 'Frobnicate' is not an operator \
                 of the default domain (ONNX defines no such op)"
            ],
            "domain '{domain}'"
        );
    }
    // ai.onnx.ml is ONNX's too.
    let mut p = model("Frobnicate", "ai.onnx.ml");
    p.opset_import[1].version = Some(3);
    let e = errors(p);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("not an operator of domain 'ai.onnx.ml'"),
        "{e:?}"
    );
    // Other domains are not ONNX's to define: not checked, a warning.
    let d = diagnose(model("Frobnicate", "com.microsoft"));
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!(
        d.warnings,
        vec!["no spec for op com.microsoft.Frobnicate (1 nodes): not checked"]
    );
}

#[test]
fn onnx_ops_without_a_spec_are_checked_against_the_opset() {
    // RMSNormalization (opset 23) has no spec in the registry: at 23 a warning, before an
    // error.
    let mut p = model("RMSNormalization", "");
    p.opset_import[0].version = Some(23);
    p.ir_version = Some(11);
    let d = diagnose(p);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!(
        d.warnings,
        vec!["no spec for op RMSNormalization (1 nodes): not checked"]
    );
    assert_eq!(
        errors(model("RMSNormalization", "")),
        vec![
            "main graph: node n0 (RMSNormalization): RMSNormalization exists in the default \
             domain from version 23 on, but the model imports version 17"
        ]
    );
}

#[test]
fn a_deprecated_op_is_a_warning() {
    let mut p = model("Upsample", "");
    p.opset_import[0].version = Some(10);
    let d = diagnose(p);
    assert!(
        d.warnings.iter().any(|w| w
            == "main graph: node n0 (Upsample): Upsample is deprecated at version 10 of \
                the default domain (its schema of version 10); onnx.checker refuses it"),
        "{d:?}"
    );
}

#[test]
fn undefined_and_unknown_element_types_are_errors() {
    for (code, what) in [
        (0, "elem_type is 0 (UNDEFINED)"),
        (
            12345,
            "elem_type is 12345, which is not an ONNX element type",
        ),
    ] {
        let mut p = model("Relu", "");
        tensor_type(&mut p.graph.as_mut().unwrap().input).elem_type = Some(code);
        let e = errors(p);
        assert!(
            e.contains(&format!("main graph: input 'x': {what}")),
            "{code}: {e:?}"
        );
        let mut p = model("Relu", "");
        tensor_type(&mut p.graph.as_mut().unwrap().output).elem_type = Some(code);
        assert!(
            errors(p).contains(&format!("main graph: output 'y': {what}")),
            "{code}"
        );
        let mut p = model("Relu", "");
        let g = p.graph.as_mut().unwrap();
        let mut vi = g.output[0].clone();
        vi.name = Some("z".into());
        g.value_info.push(vi);
        tensor_type(&mut g.value_info).elem_type = Some(code);
        assert_eq!(
            errors(p),
            vec![format!("main graph: value_info 'z': {what}")],
            "{code}"
        );
        // Inside a sequence type too.
        let mut p = model("Relu", "");
        let g = p.graph.as_mut().unwrap();
        let mut vi = g.output[0].clone();
        vi.name = Some("s".into());
        let mut elem = vi.r#type.take().unwrap();
        if let Some(pb::type_proto::Value::TensorType(t)) = elem.value.as_mut() {
            t.elem_type = Some(code);
        }
        vi.r#type = Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::SequenceType(Box::new(
                pb::type_proto::Sequence {
                    elem_type: Some(Box::new(elem)),
                },
            ))),
            denotation: None,
        });
        g.value_info.push(vi);
        assert_eq!(
            errors(p),
            vec![format!(
                "main graph: value_info 's' (sequence element): {what}"
            )],
            "{code}"
        );
    }
}

#[test]
fn a_negative_declared_size_other_than_minus_one_is_an_error() {
    let set_dim = |p: &mut pb::ModelProto, v: i64| {
        let t = tensor_type(&mut p.graph.as_mut().unwrap().input);
        t.shape.as_mut().unwrap().dim[0].value =
            Some(pb::tensor_shape_proto::dimension::Value::DimValue(v));
    };
    let mut p = model("Relu", "");
    set_dim(&mut p, -5);
    assert_eq!(
        errors(p),
        vec![
            "main graph: input 'x': dim 0 is -5; a size is never negative (-1 is read as \
             a dynamic dim)"
        ]
    );
    // -1 is how exporters write a dynamic dim.
    let mut p = model("Relu", "");
    set_dim(&mut p, -1);
    assert!(errors(p).is_empty());
}

#[test]
fn an_ir_version_above_what_we_know_is_an_error() {
    let mut p = model("Relu", "");
    p.ir_version = Some(999);
    assert_eq!(
        errors(p),
        vec![format!(
            "ir_version 999 is above {MAX_IR_VERSION}, the highest IR version this build \
             knows (that of onnx {})",
            onnx_ops::ONNX_VERSION
        )]
    );
    let mut p = model("Relu", "");
    p.ir_version = Some(MAX_IR_VERSION);
    assert!(errors(p).is_empty());
}

/// A `Constant` node holding `t` feeding `Add(x, c)`.
fn with_constant(t: pb::TensorProto) -> pb::ModelProto {
    let mut p = model("Add", "");
    let g = p.graph.as_mut().unwrap();
    g.node[0].input.push("c".into());
    g.node.insert(
        0,
        pb::NodeProto {
            name: Some("k".into()),
            op_type: Some("Constant".into()),
            output: vec!["c".into()],
            attribute: vec![pb::AttributeProto {
                name: Some("value".into()),
                r#type: Some(4),
                t: Some(t),
                ..Default::default()
            }],
            ..Default::default()
        },
    );
    p
}

#[test]
fn tensors_need_a_defined_element_type_and_sizes_that_are_not_negative() {
    let good = crate::tensor::from_f64s("w", DType::F32, &[2], &[1.0, 2.0]);
    assert!(errors(with_constant(good.clone())).is_empty());
    for (code, what) in [
        (0, "has data_type 0 (UNDEFINED)"),
        (
            12345,
            "has data_type 12345, which is not an ONNX element type",
        ),
    ] {
        let mut t = good.clone();
        t.data_type = Some(code);
        let e = errors(with_constant(t.clone()));
        assert!(
            e.contains(&format!(
                "main graph: node k (Constant) attribute 'value' {what}"
            )),
            "{code}: {e:?}"
        );
        // The same tensor as an initializer.
        let mut p = model("Add", "");
        let g = p.graph.as_mut().unwrap();
        g.node[0].input.push("w".into());
        g.initializer.push(t);
        let e = errors(p);
        assert!(
            e.contains(&format!("main graph: initializer 'w' {what}")),
            "{code}: {e:?}"
        );
    }
    let mut t = good;
    t.dims = vec![-5];
    let e = errors(with_constant(t));
    assert!(
        e.contains(
            &"main graph: node k (Constant) attribute 'value' has a negative size -5 in its \
              dims [-5]"
                .to_string()
        ),
        "{e:?}"
    );
}

/// An `If` whose branches are `If`s, `depth` levels deep, built in memory (a protobuf
/// file cannot nest so deep: prost refuses it).
fn nested_ifs(depth: usize) -> Model {
    use crate::attr::AttrValue;
    use crate::graph::Node;
    let ty = ValueType::Tensor(TensorType::fixed(DType::F32, &[2]));
    let vi = |name: &str| pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ty.to_proto()),
        ..Default::default()
    };
    let leaf = |out: &str| {
        let mut g = Graph::new("leaf");
        g.push_node(Node::new("Relu", &["x"], &[out]));
        g.outputs.push(vi(out));
        g.rebuild_edges();
        g
    };
    let mut body = leaf("r0");
    for level in 1..depth {
        let mut g = Graph::new(&format!("level{level}"));
        let out = format!("r{level}");
        g.push_node(
            Node::new("If", &["c"], &[&out])
                .with_attr("then_branch", AttrValue::Graph(Box::new(body)))
                .with_attr(
                    "else_branch",
                    AttrValue::Graph(Box::new(leaf(&format!("e{level}")))),
                ),
        );
        g.outputs.push(vi(&out));
        g.rebuild_edges();
        body = g;
    }
    let mut m = Model::new(17);
    m.graph = body;
    m.graph.inputs.push(vi("x"));
    m.graph.inputs.push(pb::ValueInfoProto {
        name: Some("c".into()),
        r#type: Some(ValueType::Tensor(TensorType::fixed(DType::Bool, &[])).to_proto()),
        ..Default::default()
    });
    m.graph.rebuild_edges();
    m
}

#[test]
fn subgraphs_nested_too_deep_are_an_error_not_a_stack_overflow() {
    let ok = nested_ifs(10);
    let d = check(&ok);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    // Run where the stack is small (a test thread's 2 MiB would hide nothing).
    let deep = nested_ifs(400);
    let d = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || check(&deep))
        .unwrap()
        .join()
        .unwrap();
    assert!(
        d.errors
            .iter()
            .any(|e| e.contains(&format!("subgraphs nest deeper than {MAX_SUBGRAPH_DEPTH}"))),
        "{:?}",
        d.errors
    );
}

#[test]
fn a_long_chain_is_checked_without_recursion() {
    let mut m = Model::new(17);
    let ty = ValueType::Tensor(TensorType::fixed(DType::F32, &[2])).to_proto();
    let mut prev = "x".to_string();
    for i in 0..20_000 {
        let out = format!("v{i}");
        m.graph
            .push_node(crate::graph::Node::new("Relu", &[&prev], &[&out]));
        prev = out;
    }
    m.graph.rebuild_edges();
    for (name, list) in [
        ("x", &mut m.graph.inputs),
        (prev.as_str(), &mut m.graph.outputs),
    ] {
        list.push(pb::ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(ty.clone()),
            ..Default::default()
        });
    }
    let d = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || infer_and_check(&mut m))
        .unwrap()
        .join()
        .unwrap();
    assert!(d.errors.is_empty(), "{:?}", &d.errors[..1]);
}

fn contradictions(text: &str) -> Vec<Contradiction> {
    let m = crate::text::parse_model(text).unwrap();
    declared_contradictions(&m)
}

#[test]
fn a_declared_output_dtype_inference_contradicts_is_named() {
    // A Conv's output declared int64: validation passes (inference's float wins), but the
    // file says int64 and ONNX Runtime refuses it.
    let text = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3,8,8] X, float[4,3,3,3] W) => (int64[1,4,8,8] Y)
{
  Y = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (X, W)
}"#;
    assert!(validate(&crate::text::parse_model(text).unwrap()).is_ok());
    let c = contradictions(text);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].role, Declared::Output);
    assert_eq!(c[0].name, "Y");
    assert_eq!(c[0].what, "element type");
    assert_eq!(c[0].declared.to_string(), "i64[1,4,8,8]");
    assert_eq!(c[0].inferred.to_string(), "f32[1,4,8,8]");
    // The message names the types as the text format writes them (what a repair prompt shows).
    assert_eq!(
        c[0].to_string(),
        "main graph: output 'Y' is declared int64[1, 4, 8, 8], but inference gives \
         float[1, 4, 8, 8] (element type differs)"
    );
}

#[test]
fn declared_dims_and_ranks_that_inference_contradicts_are_named() {
    let g = |out: &str, vi: &str| {
        format!(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2,3] X) => ({out})\n{vi}\n{{\n  T = Relu (X)\n  Y = Neg (T)\n}}"
        )
    };
    // Agreeing, and saying less than inference: no contradiction.
    for (out, vi) in [
        ("float[2,3] Y", ""),
        ("float[N,3] Y", "<float[2,?] T>"),
        ("float[?,3] Y", "<float[2,3] T>"),
    ] {
        assert_eq!(contradictions(&g(out, vi)), vec![], "{out} {vi}");
    }
    let c = contradictions(&g("float[2,4] Y", ""));
    assert_eq!((c.len(), c[0].what.as_str()), (1, "dim 1"), "{c:?}");
    let c = contradictions(&g("float[6] Y", ""));
    assert_eq!((c.len(), c[0].what.as_str()), (1, "rank"), "{c:?}");
    // `float Y` is a scalar in the text format, not "any shape".
    let c = contradictions(&g("float Y", ""));
    assert_eq!((c.len(), c[0].what.as_str()), (1, "rank"), "{c:?}");
    let c = contradictions(&g("float[2,3] Y", "<double[2,3] T>"));
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].role, c[0].name.as_str()), (Declared::ValueInfo, "T"));
}

#[test]
fn a_graph_input_declared_unlike_its_initializer_is_named() {
    let text = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X, float[3] C) => (float[2] Y)
<float[2] C = {1, 2}>
{
  Y = Add (X, C)
}"#;
    let c = contradictions(text);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].role, c[0].name.as_str()), (Declared::Input, "C"));
    assert!(c[0].to_string().contains("initializer"), "{}", c[0]);
}

#[test]
fn declarations_in_subgraphs_are_compared_too() {
    let text = r#"<ir_version: 8, opset_import: ["" : 17]>
g (bool C, float[2] X) => (float[2] Y)
{
  Y = If (C) <
    then_branch = t () => (int32[2] A) { A = Relu (X) },
    else_branch = e () => (float[2] B) { B = Neg (X) }
  >
}"#;
    let c = contradictions(text);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].name, "A");
    assert!(c[0].graph.contains("then_branch"), "{}", c[0].graph);
}

#[test]
fn inputs_required_from_an_opset_on() {
    let parse = |t: &str| crate::text::parse_model(t).unwrap();
    let errs = |m: &Model| match validate(m) {
        Ok(_) => Vec::new(),
        Err(e) => vec![e.to_string()],
    };
    // Pad without its pads (an input from opset 11): invalid, naming it.
    let m = parse(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (y) {\n  y = Pad (x)\n}",
    );
    let e = errs(&m);
    assert!(
        e.iter()
            .any(|e| e.contains("'pads'") && e.contains("absent")),
        "{e:?}"
    );
    // Slice with an empty starts slot at opset 13.
    let m = parse(
        "<ir_version: 8, opset_import: [\"\" : 13]>\ng (float[4] x, int64[1] e) => (y) {\n  y = Slice (x, \"\", e)\n}",
    );
    let e = errs(&m);
    assert!(
        e.iter()
            .any(|e| e.contains("'starts'") && e.contains("empty")),
        "{e:?}"
    );
    // Before opset 10 Slice takes them as attributes.
    let m = parse(
        "<ir_version: 4, opset_import: [\"\" : 9]>\ng (float[4] x) => (y) {\n  y = Slice <starts = [1], ends = [3]> (x)\n}",
    );
    assert!(errs(&m).is_empty(), "{:?}", errs(&m));
}

/// ScatterElements' `reduction` gained max and min at opset 18: at 16 and 17 only none, add
/// and mul are legal (a campaign that wrote min at 17 filed ORT's refusal as a finding).
#[test]
fn a_scatter_reduction_is_checked_against_its_opset() {
    let at = |opset: i64, reduction: &str| {
        let mut p = model("ScatterElements", "");
        p.opset_import[0].version = Some(opset);
        p.graph.as_mut().unwrap().node[0]
            .attribute
            .push(pb::AttributeProto {
                name: Some("reduction".into()),
                r#type: Some(3),
                s: Some(reduction.as_bytes().to_vec()),
                ..Default::default()
            });
        errors(p)
            .into_iter()
            .filter(|e| e.contains("reduction"))
            .collect::<Vec<_>>()
    };
    assert!(!at(17, "min").is_empty());
    assert!(!at(17, "max").is_empty());
    assert_eq!(at(17, "mul"), Vec::<String>::new());
    assert_eq!(at(18, "min"), Vec::<String>::new());
    assert_eq!(at(16, "add"), Vec::<String>::new());
}

/// MeanVarianceNormalization's function body has float constants: on float16 ONNX's checker
/// refuses the model (its Add binds float16 and float), so it is ambiguous, never generated.
#[test]
fn mean_variance_normalization_on_another_type_than_float_is_ambiguous() {
    let at = |ty: &str| {
        let m = crate::text::parse_model(&format!(
            "<ir_version: 8, opset_import: [\"\" : 13]>\n\
             g ({ty}[1,2,2,2] x) => ({ty}[1,2,2,2] y) \
             {{ y = MeanVarianceNormalization <axes: ints = [0, 2, 3]> (x) }}"
        ))
        .unwrap();
        check(&m).ambiguous
    };
    assert_eq!(at("float"), Vec::<String>::new());
    let f16 = at("float16");
    assert!(f16.iter().any(|a| a.contains("function body")), "{f16:?}");
}

/// ReduceLogSum with noop_with_empty_axes=1 and no axes: the text says the output is the
/// input, the function body takes its log (ONNX Runtime gave -inf for 0 where the reference
/// kept 0): ambiguous. ReduceSum has no such body.
#[test]
fn a_noop_reduction_through_a_function_body_is_ambiguous() {
    let at = |op: &str, noop: i64| {
        let m = crate::text::parse_model(&format!(
            "<ir_version: 8, opset_import: [\"\" : 18]>\n\
             g (float[1] x) => (float[1] y) \
             {{ y = {op} <noop_with_empty_axes: int = {noop}> (x) }}"
        ))
        .unwrap();
        check(&m).ambiguous
    };
    assert!(!at("ReduceLogSum", 1).is_empty());
    assert!(!at("ReduceL2", 1).is_empty());
    assert_eq!(at("ReduceLogSum", 0), Vec::<String>::new());
    assert_eq!(at("ReduceSum", 1), Vec::<String>::new());
}

/// The model onnxruntime.transformers writes: LayerNormalization and SimplifiedLayerNormalization
/// in the default domain at opset 13 (ONNX Runtime's own schemas, `onnx_ops::ort_default`).
fn ort_fused(opset: i64, scale: &str) -> Model {
    crate::text::parse_model(&format!(
        "<ir_version: 8, opset_import: [\"\" : {opset}]>\n\
         g (float[2, 4] x) => (float[2, 4] z, float[2, 1] inv)\n\
         <float[{scale}] s = {{1, 2, 3, 4}}, float[4] b = {{0, 0, 1, 1}}>\n\
         {{\n\
           y = LayerNormalization (x, s, b)\n\
           z, inv = SimplifiedLayerNormalization (y, s)\n\
         }}"
    ))
    .unwrap()
}

#[test]
fn onnx_runtimes_own_schemas_in_the_default_domain_are_a_warning() {
    let d = check(&ort_fused(13, "4"));
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
    for (w, op) in d
        .warnings
        .iter()
        .zip(["LayerNormalization", "SimplifiedLayerNormalization"])
    {
        assert!(
            w.starts_with(&format!("main graph: node {op}#"))
                && w.contains(&format!(
                    "{op} is ONNX Runtime's own schema in the default domain (since version 1"
                ))
                && w.contains("onnx.checker refuses it"),
            "{w}"
        );
    }
    assert!(d.warnings[0].contains("ONNX defines it from opset 17 on, not at 13"));
    assert!(d.warnings[1].contains("ONNX defines no such op"));
    // Types are inferred and checked as for ONNX's ops: inv_std_var per row, in float.
    let mut m = ort_fused(13, "4");
    crate::infer::infer_model(&mut m, Options::default());
    let inv = m.graph.types.get("inv").unwrap();
    assert_eq!(
        inv,
        &ValueType::Tensor(TensorType::fixed(DType::F32, &[2, 1]))
    );
    // From 17 on LayerNormalization is ONNX's own: only SimplifiedLayerNormalization warns.
    let d = check(&ort_fused(17, "4"));
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
    // The specs still hold: a scale that does not broadcast to the normalized shape is refused.
    let e = check(&ort_fused(13, "2, 2")).errors;
    assert!(
        e.iter()
            .any(|e| e.starts_with("node SimplifiedLayerNormalization#1: cannot broadcast")),
        "{e:?}"
    );
}
