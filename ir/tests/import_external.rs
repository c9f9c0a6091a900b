//! Import of what exporters write: negative declared dims (read as dynamic dims) and tensor
//! data in side files (read in from the model's directory, never from outside it; written back
//! beside a saved model).
use mutagraph_ir::external::{self, Place};
use mutagraph_ir::import::declared_dim_notes;
use mutagraph_ir::infer::{Options, infer_model};
use mutagraph_ir::tensor::TensorExt;
use mutagraph_ir::{Error, Model, pb, validate};
use prost::Message;
use std::path::{Path, PathBuf};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("import_external")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn dim(v: i64) -> pb::tensor_shape_proto::Dimension {
    pb::tensor_shape_proto::Dimension {
        value: Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)),
        denotation: None,
    }
}

fn vi(name: &str, dims: &[i64]) -> pb::ValueInfoProto {
    pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(pb::TensorShapeProto {
                    dim: dims.iter().map(|&d| dim(d)).collect(),
                }),
            })),
            denotation: None,
        }),
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> pb::NodeProto {
    pb::NodeProto {
        op_type: Some(op.into()),
        name: Some(format!("{op}_{}", outputs[0])),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn model(graph: pb::GraphProto) -> pb::ModelProto {
    pb::ModelProto {
        ir_version: Some(8),
        opset_import: vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(graph),
        ..Default::default()
    }
}

#[test]
fn negative_declared_dims_are_dynamic_and_kept_in_the_file() {
    let body = pb::GraphProto {
        name: Some("body".into()),
        node: vec![node("Relu", &["x"], &["r"])],
        output: vec![vi("r", &[-1, 3])],
        ..Default::default()
    };
    let mut iff = node("If", &["c"], &["z"]);
    for branch in ["then_branch", "else_branch"] {
        iff.attribute.push(pb::AttributeProto {
            name: Some(branch.into()),
            r#type: Some(5),
            g: Some(body.clone()),
            ..Default::default()
        });
    }
    let mut c = vi("c", &[]);
    if let Some(pb::type_proto::Value::TensorType(t)) =
        c.r#type.as_mut().and_then(|t| t.value.as_mut())
    {
        t.elem_type = Some(9);
    }
    let g = pb::GraphProto {
        name: Some("g".into()),
        node: vec![
            node("Relu", &["x"], &["t"]),
            node("Relu", &["t"], &["y"]),
            node("Neg", &["e"], &["n"]),
            iff,
        ],
        input: vec![vi("x", &[-1, 3]), vi("e", &[0, 3]), c],
        output: vec![vi("y", &[-1, 3]), vi("n", &[0, 3]), vi("z", &[-1, 3])],
        value_info: vec![vi("t", &[-7, 3])],
        ..Default::default()
    };
    let bytes = model(g).encode_to_vec();
    let mut m = Model::from_bytes(&bytes).unwrap();
    // The file keeps what it said: export is byte-identical.
    assert_eq!(m.to_bytes(), bytes);
    assert_eq!(m.graph.value_type("x").to_string(), "f32[?,3]");
    assert_eq!(m.graph.value_type("t").to_string(), "f32[?,3]");
    // 0 is a size (ONNX Runtime feeds such an input only empty tensors), not a dynamic dim.
    assert_eq!(m.graph.value_type("e").to_string(), "f32[0,3]");
    infer_model(&mut m, Options::default());
    // -1 is a dynamic dim; any other negative size is read so but is invalid.
    let e = validate::validate(&m).unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid model: main graph: value_info 't': dim 0 is -7; a size is never negative \
         (-1 is read as a dynamic dim)"
    );
    assert_eq!(m.graph.value_type("y").to_string(), "f32[?,3]");
    assert_eq!(m.graph.value_type("n").to_string(), "f32[0,3]");
    assert_eq!(m.graph.value_type("z").to_string(), "f32[?,3]");

    let notes = declared_dim_notes(&m.graph);
    let brief: Vec<(&str, &str, usize, i64)> = notes
        .iter()
        .map(|n| (n.role.as_str(), n.value.as_str(), n.index, n.declared))
        .collect();
    // Negative dims everywhere, a 0 on an input only (an output of size 0 is a plain size).
    assert_eq!(
        brief,
        vec![
            ("input", "x", 0, -1),
            ("input", "e", 0, 0),
            ("output", "y", 0, -1),
            ("output", "z", 0, -1),
            ("value_info", "t", 0, -7),
            ("If_z (If) attribute 'then_branch': output", "r", 0, -1),
            ("If_z (If) attribute 'else_branch': output", "r", 0, -1),
        ]
    );
    assert_eq!(
        notes[0].to_string(),
        "input 'x': dim 0 is declared -1, read as a dynamic dim"
    );
    assert!(
        notes[1]
            .to_string()
            .starts_with("input 'e': dim 0 is declared 0, read as an empty dim"),
        "{}",
        notes[1]
    );
    assert_eq!(
        notes[5].to_string(),
        "If_z (If) attribute 'then_branch': output 'r': dim 0 is declared -1, read as a dynamic dim"
    );
}

const W: [f32; 12] = [
    0.5, -1.0, 2.0, 0.25, 3.0, -0.5, 1.5, 4.0, -2.0, 0.75, 1.0, -3.5,
];
const S: [f32; 4] = [2.0, -1.0, 0.5, 3.0];
const K: [f32; 3] = [7.0, 8.0, 9.0];

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn inline_tensor(name: &str, dims: &[i64], v: &[f32]) -> pb::TensorProto {
    pb::TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(1),
        raw_data: Some(f32s(v).into()),
        ..Default::default()
    }
}

fn external_tensor(name: &str, dims: &[i64], entries: &[(&str, String)]) -> pb::TensorProto {
    pb::TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(1),
        data_location: Some(1),
        external_data: entries
            .iter()
            .map(|(k, v)| pb::StringStringEntryProto {
                key: Some(k.to_string()),
                value: Some(v.clone()),
            })
            .collect(),
        ..Default::default()
    }
}

fn at(location: &str, offset: usize, length: usize) -> Vec<(&'static str, String)> {
    vec![
        ("location", location.to_string()),
        ("offset", offset.to_string()),
        ("length", length.to_string()),
    ]
}

/// MatMul(x, w) * s (s from a Constant) + an If whose branches read their own initializer `k`:
/// `tensors(name)` makes each of w, s, k.
/// Makes one tensor of the model from its name, dims and values.
type MakeTensor<'a> = &'a dyn Fn(&str, &[i64], &[f32]) -> pb::TensorProto;

fn weights_model(tensors: MakeTensor) -> pb::ModelProto {
    let branch = pb::GraphProto {
        name: Some("branch".into()),
        node: vec![node("Identity", &["k"], &["kb"])],
        initializer: vec![tensors("k", &[3], &K)],
        output: vec![vi("kb", &[3])],
        ..Default::default()
    };
    let mut iff = node("If", &["c"], &["z"]);
    for name in ["then_branch", "else_branch"] {
        iff.attribute.push(pb::AttributeProto {
            name: Some(name.into()),
            r#type: Some(5),
            g: Some(branch.clone()),
            ..Default::default()
        });
    }
    let mut constant = node("Constant", &[], &["s"]);
    constant.attribute.push(pb::AttributeProto {
        name: Some("value".into()),
        r#type: Some(4),
        t: Some(tensors("s", &[4], &S)),
        ..Default::default()
    });
    let mut c = vi("c", &[]);
    if let Some(pb::type_proto::Value::TensorType(t)) =
        c.r#type.as_mut().and_then(|t| t.value.as_mut())
    {
        t.elem_type = Some(9);
    }
    model(pb::GraphProto {
        name: Some("weights".into()),
        node: vec![
            node("MatMul", &["x", "w"], &["t"]),
            constant,
            node("Mul", &["t", "s"], &["y"]),
            iff,
        ],
        initializer: vec![tensors("w", &[3, 4], &W)],
        input: vec![vi("x", &[2, 3]), c],
        output: vec![vi("y", &[2, 4]), vi("z", &[3])],
        ..Default::default()
    })
}

/// The inline model, and its twin with w, s and k in `weights.bin` of `dir` (after 16 bytes
/// of something else, in the order k, w, s) written as `model.onnx`; returns the twin's path.
fn write_twins(dir: &Path) -> (Model, PathBuf) {
    let inline = weights_model(&|n, d, v| inline_tensor(n, d, v));
    let mut data = vec![0xAB; 16];
    let k_at = data.len();
    data.extend(f32s(&K));
    let w_at = data.len();
    data.extend(f32s(&W));
    let s_at = data.len();
    data.extend(f32s(&S));
    std::fs::write(dir.join("weights.bin"), &data).unwrap();
    let ext = weights_model(&|n, d, _| {
        let (off, len) = match n {
            "w" => (w_at, 48),
            "s" => (s_at, 16),
            _ => (k_at, 12),
        };
        external_tensor(n, d, &at("weights.bin", off, len))
    });
    let path = dir.join("model.onnx");
    std::fs::write(&path, ext.encode_to_vec()).unwrap();
    (Model::from_bytes(&inline.encode_to_vec()).unwrap(), path)
}

#[test]
fn external_data_is_read_into_the_model() {
    let dir = scratch("read");
    let (inline, path) = write_twins(&dir);
    let (m, refs) = external::load(&path).unwrap();
    // What the backends get is the inline twin, byte for byte.
    assert_eq!(m.to_bytes(), inline.to_bytes());
    assert_eq!(m, inline);
    assert_eq!(Model::load(&path).unwrap(), inline);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(Model::from_bytes_at(&bytes, &path).unwrap(), inline);
    let seen: Vec<(&str, &str, u64, u64, bool)> = refs
        .iter()
        .map(|r| {
            (
                r.tensor.as_str(),
                r.location.as_str(),
                r.offset,
                r.length,
                r.place.initializer,
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            ("w", "weights.bin", 28, 48, true),
            ("s", "weights.bin", 76, 16, false),
            ("k", "weights.bin", 16, 12, true),
            ("k", "weights.bin", 16, 12, true),
        ]
    );
    assert_eq!(
        refs[1].place.holder,
        "node Constant_s (Constant) attribute 'value'"
    );
    assert_eq!(
        m.graph.initializers["w"].to_f64s().unwrap(),
        W.iter().map(|&v| v as f64).collect::<Vec<_>>()
    );
    // A model in the current directory (a bare file name) resolves there too.
    let cwd = std::env::current_dir().unwrap();
    std::env::set_current_dir(&dir).unwrap();
    let here = Model::load("model.onnx");
    std::env::set_current_dir(cwd).unwrap();
    assert_eq!(here.unwrap(), inline);
}

#[test]
fn bytes_without_a_directory_refuse_external_data() {
    let dir = scratch("bytes");
    let (_, path) = write_twins(&dir);
    let bytes = std::fs::read(&path).unwrap();
    let err = Model::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(&err, Error::ExternalData { tensor, location, .. }
            if tensor == "w" && location == "weights.bin"),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("tensor 'w' (initializer): external data location 'weights.bin'")
            && msg.contains("without the directory its external data lies in"),
        "{msg}"
    );
}

/// Writes `model.onnx` into `dir` with w's location replaced and returns the error of loading
/// it (the other tensors point at a good file).
fn load_error(dir: &Path, file: &str, w_entries: Vec<(&'static str, String)>) -> String {
    let good = f32s(&S).into_iter().chain(f32s(&K)).collect::<Vec<u8>>();
    std::fs::write(dir.join("good.bin"), good).unwrap();
    let m = weights_model(&|n, d, _| match n {
        "w" => external_tensor(n, d, &w_entries),
        "s" => external_tensor(n, d, &at("good.bin", 0, 16)),
        _ => external_tensor(n, d, &at("good.bin", 16, 12)),
    });
    let path = dir.join(file);
    std::fs::write(&path, m.encode_to_vec()).unwrap();
    let err = Model::load(&path).expect_err("the model must be refused");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("{}: tensor 'w' (initializer)", path.display())),
        "the error names the model file and the tensor: {msg}"
    );
    msg
}

#[test]
fn locations_outside_the_model_directory_are_refused() {
    let root = scratch("confine");
    let dir = root.join("models");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(root.join("outside/w.bin"), f32s(&W)).unwrap();
    std::fs::write(dir.join("w.bin"), f32s(&W)).unwrap();
    for (location, problem) in [
        (
            "../../../../etc/passwd",
            "'..' leads out of the model's directory",
        ),
        (
            "../outside/w.bin",
            "'..' leads out of the model's directory",
        ),
        (
            "sub/../../outside/w.bin",
            "'..' leads out of the model's directory",
        ),
        ("/etc/passwd", "an absolute path"),
    ] {
        let msg = load_error(&dir, "escape.onnx", at(location, 0, 48));
        assert!(
            msg.contains(&format!("external data location '{location}'")) && msg.contains(problem),
            "{location}: {msg}"
        );
    }
    let abs = root.join("outside/w.bin");
    let msg = load_error(&dir, "abs.onnx", at(abs.to_str().unwrap(), 0, 48));
    assert!(msg.contains("an absolute path"), "{msg}");
    // `..` that stays inside is fine.
    std::fs::write(dir.join("sub/s.bin"), f32s(&S)).unwrap();
    let m = weights_model(&|n, d, v| match n {
        "w" => external_tensor(n, d, &at("sub/../w.bin", 0, 48)),
        "s" => external_tensor(n, d, &at("./sub/s.bin", 0, 16)),
        _ => inline_tensor(n, d, v),
    });
    std::fs::write(dir.join("inside.onnx"), m.encode_to_vec()).unwrap();
    let loaded = Model::load(dir.join("inside.onnx")).unwrap();
    assert_eq!(
        loaded.to_bytes(),
        Model::from_bytes(&weights_model(&|n, d, v| inline_tensor(n, d, v)).encode_to_vec())
            .unwrap()
            .to_bytes()
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("../outside/w.bin", dir.join("link.bin")).unwrap();
        let msg = load_error(&dir, "link.onnx", at("link.bin", 0, 48));
        assert!(
            msg.contains("external data location 'link.bin'")
                && msg.contains("outside the model's directory"),
            "{msg}"
        );
        // A link to a directory outside is caught too.
        std::os::unix::fs::symlink(root.join("outside"), dir.join("out_dir")).unwrap();
        let msg = load_error(&dir, "dirlink.onnx", at("out_dir/w.bin", 0, 48));
        assert!(msg.contains("outside the model's directory"), "{msg}");
        // A link that stays inside is followed.
        std::os::unix::fs::symlink("w.bin", dir.join("inner.bin")).unwrap();
        let m = weights_model(&|n, d, v| match n {
            "w" => external_tensor(n, d, &at("inner.bin", 0, 48)),
            _ => inline_tensor(n, d, v),
        });
        std::fs::write(dir.join("inner.onnx"), m.encode_to_vec()).unwrap();
        Model::load(dir.join("inner.onnx")).unwrap();
    }
}

#[test]
fn missing_short_and_malformed_external_data_are_errors() {
    let dir = scratch("malformed");
    std::fs::write(dir.join("short.bin"), vec![0u8; 40]).unwrap();
    std::fs::create_dir_all(dir.join("folder")).unwrap();
    let cases: Vec<(Vec<(&'static str, String)>, &str)> = vec![
        (at("nope.bin", 0, 48), "does not exist"),
        (
            at("short.bin", 0, 48),
            "offset 0 + length 48 is beyond the end",
        ),
        (
            at("short.bin", 32, 16),
            "offset 32 + length 16 is beyond the end",
        ),
        (
            vec![("location", "short.bin".into()), ("offset", "41".into())],
            "offset 41 is beyond the end",
        ),
        (
            vec![("location", "short.bin".into())],
            "40 bytes, but a f32 tensor of dims [3, 4] holds 48",
        ),
        (
            at("short.bin", 0, 8),
            "8 bytes, but a f32 tensor of dims [3, 4] holds 48",
        ),
        (
            vec![
                ("location", "short.bin".into()),
                ("offset", "-4".into()),
                ("length", "48".into()),
            ],
            "offset '-4' is not a non-negative integer",
        ),
        (
            vec![("location", "short.bin".into()), ("length", "many".into())],
            "length 'many' is not a non-negative integer",
        ),
        (
            vec![
                ("location", "short.bin".into()),
                ("offset", "18446744073709551615".into()),
                ("length", "48".into()),
            ],
            "is beyond the end",
        ),
        (vec![("offset", "0".into())], "the tensor has no location"),
        (at("folder", 0, 48), "is not a regular file"),
    ];
    for (entries, problem) in cases {
        let msg = load_error(&dir, "bad.onnx", entries.clone());
        assert!(msg.contains(problem), "{entries:?}: {msg}");
    }
    // A string tensor cannot be external.
    let mut m = weights_model(&|n, d, v| inline_tensor(n, d, v));
    let g = m.graph.as_mut().unwrap();
    g.initializer[0] = pb::TensorProto {
        data_type: Some(8),
        ..external_tensor("w", &[1], &at("short.bin", 0, 4))
    };
    std::fs::write(dir.join("strings.onnx"), m.encode_to_vec()).unwrap();
    let msg = Model::load(dir.join("strings.onnx"))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("a string tensor cannot keep its data"),
        "{msg}"
    );
}

#[test]
fn save_writes_the_data_beside_the_model_and_loads_back() {
    let dir = scratch("save");
    let (inline, path) = write_twins(&dir);
    let (m, refs) = external::load(&path).unwrap();
    let ordinals: Vec<usize> = refs.iter().map(|r| r.place.ordinal).collect();
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("copy.onnx");
    let select = |p: &Place| ordinals.contains(&p.ordinal);
    let data = external::save(m.clone(), &out, &select, &|m| m.to_bytes())
        .unwrap()
        .expect("tensors moved to a data file");
    assert_eq!(data, out_dir.join("copy.onnx.data"));
    assert_eq!(external::data_file_for(&out), data);
    // Four tensors of 48 + 16 + 12 + 12 bytes, in walk order.
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 88);
    let raw = pb::ModelProto::decode(std::fs::read(&out).unwrap().as_slice()).unwrap();
    let w = &raw.graph.as_ref().unwrap().initializer[0];
    assert_eq!(w.data_location, Some(1));
    assert_eq!(w.raw_data, None);
    let entries: Vec<(String, String)> = w
        .external_data
        .iter()
        .map(|e| (e.key.clone().unwrap(), e.value.clone().unwrap()))
        .collect();
    assert_eq!(
        entries,
        vec![
            ("location".into(), "copy.onnx.data".into()),
            ("offset".into(), "0".into()),
            ("length".into(), "48".into()),
        ]
    );
    assert_eq!(Model::load(&out).unwrap(), inline);
    assert!(matches!(
        Model::from_bytes(&std::fs::read(&out).unwrap()),
        Err(Error::ExternalData { .. })
    ));
    // Nothing temporary is left behind.
    let names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // Nothing selected: only the model, inline.
    let plain = out_dir.join("plain.onnx");
    assert_eq!(
        external::save(m, &plain, &|_| false, &|m| m.to_bytes()).unwrap(),
        None
    );
    assert!(!external::data_file_for(&plain).exists());
    assert_eq!(std::fs::read(&plain).unwrap(), inline.to_bytes());
}

#[test]
fn tensors_in_function_bodies_and_sparse_initializers_are_read_too() {
    let dir = scratch("everywhere");
    let mut data = f32s(&S);
    data.extend(f32s(&K));
    std::fs::write(dir.join("w.bin"), &data).unwrap();
    let mut p = weights_model(&|n, d, v| inline_tensor(n, d, v));
    let mut constant = node("Constant", &[], &["c"]);
    constant.attribute.push(pb::AttributeProto {
        name: Some("value".into()),
        r#type: Some(4),
        t: Some(external_tensor("fs", &[4], &at("w.bin", 0, 16))),
        ..Default::default()
    });
    p.functions.push(pb::FunctionProto {
        name: Some("f".into()),
        domain: Some("local".into()),
        node: vec![constant],
        output: vec!["c".into()],
        ..Default::default()
    });
    p.graph
        .as_mut()
        .unwrap()
        .sparse_initializer
        .push(pb::SparseTensorProto {
            values: Some(external_tensor("sp", &[3], &at("w.bin", 16, 12))),
            indices: Some(pb::TensorProto {
                name: Some("sp_i".into()),
                dims: vec![3],
                data_type: Some(7),
                int64_data: vec![0, 2, 4],
                ..Default::default()
            }),
            dims: vec![6],
        });
    let path = dir.join("m.onnx");
    std::fs::write(&path, p.encode_to_vec()).unwrap();
    let (m, refs) = external::load(&path).unwrap();
    let holders: Vec<&str> = refs.iter().map(|r| r.place.holder.as_str()).collect();
    assert_eq!(
        holders,
        vec![
            "sparse initializer #0 values",
            "function 'f' node #0 'Constant_c' attribute 'value'"
        ]
    );
    let f = &m.functions[0].node[0].attribute[0];
    assert_eq!(
        f.t.as_ref().unwrap().raw_data.as_deref(),
        Some(&f32s(&S)[..])
    );
    assert_eq!(f.t.as_ref().unwrap().data_location, None);
    let sp = m.graph.sparse_initializers[0].values.as_ref().unwrap();
    assert_eq!(sp.raw_data.as_deref(), Some(&f32s(&K)[..]));
    // The exported model is self-contained.
    Model::from_bytes(&m.to_bytes()).unwrap();
}
