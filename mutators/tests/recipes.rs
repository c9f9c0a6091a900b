//! The recipe book: truthful accepts/outputs facts, builds that commit on tiny models and on
//! the zoo, parameter-bucket coverage, and models that the backends load.
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::ir::patch::{Patch, PatchOp};
use mutagraph_mutators::ir::types::TensorType;
use mutagraph_mutators::ir::{Model, Node};
#[allow(unused_imports)]
use mutagraph_mutators::ir::attr::AttrValue;
use mutagraph_mutators::mutation::{Limits, Outcome, commit};
use mutagraph_mutators::recipes::{GEN_DTYPES, Recipe, Recipes, exists_at};
use mutagraph_mutators::ir::registry::Registry;
use mutagraph_mutators::site::{Site, value_info};

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
        4 => vec![1, [3, 4, 8][(seed % 3) as usize], 6, 5],
        _ => b[..r].to_vec(),
    }
}

/// The opset a recipe is tested at: 17, or the op's first opset when later, or the last one
/// before its removal.
fn opset_for(op: &str) -> i64 {
    let spec = Registry::global().get("", op).unwrap();
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
        let out = recipe.build(&mut site, "y", t, &mut rng)?;
        let ty = site
            .value_type(&out)
            .tensor()
            .cloned()
            .ok_or_else(|| format!("{out} is not a tensor"))?;
        site.add_output(&out)?;
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
            for rank in 0..=5 {
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
                    worst.push((rate, format!("{} {d:?} rank {rank}: {last_err}", r.op_type())));
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
    assert!(bad.is_empty(), "{} cells below 95% (listed above)", bad.len());
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
    let at17 = Recipes::for_opset(17);
    println!("at opset 17: {}", at17.len());
    assert!(at17.iter().all(|r| exists_at(r.op_type(), 17)));
    assert!(at17.len() < recipes.len());
}
