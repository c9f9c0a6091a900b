//! The optimizer-pattern library: every pattern builds a valid model that keeps the value's
//! type, ONNX Runtime's optimizer applies the rewrite the pattern is made for, and the
//! optimized result is still what the reference computes (exact builds and near misses).
use mutagraph_backends::catalog::{self, Config};
use mutagraph_backends::compare::{CompareOptions, Tolerance, compare_named};
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_mutators::builder::SplitMix64;
use mutagraph_mutators::ir::patch::{Patch, PatchOp};
use mutagraph_mutators::ir::types::TensorType;
use mutagraph_mutators::ir::{DType, Model};
use mutagraph_mutators::mutation::{Limits, Outcome, commit};
use mutagraph_mutators::patterns::{Knobs, Pattern, library};
use mutagraph_mutators::site::{Site, value_info};

/// `x`, the pattern after it, `Neg` after the pattern (ONNX Runtime leaves some patterns
/// alone when their last value is a graph output), as one model.
fn planted(p: &Pattern, t: &TensorType, seed: u64, near_miss: bool) -> (Model, Option<String>) {
    let mut m = Model::new(17);
    let patch = Patch {
        ops: vec![PatchOp::AddInput(value_info("x", t))],
    };
    m.apply(&patch).unwrap();
    let mut rng = SplitMix64::new(seed);
    let limits = Limits::default();
    let (patch, missed) = {
        let mut site = Site::new(&m, &mut rng, &limits);
        let mut k = Knobs {
            rng: &mut rng,
            near_miss,
            missed: None,
        };
        let y = (p.build)(&mut site, "x", t, &mut k).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(
            site.static_type(&y).as_ref(),
            Some(t),
            "{} keeps x's type",
            p.name
        );
        let n = site.op1("Neg", &[&y], vec![]).unwrap();
        site.add_output(&n).unwrap();
        (site.into_patch(), k.missed)
    };
    match commit(&mut m, "T", p.name.into(), &patch) {
        Outcome::Mutated(_) => (m, missed),
        o => panic!("{}: {o:?}", p.name),
    }
}

/// A shape each pattern takes.
fn shape_for(p: &Pattern) -> Vec<i64> {
    match p.ranks {
        (4, 4) => vec![1, 3, 6, 6],
        (3, 3) => vec![2, 3, 8],
        (2, 2) => vec![4, 8],
        _ => vec![2, 3, 8],
    }
}

#[test]
fn onnx_runtime_applies_the_rewrite_each_pattern_is_made_for() {
    let config = Config::default();
    let mut ort = catalog::create("ort", &config).unwrap_or_else(|e| {
        panic!("ONNX Runtime is needed: `pip install onnxruntime==1.31.1` ({e})")
    });
    let mut reference = catalog::create("reference", &config).unwrap();
    let (mut missing, mut wrong) = (Vec::new(), Vec::new());
    for p in library() {
        for (seed, near_miss) in [(1, false), (2, false), (3, true), (4, true)] {
            let t = TensorType::fixed(DType::F32, &shape_for(&p));
            let (m, missed) = planted(&p, &t, seed, near_miss);
            let bytes = m.to_bytes();
            let feeds = inputs::generate(&m, seed, &GenOptions::default()).unwrap();
            mutagraph_backends::worker::context::take_rewrites();
            let have = ort.prepare(&bytes).and_then(|mut s| s.run(&feeds));
            let fired = mutagraph_backends::worker::context::take_rewrites();
            let have = have.unwrap_or_else(|e| panic!("{} on ORT: {e}", p.name));
            println!("{} seed {seed} near miss {missed:?}: {fired:?}", p.name);
            if missed.is_none() && !p.rewrites.iter().any(|r| fired.iter().any(|f| f == r)) {
                missing.push(format!(
                    "{} (seed {seed}): wanted one of {:?}, fired {fired:?}",
                    p.name, p.rewrites
                ));
            }
            let want = reference
                .prepare(&bytes)
                .and_then(|mut s| s.run(&feeds))
                .unwrap();
            let opts = CompareOptions {
                tolerance: Tolerance::VERY_APPROXIMATE,
                check_dtype: false,
            };
            let c = compare_named(&want, &have, opts);
            if !c.ok {
                wrong.push(format!(
                    "{} (seed {seed}, {missed:?}): {}",
                    p.name,
                    c.reason.unwrap_or_default()
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
    assert!(wrong.is_empty(), "{wrong:#?}");
}
