//! Bug-bundle writers: `.npz` round trips (in Rust and through numpy), `.pb` inputs, the
//! generated `repro.py` run end to end with the Python `onnxruntime` and `tract` packages, and
//! `REPORT.md`.
//!
//! The Python checks need `python3` with numpy, onnx, onnxruntime and tract
//! (`pip install numpy onnx onnxruntime tract==0.23.9`); they fail, never skip, when those are
//! missing.
use half::{bf16, f16};
use mutagraph_backends::value::{Data, HostTensor, Value};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::types::{TensorType, ValueType};
use mutagraph_mutators::builder::GraphBuilder;
use mutagraph_oracles::bundle::*;
use std::path::Path;
use std::process::{Command, Output};

/// Every kind of tensor `write_npz` takes, with names that need encoding.
fn every_dtype() -> Vec<(String, HostTensor)> {
    let t = HostTensor::new;
    vec![
        (
            "f32".into(),
            t(
                vec![2, 3],
                Data::F32(vec![1.5, -0.0, f32::MAX, f32::MIN_POSITIVE, 1e-40, -7.25]),
            ),
        ),
        (
            "f64/with:slash".into(),
            t(vec![3], Data::F64(vec![std::f64::consts::PI, -1e300, 0.1])),
        ),
        (
            "f16".into(),
            t(
                vec![2, 1],
                Data::F16(vec![f16::from_f32(0.5), f16::from_f32(-65504.0)]),
            ),
        ),
        (
            "bf16".into(),
            t(
                vec![2],
                Data::BF16(vec![bf16::from_f32(1.0), bf16::from_f32(-3.0e38)]),
            ),
        ),
        ("i8".into(), t(vec![3], Data::I8(vec![-128, 0, 127]))),
        ("i16".into(), t(vec![2], Data::I16(vec![-32768, 32767]))),
        (
            "i32".into(),
            t(vec![2], Data::I32(vec![i32::MIN, i32::MAX])),
        ),
        (
            "i64".into(),
            t(vec![2], Data::I64(vec![i64::MIN, i64::MAX])),
        ),
        ("u8".into(), t(vec![2], Data::U8(vec![0, 255]))),
        ("u16".into(), t(vec![2], Data::U16(vec![0, 65535]))),
        ("u32".into(), t(vec![2], Data::U32(vec![0, u32::MAX]))),
        ("u64".into(), t(vec![2], Data::U64(vec![0, u64::MAX]))),
        (
            "bool".into(),
            t(vec![2, 2], Data::Bool(vec![true, false, false, true])),
        ),
        (
            "strings é".into(),
            t(
                vec![3],
                Data::String(vec![
                    b"abc".to_vec(),
                    b"".to_vec(),
                    "é€".as_bytes().to_vec(),
                ]),
            ),
        ),
        ("scalar".into(), t(vec![], Data::F32(vec![42.0]))),
        ("scalar_i64".into(), t(vec![], Data::I64(vec![-3]))),
        ("empty".into(), t(vec![0, 3], Data::F32(vec![]))),
        ("empty_strings".into(), t(vec![0], Data::String(vec![]))),
        (
            "nonfinite".into(),
            t(
                vec![3],
                Data::F32(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY]),
            ),
        ),
    ]
}

/// What `read_npz` should give back: bf16 comes back as f32.
fn as_read(t: &HostTensor) -> HostTensor {
    match &t.data {
        Data::BF16(v) => HostTensor::new(
            t.shape.clone(),
            Data::F32(v.iter().map(|x| x.to_f32()).collect()),
        ),
        _ => t.clone(),
    }
}

/// Equality that treats NaN as equal to NaN (bitwise for floats).
fn same(a: &HostTensor, b: &HostTensor) -> bool {
    match (&a.data, &b.data) {
        (Data::F32(x), Data::F32(y)) => {
            a.shape == b.shape
                && x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        _ => a == b,
    }
}

#[test]
fn npz_round_trip_every_dtype() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.npz");
    let arrays = every_dtype();
    write_npz(&path, &arrays).unwrap();
    let back = read_npz(&path).unwrap();
    assert_eq!(back.len(), arrays.len());
    for ((name, t), (name2, t2)) in arrays.iter().zip(&back) {
        assert_eq!(name, name2);
        assert!(same(&as_read(t), t2), "{name}: {t2:?} != {t:?}");
    }
    // Deterministic bytes; no temporary file left behind.
    let first = std::fs::read(&path).unwrap();
    write_npz(&path, &arrays).unwrap();
    assert_eq!(first, std::fs::read(&path).unwrap());
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(files.len(), 1);
}

#[test]
fn npz_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.npz");
    let x = HostTensor::new(vec![1], Data::F32(vec![1.0]));
    // One array under two names of the same spelling (a graph listing an output twice, as
    // ONNX allows) is written once; two different arrays under one name cannot be.
    let same = vec![("x".to_string(), x.clone()), ("x".to_string(), x.clone())];
    write_npz(&path, &same).unwrap();
    assert_eq!(read_npz(&path).unwrap(), vec![("x".to_string(), x.clone())]);
    std::fs::remove_file(&path).unwrap();
    let other = HostTensor::new(vec![1], Data::F32(vec![2.0]));
    let dup = vec![("x".to_string(), x.clone()), ("x".to_string(), other)];
    let err = write_npz(&path, &dup).unwrap_err();
    assert!(matches!(err, BundleError::Unwritable { .. }), "{err}");
    assert!(err.to_string().contains("bad.npz"), "{err}");
    let raw = HostTensor {
        dtype: DType::F8E5M2,
        shape: vec![1],
        data: Data::Raw(vec![0]),
    };
    let err = write_npz(&path, &[("r".into(), raw)]).unwrap_err();
    assert!(err.to_string().contains("'r'"), "{err}");
    assert!(!path.exists());

    let err = read_npz(&dir.path().join("missing.npz")).unwrap_err();
    assert!(matches!(err, BundleError::Io { .. }));
    assert!(err.to_string().contains("missing.npz"), "{err}");
    std::fs::write(&path, b"not a zip at all").unwrap();
    let err = read_npz(&path).unwrap_err();
    assert!(matches!(err, BundleError::Malformed { .. }));
    assert_eq!(err.path(), path);
}

#[test]
fn write_pb_inputs_writes_tensor_protos() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("test_data_set_0");
    let values = vec![
        (
            "a:0".to_string(),
            Value::Tensor(HostTensor::new(vec![2], Data::F32(vec![1.0, 2.0]))),
        ),
        (
            "b".to_string(),
            Value::Tensor(HostTensor::new(vec![], Data::I64(vec![5]))),
        ),
    ];
    let written = write_pb_inputs(&sub, &values, "input").unwrap();
    assert_eq!(
        written,
        vec![sub.join("input_0.pb"), sub.join("input_1.pb")]
    );
    let ty = ValueType::Tensor(TensorType::unranked(DType::F32));
    for (path, (_, value)) in written.iter().zip(&values) {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(&Value::decode(&bytes, &ty).unwrap(), value);
        assert_eq!(
            bytes,
            value.encode(if path.ends_with("input_0.pb") {
                "a:0"
            } else {
                "b"
            })
        );
    }
}

mod python;
