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
