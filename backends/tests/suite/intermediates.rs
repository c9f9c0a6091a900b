//! Every intermediate value exposed as a graph output: the exposed model still loads, gives the
//! same final outputs, and yields one extra output per node output of the main graph.
#![cfg(feature = "ort")]
use mutagraph_backends::catalog::{Config, create};
use mutagraph_backends::suite;
use mutagraph_ir::slice::expose_all;

#[test]
fn exposed_model_keeps_outputs_and_adds_every_intermediate() {
    let refs = suite::discover(&suite::root(), &["pytorch-converted"]).expect("suite");
    let mut checked = 0;
    for r in refs.iter().filter(|c| c.name.contains("Conv")).take(6) {
        let case = suite::load(r).unwrap();
        let (exposed, added) = expose_all(&case.model).unwrap();
        let inner: usize = case
            .model
            .graph
            .nodes()
            .map(|n| n.outputs.iter().filter(|o| !o.is_empty()).count())
            .sum();
        let outer = case.model.graph.outputs.len();
        assert_eq!(added.len() + outer, inner.max(outer), "{}", r.id());
        let mut b = create("ort", &Config::default()).unwrap();
        let mut plain = b.prepare(&case.model_bytes).unwrap();
        let mut full = b.prepare(&exposed.to_bytes()).unwrap();
        let inputs = &case.sets[0].inputs;
        let a = plain.run(inputs).unwrap();
        let z = full.run(inputs).unwrap();
        assert_eq!(z.len(), a.len() + added.len(), "{}", r.id());
        for (name, v) in &a {
            let w = &z.iter().find(|(n, _)| n == name).unwrap().1;
            assert_eq!(v, w, "{}: output {name} changed", r.id());
        }
        for e in &added {
            assert!(z.iter().any(|(n, _)| *n == e.value), "{} missing", e.value);
        }
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} models checked");
}
