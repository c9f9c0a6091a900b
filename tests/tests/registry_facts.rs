//! The op registry against ONNX's own operator schemas (read by tests/python/dump_onnx_schemas.py
//! from the `onnx` package, and ONNX Runtime's `com.microsoft` schemas and its own default-domain
//! ones from `onnxruntime`, which must be `onnx_ops::ort_default`'s): every
//! spec names a real op, has the same opset versions, and the same attributes with the same
//! kinds. At least 100 ops.
use mutagraph_ir::Registry;
use mutagraph_ir::onnx_ops::ort_default;
use mutagraph_tests::{python, scratch};

#[test]
fn registry_matches_onnx_schemas() {
    let out = scratch("registry_facts").join("schemas.json");
    let o = python("dump_onnx_schemas.py", &[out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let onnx: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let onnx = onnx.as_object().unwrap();
    let reg = Registry::global();
    let mut problems = Vec::new();
    for spec in reg.iter() {
        let key = format!("{}/{}", spec.domain, spec.op_type);
        let Some(schema) = onnx.get(&key) else {
            problems.push(format!("{key}: not an ONNX op"));
            continue;
        };
        // ONNX Runtime's own schema in the default domain: one of the table's.
        if schema["ort"] == true {
            let since = schema["versions"][0].as_i64();
            let listed = ort_default::TABLE
                .iter()
                .any(|o| o.op == spec.op_type && Some(o.since) == since);
            if !listed {
                problems.push(format!("{key}: ORT's schema, not in onnx_ops::ort_default"));
            }
        }
        let versions: Vec<i64> = schema["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            // ONNX lists the opset that deprecates an op as one more version.
            .filter(|v| spec.removed_at != Some(*v))
            .collect();
        if spec.versions != versions {
            problems.push(format!(
                "{key}: versions {:?}, ONNX has {versions:?}",
                spec.versions
            ));
        }
        let attrs = schema["attrs"].as_object().unwrap();
        for (name, a) in attrs {
            match spec.attr_spec(name) {
                None => problems.push(format!("{key}: attribute '{name}' missing")),
                Some(s) => {
                    let ours: std::collections::BTreeSet<&str> = spec
                        .attrs
                        .iter()
                        .filter(|x| x.name == name)
                        .map(|x| x.kind.name())
                        .collect();
                    let theirs: std::collections::BTreeSet<&str> = a["types"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t.as_str().unwrap())
                        .collect();
                    if ours != theirs {
                        problems.push(format!(
                            "{key}: attribute '{name}' kinds {ours:?}, ONNX says {theirs:?}"
                        ));
                    }
                    if s.required && !a["required"].as_bool().unwrap() {
                        problems.push(format!(
                            "{key}: attribute '{name}' required here, optional in ONNX"
                        ));
                    }
                }
            }
        }
        for s in &spec.attrs {
            if !attrs.contains_key(s.name) {
                problems.push(format!("{key}: attribute '{}' is not in ONNX", s.name));
            }
            if s.buckets.len() > 5 {
                problems.push(format!(
                    "{key}: attribute '{}' has {} buckets (> 5)",
                    s.name,
                    s.buckets.len()
                ));
            }
        }
    }
    let missing: Vec<&String> = onnx
        .keys()
        .filter(|k| {
            let (d, op) = k.split_once('/').unwrap();
            reg.get(d, op).is_none()
        })
        .collect();
    println!(
        "{} ops in the registry; ONNX ops without a spec ({}): {missing:?}",
        reg.len(),
        missing.len()
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(reg.len() >= 100, "only {} ops", reg.len());
}

/// The per-opset port type table the registry narrows its type lists with
/// (`ir/data/type_constraints.tsv`) is exactly what the installed onnx package's schemas say.
#[test]
fn type_constraint_table_matches_onnx_schemas() {
    let table = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ir/data/type_constraints.tsv"
    );
    let o = python("gen_type_constraints.py", &["--check", table]);
    assert!(
        o.status.success(),
        "{}{}\nregenerate with: python3 tests/python/gen_type_constraints.py ir/data/type_constraints.tsv",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
