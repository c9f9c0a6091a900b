//! Judging without the reference: a library's unoptimized run stands in as the ground, and
//! another library is blamed only with a third implementation on the ground's side.
use super::*;

#[test]
fn without_the_reference_an_optimizer_is_judged_against_its_own_kernels() {
    // The reference lacks an op: ONNX Runtime without its optimizer stands in for it.
    let m = model("Relu", 2);
    let ins = x(&[1.0, 2.0]);
    let j = judge_full(
        &["reference", "ort", "ort-noopt", "tract"],
        vec![lacks(), ok(&[1.0, 5.0]), ok(&[1.0, 2.0]), lacks()],
        &m,
        &ins,
        false,
    );
    assert_eq!(j.len(), 1, "{j:?}");
    let t = against(&j, "ort");
    assert_eq!(t.verdict, Verdict::Report, "{j:?}");
    assert_eq!(t.finding.ground.as_deref(), Some("ort-noopt"));
    assert_eq!(t.finding.layer, Some(Layer::Optimizer));
    assert!(t.finding.signature().ends_with("|ground=ort-noopt"));
    // The bundle's expected values are the ground's.
    let g = t.ground_run.as_ref().expect("the ground's run");
    assert_eq!(g.backend, "ort-noopt");
    // The optimized build crashing where the unoptimized one runs: an optimizer crash.
    let j = judge_full(
        &["reference", "ort", "ort-noopt"],
        vec![lacks(), err("fusion failed"), ok(&[1.0, 2.0])],
        &m,
        &ins,
        false,
    );
    let t = against(&j, "ort");
    assert_eq!(
        (t.finding.kind, &t.verdict),
        (Kind::Crash, &Verdict::Report)
    );
    assert_eq!(t.finding.layer, Some(Layer::Optimizer));
    // Agreeing: nothing.
    let j = judge_full(
        &["reference", "ort", "ort-noopt"],
        vec![lacks(), ok(&[1.0, 2.0]), ok(&[1.0, 2.0])],
        &m,
        &ins,
        false,
    );
    assert!(j.is_empty(), "{j:?}");
}

#[test]
fn without_the_reference_an_optimizer_choosing_otherwise_on_nan_is_undefined() {
    // Round 13: ONNX Runtime's two MaxPool paths differ in windows holding NaN, judged
    // against its own unoptimized run (the reference lacked an op). MaxPool's text says
    // nothing of NaN: undefined, read from the ground's own values on the way to the output.
    let m = crate::common::text_model(
        "g (float[1,1,4] x) => (float[1,1,2] y) { y = MaxPool <kernel_shape=[2], strides=[2]> (x) }",
    );
    let y = |v: [f32; 2]| {
        Outcome::Ok(vec![(
            "y".into(),
            Value::Tensor(HostTensor::new(vec![1, 1, 2], Data::F32(v.to_vec()))),
        )])
    };
    let x = |v: [f32; 4]| -> NamedValues {
        vec![(
            "x".into(),
            Value::Tensor(HostTensor::new(vec![1, 1, 4], Data::F32(v.to_vec()))),
        )]
    };
    let nan = x([f32::NAN, 1.0, 2.0, 3.0]);
    let j = without_the_reference(y([f32::NAN, 3.0]), &y([1.0, 3.0]), &m, &nan);
    let t = against(&j, "ort");
    assert!(
        matches!(&t.verdict, Verdict::Undefined(w) if w.contains("NaN")),
        "{j:?}"
    );
    // Without a NaN in a window the same difference is the optimizer's.
    let finite = x([0.0, 1.0, 2.0, 3.0]);
    let j = without_the_reference(y([5.0, 3.0]), &y([1.0, 3.0]), &m, &finite);
    let t = against(&j, "ort");
    assert_eq!(t.verdict, Verdict::Report, "{j:?}");
    assert_eq!(t.finding.layer, Some(Layer::Optimizer));
}

#[test]
fn without_the_reference_another_library_needs_a_third_implementation() {
    let m = model("Relu", 2);
    let ins = x(&[1.0, 2.0]);
    // tract against ONNX Runtime alone: one implementation against another decides nothing.
    let j = judge_full(
        &["reference", "ort", "ort-noopt", "tract"],
        vec![lacks(), ok(&[1.0, 2.0]), ok(&[1.0, 2.0]), ok(&[1.0, 7.0])],
        &m,
        &ins,
        false,
    );
    let t = against(&j, "tract");
    assert!(
        matches!(&t.verdict, Verdict::Unwitnessed(w) if w.contains("third")),
        "{j:?}"
    );
    // With burn giving `burn`, tract giving 7 where ONNX Runtime gives 2.
    let with_burn = |burn: &[f32]| {
        judge_full(
            &["reference", "ort", "ort-noopt", "tract", "burn-ndarray"],
            vec![
                lacks(),
                ok(&[1.0, 2.0]),
                ok(&[1.0, 2.0]),
                ok(&[1.0, 7.0]),
                ok(burn),
            ],
            &m,
            &ins,
            false,
        )
    };
    // burn sides with ONNX Runtime: tract is blamed, against the weaker oracle.
    let j = with_burn(&[1.0, 2.0]);
    let t = against(&j, "tract");
    assert_eq!(t.verdict, Verdict::Report, "{j:?}");
    assert_eq!(t.finding.ground.as_deref(), Some("ort-noopt"));
    assert_eq!(t.finding.witnesses, vec!["ort-noopt", "burn-ndarray"]);
    // burn sides with tract: the ground is outvoted, and nothing is filed.
    let j = with_burn(&[1.0, 7.0]);
    assert!(
        j.iter().all(|t| t.verdict != Verdict::Report),
        "nothing filed: {j:?}"
    );
    // A reference that fails otherwise than lacking an op is ours, as before: no peers.
    let j = judge_full(
        &["reference", "ort", "ort-noopt"],
        vec![err("boom"), ok(&[1.0, 5.0]), ok(&[1.0, 2.0])],
        &m,
        &ins,
        false,
    );
    assert!(j.iter().all(|t| t.finding.ground.is_none()), "{j:?}");
    assert!(j.iter().all(|t| t.verdict != Verdict::Report), "{j:?}");
}

#[test]
fn indices_that_differ_among_near_equal_values_are_rounding_not_a_ranking_bug() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, inputs) = near_tie_model(dir.path());
    let mut p = pool();
    let mut real = |b: &str| p.run(b, &bytes, &inputs).unwrap().outcome;
    let (opt, noopt) = (real("ort"), real("ort-noopt"));
    p.shutdown();
    assert_ne!(
        opt, noopt,
        "ONNX Runtime 1.31.1's two levels no longer differ on this model: pick another seed"
    );
    // The reference lacking an op: the unoptimized level is the ground.
    let judged = |opt: Outcome| {
        judge_full(
            &["reference", "ort", "ort-noopt"],
            vec![lacks(), opt, noopt.clone()],
            &bytes,
            &inputs,
            true,
        )
    };
    let j = judged(opt.clone());
    let t = against(&j, "ort");
    assert!(
        matches!(&t.verdict, Verdict::Unstable(w) if w.contains("within rounding")),
        "{j:?}"
    );
    // Indices that swap far-apart values are a wrong ranking: the first and last of a row.
    let Outcome::Ok(mut outs) = opt else {
        panic!("ort failed: {opt:?}")
    };
    let Value::Tensor(HostTensor {
        data: Data::I64(v), ..
    }) = &mut outs[0].1
    else {
        panic!("indices are int64")
    };
    v.swap(0, 20);
    let j = judged(Outcome::Ok(outs));
    assert_eq!(against(&j, "ort").verdict, Verdict::Report, "{j:?}");
}

#[test]
fn without_the_reference_an_optimizer_within_the_rounding_of_its_path_is_rounding() {
    // The reference lacks an op of the model: ONNX Runtime's optimized run is judged against
    // its unoptimized one. y = x·x − c in f16 at the scale of 16: two f16 steps there are the
    // rounding of the path (ONNX Runtime folding an f16 BatchNormalization into a Conv); half
    // a unit is a finding.
    let (bytes, inputs, ground) = f16_cancelling("ort-noopt");
    let off_by = |d: f64| f16_off_by(&ground, d);
    let judged = |d: f64| without_the_reference(off_by(d), &ground, &bytes, &inputs);
    let j = judged(0.0156);
    assert!(
        matches!(&against(&j, "ort").verdict, Verdict::Unstable(w) if w.contains("ort-noopt")),
        "{j:?}"
    );
    let j = judged(0.5);
    assert_eq!(against(&j, "ort").verdict, Verdict::Report, "{j:?}");
}

#[test]
fn without_the_reference_a_ground_that_rounds_only_what_it_shows_is_no_witness() {
    // float16 x·W reaches 8e4, float16's infinity, before a LayerNormalization: NaN as the
    // model's types say. ONNX Runtime without its optimizer keeps the chain in float32 between
    // the casts its CPU provider inserts and gives finite values, until the values are graph
    // outputs (round 9: two findings against ONNX Runtime's optimized run, false).
    // float16 values are written as their bits
    let bits = |v: f32| mutagraph_ir::tensor::f32_to_f16(v).to_string();
    let w: Vec<String> = (0..64).map(|k| bits(100.0 * (k % 8 + 1) as f32)).collect();
    let ones = vec![bits(1.0); 8].join(", ");
    let bytes = crate::common::text_model(&format!(
        "g (float16[2,8] x) => (float16[2,8] y) <float16[8,8] w = {{{}}}, \
         float16[8] s = {{{ones}}}, float16[8] b = {{0, 0, 0, 0, 0, 0, 0, 0}}, \
         float16[8] c = {{{ones}}}> {{
            m = MatMul (x, w)
            l = LayerNormalization <axis = -1> (m, s, b)
            p = MatMul (l, w)
            y = Add (p, c)
        }}",
        w.join(", ")
    ));
    let x = HostTensor::from_f64s(mutagraph_ir::DType::F16, vec![2, 8], &[100.0; 16]).unwrap();
    let inputs: NamedValues = vec![("x".into(), Value::Tensor(x))];
    let mut p = pool();
    let ground = p.run("ort-noopt", &bytes, &inputs).unwrap().outcome;
    p.shutdown();
    let finite = ground.outputs().unwrap()[0]
        .1
        .tensor()
        .unwrap()
        .nan_inf_counts();
    assert_eq!(
        finite,
        (0, 0),
        "ONNX Runtime keeps the chain in float32: {ground:?}"
    );
    let shown = |v: f64| {
        let t = HostTensor::from_f64s(mutagraph_ir::DType::F16, vec![2, 8], &[v; 16]).unwrap();
        Outcome::Ok(vec![("y".into(), Value::Tensor(t))])
    };
    let judged = |v: f64| without_the_reference(shown(v), &ground, &bytes, &inputs);
    let j = judged(f64::NAN);
    assert!(
        matches!(&against(&j, "ort").verdict, Verdict::Unstable(w) if w.contains("graph output")),
        "{j:?}"
    );
    // other values are no result the ground gives (the model's conditioning may still make
    // them rounding)
    let j = judged(3.0);
    assert!(
        !matches!(&against(&j, "ort").verdict, Verdict::Unstable(w) if w.contains("graph output")),
        "{j:?}"
    );
}

#[test]
fn without_the_reference_a_nan_the_ground_turns_to_under_a_nudge_is_rounding() {
    // y = sqrt(x·x − c) with c one rounding below x·x: the ground gives a tiny positive root,
    // and inputs moved by a few rounding steps turn it NaN; an optimizer's NaN there is the
    // model's conditioning (round 9: a square root of 4.5e-7 left from terms of 6.6e-3,
    // ONNX Runtime's optimized run against its unoptimized one). Far from zero it is a finding.
    let bytes = crate::common::text_model(
        "g (float[4] x, float[4] c) => (float[4] y) {
            m = Mul (x, x)
            d = Sub (m, c)
            y = Sqrt (d)
        }",
    );
    let xs: Vec<f32> = (0..4).map(|i| 0.0814 + 0.001 * i as f32).collect();
    let judged = |c: &dyn Fn(f32) -> f32| {
        let cs: Vec<f32> = xs.iter().map(|&x| c(x)).collect();
        let inputs: NamedValues = vec![("x".into(), t(&xs)), ("c".into(), t(&cs))];
        let mut p = pool();
        let ground = p.run("ort-noopt", &bytes, &inputs).unwrap().outcome;
        p.shutdown();
        without_the_reference(ok(&[f32::NAN; 4]), &ground, &bytes, &inputs)
    };
    let below = |x: f32| f32::from_bits((x * x).to_bits() - 1);
    let j = judged(&below);
    assert!(
        matches!(&against(&j, "ort").verdict, Verdict::Unstable(w) if w.contains("singularity")),
        "{j:?}"
    );
    let half = |x: f32| 0.5 * x * x;
    let j = judged(&half);
    assert_eq!(against(&j, "ort").verdict, Verdict::Report, "{j:?}");
}
