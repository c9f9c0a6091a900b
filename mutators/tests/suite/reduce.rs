//! Seed reduction (MEMO Alg. 1): coverage kept, model valid and runnable, repetition removed.
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_mutators::builder::GraphBuilder;
use mutagraph_mutators::coverage::{Coverage, Universe};
use mutagraph_mutators::ir::validate::validate;
use mutagraph_mutators::ir::{DType, Model};
use mutagraph_mutators::reduce::reduce;
use mutagraph_mutators::zoo;

fn families(m: &Model) -> (Vec<String>, Vec<(String, String)>, Vec<String>) {
    let mut c = Coverage::new(Universe::full());
    c.add_model(m);
    let ops = Universe::full()
        .op_types()
        .filter(|o| c.has_op(o))
        .map(str::to_string)
        .collect();
    (ops, c.covered_pairs(), c.covered_params())
}

#[test]
fn zoo_models_reduce_keeping_coverage_and_validity() {
    let mut reference = catalog::create("reference", &Config::default()).unwrap();
    let (mut before, mut after) = (0, 0);
    for (name, m) in zoo::all() {
        let (r, rep) = reduce(&m).unwrap();
        println!("{name:20} {rep}");
        validate(&r).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(families(&r), families(&m), "{name}: coverage changed");
        assert!(rep.nodes_after <= rep.nodes_before);
        assert_eq!(rep.nodes_after, r.graph.node_count());
        before += rep.nodes_before;
        after += rep.nodes_after;
        let x = inputs::generate(&r, 1, &GenOptions::default()).unwrap();
        let prepared = reference.prepare(&r.to_bytes());
        let out = prepared.and_then(|mut p| p.run(&x));
        assert!(
            out.is_ok(),
            "{name}: reduced model does not run: {:?}",
            out.err()
        );
        if matches!(
            name,
            "transformer_encoder" | "mobilenetv2" | "resnet_bottleneck" | "xception"
        ) {
            assert!(rep.nodes_after < rep.nodes_before, "{name} did not shrink");
            assert!(rep.params_after < rep.params_before, "{name}: same weights");
        }
    }
    println!("zoo: {before} -> {after} nodes");
    assert!(after < before);
}

#[test]
fn six_identical_blocks_reduce_to_what_coverage_needs() {
    let mut b = GraphBuilder::new("blocks", 3);
    let mut x = b.input("x", DType::F32, &[1, 4, 8, 8]);
    for _ in 0..6 {
        let c = b.conv(&x, 4, 3, 1, 1, 1);
        x = b.relu(&c);
    }
    b.output(&x);
    let m = b.finish().unwrap();
    assert_eq!(m.graph.node_count(), 12);
    let (r, rep) = reduce(&m).unwrap();
    // Conv → Relu and Relu → Conv are all the pairs: at most two blocks are needed.
    assert!(r.graph.node_count() <= 4, "{rep}");
    assert_eq!(families(&r), families(&m));
    assert!(rep.params_after * 3 <= rep.params_before);
    validate(&r).unwrap();
}

#[test]
fn reduction_is_deterministic() {
    let m = zoo::build("transformer_encoder").unwrap();
    let (a, _) = reduce(&m).unwrap();
    let (b, _) = reduce(&m).unwrap();
    assert_eq!(a.to_bytes(), b.to_bytes());
}

// ---- Graphs as exporters write them -------------------------------------------------------

use mutagraph_mutators::ir::Node;
use mutagraph_mutators::ir::attr::AttrValue;
use mutagraph_mutators::ir::patch::{Patch, PatchOp};
use mutagraph_mutators::ir::tensor;
use mutagraph_mutators::ir::types::{Dim, ValueType};
use mutagraph_mutators::reduce::{find_blocks, param_count};

/// Rewrites `m` the way torch.onnx and paddle2onnx write weights: every Conv bias becomes an
/// `Identity` of one shared initializer (torch deduplicates equal tensors and hoists the
/// `Identity` nodes), every other initializer except the `Gemm` weights becomes a `Constant`
/// node (paddle2onnx, and torch for small constants).
fn as_exported(m: &mut Model) {
    let mut p = Patch::new();
    let conv_biases: Vec<(mutagraph_mutators::ir::NodeId, String)> = m
        .graph
        .nodes()
        .filter(|n| n.op_type == "Conv" && n.inputs.len() > 2)
        .map(|n| (n.id, n.inputs[2].clone()))
        .collect();
    let gemm_inputs: Vec<String> = m
        .graph
        .nodes()
        .filter(|n| n.op_type == "Gemm")
        .flat_map(|n| n.inputs[1..].to_vec())
        .collect();
    let first = &m.graph.initializers[&conv_biases[0].1];
    let shared = tensor::from_f64s(
        "bias_shared",
        DType::F32,
        &first.dims,
        &vec![0.0; first.dims[0] as usize],
    );
    p.push(PatchOp::AddInitializer(shared));
    for (k, (id, bias)) in conv_biases.iter().enumerate() {
        let out = format!("bias_identity_{k}");
        p.push(PatchOp::AddNode(Node::new(
            "Identity",
            &["bias_shared"],
            &[&out],
        )));
        p.push(PatchOp::SetInput {
            node: *id,
            slot: 2,
            value: out,
        });
        p.push(PatchOp::RemoveInitializer(bias.clone()));
    }
    let biases: Vec<&String> = conv_biases.iter().map(|(_, b)| b).collect();
    let names: Vec<String> = m.graph.initializers.keys().cloned().collect();
    for name in names {
        if biases.contains(&&name) || gemm_inputs.contains(&name) {
            continue;
        }
        let t = m.graph.initializers[&name].clone();
        p.push(PatchOp::RemoveInitializer(name.clone()));
        p.push(PatchOp::AddNode(
            Node::new("Constant", &[], &[&name]).with_attr("value", AttrValue::Tensor(t)),
        ));
    }
    m.apply(&p).unwrap();
}

/// Renumbers the nodes of `m` so that its `Constant` nodes and `Identity` nodes of initializers
/// come first, as torch.onnx writes them: in topological order they are all computed before the
/// first op, so they are all live from the top of the graph.
fn hoist_constants(m: &mut Model) {
    let order = m.graph.topo_order().unwrap();
    let is_const = |n: &Node| {
        n.op_type == "Constant"
            || (n.op_type == "Identity" && m.graph.initializers.contains_key(&n.inputs[0]))
    };
    let nodes: Vec<Node> = order
        .iter()
        .map(|&id| m.graph.node(id).unwrap().clone())
        .collect();
    let mut p = Patch::new();
    for n in &nodes {
        p.push(PatchOp::RemoveNode(n.id));
    }
    for n in nodes
        .iter()
        .filter(|n| is_const(n))
        .chain(nodes.iter().filter(|n| !is_const(n)))
    {
        p.push(PatchOp::AddNode(n.clone()));
    }
    m.apply(&p).unwrap();
}

/// Makes the first dim of the graph inputs and outputs the symbolic `N` (dynamic batch).
fn dynamic_batch(m: &mut Model) {
    for v in m.graph.inputs.iter_mut().chain(m.graph.outputs.iter_mut()) {
        let Some(ValueType::Tensor(mut t)) = v.r#type.as_ref().map(ValueType::from_proto) else {
            continue;
        };
        if let Some(s) = t.shape.as_mut() {
            s[0] = Dim::Param("N".into());
        }
        v.r#type = Some(ValueType::Tensor(t).to_proto());
    }
}

/// A ResNet-like model as an exporter writes it: a Conv+BN+Relu stem, `blocks` residual blocks
/// (Conv, BN, Relu, Conv, BN, Add of the block input, Relu) with `Constant`-node weights and
/// `Identity` biases, all hoisted to the top, and a head that flattens with a `Shape → Gather → Unsqueeze →
/// Concat → Reshape` chain, then a `Gemm`; dynamic batch.
fn exporter_like(blocks: usize) -> Model {
    let mut b = GraphBuilder::new("exported", 11);
    let x0 = b.input("x", DType::F32, &[1, 3, 12, 12]);
    let s = b.conv(&x0, 8, 3, 1, 1, 1);
    let s = b.batchnorm(&s);
    let mut x = b.relu(&s);
    for _ in 0..blocks {
        let c1 = b.conv(&x, 8, 3, 1, 1, 1);
        let n1 = b.batchnorm(&c1);
        let r1 = b.relu(&n1);
        let c2 = b.conv(&r1, 8, 3, 1, 1, 1);
        let n2 = b.batchnorm(&c2);
        let sum = b.add(&n2, &x);
        x = b.relu(&sum);
    }
    let g = b.global_avg_pool(&x);
    let shape = b.node("Shape", &[&g], vec![], vec![vec![4]]).remove(0);
    let idx = b.constant_i64("idx", &[], &[0]);
    let batch = b
        .node(
            "Gather",
            &[&shape, &idx],
            vec![("axis", AttrValue::Int(0))],
            vec![vec![]],
        )
        .remove(0);
    let axes = b.constant_i64("axes", &[1], &[0]);
    let batch1 = b
        .node("Unsqueeze", &[&batch, &axes], vec![], vec![vec![1]])
        .remove(0);
    let rest = b.constant_i64("rest", &[1], &[-1]);
    let target = b
        .node(
            "Concat",
            &[&batch1, &rest],
            vec![("axis", AttrValue::Int(0))],
            vec![vec![2]],
        )
        .remove(0);
    let flat = b
        .node("Reshape", &[&g, &target], vec![], vec![vec![1, 8]])
        .remove(0);
    let y = b.gemm(&flat, 10);
    b.output(&y);
    let mut m = b.finish().unwrap();
    as_exported(&mut m);
    hoist_constants(&mut m);
    dynamic_batch(&mut m);
    validate(&m).unwrap();
    m
}

fn runs_on_reference(m: &Model) {
    let mut reference = catalog::create("reference", &Config::default()).unwrap();
    let x = inputs::generate(m, 1, &GenOptions::default()).unwrap();
    let out = reference.prepare(&m.to_bytes()).and_then(|mut p| p.run(&x));
    assert!(out.is_ok(), "does not run: {:?}", out.err());
}

#[test]
fn blocks_see_through_exported_weights_and_shape_chains() {
    let m = exporter_like(6);
    let blocks = find_blocks(&m);
    for b in &blocks {
        println!("{b}");
    }
    let residual: Vec<_> = blocks
        .iter()
        .filter(|b| {
            b.op_types
                == [
                    "Conv",
                    "BatchNormalization",
                    "Relu",
                    "Conv",
                    "BatchNormalization",
                    "Add",
                ]
        })
        .collect();
    // Each residual block is one block (up to its `Add`: the `Add`'s output alone is live after
    // it, so the final `Relu` is a block of its own), with its two weight `Constant`s, two
    // hoisted bias `Identity`s and eight BN `Constant`s.
    assert_eq!(residual.len(), 6, "{blocks:#?}");
    assert!(residual.iter().all(|b| b.side.len() == 12), "{residual:#?}");
    // The shape chain belongs to the block of the `Reshape` that consumes it.
    let reshape = blocks
        .iter()
        .find(|b| b.op_types.iter().any(|o| o == "Reshape"))
        .unwrap();
    let side: Vec<&str> = reshape
        .side
        .iter()
        .map(|&id| m.graph.node(id).unwrap().op_type.as_str())
        .collect();
    for op in ["Shape", "Gather", "Unsqueeze", "Concat"] {
        assert!(side.contains(&op), "{side:?}");
    }
}

#[test]
fn exporter_like_residual_model_reduces_keeping_coverage() {
    let m = exporter_like(8);
    let (r, rep) = reduce(&m).unwrap();
    println!("{rep}");
    validate(&r).unwrap();
    assert_eq!(families(&r), families(&m), "coverage changed");
    assert_eq!(rep.nodes_before, m.graph.node_count());
    assert_eq!(rep.nodes_after, r.graph.node_count());
    // Stem, one residual block (two would repeat every pair) and the head: at most 1/4.
    assert!(
        rep.nodes_after * 4 <= rep.nodes_before,
        "{} -> {}",
        rep.nodes_before,
        rep.nodes_after
    );
    assert!(rep.params_after * 3 <= rep.params_before, "{rep}");
    runs_on_reference(&r);
}

#[test]
fn param_count_includes_constant_node_weights() {
    let mut b = GraphBuilder::new("consts", 5);
    let x = b.input("x", DType::F32, &[1, 4, 6, 6]);
    let c = b.conv(&x, 4, 3, 1, 1, 1);
    let f = b.flatten(&c, 1);
    let y = b.gemm(&f, 3);
    b.output(&y);
    let mut m = b.finish().unwrap();
    let before = param_count(&m);
    assert_eq!(before, 4 * 4 * 9 + 4 + 3 * 144 + 3);
    as_exported(&mut m);
    // The Conv weight is a `Constant` node now, its bias an `Identity` of a shared initializer
    // of the same size: the count is the same.
    assert!(m.graph.nodes().any(|n| n.op_type == "Constant"));
    assert_eq!(param_count(&m), before);
    // Only Constant nodes: the initializers' count is 0, the parameters are not.
    let mut only = Model::new(17);
    let t = tensor::from_f64s("w", DType::F32, &[2, 3], &[1.0; 6]);
    let mut p = Patch::new();
    p.push(PatchOp::AddNode(
        Node::new("Constant", &[], &["w"]).with_attr("value", AttrValue::Tensor(t)),
    ));
    p.push(PatchOp::AddNode(
        Node::new("Constant", &[], &["v"])
            .with_attr("value_floats", AttrValue::Floats(vec![1.0; 5])),
    ));
    only.apply(&p).unwrap();
    assert_eq!(param_count(&only), 11);
}

/// A chain of `Conv 3×3 → BatchNormalization → Relu` with hoisted `Constant`-node weights, repeated to
/// about `n` ops (nine per block: each `Conv` with its two `Constant`s, each
/// `BatchNormalization` with its four, the `Relu`).
fn chain(n: usize) -> Model {
    let mut b = GraphBuilder::new("chain", 9);
    let mut x = b.input("x", DType::F32, &[1, 4, 6, 6]);
    for _ in 0..n / 9 {
        let c = b.conv(&x, 4, 3, 1, 1, 1);
        let n = b.batchnorm(&c);
        x = b.relu(&n);
    }
    b.output(&x);
    let mut m = b.finish().unwrap();
    as_exported_constants(&mut m);
    hoist_constants(&mut m);
    m
}

#[test]
fn a_long_chain_reduces_to_a_few_ops() {
    let m = chain(2000);
    assert_eq!(m.graph.node_count(), 1998);
    let (r, rep) = reduce(&m).unwrap();
    println!("{rep}");
    // Conv → BN → Relu → Conv: one block and the Conv of the next cover every pair; with their
    // constants and the `Constant → Conv` / `Constant → BatchNormalization` pairs, about 16.
    assert!(r.graph.node_count() <= 20, "{rep}");
    assert_eq!(families(&r), families(&m));
    validate(&r).unwrap();
}

#[test]
fn shape_changing_blocks_go_with_their_readers_weights_adapted() {
    // Channels 8 → 16 → 24 → 32, then global pooling: no two blocks have the same type.
    let mut b = GraphBuilder::new("widening", 13);
    let mut x = b.input("x", DType::F32, &[1, 3, 10, 10]);
    for ch in [8, 16, 24, 32] {
        let c = b.conv(&x, ch, 3, 1, 1, 1);
        x = b.relu(&c);
    }
    let g = b.global_avg_pool(&x);
    let f = b.flatten(&g, 1);
    let y = b.gemm(&f, 5);
    b.output(&y);
    let m = b.finish().unwrap();
    let (r, rep) = reduce(&m).unwrap();
    println!("{rep}");
    assert!(rep.adapted_removed >= 2, "{rep}");
    assert!(r.graph.node_count() < m.graph.node_count());
    assert_eq!(families(&r), families(&m));
    validate(&r).unwrap();
    // Same output type, and it runs.
    let out = |m: &Model| m.graph.outputs[0].r#type.clone();
    assert_eq!(out(&r), out(&m));
    runs_on_reference(&r);
}

#[test]
fn repeated_shape_chains_and_constants_are_merged() {
    // Two identical flatten heads on two branches: their `Shape` chains compute the same value.
    let mut b = GraphBuilder::new("heads", 17);
    let x = b.input("x", DType::F32, &[2, 4, 3, 3]);
    let mut outs = Vec::new();
    for _ in 0..3 {
        let r = b.relu(&x);
        let shape = b.node("Shape", &[&r], vec![], vec![vec![4]]).remove(0);
        let idx = b.constant_i64("idx", &[], &[0]);
        let n = b
            .node(
                "Gather",
                &[&shape, &idx],
                vec![("axis", AttrValue::Int(0))],
                vec![vec![]],
            )
            .remove(0);
        let axes = b.constant_i64("axes", &[1], &[0]);
        let n1 = b
            .node("Unsqueeze", &[&n, &axes], vec![], vec![vec![1]])
            .remove(0);
        let rest = b.constant_i64("rest", &[1], &[-1]);
        let t = b
            .node(
                "Concat",
                &[&n1, &rest],
                vec![("axis", AttrValue::Int(0))],
                vec![vec![2]],
            )
            .remove(0);
        outs.push(
            b.node("Reshape", &[&r, &t], vec![], vec![vec![2, 36]])
                .remove(0),
        );
    }
    let s = b.add(&outs[0], &outs[1]);
    let s = b.add(&s, &outs[2]);
    b.output(&s);
    let mut m = b.finish().unwrap();
    as_exported_constants(&mut m);
    let (r, rep) = reduce(&m).unwrap();
    println!("{rep}");
    let count = |m: &Model, op: &str| m.graph.nodes().filter(|n| n.op_type == op).count();
    assert_eq!(count(&m, "Constant"), 9);
    // One shape chain and one of each constant remain.
    assert_eq!(count(&r, "Constant"), 3, "{rep}");
    assert_eq!(count(&r, "Shape"), 1, "{rep}");
    assert_eq!(families(&r), families(&m));
    validate(&r).unwrap();
}

/// Every initializer becomes a `Constant` node.
fn as_exported_constants(m: &mut Model) {
    let mut p = Patch::new();
    for (name, t) in m.graph.initializers.clone() {
        p.push(PatchOp::RemoveInitializer(name.clone()));
        p.push(PatchOp::AddNode(
            Node::new("Constant", &[], &[&name]).with_attr("value", AttrValue::Tensor(t)),
        ));
    }
    m.apply(&p).unwrap();
}
