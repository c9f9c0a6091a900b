//! The patch API: edits apply all at once, are validated, and leave the model untouched when
//! rejected; node ids stay stable across edits and are never reused.
use mutagraph_ir::patch::{Patch, PatchOp};
use mutagraph_ir::{Model, Node, NodeId, pb};

fn vi(name: &str) -> pb::ValueInfoProto {
    let t = mutagraph_ir::ValueType::Tensor(mutagraph_ir::TensorType::fixed(
        mutagraph_ir::DType::F32,
        &[2, 3],
    ));
    pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(t.to_proto()),
        ..Default::default()
    }
}

/// x -> Relu -> a -> Add(a, x) -> y
fn model() -> Model {
    let mut m = Model::new(17);
    m.graph.inputs.push(vi("x"));
    m.graph.outputs.push(vi("y"));
    let mut p = Patch::new();
    p.push(PatchOp::AddNode(Node::new("Relu", &["x"], &["a"])));
    p.push(PatchOp::AddNode(Node::new("Add", &["a", "x"], &["y"])));
    m.apply(&p).unwrap();
    m
}

#[test]
fn insert_between_producer_and_consumers() {
    let mut m = model();
    let add = m.graph.producer("y").unwrap();
    let mut p = Patch::new();
    p.push(PatchOp::ReplaceUses {
        old: "a".into(),
        new: "a2".into(),
    });
    p.push(PatchOp::AddNode(Node::new("Relu", &["a"], &["a2"])));
    let added = m.apply(&p).unwrap();
    assert_eq!(added.len(), 1);
    assert_eq!(
        m.graph.node(add).unwrap().inputs,
        vec!["a2".to_string(), "x".to_string()]
    );
    assert_eq!(m.graph.node_count(), 3);
    assert_eq!(m.graph.value_type("a2").to_string(), "f32[2,3]");
    let order = m.graph.topo_order().unwrap();
    assert_eq!(order.last(), Some(&add));
}

#[test]
fn rejected_patch_leaves_model_unchanged() {
    let mut m = model();
    let before = m.to_bytes();
    let relu = m.graph.producer("a").unwrap();
    // Removing the producer of a used value leaves a dangling input.
    let mut p = Patch::new();
    p.push(PatchOp::RemoveNode(relu));
    let err = m.apply(&p).unwrap_err().to_string();
    assert!(err.contains("'a'"), "{err}");
    assert_eq!(m.to_bytes(), before);
    // A cycle.
    let mut p = Patch::new();
    p.push(PatchOp::SetInput {
        node: relu,
        slot: 0,
        value: "y".into(),
    });
    let err = m.apply(&p).unwrap_err().to_string();
    assert!(err.contains("cycle"), "{err}");
    assert_eq!(m.to_bytes(), before);
    // Wrong arity.
    let mut p = Patch::new();
    p.push(PatchOp::AddNode(Node::new("Relu", &["x", "x"], &["b"])));
    assert!(m.apply(&p).unwrap_err().to_string().contains("inputs"));
    assert_eq!(m.to_bytes(), before);
}

#[test]
fn ids_are_stable_and_never_reused() {
    let mut m = model();
    let relu = m.graph.producer("a").unwrap();
    let add = m.graph.producer("y").unwrap();
    let mut p = Patch::new();
    p.push(PatchOp::ReplaceUses {
        old: "a".into(),
        new: "x".into(),
    });
    p.push(PatchOp::RemoveNode(relu));
    m.apply(&p).unwrap();
    assert!(m.graph.node(relu).is_none());
    assert_eq!(m.graph.node(add).unwrap().op_type, "Add");
    let mut p = Patch::new();
    p.push(PatchOp::ReplaceUses {
        old: "y".into(),
        new: "z".into(),
    });
    p.push(PatchOp::AddNode(Node::new("Relu", &["y"], &["z"])));
    let added = m.apply(&p).unwrap();
    assert!(
        added[0] > add && added[0] != relu,
        "fresh id {:?}",
        added[0]
    );
    // Replacing keeps the id.
    let mut p = Patch::new();
    p.push(PatchOp::ReplaceNode(
        added[0],
        Node::new("Neg", &["y"], &["z"]),
    ));
    m.apply(&p).unwrap();
    assert_eq!(m.graph.node(added[0]).unwrap().op_type, "Neg");
    assert_eq!(m.graph.outputs[0].name.as_deref(), Some("z"));
    let _ = NodeId(0);
}
