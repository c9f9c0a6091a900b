//! Recipes: truthful dtype/rank facts, valid builds on every zoo value, parameter coverage.
use mutagraph_mutators::builder::{GraphBuilder, SplitMix64};
use mutagraph_mutators::coverage::Coverage;
use mutagraph_mutators::ir::types::TensorType;
use mutagraph_mutators::ir::{DType, Model};
use mutagraph_mutators::mutation::{Limits, Outcome, commit};
use mutagraph_mutators::operators::common::static_values;
use mutagraph_mutators::recipes::Recipes;
use mutagraph_mutators::site::Site;
use mutagraph_mutators::zoo;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Small models whose single input has a given dtype and rank (plus the zoo's values).
fn probe_models() -> Vec<Model> {
    let mut v = Vec::new();
    let shapes: [&[i64]; 6] = [
        &[],
        &[6],
        &[4, 4],
        &[2, 4, 6],
        &[1, 4, 6, 6],
        &[1, 2, 4, 4, 4],
    ];
    for d in [DType::F32, DType::I64, DType::Bool, DType::U8, DType::I32] {
        for s in shapes {
            let mut b = GraphBuilder::new("probe", 1);
            let x = b.input("x", d, s);
            let y = b
                .node("Identity", &[&x], vec![], vec![s.to_vec()])
                .remove(0);
            b.output(&y);
            if let Ok(m) = b.finish() {
                v.push(m);
            }
        }
    }
    v
}

struct Tally {
    ok: usize,
    failed: usize,
    rejected: usize,
    wrong_kind: usize,
}

fn build_all(
    models: &[Model],
    tries: usize,
    cov: Option<&mut Coverage>,
) -> BTreeMap<&'static str, Tally> {
    let recipes = Recipes::builtin();
    let limits = Limits::default();
    let mut rng = SplitMix64::new(11);
    let mut out: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut cov = cov;
    for m in models {
        let values: Vec<(String, TensorType)> = static_values(m)
            .into_iter()
            .chain(m.graph.real_inputs().iter().filter_map(|vi| {
                let n = vi.name.clone()?;
                let t = m.graph.value_type(&n).tensor()?.clone();
                Some((n, t))
            }))
            .collect();
        // A few values per model: the first, one in the middle and the last.
        let picks: Vec<(String, TensorType)> = if values.len() > 3 {
            vec![
                values[0].clone(),
                values[values.len() / 2].clone(),
                values[values.len() - 1].clone(),
            ]
        } else {
            values
        };
        for (x, t) in picks {
            let Some(rank) = t.rank() else { continue };
            for r in recipes.accepting(t.dtype, rank) {
                for _ in 0..tries {
                    let tally = out.entry(r.op_type()).or_insert(Tally {
                        ok: 0,
                        failed: 0,
                        rejected: 0,
                        wrong_kind: 0,
                    });
                    let mut model = m.clone();
                    let (patch, kind) = {
                        let mut site = Site::new(&model, &mut rng, &limits);
                        match r.build(&mut site, &x, &t, &mut rng) {
                            Ok(y) => {
                                let k = site
                                    .static_type(&y)
                                    .map(|yt| (yt.dtype, yt.rank().unwrap_or(0)));
                                site.add_output(&y).unwrap();
                                (Some(site.into_patch()), k)
                            }
                            Err(_) => (None, None),
                        }
                    };
                    let Some(patch) = patch else {
                        tally.failed += 1;
                        continue;
                    };
                    if !kind.is_some_and(|k| r.outputs(t.dtype, rank).contains(&k)) {
                        tally.wrong_kind += 1;
                        eprintln!(
                            "{}: {:?} on {:?}/{rank} not in outputs",
                            r.op_type(),
                            kind,
                            t.dtype
                        );
                    }
                    match commit(&mut model, "TEST", String::new(), &patch) {
                        Outcome::Mutated(_) => {
                            tally.ok += 1;
                            if let Some(c) = cov.as_deref_mut() {
                                c.add_model(&model);
                            }
                        }
                        Outcome::Rejected(e) => {
                            tally.rejected += 1;
                            eprintln!("{} rejected: {e}", r.op_type());
                        }
                        Outcome::Skipped(_) => {}
                    }
                }
            }
        }
    }
    out
}

#[test]
fn recipes_build_valid_nodes_with_truthful_kinds() {
    let mut models = probe_models();
    for name in ["lenet5", "lstm", "transformer_encoder", "mobilenetv2"] {
        models.push(zoo::build(name).unwrap());
    }
    let recipes = Recipes::builtin();
    let universe = Arc::new(recipes.universe().unwrap());
    let sizes = universe.sizes();
    println!("{} recipes; universe {:?}", recipes.len(), sizes);
    let mut cov = Coverage::new(universe.clone());
    let tally = build_all(&models, 3, Some(&mut cov));
    let (mut ok, mut failed, mut rejected, mut wrong) = (0, 0, 0, 0);
    for (op, t) in &tally {
        let rate = t.ok as f64 / (t.ok + t.failed + t.rejected).max(1) as f64;
        if rate < 0.9 {
            println!(
                "{op:24} ok {:5} failed {:5} rejected {}",
                t.ok, t.failed, t.rejected
            );
        }
        ok += t.ok;
        failed += t.failed;
        rejected += t.rejected;
        wrong += t.wrong_kind;
    }
    let never: Vec<&str> = recipes
        .op_types()
        .into_iter()
        .filter(|o| tally.get(o).is_none_or(|t| t.ok == 0))
        .collect();
    println!(
        "builds ok {ok}, failed {failed}, rejected {rejected}, wrong kind {wrong}; never built: {never:?}"
    );
    println!("coverage of the builds: {}", cov.report());
    assert!(recipes.len() >= 100, "only {} recipes", recipes.len());
    assert!(sizes.op_pairs < sizes.op_types * sizes.op_types);
    assert_eq!(rejected, 0, "recipes built nodes that failed validation");
    assert_eq!(wrong, 0, "recipes' output kinds are not truthful");
    assert!(never.is_empty(), "recipes never built: {never:?}");
    assert!(
        failed * 10 < ok,
        "too many failed builds: {failed} failed, {ok} ok"
    );
}

/// What inference says a recipe's output is, the reference interpreter's run agrees with:
/// shapes and dtypes (a wrong inferred shape would make `Site::adapt` build invalid models).
#[test]
fn inferred_types_match_execution() {
    use mutagraph_backends::catalog::{self, Config};
    use mutagraph_backends::inputs::{self, GenOptions};
    let recipes = Recipes::builtin();
    let limits = Limits::default();
    let mut reference = catalog::create("reference", &Config::default()).unwrap();
    let mut rng = SplitMix64::new(5);
    let mut bad = Vec::new();
    let mut checked = 0;
    let mut models = probe_models();
    models.push(zoo::build("lenet5").unwrap());
    models.push(zoo::build("lstm").unwrap());
    for m in &models {
        let Some(x) = m.graph.real_inputs().first().and_then(|v| v.name.clone()) else {
            continue;
        };
        let t = m.graph.value_type(&x).tensor().unwrap().clone();
        let rank = t.rank().unwrap();
        for r in recipes.accepting(t.dtype, rank) {
            for _ in 0..4 {
                let mut model = m.clone();
                let (patch, y, yt) = {
                    let mut site = Site::new(&model, &mut rng, &limits);
                    let Ok(y) = r.build(&mut site, &x, &t, &mut rng) else {
                        continue;
                    };
                    let yt = site.static_type(&y);
                    site.add_output(&y).unwrap();
                    (site.into_patch(), y, yt)
                };
                if !matches!(commit(&mut model, "T", String::new(), &patch), Outcome::Mutated(_)) {
                    continue;
                }
                let vals = inputs::generate(&model, 1, &GenOptions::default()).unwrap();
                let Ok(mut p) = reference.prepare(&model.to_bytes()) else {
                    continue;
                };
                let Ok(out) = p.run(&vals) else {
                    continue;
                };
                checked += 1;
                let got = out.iter().find(|(n, _)| *n == y).and_then(|(_, v)| v.tensors().first().map(|h| (h.dtype, h.shape.clone())));
                let want = yt.as_ref().map(|t| (t.dtype, t.static_dims().unwrap().iter().map(|&d| d as usize).collect::<Vec<_>>()));
                if got != want {
                    bad.push(format!("{} on {:?}{:?}: inferred {want:?}, ran {got:?}", r.op_type(), t.dtype, t.static_dims().unwrap()));
                }
            }
        }
    }
    println!("{checked} builds ran");
    bad.sort();
    bad.dedup();
    assert!(bad.is_empty(), "{bad:#?}");
}
