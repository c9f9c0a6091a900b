//! Every model of the ONNX backend test suite passes `validate()`: arity, attribute schema,
//! dtype constraints and shape inference of the op registry agree with real models.
use mutagraph_ir::Model;
use mutagraph_ir::validate::check;
use mutagraph_tests::{rel, suite_models};
use std::collections::BTreeMap;

#[test]
fn every_suite_model_validates() {
    let mut failures = Vec::new();
    let mut unknown: BTreeMap<String, usize> = BTreeMap::new();
    let models = suite_models();
    for path in &models {
        let m = Model::load(path).unwrap();
        let d = check(&m);
        for w in &d.warnings {
            if let Some(op) = w.strip_prefix("no spec for op ") {
                *unknown
                    .entry(op.split(' ').next().unwrap().to_string())
                    .or_default() += 1;
            }
        }
        if !d.errors.is_empty() {
            failures.push(format!("{}: {}", rel(path), d.errors.join("; ")));
        }
    }
    println!("ops without a spec: {unknown:?}");
    for f in &failures {
        println!("{f}");
    }
    assert_eq!(models.len(), 1072, "the Debian suite has 1072 models");
    assert!(
        failures.is_empty(),
        "{} of {} models fail validation:\n{}",
        failures.len(),
        models.len(),
        failures.join("\n")
    );
    assert!(
        unknown.is_empty(),
        "ops of the suite without a spec: {unknown:?}"
    );
}
