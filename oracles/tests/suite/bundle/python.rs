//! The bundle's Python side run for real: numpy reading our `.npz`, `repro.py` and the
//! snippet end to end with the `onnxruntime` and `tract` packages.
use super::*;

/// Runs `python3` with arguments; fails the test with what to install when python3 or a
/// module is missing.
fn python(args: &[&str], cwd: &Path) -> Output {
    Command::new("python3")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}): install Python 3 and `pip install numpy onnxruntime`")
        })
}

fn require_python_modules(modules: &str) {
    let out = python(&["-c", &format!("import {modules}")], Path::new("."));
    assert!(
        out.status.success(),
        "python3 lacks {modules}: run `pip install numpy onnxruntime`\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn numpy_loads_what_we_write() {
    require_python_modules("numpy");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.npz");
    let arrays = every_dtype();
    write_npz(&path, &arrays).unwrap();
    // For each array: the decoded key, dtype, shape and the values (floats as their bits).
    let script = r#"
import json, sys, urllib.parse
import numpy as np
out = []
with np.load(sys.argv[1], allow_pickle=False) as z:
    for k in z.files:
        a = z[k]
        if a.dtype.kind == "f":
            vals = a.reshape(-1).view("<u%d" % a.dtype.itemsize).tolist()
        else:
            vals = a.reshape(-1).tolist()
        out.append({"key": urllib.parse.unquote(k), "raw_key": k, "dtype": a.dtype.str,
                    "shape": list(a.shape), "values": vals})
print(json.dumps(out))
"#;
    let out = python(&["-c", script, path.to_str().unwrap()], dir.path());
    assert!(out.status.success(), "{}", text(&out));
    let got: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got.len(), arrays.len());
    for ((name, t), g) in arrays.iter().zip(&got) {
        assert_eq!(g["key"], name.as_str());
        assert!(!g["raw_key"].as_str().unwrap().contains(['/', ':', ' ']));
        let want_dtype = match &t.data {
            Data::F32(_) | Data::BF16(_) => "<f4".to_string(),
            Data::F64(_) => "<f8".into(),
            Data::F16(_) => "<f2".into(),
            Data::I8(_) => "|i1".into(),
            Data::I16(_) => "<i2".into(),
            Data::I32(_) => "<i4".into(),
            Data::I64(_) => "<i8".into(),
            Data::U8(_) => "|u1".into(),
            Data::U16(_) => "<u2".into(),
            Data::U32(_) => "<u4".into(),
            Data::U64(_) => "<u8".into(),
            Data::Bool(_) => "|b1".into(),
            Data::String(v) => format!(
                "<U{}",
                v.iter()
                    .map(|s| std::str::from_utf8(s).unwrap().chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(1)
            ),
            Data::Raw(_) => unreachable!(),
        };
        assert_eq!(g["dtype"], want_dtype.as_str(), "{name}");
        let shape: Vec<usize> = serde_json::from_value(g["shape"].clone()).unwrap();
        assert_eq!(shape, t.shape, "{name}");
        let values = &g["values"];
        let want: serde_json::Value = match &t.data {
            Data::F32(v) => v.iter().map(|x| x.to_bits()).collect(),
            Data::BF16(v) => v.iter().map(|x| x.to_f32().to_bits()).collect(),
            Data::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
            Data::F16(v) => v.iter().map(|x| x.to_bits()).collect(),
            Data::I8(v) => v.iter().copied().collect(),
            Data::I16(v) => v.iter().copied().collect(),
            Data::I32(v) => v.iter().copied().collect(),
            Data::I64(v) => v.iter().copied().collect(),
            Data::U8(v) => v.iter().copied().collect(),
            Data::U16(v) => v.iter().copied().collect(),
            Data::U32(v) => v.iter().copied().collect(),
            Data::U64(v) => v.iter().copied().collect(),
            Data::Bool(v) => v.iter().copied().collect(),
            Data::String(v) => v
                .iter()
                .map(|s| String::from_utf8(s.clone()).unwrap())
                .collect(),
            Data::Raw(_) => unreachable!(),
        };
        assert_eq!(values, &want, "{name}");
    }
}

#[test]
fn we_read_what_numpy_savez_writes() {
    require_python_modules("numpy");
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import numpy as np
np.savez("plain.npz", **{
    "x%3A0": np.arange(6, dtype=np.float32).reshape(2, 3),
    "raw:name": np.array([1, -2], dtype=np.int64),
    "s": np.array(["ab", "c"]),
    "b": np.array(True),
    "h": np.array([0.5], dtype=np.float16),
    "e": np.zeros((0, 3), dtype=np.uint16),
})
np.savez_compressed("packed.npz", x=np.ones(3))
"#;
    let out = python(&["-c", script], dir.path());
    assert!(out.status.success(), "{}", text(&out));
    let got = read_npz(&dir.path().join("plain.npz")).unwrap();
    let want = vec![
        (
            "x:0".to_string(),
            HostTensor::new(vec![2, 3], Data::F32(vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0])),
        ),
        (
            "raw:name".into(),
            HostTensor::new(vec![2], Data::I64(vec![1, -2])),
        ),
        (
            "s".into(),
            HostTensor::new(vec![2], Data::String(vec![b"ab".to_vec(), b"c".to_vec()])),
        ),
        ("b".into(), HostTensor::new(vec![], Data::Bool(vec![true]))),
        (
            "h".into(),
            HostTensor::new(vec![1], Data::F16(vec![f16::from_f32(0.5)])),
        ),
        ("e".into(), HostTensor::new(vec![0, 3], Data::U16(vec![]))),
    ];
    assert_eq!(got, want);
    let err = read_npz(&dir.path().join("packed.npz")).unwrap_err();
    assert!(err.to_string().contains("savez_compressed"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// repro.py

const INPUT: &str = "in:0/x";

/// A bundle directory with `minimized.onnx` (`y = Relu(in:0/x)`, float[2, 3]) and
/// `inputs.npz`; returns the output name.
fn relu_bundle(dir: &Path) -> String {
    let mut b = GraphBuilder::new("relu", 1);
    let x = b.input(INPUT, DType::F32, &[2, 3]);
    let y = b.relu(&x);
    b.output(&y);
    let model = b.finish().unwrap();
    model.save(dir.join("minimized.onnx")).unwrap();
    write_npz(
        &dir.join("inputs.npz"),
        &[(
            INPUT.to_string(),
            HostTensor::new(vec![2, 3], Data::F32(vec![-1.0, 2.0, -3.0, 4.0, -5.0, 6.0])),
        )],
    )
    .unwrap();
    y
}

fn f32s(v: &[f32]) -> HostTensor {
    HostTensor::new(vec![2, 3], Data::F32(v.to_vec()))
}

const RELU: [f32; 6] = [0.0, 2.0, 0.0, 4.0, 0.0, 6.0];

fn spec(kind: &str, library: &str, showing: &[&str]) -> ReproSpec {
    ReproSpec {
        title: format!("{library}: Relu output differs"),
        kind: kind.into(),
        symptom: "values".into(),
        library: library.into(),
        showing: showing.iter().map(|s| s.to_string()).collect(),
        clean: vec![],
        ground: None,
        model_file: "minimized.onnx".into(),
        inputs_npz: "inputs.npz".into(),
        expected_npz: Some("expected.npz".into()),
        expected_native_npz: None,
        tolerances: vec![],
        default_tolerance: (1e-5, 1e-6),
        expect_error: None,
        slow_seconds: 0.05,
        embedded_expected: vec![],
        optimizer_pass: None,
    }
}

/// Writes `repro.py` for `spec` and runs it from another directory (paths must be relative to
/// the script); returns (exit code, output).
fn run_repro(dir: &Path, spec: &ReproSpec, extra: &[&str]) -> (i32, String) {
    require_python_modules("numpy, onnx, onnxruntime, tract");
    let script = dir.join("repro.py");
    std::fs::write(&script, render_repro_py(spec)).unwrap();
    let mut args = vec![script.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = python(&args, dir.parent().unwrap());
    let t = text(&out);
    // The verdict ends the script's standard output (a library may still warn on stderr).
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
    assert!(
        last.starts_with("REPRODUCED: ")
            || last.starts_with("NOT REPRODUCED: ")
            || last.starts_with("CANNOT JUDGE: "),
        "no verdict line:\n{t}"
    );
    (out.status.code().unwrap_or(-1), t)
}

#[test]
fn repro_py_compiles() {
    require_python_modules("numpy");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("repro.py");
    let mut s = spec("inconsistency", "onnxruntime", &["ort"]);
    s.title = "a \"quoted\" title\\ with ''' and \n a newline".into();
    s.expected_npz = None;
    s.tolerances = vec![("y\"q".into(), 1e-3, 1e-4)];
    std::fs::write(&script, render_repro_py(&s)).unwrap();
    let out = python(&["-m", "py_compile", script.to_str().unwrap()], dir.path());
    assert!(out.status.success(), "{}", text(&out));
}

/// The reported error is stored cut to a length, which may fall inside a quoted node name:
/// the name's start is no part of what the error says.
#[test]
fn an_expected_error_cut_inside_a_quoted_name_still_matches() {
    require_python_modules("numpy");
    let dir = tempfile::tempdir().unwrap();
    let s = spec("crash", "tract", &["tract"]);
    std::fs::write(dir.path().join("repro.py"), render_repro_py(&s)).unwrap();
    let check = r#"
import repro
msg = 'declutter: Trying to substitute a 1,48,1,1,F32 by 1,48,2,1,F32 as output #0 of #20 "Slice_1.stride-axis-2.Relu_1" Conv'
cut = 'Trying to substitute a 1,48,1,1,F32 by 1,48,2,1,F32 as output #0 of #20 "Slice_1.stride-axis-2.Re'
print(repro.same_error(cut, msg), repro.same_error('of #20 "Other" Gemm', msg),
      repro.same_error('#20 "Slice_1.stride-axis-2.Relu_1" Conv', msg))
"#;
    let out = python(&["-c", check], dir.path());
    assert_eq!(text(&out).trim(), "True False True", "{}", text(&out));
    // ONNX Runtime names values and nodes in parentheses: the original model's names differ
    // from the minimized one's (a triage found `--model original.onnx` NOT REPRODUCED on them).
    let check = r#"
import repro
stored = "Type 'tensor(bool)' of input parameter (greaterorequal_1) of operator (LayerNormalization) in node (Mul_1/LayerNormFusion/) is invalid."
other = "Type 'tensor(bool)' of input parameter (greaterorequal_m0306515c_7) of operator (LayerNormalization) in node (Mul_m0306515c_19/LayerNormFusion/) is invalid."
cut = "Type 'tensor(bool)' of input parameter (greaterorequal_1) of operator (LayerNormalization) in node (Mul_1/Lay"
print(repro.same_error(stored, other), repro.same_error(stored, "Type 'tensor(bool)' of output parameter (x) is invalid."),
      repro.same_error(cut, stored))
"#;
    let out = python(&["-c", check], dir.path());
    // The stored text cut inside a parenthesized name (round 12: NOT REPRODUCED on the very
    // error reported) still matches.
    assert_eq!(text(&out).trim(), "True False True", "{}", text(&out));
}

#[test]
fn repro_ort_correct_result_is_not_reproduced() {
    let dir = tempfile::tempdir().unwrap();
    let y = relu_bundle(dir.path());
    write_npz(&dir.path().join("expected.npz"), &[(y, f32s(&RELU))]).unwrap();
    let (code, out) = run_repro(
        dir.path(),
        &spec("inconsistency", "onnxruntime", &["ort"]),
        &[],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("NOT REPRODUCED: "), "{out}");
    assert!(out.contains("matches the expected values"), "{out}");
    assert!(
        out.contains("graph_optimization_level=ORT_ENABLE_ALL"),
        "{out}"
    );
}

#[test]
fn repro_ort_wrong_result_is_reproduced_and_the_clean_variant_shown() {
    let dir = tempfile::tempdir().unwrap();
    let y = relu_bundle(dir.path());
    let mut wrong = RELU;
    wrong[3] = 4.5;
    write_npz(&dir.path().join("expected.npz"), &[(y, f32s(&wrong))]).unwrap();
    let mut s = spec("inconsistency", "onnxruntime", &["ort-noopt"]);
    s.clean = vec!["ort".into()];
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nREPRODUCED: "), "{out}");
    assert!(out.contains("1 of 6 elements outside"), "{out}");
    assert!(
        out.contains("graph_optimization_level=ORT_DISABLE_ALL"),
        "{out}"
    );
    // The variant mutagraph saw right is run too.
    assert!(out.contains("ort shows it too"), "{out}");
    assert!(out.contains("[0.0, 2.0, 0.0, 4.5, 0.0, 6.0]"), "{out}");
}

/// A shape bundle whose wrongly shaped value a later node absorbs (round 12: ONNX Runtime's
/// MaxPool one row short under SAME_UPPER with dilations, averaged by a pool to the right
/// [1, 1, 1, 1]): the outputs keep their shapes and their values differ, which shows it.
#[test]
fn a_wrong_shape_absorbed_downstream_reproduces_through_the_values() {
    let dir = tempfile::tempdir().unwrap();
    let y = relu_bundle(dir.path());
    let mut wrong = RELU;
    wrong[3] = 4.5;
    write_npz(
        &dir.path().join("expected.npz"),
        &[(y.clone(), f32s(&wrong))],
    )
    .unwrap();
    let mut s = spec("inconsistency", "onnxruntime", &["ort"]);
    s.symptom = "shape".into();
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nREPRODUCED: "), "{out}");
    assert!(out.contains("through a node that keeps its shape"), "{out}");
    // Right values are no reproduction, whatever the symptom.
    write_npz(&dir.path().join("expected.npz"), &[(y, f32s(&RELU))]).unwrap();
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("NOT REPRODUCED: "), "{out}");
}

/// A bug judged against the library's own unoptimized run (the reference could not run the
/// model): that run gives the expected values, from the model and inputs alone. ONNX Runtime
/// 1.31.1 fuses Add → LayerNormalization with axis -2 into SkipLayerNormalization, which
/// normalizes over the last axis only.
#[test]
fn repro_takes_the_expected_values_from_the_ground_variant() {
    let dir = tempfile::tempdir().unwrap();
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 2, 4] a, float[1, 2, 4] b) => (float[1, 2, 4] y) <float[4] sc = {1, 1, 1, 1}, float[4] bi = {0, 0, 0, 0}> {\n s = Add (a, b)\n y = LayerNormalization <axis: int = -2> (s, sc, bi)\n}",
    )
    .unwrap();
    m.save(dir.path().join("minimized.onnx")).unwrap();
    let a = HostTensor::new(vec![1, 2, 4], Data::F32((0..8).map(|v| v as f32).collect()));
    let b = HostTensor::new(vec![1, 2, 4], Data::F32(vec![0.0; 8]));
    write_npz(
        &dir.path().join("inputs.npz"),
        &[("a".to_string(), a), ("b".to_string(), b)],
    )
    .unwrap();
    let mut s = spec("inconsistency", "onnxruntime", &["ort"]);
    s.expected_npz = None;
    s.clean = vec!["ort-noopt".into()];
    s.ground = Some("ort-noopt".into());
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("expected values: onnxruntime's own run as 'ort-noopt'"),
        "{out}"
    );
    assert!(
        out.contains("elements outside the expected values"),
        "{out}"
    );
    // A model both levels compute alike does not reproduce: the ground's run is compared.
    relu_bundle(dir.path());
    write_npz(
        &dir.path().join("inputs.npz"),
        &[(INPUT.to_string(), f32s(&[-1.0, 2.0, -3.0, 4.0, -5.0, 6.0]))],
    )
    .unwrap();
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("matches the expected values"), "{out}");
}

#[test]
fn repro_accepts_results_inside_the_precision_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let y = relu_bundle(dir.path());
    // The f64 reference says 4.5 where the library gives 4.0; the reference in the model's own
    // types says 3.9: 4.0 lies between the two, so it is right.
    let mut f64_ref = RELU;
    f64_ref[3] = 4.5;
    let mut native = RELU;
    native[3] = 3.9;
    write_npz(
        &dir.path().join("expected.npz"),
        &[(y.clone(), f32s(&f64_ref))],
    )
    .unwrap();
    write_npz(
        &dir.path().join("expected_native.npz"),
        &[(y, f32s(&native))],
    )
    .unwrap();
    let mut s = spec("inconsistency", "onnxruntime", &["ort"]);
    s.expected_native_npz = Some("expected_native.npz".into());
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 1, "{out}");
    s.expected_native_npz = None;
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn repro_runs_tracts_own_python_package() {
    let dir = tempfile::tempdir().unwrap();
    let y = relu_bundle(dir.path());
    let mut wrong = RELU;
    wrong[1] = -2.0;
    write_npz(
        &dir.path().join("expected.npz"),
        &[(y.clone(), f32s(&wrong))],
    )
    .unwrap();
    let s = spec("inconsistency", "tract", &["tract"]);
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("tract (Python package"), "{out}");
    assert!(out.contains("REPRODUCED: tract: output"), "{out}");
    // tract right: not reproduced.
    write_npz(&dir.path().join("expected.npz"), &[(y, f32s(&RELU))]).unwrap();
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 1, "{out}");
}

/// `--model original.onnx` runs the model as found on its own inputs (the bundle's
/// `inputs.npz`, not the minimized model's) against onnx.reference's values.
#[test]
fn repro_runs_another_model_on_its_own_inputs() {
    let dir = tempfile::tempdir().unwrap();
    relu_bundle(dir.path());
    std::fs::copy(
        dir.path().join("minimized.onnx"),
        dir.path().join("original.onnx"),
    )
    .unwrap();
    // The minimized model's inputs file names other inputs.
    write_npz(
        &dir.path().join("minimized_inputs.npz"),
        &[("other".to_string(), f32s(&RELU))],
    )
    .unwrap();
    let mut s = spec("inconsistency", "onnxruntime", &["ort"]);
    s.inputs_npz = "minimized_inputs.npz".into();
    s.embedded_expected = vec![("y".into(), f32s(&[9.0; 6]))];
    let original = dir.path().join("original.onnx");
    let (code, out) = run_repro(dir.path(), &s, &["--model", original.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("inputs.npz") && !out.contains("minimized_inputs.npz"),
        "{out}"
    );
    assert!(out.contains("computed by onnx.reference"), "{out}");
    // The minimized inputs under the original's names, at a smaller shape: the original's
    // own inputs still (ONNX Runtime refused the minimized [1, 2] for a [2, 3] input).
    write_npz(
        &dir.path().join("minimized_inputs.npz"),
        &[(
            INPUT.to_string(),
            HostTensor::new(vec![1, 2], Data::F32(vec![1.0, -1.0])),
        )],
    )
    .unwrap();
    let (_, out) = run_repro(dir.path(), &s, &["--model", original.to_str().unwrap()]);
    assert!(
        out.contains("inputs.npz") && !out.contains("minimized_inputs.npz"),
        "{out}"
    );
    // A model onnx.reference cannot run (GlobalLpPool): the stored values are the bundle
    // model's, never another's, even where the output names agree.
    write_npz(
        &dir.path().join("expected.npz"),
        &[("y".into(), f32s(&[9.0; 6]))],
    )
    .unwrap();
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 2, 1, 2] x) => (float[1, 2, 1, 1] y) {\n y = GlobalLpPool <p: int = 2> (x)\n}",
    )
    .unwrap();
    let lp = dir.path().join("lp.onnx");
    m.save(&lp).unwrap();
    let lp_inputs = dir.path().join("lp_inputs.npz");
    let x = HostTensor::new(vec![1, 2, 1, 2], Data::F32(vec![3.0, 4.0, 6.0, 8.0]));
    write_npz(&lp_inputs, &[("x".to_string(), x)]).unwrap();
    s.expected_npz = Some("expected.npz".into());
    let args = [
        "--model",
        lp.to_str().unwrap(),
        "--inputs",
        lp_inputs.to_str().unwrap(),
    ];
    let (code, out) = run_repro(dir.path(), &s, &args);
    assert!(out.contains("expected values: none"), "{out}");
    // Without expected values the run cannot be judged: neither verdict (a triage found
    // `--model original.onnx` saying NOT REPRODUCED where onnx.reference lacked an op).
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("CANNOT JUDGE: no expected values for lp.onnx"),
        "{out}"
    );
    assert!(!out.contains("NOT REPRODUCED"), "{out}");
}

#[test]
fn repro_says_where_onnx_reference_and_the_embedded_values_disagree() {
    // QuantizeLinear of 3.99e12 / 0.02 saturates to 255 by the text; onnx.reference 1.22 casts
    // the rounded value to int32 first, which overflows (0). With the stored values stripped,
    // the script must not take onnx.reference's word over the values written into it.
    let dir = tempfile::tempdir().unwrap();
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 19]>\ng (float[1] x) => (uint8[1] y) <float s = {0.02}, uint8 z = {128}> {\n y = QuantizeLinear (x, s, z)\n}",
    )
    .unwrap();
    m.save(dir.path().join("q.onnx")).unwrap();
    let x = HostTensor::new(vec![1], Data::F32(vec![3.99e12]));
    write_npz(&dir.path().join("q_inputs.npz"), &[("x".to_string(), x)]).unwrap();
    let mut q = spec("inconsistency", "onnxruntime", &["ort"]);
    q.model_file = "q.onnx".into();
    q.inputs_npz = "q_inputs.npz".into();
    q.expected_npz = Some("q_expected.npz".into());
    q.embedded_expected = vec![("y".into(), HostTensor::new(vec![1], Data::U8(vec![255])))];
    let (code, out) = run_repro(dir.path(), &q, &[]);
    assert!(
        out.contains("onnx.reference.ReferenceEvaluator gives other values"),
        "{out}"
    );
    // ONNX Runtime saturates as the text says: nothing to reproduce.
    assert_eq!(code, 1, "{out}");
}

#[test]
fn repro_computes_expected_values_with_onnx_reference_when_asked_or_missing() {
    let dir = tempfile::tempdir().unwrap();
    let y = relu_bundle(dir.path());
    let s = spec("inconsistency", "onnxruntime", &["ort"]);
    // No stored expected values: onnx.reference computes them, and ORT's Relu agrees.
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("expected values: computed by onnx.reference.ReferenceEvaluator (expected.npz is missing)"),
        "{out}"
    );
    assert!(out.contains("matches the expected values"), "{out}");
    // Stored values that claim 4.5 where Relu gives 4: by them ORT is wrong...
    let mut wrong = RELU;
    wrong[3] = 4.5;
    write_npz(&dir.path().join("expected.npz"), &[(y, f32s(&wrong))]).unwrap();
    let (code, out) = run_repro(dir.path(), &s, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("expected values: expected.npz"), "{out}");
    // ... and --recompute sets them aside for onnx.reference's.
    let (code, out) = run_repro(dir.path(), &s, &["--recompute"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("(asked for (--recompute))"), "{out}");
    // An op onnx.reference lacks (GlobalLpPool): the values written into the script serve.
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 2, 1, 2] x) => (float[1, 2, 1, 1] y) {\n y = GlobalLpPool <p: int = 2> (x)\n}",
    )
    .unwrap();
    m.save(dir.path().join("lp.onnx")).unwrap();
    let lp_inputs = dir.path().join("lp_inputs.npz");
    let x = HostTensor::new(vec![1, 2, 1, 2], Data::F32(vec![3.0, 4.0, 6.0, 8.0]));
    write_npz(&lp_inputs, &[("x".to_string(), x)]).unwrap();
    let mut lp = spec("inconsistency", "onnxruntime", &["ort"]);
    lp.model_file = "lp.onnx".into();
    lp.inputs_npz = "lp_inputs.npz".into();
    lp.expected_npz = Some("lp_expected.npz".into());
    // The 2-norms are 5 and 10; the script claims 5 and 11.
    lp.embedded_expected = vec![(
        "y".into(),
        HostTensor::new(vec![1, 2, 1, 1], Data::F32(vec![5.0, 11.0])),
    )];
    let (code, out) = run_repro(dir.path(), &lp, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("expected values: mutagraph's f64 reference, written into this script"),
        "{out}"
    );
    assert!(out.contains("1 of 2 elements outside"), "{out}");
    // onnx.reference's LogSoftmax is the log of its Softmax: -inf where exp underflows. It is
    // not asked; the script's own values (-186, 0) show ONNX Runtime right.
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y) {\n y = LogSoftmax (x)\n}",
    )
    .unwrap();
    m.save(dir.path().join("ls.onnx")).unwrap();
    let x = HostTensor::new(vec![2], Data::F32(vec![53.0, 239.0]));
    write_npz(&dir.path().join("ls_inputs.npz"), &[("x".to_string(), x)]).unwrap();
    let mut ls = spec("inconsistency", "onnxruntime", &["ort"]);
    ls.model_file = "ls.onnx".into();
    ls.inputs_npz = "ls_inputs.npz".into();
    ls.expected_npz = Some("ls_expected.npz".into());
    ls.embedded_expected = vec![(
        "y".into(),
        HostTensor::new(vec![2], Data::F32(vec![-186.0, 0.0])),
    )];
    let (code, out) = run_repro(dir.path(), &ls, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the log of Softmax"), "{out}");
    assert!(out.contains("written into this script"), "{out}");
    // onnx.reference pads a dilated SAME MaxPool as ONNX Runtime does (one column short):
    // not asked, so ONNX Runtime's wrong shape shows against the script's own values.
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 1, 1, 1] x) => (float[1, 1, 1, 1] y) {\n y = MaxPool <kernel_shape: ints = [2, 3], strides: ints = [1, 2], dilations: ints = [1, 2], auto_pad: string = \"SAME_LOWER\"> (x)\n}",
    )
    .unwrap();
    m.save(dir.path().join("mp.onnx")).unwrap();
    let x = HostTensor::new(vec![1, 1, 1, 1], Data::F32(vec![0.25]));
    write_npz(&dir.path().join("mp_inputs.npz"), &[("x".to_string(), x)]).unwrap();
    let mut mp = spec("inconsistency", "onnxruntime", &["ort"]);
    mp.model_file = "mp.onnx".into();
    mp.inputs_npz = "mp_inputs.npz".into();
    mp.expected_npz = Some("mp_expected.npz".into());
    mp.embedded_expected = vec![(
        "y".into(),
        HostTensor::new(vec![1, 1, 1, 1], Data::F32(vec![0.25])),
    )];
    let (code, out) = run_repro(dir.path(), &mp, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("as if undilated"), "{out}");
    // Undilated, an odd SAME padding: onnx.reference gives [1, 1, 1, 0] where the text gives
    // ceil(1 / 2) = 1 (round 9: a stripped repro "reproduced" that shape instead of tract's
    // value). Not asked: ONNX Runtime's right value is no bug.
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 1, 1, 1] x) => (float[1, 1, 1, 1] y) {\n y = MaxPool <kernel_shape: ints = [1, 2], strides: ints = [1, 2], auto_pad: string = \"SAME_LOWER\"> (x)\n}",
    )
    .unwrap();
    m.save(dir.path().join("mp2.onnx")).unwrap();
    mp.model_file = "mp2.onnx".into();
    let (code, out) = run_repro(dir.path(), &mp, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the padding is uneven"), "{out}");
    // An even padding (kernel 3, stride 1 pads one each side): onnx.reference is right there,
    // and no blind spot is claimed.
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 1, 1, 3] x) => (float[1, 1, 1, 3] y) {\n y = MaxPool <kernel_shape: ints = [1, 3], auto_pad: string = \"SAME_UPPER\"> (x)\n}",
    )
    .unwrap();
    m.save(dir.path().join("mp3.onnx")).unwrap();
    let x = HostTensor::new(vec![1, 1, 1, 3], Data::F32(vec![0.25, 0.5, 0.75]));
    write_npz(&dir.path().join("mp3_inputs.npz"), &[("x".to_string(), x)]).unwrap();
    mp.model_file = "mp3.onnx".into();
    mp.inputs_npz = "mp3_inputs.npz".into();
    mp.embedded_expected = vec![(
        "y".into(),
        HostTensor::new(vec![1, 1, 1, 3], Data::F32(vec![0.5, 0.75, 0.75])),
    )];
    let (code, out) = run_repro(dir.path(), &mp, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("SAME"), "{out}");
    // onnx.reference's LRN leaves the last channel unnormalized (2 where the text gives
    // 2 / (1 + 3/3 · 5) = 1/3): not asked, so ONNX Runtime's right values are no bug.
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 2, 1, 1] x) => (float[1, 2, 1, 1] y) {\n y = LRN <size: int = 3, alpha: float = 3.0, beta: float = 1.0> (x)\n}",
    )
    .unwrap();
    m.save(dir.path().join("lrn.onnx")).unwrap();
    let x = HostTensor::new(vec![1, 2, 1, 1], Data::F32(vec![1.0, 2.0]));
    write_npz(&dir.path().join("lrn_inputs.npz"), &[("x".to_string(), x)]).unwrap();
    let mut lrn = spec("inconsistency", "onnxruntime", &["ort"]);
    lrn.model_file = "lrn.onnx".into();
    lrn.inputs_npz = "lrn_inputs.npz".into();
    lrn.expected_npz = Some("lrn_expected.npz".into());
    lrn.embedded_expected = vec![(
        "y".into(),
        HostTensor::new(vec![1, 2, 1, 1], Data::F32(vec![1.0 / 6.0, 1.0 / 3.0])),
    )];
    let (code, out) = run_repro(dir.path(), &lrn, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("channel window"), "{out}");
    // onnx.reference ignores a GRU's clip: not asked, and the reason names clip, not the
    // activations the model spells out at their defaults.
    let m = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 1, 2] x, float[1, 3, 2] w, float[1, 3, 1] r) => (float[1, 1, 1, 1] y) {\n y = GRU <hidden_size: int = 1, clip: float = 0.5, activations: strings = [\"Sigmoid\", \"Tanh\"]> (x, w, r)\n}",
    )
    .unwrap();
    m.save(dir.path().join("gru.onnx")).unwrap();
    let t = |shape: Vec<usize>, v: Vec<f32>| HostTensor::new(shape, Data::F32(v));
    write_npz(
        &dir.path().join("gru_inputs.npz"),
        &[
            ("x".to_string(), t(vec![1, 1, 2], vec![1.0, 2.0])),
            ("w".to_string(), t(vec![1, 3, 2], vec![0.5; 6])),
            ("r".to_string(), t(vec![1, 3, 1], vec![0.5; 3])),
        ],
    )
    .unwrap();
    let mut gru = spec("inconsistency", "onnxruntime", &["ort"]);
    gru.model_file = "gru.onnx".into();
    gru.inputs_npz = "gru_inputs.npz".into();
    gru.expected_npz = Some("gru_expected.npz".into());
    gru.embedded_expected = vec![("y".into(), t(vec![1, 1, 1, 1], vec![0.25]))];
    let (_, out) = run_repro(dir.path(), &gru, &[]);
    assert!(out.contains("ignores GRU's attribute clip"), "{out}");
    // A crash is judged without expected values: none is read, none is needed.
    std::fs::remove_file(dir.path().join("expected.npz")).unwrap();
    let (code, out) = run_repro(dir.path(), &spec("crash", "onnxruntime", &["ort"]), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("ran without error") && !out.contains("expected values"),
        "{out}"
    );
}

#[test]
fn repro_nan_crash_hang_and_flaky() {
    let dir = tempfile::tempdir().unwrap();
    let y = relu_bundle(dir.path());
    // NaN input: Relu(NaN) is NaN, the (claimed) expected value is finite.
    write_npz(
        &dir.path().join("inputs.npz"),
        &[(
            INPUT.to_string(),
            f32s(&[f32::NAN, 2.0, -3.0, 4.0, -5.0, 6.0]),
        )],
    )
    .unwrap();
    write_npz(
        &dir.path().join("expected.npz"),
        &[(y.clone(), f32s(&RELU))],
    )
    .unwrap();
    let (code, out) = run_repro(dir.path(), &spec("nan", "onnxruntime", &["ort"]), &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("NaN/Inf where the expected value is finite"),
        "{out}"
    );
    // An infinity expected where the library gives a finite value (MaxPool of -inf against
    // -3.4e38): the error is unbounded, not 0.
    write_npz(
        &dir.path().join("inputs.npz"),
        &[(INPUT.to_string(), f32s(&[-1.0, 2.0, -3.0, 4.0, -5.0, 6.0]))],
    )
    .unwrap();
    let mut want = RELU;
    want[0] = f32::NEG_INFINITY;
    write_npz(
        &dir.path().join("expected.npz"),
        &[(y.clone(), f32s(&want))],
    )
    .unwrap();
    let (code, out) = run_repro(
        dir.path(),
        &spec("inconsistency", "onnxruntime", &["ort"]),
        &[],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("max abs error inf"), "{out}");
    write_npz(&dir.path().join("expected.npz"), &[(y, f32s(&RELU))]).unwrap();

    // A crash kind: ORT runs fine on the model...
    let crash = spec("crash", "onnxruntime", &["ort"]);
    let (code, out) = run_repro(dir.path(), &crash, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ran without error"), "{out}");
    // ... but raises on a broken model given with --model (path relative to the cwd).
    std::fs::write(dir.path().join("broken.onnx"), b"\x08\x07garbage").unwrap();
    let broken = dir.path().join("broken.onnx");
    let (code, out) = run_repro(dir.path(), &crash, &["--model", broken.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("REPRODUCED: ort: failed"), "{out}");
    // A failure with another message than the reported one is not the bug.
    let mut other = crash.clone();
    other.expect_error = Some("padding values must be non-negative".into());
    let (code, out) = run_repro(dir.path(), &other, &["--model", broken.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("not with the reported error"), "{out}");
    // The reported error's numbers and quoted names are the model's own: another model (the
    // original, before minimization) fails the same way with others.
    let mut renumbered = crash.clone();
    renumbered.expect_error = Some("[ONNXRuntimeError] : 3 : INVALID_PROTOBUF".into());
    let (code, out) = run_repro(
        dir.path(),
        &renumbered,
        &["--model", broken.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}");

    // Hang: a run that gives no result in time is stopped and reproduces it.
    let (code, out) = run_repro(
        dir.path(),
        &spec("hang", "onnxruntime", &["ort"]),
        &["--timeout", "0.001"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("REPRODUCED: ort: did not finish"), "{out}");
    // Flaky: ORT's Relu gives the same result every run.
    let (code, out) = run_repro(dir.path(), &spec("flaky", "onnxruntime", &["ort"]), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("identical results in 5 runs"), "{out}");
}

// ---------------------------------------------------------------------------------------------
// REPORT.md

/// A library that dies of a panic reproduces a crash only with the reported panic's message:
/// another panic is another bug (tract's Python package aborts the process on a panic, and
/// the script reads its message from the library's standard error).
#[test]
fn a_panic_reproduces_a_crash_only_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let model = mutagraph_ir::text::parse_model(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[1,2,1,1] x) => (float[3,3,1,2] y) <int64[8] pads = {1,-1,0,1,1,2,0,0}> {
            y = Pad (x, pads)
         }",
    )
    .unwrap();
    model.save(dir.path().join("minimized.onnx")).unwrap();
    write_npz(
        &dir.path().join("inputs.npz"),
        &[(
            "x".to_string(),
            HostTensor::new(vec![1, 2, 1, 1], Data::F32(vec![1.0, 2.0])),
        )],
    )
    .unwrap();
    let mut crash = spec("crash", "tract", &["tract"]);
    crash.expected_npz = None;
    crash.expect_error = Some("could not broadcast array".into());
    let (code, out) = run_repro(dir.path(), &crash, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("panicked at"), "{out}");
    crash.expect_error = Some("index out of bounds".into());
    let (code, out) = run_repro(dir.path(), &crash, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("crashed, but not with the reported error"),
        "{out}"
    );
}
