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
        &format!("i.one_hot_fill(2, 1.0_f32, 0.0_f32, {})", R - 2),
        "let _held = x.clone();",
        &format!("let nrm = x.clone().abs().sum_dim({});", R - 2),
        "let y = x.div(nrm);",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    assert!(!p.main_rs.contains("mask_fill"), "{}", p.main_rs);
    // An index outside the depth: encoded as 0, its row then set to the off value (the
    // interpreter's mask).
    let outside: NamedValues = vec![(
        "i".into(),
        Value::Tensor(HostTensor::new(
            vec![2, 2],
            Data::F32(vec![0.0, 5.0, 1.0, 0.0]),
        )),
    )];
    let p = project(&m, &outside, &expect(&want, "values")).expect("outside the depth");
    for line in [
        "TensorData::new(vec![0.0_f32, 0.0_f32, 1.0_f32, 0.0_f32]",
        "TensorData::new(vec![0.0_f32, 1.0_f32, 0.0_f32, 0.0_f32]",
        &format!(
            "let mask = o.unsqueeze_dim::<{R}>({}).expand(x.shape()).equal_elem(1.0);",
            R - 2
        ),
        "let x = x.mask_fill(mask, 0.0_f32);",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
}

#[test]
fn a_onehot_alone_is_written_with_its_values_as_f32_constants() {
    // burn's one_hot_fill adds on - off to a tensor full of off: an infinite off value
    // gives inf + (1 - inf) = NaN where ONNX gives the on value
    let m = one_node(
        "g (float[1,1,1] i) => (float[4,1,1,1] y) <float[1] d = {4}, float[2] v = {inf, 1}> \
         { y = OneHot <axis: int = -4> (i, d, v) }",
    );
    let inputs: NamedValues = vec![(
        "i".into(),
        Value::Tensor(HostTensor::new(vec![1, 1, 1], Data::F32(vec![0.995]))),
    )];
    let inf = f32::INFINITY;
    let want = HostTensor::new(vec![4, 1, 1, 1], Data::F32(vec![1.0, inf, inf, inf]));
    let p = project(&m, &inputs, &expect(&want, "nan")).expect("OneHot is covered");
    for line in [
        // 0.995 read as the index 0, held at rank R - 1
        &format!(
            "let i = Tensor::<B, {}>::from_data(TensorData::new(vec![0.0_f32], [1, 1, 1, 1, 1])",
            R - 1
        ),
        &format!(
            "let y: Tensor<B, {R}> = i.one_hot_fill(4, 1.0_f32, f32::INFINITY, {});",
            R - 4
        ),
        "let expected: Vec<f64> = vec![1.0_f64, f64::INFINITY, f64::INFINITY, f64::INFINITY];",
        "type B = NdArray<f32>;",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    // the one-hot is made inside the caught panic
    let caught = p.main_rs.find("catch_unwind").expect("a caught run");
    assert!(p.main_rs.find("one_hot_fill").is_some_and(|at| at > caught));
    // integer values are cast after burn's one-hot: not written
    let m = one_node(
        "g (float[1,1,1] i) => (int64[4,1,1,1] y) <float[1] d = {4}, int64[2] v = {0, 1}> \
         { y = OneHot (i, d, v) }",
    );
    assert!(project(&m, &inputs, &expect(&want, "values")).is_none());
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

/// An empty operand is made afresh in the project as in the interpreter: burn's reshape would
/// read its 0 as "keep this axis" and the project would panic for a reason of its own.
#[test]
fn an_empty_conv_operand_is_made_afresh_not_reshaped() {
    let m = one_node(
        "g (float[1,0,1,1] x, float[0,0,3,3] w) => (float[1,0,1,1] y) \
         { y = Conv <pads: ints = [1, 1, 1, 1], kernel_shape: ints = [3, 3]> (x, w) }",
    );
    let f32s = |shape: Vec<usize>| Value::Tensor(HostTensor::new(shape, Data::F32(vec![])));
    let inputs: NamedValues = vec![
        ("x".into(), f32s(vec![1, 0, 1, 1])),
        ("w".into(), f32s(vec![0, 0, 3, 3])),
    ];
    let want = HostTensor::new(vec![1, 0, 1, 1], Data::F32(vec![]));
    let p = project(&m, &inputs, &expect(&want, "crash")).expect("Conv is covered");
    for line in [
        "let x4: Tensor<B, 4> = Tensor::<B, 4>::empty([1, 0, 1, 1], &x.device());",
        "let w4: Tensor<B, 4> = Tensor::<B, 4>::empty([0, 0, 3, 3], &z.device());",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
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
fn the_burn_calls_of_a_node_are_those_its_project_makes() {
    let m = one_node(
        "g (float[1,2,3] x) => (float[1,1,2] y) { t = Transpose <perm: ints = [0, 2, 1]> (x)\n y = ReduceL1 <axes: ints = [1]> (t) }",
    );
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(vec![1, 2, 3], Data::F32(vec![1.0; 6]))),
    )];
    // ReduceL1 is burn's abs, then a sum over the axis (the producer's calls are not the node's).
    assert_eq!(burn_calls(&m, &inputs), ["abs", "sum_dim"]);
    let m = one_node("g (float[2] x) => (float[2] y) { y = Softsign (x) }");
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(vec![2], Data::F32(vec![1.0, 2.0]))),
    )];
    assert_eq!(burn_calls(&m, &inputs), ["act::softsign"]);
    // After a producer no project writes, the node's calls on its input's inferred type
    // (round 15: ReduceL1 after a Resize).
    let mut m = one_node(
        "g (float[2] x) => (float[1] y) { t = Neg (x)\n y = ReduceL1 <axes: ints = [0]> (t) }",
    );
    mutagraph_ir::infer::infer_model(&mut m, Default::default());
    assert_eq!(burn_calls(&m, &inputs), ["abs", "sum_dim"]);
    // An op the generator does not write: no calls.
    let m = one_node("g (float[2] x) => (float[2] y) { t = Neg (x)\n y = Erf (t) }");
    assert!(burn_calls(&m, &inputs).is_empty());
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

#[test]
fn matmul_is_written_as_the_interpreter_runs_it() {
    let f32s = |shape: Vec<usize>, v: Vec<f32>| Value::Tensor(HostTensor::new(shape, Data::F32(v)));
    // an empty contraction axis: ONNX gives zeros
    let m = one_node(
        "g (float[1,1,1,0] a) => (float[1,1,1,5] y) <float[1,1,0,5] b = {}> { y = MatMul (a, b) }",
    );
    let inputs: NamedValues = vec![("a".into(), f32s(vec![1, 1, 1, 0], vec![]))];
    let want = HostTensor::new(vec![1, 1, 1, 5], Data::F32(vec![0.0; 5]));
    let p = project(&m, &inputs, &expect(&want, "panic")).expect("MatMul is covered");
    for line in [
        "let x = tensor(vec![], [1, 1, 1, 1, 1, 0]);",
        "let z = tensor(vec![], [1, 1, 1, 1, 0, 5]);",
        "let y = Tensor::<B, 6>::empty([1, 1, 1, 1, 1, 0], &x.device())\
         .matmul(Tensor::<B, 6>::empty([1, 1, 1, 1, 0, 5], &z.device()));",
        "let y = y.reshape([1, 1, 1, 1, 1, 5]);",
        "REPRODUCED: burn panics",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    // 1-D by 1-D on integers: [1, K] by [K, 1], the result reshaped to a scalar
    let i64s = |v: Vec<i64>| Value::Tensor(HostTensor::new(vec![3], Data::I64(v)));
    let m = one_node("g (int64[3] a, int64[3] b) => (int64 y) { y = MatMul (a, b) }");
    let inputs: NamedValues = vec![
        ("a".into(), i64s(vec![1, 2, 3])),
        ("b".into(), i64s(vec![4, 5, 6])),
    ];
    let want = HostTensor::new(vec![], Data::I64(vec![32]));
    let p = project(&m, &inputs, &expect(&want, "values")).expect("integer MatMul");
    for line in [
        "Tensor<B, 6, Int>",
        "let y = x.reshape([1, 1, 1, 1, 1, 3]).matmul(z.reshape([1, 1, 1, 1, 3, 1]));",
        "let y = y.reshape([1, 1, 1, 1, 1, 1]);",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    // inner dimensions that differ: the interpreter refuses the node
    let m = one_node("g (float[2,3] a, float[2,3] b) => (float[2,2] y) { y = MatMul (a, b) }");
    let inputs: NamedValues = vec![
        ("a".into(), f32s(vec![2, 3], vec![1.0; 6])),
        ("b".into(), f32s(vec![2, 3], vec![1.0; 6])),
    ];
    assert!(project(&m, &inputs, &expect(&want, "values")).is_none());
}

#[test]
fn mean_variance_normalization_takes_burns_means_axis_by_axis() {
    let m = one_node(
        "g (float[1,1,0] x) => (float[1,1,0] y) \
         { y = MeanVarianceNormalization <axes: ints = [1, -1]> (x) }",
    );
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(vec![1, 1, 0], Data::F32(vec![]))),
    )];
    let want = HostTensor::new(vec![1, 1, 0], Data::F32(vec![]));
    let p = project(&m, &inputs, &expect(&want, "panic")).expect("MVN is covered");
    for line in [
        "let x = tensor(vec![], [1, 1, 1, 1, 1, 0]);",
        "let mean = x.clone().mean_dim(4).mean_dim(5);",
        "let c = x.sub(mean);",
        "let var = c.clone().mul(c.clone()).mean_dim(4).mean_dim(5);",
        "let y = c.div(var.sqrt().add_scalar(1e-9));",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    // the default axes [0, 2, 3] on a rank-3 input: the interpreter refuses the node
    let m =
        one_node("g (float[1,1,0] x) => (float[1,1,0] y) { y = MeanVarianceNormalization (x) }");
    assert!(project(&m, &inputs, &expect(&want, "panic")).is_none());
}

#[test]
fn instance_normalization_reshapes_its_parameters_per_channel() {
    let m = one_node(
        "g (float[1,2,0,1] x) => (float[1,2,0,1] y) <float[2] s = {1, 2}, float[2] b = {0.5, 1}> \
         { y = InstanceNormalization <epsilon: float = 0.5> (x, s, b) }",
    );
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(vec![1, 2, 0, 1], Data::F32(vec![]))),
    )];
    let want = HostTensor::new(vec![1, 2, 0, 1], Data::F32(vec![]));
    let p = project(&m, &inputs, &expect(&want, "panic")).expect("InstanceNormalization");
    for line in [
        "let z = tensor(vec![1.0_f32, 2.0_f32], [1, 1, 1, 1, 1, 2]);",
        "let c = tensor(vec![0.5_f32, 1.0_f32], [1, 1, 1, 1, 1, 2]);",
        "let scale = z.reshape([1, 1, 1, 2, 1, 1]);",
        "let bias = c.reshape([1, 1, 1, 2, 1, 1]);",
        "let mean = x.clone().mean_dim(4).mean_dim(5);",
        "let y = d.div(var.add_scalar(0.5).sqrt()).mul(scale).add(bias);",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    // a bias of another length than the channels: the interpreter refuses the node
    let m = one_node(
        "g (float[1,2,0,1] x) => (float[1,2,0,1] y) <float[2] s = {1, 2}, float[3] b = {0, 0, 0}> \
         { y = InstanceNormalization (x, s, b) }",
    );
    assert!(project(&m, &inputs, &expect(&want, "panic")).is_none());
}

#[test]
fn a_node_after_a_gather_elements_runs_on_burns_gathered_tensor() {
    let m = one_node(
        "g (float[2,3] x) => (float[2,2] y) <int64[2,2] i = {1, -1, 0, 0}> \
         { t = GatherElements <axis: int = 1> (x, i)\n y = Abs (t) }",
    );
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(
            vec![2, 3],
            Data::F32(vec![1.0, -2.0, 3.0, -4.0, 5.0, -6.0]),
        )),
    )];
    let want = HostTensor::new(vec![2, 2], Data::F32(vec![2.0, 3.0, 4.0, 4.0]));
    let p = project(&m, &inputs, &expect(&want, "values")).expect("GatherElements, then Abs");
    let cut = "let cut = data.clone().slice([burn::tensor::Slice::new(0, None, 1), \
               burn::tensor::Slice::new(0, None, 1), burn::tensor::Slice::new(0, None, 1), \
               burn::tensor::Slice::new(0, None, 1), burn::tensor::Slice::new(0, Some(2), 1), \
               burn::tensor::Slice::new(0, Some(3), 1)].as_slice());";
    for line in [
        "let data = tensor(vec![1.0_f32, -2.0_f32, 3.0_f32, -4.0_f32, 5.0_f32, -6.0_f32], [1, 1, 1, 1, 2, 3]);",
        cut,
        // -1 made 2 (an axis of 3)
        "TensorData::new(vec![1_i64, 2_i64, 0_i64, 0_i64], [1, 1, 1, 1, 2, 2])",
        &format!("let x = cut.clone().gather({}, i.clone());", R - 1),
        "let _held = x.clone();",
        "let y = x.abs();",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    // the value the node reads: x[r][i[r][c]]
    let (_, producer) = reproduced(&m, &inputs).expect("two nodes");
    let got = producer.and_then(|p| p.output()).expect("a gathered value");
    assert_eq!(got.shape, vec![2, 2]);
    assert_eq!(got.to_f64s(), Some(vec![-2.0, 3.0, -4.0, -4.0]));
    // an index outside the axis: the interpreter refuses the node
    let m = one_node(
        "g (float[2,3] x) => (float[2,2] y) <int64[2,2] i = {3, 0, 0, 0}> \
         { t = GatherElements <axis: int = 1> (x, i)\n y = Abs (t) }",
    );
    assert!(project(&m, &inputs, &expect(&want, "values")).is_none());
}

#[test]
fn shrink_is_burns_shrink_with_the_node_attributes() {
    let m = one_node(
        "g (float[3] x) => (float[3] y) { y = Shrink <lambd: float = 0.25, bias: float = 0.5> (x) }",
    );
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(vec![3], Data::F32(vec![1.0, -0.1, -2.0]))),
    )];
    let want = HostTensor::new(vec![3], Data::F32(vec![0.5, 0.0, -1.5]));
    let p = project(&m, &inputs, &expect(&want, "values")).expect("Shrink is covered");
    assert!(
        p.main_rs.contains("act::shrink(x, 0.25, 0.5)"),
        "{}",
        p.main_rs
    );
}

#[test]
fn topk_is_written_as_topk_with_indices_and_its_indices_checked_when_the_finding_is_on_them() {
    let m = one_node(
        "g (float[1,4] x) => (float[1,2] v, int64[1,2] i) <int64[1] k = {2}> \
         { v, i = TopK <axis: int = 1, largest: int = 0> (x, k) }",
    );
    let inputs: NamedValues = vec![(
        "x".into(),
        Value::Tensor(HostTensor::new(
            vec![1, 4],
            Data::F32(vec![0.0, -0.0, 1.0, 0.0]),
        )),
    )];
    let want = HostTensor::new(vec![1, 2], Data::I64(vec![0, 1]));
    let p = project(&m, &inputs, &expect(&want, "values")).expect("TopK is covered");
    for line in [
        &format!("let (v, i) = x.neg().topk_with_indices(2, {});", R - 1),
        "let y = i;",
        "expected: Vec<f64> = vec![0.0_f64, 1.0_f64]",
    ] {
        assert!(p.main_rs.contains(line), "{line} not in {}", p.main_rs);
    }
    // on the values output: the values, negated back
    let want = HostTensor::new(vec![1, 2], Data::F32(vec![0.0, -0.0]));
    let p = project(&m, &inputs, &expect(&want, "values")).expect("TopK is covered");
    assert!(p.main_rs.contains("let y = v.neg();"), "{}", p.main_rs);
}

#[test]
fn an_empty_matmul_operand_is_made_afresh_not_reshaped() {
    let m = one_node("g (float[0] x, float[0] z) => (float y) { y = MatMul (x, z) }");
    let empty = || Value::Tensor(HostTensor::new(vec![0], Data::F32(vec![])));
    let inputs: NamedValues = vec![("x".into(), empty()), ("z".into(), empty())];
    let want = HostTensor::new(vec![], Data::F32(vec![0.0]));
    let p = project(&m, &inputs, &expect(&want, "panic")).expect("MatMul is covered");
    // burn would read the 0 of [.., 0, 1] as "keep this axis"
    assert!(
        p.main_rs.contains(&format!(
            "Tensor::<B, {R}>::empty([1, 1, 1, 1, 0, 1], &z.device())"
        )),
        "{}",
        p.main_rs
    );
    assert!(!p.main_rs.contains("z.reshape("), "{}", p.main_rs);
}
