use super::*;

/// A model not pinned on one node links each of its ops' pages, never a page named after
/// the list.
#[test]
fn the_spec_links_one_page_per_op() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let meta = crate::bundle::read_meta(&b).unwrap();
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[2] x) => (float[2] y) { a = Relu (x)\n y = Relu (a) }",
    )
    .unwrap();
    let v = spec_points(
        &meta,
        &meta.finding,
        &model,
        Some("Add, LayerNormalization, Add"),
    );
    let links: Vec<&String> = v.iter().filter(|l| l.contains("https://")).collect();
    assert_eq!(links.len(), 2, "{v:?}");
    assert!(links[0].ends_with("onnx__Add.html"), "{v:?}");
    assert!(links[1].ends_with("onnx__LayerNormalization.html"), "{v:?}");
}

/// A finding on one of ONNX Runtime's com.microsoft ops cites ORT's contrib-op page with the
/// op's definition, not an ONNX operator page that does not exist (or is another op: ONNX
/// has a Gelu of its own), and says what it rests on.
#[test]
fn a_contrib_op_cites_onnx_runtimes_definition() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let meta = crate::bundle::read_meta(&b).unwrap();
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
         g (float[2] x) => (float[2] y) { y = com.microsoft.QuickGelu (x) }",
    )
    .unwrap();
    let v = spec_points(
        &meta,
        &meta.finding,
        &model,
        Some("com.microsoft::QuickGelu"),
    );
    let cite = v.iter().find(|l| l.contains("https://")).expect("a link");
    assert!(
        cite.contains("ContribOperators.md#com.microsoft.QuickGelu"),
        "{v:?}"
    );
    assert!(
        cite.contains("The documentation says: \"Compute x * Sigmoid(alpha * x).\""),
        "{v:?}"
    );
    // The formula is ours, outside the quote.
    assert!(
        cite.contains("reference computes y = x * sigmoid(alpha * x)"),
        "{v:?}"
    );
    assert!(
        cite.contains("onnx.reference) has no kernel for it"),
        "{v:?}"
    );
    assert!(!cite.contains("No other library"), "{v:?}");
    assert!(!v.iter().any(|l| l.contains("onnx.ai")), "{v:?}");
}

/// A missing element type's title names the op of this model, not every op the campaign
/// met the type on (those are not in the model; the report lists them).
#[test]
fn a_gap_title_names_this_models_op() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let mut meta = crate::bundle::read_meta(&b).unwrap();
    meta.library = "tract".into();
    meta.ops_seen = [("Equal".to_string(), 2), ("EyeLike".to_string(), 1)].into();
    meta.ops_seen.insert("Pad".into(), 4);
    let mut f = meta.finding.clone();
    f.gap = Some("bool".into());
    let t = title(&meta, &f, Some("Pad"), &[], &[]);
    assert_eq!(
        t,
        "tract: no support for element type bool (Pad), which ONNX allows"
    );
    // TDim is tract's own type, not one ONNX allows.
    f.gap = Some("tdim".into());
    let t = title(&meta, &f, Some("Add"), &[], &[]);
    assert!(!t.contains("ONNX allows"), "{t}");
    assert_eq!(
        t,
        "tract: Add fails on an int64 value held as tract's dimension type TDim"
    );
    // Shown only with the Cast that made the value: the title names it.
    f.blame = Some(Blame::WithProducers {
        ops: vec!["Cast".into()],
    });
    let t = title(&meta, &f, Some("Sign"), &[], &[]);
    assert_eq!(
        t,
        "tract: Sign fails on an int64 value that Cast gives it, held as tract's dimension type TDim"
    );
}

/// A failed rewrite of tract is titled after the rewrite, not the op it was pulled over.
#[test]
fn a_failed_rewrite_is_titled_after_the_rewrite() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let mut meta = crate::bundle::read_meta(&b).unwrap();
    meta.library = "tract".into();
    meta.kind = Kind::Crash;
    let mut f = meta.finding.clone();
    f.kind = Kind::Crash;
    f.backends = vec!["tract".into()];
    f.message = "compile: running pass declutter: Pulling #86 \"s\" Downsample over #74 \"c\" \
                 Conv: Trying to substitute a 1,32,7,8,F32 by 1,32,8,8,F32 as output #0 of #86 \
                 \"s\" Downsample.\nModelPatch { context: [] }"
        .into();
    let t = title(&meta, &f, Some("Conv"), &[], &[]);
    assert!(
        t.starts_with(
            "tract: the rewrite pulling Downsample over Conv fails: Trying to substitute"
        ),
        "{t}"
    );
    assert!(!t.contains("ModelPatch"), "{t}");
}

/// On a minimized model the title keeps the attributes the bug needs and every fact that is
/// not an attribute (types, special values).
#[test]
fn incidental_attributes_stay_out_of_a_minimized_title() {
    let facts: Vec<String> = ["on f16", "NaN in 'x'", "alpha=0", "beta=0.5", "clip=3"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let kept = without_incidental(facts, &["clip".to_string()]);
    assert_eq!(kept, vec!["on f16", "NaN in 'x'", "clip=3"]);
}

/// A failure ONNX Runtime meets in a node one of its rewrites made is titled after the rewrite.
#[test]
fn a_failure_inside_an_ort_rewrite_is_titled_after_it() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let mut meta = crate::bundle::read_meta(&b).unwrap();
    meta.kind = Kind::Crash;
    let mut f = meta.finding.clone();
    f.kind = Kind::Crash;
    f.message = "load: This is an invalid model. Type Error: Type 'tensor(bool)' of input \
                 parameter (g) of operator (LayerNormalization) in node \
                 (/b/ln/Mul/LayerNormFusion/) is invalid."
        .into();
    f.blame = Some(Blame::InRewrite {
        rule: "LayerNormFusion".into(),
        ops: vec!["ReduceMean".into(), "Sub".into()],
    });
    let t = title(&meta, &f, Some("Mul"), &[], &[]);
    assert!(t.contains(": the rewrite LayerNormFusion "), "{t}");
    assert!(!t.starts_with("ONNX Runtime: Mul"), "{t}");
    // repro.py runs it again without that rewrite (a triage found its script without one).
    assert_eq!(
        super::pass_to_leave_out(&f, "onnxruntime").as_deref(),
        Some("LayerNormFusion")
    );
    assert_eq!(super::pass_to_leave_out(&f, "tract"), None);
}

/// burn's wrong values on the strided view a Transpose leaves are titled after that layout,
/// not after the node's attributes (a triage found "ReduceL1 after Transpose … (axes=…)"
/// where burn's abs reads the view in memory order).
#[test]
fn burn_on_a_strided_input_is_titled_after_the_layout() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let mut meta = crate::bundle::read_meta(&b).unwrap();
    meta.library = "burn".into();
    meta.backends = vec!["burn-ndarray".into()];
    let mut f = meta.finding.clone();
    f.kind = Kind::Inconsistency;
    f.symptom = "values".into();
    f.backends = vec!["burn-ndarray".into()];
    f.blame = Some(Blame::WithProducers {
        ops: vec!["Transpose".into()],
    });
    assert!(f.on_strided_input());
    let t = title(
        &meta,
        &f,
        Some("ReduceL1"),
        &["axes=[0, -2, 3]".to_string()],
        &[],
    );
    assert_eq!(
        t,
        "burn: ReduceL1 after Transpose gives wrong values on the memory layout Transpose \
         leaves (right on a fresh tensor of the same values)"
    );
    // With the burn calls the interpreter runs the op with, the title names them (round 13:
    // the fault is burn's abs, not a ReduceL1 burn has).
    let calls = ["abs".to_string(), "sum_dim".to_string()];
    let t = title(&meta, &f, Some("ReduceL1"), &[], &calls);
    assert!(
        t.starts_with("burn: ReduceL1 (burn's abs, sum_dim) after Transpose"),
        "{t}"
    );
    // The summary does not say the attribute is what it needs (round 13: "The attribute axes
    // is what it needs" beside the Needs line naming the layout).
    meta.trigger = vec!["axes".into()];
    let s = super::summary(&meta, &f, &Some("ReduceL1".into()), &[]);
    assert!(!s.contains("is what it needs"), "{s}");
    assert!(s.contains("strided layout its producers leave"), "{s}");
    f.blame = None;
    assert!(!f.on_strided_input());
    // Elsewhere the summary says what the trigger search checked, no more (round 13: "pads is
    // what it needs: without it, tract is right", where removing pads left an empty Slice).
    let s = super::summary(&meta, &f, &Some("ReduceL1".into()), &[]);
    assert!(
        s.contains(
            "With the attribute axes removed (its default), the rest of this model unchanged"
        ),
        "{s}"
    );
    assert!(!s.contains("is what it needs"), "{s}");
    // Judged against a stand-in for the reference, the summary names it (round 13: "differ
    // from ONNX's definition" where the expected values were ONNX Runtime's unoptimized ones).
    f.ground = Some("ort-noopt".into());
    let s = super::summary(&meta, &f, &Some("ReduceL1".into()), &[]);
    assert!(s.contains("differ from ort-noopt's run"), "{s}");
    assert!(!s.contains("ONNX's definition"), "{s}");
}

/// Wrong values that one rewrite of the library makes are titled after that rewrite and the
/// part it rewrote, not after the node they show at.
#[test]
fn wrong_values_a_rewrite_makes_are_titled_after_it() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let meta = crate::bundle::read_meta(&b).unwrap();
    let mut f = meta.finding.clone();
    f.kind = Kind::Inconsistency;
    f.blame = Some(Blame::Rewrite {
        library: "tract".into(),
        rule: "declutter Downsample".into(),
        ops: vec!["Softmax".into(), "Conv".into()],
    });
    let t = title(&meta, &f, Some("Conv"), &[], &[]);
    assert!(
        t.contains(": the rewrite declutter Downsample of Softmax → Conv "),
        "{t}"
    );
    assert!(!t.contains(": Conv "), "{t}");
}

/// A title names what may be the trigger, not the model's element type or the kind of its
/// indices (a triage found "(on f16)" and "fractional float indices" on bugs that have
/// neither as a cause).
#[test]
fn a_title_leaves_out_unchecked_circumstances() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let meta = crate::bundle::read_meta(&b).unwrap();
    let f = meta.finding.clone();
    let facts: Vec<String> = [
        "on f16",
        "fractional float indices in 'x'",
        "NaN in 'y'",
        "axis=1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let t = title(&meta, &f, Some("OneHot"), &facts, &[]);
    assert!(t.ends_with("(NaN in 'y', axis=1)"), "{t}");
    // Nor does the summary claim them ("It shows with on f16").
    let s = summary(&meta, &f, &Some("OneHot".into()), &facts);
    assert!(s.contains("It shows with NaN in 'y', axis=1."), "{s}");
    let s = summary(&meta, &f, &Some("OneHot".into()), &facts[..2]);
    assert!(!s.contains("It shows with"), "{s}");
}

/// ONNX Runtime's Resize refusal is longer than a key phrase: the title ends at a whole word
/// with an ellipsis, not inside one ("... anti-aliasing is ").
#[test]
fn a_crash_title_cut_at_the_phrase_limit_ends_at_a_whole_word() {
    let msg = "compile: Exception during initialization: /onnxruntime_src/onnxruntime/core/\
               providers/cpu/tensor/upsamplebase.h:273 onnxruntime::UpsampleBase::UpsampleBase\
               (const KernelInfoType&) [with KernelInfoType = onnxruntime::OpKernelInfo] \
               exclude_outside can be set to 1 when (1) mode is CUBIC, or (2) mode is LINEAR \
               when anti-aliasing is enabled. Current mode is set to linear";
    let k = key_phrase(msg).unwrap();
    assert_eq!(k.chars().count(), 100, "{k}");
    let t = whole_words(&k);
    assert!(t.ends_with("anti-aliasing is …"), "{t}");
    assert_eq!(whole_words("refuses it"), "refuses it");
}

/// A crash found on a part of a model whose whole run stopped with another error says so
/// (round 13: three tract bundles whose original, in tract's Python package, stopped first at
/// a Compress it cannot type, float zero points of a MatMulNBits, an empty reversed Slice).
#[test]
fn a_crash_found_on_a_part_says_the_whole_model_stopped_elsewhere() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let mut meta = crate::bundle::read_meta(&b).unwrap();
    let mut f = meta.finding.clone();
    f.kind = Kind::Crash;
    f.backends = vec!["tract".into()];
    f.message = "compile: Pulling #22 \"s\" Downsample over #36 \"f\" Reshape: Invalid axis".into();
    meta.runs = vec![crate::bundle::meta::RunLine {
        backend: "tract".into(),
        version: "0.23.9".into(),
        status: "error".into(),
        detail: "compile: Translating node #39 \"c\" Compress ToTypedTranslator: Node #39 \"c\" \
                 Compress can not be typed"
            .into(),
        run_ms: 1.0,
        peak_rss: 0,
        step: None,
    }];
    let lines = facts_lines(&meta, &f, &Some("Slice".into()));
    let original = lines.iter().find(|(k, _)| k == "Original model");
    assert!(
        original.is_some_and(|(_, v)| v.contains("Compress can not be typed")),
        "{lines:?}"
    );
    // The same failure in the whole run: nothing to say.
    meta.runs[0].detail = f.message.clone();
    let lines = facts_lines(&meta, &f, &Some("Slice".into()));
    assert!(
        !lines.iter().any(|(k, _)| k == "Original model"),
        "{lines:?}"
    );
}

#[test]
fn long_value_lists_leave_crash_titles() {
    // Round 13: "tract: com.microsoft::RotaryEmbedding fails: [1,1,broadcast((broadcast((3), …".
    assert_eq!(
        super::title::short_lists(
            "Incompatible reshape for shape [Val(1), Val(8), Broadcast([Val(2), Val(8)])] and Reshape(2, [8,4], [32])"
        ),
        "Incompatible reshape for shape […] and Reshape(2, [8,4], [32])"
    );
    assert_eq!(
        super::title::short_lists("index [0, 2] of [3"),
        "index [0, 2] of [3"
    );
}

/// A hang's title says where the library was stopped (round 13: tract's hang at compile read
/// as one at run).
#[test]
fn a_hang_title_says_where_the_library_was_stopped() {
    let t = tempfile::tempdir().unwrap();
    let (b, _, _) = crate::bundle::sample(t.path());
    let mut meta = crate::bundle::read_meta(&b).unwrap();
    meta.kind = Kind::Hang;
    let mut f = meta.finding.clone();
    f.kind = Kind::Hang;
    f.backends = vec!["tract".into()];
    f.message = "no answer within 2000 ms".into();
    let line = |step: Option<&str>| crate::bundle::meta::RunLine {
        backend: "tract".into(),
        version: "0.23.9".into(),
        status: "timeout".into(),
        detail: "no answer within 2000 ms".into(),
        run_ms: 2000.0,
        peak_rss: 0,
        step: step.map(str::to_string),
    };
    meta.runs = vec![line(None)];
    meta.minimized_runs = vec![];
    let plain = title(&meta, &f, Some("Loop"), &[], &[]);
    assert!(plain.ends_with("does not finish"), "{plain}");
    meta.minimized_runs = vec![line(Some("while preparing the model"))];
    let t = title(&meta, &f, Some("Loop"), &[], &[]);
    assert!(
        t.contains("does not finish while preparing the model"),
        "{t}"
    );
    // A meta.json written before the step was recorded reads as none.
    let old: crate::bundle::meta::RunLine = serde_json::from_str(
        r#"{"backend":"tract","version":"0","status":"timeout","detail":"x","run_ms":1.0,"peak_rss":0}"#,
    )
    .unwrap();
    assert_eq!(old.step, None);
}
