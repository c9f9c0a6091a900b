//! Layer, input, value and weight operators: valid, replayable mutants, each doing what its
//! name says.
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::coverage::Coverage;
use mutagraph_mutators::ir::Model;
use mutagraph_mutators::ir::tensor::TensorExt;
use mutagraph_mutators::ir::validate::validate;
use mutagraph_mutators::mutation::{Ctx, Limits, Mutator, Outcome, replay_trace};
use mutagraph_mutators::operators::{layer, weight};
use mutagraph_mutators::recipes::Recipes;
use mutagraph_mutators::zoo;
use std::collections::BTreeMap;
use std::sync::Arc;

fn mutate(
    op: &dyn Mutator,
    m: &mut Model,
    rng: &mut SplitMix64,
    cov: &Coverage,
    r: &Recipes,
) -> Outcome {
    let limits = Limits::default();
    let mut ctx = Ctx {
        rng,
        coverage: cov,
        recipes: r,
        limits: &limits,
    };
    op.mutate(m, &mut ctx)
}

fn setup() -> (Recipes, Coverage) {
    let r = Recipes::for_opset(17);
    let u = Arc::new(r.universe().unwrap());
    (r, Coverage::new(u))
}

#[test]
fn stacked_mutants_validate_and_replay() {
    let (recipes, cov) = setup();
    let mut rng = SplitMix64::new(77);
    let ops: Vec<Box<dyn Mutator>> = layer::all().into_iter().chain(weight::all()).collect();
    for op in &ops {
        let (mut mutated, mut rejected, mut attempts) = (0, 0, 0);
        for (name, seed) in zoo::all() {
            let mut m = seed.clone();
            let mut trace = Vec::new();
            for _ in 0..10 {
                attempts += 1;
                let before = m.to_bytes();
                match mutate(op.as_ref(), &mut m, &mut rng, &cov, &recipes) {
                    Outcome::Mutated(r) => {
                        validate(&m).unwrap_or_else(|e| panic!("{} on {name}: {e}", op.name()));
                        mutated += 1;
                        trace.push(r);
                    }
                    Outcome::Rejected(e) => {
                        eprintln!("{} rejected on {name}: {e}", op.name());
                        rejected += 1;
                        assert_eq!(m.to_bytes(), before);
                    }
                    Outcome::Skipped(_) => assert_eq!(m.to_bytes(), before),
                }
            }
            let (r, skipped) = replay_trace(&seed, &trace, |_| true);
            assert!(skipped.is_empty(), "{} on {name}", op.name());
            assert_eq!(
                r.to_bytes(),
                m.to_bytes(),
                "{} on {name} does not replay",
                op.name()
            );
        }
        println!(
            "{:6} mutated {mutated:3} rejected {rejected} of {attempts}",
            op.name()
        );
        assert!(
            mutated * 2 > attempts,
            "{} mutated only {mutated} of {attempts}",
            op.name()
        );
        assert!(
            rejected * 100 < attempts,
            "{}: {rejected} rejected",
            op.name()
        );
    }
}

fn attrs_of(m: &Model) -> BTreeMap<String, String> {
    m.graph
        .nodes()
        .flat_map(|n| {
            n.attributes.iter().map(move |a| {
                (
                    format!("{}/{}", n.outputs[0], a.name),
                    format!("{:?}", a.value),
                )
            })
        })
        .collect()
}

#[test]
fn attribute_operators_change_attributes_and_prefer_new_buckets() {
    let (recipes, _) = setup();
    for op in [
        Box::new(layer::ChangeShape) as Box<dyn Mutator>,
        Box::new(layer::ChangeMode),
        Box::new(layer::ParameterMutation),
    ] {
        let mut rng = SplitMix64::new(5);
        let (mut changed, mut new_buckets, mut n) = (0, 0, 0);
        for (_, seed) in zoo::all() {
            let mut cov = Coverage::new(Arc::new(recipes.universe().unwrap()));
            cov.add_model(&seed);
            let mut m = seed.clone();
            if let Outcome::Mutated(_) = mutate(op.as_ref(), &mut m, &mut rng, &cov, &recipes) {
                n += 1;
                let (a, b) = (attrs_of(&seed), attrs_of(&m));
                if a != b || m.graph.node_count() != seed.graph.node_count() {
                    changed += 1;
                }
                if cov.novelty(&m).params > 0 {
                    new_buckets += 1;
                }
            }
        }
        println!(
            "{}: {n} mutants, {changed} changed attributes, {new_buckets} new buckets",
            op.name()
        );
        assert!(n >= 8, "{} mutated {n} zoo models", op.name());
        assert_eq!(
            changed,
            n,
            "{}: a mutant without an attribute change",
            op.name()
        );
        assert!(
            new_buckets * 2 >= n,
            "{}: {new_buckets} of {n} covered a new bucket",
            op.name()
        );
    }
}

fn weight_values(m: &Model) -> BTreeMap<String, Vec<f64>> {
    m.graph
        .initializers
        .iter()
        .filter_map(|(k, t)| Some((k.clone(), t.to_f64s().ok()?)))
        .collect()
}

#[test]
fn weight_operators_do_what_they_say() {
    let (recipes, cov) = setup();
    let mut rng = SplitMix64::new(21);
    for (name, seed) in zoo::all() {
        let w0 = weight_values(&seed);
        for op in weight::all() {
            let mut m = seed.clone();
            let Outcome::Mutated(_) = mutate(op.as_ref(), &mut m, &mut rng, &cov, &recipes) else {
                continue;
            };
            let w1 = weight_values(&m);
            let diff: Vec<&String> = w0.keys().filter(|k| w0[*k] != w1[*k]).collect();
            assert_eq!(
                diff.len(),
                1,
                "{} on {name}: {} weights changed",
                op.name(),
                diff.len()
            );
            let (a, b) = (&w0[diff[0]], &w1[diff[0]]);
            assert_eq!(a.len(), b.len());
            let changed: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
            match op.name() {
                "WS" | "NS" => {
                    let mut x = a.clone();
                    let mut y = b.clone();
                    x.sort_by(f64::total_cmp);
                    y.sort_by(f64::total_cmp);
                    assert_eq!(x, y, "{} changed the multiset of values", op.name());
                }
                "NAI" => assert!(changed.iter().all(|&i| b[i] == -a[i])),
                "NEB" => assert!(changed.iter().all(|&i| b[i] == 0.0)),
                "GF" => {
                    assert!(
                        changed.len() * 2 > a.len(),
                        "GF changed {} of {}",
                        changed.len(),
                        a.len()
                    );
                    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
                    assert!((mean(a) - mean(b)).abs() < 0.1);
                }
                _ => unreachable!(),
            }
        }
    }
}

#[test]
fn nan_operator_makes_the_reference_output_nan_or_inf() {
    let (recipes, cov) = setup();
    let mut rng = SplitMix64::new(8);
    let mut reference = catalog::create("reference", &Config::default()).unwrap();
    let (mut n, mut nonfinite) = (0, 0);
    for (name, seed) in zoo::all() {
        for _ in 0..3 {
            let mut m = seed.clone();
            let Outcome::Mutated(_) =
                mutate(&layer::NanInjection, &mut m, &mut rng, &cov, &recipes)
            else {
                continue;
            };
            let x = inputs::generate(&m, 1, &GenOptions::default()).unwrap();
            let out = reference
                .prepare(&m.to_bytes())
                .and_then(|mut p| p.run(&x))
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            n += 1;
            let bad: usize = out
                .iter()
                .flat_map(|(_, v)| v.tensors())
                .map(|t| {
                    let (a, b) = t.nan_inf_counts();
                    a + b
                })
                .sum();
            if bad > 0 {
                nonfinite += 1;
            }
        }
    }
    println!("NaN: {nonfinite} of {n} mutants give NaN/Inf outputs on the reference");
    assert!(n >= 30);
    // A NaN can be masked (Relu of -Inf, MaxPool, ArgMax): most, not all, reach the output.
    assert!(nonfinite * 2 > n);
}

#[test]
fn shape_and_rank_operators_change_what_an_op_sees() {
    let (recipes, cov) = setup();
    let mut rng = SplitMix64::new(3);
    for op in [
        Box::new(layer::ShapeMutation) as Box<dyn Mutator>,
        Box::new(layer::DimensionMutation),
    ] {
        let mut n = 0;
        for (name, seed) in zoo::all() {
            let mut m = seed.clone();
            let Outcome::Mutated(r) = mutate(op.as_ref(), &mut m, &mut rng, &cov, &recipes) else {
                continue;
            };
            n += 1;
            // The op was re-added reading a value of another shape.
            let added: Vec<mutagraph_mutators::ir::Node> = m
                .graph
                .nodes()
                .filter(|x| x.name.as_deref().is_some_and(|s| s.contains("_m")))
                .cloned()
                .collect();
            let changed = added.iter().any(|x| {
                x.inputs.iter().any(|i| {
                    let t = m.graph.value_type(i);
                    let ranks_or_dims = t.tensor().and_then(|t| t.static_dims());
                    seed.graph
                        .nodes()
                        .filter(|s| s.op_type == x.op_type)
                        .flat_map(|s| s.inputs.iter())
                        .all(|si| {
                            seed.graph
                                .value_type(si)
                                .tensor()
                                .and_then(|t| t.static_dims())
                                != ranks_or_dims
                        })
                })
            });
            assert!(changed, "{} on {name}: {}", op.name(), r.summary);
            if op.name() == "DM" {
                assert!(r.summary.contains("->"));
            }
        }
        assert!(n >= 8, "{} mutated {n} zoo models", op.name());
    }
}

#[test]
fn weights_are_learned_parameters_not_coordinates() {
    // RoiAlign's boxes and Resize's scales are float initializers too, but shuffling them
    // would make regions with x2 < x1 or change output shapes: they are not weights.
    let src = r#"<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 4, 4] x) => (float[2, 2, 2, 2] y, float[1, 2, 8, 8] z)
<float[2, 2, 1, 1] w = {1, 2, 3, 4}, float[2, 4] rois = {0, 0, 2, 2, 1, 1, 3, 3},
 int64[2] bi = {0, 0}, float[4] scales = {1, 1, 2, 2}>
{
   c = Conv (x, w)
   y = RoiAlign <output_height: int = 2, output_width: int = 2> (c, rois, bi)
   z = Resize (c, "", scales)
}"#;
    let m = mutagraph_mutators::ir::text::parse_model(src).unwrap();
    let names: Vec<String> = mutagraph_mutators::operators::common::weights(&m)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["w"]);
}
