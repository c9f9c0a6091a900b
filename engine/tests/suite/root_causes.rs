//! One bundle per root cause: a bug that shows on several ops and with any other attribute
//! (the planted backend ignores `clip` in RNN, GRU and LSTM, as tract does) is filed under
//! different signatures first, then merged once minimization finds the attribute it needs.
use mutagraph_backends::value::{Data, HostTensor};
use mutagraph_ir::DType;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn json(p: &Path) -> Value {
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_slice(&bytes).unwrap()
}

/// A GRU (reverse, clip 0.1) and an LSTM (clip 0.1) seed, written with the `onnx` package.
fn seeds(dir: &Path) {
    let script = r#"
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
rng = np.random.default_rng(1)
def rec(op, gates, attrs, path):
    H, I, S = 3, 4, 3
    W = nh.from_array((rng.standard_normal((1, gates * H, I)) * 4).astype(np.float32), 'W')
    R = nh.from_array((rng.standard_normal((1, gates * H, H)) * 4).astype(np.float32), 'R')
    outs = ['y', 'yh'] + (['yc'] if op == 'LSTM' else [])
    n = h.make_node(op, ['x', 'W', 'R'], outs, hidden_size=H, **attrs)
    r = h.make_node('Relu', ['y'], ['out'])
    g = h.make_graph([n, r], 'g', [h.make_tensor_value_info('x', T.FLOAT, [S, 1, I])],
                     [h.make_tensor_value_info('out', T.FLOAT, None)], initializer=[W, R])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
rec('GRU', 3, dict(clip=0.1, direction='reverse'), sys.argv[1] + '/gru.onnx')
rec('LSTM', 4, dict(clip=0.1), sys.argv[1] + '/lstm.onnx')
"#;
    crate::common::python_writes(script, dir, "the seeds");
}

#[test]
fn one_bug_in_three_ops_is_one_bundle() {
    let dir = tempfile::tempdir().unwrap();
    seeds(dir.path());
    let out = dir.path().join("c");
    let seeds = format!(
        "{},{}",
        dir.path().join("gru.onnx").display(),
        dir.path().join("lstm.onnx").display()
    );
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["campaign", "--seeds", &seeds, "--out"])
        .arg(&out)
        .args([
            "--seed",
            "3",
            "--iterations",
            "300",
            "--backends",
            "reference,planted-rnn-clip",
            "--minimize-grace",
            "600s",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stats = json(&out.join("stats.json"));
    let list = |d: &str| -> Vec<std::path::PathBuf> {
        match std::fs::read_dir(out.join(d)) {
            Ok(r) => r.map(|e| e.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        }
    };
    let filed = list("findings");
    let merged = list("merged");
    assert_eq!(
        filed.len(),
        1,
        "one root cause, one bundle: {filed:?}\n{stats}"
    );
    assert!(
        !merged.is_empty(),
        "the GRU and the LSTM findings were first filed apart: {stats}"
    );
    let meta = json(&filed[0].join("meta.json"));
    assert_eq!(meta["trigger"], serde_json::json!(["clip"]), "{meta}");
    assert_eq!(
        meta["root_signature"],
        "inconsistency|planted-rnn-clip|kernel|values|RNN/GRU/LSTM[clip]"
    );
    assert_eq!(
        meta["aliases"].as_array().map(Vec::len),
        Some(merged.len()),
        "{meta}"
    );
    // Every hit counts in the one bundle, the merged ones' included.
    assert_eq!(meta["hits"], stats["findings"], "{meta}\n{stats}");
    assert_eq!(stats["unique_findings"], 1);
    let ops = meta["ops_seen"].as_object().unwrap();
    assert!(
        ops.contains_key("GRU") && ops.contains_key("LSTM"),
        "{ops:?}"
    );
    for m in &merged {
        let mm = json(&m.join("meta.json"));
        assert_eq!(mm["merged_into"], meta["id"], "{mm}");
    }
    let report = std::fs::read_to_string(filed[0].join("REPORT.md")).unwrap();
    assert!(report.contains("clip"), "{report}");
}

/// The trigger search removes a recurrent node's `layout` = 1 keeping what the model computes
/// (Transposes around the node, whose output a Transpose now gives): the bug stays on the
/// node, so `layout` is no trigger; `clip` is.
#[test]
fn a_layout_kept_by_transposes_is_no_trigger() {
    let (w, r) = gru_weights(1, 1.0);
    let src = format!(
        "g (float[1,3,4] x) => (float[1,3,1,3] y) <float[1,9,4] w = {{{w}}}, \
         float[1,9,3] r = {{{r}}}> {{ y, yh = GRU <hidden_size = 3, clip = 0.1, layout = 1> \
         (x, w, r) }}"
    );
    let x = (0..12).map(|k| (k as f32 - 5.0) * 0.7).collect();
    let x = HostTensor::new(vec![1, 3, 4], Data::F32(x));
    let trigger = trigger_of(&src, x, &["reference", "planted-rnn-clip"]);
    assert_eq!(trigger, vec!["clip".to_string()]);
}

/// tract 0.23 ignores both `clip` and `activations` of a GRU: on a node with both, removing
/// either leaves the other's bug, so neither looked needed and the finding had no trigger (one
/// key per op, a bundle beside the `[clip]` and `[activations]` ones). `clip` removed keeps the
/// bug and stays removed; `activations` is then the trigger.
#[test]
fn an_attribute_whose_removal_keeps_the_bug_stays_removed_for_the_next() {
    let (w, r) = gru_weights(1, 1.0);
    let src = format!(
        "g (float[3,1,4] x) => (float[3,1,1,3] y) <float[1,9,4] w = {{{w}}}, \
         float[1,9,3] r = {{{r}}}> {{ y, yh = GRU <hidden_size = 3, clip = 0.1, \
         activations = [\"HardSigmoid\", \"Tanh\"]> (x, w, r) }}"
    );
    let x = (0..12).map(|k| (k as f32 - 5.0) * 0.7).collect();
    let x = HostTensor::new(vec![3, 1, 4], Data::F32(x));
    let trigger = trigger_of(&src, x, &["reference", "tract"]);
    assert_eq!(trigger, vec!["activations".to_string()]);
}

/// A bidirectional recurrent node cannot lose `direction` alone (its weights hold two
/// directions): each direction is run alone, its weights cut to its half. tract 0.23 fails on
/// a bidirectional GRU with `layout` = 1 and runs either direction alone with it: the trigger
/// names both (the report said "Needs: layout=1" alone).
#[test]
fn a_bug_neither_direction_shows_alone_needs_both() {
    let (w, r) = gru_weights(2, 0.3);
    let src = format!(
        "g (float[1,3,4] x) => (float[1,3,2,3] y) <float[2,9,4] w = {{{w}}}, \
         float[2,9,3] r = {{{r}}}> {{ y, yh = GRU <hidden_size = 3, layout = 1, \
         direction = \"bidirectional\"> (x, w, r) }}"
    );
    let x = (0..12).map(|k| (k as f32 - 5.0) * 0.3).collect();
    let x = HostTensor::new(vec![1, 3, 4], Data::F32(x));
    let trigger = trigger_of(&src, x, &["reference", "tract"]);
    assert_eq!(
        trigger,
        vec![
            "layout=1".to_string(),
            "direction=\"bidirectional\"".to_string()
        ]
    );
}

/// The W and R of a GRU of hidden size 3 over inputs of 4, for `directions`, as text values:
/// small integers (times `scale`) cycling through 7 and 5 values.
fn gru_weights(directions: usize, scale: f32) -> (String, String) {
    let values = |n: usize, m: usize| {
        (0..n)
            .map(|k| format!("{}", ((k % m) as f32 - (m / 2) as f32) * scale))
            .collect::<Vec<_>>()
            .join(", ")
    };
    (values(36 * directions, 7), values(27 * directions, 5))
}

/// The trigger attributes of the one finding `backends` show on `src` (a one-node model whose
/// input `x` takes `x`).
fn trigger_of(src: &str, x: HostTensor, backends: &[&str]) -> Vec<String> {
    use mutagraph_oracles::triage::trigger::trigger_attributes;
    with_finding(src, x, backends, |rep, model, check| {
        let found = check.found.as_ref().unwrap().finding.clone();
        trigger_attributes(rep, model, &check.inputs, &found)
    })
}

/// `then` of a reproducer of the one finding `backends` show on `src` (input `x` takes `x`),
/// the model and its check.
fn with_finding<T>(
    src: &str,
    x: HostTensor,
    backends: &[&str],
    then: impl FnOnce(
        &mut mutagraph_oracles::triage::Reproducer,
        &mutagraph_ir::Model,
        mutagraph_oracles::triage::reproduce::Check,
    ) -> T,
) -> T {
    use mutagraph_backends::compare::Tolerance;
    use mutagraph_backends::value::Value;
    use mutagraph_backends::worker::{Pool, PoolOptions};
    use mutagraph_oracles::triage::{Reproducer, ValueMap};
    use mutagraph_oracles::{Triage, Verdict};

    let model = mutagraph_ir::Model::from_bytes(&crate::common::text_model(src)).unwrap();
    let inputs = vec![("x".to_string(), Value::Tensor(x))];
    let backends: Vec<String> = backends.iter().map(|b| b.to_string()).collect();
    let mut pool = Pool::new(PoolOptions::new(std::path::PathBuf::from(env!(
        "CARGO_BIN_EXE_mutagraph"
    ))));
    let mut rep = Reproducer::new(
        &mut pool,
        Triage::new(&backends, Tolerance::APPROXIMATE),
        String::new(),
        ValueMap::new(&inputs, None, 0),
    );
    let check = rep.check_with(&model, inputs.clone()).unwrap();
    let found: Vec<_> = check
        .all
        .into_iter()
        .filter(|t| t.verdict == Verdict::Report)
        .collect();
    let [t] = found.as_slice() else {
        panic!("one finding: {found:?}")
    };
    // the reproducer's target: the finding's signature
    rep.target = t.finding.signature();
    let check = rep.check_with(&model, inputs).unwrap();
    assert!(check.found.is_some(), "{}", rep.target);
    then(&mut rep, &model, check)
}

/// A value the bug does not need is made 0 in the minimized inputs, one the bug needs stays:
/// tract 0.23 has no f64 IsNaN kernel (a NaN in its input is beside the point, and the title
/// said "NaN in 'x'"), and its Tanh maps NaN to -1 (the NaN is the bug).
#[test]
fn a_nan_the_bug_does_not_need_leaves_the_minimized_inputs() {
    use mutagraph_oracles::triage::trigger::without_unneeded_nonfinite;
    let nan_in =
        |dtype: DType| HostTensor::from_f64s(dtype, vec![3], &[1.0, f64::NAN, -2.0]).unwrap();
    let src = "g (double[3] x) => (bool[3] y) { y = IsNaN (x) }";
    let kept = with_finding(
        src,
        nan_in(DType::F64),
        &["reference", "tract"],
        without_unneeded_nonfinite,
    );
    let x = kept.inputs[0].1.tensor().unwrap();
    assert_eq!(x.nan_inf_counts(), (0, 0), "{x:?}");
    assert!(kept.found.is_some());
    let src = "g (float[3] x) => (float[3] y) { y = Tanh (x) }";
    let kept = with_finding(
        src,
        nan_in(DType::F32),
        &["reference", "tract"],
        without_unneeded_nonfinite,
    );
    assert_eq!(kept.inputs[0].1.tensor().unwrap().nan_inf_counts(), (1, 0));
}

/// ONNX Runtime 1.31.1 returns a Resize's input unchanged where every scale is 1, ignoring the
/// roi of `tf_crop_and_resize` (and the half-pixel shift of `tf_half_pixel_for_nn`), whatever
/// the mode: a choice the default happens to hide it on is no trigger when another value shows
/// it, so the bug needs no attribute of the node.
#[test]
fn a_choice_another_value_shows_the_bug_with_is_no_trigger() {
    let src = "g (float[2,1] x) => (float[2,1] y) <float[4] roi = {0.5, 0.5, 0.5, 0.5}, \
               float[2] sc = {1, 1}> { y = Resize <mode = \"linear\", \
               coordinate_transformation_mode = \"tf_crop_and_resize\", \
               extrapolation_value = 2.0> (x, roi, sc) }";
    let x = HostTensor::new(vec![2, 1], Data::F32(vec![-0.24337365, -0.0891192]));
    let trigger = trigger_of(src, x, &["reference", "ort"]);
    assert_eq!(trigger, Vec::<String>::new());
}

/// ONNX Runtime 1.31.1 (the version CI installs) dies with SIGSEGV in its NchwcTransformer
/// creating a session for a float16 Transpose (perm 1,0,2) into a MatMul on a constant weight
/// (known upstream: microsoft/onnxruntime#28392). No node runs, so no node is to blame: the
/// place is the pass the verbose log says the process was applying, the bundle is named after
/// it, and its `repro.py` (with nothing stored but the model and inputs) runs the model again
/// without the pass to show that the pass is the cause.
#[test]
fn a_process_that_dies_in_an_optimizer_pass_is_filed_on_that_pass() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
W = nh.from_array(np.ones((4, 24), np.float16), 'W')
g = h.make_graph([h.make_node('Transpose', ['x'], ['t'], perm=[1, 0, 2]),
                  h.make_node('MatMul', ['t', 'W'], ['y'])], 'g',
                 [h.make_tensor_value_info('x', T.FLOAT16, [1, 1, 4])],
                 [h.make_tensor_value_info('y', T.FLOAT16, [1, 1, 24])], initializer=[W])
m = h.make_model(g, opset_imports=[h.make_opsetid('', 15)])
m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
onnx.save(m, sys.argv[1] + '/transpose_matmul.onnx')
"#;
    crate::common::python_writes(script, dir.path(), "the seed");
    let seed = dir.path().join("transpose_matmul.onnx");
    let out = dir.path().join("c");
    let o = Command::new(env!("CARGO_BIN_EXE_mutagraph"))
        .args(["campaign", "--seeds"])
        .arg(&seed)
        .arg("--out")
        .arg(&out)
        .args(["--seed", "1", "--iterations", "1", "--quiet"])
        .args(["--backends", "reference,ort,tract"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let filed: Vec<_> = std::fs::read_dir(out.join("findings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("meta.json").exists())
        .collect();
    let bundle = filed
        .iter()
        .find(|p| p.to_string_lossy().contains("crash-ort-nchwctransformer-"))
        .unwrap_or_else(|| panic!("no bundle named after the pass: {filed:?}"));
    let meta = json(&bundle.join("meta.json"));
    let sig = meta["signature"].as_str().unwrap();
    assert!(sig.contains("|pass=NchwcTransformer|"), "{sig}");
    assert_eq!(meta["layer"], "optimizer", "{meta}");
    assert!(meta["finding"]["location"].is_null(), "{meta}");
    let report = std::fs::read_to_string(bundle.join("REPORT.md")).unwrap();
    assert!(
        report.contains(
            "optimizer pass NchwcTransformer crashes on a model of Transpose, MatMul: signal 11"
        ),
        "{report}"
    );
    for e in std::fs::read_dir(bundle).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.contains("expected") || name.contains("actual") || name == "outputs" {
            if p.is_dir() {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                std::fs::remove_file(&p).unwrap();
            }
        }
    }
    let o = Command::new("python3")
        .arg(bundle.join("repro.py"))
        .output()
        .expect("python3 with onnxruntime is needed (pip install onnxruntime==1.31.1)");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        text.contains("REPRODUCED: ort:")
            && text.contains("with NchwcTransformer disabled it does not show"),
        "{text}"
    );
}
