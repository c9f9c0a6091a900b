//! The planted-bug backends against the reference: identical where the bug does not apply,
//! different (as documented) where it does.
use mutagraph_backends::backend::Backend;
use mutagraph_backends::catalog::{self, Config, PLANTED};
use mutagraph_backends::planted;
use mutagraph_backends::reference::Reference;
use mutagraph_backends::value::{Data, HostTensor, NamedValues, Value};
use mutagraph_ir::attr::AttrValue;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;
use mutagraph_ir::patch::{Patch, PatchOp};
use mutagraph_ir::pb;
use mutagraph_ir::types::{Dim, ValueType};

fn vi(name: &str, shape: Option<&[usize]>) -> pb::ValueInfoProto {
    let dims = shape.map(|s| s.iter().map(|&d| Dim::Known(d as i64)).collect());
    pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ValueType::t(DType::F32, dims).to_proto()),
        ..Default::default()
    }
}

/// A one-node model: f32 graph inputs, optional i64 initializers, one f32 output of unknown
/// shape.
fn model(
    opset: i64,
    node: Node,
    inputs: &[(&str, &[usize])],
    inits: &[(&str, Vec<i64>)],
) -> Vec<u8> {
    let mut m = Model::new(opset);
    let mut p = Patch::new();
    for (n, s) in inputs {
        p.push(PatchOp::AddInput(vi(n, Some(s))));
    }
    for (n, v) in inits {
        let t = HostTensor::new(vec![v.len()], Data::I64(v.clone()));
        p.push(PatchOp::AddInitializer(t.to_proto(n)));
    }
    let out = node.outputs[0].clone();
    p.push(PatchOp::AddNode(node));
    p.push(PatchOp::AddOutput(vi(&out, None)));
    m.apply(&p).expect("valid model");
    m.to_bytes()
}

fn run(b: &mut dyn Backend, bytes: &[u8], inputs: &[(&str, &[usize], Vec<f32>)]) -> HostTensor {
    try_run(b, bytes, inputs).expect("run")
}

fn try_run(
    b: &mut dyn Backend,
    bytes: &[u8],
    inputs: &[(&str, &[usize], Vec<f32>)],
) -> Result<HostTensor, mutagraph_backends::BackendError> {
    let mut p = b.prepare(bytes).expect("prepare");
    let ins: NamedValues = inputs
        .iter()
        .map(|(n, s, v)| {
            let t = HostTensor::new(s.to_vec(), Data::F32(v.clone()));
            (n.to_string(), Value::Tensor(t))
        })
        .collect();
    let out = p.run(&ins)?;
    match &out[0].1 {
        Value::Tensor(t) => Ok(t.clone()),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn f32s(t: &HostTensor) -> &[f32] {
    match &t.data {
        Data::F32(v) => v,
        _ => panic!("not f32: {t}"),
    }
}

/// Deterministic values in (-1, 1) (xorshift).
fn uniform(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn create(name: &str) -> Box<dyn Backend> {
    catalog::create(name, &Config::default()).expect(name)
}

// ---- Conv ----

fn conv(pads: Option<[i64; 4]>, auto_pad: Option<&str>) -> Vec<u8> {
    let mut n = Node::new("Conv", &["x", "w"], &["y"]);
    if let Some(p) = pads {
        n = n.with_attr("pads", AttrValue::Ints(p.to_vec()));
    }
    if let Some(a) = auto_pad {
        n = n.with_attr("auto_pad", AttrValue::String(a.as_bytes().to_vec()));
    }
    model(11, n, &[("x", &[1, 2, 5, 5]), ("w", &[3, 2, 3, 3])], &[])
}

fn conv_inputs(seed: u64) -> Vec<(&'static str, &'static [usize], Vec<f32>)> {
    vec![
        ("x", &[1, 2, 5, 5], uniform(50, seed)),
        ("w", &[3, 2, 3, 3], uniform(54, seed + 1)),
    ]
}

#[test]
fn conv_pad_is_exact_without_pads() {
    let ins = conv_inputs(1);
    for m in [conv(None, None), conv(Some([0; 4]), None)] {
        let want = run(&mut Reference::new(), &m, &ins);
        let got = run(create("planted-conv-pad").as_mut(), &m, &ins);
        assert_eq!(got.shape, vec![1, 3, 3, 3]);
        assert_eq!(got, want);
    }
}

#[test]
fn conv_pad_shifts_the_window_when_padded() {
    let ins = conv_inputs(2);
    for m in [conv(Some([1; 4]), None), conv(None, Some("SAME_UPPER"))] {
        let want = run(&mut Reference::new(), &m, &ins);
        let got = run(create("planted-conv-pad").as_mut(), &m, &ins);
        assert_eq!(got.shape, want.shape);
        assert_eq!(got.shape, vec![1, 3, 5, 5]);
        let d = max_abs_diff(f32s(&got), f32s(&want));
        assert!(d > 1e-3, "max abs diff {d}");
    }
}

#[test]
fn conv_pad_by_hand_in_1d() {
    // x = [1, 2, 3, 4], w = [1, 1], pads [1, 0]: the reference sums (0,1), (1,2), (2,3), (3,4);
    // the planted one uses pads [0, 1] and sums (1,2), (2,3), (3,4), (4,0).
    let n = Node::new("Conv", &["x", "w"], &["y"]).with_attr("pads", AttrValue::Ints(vec![1, 0]));
    let m = model(11, n, &[("x", &[1, 1, 4]), ("w", &[1, 1, 2])], &[]);
    let ins = [
        ("x", &[1usize, 1, 4][..], vec![1.0, 2.0, 3.0, 4.0]),
        ("w", &[1, 1, 2][..], vec![1.0, 1.0]),
    ];
    let want = run(&mut Reference::new(), &m, &ins);
    let got = run(&mut planted::conv_pad(), &m, &ins);
    assert_eq!(f32s(&want), [1.0, 3.0, 5.0, 7.0]);
    assert_eq!(f32s(&got), [3.0, 5.0, 7.0, 4.0]);
}

// ---- Softmax ----

fn softmax(opset: i64) -> Vec<u8> {
    let n = Node::new("Softmax", &["x"], &["y"]).with_attr("axis", AttrValue::Int(1));
    model(opset, n, &[("x", &[4, 8])], &[])
}

#[test]
fn softmax_agrees_on_moderate_inputs() {
    for opset in [11, 13] {
        let m = softmax(opset);
        let ins = [("x", &[4usize, 8][..], uniform(32, 3))];
        let want = run(&mut Reference::new(), &m, &ins);
        let got = run(create("planted-softmax").as_mut(), &m, &ins);
        assert_eq!(got.shape, want.shape);
        let rel = f32s(&got)
            .iter()
            .zip(f32s(&want))
            .map(|(a, b)| ((a - b) / b).abs())
            .fold(0.0, f32::max);
        assert!(rel < 1e-5, "opset {opset}: max rel error {rel}");
    }
}

#[test]
fn softmax_overflows_to_nan_on_large_inputs() {
    let m = softmax(13);
    let mut x = uniform(32, 4);
    x[8 + 5] = 100.0; // row 1
    let ins = [("x", &[4usize, 8][..], x)];
    let want = run(&mut Reference::new(), &m, &ins);
    let got = run(create("planted-softmax").as_mut(), &m, &ins);
    assert!(f32s(&want).iter().all(|v| v.is_finite()));
    assert!((f32s(&want)[13] - 1.0).abs() < 1e-6);
    let (g, w) = (f32s(&got), f32s(&want));
    assert!(g[13].is_nan(), "{g:?}");
    // Only the row holding the large input is wrong.
    assert!(g[8..16].iter().all(|v| !v.is_finite() || *v == 0.0));
    assert!(max_abs_diff(&g[..8], &w[..8]) < 1e-6);
    assert!(max_abs_diff(&g[16..], &w[16..]) < 1e-6);
}

// ---- ReduceMean ----

fn reduce_mean(opset: i64, axes: &[i64]) -> Vec<u8> {
    let x: &[(&str, &[usize])] = &[("x", &[2, 3, 4])];
    if opset < 18 {
        let n = Node::new("ReduceMean", &["x"], &["y"])
            .with_attr("axes", AttrValue::Ints(axes.to_vec()));
        model(opset, n, x, &[])
    } else {
        let n = Node::new("ReduceMean", &["x", "axes"], &["y"]);
        model(opset, n, x, &[("axes", axes.to_vec())])
    }
}

fn reduce_both(opset: i64, axes: &[i64]) -> (HostTensor, HostTensor) {
    let m = reduce_mean(opset, axes);
    let ins = [("x", &[2usize, 3, 4][..], uniform(24, 5))];
    let want = run(&mut Reference::new(), &m, &ins);
    let got = run(create("planted-reducemean").as_mut(), &m, &ins);
    (want, got)
}

#[test]
fn reduce_mean_is_exact_on_positive_axes() {
    for opset in [13, 18] {
        for axes in [&[1][..], &[0, 2], &[2]] {
            let (want, got) = reduce_both(opset, axes);
            assert_eq!(got, want, "opset {opset}, axes {axes:?}");
        }
    }
}

#[test]
fn reduce_mean_divides_by_the_wrong_axis_for_negative_axes() {
    for opset in [13, 18] {
        // -1 sums over axis 2 (length 4) but divides by the length of axis 1 (3).
        let (want, got) = reduce_both(opset, &[-1]);
        assert_eq!(want.shape, vec![2, 3, 1], "opset {opset}");
        assert_eq!(got.shape, want.shape, "opset {opset}");
        let (w, g) = (want.to_f64s().unwrap(), got.to_f64s().unwrap());
        for (a, b) in w.iter().zip(&g) {
            assert!(
                (b - a * 4.0 / 3.0).abs() < 1e-5,
                "opset {opset}: {a} vs {b}"
            );
        }
        assert!(w.iter().zip(&g).any(|(a, b)| (a - b).abs() > 1e-3));
        // -3 wraps to the last axis (length 4) instead of axis 0 (length 2).
        let (want, got) = reduce_both(opset, &[-3]);
        let (w, g) = (want.to_f64s().unwrap(), got.to_f64s().unwrap());
        for (a, b) in w.iter().zip(&g) {
            assert!(
                (b - a * 2.0 / 4.0).abs() < 1e-5,
                "opset {opset}: {a} vs {b}"
            );
        }
    }
}

// ---- catalog ----

#[test]
fn catalog_creates_planted_backends_outside_the_default_set() {
    let default = catalog::default_set();
    let mut reference = Reference::new();
    let ops = reference.capabilities();
    for expected in [
        "planted-conv-pad",
        "planted-maxpool-same",
        "planted-reducemean",
        "planted-softmax",
        "planted-rnn-clip",
        "planted-two",
    ] {
        assert!(
            PLANTED.contains(&expected),
            "{expected} missing from PLANTED"
        );
    }
    assert_eq!(PLANTED.len(), 6);
    for &name in PLANTED {
        assert!(catalog::is_compiled(name), "{name}");
        assert!(!default.contains(&name), "{name} in the default set");
        assert!(!catalog::ALL.contains(&name), "{name} in ALL");
        let mut b = create(name);
        assert_eq!(b.name(), name);
        assert_eq!(b.version(), planted::VERSION);
        let caps = b.capabilities();
        assert_eq!(caps.ops, ops.ops, "{name}");
    }
    // The plain reference keeps its name and version.
    assert_eq!(reference.name(), "reference");
    assert_ne!(reference.version(), planted::VERSION);
}

// ---- MaxPool SAME without dilation ----

fn pool_shape(backend: &str, attrs: &str) -> Vec<usize> {
    let src = format!(
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[1, 1, 16, 16] x) => (float[1, 1, 8, 8] y) \
         {{ y = MaxPool <kernel_shape: ints = [3, 3], strides: ints = [2, 2], {attrs}> (x) }}"
    );
    let m = mutagraph_ir::text::parse_model(&src).unwrap();
    let mut b = create(backend);
    let mut p = b.prepare(&m.to_bytes()).unwrap();
    let x = HostTensor::new(
        vec![1, 1, 16, 16],
        Data::F32((0..256).map(|v| v as f32).collect()),
    );
    let out = p.run(&vec![("x".to_string(), Value::Tensor(x))]).unwrap();
    out[0].1.tensor().unwrap().shape.clone()
}

#[test]
fn maxpool_same_pads_as_if_undilated() {
    let same_dilated = "dilations: ints = [3, 3], auto_pad: string = \"SAME_UPPER\"";
    assert_eq!(pool_shape("reference", same_dilated), [1, 1, 8, 8]);
    // Pads from the 3-wide kernel (total 1) applied to the 7-wide dilated window: 6.
    assert_eq!(
        pool_shape(planted::MAXPOOL_SAME, same_dilated),
        [1, 1, 6, 6]
    );
    // Without dilation, or with explicit pads, it is the reference.
    for attrs in [
        "auto_pad: string = \"SAME_LOWER\"",
        "dilations: ints = [3, 3], pads: ints = [3, 3, 3, 3]",
    ] {
        assert_eq!(
            pool_shape(planted::MAXPOOL_SAME, attrs),
            pool_shape("reference", attrs),
            "{attrs}"
        );
    }
}
