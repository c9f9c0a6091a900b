//! Where a failure is filed: the node that fails that way on its own part, the producer of a
//! wrong shape, the earliest producer of a fused failure, the part a hang does not finish.
use super::*;

#[test]
fn a_failure_downstream_of_a_wrong_shape_is_filed_as_that_shape() {
    // tract reads Einsum's empty explicit output ('abc->') as implicit mode: a [1,1,1] sum
    // where ONNX has a scalar. Its Shape, padded, reaches a Max that cannot broadcast, and
    // tract's analysis fails at the Reshape after it. The Reshape alone runs, and so does
    // no part of two levels before it; the part from the Einsum fails as the model does, and
    // the Einsum alone gives the wrong shape.
    let src = "<ir_version: 7, opset_import: [\"\" : 13]>\n\
               g (float[1,1,1] r, float[2] m) => (float[1,2,1] y) {\n\
                 part = Constant <value = int64[1] {-1}> ()\n\
                 pads = Constant <value = int64[2] {0,1}> ()\n\
                 to = Constant <value = int64[3] {1,2,1}> ()\n\
                 e = Einsum <equation: string = \"abc->\"> (r)\n\
                 s = Shape (e)\n\
                 c = Concat <axis: int = 0> (part, s)\n\
                 f = Cast <to: int = 1> (c)\n\
                 p = Pad (f, pads)\n\
                 x = Max (p, m)\n\
                 y = Reshape (x, to)\n\
               }";
    let inputs: NamedValues = vec![
        ("r".into(), f32s(vec![1, 1, 1], vec![-0.89])),
        ("m".into(), f32s(vec![2], vec![-0.83, 0.09])),
    ];
    let t = tract_triaged(src, &inputs, |m| m.contains("Reshape volume mismatch"));
    let f = &t.finding;
    assert_eq!(
        (f.kind, f.symptom.as_str()),
        (Kind::Inconsistency, "shape"),
        "{f:?}"
    );
    assert_eq!(f.op_type(), Some("Einsum"), "{f:?}");
    assert_eq!(f.blame, Some(mutagraph_oracles::Blame::Alone));
    assert!(f.message.contains("downstream: compile:"), "{}", f.message);
}

#[test]
fn a_failure_downstream_of_another_is_filed_as_that_one() {
    // tract casts Pad's negative pads to usize: the whole model panics nine nodes below, at
    // a Gather (a campaign's bundle blamed it). Wherever the search finds it (the prefixes,
    // or the tail of ancestors from the Pad), the finding is the Pad's, blamed on it alone:
    // the bug a model with the Pad alone files.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
               g (int64[1] i, float[2,1] t) => (float[2,6,1] y)\n\
               <int64[4] pads1 = {-1,0,2,0}, int64[1] flat = {-1}, int64[1] starts = {0},\n\
                int64[1] ends = {2}, int64[3] shape1 = {2,1,1}, int64[1] axes = {1},\n\
                int64[2] pads2 = {0,190}, int64[3] shape2 = {2,6,16}> {\n\
                 p1 = Pad (t, pads1)\n\
                 r2 = Reshape (p1, flat)\n\
                 s1 = Slice (r2, starts, ends)\n\
                 r1 = Reshape (s1, shape1)\n\
                 r3 = Reshape (r1, flat)\n\
                 f1 = Flatten <axis: int = 1> (r3)\n\
                 q1 = Squeeze (f1, axes)\n\
                 p2 = Pad (q1, pads2)\n\
                 r4 = Reshape (p2, shape2)\n\
                 y = Gather <axis: int = 2> (r4, i)\n\
               }";
    let inputs: NamedValues = vec![
        (
            "i".into(),
            Value::Tensor(HostTensor::new(vec![1], Data::I64(vec![1]))),
        ),
        ("t".into(), f32s(vec![2, 1], vec![0.5, -0.25])),
    ];
    let t = tract_triaged(src, &inputs, |m| m.starts_with("panic: "));
    let f = &t.finding;
    assert_eq!(f.kind, Kind::Crash, "{f:?}");
    assert_eq!(
        f.location.as_ref().map(|l| l.value.as_str()),
        Some("p1"),
        "{f:?}"
    );
    assert_eq!(f.blame, Some(mutagraph_oracles::Blame::Alone));
}

#[test]
fn a_failure_is_placed_on_the_node_that_fails_that_way() {
    // tract runs the Pad first (the order of the graph's outputs) and panics in it; the prefix
    // that holds only the Erf fails too, another way (tract has no f64 Erf), so bisecting the
    // prefixes by "fails at all" blamed the Erf. The panic is the Pad's.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
               g (double[1] e, double[1,4,2,2] x) => (double[1,1,1,1] y, double[1] a) {\n\
                 p = Constant <value = int64[8] {0,-1,0,0,0,-2,-1,-1}> ()\n\
                 a = Erf (e)\n\
                 y = Pad <mode: string = \"reflect\"> (x, p)\n\
               }";
    assert_eq!(tract_panic_placed(src), ("Pad".into(), "y".into()));
}

#[test]
fn a_failure_hidden_by_another_in_the_prefixes_is_placed_by_its_own_part() {
    // tract runs `b` first in the whole model (the order of the graph's outputs) and panics
    // there; every prefix that holds `b` holds `a` too, which tract meets first there and
    // which fails another way (no f64 Erf). Bisecting the prefixes blamed `c`; `b` alone with
    // what it depends on fails the way the whole model did.
    let src = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
               g (double[1] e, double[1,4,2,2] x) => (double[1] c, double[1,1,1,1] b, double[1] a) {\n\
                 p = Constant <value = int64[8] {0,-1,0,0,0,-2,-1,-1}> ()\n\
                 a = Erf (e)\n\
                 b = Pad <mode: string = \"reflect\"> (x, p)\n\
                 c = Neg (e)\n\
               }";
    assert_eq!(tract_panic_placed(src), ("Pad".into(), "b".into()));
}

#[test]
fn an_onnx_runtime_failure_inside_a_fusion_is_placed_at_the_fused_pool_not_the_node_after() {
    // Round 12: the same PadFusion fault with a Reshape after the pool was placed at the
    // Reshape. Bisecting prefixes exposes every value, and a Pad whose output is exposed is not
    // fused, so every prefix ran; the pool's own part, as is, fails.
    let bytes = crate::common::text_model(
        "g (float[1,1,2,2] x) => (float[16] y)
            <int64[8] p = {0, 0, 1, 1, 0, 0, 1, 1}, int64[1] f = {-1}> {
            t = Pad (x, p)
            a = AveragePool <kernel_shape = [1, 1]> (t)
            y = Reshape (a, f)
        }",
    );
    let inputs = vec![ramp("x", &[1, 1, 2, 2], 0.25)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "ort", "ort-noopt"], "ort");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    let at = t.finding.location.as_ref().map(|l| l.op_type.as_str());
    assert_eq!(at, Some("AveragePool"), "{t:?}");
    match &t.finding.blame {
        Some(Blame::Rewrite { rule, .. }) => assert_eq!(rule, "Pad_Fusion"),
        Some(Blame::WithProducers { ops }) => assert!(ops.contains(&"Pad".to_string()), "{ops:?}"),
        other => panic!("blame: {other:?}: {t:?}"),
    }
}

#[test]
fn a_failure_after_a_producer_that_fails_alone_is_filed_on_that_producer() {
    // tract types IsInf of doubles as a double and fails at the Xor taking it ("No super type
    // for F64 and Bool"); IsInf alone fails on doubles its own way. One fault, whichever
    // consumer meets it first.
    let bytes = crate::common::text_model(
        "g (double[3] x, bool[3] k) => (bool[3] y) { b = IsInf (x) \n y = Xor (b, k) }",
    );
    let inputs: NamedValues = vec![
        (
            "x".into(),
            Value::Tensor(HostTensor::new(
                vec![3],
                Data::F64(vec![1.0, f64::INFINITY, 0.5]),
            )),
        ),
        (
            "k".into(),
            Value::Tensor(HostTensor::new(
                vec![3],
                Data::Bool(vec![true, false, false]),
            )),
        ),
    ];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.op_type(), Some("IsInf"), "{t:?}");
    assert_eq!(t.finding.blame, Some(Blame::Alone), "{t:?}");
    assert!(!t.finding.message.contains("Xor"), "{}", t.finding.message);
}

#[test]
fn a_failure_on_a_shape_its_producer_got_wrong_is_filed_on_the_producer() {
    // ONNX Runtime's SAME_UPPER padding of a dilated MaxPool ignores the dilation: 31 columns
    // where the spec's ceil(32 / 1) is 32. The Add after it (fused into a
    // SkipLayerNormalization with the LayerNormalization at the optimized level) then fails on
    // mismatched shapes, and the message names only the fused node, which no prefix of the
    // model with its values exposed reproduces. The fault is the MaxPool's shape, not the Add,
    // the fused node nor the model's last node.
    let bytes = crate::common::text_model(
        "g (float[1,1,32] e, float[1,1,32] a, float[1] z) => (float[1,1,32] y, float[1] w)
            <float[32] g = {1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,
                            1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0},
             float[32] b = {0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,
                            0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0}> {
            m = MaxPool <kernel_shape = [2], strides = [1], dilations = [2], auto_pad = \"SAME_UPPER\"> (a)
            s = Add (e, m)
            y = LayerNormalization <axis = -1> (s, g, b)
            w = Neg (z)
        }",
    );
    let inputs = vec![
        ramp("e", &[1, 1, 32], 0.03),
        ramp("a", &[1, 1, 32], -0.01),
        ramp("z", &[1], 0.5),
    ];
    for faulty in ["ort", "ort-noopt"] {
        let t = triaged_for_real(&bytes, &inputs, &["reference", faulty], faulty);
        assert_eq!(t.verdict, Verdict::Report, "{t:?}");
        assert_eq!(t.finding.op_type(), Some("MaxPool"), "{faulty}: {t:?}");
        assert_eq!(t.finding.symptom, "shape", "{faulty}: {t:?}");
        assert_eq!(t.finding.blame, Some(Blame::Alone), "{faulty}: {t:?}");
    }
}

#[test]
fn a_failure_that_a_rightly_shaped_value_does_not_prevent_is_not_the_wrong_shape() {
    // tract keeps the input's shape for Einsum's 'ab->' (a scalar in ONNX), and fails at the
    // Xor after IsInf of doubles whatever shape reaches it. The wrong shape is a bug of its
    // own, but the failure is not its consequence: fed the rightly shaped sum, the IsInf and
    // the Xor fail the same way.
    let bytes = crate::common::text_model(
        "g (double[2,3] x, bool k) => (bool y) {
            e = Einsum <equation = \"ab->\"> (x)
            i = IsInf (e)
            y = Xor (i, k)
        }",
    );
    let inputs: NamedValues = vec![
        (
            "x".into(),
            Value::Tensor(HostTensor::new(
                vec![2, 3],
                Data::F64(vec![1.0, 2.0, 0.5, -1.0, 3.0, 4.0]),
            )),
        ),
        (
            "k".into(),
            Value::Tensor(HostTensor::new(vec![], Data::Bool(vec![true]))),
        ),
    ];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.kind, Kind::Crash, "{t:?}");
    assert_ne!(t.finding.op_type(), Some("Einsum"), "{t:?}");
}

#[test]
fn wrong_values_made_of_a_wrong_shape_upstream_are_that_shape() {
    // ONNX Runtime's SAME_UPPER AveragePool ignores the dilation (3 rows where ONNX gives 4);
    // the ArgMin after it returns wrong indices of the right shape. The fault is the pool's
    // shape: the same finding as the failures that shape makes elsewhere.
    let bytes = mutagraph_ir::text::parse_model(
        "<ir_version: 9, opset_import: [\"\" : 19]>
        g (float[1,1,4,2] x) => (int64[1,1,1,2] y) {
            p = AveragePool <kernel_shape = [2, 1], dilations = [2, 1], auto_pad = \"SAME_UPPER\"> (x)
            y = ArgMin <axis = 2> (p)
        }",
    )
    .expect("valid text")
    .to_bytes();
    let inputs = vec![(
        "x".to_string(),
        Value::Tensor(HostTensor::new(
            vec![1, 1, 4, 2],
            Data::F32(vec![4.0, 3.0, 3.0, 2.0, 2.0, 1.0, 1.0, 0.0]),
        )),
    )];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "ort", "ort-noopt"], "ort");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.op_type(), Some("AveragePool"), "{t:?}");
    assert_eq!(t.finding.symptom, "shape", "{t:?}");
    assert!(
        t.finding.signature().contains("shape"),
        "{}",
        t.finding.signature()
    );
}

#[test]
fn a_tdim_leak_is_blamed_on_the_node_with_the_cast_that_made_it() {
    // tract holds a Cast to int64 as its dimension type TDim, which Sign has no kernel for.
    // Sign alone, fed int64 values, runs: the fault needs the Cast.
    let bytes = crate::common::text_model(
        "g (float[4] x) => (int64[4] y) { c = Cast <to = 7> (x) \n y = Sign (c) }",
    );
    let inputs = vec![(
        "x".to_string(),
        Value::Tensor(HostTensor::new(
            vec![4],
            Data::F32(vec![1.5, -2.2, 3.7, 0.0]),
        )),
    )];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.gap.as_deref(), Some("tdim"), "{t:?}");
    assert_eq!(
        t.finding.blame,
        Some(Blame::WithProducers {
            ops: vec!["Cast".into()]
        }),
        "{t:?}"
    );
}

#[test]
fn a_failure_whose_part_the_library_cannot_compile_is_traced_to_the_producer() {
    // tract types IsInf of doubles as a double: the Xor after it fails analysis, and so does
    // every part before the Xor (no values of tract's to check the Xor alone on). Fed the
    // reference's values, the IsInf alone fails its own way: the finding is the IsInf's.
    let bytes = crate::common::text_model(
        "g (double[1,2] r) => (bool[1,3] y)
            <double[3,2] w = {1.0, 0.5, -0.25, 2.0, 0.0, 1.0}, bool[1,3] k = {1, 0, 0}> {
            e = Einsum <equation = \"bi,oi->bo\"> (r, w)
            i = IsInf (e)
            y = Xor (i, k)
        }",
    );
    let inputs: NamedValues = vec![(
        "r".into(),
        Value::Tensor(HostTensor::new(vec![1, 2], Data::F64(vec![0.5, -1.5]))),
    )];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    assert_eq!(t.finding.op_type(), Some("IsInf"), "{t:?}");
    assert_eq!(t.finding.blame, Some(Blame::Alone), "{t:?}");
}

/// tract's declutter loops for ever over an RNN whose output is reshaped with unit axes,
/// summed over them and flattened (round 12: the bundle was neither minimized nor placed). The
/// RNN's final state goes unread, as in round 13's bundle, whose parts asked for it and never
/// hung.
/// A hang is minimized with a short time limit per run and placed on the minimized model: the
/// first node whose part, as is, does not finish, blamed with the nodes it depends on.
#[test]
fn a_hang_is_minimized_and_placed_on_the_part_that_does_not_finish() {
    use mutagraph_engine::minimizer::{Finished, MinimizeJob, minimize_one};
    let w: Vec<String> = (0..32)
        .map(|i| format!("{:.2}", (i as f32 * 0.37).sin()))
        .collect();
    let r: Vec<String> = (0..64)
        .map(|i| format!("{:.2}", (i as f32 * 0.53).cos()))
        .collect();
    let bytes = crate::common::text_model(&format!(
        "g (float[2,1,4] x) => (float[16] y, float[2,1,4] z)
            <float[1,8,4] W = {{{}}}, float[1,8,8] R = {{{}}}, int64[5] s = {{1, 2, 1, 1, 8}},
             int64[3] ax = {{0, 2, 3}}, int64[1] f = {{-1}}> {{
            a = Relu (x)
            h, hn = RNN <hidden_size = 8> (a, W, R)
            q = Reshape (h, s)
            u = ReduceSum (q, ax)
            y = Reshape (u, f)
            z = Neg (x)
        }}",
        w.join(", "),
        r.join(", ")
    ));
    let inputs = vec![ramp("x", &[2, 1, 4], 0.1)];
    let set: Vec<String> = ["reference", "tract"].map(String::from).to_vec();
    let mut p = pool();
    p.set_timeout(std::time::Duration::from_secs(5));
    let first = p.run("tract", &bytes, &inputs).unwrap();
    assert!(
        matches!(first.outcome, Outcome::Timeout { .. }),
        "tract finished: {:?}",
        first.outcome.detail()
    );
    // tract hangs compiling the model (its declutter), which it does at the first run of
    // each input shape: the step says so (round 14: titled "while running the model").
    let Outcome::Timeout { step, .. } = &first.outcome else {
        unreachable!()
    };
    assert_eq!(
        step.as_deref(),
        Some(mutagraph_backends::worker::context::PREPARING)
    );
    let outcomes = set
        .iter()
        .map(|b| p.run(b, &bytes, &inputs).unwrap().outcome)
        .collect();
    let names: Vec<&str> = set.iter().map(String::as_str).collect();
    let j = judge_full(&names, outcomes, &bytes, &inputs, true);
    let hang = against(&j, "tract").finding.clone();
    assert_eq!(hang.kind, Kind::Hang, "{hang:?}");
    let job = MinimizeJob {
        signature: hang.signature(),
        dir: PathBuf::from("unused"),
        finding: hang,
        model: bytes,
        inputs,
        intermediates: None,
        input_seed: 1,
        trace: None,
        whole: None,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let opts = mutagraph_oracles::minimize::Options::default();
    let done = minimize_one(&mut p, &set, Tolerance::APPROXIMATE, &job, &opts, &stop);
    p.shutdown();
    let Some(Finished::Minimized(done)) = done else {
        panic!("not minimized")
    };
    assert!(done.info.nodes_after <= 4, "{:?}", done.info);
    let at = done.finding.location.as_ref().expect("placed");
    assert!(
        ["RNN", "Reshape", "ReduceSum"].contains(&at.op_type.as_str()),
        "{at:?}"
    );
    match &done.finding.blame {
        Some(Blame::WithProducers { ops }) => assert!(ops.contains(&"RNN".into()), "{ops:?}"),
        Some(Blame::Alone) => assert_eq!(at.op_type, "RNN"),
        other => panic!("blame {other:?}"),
    }
}

/// tract types Gemm over int64 with alpha 2 through an f32 constant and fails to compile ("No
/// super type for F32 and I64"). Alone, fed an int64 graph input, the node failed the same way
/// and the adapter compiled it again with the input fixed to its value, which folded it: the
/// blame read "only together with ArgMin and GatherND" (round 12, `crash-tract-gemm-e1f98b9a`).
/// A part is judged as the whole model meets it: compiled from types and shapes.
#[test]
fn a_node_alone_is_not_folded_where_the_model_is_not() {
    let bytes = crate::common::text_model(
        "g (float[1,1,1] x) => (int64[1,1] y)
            <int64[2,2] i = {0, 0, 0, 0}, int64[1,2] b = {-1, 0}, int64[1,1] c = {-1}> {
            a = ArgMin <axis = 1, keepdims = 1, select_last_index = 1> (x)
            g = GatherND (a, i)
            y = Gemm <transA = 1, transB = 1, alpha = 2.0, beta = -0.5> (g, b, c)
        }",
    );
    let inputs = vec![ramp("x", &[1, 1, 1], 2.0)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "tract"], "tract");
    assert_eq!(t.verdict, Verdict::Report, "{t:?}");
    let at = t.finding.location.as_ref().map(|l| l.op_type.as_str());
    assert_eq!(at, Some("Gemm"), "{t:?}");
    assert_eq!(t.finding.blame, Some(Blame::Alone), "{t:?}");
}

/// An optimizer's failure downstream of a wrong shape that the library's unoptimized level
/// gives too is not filed as that shape (round 14: ONNX Runtime's ReduceMean over an empty
/// last axis keeps it at both levels; SimplifiedLayerNormFusion's fused node refuses the empty
/// axis whatever that shape).
#[test]
fn an_optimizer_failure_is_not_a_wrong_shape_both_levels_give() {
    let bytes = crate::common::text_model(
        "g (float[1,1,1,1,0] x) => (float[1,1,1,1,0] y)
            <float two = {2}, float eps = {1e-06}, float[0] gamma = {}> {
            p = Pow (x, two)
            m = ReduceMean <axes = [-1]> (p)
            a = Add (m, eps)
            s = Sqrt (a)
            d = Div (x, s)
            y = Mul (d, gamma)
        }",
    );
    let inputs = vec![ramp("x", &[1, 1, 1, 1, 0], 0.25)];
    let t = triaged_for_real(&bytes, &inputs, &["reference", "ort", "ort-noopt"], "ort");
    assert_eq!(t.finding.layer, Some(Layer::Optimizer), "{t:?}");
    assert_ne!(t.finding.symptom, "shape", "{t:?}");
    assert!(
        t.finding.message.contains("SimplifiedLayerNormalization"),
        "{t:?}"
    );
}
