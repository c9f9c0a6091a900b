//! The seed zoo: every model validates, is fully typed, is deterministic, and runs on every
//! in-process CPU backend with finite outputs that agree with the reference interpreter.
//!
//! Documented exception: burn's interpreter has no `LSTM` / `GRU`, so the `lstm` and `gru`
//! seeds are `unsupported` on `burn-ndarray` (and only there).
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::compare::{CompareOptions, Tolerance, compare};
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_mutators::ir::infer;
use mutagraph_mutators::ir::validate::validate;
use mutagraph_mutators::zoo;

const SEED: u64 = 0x5eed;

/// Backends that may refuse a zoo model as unsupported: (backend, model).
const UNSUPPORTED: &[(&str, &str)] = &[];

#[test]
fn zoo_has_twelve_distinct_models() {
    let names = zoo::names();
    assert_eq!(names.len(), 12);
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 12);
    for (name, m) in zoo::all() {
        println!(
            "{name:20} {:3} nodes {:6} parameters  {}",
            m.graph.node_count(),
            zoo::parameter_count(&m),
            zoo::op_types(&m).join(" ")
        );
        assert!(m.graph.node_count() >= 5, "{name} is too small");
        assert!(
            zoo::parameter_count(&m) > 1000,
            "{name} has too few weights"
        );
    }
}

#[test]
fn every_model_validates_and_infers_fully_known_types() {
    for (name, m) in zoo::all() {
        validate(&m).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut copy = m.clone();
        let report = infer::infer_model(
            &mut copy,
            infer::Options {
                use_declared: false,
            },
        );
        assert!(report.errors.is_empty(), "{name}: {:?}", report.errors);
        assert!(
            report.unknown_ops.is_empty(),
            "{name}: {:?}",
            report.unknown_ops
        );
        for value in copy.graph.defined_values() {
            let ty = copy.graph.value_type(&value);
            assert!(ty.is_fully_known(), "{name}: '{value}' is {ty:?}");
        }
        for o in &m.graph.outputs {
            let ty = copy.graph.value_type(o.name.as_deref().unwrap());
            assert!(ty.is_fully_known(), "{name}: output {ty:?}");
        }
        // A round trip through bytes keeps the model.
        let back = mutagraph_mutators::ir::Model::from_bytes(&m.to_bytes()).unwrap();
        assert_eq!(back.to_bytes(), m.to_bytes(), "{name}: round trip");
    }
}

#[test]
fn every_model_is_deterministic() {
    let first: Vec<Vec<u8>> = zoo::all().iter().map(|(_, m)| m.to_bytes()).collect();
    let second: Vec<Vec<u8>> = zoo::all().iter().map(|(_, m)| m.to_bytes()).collect();
    assert_eq!(first, second);
    for (name, bytes) in zoo::names().iter().zip(&first) {
        assert_eq!(&zoo::build(name).unwrap().to_bytes(), bytes, "{name}");
    }
    // Different models really differ.
    for i in 0..first.len() {
        for j in i + 1..first.len() {
            assert_ne!(first[i], first[j]);
        }
    }
}

#[test]
fn every_model_runs_on_every_backend_and_agrees_with_the_reference() {
    let config = Config::default();
    let mut reference = catalog::create("reference-f64", &config).unwrap();
    let mut failures = Vec::new();
    for (name, m) in zoo::all() {
        let bytes = m.to_bytes();
        let feeds = inputs::generate(&m, SEED, &GenOptions::default()).unwrap();
        let expected = reference
            .prepare(&bytes)
            .and_then(|mut p| p.run(&feeds))
            .unwrap_or_else(|e| panic!("{name} on the reference: {e}"));
        assert_eq!(expected.len(), m.graph.outputs.len());
        for (out, v) in &expected {
            for t in v.tensors() {
                assert_eq!(
                    t.nan_inf_counts(),
                    (0, 0),
                    "{name}/{out}: reference not finite"
                );
                let vals = t.to_f64s().unwrap();
                let max = vals.iter().fold(0f64, |a, v| a.max(v.abs()));
                assert!(max > 1e-6 && max < 1e4, "{name}/{out}: max |value| {max}");
            }
        }
        for backend in ["reference", "ort", "tract", "burn-ndarray"] {
            let mut be = catalog::create(backend, &config).unwrap();
            let got = be.prepare(&bytes).and_then(|mut p| p.run(&feeds));
            let allowed = UNSUPPORTED.contains(&(backend, name));
            let got = match got {
                Ok(got) => {
                    if allowed {
                        failures.push(format!(
                            "{name} on {backend}: ran, but is documented unsupported"
                        ));
                    }
                    got
                }
                Err(e) if e.unsupported && allowed => {
                    println!("{name:20} {backend:13} unsupported (documented): {e}");
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{name} on {backend}: {e}"));
                    continue;
                }
            };
            assert_eq!(got.len(), expected.len(), "{name} on {backend}");
            for ((en, ev), (gn, gv)) in expected.iter().zip(&got) {
                assert_eq!(en, gn);
                for t in gv.tensors() {
                    if t.nan_inf_counts() != (0, 0) {
                        failures.push(format!("{name} on {backend}: non-finite output"));
                    }
                }
                let cmp = compare(
                    ev,
                    gv,
                    CompareOptions {
                        tolerance: Tolerance::APPROXIMATE,
                        check_dtype: false,
                    },
                );
                println!(
                    "{name:20} {backend:13} max abs {:.2e} max rel {:.2e} {}",
                    cmp.metrics.max_abs,
                    cmp.metrics.max_rel,
                    if cmp.ok { "ok" } else { "MISMATCH" }
                );
                if !cmp.ok {
                    failures.push(format!(
                        "{name} on {backend}: {}",
                        cmp.reason.unwrap_or_default()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
