use super::*;

#[test]
fn variants_of_one_library_share_a_signature() {
    let mut a = Finding::new(Kind::Inconsistency, "ort", "values", "x".into());
    let loc = Location {
        op_type: "Celu".into(),
        value: "v".into(),
        attrs: String::new(),
    };
    a.location = Some(loc.clone());
    let mut b = Finding::new(Kind::Inconsistency, "ort-noopt", "values", "y".into());
    b.location = Some(loc.clone());
    let mut both = a.clone();
    both.backends.push("ort-noopt".into());
    assert_eq!(a.signature(), b.signature());
    assert_eq!(a.signature(), both.signature());
    // An optimizer bug is another root cause than a kernel bug of the same op.
    let mut opt = a.clone();
    opt.layer = Some(Layer::Optimizer);
    assert_ne!(opt.signature(), a.signature());
    // The symptom class stays: a wrong shape is not a wrong value.
    let mut shape = a.clone();
    shape.symptom = "shape".into();
    assert_ne!(shape.signature(), a.signature());
    // A dtype gap is one finding per op, whatever the variant and message.
    let gap = |lib: &str, msg: &str, op: &str| {
        let mut g = Finding::new(Kind::Crash, lib, "error", msg.into());
        g.gap = Some("bool".into());
        g.location = Some(Location {
            op_type: op.into(),
            value: "v".into(),
            attrs: String::new(),
        });
        g
    };
    let g1 = gap(
        "tract",
        "run: evaluating #1 \"a\" Pad: bool is not a number",
        "Pad",
    );
    let g2 = gap("tract-opt", "compile: Pad: bool is not a number", "Pad");
    assert_eq!(g1.signature(), g2.signature());
    // A piece of the node tract split over an axis is the node (round 14: `Eq` and `Equal`).
    let split = gap(
        "tract",
        "run: Evaluating #47 \"Equal_1.split-over-0.0..1\" Eq: Bool is not a number",
        "Equal",
    );
    let whole = gap(
        "tract",
        "run: Evaluating #15 \"Equal_2\" Eq: Bool is not a number",
        "Equal",
    );
    assert_eq!(split.signature(), whole.signature());
    let eye = gap("tract", "compile: EyeLike: bool is not a number", "EyeLike");
    assert_ne!(g1.signature(), eye.signature());
    // tract's TDim leaking into values is one fault, whichever op it meets.
    let mut sign = gap("tract", "impossible to unify I64 with TDim", "Sign");
    let mut cumsum = gap("tract", "impossible to unify TDim with I64", "CumSum");
    sign.gap = Some("tdim".into());
    cumsum.gap = Some("tdim".into());
    assert_eq!(sign.signature(), cumsum.signature());
    assert!(sign.signature_id().starts_with("crash-tract-tdim_gap-"));
    assert!(g1.signature_id().starts_with("crash-tract-pad_bool_gap-"));
    // The kernel tract derives from a model's node lacks the type: tract's Gelu runs an Erf,
    // so Erf on f64 is one gap whether a Gelu or an Erf reached it.
    let mut gelu = gap(
        "tract",
        "run: Evaluating #5 \"Gelu_1.erf\" Erf: f64 not supported",
        "Gelu",
    );
    let mut erf = gap(
        "tract",
        "run: Evaluating #1 \"Erf_1\" Erf: f64 not supported",
        "Erf",
    );
    gelu.gap = Some("f64".into());
    erf.gap = Some("f64".into());
    assert_eq!(gelu.gap_op(), Some("Erf"));
    assert_eq!(gelu.signature(), erf.signature());
    assert!(gelu.signature_id().starts_with("crash-tract-erf_f64_gap-"));
}

/// The signature of tract's failure `msg`, placed at an `op` node by its message.
fn tract_signature(msg: &str, op: &str) -> String {
    let mut f = Finding::new(Kind::Crash, "tract", "error", msg.into());
    f.layer = Some(Layer::Kernel);
    f.placed_by_message = true;
    f.location = Some(Location {
        op_type: op.into(),
        value: "v".into(),
        attrs: String::new(),
    });
    f.signature()
}

#[test]
fn a_wrong_wiring_of_one_tract_expansion_is_one_signature_whichever_inner_op_notices() {
    let at = tract_signature;
    let rope = "com.microsoft::RotaryEmbedding";
    // Round 13: RotaryEmbedding with 1-D position_ids, five messages over two campaigns.
    let keys = [
        "compile: Translating node #28 \"R_14\" RotaryEmbedding ToTypedTranslator: in output_facts invocation for R_14: Reshape: Incompatible reshape for shape [Val(1), Val(8), Broadcast([Val(2), Val(8)]), Val(4)] and Reshape(2, [1, 8], [8])",
        "compile: Translating node #10 \"R_5\" RotaryEmbedding ToTypedTranslator: in output_facts invocation for R_5: Reshape: Removing non-trivial axis #2 of dim: 8,2,8,16",
        "compile: Translating node #9 \"R_12\" RotaryEmbedding ToTypedTranslator: in output_facts invocation for R_12.concat_tail: Concat: Inconsistent concat TypedConcat { axis: 3 } inputs: [1,32,broadcast((broadcast((4), (8))), (broadcast((4), (8)))),8,F32, 1,32,8,24,F32]",
        "compile: Translating node #122 \"R_5\" RotaryEmbedding ToTypedTranslator: in output_facts invocation for R_5.cos_unsqueeze: AddAxis: Attempt to insert axis #2 on shape 4",
        "compile: Translating node #103 \"R_11\" RotaryEmbedding ToTypedTranslator: Output mismatch after rewiring expansion for output #0: expected 1,48,8,8,F32 got 1,broadcast((broadcast((4), (48))), (broadcast((4), (48)))),8,8,F32",
    ]
    .map(|m| at(m, rope));
    assert!(keys.iter().all(|k| k == &keys[0]), "{keys:#?}");
    assert!(keys[0].contains(&format!("op={rope}|")), "{}", keys[0]);
    // Element types meeting in an expansion are another fault of the op.
    let types = at(
        "compile: Translating node #3 \"R\" RotaryEmbedding ToTypedTranslator: in output_facts invocation for R.rot: Add: No super type for F32 and F16",
        rope,
    );
    let shapes = at(
        "compile: Translating node #3 \"R\" RotaryEmbedding ToTypedTranslator: Output mismatch after rewiring expansion for output #0: expected 2,1,3,F32 got 1,2,3,F32",
        rope,
    );
    assert_ne!(types, shapes);
    // A standard op's translation keeps its own words: tract's StridedSlice fails `start <=
    // end` translating it and running it, one fault (round 14: two bundles).
    assert_eq!(
        at(
            "compile: Translating node #44 \"S\" StridedSlice ToTypedTranslator: in output_facts invocation for S: StridedSlice: in output_facts invocation for adhoc.slice-axis-1: Slice: Condition failed: `start <= end` (3 vs 2)",
            "Slice"
        ),
        at(
            "run: Evaluating #5 \"S\" Slice: Condition failed: `start <= end` (425 vs 360)",
            "Slice"
        )
    );
    // Another op's expansion is another finding.
    assert_ne!(
        keys[0],
        at(
            "compile: Translating node #3 \"M\" MultiHeadAttention ToTypedTranslator: Output mismatch after rewiring expansion for output #0: expected 1,8,6,F32 got 1,8,4,F32",
            "com.microsoft::MultiHeadAttention"
        )
    );
}

#[test]
fn one_tract_fault_met_at_different_stages_is_one_signature() {
    let at = tract_signature;
    // IsInf reached by type analysis, by constant folding and at run time.
    let a = at(
        "compile: Failed analyse for node #1 \"IsInf_5\" IsInf: Eager eval during inference: Evaluating #1 \"adhoc\" IsInf: Element wise eval in-place not defined",
        "IsInf",
    );
    let b = at(
        "run: Evaluating #1 \"IsInf_11\" IsInf: Element wise eval in-place not defined",
        "IsInf",
    );
    let c = at(
        "compile: running pass PropConst(6): Eager eval #7 \"IsInf_4\" IsInf during optimisation: Element wise eval in-place not defined",
        "IsInf",
    );
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert!(
        a.ends_with("op=IsInf|msg=element wise eval in-place not defined"),
        "{a}"
    );
    // Another op with the same words is another finding.
    assert_ne!(
        a,
        at(
            "run: Evaluating #1 \"n\" IsNan: Element wise eval in-place not defined",
            "IsNaN"
        )
    );
    // Shapes in a message are the model's.
    assert_eq!(
        at(
            "compile: Translating node #1 \"F_5\" Flatten ToTypedTranslator: Reshape volume mismatch: input [Val(1), Val(0), Val(1)] (vol=0) vs shape [Val(1), Val(1)] (vol=1)",
            "Flatten"
        ),
        at(
            "compile: Failed analyse for node #5 \"F_13\" Flatten: Eager eval during inference: Reshape volume mismatch: input [Val(0), Val(1)] (vol=0) vs shape [Val(1), Val(1)] (vol=1)",
            "Flatten"
        ),
    );
    // The condition that failed stays (backticks are code, not a name).
    let cond = at(
        "compile: Translating node #2 \"M_11\" MatMulInference ToTypedTranslator: Condition failed: `a_rank > 1 || b_rank > 1`",
        "MatMul",
    );
    assert!(cond.contains("a_rank > # || b_rank > #"), "{cond}");
    assert_eq!(
        cond,
        at(
            "compile: Failed analyse for node #2 \"M_13\" MatMulInference: Eager eval during inference: Condition failed: `a_rank > 1 || b_rank > 1`",
            "MatMul"
        )
    );
    assert_ne!(
        cond,
        at(
            "compile: Translating node #5 \"S\" StridedSlice ToTypedTranslator: Slice: Condition failed: `start <= end` (425 vs 360)",
            "MatMul"
        )
    );
    // Element types meeting in one op, whichever types and words.
    let mix = at(
        "compile: Failed analyse for node #5 \"G\" Gemm: Eager eval during inference: Evaluating #5 \"adhoc.alpha_ab\" Mul: Tensor datum type error: tensor is F16, accessed as F32",
        "Gemm",
    );
    assert!(mix.ends_with("op=Gemm|msg=mixes element types"), "{mix}");
    for other in [
        "compile: running pass PropConst(0): Eager eval #5 \"G.beta_c\" Mul during optimisation: Tensor datum type error: tensor is F32, accessed as F64",
        "compile: Translating node #3 \"G\" Gemm ToTypedTranslator: in output_facts invocation for G.beta_c: Mul: No super type for F32 and I32",
        "compile: Translating node #3 \"G\" Gemm ToTypedTranslator: Output mismatch after rewiring expansion for output #0: expected 1,5,F16 got 1,5,F32",
    ] {
        assert_eq!(mix, at(other, "Gemm"), "{other}");
    }
    // A shape mismatch of one type is not a type mix.
    let shape = at(
        "compile: Translating node #3 \"R\" RNN ToTypedTranslator: Output mismatch after rewiring expansion for output #0: expected 1,1,2,19,F32 got 1,2,1,19,F32",
        "RNN",
    );
    assert!(!shape.contains("mixes"), "{shape}");
    // Panics: the source location goes, the panic's words stay.
    assert_eq!(
        at(
            "panic: assertion failed: end <= axis_len (at /x/ndarray-0.17.2/src/impl_methods.rs:591)",
            "Pad"
        ),
        at(
            "panic: assertion failed: end <= axis_len (at /y/ndarray-0.17.2/src/impl_methods.rs:12)",
            "Pad"
        ),
    );
}

#[test]
fn the_reductions_sharing_an_attributes_bug_are_one_root_cause() {
    // ONNX Runtime keeps a zero-length axis given as negative: ReduceL1 and ReduceMean
    // (and every ReduceX) through one axes handling.
    let reduce = |op: &str| {
        let mut f = Finding::new(Kind::Inconsistency, "ort", "shape", "output 'y'".into());
        f.location = Some(Location {
            op_type: op.into(),
            value: "y".into(),
            attrs: String::new(),
        });
        f.trigger = vec!["axes".into()];
        f
    };
    assert_eq!(
        reduce("ReduceL1").root_signature(),
        reduce("ReduceMean").root_signature()
    );
    assert_ne!(
        reduce("ReduceL1").root_signature(),
        reduce("ArgMax").root_signature()
    );
}

#[test]
fn nan_and_wrong_values_of_one_kernel_are_one_root_cause() {
    let at = |kind: Kind, symptom: &str, op: &str| {
        let mut f = Finding::new(kind, "tract", symptom, "output 'y'".into());
        f.layer = Some(Layer::Kernel);
        f.location = Some(Location {
            op_type: op.into(),
            value: "y".into(),
            attrs: String::new(),
        });
        f
    };
    let mut nan = at(Kind::Nan, "partial", "GlobalLpPool");
    let values = at(Kind::Inconsistency, "values", "GlobalLpPool");
    assert_ne!(nan.signature(), values.signature());
    assert_eq!(nan.root_signature(), values.root_signature());
    // An odd `p` is what makes tract's wrong values NaN, not what makes them wrong.
    nan.trigger = vec!["p".into()];
    assert_eq!(nan.root_signature(), values.root_signature());
    // Attributes the trigger search found no need for are not the root's.
    let mut with_p = at(Kind::Inconsistency, "values", "GlobalLpPool");
    with_p.location.as_mut().unwrap().attrs = "p=3".into();
    assert_ne!(with_p.signature(), values.signature());
    assert_eq!(with_p.root_signature(), values.root_signature());
    // Another op, a wrong shape, a missing output: other root causes.
    let others = [
        at(Kind::Inconsistency, "values", "GlobalAveragePool"),
        at(Kind::Inconsistency, "shape", "GlobalLpPool"),
        at(Kind::Inconsistency, "missing-output", "GlobalLpPool"),
    ];
    for o in others {
        assert_ne!(o.root_signature(), values.root_signature(), "{o:?}");
    }
}

#[test]
fn burns_values_wrong_only_after_their_producers_are_one_root_cause() {
    let after = |kind: Kind, op: &str, producer: &str, backend: &str| {
        let mut f = Finding::new(kind, backend, "values", "output 'y'".into());
        f.layer = Some(Layer::Kernel);
        f.location = Some(Location {
            op_type: op.into(),
            value: "y".into(),
            attrs: String::new(),
        });
        f.blame = Some(Blame::WithProducers {
            ops: vec![producer.into()],
        });
        f
    };
    let abs = after(Kind::Inconsistency, "Abs", "Transpose", "burn-ndarray");
    let recip = after(Kind::Nan, "Reciprocal", "OneHot", "burn-ndarray");
    assert_ne!(abs.signature(), recip.signature());
    assert_eq!(abs.root_signature(), recip.root_signature());
    // Shown alone, on another device, or by another library: apart.
    let mut alone = abs.clone();
    alone.blame = Some(Blame::Alone);
    let wgpu = after(Kind::Inconsistency, "Abs", "Transpose", "burn-wgpu");
    let tract = after(Kind::Inconsistency, "Abs", "Transpose", "tract");
    for o in [alone, wgpu, tract] {
        assert_ne!(o.root_signature(), abs.root_signature(), "{o:?}");
    }
}

#[test]
fn root_signatures_of_failures_keep_how_they_fail() {
    let mut a = Finding::new(
        Kind::Crash,
        "tract",
        "error",
        "run: Evaluating #1 \"p\" Pad: index out of bounds".into(),
    );
    a.location = Some(Location {
        op_type: "Pad".into(),
        value: "v".into(),
        attrs: "mode=\"reflect\"".into(),
    });
    a.trigger = vec!["mode=\"reflect\"".into()];
    let mut b = a.clone();
    b.message = "run: Evaluating #1 \"p\" Pad: start <= axis_len failed".into();
    assert_ne!(a.root_signature(), b.root_signature());
    let mut c = a.clone();
    c.message = "compile: Failed analyse for node #4 \"q\" Pad: Eager eval during inference: index out of bounds".into();
    assert_eq!(a.root_signature(), c.root_signature());
}

#[test]
fn an_onnx_runtime_check_is_one_signature_whichever_op_reached_it() {
    let at = |backend: &str, op: &str| {
        let mut f = Finding::new(
            Kind::Crash,
            backend,
            "error",
            "compile: Exception during initialization: /onnxruntime_src/onnxruntime/core/providers/cpu/tensor/cast_op.cc:983 onnxruntime::{anonymous}::Cast::Cast(const onnxruntime::OpKernelInfo&) Attribute saturate is only used for cast to float 8 types.".into(),
        );
        f.layer = Some(Layer::Kernel);
        f.location = Some(Location {
            op_type: op.into(),
            value: "v".into(),
            attrs: String::new(),
        });
        f
    };
    let cast = at("ort", "Cast");
    let cast_like = at("ort-noopt", "CastLike");
    assert_eq!(cast.ort_site().as_deref(), Some("cast_op.cc:983"));
    assert_eq!(cast.signature(), cast_like.signature());
    assert_eq!(cast.root_signature(), cast_like.root_signature());
    assert!(
        cast.signature().contains("|site=cast_op.cc:983|msg="),
        "{}",
        cast.signature()
    );
    // The same site met only at the optimized level (its unoptimized level had removed the
    // Cast): one root (round 9: a CastLike and a Cast bundle of one check).
    let mut optimized = at("ort", "Cast");
    optimized.layer = Some(Layer::Optimizer);
    assert_ne!(optimized.signature(), cast_like.signature());
    assert_eq!(optimized.root_signature(), cast_like.root_signature());
    // tract's messages name no such site.
    assert_eq!(at("tract", "Cast").ort_site(), None);
    // The same site reached through a rewrite the blame check found, at another node: one
    // root (round 11: ORT's PadFusion leaving pads a 1×1 pool refuses, filed at a Softmax
    // with its rewrite and at a Reshape without).
    let mut rewritten = at("ort", "Softmax");
    rewritten.layer = Some(Layer::Optimizer);
    rewritten.blame = Some(Blame::Rewrite {
        library: "ONNX Runtime".into(),
        rule: "Pad_Fusion".into(),
        ops: vec!["Pad".into(), "AveragePool".into()],
    });
    assert_eq!(rewritten.root_signature(), cast_like.root_signature());
}

/// tract failing to compile at a node of `op` with `msg`.
fn tract_compile_failure(op: &str, msg: &str) -> Finding {
    let mut f = Finding::new(Kind::Crash, "tract", "error", msg.into());
    f.stage = Some(Stage::Compile);
    f.layer = Some(Layer::Kernel);
    f.location = Some(Location {
        op_type: op.into(),
        value: "v".into(),
        attrs: String::new(),
    });
    f
}

#[test]
fn a_failing_tract_rule_is_one_signature_whichever_op_left_the_node() {
    let at = |op: &str, msg: &str| {
        let mut f = tract_compile_failure(op, msg);
        f.trigger = vec!["strides".into()];
        f
    };
    let conv = at(
        "Conv",
        "compile: running pass declutter: declutter node #51 \"Conv_5.downsample.1\" Downsample: Pulling #51 \"Conv_5.downsample.1\" Downsample over #50 \"Reshape_18.1\" Reshape: Invalid axis",
    );
    let slice = at(
        "Slice",
        "compile: running pass declutter: declutter node #55 \"/Slice\" Downsample: Pulling #55 \"/Slice\" Downsample over #30 \"/Reshape.0\" Reshape: Invalid axis",
    );
    assert_eq!(conv.tract_rule().as_deref(), Some("Downsample/AxisOp"));
    assert_eq!(conv.signature(), slice.signature());
    // Pulled over an added axis instead of a reshape: the same rule of tract's.
    let add_axis = at(
        "Slice",
        "compile: running pass declutter: declutter node #15 \"Slice_1.stride-axis-0\" Downsample: Pulling #15 \"Slice_1.stride-axis-0\" Downsample over #1 \"Reshape_2.0\" AddAxis: Invalid axis",
    );
    assert_eq!(add_axis.signature(), conv.signature());
    assert_eq!(conv.root_signature(), slice.root_signature());
    assert!(
        conv.signature()
            .contains("rule=Downsample/AxisOp|msg=invalid axis"),
        "{}",
        conv.signature()
    );
    // Pulled over another op, or failing another way, is another fault.
    let expand = at(
        "Expand",
        "compile: declutter node #34 \"c.downsample.1\" Downsample: Pulling #34 \"c.downsample.1\" Downsample over #33 \"/Expand\" MultiBroadcastTo: Trying to substitute a 1,37,5,16,F16 by 1,37,5,32,F16 as output #0",
    );
    assert_eq!(
        expand.tract_rule().as_deref(),
        Some("Downsample/MultiBroadcastTo")
    );
    assert_ne!(expand.signature(), conv.signature());
    // Another library's message, or one naming no rule, keeps the op.
    let mut ort = conv.clone();
    ort.backends = vec!["ort".into()];
    assert_eq!(ort.tract_rule(), None);
    assert!(ort.signature().contains("op=Conv"));
    assert_eq!(tract_rule("run: Evaluating #1 \"p\" Pad: bad"), None);
    // A pull inside a Scan body's declutter is nested in the pull over the Scan: the innermost
    // failed (round 9: filed as Downsample/Scan beside the Downsample/AxisOp bundles).
    let nested = "compile: running pass declutter: declutter node #51 \"s\" Downsample: \
                  Pulling #51 \"s\" Downsample over #54 \"LSTM_0\" Scan: running pass \
                  declutter: declutter node #13 \"s-0\" Downsample: Pulling #13 \"s-0\" \
                  Downsample over #12 \"LSTM_0.Ht_fixed\" AddAxis: Invalid axis";
    assert_eq!(tract_rule(nested).as_deref(), Some("Downsample/AxisOp"));
    // Unless the inner pull's result does not fit the facts the outer pull gave the body.
    let substituted = "compile: running pass declutter: declutter node #39 \"s\" Downsample: \
                  Pulling #39 \"s\" Downsample over #38 \"/core/RNN\" Scan: running pass \
                  declutter: declutter node #9 \"s-0\" Downsample: Pulling #9 \"s-0\" \
                  Downsample over #8 \"/core/RNN.Ht\" Tanh: Trying to substitute a 0,1,32,F32 \
                  by 1,1,32,F32 as output #0 of #9 \"s-0\" Downsample.";
    assert_eq!(tract_rule(substituted).as_deref(), Some("Downsample/Scan"));
}

#[test]
fn a_failing_declutter_of_an_op_is_its_rule_whichever_model_op_made_it() {
    // tract's EinSum absorbing an Expand fails in EinSum's own declutter, whether the EinSum
    // is a MatMul or one that tract extracts from a GRU: one fault of that rule.
    let at = tract_compile_failure;
    let cond = "Condition failed: `shapes.iter().enumerate().all(|(ix, fact)| fact.len() == self.axes.rank(InOut::In(ix)))`";
    let gru = at(
        "GRU",
        &format!(
            "compile: running pass declutter: declutter node #41 \"GRU_1.extracted.GRU_1.Xt_WT\" EinSum: in output_facts invocation for GRU_1.extracted.GRU_1.Xt_WT: EinSum: {cond}"
        ),
    );
    let matmul = at(
        "MatMul",
        &format!(
            "compile: running pass declutter: declutter node #7 \"MatMul_3\" EinSum: in output_facts invocation for MatMul_3: EinSum: {cond}"
        ),
    );
    assert_eq!(gru.tract_rule().as_deref(), Some("declutter EinSum"));
    assert_eq!(gru.signature(), matmul.signature());
    assert_eq!(gru.root_signature(), matmul.root_signature());
    assert!(
        gru.signature().contains("rule=declutter EinSum|"),
        "{}",
        gru.signature()
    );
}

#[test]
fn one_failure_of_a_family_is_one_root_cause_without_a_trigger() {
    let at = |kind: Kind, op: &str, msg: &str| {
        let mut f = Finding::new(kind, "tract", "error", msg.into());
        f.layer = Some(Layer::Kernel);
        f.location = Some(Location {
            op_type: op.into(),
            value: "v".into(),
            attrs: String::new(),
        });
        f
    };
    let msg = |op: &str| {
        format!(
            "compile: running pass ChangeAxes: Making patch for AxisChange from #4 \"{op}_5.h0\" Const: Trying to substitute a 1,1,2,F32 by 1,2,F32 as output #0 of #4 \"{op}_5.h0\" RmAxis."
        )
    };
    let rnn = at(Kind::Crash, "RNN", &msg("RNN"));
    let lstm = at(Kind::Crash, "LSTM", &msg("LSTM"));
    assert_ne!(rnn.signature(), lstm.signature());
    assert_eq!(rnn.root_signature(), lstm.root_signature());
    // Failing another way is another root cause.
    let other = at(
        Kind::Crash,
        "LSTM",
        "compile: seq_len only supported for trivial noop case",
    );
    assert_ne!(other.root_signature(), rnn.root_signature());
    // Ops of different families stay apart, and wrong values without a trigger stay the op's.
    assert_ne!(
        at(Kind::Crash, "Pad", &msg("RNN")).root_signature(),
        rnn.root_signature()
    );
    let mut gru = at(Kind::Inconsistency, "GRU", "x");
    gru.symptom = "values".into();
    let mut lstm_values = gru.clone();
    lstm_values.location.as_mut().unwrap().op_type = "LSTM".into();
    assert_ne!(gru.root_signature(), lstm_values.root_signature());
}

#[test]
fn signatures_use_the_location_else_the_message() {
    let mut f = Finding::new(Kind::Crash, "tract", "error", "node \"a1\" failed 3".into());
    f.stage = Some(Stage::Compile);
    let mut g = f.clone();
    g.message = "node \"b7\" failed 12".into();
    assert_eq!(f.signature(), g.signature());
    assert_eq!(f.signature_id(), g.signature_id());
    assert_eq!(
        f.signature(),
        "crash|tract||error|op=?|msg=node '_' failed #"
    );
    let mut h = Finding::new(Kind::Inconsistency, "ort", "values", "x".into());
    assert!(h.signature().ends_with("op=?"));
    h.location = Some(Location {
        op_type: "Conv".into(),
        value: "v1".into(),
        attrs: "auto_pad=NOTSET".into(),
    });
    h.layer = Some(Layer::Kernel);
    assert_eq!(
        h.signature(),
        "inconsistency|ort|kernel|values|op=Conv[auto_pad=NOTSET]"
    );
    assert!(h.signature_id().starts_with("inconsistency-ort-conv-"));
    assert_ne!(h.signature_id(), f.signature_id());
}

#[test]
fn a_process_dying_in_an_optimizer_pass_is_one_signature_per_pass() {
    let died_in = |pass: &str| {
        let step = mutagraph_backends::worker::context::optimizer_pass("ONNX Runtime", pass);
        let mut f = Finding::new(
            Kind::Crash,
            "ort",
            "signal-SIGSEGV",
            format!("signal 11 (SIGSEGV): {step}"),
        );
        f.layer = Some(Layer::Optimizer);
        f
    };
    let nchwc = died_in("NchwcTransformer");
    assert_eq!(nchwc.optimizer_pass(), Some("NchwcTransformer"));
    assert!(
        nchwc.signature().contains("|pass=NchwcTransformer|"),
        "{}",
        nchwc.signature()
    );
    assert_eq!(nchwc.root_signature(), nchwc.signature());
    assert!(
        nchwc
            .signature_id()
            .starts_with("crash-ort-nchwctransformer-"),
        "{}",
        nchwc.signature_id()
    );
    assert_ne!(
        nchwc.signature(),
        died_in("MatmulTransposeFusion").signature()
    );
    // Wrong values name no pass, whatever the message says.
    let mut numeric = died_in("NchwcTransformer");
    numeric.kind = Kind::Inconsistency;
    assert_eq!(numeric.optimizer_pass(), None);
}

#[test]
fn findings_on_one_rewrite_share_a_signature_and_drop_it_unground() {
    let on = |op: &str, ops: &[&str]| {
        let mut f = Finding::new(Kind::Inconsistency, "tract", "values", "wrong".into());
        f.location = Some(Location {
            op_type: op.into(),
            value: "y".into(),
            attrs: String::new(),
        });
        f.blame = Some(Blame::Rewrite {
            library: "tract".into(),
            rule: "declutter Downsample".into(),
            ops: ops.iter().map(|s| s.to_string()).collect(),
        });
        f
    };
    let (a, b) = (
        on("Conv", &["Softmax", "Conv"]),
        on("Conv", &["LogSoftmax", "Conv"]),
    );
    assert_eq!(a.signature(), b.signature());
    assert!(
        a.signature()
            .contains("rewrite=declutter Downsample|op=Conv")
    );
    assert!(
        a.root_signature()
            .contains("rewrite=declutter Downsample|family=Conv")
    );
    // One rewrite over two ops of a family (tract's fold of a squared square root, met in
    // ReduceL2 and ReduceSumSquare) is one root cause; over ops of two families, two.
    let (l2, ss) = (
        on("ReduceL2", &["ReduceL2"]),
        on("ReduceSumSquare", &["ReduceSumSquare"]),
    );
    assert_eq!(l2.root_signature(), ss.root_signature());
    assert_ne!(
        l2.root_signature(),
        on("Slice", &["Conv", "Slice"]).root_signature()
    );
    // Without the rewrite (judged against a peer, where it cannot be looked for) it is the same
    // bug once both are unground.
    let mut plain = on("Conv", &[]);
    plain.blame = None;
    assert_eq!(unground(&a.signature()), unground(&plain.signature()));
    assert_ne!(a.signature(), plain.signature());
}

#[test]
fn a_rust_panic_is_one_signature_per_source_line_of_the_library() {
    let at = |op: &str, ty: &str| {
        let mut f = tract_compile_failure(
            op,
            &format!(
                "panic: Can't build a WeightType from {ty} (at /root/.cargo/registry/src/\
                 index.crates.io-1949cf8c6b5b557f/tract-linalg-0.23.9/src/frame/weights.rs:24)"
            ),
        );
        f.symptom = "panic".into();
        f.gap = Some(ty.to_lowercase());
        f
    };
    let (gemm, matmul) = (at("Gemm", "I64"), at("MatMul", "U32"));
    assert_eq!(
        gemm.panic_site().as_deref(),
        Some("tract-linalg/src/frame/weights.rs:24")
    );
    assert_eq!(gemm.signature(), matmul.signature());
    assert_eq!(gemm.root_signature(), matmul.root_signature());
    assert!(
        gemm.signature().contains("site=tract-linalg/"),
        "{}",
        gemm.signature()
    );
    // A site outside the library's crates (ndarray's index check) names no fault of its own.
    let mut onehot = at("OneHot", "I64");
    onehot.message = "panic: ndarray: index 3 is out of bounds for array of shape [3] (at \
                      /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/\
                      ndarray-0.16.1/src/arraytraits.rs:26)"
        .into();
    assert_eq!(onehot.panic_site(), None);
    // Nor does another library's.
    let mut ort = gemm.clone();
    ort.backends = vec!["ort".into()];
    assert_eq!(ort.panic_site(), None);
}
