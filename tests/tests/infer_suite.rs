//! Shape and dtype inference against real data: the outputs recorded by the ONNX backend test
//! suite, and ONNX's own shape inference (run by tests/python/dump_onnx_inference.py).
use mutagraph_ir::infer::{Options, Scope, infer_graph};
use mutagraph_ir::{Model, ValueType};
use mutagraph_tests::{python, recorded, rel, scratch, suite_dir, suite_models};
use std::collections::BTreeMap;

/// Ops whose output shape depends on the values of their data input (not only on shapes and
/// constant parameters): their outputs have no static shape and are left out of the count.
const DATA_DEPENDENT: &[&str] = &["NonZero", "Unique", "NonMaxSuppression", "Compress"];

fn render(t: &ValueType) -> String {
    t.to_string()
}

fn static_type(s: &str) -> bool {
    s.ends_with(']')
        && !s.ends_with("[*]")
        && s.split('[').nth(1).is_some_and(|d| {
            d.trim_end_matches(']')
                .split(',')
                .all(|x| x.is_empty() || x.parse::<i64>().is_ok())
        })
}

#[test]
fn inferred_types_match_recorded_outputs_and_onnx() {
    let out = scratch("infer_suite").join("onnx_infer.json");
    let suite = suite_dir();
    let o = python(
        "dump_onnx_inference.py",
        &[suite.to_str().unwrap(), out.to_str().unwrap()],
    );
    assert!(
        o.status.success(),
        "dump_onnx_inference.py failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let onnx: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();

    let (mut total, mut ok, mut excluded) = (0usize, 0usize, 0usize);
    let mut bad_by_op: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in suite_models() {
        let key = rel(&path);
        let mut m = Model::load(&path).unwrap();
        // The suite gives the input values: bind them as constants, as a backend would see
        // them, so that shapes computed from input data (Reshape's shape, Slice's starts, ...)
        // are static.
        let mut scope = Scope::default();
        let names: Vec<String> = m
            .graph
            .real_inputs()
            .iter()
            .map(|v| v.name.clone().unwrap_or_default())
            .collect();
        for (name, t) in names.into_iter().zip(recorded(&path, "input")) {
            if let Some(t) = t.filter(|t| mutagraph_ir::tensor::TensorExt::num_elements(t) <= 4096)
            {
                scope.consts.insert(name, t);
            }
        }
        let opset = m.default_opset();
        infer_graph(
            &mut m.graph,
            opset,
            &scope,
            Options {
                use_declared: false,
            },
        );
        let ops: BTreeMap<String, String> = m
            .graph
            .nodes()
            .flat_map(|n| {
                n.outputs
                    .iter()
                    .map(move |o| (o.clone(), n.op_type.clone()))
            })
            .collect();
        // 1. recorded outputs
        let rec = recorded(&path, "output");
        for (o, t) in m.graph.outputs.iter().zip(rec) {
            let name = o.name.clone().unwrap_or_default();
            let declared = o.r#type.as_ref().map(ValueType::from_proto);
            let (Some(t), Some(ValueType::Tensor(_))) = (t, declared) else {
                continue;
            };
            let op = ops.get(&name).cloned().unwrap_or_default();
            if DATA_DEPENDENT.contains(&op.as_str()) {
                excluded += 1;
                continue;
            }
            let want = ValueType::Tensor(mutagraph_ir::tensor::TensorExt::tensor_type(&t));
            let got = m
                .graph
                .types
                .get(&name)
                .cloned()
                .unwrap_or(ValueType::Unknown);
            total += 1;
            if render(&got) == render(&want) {
                ok += 1;
            } else {
                let op = ops.get(&name).cloned().unwrap_or_else(|| "(input)".into());
                bad_by_op
                    .entry(op)
                    .or_default()
                    .push(format!("{key} output {name}: got {got}, recorded {want}"));
            }
        }
        // 2. ONNX's inference, static shapes only
        if let Some(vals) = onnx.get(&key).and_then(|v| v.as_object()) {
            for (name, want) in vals {
                let Some(want) = want.as_str() else { continue };
                if !static_type(want)
                    || m.graph
                        .outputs
                        .iter()
                        .any(|o| o.name.as_deref() == Some(name))
                {
                    continue;
                }
                let got = m
                    .graph
                    .types
                    .get(name)
                    .cloned()
                    .unwrap_or(ValueType::Unknown);
                total += 1;
                if render(&got) == want {
                    ok += 1;
                } else {
                    let op = ops.get(name).cloned().unwrap_or_default();
                    bad_by_op
                        .entry(op)
                        .or_default()
                        .push(format!("{key} value {name}: got {got}, onnx {want}"));
                }
            }
        }
    }
    let rate = ok as f64 / total.max(1) as f64;
    let mut report = String::new();
    for (op, v) in &bad_by_op {
        report.push_str(&format!("{op}: {} mismatches, e.g. {}\n", v.len(), v[0]));
    }
    println!(
        "inference agrees on {ok}/{total} values ({:.2}%); {excluded} outputs of data-dependent ops left out\n{report}",
        rate * 100.0
    );
    assert!(total > 2400, "too few values compared: {total}");
    assert!(
        rate >= 0.99,
        "inference agrees on {ok}/{total} = {:.2}% < 99%\n{report}",
        rate * 100.0
    );
}
