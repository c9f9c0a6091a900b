//! The coverage model: universes, exact coverage of hand-built models, serde, merging, and
//! figures over the ONNX backend test suite.
use mutagraph_ir::patch::{Patch, PatchOp};
use mutagraph_ir::{AttrValue, DType, Model, Node, TensorType, ValueType, pb};
use mutagraph_mutators::coverage::{Coverage, Delta, Universe};
use std::sync::Arc;
use std::time::Instant;

fn vi(name: &str, dtype: DType, dims: &[i64]) -> pb::ValueInfoProto {
    let t = ValueType::Tensor(TensorType::fixed(dtype, dims));
    pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(t.to_proto()),
        ..Default::default()
    }
}

fn model(inputs: &[(&str, &[i64])], output: &str, nodes: Vec<Node>) -> Model {
    let mut m = Model::new(17);
    for (n, d) in inputs {
        m.graph.inputs.push(vi(n, DType::F32, d));
    }
    m.graph.outputs.push(pb::ValueInfoProto {
        name: Some(output.into()),
        ..Default::default()
    });
    let mut p = Patch::new();
    for n in nodes {
        p.push(PatchOp::AddNode(n));
    }
    m.apply(&p).unwrap();
    m
}

/// x[1,3,8,8] -> Conv(W[4,3,3,3]) -> c[1,4,6,6] -> Relu -> y
fn conv_relu() -> Model {
    model(
        &[("x", &[1, 3, 8, 8]), ("w", &[4, 3, 3, 3])],
        "y",
        vec![
            Node::new("Conv", &["x", "w"], &["c"]),
            Node::new("Relu", &["c"], &["y"]),
        ],
    )
}

#[test]
fn conv_relu_exact_coverage() {
    let mut cov = Coverage::default();
    let d = cov.add_model(&conv_relu());
    assert_eq!(d.op_types, 2);
    assert_eq!(d.op_pairs, 1);
    assert!(cov.has_op("Conv") && cov.has_op("Relu"));
    assert!(!cov.has_op("Add"));
    assert!(cov.has_pair("Conv", "Relu"));
    assert!(!cov.has_pair("Relu", "Conv"));
    assert_eq!(
        cov.covered_pairs(),
        vec![("Conv".to_string(), "Relu".to_string())]
    );
    // Conv's attributes with a default cover the default's bucket; the others (kernel_shape,
    // pads, strides, dilations: no default in the schema) cover nothing.
    assert_eq!(
        cov.covered_params(),
        vec![
            "Conv.group=1".to_string(),
            "Conv.auto_pad=NOTSET".to_string()
        ]
    );
    assert_eq!(d.params, 2);
    assert_eq!(
        cov.covered_inputs(),
        vec![
            "Conv/0/f32/r4/unit".to_string(),
            "Conv/1/f32/r4/general".to_string(),
            "Relu/0/f32/r4/unit".to_string(),
        ]
    );
    assert_eq!(d.inputs, 3);
    assert!(d.is_diverse());

    let r = cov.report();
    assert_eq!(r.models, 1);
    assert_eq!(r.op_types.covered, 2);
    assert_eq!(r.op_pairs.covered, 1);
    assert_eq!(r.params.covered, 2);
    assert_eq!(r.inputs.covered, 3);
    assert!(!r.uncovered_op_types.contains(&"Conv".to_string()));
    assert!(r.uncovered_op_types.contains(&"Add".to_string()));
    assert_eq!(r.uncovered_op_types.len(), r.op_types.total - 2);

    // The same model again adds nothing.
    let before = cov.clone();
    let again = cov.add_model(&conv_relu());
    assert_eq!(again, Delta::default());
    assert!(again.is_empty());
    assert_eq!(cov.report().op_pairs, before.report().op_pairs);
}

#[test]
fn explicit_attributes_pick_their_bucket() {
    let m = model(
        &[("x", &[1, 4, 8, 8]), ("w", &[4, 1, 3, 3])],
        "y",
        vec![
            Node::new("Conv", &["x", "w"], &["c"])
                .with_attr("group", AttrValue::Int(4))
                .with_attr("strides", AttrValue::Ints(vec![2, 2]))
                .with_attr("auto_pad", AttrValue::String(b"SAME_UPPER".to_vec())),
            Node::new("LeakyRelu", &["c"], &["y"]).with_attr("alpha", AttrValue::Float(20.0)),
        ],
    );
    let mut cov = Coverage::default();
    let d = cov.add_model(&m);
    let params = cov.covered_params();
    assert!(
        params.contains(&"Conv.group=2..=4".to_string()),
        "{params:?}"
    );
    assert!(
        params.contains(&"Conv.strides=uniform".to_string()),
        "{params:?}"
    );
    assert!(
        params.contains(&"Conv.auto_pad=SAME_UPPER".to_string()),
        "{params:?}"
    );
    assert!(
        !params.contains(&"Conv.auto_pad=NOTSET".to_string()),
        "{params:?}"
    );
    assert!(
        params.contains(&"LeakyRelu.alpha=[1.000001,inf)".to_string()),
        "{params:?}"
    );
    assert_eq!(d.params, params.len());
    assert!(cov.has_pair("Conv", "LeakyRelu"));

    // The default-valued Conv adds the NOTSET and group=1 buckets only, and no new pair.
    let d2 = cov.add_model(&conv_relu());
    assert_eq!(d2.op_types, 1); // Relu
    assert_eq!(d2.params, 2);
    assert_eq!(d2.op_pairs, 1); // Conv -> Relu
}

#[test]
fn novelty_does_not_change_the_coverage() {
    let cov = Coverage::default();
    let d = cov.novelty(&conv_relu());
    assert_eq!(d.op_types, 2);
    assert_eq!(cov.report().op_types.covered, 0);
    assert_eq!(cov.report().models, 0);
}

#[test]
fn connectable_pairs() {
    let u = Universe::full();
    assert_eq!(u.is_connectable("Relu", "Relu"), Some(true));
    assert_eq!(u.is_connectable("Conv", "Relu"), Some(true));
    // Shape outputs int64; Conv takes floats only.
    assert_eq!(u.is_connectable("Shape", "Conv"), Some(false));
    assert_eq!(u.is_connectable("Shape", "Reshape"), Some(true));
    // Sequences only feed sequence ports.
    assert_eq!(
        u.is_connectable("SequenceConstruct", "SequenceLength"),
        Some(true)
    );
    assert_eq!(u.is_connectable("SequenceConstruct", "Relu"), Some(false));
    assert_eq!(u.is_connectable("Relu", "NoSuchOp"), None);

    let s = u.sizes();
    let n = s.op_types;
    assert!(n > 150, "{s:?}");
    assert!(s.op_pairs > n && s.op_pairs < n * n, "{s:?}");
    assert!(s.params > n, "{s:?}");
    assert!(s.inputs > s.op_types * 16, "{s:?}");
    println!("full universe: {s:?}");
    // The full universe is built once and shared.
    assert!(Arc::ptr_eq(&u, &Universe::full()));
}

#[test]
fn restricted_universe() {
    let u = Universe::restricted(&["Relu", "Conv", "Shape", "Relu"]).unwrap();
    let s = u.sizes();
    assert_eq!(s.op_types, 3);
    // Conv->Conv, Conv->Relu, Relu->Conv, Relu->Relu, and Conv/Relu/Shape -> Shape
    // (Shape takes any dtype); Shape->* is not connectable (int64 into float ops, and
    // Shape->Shape is).
    assert_eq!(s.op_pairs, 8, "{s:?}");
    assert_eq!(
        u.op_types().collect::<Vec<_>>(),
        vec!["Conv", "Relu", "Shape"]
    );
    assert!(Universe::restricted(&["Relu", "Bogus"]).is_err());

    let mut cov = Coverage::new(Arc::new(u));
    let m = model(
        &[("x", &[2, 3])],
        "y",
        vec![
            Node::new("Relu", &["x"], &["a"]),
            Node::new("Sigmoid", &["a"], &["y"]),
        ],
    );
    let d = cov.add_model(&m);
    assert_eq!(d.op_types, 1);
    assert_eq!(d.op_pairs, 0);
    let r = cov.report();
    assert_eq!(r.outside_op_types, vec!["Sigmoid".to_string()]);
    assert_eq!(r.op_types.total, 3);
}

#[test]
fn serde_round_trip() {
    let mut cov = Coverage::default();
    cov.add_model(&conv_relu());
    let json = serde_json::to_string(&cov).unwrap();
    assert!(json.contains("Conv->Relu"), "{json}");
    let back: Coverage = serde_json::from_str(&json).unwrap();
    assert_eq!(back, cov);
    assert_eq!(back.report(), cov.report());

    let u = Arc::new(Universe::restricted(&["Conv", "Relu"]).unwrap());
    let mut rc = Coverage::new(u);
    rc.add_model(&conv_relu());
    let back: Coverage = serde_json::from_str(&serde_json::to_string(&rc).unwrap()).unwrap();
    assert_eq!(back.report(), rc.report());
    assert_eq!(back.universe().restriction().unwrap().len(), 2);
    // Unknown keys (a registry that changed) are dropped, not errors.
    let json = json.replace("\"Relu\"", "\"NoLongerAnOp\"");
    let odd: Coverage = serde_json::from_str(&json).unwrap();
    assert_eq!(odd.report().op_types.covered, 1);
}

#[test]
fn merging() {
    let other = model(
        &[("x", &[2, 3]), ("z", &[2, 3])],
        "y",
        vec![
            Node::new("Relu", &["x"], &["a"]),
            Node::new("Add", &["a", "z"], &["y"]),
        ],
    );
    let mut a = Coverage::default();
    a.add_model(&conv_relu());
    let mut b = Coverage::default();
    b.add_model(&other);
    let mut both = Coverage::default();
    both.add_model(&conv_relu());
    both.add_model(&other);

    let mut merged = a.clone();
    let d = merged.merge(&b);
    assert_eq!(d.op_types, 1); // Add
    assert_eq!(d.op_pairs, 1); // Relu -> Add
    assert_eq!(merged, both);
    assert!(merged.merge(&b).is_empty());

    // Across universes: through the keys, dropping what the target does not have.
    let mut small = Coverage::new(Arc::new(Universe::restricted(&["Relu", "Add"]).unwrap()));
    let d = small.merge(&both);
    assert_eq!(d.op_types, 2);
    assert_eq!(d.op_pairs, 1);
    assert_eq!(small.report().op_pairs.covered, 1);
}

#[test]
fn suite_models_coverage() {
    let models = mutagraph_tests::suite_models();
    if models.is_empty() {
        eprintln!("no ONNX test suite here; skipped");
        return;
    }
    let mut cov = Coverage::default();
    let mut loaded = Vec::new();
    let mut failed = 0;
    for p in &models {
        match Model::load(p) {
            Ok(mut m) => {
                mutagraph_ir::infer::infer_model(&mut m, Default::default());
                loaded.push(m);
            }
            Err(_) => failed += 1,
        }
    }
    assert!(
        failed * 100 < models.len(),
        "{failed} of {} failed",
        models.len()
    );
    let t = Instant::now();
    let mut nodes = 0;
    for m in &loaded {
        nodes += m.graph.node_count();
        cov.add_inferred(m);
    }
    let el = t.elapsed();
    let r = cov.report();
    println!(
        "{} models, {nodes} nodes, coverage pass {:?} ({:.2} µs/node)\n{r}",
        loaded.len(),
        el,
        el.as_secs_f64() * 1e6 / nodes.max(1) as f64
    );
    println!("uncovered op types: {:?}", r.uncovered_op_types);
    println!("outside op types: {:?}", r.outside_op_types);
    println!("outside pairs: {}", r.outside_pairs);
    assert_eq!(r.models, loaded.len() as u64);
    // The node tests exercise nearly every op one at a time: high type coverage, low pairs.
    assert!(r.op_types.percent > 80.0, "{r}");
    assert!(r.op_pairs.covered > 100 && r.op_pairs.percent < 50.0, "{r}");
    assert!(r.params.percent > 30.0, "{r}");
    assert!(r.inputs.covered > 500, "{r}");
    // Adding everything again adds nothing.
    for m in &loaded {
        assert!(cov.add_inferred(m).is_empty());
    }
    // Round trip of a large coverage.
    let back: Coverage = serde_json::from_str(&serde_json::to_string(&cov).unwrap()).unwrap();
    assert_eq!(back, cov);
}

#[test]
fn adding_a_100_node_model_is_fast() {
    let mut nodes = Vec::new();
    let mut prev = "x".to_string();
    let ops = ["Relu", "Sigmoid", "Tanh", "Abs", "Neg"];
    for i in 0..100 {
        let out = if i == 99 {
            "y".to_string()
        } else {
            format!("v{i}")
        };
        nodes.push(Node::new(ops[i % ops.len()], &[&prev], &[&out]));
        prev = out;
    }
    let m = model(&[("x", &[2, 3, 4])], "y", nodes);
    assert!(!m.graph.types.is_empty());
    let mut cov = Coverage::default();
    let d = cov.add_inferred(&m);
    assert_eq!(d.op_types, 5);
    assert_eq!(d.op_pairs, 5);
    let t = Instant::now();
    let reps = 200;
    for _ in 0..reps {
        cov.add_inferred(&m);
    }
    let per = t.elapsed() / reps;
    println!("add_inferred on 100 nodes: {per:?}");
}

#[test]
fn parameter_family_can_be_restricted_to_an_opset() {
    use mutagraph_mutators::coverage::{Coverage, Universe};
    let all = Universe::restricted(&["ReduceMean", "Relu"]).unwrap();
    let full = all.sizes().params;
    let at17 = Universe::restricted(&["ReduceMean", "Relu"])
        .unwrap()
        .params_at_opset(17);
    let at18 = Universe::restricted(&["ReduceMean", "Relu"])
        .unwrap()
        .params_at_opset(18);
    // ReduceMean's `axes` attribute exists up to opset 17 only.
    assert!(at17.sizes().params < full || at18.sizes().params < full);
    assert!(at18.sizes().params < at17.sizes().params);
    // A model at opset 17 covers the `axes` bucket in the opset-17 universe only.
    let mut b = mutagraph_mutators::builder::GraphBuilder::new("rm", 1);
    let x = b.input("x", mutagraph_mutators::ir::DType::F32, &[2, 3]);
    let y = b
        .node(
            "ReduceMean",
            &[&x],
            vec![("axes", mutagraph_mutators::ir::AttrValue::Ints(vec![1]))],
            vec![vec![2, 1]],
        )
        .remove(0);
    b.output(&y);
    let m = b.finish().unwrap();
    let mut c17 = Coverage::new(std::sync::Arc::new(at17));
    assert!(c17.add_model(&m).params > 0);
    assert!(c17.has_param("ReduceMean", "axes", 17, 0).is_some());
    let c18 = Coverage::new(std::sync::Arc::new(at18));
    assert_eq!(c18.has_param("ReduceMean", "axes", 17, 0), None);
}

#[test]
fn item_keys_say_what_a_model_adds_without_the_model() {
    let m = conv_relu();
    let mut own = Coverage::default();
    own.add_model(&m);
    let keys = own.item_keys();
    assert!(keys.iter().any(|k| k == "Conv"), "{keys:?}");
    assert!(keys.iter().any(|k| k == "Conv->Relu"), "{keys:?}");
    assert!(
        keys.iter()
            .any(|k| k.starts_with("Conv.") && k.contains('@'))
    );
    // Over an empty coverage the keys add exactly what adding the model adds.
    let empty = Coverage::default();
    let by_keys = empty.novelty_of_keys(&keys);
    let by_model = empty.novelty(&m);
    assert_eq!(
        (by_keys.op_types, by_keys.op_pairs, by_keys.params),
        (by_model.op_types, by_model.op_pairs, by_model.params)
    );
    assert!(by_keys.is_diverse());
    // Once the model is covered its keys add nothing, and `self` is never changed.
    assert!(!own.novelty_of_keys(&keys).is_diverse());
    assert_eq!(empty, Coverage::default());
}
