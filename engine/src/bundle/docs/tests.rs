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
    let t = title(&meta, &f, Some("Pad"), &[]);
    assert_eq!(
        t,
        "tract: no support for element type bool (Pad), which ONNX allows"
    );
    // TDim is tract's own type, not one ONNX allows.
    f.gap = Some("tdim".into());
    let t = title(&meta, &f, Some("Add"), &[]);
    assert!(!t.contains("ONNX allows"), "{t}");
    assert!(t.contains("TDim") && t.contains("(Add)"), "{t}");
}
