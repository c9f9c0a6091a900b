//! The recipe book: truthful accepts/outputs facts, builds that commit on tiny models and on
//! the zoo, parameter-bucket coverage, and models that the backends load.
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::coverage::Coverage;
use mutagraph_mutators::ir::patch::{Patch, PatchOp};
use mutagraph_mutators::ir::registry::Registry;
use mutagraph_mutators::ir::types::TensorType;
use mutagraph_mutators::ir::{Model, Node};
use mutagraph_mutators::mutation::{Limits, Outcome, commit};
use mutagraph_mutators::operators::common::static_values;
use mutagraph_mutators::recipes::{GEN_DTYPES, MAX_RANK, Recipe, Recipes, exists_at};
use mutagraph_mutators::site::{Site, value_info};
use mutagraph_mutators::zoo;
use std::collections::HashSet;
use std::sync::Arc;

/// A model with one input `x` of type `t` and `y = Identity(x)` as output.
fn tiny(t: &TensorType, opset: i64) -> Model {
    let mut m = Model::new(opset);
    let patch = Patch {
        ops: vec![
            PatchOp::AddInput(value_info("x", t)),
            PatchOp::AddNode(Node::new("Identity", &["x"], &["y"])),
            PatchOp::AddOutput(value_info("y", t)),
        ],
    };
    m.apply(&patch).unwrap();
    m
}

/// A small shape of rank `r` (varied by `seed`).
fn shape_of(r: usize, seed: u64) -> Vec<i64> {
    let base: [&[i64]; 3] = [&[2, 3, 4, 5, 2], &[1, 4, 6, 3, 3], &[3, 2, 5, 4, 1]];
    let b = base[(seed % 3) as usize];
    match r {
        0 => vec![],
        3 => vec![[4, 2, 3][(seed % 3) as usize], 2, 5],
        4 => vec![1, [3, 10, 40][(seed % 3) as usize], 6, 5],
        6 => vec![2, 1, 2, 3, 1, 2],
        _ => b[..r].to_vec(),
    }
}

/// The opset a recipe is tested at: 17, or the op's first opset when later, or the last one
/// before its removal.
fn opset_for(op: &str) -> i64 {
    let spec = Registry::global().by_key(op).unwrap();
    if let Some(r) = spec.removed_at {
        return r - 1;
    }
    spec.since().max(17)
}

/// Builds `recipe` after `x` of a tiny model; returns (main output type, committed model).
fn build_once(
    recipe: &dyn Recipe,
    t: &TensorType,
    opset: i64,
    seed: u64,
) -> Result<(TensorType, Model), String> {
    let mut model = tiny(t, opset);
    let mut rng = SplitMix64::new(seed);
    let limits = Limits::default();
    let patch = {
        let mut site = Site::new(&model, &mut rng, &limits);
        let out = recipe
            .build(&mut site, "y", t, &mut rng)
            .map_err(|e| e.to_string())?;
        let ty = site
            .value_type(&out)
            .tensor()
            .cloned()
            .ok_or_else(|| format!("{out} is not a tensor"))?;
        site.add_output(&out).map_err(|e| e.to_string())?;
        (site.into_patch(), ty)
    };
    match commit(&mut model, "TEST", recipe.op_type().into(), &patch.0) {
        Outcome::Mutated(_) => Ok((patch.1, model)),
        o => Err(format!("commit: {o:?}")),
    }
}

#[test]
fn accepts_and_outputs_are_truthful() {
    let recipes = Recipes::builtin();
    let mut worst: Vec<(f64, String)> = Vec::new();
    let mut failures = Vec::new();
    let tries = 8u64;
    let mut cells = 0;
    for r in recipes.iter() {
        let opset = opset_for(r.op_type());
        for &d in GEN_DTYPES {
            for rank in 0..=MAX_RANK {
                if !r.accepts(d, rank) {
                    continue;
                }
                cells += 1;
                let outs = r.outputs(d, rank);
                let mut ok = 0;
                let mut last_err = String::new();
                for seed in 0..tries {
                    let t = TensorType::fixed(d, &shape_of(rank, seed));
                    match build_once(r, &t, opset, seed * 7919 + rank as u64) {
                        Ok((ty, _)) => {
                            let kind = (ty.dtype, ty.rank().unwrap_or(99));
                            if outs.contains(&kind) {
                                ok += 1;
                            } else {
                                failures.push(format!(
                                    "{} {d:?} rank {rank}: output {kind:?} not in {outs:?}",
                                    r.op_type()
                                ));
                            }
                        }
                        Err(e) => last_err = e,
                    }
                }
                let rate = ok as f64 / tries as f64;
                if rate < 1.0 {
                    worst.push((
                        rate,
                        format!("{} {d:?} rank {rank}: {last_err}", r.op_type()),
                    ));
                }
            }
        }
    }
    println!("{cells} cells, {tries} builds each");
    worst.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    for (rate, cell) in &worst {
        println!("{rate:.2} {}", &cell[..cell.len().min(300)]);
    }
    failures.dedup();
    assert!(failures.is_empty(), "{failures:#?}");
    let bad: Vec<_> = worst.iter().filter(|(r, _)| *r < 0.95).collect();
    assert!(
        bad.is_empty(),
        "{} cells below 95% (listed above)",
        bad.len()
    );
}

#[test]
fn universe_sizes() {
    let recipes = Recipes::builtin();
    let u = recipes.universe().unwrap();
    let s = u.sizes();
    println!(
        "recipes {} op types {} pairs {} params {}",
        recipes.len(),
        s.op_types,
        s.op_pairs,
        s.params
    );
    assert_eq!(s.op_types, recipes.len());
    assert!(s.op_pairs < s.op_types * s.op_types);
    let missing: Vec<&str> = Registry::global()
        .iter()
        .filter(|s| s.domain.is_empty() && recipes.get(s.op_type).is_none())
        .map(|s| s.op_type)
        .collect();
    println!(
        "registry ops without a recipe ({}): {}",
        missing.len(),
        missing.join(" ")
    );
    let at17 = Recipes::for_opset(17);
    println!("at opset 17: {}", at17.len());
    assert!(at17.iter().all(|r| exists_at(r.op_type(), 17)));
    assert!(at17.len() < recipes.len());
}

/// An input kind for `r`: f32 at rank 4 or 2 where accepted, else its first accepted
/// (dtype, rank).
fn sample_kind(r: &dyn Recipe) -> Option<(mutagraph_mutators::ir::DType, usize)> {
    use mutagraph_mutators::ir::DType;
    for rank in [4, 2, 3, 1, 5, 0] {
        if r.accepts(DType::F32, rank) {
            return Some((DType::F32, rank));
        }
    }
    for &d in GEN_DTYPES {
        for rank in [4, 2, 3, 1, 5, 0] {
            if r.accepts(d, rank) {
                return Some((d, rank));
            }
        }
    }
    None
}

#[test]
fn every_recipe_builds_on_zoo_values() {
    let recipes = Recipes::for_opset(17);
    let limits = Limits::default();
    let mut rng = SplitMix64::new(0x200);
    let (mut tries, mut failures) = (0usize, Vec::new());
    for (name, model) in zoo::all() {
        let values = static_values(&model);
        // Ten values spread over the model, each accepting recipe once.
        let step = values.len().div_ceil(10).max(1);
        for (v, t) in values.iter().step_by(step) {
            let rank = t.rank().unwrap_or(0);
            for r in recipes.accepting(t.dtype, rank) {
                tries += 1;
                let mut m = model.clone();
                let patch = {
                    let mut site = Site::new(&m, &mut rng, &limits);
                    match r.build(&mut site, v, t, &mut rng) {
                        Ok(out) => {
                            // Insert it: the value's readers read the new op's output when
                            // the types agree, else it becomes an extra output.
                            let same = site.static_type(&out).as_ref() == Some(t);
                            if same {
                                site.reroute(v, &out);
                            } else if let Err(e) = site.add_output(&out) {
                                failures.push(format!("{name}/{v} {}: {e}", r.op_type()));
                                continue;
                            }
                            site.into_patch()
                        }
                        Err(e) => {
                            failures.push(format!("{name}/{v} {}: build: {e}", r.op_type()));
                            continue;
                        }
                    }
                };
                if let Outcome::Rejected(e) = commit(&mut m, "TEST", r.op_type().into(), &patch) {
                    failures.push(format!("{name}/{v} {}: rejected: {e}", r.op_type()));
                }
            }
        }
    }
    for f in &failures {
        println!("{}", &f[..f.len().min(300)]);
    }
    let rate = failures.len() as f64 / tries as f64;
    println!(
        "{tries} builds on zoo values, {} failed ({:.3}%)",
        failures.len(),
        100.0 * rate
    );
    assert!(tries > 1000, "only {tries} builds");
    assert!(rate < 0.01, "{} of {tries} failed", failures.len());
}

/// Whether a parameter bucket (`Op.attr=label`) can hold a valid attribute value: not when
/// the registry's legal values exclude it (an INTS `all0` bucket of an attribute legal from
/// 1; an INT or FLOAT range outside the legal range), nor an empty list for the window
/// attributes, which ONNX wants with one value per spatial axis.
fn valid_bucket(label: &str) -> bool {
    use mutagraph_mutators::ir::registry::{Buckets, Legal};
    let Some((op, rest)) = label.split_once('.') else {
        return true;
    };
    let Some((attr, bucket)) = rest.split_once('=') else {
        return true;
    };
    let window = [
        "kernel_shape",
        "strides",
        "dilations",
        "pads",
        "output_padding",
        "output_shape",
        "pooled_shape",
    ];
    if bucket == "empty" && window.contains(&attr) {
        return false;
    }
    let Some(spec) = Registry::global().get("", op) else {
        return true;
    };
    spec.attrs.iter().filter(|a| a.name == attr).any(|a| {
        let Some(i) = a.buckets.labels().iter().position(|l| l == bucket) else {
            return false;
        };
        match (&a.buckets, &a.legal) {
            (Buckets::IntsShape, Legal::IntRange(lo, _)) => !(i == 1 && *lo >= 1),
            (Buckets::IntsNonEmpty, Legal::IntRange(lo, _)) => !(i == 0 && *lo >= 1),
            (Buckets::IntRanges(r), Legal::IntRange(lo, hi)) => r[i].1 >= *lo && r[i].0 <= *hi,
            (Buckets::FloatRanges(r), Legal::FloatRange(lo, hi)) => r[i].1 > *lo && r[i].0 <= *hi,
            _ => true,
        }
    })
}

#[test]
fn repeated_builds_cover_the_parameter_buckets() {
    let recipes = Recipes::builtin();
    let universe = Arc::new(recipes.universe().unwrap());
    let mut cov = Coverage::new(universe.clone());
    // Every opset at which some attribute appears or goes away, so that the attributes of
    // older and newer forms are drawn too.
    const OPSETS: &[i64] = &[
        1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21, 22, 24,
    ];
    for r in recipes.iter() {
        let opsets: Vec<i64> = OPSETS
            .iter()
            .copied()
            .filter(|&o| exists_at(r.op_type(), o))
            .collect();
        // At least 40 builds, 24 per opset.
        let n = (24 * opsets.len() as u64).max(40);
        let mut pick = SplitMix64::new(0xc0);
        // Every accepted (dtype, rank), in turn.
        let kinds: Vec<_> = GEN_DTYPES
            .iter()
            .flat_map(|&d| (0..=6).map(move |k| (d, k)))
            .filter(|&(d, k)| r.accepts(d, k))
            .collect();
        for i in 0..n {
            let opset = opsets[i as usize % opsets.len()];
            let (d, rank) = kinds[(pick.next_u64() % kinds.len() as u64) as usize];
            let t = TensorType::fixed(d, &shape_of(rank, i));
            if let Ok((_, m)) = build_once(r, &t, opset, 1000 + i) {
                cov.add_model(&m);
            }
        }
    }
    let report = cov.report();
    let covered: HashSet<String> = cov.covered_params().into_iter().collect();
    let uncovered: Vec<String> = (0..universe.sizes().params)
        .map(|i| universe.param_label(i))
        .filter(|l| !covered.contains(l))
        .collect();
    println!("uncovered parameter buckets ({}):", uncovered.len());
    for u in &uncovered {
        println!("  {u}");
    }
    let reachable = universe.sizes().params - uncovered.iter().filter(|l| !valid_bucket(l)).count();
    let cover = 100.0 * report.params.covered as f64 / reachable as f64;
    println!("params: {}", report.params);
    println!(
        "params over buckets that valid models can reach: {} / {reachable} ({cover:.1}%)",
        report.params.covered
    );
    assert!(report.params.percent >= 85.0, "params {}", report.params);
    assert!(cover >= 90.0, "reachable params {cover:.1}%");
}

/// Builds of each recipe that the backends run.
const SEEDS: u64 = 4;

#[test]
fn backends_load_and_run_what_recipes_build() {
    let config = Config::default();
    let mut reference = catalog::create("reference", &config).unwrap();
    let mut ort = catalog::create("ort", &config).unwrap_or_else(|e| {
        panic!("ONNX Runtime is needed: `pip install onnxruntime==1.31.1` ({e})")
    });
    let recipes = Recipes::builtin();
    let (mut ort_bad, mut ref_bad, mut unsupported) = (Vec::new(), Vec::new(), Vec::new());
    let mut ran = 0;
    for r in recipes.iter() {
        let Some((d, rank)) = sample_kind(r) else {
            continue;
        };
        for seed in 0..SEEDS {
            let t = TensorType::fixed(d, &shape_of(rank, 1 + seed));
            let (_, model) = build_once(r, &t, opset_for(r.op_type()), 77 + seed)
                .unwrap_or_else(|e| panic!("{}: {e}", r.op_type()));
            let bytes = model.to_bytes();
            let feeds = inputs::generate(&model, 5, &GenOptions::default()).unwrap();
            ran += 1;
            for (be, bad) in [(&mut ort, &mut ort_bad), (&mut reference, &mut ref_bad)] {
                match be.prepare(&bytes).and_then(|mut p| p.run(&feeds)) {
                    Ok(_) => {}
                    Err(e) if e.unsupported => {
                        unsupported.push(format!("{} on {}: {e}", r.op_type(), be.name()))
                    }
                    Err(e) => bad.push((
                        r.op_type(),
                        format!("({d:?} rank {rank}, seed {seed}): {e}"),
                    )),
                }
            }
        }
    }
    println!("{ran} models run");
    for u in &unsupported {
        println!("unsupported: {}", &u[..u.len().min(200)]);
    }
    for (op, f) in &ref_bad {
        println!("reference failure: {op} {}", &f[..f.len().min(300)]);
    }
    for (op, f) in &ort_bad {
        println!("ORT failure: {op} {}", &f[..f.len().min(300)]);
    }
    let mut ops: Vec<&str> = ort_bad.iter().map(|(op, _)| *op).collect();
    ops.dedup();
    assert!(ops.len() <= 2, "ORT fails on {} ops: {ops:?}", ops.len());
}

/// What inference says a recipe's output is, a run of the reference interpreter agrees with
/// (shape and dtype): a wrong inferred shape would make `Site::adapt` build models that fail
/// at run time.
#[test]
fn inferred_types_match_execution() {
    let recipes = Recipes::builtin();
    let limits = Limits::default();
    let mut reference = catalog::create("reference", &Config::default()).unwrap();
    let mut rng = SplitMix64::new(5);
    let (mut bad, mut checked) = (Vec::new(), 0);
    for r in recipes.iter() {
        let opset = opset_for(r.op_type());
        for &d in &[
            mutagraph_mutators::ir::DType::F32,
            mutagraph_mutators::ir::DType::I64,
            mutagraph_mutators::ir::DType::Bool,
        ] {
            for rank in 0..=5 {
                if !r.accepts(d, rank) {
                    continue;
                }
                for seed in 0..3 {
                    let dims = shape_of(rank, seed);
                    let t = TensorType::fixed(d, &dims);
                    let mut model = tiny(&t, opset);
                    let (patch, y, yt) = {
                        let mut site = Site::new(&model, &mut rng, &limits);
                        let Ok(y) = r.build(&mut site, "x", &t, &mut rng) else {
                            continue;
                        };
                        let yt = site.static_type(&y);
                        if site.add_output(&y).is_err() {
                            continue;
                        }
                        (site.into_patch(), y, yt)
                    };
                    if !matches!(
                        commit(&mut model, "T", String::new(), &patch),
                        Outcome::Mutated(_)
                    ) {
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
                    let got = out
                        .iter()
                        .find(|(n, _)| *n == y)
                        .and_then(|(_, v)| v.tensors().first().map(|h| (h.dtype, h.shape.clone())));
                    let want = yt.as_ref().and_then(|t| {
                        Some((
                            t.dtype,
                            t.static_dims()?
                                .iter()
                                .map(|&d| d as usize)
                                .collect::<Vec<_>>(),
                        ))
                    });
                    if got != want {
                        let attrs: Vec<String> = model
                            .graph
                            .nodes()
                            .filter(|n| n.op_type == r.op_type())
                            .flat_map(|n| {
                                n.attributes
                                    .iter()
                                    .map(|a| format!("{}={}", a.name, a.value.short()))
                            })
                            .collect();
                        bad.push(format!(
                            "{} on {d:?}{dims:?} ({}): inferred {want:?}, ran {got:?}",
                            r.op_type(),
                            attrs.join(", ")
                        ));
                    }
                }
            }
        }
    }
    println!("{checked} builds ran on the reference");
    assert!(checked > 500);
    assert!(bad.is_empty(), "{bad:#?}");
}

/// ONNX leaves open whether `activation_alpha` / `activation_beta` hold one value per
/// activation function or one per function that takes a parameter; the recipes write one per
/// function, all equal, which means the same under both readings.
#[test]
fn recurrent_activation_parameters_read_the_same_either_way() {
    use mutagraph_mutators::ir::attr::AttrValue;
    let recipes = Recipes::builtin();
    let mut with_params = 0;
    for op in ["RNN", "GRU", "LSTM"] {
        let r = recipes.get(op).unwrap();
        for i in 0..200 {
            let t = TensorType::fixed(mutagraph_mutators::ir::DType::F32, &shape_of(3, i));
            let Ok((_, m)) = build_once(r, &t, 17, 7000 + i) else {
                continue;
            };
            for n in m.graph.nodes().filter(|n| n.op_type == op) {
                let get = |name: &str| n.attributes.iter().find(|a| a.name == name);
                let acts = match get("activations").map(|a| &a.value) {
                    Some(AttrValue::Strings(s)) => s.len(),
                    _ => 0,
                };
                for name in ["activation_alpha", "activation_beta"] {
                    if let Some(AttrValue::Floats(v)) = get(name).map(|a| &a.value) {
                        if v.is_empty() {
                            continue;
                        }
                        with_params += 1;
                        assert_eq!(v.len(), acts, "{op} {name} {v:?}");
                        assert!(v.iter().all(|x| *x == v[0]), "{op} {name} {v:?}");
                    }
                }
            }
        }
    }
    assert!(
        with_params > 10,
        "only {with_params} builds drew activation parameters"
    );
}

/// ONNX Runtime's `com.microsoft` ops: what their recipes build, the reference computes as
/// ONNX Runtime without graph optimizations does (their only implementation besides ours:
/// a reference kernel that misread the docs would file every later ORT run as a bug). The
/// quantized ones may differ by one step where ORT's f32 arithmetic rounds a tie the other way.
#[test]
fn contrib_recipes_compute_what_onnx_runtime_computes() {
    use mutagraph_backends::compare::{CompareOptions, Tolerance, compare_named};
    let config = Config::default();
    let mut reference = catalog::create("reference", &config).unwrap();
    let mut ort = catalog::create("ort-noopt", &config).unwrap_or_else(|e| {
        panic!("ONNX Runtime is needed: `pip install onnxruntime==1.31.1` ({e})")
    });
    let recipes = Recipes::builtin();
    let contrib: Vec<&dyn Recipe> = recipes
        .iter()
        .filter(|r| r.op_type().starts_with("com.microsoft::"))
        .collect();
    let specs = Registry::global()
        .iter()
        .filter(|s| s.domain == "com.microsoft")
        .count();
    assert_eq!(contrib.len(), specs, "every contrib spec has a recipe");
    let mut bad = Vec::new();
    let mut ran = 0;
    for r in contrib {
        for &d in GEN_DTYPES {
            for rank in [1, 2, 3, 4] {
                if !r.accepts(d, rank) {
                    continue;
                }
                for seed in 0..3 {
                    let t = TensorType::fixed(d, &shape_of(rank, seed));
                    let (_, model) = build_once(r, &t, 17, 31 * seed + rank as u64)
                        .unwrap_or_else(|e| panic!("{} {d:?} rank {rank}: {e}", r.op_type()));
                    let bytes = model.to_bytes();
                    let feeds = inputs::generate(&model, seed, &GenOptions::default()).unwrap();
                    let want = reference.prepare(&bytes).and_then(|mut p| p.run(&feeds));
                    let have = ort.prepare(&bytes).and_then(|mut p| p.run(&feeds));
                    let (want, have) = match (want, have) {
                        (Ok(w), Ok(h)) => (w, h),
                        (w, h) => {
                            bad.push(format!(
                                "{} {d:?} rank {rank}: {:?} / {:?}",
                                r.op_type(),
                                w.err(),
                                h.err()
                            ));
                            continue;
                        }
                    };
                    ran += 1;
                    let c = if r.op_type().contains("QLinear") {
                        one_step(&want, &have)
                    } else {
                        // DynamicQuantizeLSTM's quantization noise is within `approximate`
                        // (its float LSTM would pass): its quantized products are compared
                        // closer.
                        let tolerance = if r.op_type().ends_with("DynamicQuantizeLSTM") {
                            Tolerance::CLOSE
                        } else {
                            Tolerance::APPROXIMATE
                        };
                        let opts = CompareOptions {
                            tolerance,
                            check_dtype: false,
                        };
                        compare_named(&want, &have, opts)
                    };
                    if !c.ok {
                        bad.push(format!(
                            "{} {d:?} rank {rank} seed {seed}: {}",
                            r.op_type(),
                            c.reason.unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    println!("{ran} contrib models compared");
    assert!(ran >= 60, "{ran}");
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Quantized outputs that differ by at most one step, element by element (ORT requantizes
/// through f32 arithmetic, which may round a value near a tie the other way).
fn one_step(
    want: &mutagraph_backends::value::NamedValues,
    have: &mutagraph_backends::value::NamedValues,
) -> mutagraph_backends::compare::Comparison {
    use mutagraph_backends::compare::{Comparison, Metrics};
    for ((n, w), (_, h)) in want.iter().zip(have) {
        let (Some(w), Some(h)) = (w.tensor(), h.tensor()) else {
            continue;
        };
        let (w, h) = (w.to_i64s().unwrap(), h.to_i64s().unwrap());
        if w.len() != h.len() || w.iter().zip(&h).any(|(a, b)| (a - b).abs() > 1) {
            return Comparison {
                ok: false,
                reason: Some(format!("output '{n}': {w:?} vs {h:?}")),
                metrics: Metrics::default(),
            };
        }
    }
    Comparison {
        ok: true,
        reason: None,
        metrics: Metrics::default(),
    }
}

/// ONNX Runtime's own schemas in the default domain (`ir::onnx_ops::ort_default`:
/// LayerNormalization before opset 17, SimplifiedLayerNormalization) are admitted in seeds but
/// never generated: no recipe at any opset makes one, and `Site` refuses to build one, so
/// mutants keep to ONNX's rules.
#[test]
fn onnx_runtimes_own_default_domain_schemas_are_never_generated() {
    use mutagraph_mutators::ir::onnx_ops::{OpStatus, status};
    for opset in 7..=23 {
        for r in Recipes::for_opset(opset).iter() {
            let (domain, op) = r.op_type().rsplit_once("::").unwrap_or(("", r.op_type()));
            assert!(
                !matches!(status(domain, op, opset), OpStatus::OrtSchema(_)),
                "{op} at opset {opset}"
            );
        }
    }
    let t = TensorType::fixed(mutagraph_mutators::ir::DType::F32, &[2, 4]);
    for (opset, op) in [
        (13, "SimplifiedLayerNormalization"),
        (21, "SimplifiedLayerNormalization"),
        (13, "LayerNormalization"),
    ] {
        let model = tiny(&t, opset);
        let mut rng = SplitMix64::new(1);
        let limits = Limits::default();
        let site = Site::new(&model, &mut rng, &limits);
        let e = site
            .check_node(&Node::new(op, &["y", "y"], &["z"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ONNX Runtime's own schema") || e.contains("needs opset 17"),
            "{op} at {opset}: {e}"
        );
    }
}
