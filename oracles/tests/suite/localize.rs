//! Localization: the first diverging node is blamed, unless the reference reproduces the
//! backend's output from the backend's own inputs (amplified rounding: `unstable`).
use mutagraph_backends::compare::Tolerance;
use mutagraph_backends::value::{Data, HostTensor, NamedValues, Value};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;
use mutagraph_ir::patch::{Patch, PatchOp};
use mutagraph_ir::pb;
use mutagraph_ir::slice::{expose_all, extract};
use mutagraph_ir::types::{TensorType, ValueType};
use mutagraph_oracles::Kind;
use mutagraph_oracles::localize::{InProcess, Verdict, localize, model_sensitivity, run_reference};

fn vi(name: &str, n: i64) -> pb::ValueInfoProto {
    pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ValueType::Tensor(TensorType::fixed(DType::F32, &[n])).to_proto()),
        ..Default::default()
    }
}

/// x -> Relu(r) -> Neg(n) -> Abs(y)
fn chain(ops: &[(&str, &str, &str)], n: i64) -> Model {
    let mut m = Model::new(17);
    m.graph.inputs.push(vi("x", n));
    m.graph.outputs.push(vi(ops.last().unwrap().2, n));
    let mut p = Patch::new();
    for (op, i, o) in ops {
        p.push(PatchOp::AddNode(Node::new(op, &[i], &[o])));
    }
    m.apply(&p).unwrap();
    m
}

fn t(v: &[f32]) -> Value {
    Value::Tensor(HostTensor::new(vec![v.len()], Data::F32(v.to_vec())))
}

fn set(values: &mut NamedValues, name: &str, v: &[f32]) {
    let slot = values.iter_mut().find(|(n, _)| n == name).unwrap();
    slot.1 = t(v);
}

#[test]
fn the_first_diverging_node_is_blamed_with_its_change_rate() {
    let m = chain(
        &[("Relu", "x", "r"), ("Neg", "r", "n"), ("Abs", "n", "y")],
        3,
    );
    let inputs = vec![("x".to_string(), t(&[-1.0, 0.5, 2.0]))];
    let (exposed, list) = expose_all(&m).unwrap();
    assert_eq!(list.len(), 2, "r and n are exposed besides y");
    let want = run_reference(&exposed, &inputs).unwrap();
    let mut got = want.clone();
    // The backend's Neg is wrong on one element; Abs passes it on.
    set(&mut got, "n", &[-0.0, -0.5, -3.0]);
    set(&mut got, "y", &[0.0, 0.5, 3.0]);
    let l = localize(
        &m,
        Kind::Inconsistency,
        &inputs,
        &want,
        &got,
        Tolerance::APPROXIMATE,
    );
    assert_eq!(l.verdict, Verdict::Localized);
    let loc = l.location.unwrap();
    assert_eq!((loc.op_type.as_str(), loc.value.as_str()), ("Neg", "n"));
    // Values up to the divergence, with How-Far's D and R: Relu agrees (D = 0), Neg is off
    // by 1/3 on average, so R = (1/3) / 1e-7.
    let names: Vec<&str> = l.values.iter().map(|v| v.value.as_str()).collect();
    assert_eq!(names, ["r", "n"]);
    assert!(!l.values[0].diverges && l.values[1].diverges);
    let (v, r) = l.max_r.unwrap();
    assert_eq!(v, "n");
    assert!(r > 1e3, "{r}");
}

#[test]
fn amplified_rounding_is_unstable_not_a_bug() {
    // x -> Sqrt(s) -> Floor(y): the backend's Sqrt is a hair above 1 where the reference is a
    // hair below; Floor turns that into 1 vs 0. Run on the backend's Sqrt output, the
    // reference's Floor gives the backend's answer: rounding, not a Floor bug.
    let m = chain(&[("Sqrt", "x", "s"), ("Floor", "s", "y")], 1);
    let inputs = vec![("x".to_string(), t(&[0.99999994]))];
    let want: NamedValues = vec![
        ("y".to_string(), t(&[0.0])),
        ("s".to_string(), t(&[0.99999997])),
    ];
    let got: NamedValues = vec![
        ("y".to_string(), t(&[1.0])),
        ("s".to_string(), t(&[1.0000001])),
    ];
    let l = localize(
        &m,
        Kind::Inconsistency,
        &inputs,
        &want,
        &got,
        Tolerance::APPROXIMATE,
    );
    assert_eq!(l.verdict, Verdict::Unstable);
    assert_eq!(l.location.unwrap().op_type, "Floor");
    // The same divergence with a backend Floor that is simply wrong is localized.
    let got: NamedValues = vec![
        ("y".to_string(), t(&[1.0])),
        ("s".to_string(), t(&[0.99999997])),
    ];
    let l = localize(
        &m,
        Kind::Inconsistency,
        &inputs,
        &want,
        &got,
        Tolerance::APPROXIMATE,
    );
    assert_eq!(l.verdict, Verdict::Localized);
}

#[test]
fn agreeing_intermediates_are_not_reproduced_and_nan_uses_new_nonfinite() {
    let m = chain(&[("Relu", "x", "r"), ("Neg", "r", "y")], 2);
    let inputs = vec![("x".to_string(), t(&[1.0, 2.0]))];
    let (exposed, _) = expose_all(&m).unwrap();
    let want = run_reference(&exposed, &inputs).unwrap();
    let l = localize(
        &m,
        Kind::Inconsistency,
        &inputs,
        &want,
        &want,
        Tolerance::APPROXIMATE,
    );
    assert_eq!(l.verdict, Verdict::NotReproduced);
    let mut got = want.clone();
    set(&mut got, "r", &[1.0, f32::NAN]);
    set(&mut got, "y", &[-1.0, f32::NAN]);
    let l = localize(&m, Kind::Nan, &inputs, &want, &got, Tolerance::APPROXIMATE);
    assert_eq!(l.verdict, Verdict::Localized);
    assert_eq!(l.location.unwrap().op_type, "Relu");
}

#[test]
fn extract_makes_a_typed_single_node_model() {
    let m = chain(
        &[("Relu", "x", "r"), ("Neg", "r", "n"), ("Abs", "n", "y")],
        3,
    );
    let neg = m.graph.producer("n").unwrap();
    let one = extract(&m, &[neg]).unwrap();
    assert_eq!(one.graph.node_count(), 1);
    let ins: Vec<_> = one
        .graph
        .real_inputs()
        .iter()
        .map(|v| v.name.clone().unwrap())
        .collect();
    assert_eq!(ins, ["r"]);
    let outs: Vec<_> = one
        .graph
        .outputs
        .iter()
        .map(|v| v.name.clone().unwrap())
        .collect();
    assert_eq!(outs, ["n"]);
    let back = Model::from_bytes(&one.to_bytes()).unwrap();
    mutagraph_ir::validate::validate(&back).unwrap();
    let out = run_reference(&one, &vec![("r".to_string(), t(&[1.0, 0.0, 2.0]))]).unwrap();
    assert_eq!(
        out[0].1.tensor().unwrap().to_f64s().unwrap(),
        vec![-1.0, 0.0, -2.0]
    );
}

#[test]
fn nan_into_an_op_with_unspecified_nan_handling_is_undefined_not_a_bug() {
    // x -> Neg(a) -> Relu(y): the input carries a NaN; the backend's Relu turns it into 0.
    let m = chain(&[("Neg", "x", "a"), ("Relu", "a", "y")], 3);
    let inputs = vec![("x".to_string(), t(&[f32::NAN, -1.0, 2.0]))];
    let (exposed, _) = expose_all(&m).unwrap();
    let want = run_reference(&exposed, &inputs).unwrap();
    let mut got = want.clone();
    set(&mut got, "y", &[0.0, 1.0, 0.0]);
    let l = localize(
        &m,
        Kind::Inconsistency,
        &inputs,
        &want,
        &got,
        Tolerance::APPROXIMATE,
    );
    assert!(
        matches!(&l.verdict, Verdict::Undefined(why) if why.contains("Relu")),
        "{:?}",
        l.verdict
    );
    assert_eq!(l.location.unwrap().op_type, "Relu");
}

#[test]
fn nan_through_plain_arithmetic_is_still_a_finding() {
    // Neg of NaN is NaN by IEEE rules: a backend that gives a number is wrong.
    let m = chain(&[("Abs", "x", "a"), ("Neg", "a", "y")], 2);
    let inputs = vec![("x".to_string(), t(&[f32::NAN, 1.0]))];
    let (exposed, _) = expose_all(&m).unwrap();
    let want = run_reference(&exposed, &inputs).unwrap();
    let mut got = want.clone();
    set(&mut got, "y", &[0.0, -1.0]);
    let l = localize(
        &m,
        Kind::Inconsistency,
        &inputs,
        &want,
        &got,
        Tolerance::APPROXIMATE,
    );
    assert_eq!(l.verdict, Verdict::Localized, "{:?}", l.verdict);
    assert_eq!(l.location.unwrap().op_type, "Neg");
}

fn text_model(body: &str) -> Model {
    let src = format!("<ir_version: 8, opset_import: [\"\" : 17]>\n{body}");
    mutagraph_ir::text::parse_model(&src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn shaped(shape: &[usize], v: &[f32]) -> Value {
    Value::Tensor(HostTensor::new(shape.to_vec(), Data::F32(v.to_vec())))
}

/// Localizes a one-node model whose reference output is computed and whose backend output is
/// `got` (the node's output `y`).
fn verdict(body: &str, kind: Kind, inputs: NamedValues, got: Value) -> Verdict {
    let m = text_model(body);
    let want = run_reference(&m, &inputs).unwrap();
    let got: NamedValues = vec![("y".to_string(), got)];
    localize(&m, kind, &inputs, &want, &got, Tolerance::APPROXIMATE).verdict
}

#[test]
fn overflow_near_the_float_limit_is_unstable() {
    // The mean of two values near f32::MAX overflows an f32 sum; f64 stays finite.
    let body = "g (float[1, 1, 1, 2] x) => (float[1, 1, 1, 1] y) { y = GlobalAveragePool (x) }";
    let big = vec![("x".to_string(), shaped(&[1, 1, 1, 2], &[3e38, 3e38]))];
    let inf = shaped(&[1, 1, 1, 1], &[f32::INFINITY]);
    assert_eq!(
        verdict(body, Kind::Nan, big, inf.clone()),
        Verdict::Unstable
    );
    // An Inf from ordinary values is a finding.
    let small = vec![("x".to_string(), shaped(&[1, 1, 1, 2], &[100.0, 100.0]))];
    assert_eq!(verdict(body, Kind::Nan, small, inf), Verdict::Localized);
    // A product of moderate values overflows f32 too.
    // A product whose factors above 1 overflow f32 before the zero comes: exact 0, f32 NaN.
    let body = "g (float[3] x) => (float y) { y = ReduceProd <keepdims: int = 0> (x) }";
    let v = vec![("x".to_string(), shaped(&[3], &[1e30, 1e30, 0.0]))];
    let got = Value::Tensor(HostTensor::new(vec![], Data::F32(vec![f32::NAN])));
    assert_eq!(verdict(body, Kind::Nan, v, got), Verdict::Unstable);
}

#[test]
fn ill_conditioned_ops_are_unstable() {
    // Tan a hair below pi/2: four f32 rounding steps move the reference's result by far more
    // than the tolerance, so any f32 backend may land anywhere there.
    let body = "g (float[1] x) => (float[1] y) { y = Tan (x) }";
    let x = vec![("x".to_string(), shaped(&[1], &[1.570_796_2]))];
    let want = run_reference(&text_model(body), &x).unwrap();
    let w = want[0].1.tensor().unwrap().to_f64s().unwrap()[0];
    let off = shaped(&[1], &[(w * 1.2) as f32]);
    assert_eq!(
        verdict(body, Kind::Inconsistency, x, off),
        Verdict::Unstable
    );
    // Away from the pole the same relative error is a finding.
    let x = vec![("x".to_string(), shaped(&[1], &[0.5]))];
    let off = shaped(&[1], &[0.5f32.tan() * 1.2]);
    assert_eq!(
        verdict(body, Kind::Inconsistency, x, off),
        Verdict::Localized
    );
}

#[test]
fn results_onnx_leaves_open_are_undefined() {
    let undefined = |v: Verdict| matches!(v, Verdict::Undefined(_));
    // An Inf scale meets (x - mean) = 0 in one order of evaluation and not in another.
    let bn = "g (float[1, 2, 1, 1] x) => (float[1, 2, 1, 1] y) \
              <float[2] s = {inf, 1}, float[2] b = {0, 0}, float[2] m = {0, 0}, float[2] v = {1, 1}> \
              { y = BatchNormalization (x, s, b, m, v) }";
    let x = vec![("x".to_string(), shaped(&[1, 2, 1, 1], &[0.0, 1.0]))];
    let zero = shaped(&[1, 2, 1, 1], &[0.0, 1.0]);
    assert!(undefined(verdict(bn, Kind::Inconsistency, x, zero)));
    // A NaN weight against zero padding.
    let conv = "g (float[1, 1, 1, 1] x) => (float[1, 1, 1, 1] y) \
                <float[1, 1, 3, 3] w = {nan, 0, 0, 0, 1, 0, 0, 0, 0}> \
                { y = Conv <pads: ints = [1, 1, 1, 1]> (x, w) }";
    let x = vec![("x".to_string(), shaped(&[1, 1, 1, 1], &[2.0]))];
    let nan = shaped(&[1, 1, 1, 1], &[f32::NAN]);
    assert!(undefined(verdict(conv, Kind::Nan, x, nan)));
    // A real-valued reduction of integers: how it is rounded is open.
    let mean = "g (int32[3] x) => (int32 y) { y = ReduceMean <keepdims: int = 0> (x) }";
    let x = vec![(
        "x".to_string(),
        Value::Tensor(HostTensor::new(vec![3], Data::I32(vec![1, 1, 2]))),
    )];
    let got = Value::Tensor(HostTensor::new(vec![], Data::I32(vec![2])));
    assert!(undefined(verdict(mean, Kind::Inconsistency, x, got)));
    // Resize with align_corners down to one element divides 0 by 0.
    let resize = "g (float[1, 1, 1, 3] x) => (float[1, 1, 1, 1] y) <float[4] s = {1, 1, 1, 0.5}> \
                  { y = Resize <mode: string = \"linear\", coordinate_transformation_mode: string = \"align_corners\"> (x, \"\", s) }";
    let x = vec![("x".to_string(), shaped(&[1, 1, 1, 3], &[1.0, 2.0, 3.0]))];
    let got = shaped(&[1, 1, 1, 1], &[2.0]);
    assert!(undefined(verdict(resize, Kind::Inconsistency, x, got)));
    // ReduceLogSum told not to reduce: the text keeps the input (0), the function body takes
    // its log (-inf, as ONNX Runtime gives).
    let noop = "g (float[1] x) => (float[1] y) \
                { y = ReduceLogSum <noop_with_empty_axes: int = 1> (x) }";
    let x = vec![("x".to_string(), shaped(&[1], &[0.0]))];
    let got = shaped(&[1], &[f32::NEG_INFINITY]);
    assert!(undefined(verdict(noop, Kind::Nan, x, got)));
}

#[test]
fn half_precision_statistics_are_compared_at_half_precision() {
    let body = |stash: i64| {
        format!(
            "g (float[1, 4] x) => (float[1, 4] y) <float[4] s = {{1, 1, 1, 1}}> \
             {{ y = LayerNormalization <stash_type: int = {stash}> (x, s) }}"
        )
    };
    let x = || vec![("x".to_string(), shaped(&[1, 4], &[0.1, 0.2, 0.3, 0.4]))];
    let m = text_model(&body(1));
    let want = run_reference(&m, &x()).unwrap();
    let w = want[0].1.tensor().unwrap().to_f64s().unwrap();
    // Off by 2 %: beyond `approximate`, within `very-approximate` (f16 statistics).
    let off = shaped(
        &[1, 4],
        &w.iter().map(|v| (v * 1.02) as f32).collect::<Vec<_>>(),
    );
    assert_eq!(
        verdict(&body(10), Kind::Inconsistency, x(), off.clone()),
        Verdict::Unstable
    );
    assert_eq!(
        verdict(&body(1), Kind::Inconsistency, x(), off),
        Verdict::Localized
    );
}

#[test]
fn ill_conditioning_is_measured_in_the_inputs_own_precision() {
    // Atanh of a float16 just below 1: four float16 rounding steps move the result from 3.8 to
    // 3.2 or NaN, so a backend 3 % off is within what float16 inputs determine. Four f32 steps
    // would move it by 1e-4 only: the nudge must follow the element type.
    let body = "g (float16[1] x) => (float16[1] y) { y = Atanh (x) }";
    let f16 = |v: f64| Value::Tensor(HostTensor::from_f64s(DType::F16, vec![1], &[v]).unwrap());
    let x = vec![("x".to_string(), f16(0.999))];
    let want = run_reference(&text_model(body), &x).unwrap();
    let w = want[0].1.tensor().unwrap().to_f64s().unwrap()[0];
    assert!(w > 3.5, "{w}");
    assert_eq!(
        verdict(body, Kind::Inconsistency, x, f16(w * 0.97)),
        Verdict::Unstable
    );
    // Away from 1 the same error is a finding.
    let x = vec![("x".to_string(), f16(0.25))];
    assert_eq!(
        verdict(body, Kind::Inconsistency, x, f16(0.25f64.atanh() * 0.97)),
        Verdict::Localized
    );
}

#[test]
fn a_model_whose_nudge_turns_its_output_nan_sits_on_a_singularity() {
    // y = Sqrt(x − c) with x one rounding above c: finite, but a nudge of a few roundings takes
    // x − c below zero somewhere (NaN). The model's movement is then unbounded; with x far
    // above c it is small.
    let m = text_model(
        "g (float[8] x) => (float[8] y) <float[8] c = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}> {
            d = Sub (x, c)
            y = Sqrt (d)
        }",
    );
    let moves = |x: f32| {
        let inputs: NamedValues = vec![("x".into(), shaped(&[8], &[x; 8]))];
        let base = run_reference(&m, &inputs).expect("the reference runs");
        model_sensitivity(&m, &inputs, &base, &mut InProcess).expect("the nudged model runs")
    };
    assert_eq!(moves(1.0 + f32::EPSILON), f64::INFINITY);
    assert!(moves(5.0) < 1e-5, "{}", moves(5.0));
}

#[test]
fn a_divergence_later_nodes_erase_is_not_what_the_output_shows() {
    // a = Abs(x) diverges but only reaches the output times zero; n = Neg(x) diverges and
    // reaches it: the output's divergence starts at n (round 9: tract's ReduceMin of an
    // all-infinite slice erased downstream, the output wrong from a later GlobalLpPool; the
    // bundle filed on the ReduceMin was not what the original showed).
    let mut m = Model::new(17);
    m.graph.inputs.push(vi("x", 2));
    m.graph.outputs.push(vi("y", 2));
    let zero = HostTensor::new(vec![2], Data::F32(vec![0.0, 0.0]));
    let mut p = Patch::new();
    p.push(PatchOp::AddInitializer(zero.to_proto("k")));
    for (op, ins, out) in [
        ("Abs", &["x"][..], "a"),
        ("Mul", &["a", "k"][..], "z"),
        ("Neg", &["x"][..], "n"),
        ("Add", &["z", "n"][..], "y"),
    ] {
        p.push(PatchOp::AddNode(Node::new(op, ins, &[out])));
    }
    m.apply(&p).unwrap();
    let inputs = vec![("x".to_string(), t(&[1.0, 2.0]))];
    let (exposed, _) = expose_all(&m).unwrap();
    let want = run_reference(&exposed, &inputs).unwrap();
    let mut got = want.clone();
    set(&mut got, "a", &[5.0, 5.0]);
    set(&mut got, "n", &[-3.0, -3.0]);
    set(&mut got, "y", &[-3.0, -3.0]);
    let at = |got: &NamedValues| {
        let l = localize(
            &m,
            Kind::Inconsistency,
            &inputs,
            &want,
            got,
            Tolerance::APPROXIMATE,
        );
        assert_eq!(l.verdict, Verdict::Localized);
        l.location.unwrap().op_type
    };
    assert_eq!(at(&got), "Neg");
    // Without a chain to the output (the output itself right), the first divergence.
    set(&mut got, "n", &[-1.0, -2.0]);
    set(&mut got, "y", &[-1.0, -2.0]);
    assert_eq!(at(&got), "Abs");
}

/// ONNX Runtime's fused ops inherit their activation's open NaN handling, and its dynamic
/// quantization has none for NaN: a NaN reaching either is undefined, not a bug (round 10: a
/// campaign filed FusedGemm(Relu) turning a NaN into NaN where our Relu gave 0, and
/// DynamicQuantizeMatMul quantizing a NaN to a finite value).
#[test]
fn nan_into_a_fused_contrib_op_is_undefined() {
    for (op, attrs, b) in [
        (
            "FusedGemm",
            "<activation: string = \"Relu\">",
            "<float[3, 3] w = {1, 0, 0, 0, 1, 0, 0, 0, 1}>",
        ),
        (
            "DynamicQuantizeMatMul",
            "",
            "<int8[3, 3] w = {1, 0, 0, 0, 1, 0, 0, 0, 1}, float s = {0.5}>",
        ),
    ] {
        let scale = if op == "DynamicQuantizeMatMul" {
            ", s"
        } else {
            ""
        };
        let m = mutagraph_ir::text::parse_model(&format!(
            "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n\
             g (float[1, 3] x) => (float[1, 3] y)\n{b}\n\
             {{ a = Neg (x)\n y = com.microsoft.{op} {attrs} (a, w{scale}) }}"
        ))
        .unwrap();
        let inputs = vec![(
            "x".to_string(),
            Value::Tensor(HostTensor::new(
                vec![1, 3],
                Data::F32(vec![f32::NAN, -1.0, 2.0]),
            )),
        )];
        let (exposed, _) = expose_all(&m).unwrap();
        let want = run_reference(&exposed, &inputs).unwrap();
        let mut got = want.clone();
        for (n, v) in got.iter_mut().filter(|(n, _)| n == "y") {
            *v = Value::Tensor(HostTensor::new(vec![1, 3], Data::F32(vec![0.5, 1.0, -2.0])));
            let _ = n;
        }
        let l = localize(
            &m,
            Kind::Inconsistency,
            &inputs,
            &want,
            &got,
            Tolerance::APPROXIMATE,
        );
        assert!(
            matches!(&l.verdict, Verdict::Undefined(why) if why.contains(op)),
            "{op}: {:?} at {:?}",
            l.verdict,
            l.location
        );
    }
}
