//! The textual syntax: each construct, errors with their line and column, round trips, and
//! no panics on truncated or mangled texts.
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::text::{
    TextError, normalize, parse_function, parse_graph, parse_model, print_function, print_graph,
    print_model,
};
use mutagraph_ir::{AttrValue, DType, Dim, Model, TensorType, ValueType, pb};
use prost::Message;

const BRIEF: &str = r#"<ir_version: 8, opset_import: ["" : 18]>
agraph (float[N, 3] X, float[3] B) => (float[N, 3] Y) {
    T = Mul (X, X)
    Y = Add <some_attr = 1> (T, B)
}
"#;

/// A text using most of the syntax.
const RICH: &str = r#"
# A model with most constructs.
<
  ir_version: 9,
  opset_import: ["" : 18, "com.microsoft" : 1],
  producer_name: "hand \"written\"",
  producer_version: "1.0",
  domain: "test.text",
  model_version: 3,
  doc_string: "line one
line two",
  metadata_props: ["author": "me", "k": "v"]
>
"main graph" (float[N, 3, ?] X, int64 s, float[] u, seq(float[3]) q, optional(int64[2]) o,
              map(int64, float) mp, sparse_tensor(float[4]) sp, float[2] W = {0.5, -1.5})
   => (float[N, 3] Y, float "out.1", seq(float[3]) Q)
   <int64[2] shape = {3, -1}, float16[2] h = {15360, 48128}, string[2] words = {"a\"b", "c\\d"},
    double[3] d = {0.1, nan, -inf}, uint64[1] big = {18446744073709551615},
    complex64[1] c = {1.0, 2.0}, int4[3] nib = {33, 3}, bool[2] flags = {1, 0},
    float[2] ext = ["location": "w.bin", "offset": "0"], float[N, 3] T>
{
  T = Mul (X, X)                               # comment after a node
  ["named node"] Y = Add <some_attr = 1> (T, W)
  "out.1", "" = com.microsoft.Fancy <f: float = 1e-05, i = -3, s = "str", fs = [1.0, 2.5],
      is: ints = [], ss = ["a", "b"], t = float[2] tname {1, 2},
      ts: tensors = [int64 {7}, float[1] {2.5}], tp: type_proto = seq(float[2]),
      tps: type_protos = [float, int64[3]]> (X, "", s)
  Q = Identity (q)
  = Sink <g: graph = body (float a) => (float b) { b = Neg (a) }> (Y)
  R = If (s) <then_branch: graph = then_body () => (float[2] out) <float[2] k = {1, 2}> {
      out = Identity (k)
    }, else_branch = else_body () => (float[2] out) {
      out = Constant <value = float[2] {3, 4}> ()
    }>
}
<domain: "com.microsoft", opset_import: ["" : 18], doc_string: "a function", overload: "v2">
Fancy <alpha, beta: float = 0.5> (A, float[2] Bx) => (C) <float[2] tmp> {
  tmp = Mul (A, Bx)
  C = LeakyRelu <alpha: float = @alpha> (tmp)
}
"#;

fn graph_bytes(g: &mutagraph_ir::Graph) -> Vec<u8> {
    mutagraph_ir::export::graph_to_proto(g).encode_to_vec()
}

fn err(src: &str) -> TextError {
    match parse_model(src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e,
    }
}

fn tensor_type(m: &Model, name: &str) -> ValueType {
    m.graph.declared_type(name).unwrap()
}

#[test]
fn the_brief_example() {
    let m = parse_model(BRIEF).unwrap();
    assert_eq!(m.ir_version, Some(8));
    assert_eq!(m.opset(""), Some(18));
    assert_eq!(m.graph.name.as_deref(), Some("agraph"));
    assert_eq!(
        tensor_type(&m, "X"),
        ValueType::t(
            DType::F32,
            Some(vec![Dim::Param("N".into()), Dim::Known(3)])
        )
    );
    let ops: Vec<&str> = m.graph.nodes().map(|n| n.op_type.as_str()).collect();
    assert_eq!(ops, ["Mul", "Add"]);
    let add = m.graph.nodes().nth(1).unwrap();
    assert_eq!(add.inputs, ["T", "B"]);
    assert_eq!(add.attr("some_attr"), Some(&AttrValue::Int(1)));
    assert_eq!(add.domain, None);
}

#[test]
fn types() {
    let m = parse_model(RICH).unwrap();
    assert_eq!(
        tensor_type(&m, "X"),
        ValueType::t(
            DType::F32,
            Some(vec![Dim::Param("N".into()), Dim::Known(3), Dim::Unknown])
        )
    );
    // `int64` is a scalar (empty shape), `float[]` has no shape at all.
    assert_eq!(tensor_type(&m, "s"), ValueType::t(DType::I64, Some(vec![])));
    assert_eq!(tensor_type(&m, "u"), ValueType::t(DType::F32, None));
    assert_eq!(
        tensor_type(&m, "q"),
        ValueType::Sequence(Box::new(ValueType::Tensor(TensorType::fixed(
            DType::F32,
            &[3]
        ))))
    );
    assert_eq!(
        tensor_type(&m, "o"),
        ValueType::Optional(Box::new(ValueType::Tensor(TensorType::fixed(
            DType::I64,
            &[2]
        ))))
    );
    assert_eq!(
        tensor_type(&m, "mp"),
        ValueType::Map(DType::I64, Box::new(ValueType::t(DType::F32, Some(vec![]))))
    );
    assert_eq!(
        tensor_type(&m, "sp"),
        ValueType::SparseTensor(TensorType::fixed(DType::F32, &[4]))
    );
    let g =
        parse_graph("g (opaque(com.x, Thing) a, opaque(Thing) b, opaque() c) => () {}").unwrap();
    assert_eq!(
        g.declared_type("a"),
        Some(ValueType::Opaque("com.x".into(), "Thing".into()))
    );
    assert_eq!(
        g.declared_type("b"),
        Some(ValueType::Opaque(String::new(), "Thing".into()))
    );
    // Untyped values, and a type keyword used as a name.
    let g = parse_graph("g (x, float float) => (y) { y = Add (x, float) }").unwrap();
    assert_eq!(g.inputs[0].r#type, None);
    assert_eq!(g.inputs[1].name.as_deref(), Some("float"));
}

#[test]
fn every_element_type_name() {
    for (name, dtype) in [
        ("float", DType::F32),
        ("double", DType::F64),
        ("float16", DType::F16),
        ("bfloat16", DType::BF16),
        ("int8", DType::I8),
        ("int16", DType::I16),
        ("int32", DType::I32),
        ("int64", DType::I64),
        ("uint8", DType::U8),
        ("uint16", DType::U16),
        ("uint32", DType::U32),
        ("uint64", DType::U64),
        ("bool", DType::Bool),
        ("string", DType::String),
        ("complex64", DType::C64),
        ("complex128", DType::C128),
        ("float8e4m3fn", DType::F8E4M3FN),
        ("float8e4m3fnuz", DType::F8E4M3FNUZ),
        ("float8e5m2", DType::F8E5M2),
        ("float8e5m2fnuz", DType::F8E5M2FNUZ),
        ("float8e8m0", DType::F8E8M0),
        ("uint4", DType::U4),
        ("int4", DType::I4),
        ("float4e2m1", DType::F4E2M1),
        ("uint2", DType::U2),
        ("int2", DType::I2),
    ] {
        let value = match dtype {
            DType::String => "\"s\"",
            DType::C64 | DType::C128 => "1, 2",
            _ => "1",
        };
        let src = format!("g ({name}[1] x) => () <{name}[1] w = {{{value}}}> {{}}");
        let g = parse_graph(&src).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            g.declared_type("x"),
            Some(ValueType::Tensor(TensorType::fixed(dtype, &[1]))),
            "{name}"
        );
        assert_eq!(g.initializers["w"].data_type, Some(dtype.code()), "{name}");
        let again = parse_graph(&print_graph(&g)).unwrap();
        assert_eq!(again, g, "{name}");
    }
}

#[test]
fn initializers_and_value_info() {
    let m = parse_model(RICH).unwrap();
    let g = &m.graph;
    // `W` is written in the inputs: an input and an initializer.
    assert!(g.inputs.iter().any(|v| v.name.as_deref() == Some("W")));
    assert_eq!(g.initializers["W"].float_data, [0.5, -1.5]);
    // The `<...>` list: initializers (not inputs) and value_info.
    assert!(!g.inputs.iter().any(|v| v.name.as_deref() == Some("shape")));
    assert_eq!(g.initializers["shape"].int64_data, [3, -1]);
    assert_eq!(g.initializers["shape"].dims, [2]);
    assert_eq!(g.initializers["h"].int32_data, [15360, 48128]);
    assert_eq!(
        g.initializers["words"].string_data,
        [b"a\"b".to_vec(), b"c\\d".to_vec()]
    );
    let d = &g.initializers["d"].double_data;
    assert_eq!(d[0], 0.1);
    assert!(d[1].is_nan());
    assert_eq!(d[2], f64::NEG_INFINITY);
    assert_eq!(g.initializers["big"].uint64_data, [u64::MAX]);
    assert_eq!(g.initializers["c"].float_data, [1.0, 2.0]);
    assert_eq!(g.initializers["nib"].int32_data, [33, 3]);
    assert_eq!(g.initializers["flags"].int32_data, [1, 0]);
    let ext = &g.initializers["ext"];
    assert_eq!(ext.data_location, Some(1));
    assert_eq!(ext.external_data[0].value.as_deref(), Some("w.bin"));
    assert_eq!(g.value_info.len(), 1);
    assert_eq!(g.value_info[0].name.as_deref(), Some("T"));
    // A declared input without a value is just an input.
    let g = parse_graph("g (float[2] w) => (float[2] y) { y = Neg (w) }").unwrap();
    assert!(g.initializers.is_empty());
}

#[test]
fn nodes() {
    let m = parse_model(RICH).unwrap();
    let nodes: Vec<_> = m.graph.nodes().collect();
    assert_eq!(nodes[1].name.as_deref(), Some("named node"));
    let fancy = nodes[2];
    assert_eq!(fancy.domain.as_deref(), Some("com.microsoft"));
    assert_eq!(fancy.op_type, "Fancy");
    assert_eq!(fancy.outputs, ["out.1", ""]);
    assert_eq!(fancy.inputs, ["X", "", "s"]);
    assert!(nodes[4].outputs.is_empty());
    // Attributes written after the inputs.
    let m = parse_model("g (bool c) => () { y = If (c) <then_branch = a () => () {}, else_branch = b () => () {}> }")
        .unwrap();
    let n = m.graph.nodes().next().unwrap();
    assert_eq!(n.attributes.len(), 2);
    assert!(matches!(n.attr("then_branch"), Some(AttrValue::Graph(_))));
    // Dotted domains: the last part is the op type.
    let g = parse_graph("g () => () { y = ai.onnx.preview.training.Adam () }").unwrap();
    let n = g.nodes().next().unwrap();
    assert_eq!(n.domain.as_deref(), Some("ai.onnx.preview.training"));
    assert_eq!(n.op_type, "Adam");
    // Domains and op types that are not identifiers are quoted.
    let g = parse_graph(r#"g () => () { y = "my-domain.x"."Op-1" () }"#).unwrap();
    let n = g.nodes().next().unwrap();
    assert_eq!(
        (n.domain.as_deref(), n.op_type.as_str()),
        (Some("my-domain.x"), "Op-1")
    );
    let printed = print_graph(&g);
    assert!(printed.contains(r#""my-domain.x"."Op-1""#), "{printed}");
    assert_eq!(parse_graph(&printed).unwrap(), g);
}

#[test]
fn attributes() {
    let m = parse_model(RICH).unwrap();
    let fancy = m.graph.nodes().nth(2).unwrap();
    assert_eq!(fancy.attr("f"), Some(&AttrValue::Float(1e-5)));
    assert_eq!(fancy.attr("i"), Some(&AttrValue::Int(-3)));
    assert_eq!(fancy.attr("s"), Some(&AttrValue::String(b"str".to_vec())));
    assert_eq!(fancy.attr("fs"), Some(&AttrValue::Floats(vec![1.0, 2.5])));
    assert_eq!(fancy.attr("is"), Some(&AttrValue::Ints(vec![])));
    assert_eq!(
        fancy.attr("ss"),
        Some(&AttrValue::Strings(vec![b"a".to_vec(), b"b".to_vec()]))
    );
    let t = fancy.tensor("t").unwrap();
    assert_eq!(
        (t.name.as_deref(), &t.dims[..], &t.float_data[..]),
        (Some("tname"), &[2i64][..], &[1.0f32, 2.0][..])
    );
    match fancy.attr("ts") {
        Some(AttrValue::Tensors(ts)) => {
            assert_eq!(ts.len(), 2);
            assert_eq!(ts[0].int64_data, [7]);
            assert!(ts[0].dims.is_empty());
        }
        other => panic!("{other:?}"),
    }
    match fancy.attr("tp") {
        Some(AttrValue::TypeProto(tp)) => assert_eq!(
            ValueType::from_proto(tp),
            ValueType::Sequence(Box::new(ValueType::Tensor(TensorType::fixed(
                DType::F32,
                &[2]
            ))))
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(fancy.attr("tps"), Some(AttrValue::TypeProtos(v)) if v.len() == 2));
    let sink = m.graph.nodes().nth(4).unwrap();
    let body = sink.graph("g").unwrap();
    assert_eq!(body.name.as_deref(), Some("body"));
    assert_eq!(body.node_count(), 1);
    let iff = m.graph.nodes().nth(5).unwrap();
    assert_eq!(iff.graph("then_branch").unwrap().initializers.len(), 1);

    // Kinds follow the literal when no type is declared; a declared float takes an integer.
    let g = parse_graph(
        "g () => () { y = F <a = 1, b = 1.0, c = 1e3, d = nan, e = -inf, f: float = 2, \
         g = [1, 2.5], h = -0.0> () }",
    )
    .unwrap();
    let n = g.nodes().next().unwrap();
    assert_eq!(n.attr("a"), Some(&AttrValue::Int(1)));
    assert_eq!(n.attr("b"), Some(&AttrValue::Float(1.0)));
    assert_eq!(n.attr("c"), Some(&AttrValue::Float(1000.0)));
    assert!(matches!(n.attr("d"), Some(AttrValue::Float(v)) if v.is_nan()));
    assert_eq!(n.attr("e"), Some(&AttrValue::Float(f32::NEG_INFINITY)));
    assert_eq!(n.attr("f"), Some(&AttrValue::Float(2.0)));
    assert_eq!(n.attr("g"), Some(&AttrValue::Floats(vec![1.0, 2.5])));
    assert!(matches!(n.attr("h"), Some(AttrValue::Float(v)) if v.is_sign_negative()));
    // Strings: a backslash makes the next character literal; newlines are literal.
    let g = parse_graph("g () => () { y = F <s = \"a\\\"b\\\\c\\nd\ne\"> () }").unwrap();
    let n = g.nodes().next().unwrap();
    assert_eq!(
        n.attr("s"),
        Some(&AttrValue::String(b"a\"b\\cnd\ne".to_vec()))
    );
}

#[test]
fn attribute_references_and_functions() {
    let m = parse_model(RICH).unwrap();
    assert_eq!(m.functions.len(), 1);
    let f = &m.functions[0];
    assert_eq!(f.name.as_deref(), Some("Fancy"));
    assert_eq!(f.domain.as_deref(), Some("com.microsoft"));
    assert_eq!(f.overload.as_deref(), Some("v2"));
    assert_eq!(f.doc_string.as_deref(), Some("a function"));
    assert_eq!(f.opset_import.len(), 1);
    assert_eq!(f.input, ["A", "Bx"]);
    assert_eq!(f.output, ["C"]);
    assert_eq!(f.attribute, ["alpha"]);
    assert_eq!(f.attribute_proto[0].name.as_deref(), Some("beta"));
    assert_eq!(f.attribute_proto[0].f, Some(0.5));
    // The typed input first, then the `<...>` list.
    let vi: Vec<_> = f
        .value_info
        .iter()
        .map(|v| v.name.as_deref().unwrap())
        .collect();
    assert_eq!(vi, ["Bx", "tmp"]);
    let leaky = &f.node[1].attribute[0];
    assert_eq!(leaky.ref_attr_name.as_deref(), Some("alpha"));
    assert_eq!(leaky.r#type, Some(1));
    // A function alone.
    let src = print_function(f);
    assert_eq!(&parse_function(&src).unwrap(), f);
}

#[test]
fn comments_and_layout() {
    let src = "# leading\ng(float x)=>(float y){y=Neg(x)# trailing\n}# end";
    let g = parse_graph(src).unwrap();
    assert_eq!(g.node_count(), 1);
    // Trailing commas in headers are accepted.
    let m = parse_model("<ir_version: 8,> g () => () {}").unwrap();
    assert_eq!(m.ir_version, Some(8));
}

#[test]
fn round_trips() {
    for src in [BRIEF, RICH] {
        let m = parse_model(src).unwrap();
        let text = print_model(&m);
        let again = parse_model(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(again.to_bytes(), m.to_bytes(), "{text}");
        assert_eq!(print_model(&again), text);
        // What the parser makes is already normal.
        assert_eq!(normalize(&m).to_bytes(), m.to_bytes());
    }
    // (Compared as bytes: the graph holds a NaN.)
    let g = parse_model(RICH).unwrap().graph;
    let again = parse_graph(&print_graph(&g)).unwrap();
    assert!(graph_bytes(&again) == graph_bytes(&g));
}

#[test]
fn names_that_need_quotes() {
    let src = r#"g (float[2] "a b", float "float", int64 "1st") => (float[2] "y.z") {
        "y.z" = Add ("a b", "float")
    }"#;
    let g = parse_graph(src).unwrap();
    let printed = print_graph(&g);
    assert!(printed.contains("\"a b\""), "{printed}");
    assert!(printed.contains("float \"float\""), "{printed}");
    assert_eq!(parse_graph(&printed).unwrap(), g);
}

/// A model with what the text drops: doc strings, raw data, node metadata, sparse
/// initializers, an empty node domain, a legacy attribute without a type.
fn lossy_model() -> Model {
    let mut p = pb::ModelProto {
        ir_version: Some(8),
        opset_import: vec![pb::OperatorSetIdProto {
            domain: None,
            version: Some(18),
        }],
        doc_string: Some("kept".into()),
        ..Default::default()
    };
    let w = pb::TensorProto {
        name: Some("w".into()),
        dims: vec![2],
        data_type: Some(1),
        raw_data: Some(
            [1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()]
                .concat()
                .into(),
        ),
        doc_string: Some("dropped".into()),
        ..Default::default()
    };
    let node = pb::NodeProto {
        input: vec!["x".into(), "w".into()],
        output: vec!["y".into()],
        op_type: Some("Add".into()),
        domain: Some(String::new()),
        doc_string: Some("dropped".into()),
        metadata_props: vec![pb::StringStringEntryProto {
            key: Some("k".into()),
            value: Some("v".into()),
        }],
        attribute: vec![pb::AttributeProto {
            name: Some("legacy".into()),
            i: Some(4),
            ..Default::default()
        }],
        ..Default::default()
    };
    let ty = |dims: &[i64]| pb::TypeProto {
        denotation: Some("dropped".into()),
        value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
            elem_type: Some(1),
            shape: Some(pb::TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|&d| pb::tensor_shape_proto::Dimension {
                        denotation: None,
                        value: Some(pb::tensor_shape_proto::dimension::Value::DimValue(d)),
                    })
                    .collect(),
            }),
        })),
    };
    let vi = |n: &str| pb::ValueInfoProto {
        name: Some(n.into()),
        r#type: Some(ty(&[2])),
        doc_string: Some("dropped".into()),
        ..Default::default()
    };
    p.graph = Some(pb::GraphProto {
        name: Some("g".into()),
        doc_string: Some("dropped".into()),
        node: vec![node],
        input: vec![vi("x")],
        output: vec![vi("y")],
        initializer: vec![w],
        sparse_initializer: vec![pb::SparseTensorProto::default()],
        ..Default::default()
    });
    Model::from_bytes(&p.encode_to_vec()).unwrap()
}

#[test]
fn what_the_text_drops() {
    let m = lossy_model();
    let norm = normalize(&m);
    assert_ne!(norm.to_bytes(), m.to_bytes());
    let back = parse_model(&print_model(&m)).unwrap();
    assert_eq!(back.to_bytes(), norm.to_bytes());
    assert_eq!(back.doc_string.as_deref(), Some("kept"));
    assert_eq!(back.opset_import[0].domain.as_deref(), Some(""));
    let g = &back.graph;
    assert_eq!(g.doc_string, None);
    assert!(g.sparse_initializers.is_empty());
    let w = &g.initializers["w"];
    assert_eq!(
        (w.raw_data.as_ref(), &w.float_data[..]),
        (None, &[1.5, -2.0][..])
    );
    assert_eq!(w.doc_string, None);
    let n = g.nodes().next().unwrap();
    assert_eq!(n.domain, None);
    assert!(n.metadata_props.is_empty());
    assert_eq!(n.attributes[0].type_code, Some(2));
    assert_eq!(n.attr("legacy"), Some(&AttrValue::Int(4)));
    assert_eq!(g.inputs[0].doc_string, None);
    assert_eq!(g.inputs[0].r#type.as_ref().unwrap().denotation, None);
}

#[test]
fn errors_carry_line_and_column() {
    let e = err("<ir_version: 8>\ng (float[2] x) => (float[2] y) {\n    y = Add (T, B {\n}");
    assert_eq!(
        e.to_string(),
        "3:19: expected ')' after the inputs of node 'Add', found '{'"
    );
    let e = err("g (float[2] x) => (y) {\n  y = Neg (x)\n");
    assert_eq!((e.line, e.col), (3, 1));
    assert!(e.message.contains("'}' to close graph 'g'"), "{e}");
    let e = err("g () => () <float[3] w = {1, 2}> {}");
    assert_eq!((e.line, e.col), (1, 26));
    assert!(e.message.contains("needs 3 values, found 2"), "{e}");
    let e = err("g () => () <float[1] w = {1, 2}> {}");
    assert!(e.message.contains("needs 1 values, found 2"), "{e}");
    let e = err("g () => () <float[N] w = {1}> {}");
    assert_eq!((e.line, e.col), (1, 13));
    assert!(e.message.contains("numeric dimensions"), "{e}");
    let e = err("g () => () <float w = {1}, float w = {2}> {}");
    assert_eq!((e.line, e.col), (1, 28));
    assert!(e.message.contains("defined twice"), "{e}");
    let e = err("<ir_version: 8, colour: \"red\"> g () => () {}");
    assert_eq!((e.line, e.col), (1, 17));
    assert!(e.message.contains("unknown key 'colour'"), "{e}");
    let e = err("<ir_version: 8, ir_version: 9> g () => () {}");
    assert!(e.message.contains("appears twice"), "{e}");
    let e = err("g () => () { y = F <a: int = 1.5> () }");
    assert_eq!((e.line, e.col), (1, 30));
    assert!(e.message.contains("must be an integer"), "{e}");
    let e = err("g () => () { y = F <a = []> () }");
    assert!(
        e.message.contains("empty list needs a declared type"),
        "{e}"
    );
    let e = err("g () => () { y = F <a: blob = 1> () }");
    assert_eq!((e.line, e.col), (1, 24));
    let e = err("g () => () { y = F <a: ints = 1> () }");
    assert!(e.message.contains("'['"), "{e}");
    let e = err("g () => () { y = F <a = [1, \"x\"]> () }");
    assert!(e.message.contains("different kinds"), "{e}");
    let e = err("g () => () { y = F <t = float[2] {1}> () }");
    assert!(e.message.contains("needs 2 values, found 1"), "{e}");
    let e = err("g (x) => () { y = F (x) }\n  \"open");
    assert_eq!((e.line, e.col), (2, 3));
    assert!(e.message.contains("not closed"), "{e}");
    let e = err("g (x) => () { y = F (x) $ }");
    assert_eq!((e.line, e.col), (1, 25));
    let e = err("");
    assert_eq!(
        e.to_string(),
        "1:1: expected a graph name, found the end of the text"
    );
    let e = err("g () => () { y = F () } trailing");
    assert!(
        e.message.contains("'(' to open the inputs of function"),
        "{e}"
    );
    let e = err("g () => () <int8[1] w = {100000000000}> {}");
    assert!(e.message.contains("int32 range"), "{e}");
    assert!(parse_graph("g () => () {} extra").is_err());
    let e = err("g () => () { y = \"\" () }");
    assert_eq!((e.line, e.col), (1, 18));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        "g ({}float{} x) => () {{}}",
        "seq(".repeat(5000),
        ")".repeat(5000)
    );
    assert!(
        parse_graph(&deep)
            .unwrap_err()
            .message
            .contains("nest deeper")
    );
    let mut g = String::from("y = F ()");
    for _ in 0..200 {
        g = format!("y = F <g = b () => () {{ {g} }}> ()");
    }
    let e = parse_model(&format!("main () => () {{ {g} }}")).unwrap_err();
    assert!(e.message.contains("nest deeper"), "{e}");
}

#[test]
fn truncations_give_errors_not_panics() {
    for src in [BRIEF, RICH] {
        let end_of_graph = src.find("\n}\n").unwrap() + 2;
        for (i, _) in src.char_indices() {
            let r = parse_model(&src[..i]);
            if i < end_of_graph {
                assert!(r.is_err(), "prefix of {i} bytes parsed:\n{}", &src[..i]);
            }
            let _ = parse_graph(&src[..i]);
            let _ = parse_function(&src[i..]);
        }
    }
}

#[test]
fn mangled_texts_give_errors_not_panics() {
    // Replace single characters with grammar characters, deterministically.
    let bytes: Vec<char> = RICH.chars().collect();
    let pool: Vec<char> = "()[]{}<>,=:@.?-\"#0a9 \n".chars().collect();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..3000 {
        let mut s = bytes.clone();
        for _ in 0..3 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % s.len() as u64) as usize;
            s[at] = pool[((state >> 32) % pool.len() as u64) as usize];
        }
        let text: String = s.into_iter().collect();
        if let Ok(m) = parse_model(&text) {
            // Whatever parses prints and parses again.
            parse_model(&print_model(&m)).unwrap();
        }
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn arbitrary_token_soup_never_panics(s in r##"[<>(){}\[\],=:@.?\-"#a-z0-9 \n]{0,80}"##) {
            let _ = parse_model(&s);
            let _ = parse_graph(&s);
            let _ = parse_function(&s);
        }

        #[test]
        fn float_values_round_trip(v in any::<f32>(), d in any::<f64>()) {
            let src = format!(
                "g () => () <float w = {{{}}}, double e = {{{}}}> {{ y = F <a = {}> () }}",
                if v.is_nan() { "nan".to_string() } else { format!("{v:?}") },
                if d.is_nan() { "nan".to_string() } else { format!("{d:?}") },
                if v.is_nan() { "nan".to_string() } else { format!("{v:?}") },
            );
            let g = parse_graph(&src).unwrap();
            let again = parse_graph(&print_graph(&g)).unwrap();
            let w = again.initializers["w"].float_data[0];
            prop_assert!(w.to_bits() == v.to_bits() || (w.is_nan() && v.is_nan()));
            let e = again.initializers["e"].double_data[0];
            prop_assert!(e.to_bits() == d.to_bits() || (e.is_nan() && d.is_nan()));
        }
    }
}
