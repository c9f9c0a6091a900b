use super::*;
use crate::value::{Data, Value};

fn one_node(src: &str) -> Model {
    mutagraph_ir::text::parse_model(&format!(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n{src}"
    ))
    .expect("valid text")
}

fn expect<'a>(expected: &'a HostTensor, symptom: &'a str) -> Expect<'a> {
    Expect {
        expected,
        tolerance: (1e-4, 1e-5),
        symptom,
        title: "t",
    }
}

#[test]
fn integer_mod_is_written_with_int_tensors_and_a_caught_panic() {
    let m = one_node("g (int64[1,1,2] x, int64[1] z) => (int64[1,1,2] y) { y = Mod (x, z) }");
    let inputs: NamedValues = vec![
        (
            "x".into(),
            Value::Tensor(HostTensor::new(vec![1, 1, 2], Data::I64(vec![5, -3]))),
        ),
        (
            "z".into(),
            Value::Tensor(HostTensor::new(vec![1], Data::I64(vec![4]))),
        ),
    ];
    let want = HostTensor::new(vec![1, 1, 2], Data::I64(vec![1, 1]));
    let p = project(&m, &inputs, &expect(&want, "panic")).expect("Mod is covered");
    assert!(p.main_rs.contains("Tensor<B, 6, Int>"), "{}", p.main_rs);
    assert!(p.main_rs.contains("vec![5_i64, -3_i64]"), "{}", p.main_rs);
    assert!(p.main_rs.contains("x.remainder(z)"), "{}", p.main_rs);
    assert!(
        p.main_rs.contains("REPRODUCED: burn panics"),
        "{}",
        p.main_rs
    );
    // a crash is reproduced by the panic alone: no value check
    assert!(!p.main_rs.contains("fn check("), "{}", p.main_rs);
}

#[test]
fn a_node_after_a_onehot_runs_on_burns_one_hot_fill() {
    let m = one_node(
        "g (float[2,2] i) => (float[2,2,2] y) <float[1] d = {2}, float[2] v = {0, 1}> \
         { t = OneHot <axis: int = 1> (i, d, v)\n y = LpNormalization <p: int = 1, axis: int = 1> (t) }",
    );
    let inputs: NamedValues = vec![(
        "i".into(),
        Value::Tensor(HostTensor::new(
            vec![2, 2],
            Data::F32(vec![0.5, -1.0, 1.0, 0.0]),
        )),
    )];
    let want = HostTensor::new(
        vec![2, 2, 2],
        Data::F32(vec![1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]),
    );
    let p = project(&m, &inputs, &expect(&want, "values")).expect("OneHot, then LpNormalization");
    for line in [
        // -1 made 1 (depth 2); the indices held at rank R - 1
        "TensorData::new(vec![0.0_f32, 1.0_f32, 1.0_f32, 0.0_f32]",
        &format!("i.one_hot_fill(2, 1.0, 0.0, {})", R - 2),
        "let _held = x.clone();",
        &format!("let nrm = x.clone().abs().sum_dim({});", R - 2),
        "let y = x.div(nrm);",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    // An index outside the depth (a row of off values, which the interpreter masks): none.
    let outside: NamedValues = vec![(
        "i".into(),
        Value::Tensor(HostTensor::new(
            vec![2, 2],
            Data::F32(vec![0.0, 5.0, 1.0, 0.0]),
        )),
    )];
    assert!(project(&m, &outside, &expect(&want, "values")).is_none());
}

#[test]
fn gemm_is_written_as_the_interpreter_runs_it() {
    let m = one_node(
        "g (float[2,3] a, float[2,3] b, float[2] c) => (float[2,2] y) \
         { y = Gemm <transB: int = 1, alpha: float = 0.5> (a, b, c) }",
    );
    let f32s = |shape: Vec<usize>, v: Vec<f32>| Value::Tensor(HostTensor::new(shape, Data::F32(v)));
    let inputs: NamedValues = vec![
        ("a".into(), f32s(vec![2, 3], vec![1.0; 6])),
        ("b".into(), f32s(vec![2, 3], vec![2.0; 6])),
        ("c".into(), f32s(vec![2], vec![0.5, -0.5])),
    ];
    let want = HostTensor::new(vec![2, 2], Data::F32(vec![3.5, 2.5, 3.5, 2.5]));
    let p = project(&m, &inputs, &expect(&want, "values")).expect("Gemm is covered");
    let swap = format!("let z = z.swap_dims({}, {});", R - 2, R - 1);
    for line in [
        swap.as_str(),
        "let y = x.matmul(z);",
        "let y = y.mul_scalar(0.5);",
        "let y = y.add(c);",
        "let c = tensor(vec![0.5_f32, -0.5_f32]",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    assert!(!p.main_rs.contains("let x = x.swap_dims"), "{}", p.main_rs);
}

#[test]
fn conv_transpose_is_written_as_the_interpreter_runs_it() {
    let m = one_node(
        "g (float[1,1,1,1] x, float[1,1,1,1] w, float[1] b) => (float[1,1,1,1] y) \
         { y = ConvTranspose <strides: ints = [2, 2]> (x, w, b) }",
    );
    let f32s = |shape: Vec<usize>, v: Vec<f32>| Value::Tensor(HostTensor::new(shape, Data::F32(v)));
    let inputs: NamedValues = vec![
        ("x".into(), f32s(vec![1, 1, 1, 1], vec![1.5])),
        ("w".into(), f32s(vec![1, 1, 1, 1], vec![1.5])),
        ("b".into(), f32s(vec![1], vec![0.5])),
    ];
    let want = HostTensor::new(vec![1, 1, 1, 1], Data::F32(vec![2.75]));
    let p = project(&m, &inputs, &expect(&want, "values")).expect("ConvTranspose is covered");
    let bias = format!("Some(c.flatten::<1>(0, {}))", R - 1);
    for line in [
        "let x4: Tensor<B, 4> = x.reshape([1, 1, 1, 1]);",
        "let w4: Tensor<B, 4> = z.reshape([1, 1, 1, 1]);",
        "module::conv_transpose2d(x4, w4, ",
        bias.as_str(),
        "ConvTransposeOptions::new([2, 2], [0, 0], [0, 0], [1, 1], 1)",
        "let c = tensor(vec![0.5_f32]",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    // Asymmetric pads are not burn's own padding: no project.
    let m = one_node(
        "g (float[1,1,3,3] x, float[1,1,1,1] w) => (float[1,1,2,2] y) \
         { y = ConvTranspose <pads: ints = [1, 1, 0, 0]> (x, w) }",
    );
    let inputs: NamedValues = vec![
        ("x".into(), f32s(vec![1, 1, 3, 3], vec![1.0; 9])),
        ("w".into(), f32s(vec![1, 1, 1, 1], vec![1.0])),
    ];
    let want = HostTensor::new(vec![1, 1, 2, 2], Data::F32(vec![1.0; 4]));
    assert!(project(&m, &inputs, &expect(&want, "values")).is_none());
}

#[test]
fn projects_build_burn_as_mutagraph_does() {
    let manifest = include_str!("../../../Cargo.toml");
    let line = manifest
        .lines()
        .find(|l| l.starts_with("burn = {"))
        .expect("backends/Cargo.toml depends on burn");
    let features = BURN_FEATURES
        .iter()
        .map(|f| format!("\"{f}\""))
        .collect::<Vec<_>>()
        .join(", ");
    assert!(
        line.contains(&format!("version = \"={BURN_VERSION}\"")),
        "{line}"
    );
    assert!(line.contains(&format!("features = [{features}]")), "{line}");
    assert!(cargo_toml().contains(&format!("features = [{features}]")));
}

#[test]
fn a_node_after_a_transpose_runs_on_burns_permuted_view_held_twice() {
    let m = one_node(
        "g (float[1,2,3] x) => (float[1,3,2] y) { t = Transpose <perm: ints = [0, 2, 1]> (x)\n y = Reciprocal (t) }",
    );
    let v: Vec<f32> = (1..=6).map(|i| i as f32).collect();
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(vec![1, 2, 3], Data::F32(v))),
    )];
    // x = [[1,2,3],[4,5,6]] transposed: [[1,4],[2,5],[3,6]]
    let want = HostTensor::new(
        vec![1, 3, 2],
        Data::F32(vec![1.0, 0.25, 0.5, 0.2, 1.0 / 3.0, 1.0 / 6.0]),
    );
    let p = project(&m, &inputs, &expect(&want, "values")).expect("Transpose, then Reciprocal");
    assert!(
        p.main_rs.contains(".permute([0, 1, 2, 3, 5, 4])"),
        "{}",
        p.main_rs
    );
    assert!(
        p.main_rs.contains("let _held = x.clone();"),
        "{}",
        p.main_rs
    );
    assert!(p.main_rs.contains("x.recip()"), "{}", p.main_rs);
    // Any other producer: no project.
    let m = one_node("g (float[1,2,3] x) => (float[1,2,3] y) { t = Neg (x)\n y = Reciprocal (t) }");
    assert!(project(&m, &inputs, &expect(&want, "values")).is_none());
}

#[test]
fn recurrent_and_control_flow_nodes_get_no_project() {
    let t = |v: Vec<f32>, shape: Vec<usize>| Value::Tensor(HostTensor::new(shape, Data::F32(v)));
    let m = one_node(
        "g (float[1,1,1] x, float[1,4,1] w, float[1,4,1] r) => (float[1,1,1,1] y) \
         { y = LSTM <hidden_size: int = 1> (x, w, r) }",
    );
    let inputs: NamedValues = vec![
        ("x".into(), t(vec![1.0], vec![1, 1, 1])),
        ("w".into(), t(vec![1.0; 4], vec![1, 4, 1])),
        ("r".into(), t(vec![1.0; 4], vec![1, 4, 1])),
    ];
    let want = HostTensor::new(vec![1, 1, 1, 1], Data::F32(vec![0.5]));
    assert!(project(&m, &inputs, &expect(&want, "values")).is_none());
    // a Scan (its first input a float, as for the ops covered)
    let m = one_node(
        "g (float[1] s0, float[2,1] x) => (float[1] s) { s = Scan <num_scan_inputs: int = 1, \
         body: graph = b (float[1] a, float[1] e) => (float[1] o) { o = Add (a, e) }> \
         (s0, x) }",
    );
    let inputs: NamedValues = vec![
        ("s0".into(), t(vec![0.0], vec![1])),
        ("x".into(), t(vec![1.0, 2.0], vec![2, 1])),
    ];
    let want = HostTensor::new(vec![1], Data::F32(vec![3.0]));
    assert!(project(&m, &inputs, &expect(&want, "values")).is_none());
}

#[test]
fn f64_models_run_on_ndarray_f64() {
    let m = one_node("g (double[2] x) => (double[2] y) { y = Cosh (x) }");
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(vec![2], Data::F64(vec![100.0, 0.5]))),
    )];
    let want = HostTensor::new(vec![2], Data::F64(vec![100f64.cosh(), 0.5f64.cosh()]));
    let p = project(&m, &inputs, &expect(&want, "nan")).expect("Cosh is covered");
    assert!(
        p.main_rs.contains("type B = NdArray<f64>;"),
        "{}",
        p.main_rs
    );
    assert!(
        p.main_rs.contains("vec![100.0_f64, 0.5_f64]"),
        "{}",
        p.main_rs
    );
    assert!(p.main_rs.contains("fn check("), "{}", p.main_rs);
    // a string input is not covered
    let m = one_node("g (string[1] x) => (string[1] y) { y = Identity (x) }");
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(vec![1], Data::String(vec![b"a".to_vec()]))),
    )];
    assert!(project(&m, &inputs, &expect(&want, "values")).is_none());
}
