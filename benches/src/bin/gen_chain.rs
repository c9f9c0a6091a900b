//! Writes a generated chain model for measuring seed reduction on large graphs (never
//! committed): `gen-chain N OUT.onnx [--constant-weights]`.
//!
//! The chain repeats `Conv 3×3 → BatchNormalization → Relu → Conv 1×1 → Relu` on a
//! `1×8×8×8` tensor until it has `N` ops (the last block may be cut short), then a
//! `GlobalAveragePool`. With `--constant-weights` the weights are `Constant` nodes (counted in
//! `N`), as Paddle's exporter writes them.
use mutagraph_mutators::builder::GraphBuilder;
use mutagraph_mutators::ir::DType;
use mutagraph_mutators::ir::attr::AttrValue;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(out)) = (args.first(), args.get(1)) else {
        eprintln!("usage: gen-chain N OUT.onnx [--constant-weights]");
        std::process::exit(2);
    };
    let n: usize = n.parse().expect("N: a number of ops");
    let constant = args.iter().any(|a| a == "--constant-weights");
    let m = chain(n, constant);
    m.save(out).expect("write the model");
    eprintln!("{out}: {} ops", m.graph.node_count());
}

fn chain(n: usize, constant: bool) -> mutagraph_mutators::ir::Model {
    let mut b = GraphBuilder::new("chain", 7);
    let mut x = b.input("x", DType::F32, &[1, 8, 8, 8]);
    let mut count = 0usize;
    let mut step = 0usize;
    while count + 1 < n {
        x = match step % 5 {
            0 | 3 => {
                let k = if step.is_multiple_of(5) { 3 } else { 1 };
                let out = b.conv(&x, 8, k, 1, k / 2, 1);
                count += 1;
                if constant {
                    count += 2;
                }
                out
            }
            1 => {
                count += 1;
                b.batchnorm(&x)
            }
            _ => {
                count += 1;
                b.relu(&x)
            }
        };
        step += 1;
    }
    let y = b.global_avg_pool(&x);
    b.output(&y);
    let mut m = b.finish().expect("a valid chain");
    if constant {
        to_constant_nodes(&mut m, &["conv_w", "conv_b"]);
    }
    m
}

/// Turns the initializers whose names start with one of `prefixes` into `Constant` nodes.
fn to_constant_nodes(m: &mut mutagraph_mutators::ir::Model, prefixes: &[&str]) {
    use mutagraph_mutators::ir::Node;
    use mutagraph_mutators::ir::patch::{Patch, PatchOp};
    let mut p = Patch::new();
    let names: Vec<String> = m
        .graph
        .initializers
        .keys()
        .filter(|k| prefixes.iter().any(|p| k.starts_with(p)))
        .cloned()
        .collect();
    for name in names {
        let t = m.graph.initializers[&name].clone();
        p.push(PatchOp::RemoveInitializer(name.clone()));
        p.push(PatchOp::AddNode(
            Node::new("Constant", &[], &[&name]).with_attr("value", AttrValue::Tensor(t)),
        ));
    }
    m.apply(&p).expect("constant nodes");
}
