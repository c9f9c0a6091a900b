//! Admission never changes what the user gave without a record: seeds run as given, byte for
//! byte (seed findings ship the user's file), and every model the campaign keeps under
//! `seeds/` is either a seed at its admitted shapes or a derived seed recorded with how it
//! was made. `check_records` is shared with the real-model test.
use crate::common::mg;
use mutagraph_ir::Model;
use serde_json::Value;
use std::path::Path;

fn json(p: &Path) -> Value {
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_slice(&bytes).unwrap()
}

fn ok(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The declared shape of each real input of `m` (a dim without a size is -1).
fn input_shapes(m: &Model) -> Vec<(String, Vec<i64>)> {
    m.graph
        .real_inputs()
        .iter()
        .map(|v| {
            let ty = v
                .r#type
                .as_ref()
                .map(mutagraph_ir::ValueType::from_proto)
                .unwrap();
            let dims = ty
                .tensor()
                .and_then(|t| t.shape.clone())
                .unwrap_or_default()
                .iter()
                .map(|d| match d {
                    mutagraph_ir::Dim::Known(k) => *k,
                    _ => -1,
                })
                .collect();
            (v.name.clone().unwrap_or_default(), dims)
        })
        .collect()
}

/// Every model under `out/seeds/` is accounted for in `admission.json`: an admitted seed's file
/// holds the user's model (as many nodes, the same inputs) at the shapes it was admitted at;
/// any other file is a derived seed the record keeps, with as many nodes as recorded and a
/// description. `originals` maps each seed's name to the user's model. Returns the records.
pub fn check_records(out: &Path, originals: &[(String, Model)], stderr: &str) -> Value {
    let adm = json(&out.join("admission.json"));
    let admitted = adm["admitted"].as_object().unwrap();
    let derived = adm["derived"].as_array().unwrap();
    let mut accounted = Vec::new();
    for (name, user) in originals {
        let Some(a) = admitted.get(name) else {
            assert!(adm["refused"][name].is_string(), "{name}: neither: {adm}");
            continue;
        };
        // Shapes, why, each backend's outcome, printed.
        assert!(a["shapes"].as_object().is_some(), "{name}: {a}");
        assert!(a["outcomes"].as_object().unwrap().len() >= 2, "{name}: {a}");
        assert!(a["work"].as_u64().unwrap() > 0, "{name}: {a}");
        assert!(
            stderr.contains(&format!("seed {name}: admitted as given at")),
            "{name} not printed: {stderr}"
        );
        let stem = Path::new(name).file_stem().unwrap().to_string_lossy();
        let file = out.join("seeds").join(format!("{stem}.onnx"));
        let kept = Model::load(&file).unwrap();
        assert_eq!(
            kept.graph.node_count(),
            user.graph.node_count(),
            "{name}: seeds/{stem}.onnx is not the user's model"
        );
        for (input, dims) in input_shapes(&kept) {
            let want: Vec<i64> = a["shapes"][&input]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: {input} has no admitted shape: {a}"))
                .iter()
                .map(|d| d.as_i64().unwrap())
                .collect();
            assert_eq!(
                dims, want,
                "{name}: {input} kept at other shapes than admitted"
            );
        }
        accounted.push(format!("{stem}.onnx"));
        for d in derived.iter().filter(|d| d["from"] == name.as_str()) {
            let dn = d["name"].as_str().unwrap();
            assert!(!d["how"].as_str().unwrap().is_empty(), "{d}");
            assert!(
                stderr.contains(&format!("derived {dn} ")),
                "{dn} not printed: {stderr}"
            );
            if d["kept"] == true {
                let f = d["file"].as_str().unwrap();
                let m = Model::load(out.join("seeds").join(f)).unwrap();
                assert_eq!(m.graph.node_count() as u64, d["nodes"][1], "{d}");
                accounted.push(f.to_string());
            } else {
                assert!(d["not_used"].is_string(), "{d}");
            }
        }
    }
    for e in std::fs::read_dir(out.join("seeds")).unwrap() {
        let f = e.unwrap().file_name().to_string_lossy().into_owned();
        if f.ends_with(".onnx") {
            assert!(accounted.contains(&f), "seeds/{f} has no record: {adm}");
        }
    }
    adm
}

/// `mutagraph campaign --seeds SEEDS --out OUT` with `args` after them; its standard error
/// (the run must succeed).
fn campaign(seeds: &str, out: &Path, args: &[&str]) -> String {
    let mut all = vec!["campaign", "--seeds", seeds, "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    ok(&mg(&all))
}

#[test]
fn zoo_seeds_are_admitted_as_given_and_their_reductions_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c");
    let err = campaign("zoo", &out, &["--iterations", "4", "--no-minimize"]);
    let originals: Vec<(String, Model)> = mutagraph_mutators::zoo::all()
        .into_iter()
        .map(|(n, m)| (n.to_string(), m))
        .collect();
    let adm = check_records(&out, &originals, &err);
    // The reductions rewire the graph: each is a derived seed with the ops it dropped.
    let reduced: Vec<&Value> = adm["derived"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["name"].as_str().unwrap().ends_with("#reduced"))
        .collect();
    assert!(reduced.len() >= 8, "{adm}");
    for d in reduced {
        assert!(d["nodes"][1].as_u64() < d["nodes"][0].as_u64(), "{d}");
        assert!(!d["dropped"].as_object().unwrap().is_empty(), "{d}");
    }
}

#[test]
fn a_seed_finding_ships_the_users_file_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    ok(&mg(&["zoo", "--out", dir.path().to_str().unwrap()]));
    // The user's file with a field ONNX does not know (field 99, varint 1): parsers skip it,
    // a re-export drops it, so only the file itself has these bytes.
    let user = dir.path().join("resnet_basic.onnx");
    let mut bytes = std::fs::read(&user).unwrap();
    bytes.extend_from_slice(&[0x98, 0x06, 0x01]);
    std::fs::write(&user, &bytes).unwrap();
    let out = dir.path().join("c");
    campaign(
        user.to_str().unwrap(),
        &out,
        &[
            "--backends",
            "reference,planted-conv-pad",
            "--iterations",
            "2",
            "--no-minimize",
            "--quiet",
        ],
    );
    let seed_bundles: Vec<_> = std::fs::read_dir(out.join("findings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|b| json(&b.join("meta.json"))["iteration"] == 0)
        .collect();
    assert_eq!(seed_bundles.len(), 1, "{seed_bundles:?}");
    let b = &seed_bundles[0];
    assert_eq!(json(&b.join("meta.json"))["seed"], user.to_str().unwrap());
    assert!(
        std::fs::read(b.join("original.onnx")).unwrap() == bytes,
        "original.onnx is not the user's file"
    );
}

#[test]
fn a_seed_with_an_op_the_reference_lacks_is_mutated_and_judged_by_peers() {
    // ONNX Runtime runs com.microsoft's Inverse; the reference does not have it.
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    std::fs::write(
        seeds.join("inverse_ms.onnx"),
        mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (float[4, 4] x) => (float[4, 4] y) {\n\
               h = com.microsoft.Inverse (x)\n\
               m = Mul (h, x)\n\
               y = Tanh (m)\n\
             }",
        )
        .unwrap()
        .to_bytes(),
    )
    .unwrap();
    let out = dir.path().join("c");
    let err = campaign(
        seeds.to_str().unwrap(),
        &out,
        &["--iterations", "30", "--no-minimize"],
    );
    let adm = json(&out.join("admission.json"));
    let (_, a) = adm["admitted"].as_object().unwrap().iter().next().unwrap();
    let why = a["reference_failed"].as_str().unwrap_or_default();
    assert!(why.contains("com.microsoft::Inverse"), "{a}");
    assert_eq!(a["mutated"], true, "{a}");
    assert!(err.contains("judged by peers"), "{err}");
    // The seed and the mutants that keep the op are judged against ONNX Runtime without its
    // optimizer.
    let state = json(&out.join("state.json"));
    assert!(
        state["triage"]["by_peers"].as_u64().unwrap() >= 1,
        "{}",
        state["triage"]
    );
    // A filed finding on a model that keeps the op says it rests on the weaker oracle.
    for e in std::fs::read_dir(out.join("findings")).unwrap() {
        let d = e.unwrap().path();
        let meta = json(&d.join("meta.json"));
        let model = std::fs::read(d.join("original.onnx")).unwrap();
        let keeps = model.windows(13).any(|w| w == b"com.microsoft");
        if keeps {
            assert!(meta["finding"]["ground"].is_string(), "{}", d.display());
            let report = std::fs::read_to_string(d.join("REPORT.md")).unwrap();
            assert!(report.contains("weaker oracle"), "{}", d.display());
        }
    }
}

#[test]
fn a_seed_with_dynamic_quantize_lstm_is_admitted_and_runs_on_onnx_runtime() {
    // A user's production model carried com.microsoft's DynamicQuantizeLSTM, which admission
    // refused while the reference lacked it: the reference now runs it, and so does ORT.
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    let w = "{-127, -90, -53, -16, 21, 58, 95, -123, -86, -49, -12, 25, 62, 99, -119, -82}";
    let text = format!(
        "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
         g (float[3, 1, 2] x) => (float[3, 1, 1, 2] y)\n\
         <int8[1, 2, 8] w = {w}, int8[1, 2, 8] r = {w}, float[1] s = {{0.01}}, \
         int8[1] z = {{0}}>\n\
         {{\n\
           h = com.microsoft.DynamicQuantizeLSTM <hidden_size = 2> \
         (x, w, r, \"\", \"\", \"\", \"\", \"\", s, z, s, z)\n\
           y = Tanh (h)\n\
         }}"
    );
    let model = mutagraph_ir::text::parse_model(&text).unwrap();
    let file = seeds.join("dq_lstm.onnx");
    std::fs::write(&file, model.to_bytes()).unwrap();
    let out = dir.path().join("c");
    let err = campaign(
        seeds.to_str().unwrap(),
        &out,
        &[
            "--backends",
            "reference,ort",
            "--iterations",
            "4",
            "--no-minimize",
        ],
    );
    let name = file.to_str().unwrap().to_string();
    let adm = check_records(&out, &[(name, model)], &err);
    assert!(adm["refused"].as_object().unwrap().is_empty(), "{adm}");
    let (_, a) = adm["admitted"].as_object().unwrap().iter().next().unwrap();
    assert!(a["reference_failed"].is_null(), "{a}");
    assert_eq!(a["outcomes"]["ort"], "ok", "{a}");
    assert_eq!(a["mutated"], true, "{a}");
}

#[test]
fn a_model_with_onnx_runtimes_own_default_domain_schemas_is_admitted_with_a_warning() {
    // A user's model written by onnxruntime.transformers: LayerNormalization and
    // SimplifiedLayerNormalization in the default domain at opset 13, which ONNX does not
    // define there (onnx.checker refuses it) and ONNX Runtime runs. It was refused; it is now
    // admitted with a warning naming each node, the reference runs it and agrees with ORT.
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 13]>\n\
         g (float[2, 4] x) => (float[2, 4] z)\n\
         <float[4] s = {1, 2, 3, 4}, float[4] b = {0, 0, 1, 1}>\n\
         {\n\
           y = LayerNormalization (x, s, b)\n\
           z = SimplifiedLayerNormalization (y, s)\n\
         }",
    )
    .unwrap();
    let file = seeds.join("ln13.onnx");
    std::fs::write(&file, model.to_bytes()).unwrap();
    let o = mg(&["run", file.to_str().unwrap(), "--json", "--no-fail"]);
    let err = ok(&o);
    for op in ["LayerNormalization", "SimplifiedLayerNormalization"] {
        assert!(
            err.contains(&format!(
                "node {op}#0: {op} is ONNX Runtime's own schema in the default domain"
            )) || err.contains(&format!(
                "node {op}#1: {op} is ONNX Runtime's own schema in the default domain"
            )),
            "{err}"
        );
    }
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = run["runs"].as_array().unwrap();
    let by = |b: &str| runs.iter().find(|r| r["backend"] == b).unwrap();
    for b in ["reference", "ort"] {
        assert_eq!(by(b)["status"], "ok", "{b}: {}", by(b));
        assert_eq!(by(b)["vs_reference"]["agrees"], true, "{b}: {}", by(b));
    }
    // burn has no SimplifiedLayerNormalization: ORT's private schema is unsupported there,
    // which is burn's declared limit, not a finding.
    assert_eq!(
        by("burn-ndarray")["status"],
        "unsupported",
        "{}",
        by("burn-ndarray")
    );
    // A campaign admits it as given, runs it, and files nothing for burn's refusal.
    let out = dir.path().join("c");
    let err = campaign(
        seeds.to_str().unwrap(),
        &out,
        &["--iterations", "4", "--no-minimize"],
    );
    assert!(err.contains("is ONNX Runtime's own schema"), "{err}");
    let name = file.to_str().unwrap().to_string();
    let adm = check_records(&out, &[(name, model)], &err);
    let (_, a) = adm["admitted"].as_object().unwrap().iter().next().unwrap();
    assert!(a["reference_failed"].is_null(), "{a}");
    assert_eq!(a["outcomes"]["ort"], "ok", "{a}");
    assert_eq!(a["outcomes"]["tract"], "ok", "{a}");
    let burn = a["outcomes"]["burn-ndarray"].as_str().unwrap();
    assert!(burn.starts_with("unsupported"), "{a}");
    assert_eq!(a["mutated"], true, "{a}");
    for e in std::fs::read_dir(out.join("findings"))
        .into_iter()
        .flatten()
    {
        let meta = std::fs::read_to_string(e.unwrap().path().join("meta.json")).unwrap();
        assert!(!meta.contains("op SimplifiedLayerNormalization"), "{meta}");
    }
}
