//! The built-in seed zoo: classic architectures built with [`GraphBuilder`] from fixed seeds
//! and random weights (nothing is downloaded), small enough that one CPU inference takes
//! milliseconds.
//!
//! Every model is deterministic: building it twice gives the same bytes. All take one f32
//! input of fixed shape and use opset [`crate::builder::DEFAULT_OPSET`].
use crate::builder::GraphBuilder;
use crate::ir::Model;

mod classic;
mod multi_branch;
mod recurrent;
mod resnet;
mod separable;
mod transformer;

/// One zoo entry: its name and the function that builds it.
type Entry = (&'static str, fn() -> GraphBuilder);

const ENTRIES: &[Entry] = &[
    ("lenet5", classic::lenet5),
    ("alexnet", classic::alexnet),
    ("vgg", classic::vgg),
    ("resnet_basic", resnet::resnet_basic),
    ("resnet_bottleneck", resnet::resnet_bottleneck),
    ("mobilenetv2", separable::mobilenetv2),
    ("densenet_block", multi_branch::densenet_block),
    ("inception_block", multi_branch::inception_block),
    ("xception", separable::xception),
    ("lstm", recurrent::lstm),
    ("gru", recurrent::gru),
    ("transformer_encoder", transformer::transformer_encoder),
];

/// The names of the zoo models, in zoo order.
pub fn names() -> Vec<&'static str> {
    ENTRIES.iter().map(|(n, _)| *n).collect()
}

fn finish(name: &str, b: GraphBuilder) -> Model {
    b.finish()
        .unwrap_or_else(|e| panic!("zoo model '{name}' does not build: {e}"))
}

/// Builds the zoo model called `name`, if there is one.
pub fn build(name: &str) -> Option<Model> {
    ENTRIES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, f)| finish(n, f()))
}

/// Every zoo model with its name, in zoo order.
pub fn all() -> Vec<(&'static str, Model)> {
    ENTRIES.iter().map(|(n, f)| (*n, finish(n, f()))).collect()
}

/// Number of parameters of a model: elements of its floating-point initializers.
pub fn parameter_count(model: &Model) -> usize {
    use crate::ir::tensor::TensorExt;
    model
        .graph
        .initializers
        .values()
        .filter(|t| t.dtype().is_float())
        .map(|t| t.num_elements() as usize)
        .sum()
}

/// The distinct op types of a model, sorted.
pub fn op_types(model: &Model) -> Vec<String> {
    let mut ops: Vec<String> = model.graph.nodes().map(|n| n.op_type.clone()).collect();
    ops.sort();
    ops.dedup();
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_builds_and_names_match() {
        let models = all();
        assert_eq!(models.len(), 12);
        for (name, m) in &models {
            assert_eq!(m.graph.name.as_deref(), Some(*name));
            assert!(build(name).is_some());
            println!(
                "{name}: {} nodes, {} parameters, ops {:?}",
                m.graph.node_count(),
                parameter_count(m),
                op_types(m)
            );
        }
        assert!(build("no_such_model").is_none());
    }
}
