//! 2 000 corrupted models through the real CLI: no panic ever; every model that is invalid by
//! construction exits 1 with a message naming the file and the problem; corruptions that happen
//! to leave a valid model (a flipped bit in a weight) exit 0 or 1, never anything else.
use mutagraph_ir::pb;
use prost::Message;
use std::path::{Path, PathBuf};
use std::process::Command;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seeds() -> Vec<PathBuf> {
    let root = Path::new(mutagraph_tests::DEFAULT_SUITE);
    let _ = mutagraph_tests::suite_dir();
    [
        "node/test_conv_with_strides_padding",
        "node/test_lstm_defaults",
        "node/test_if",
        "node/test_loop11",
        "pytorch-converted/test_Conv2d",
        "node/test_gemm_default_scalar_bias",
        "node/test_reshape_reordered_all_dims",
        "simple/test_sign_model",
        "node/test_add_bcast",
        "node/test_matmulinteger",
        "node/test_dynamicquantizelinear",
        "pytorch-operator/test_operator_conv",
        "node/test_maxpool_2d_pads",
        "node/test_scan9_sum",
    ]
    .iter()
    .map(|s| root.join(s).join("model.onnx"))
    .filter(|p| p.is_file())
    .collect()
}

/// Structural corruptions: each breaks a rule that validation must report.
fn structural(
    m: &pb::ModelProto,
    kind: usize,
    rng: &mut Rng,
) -> Option<(pb::ModelProto, &'static str)> {
    let mut m = m.clone();
    let g = m.graph.as_mut()?;
    if g.node.is_empty() {
        return None;
    }
    let k = rng.below(g.node.len());
    let what = match kind % 10 {
        0 => {
            // cycle: a node reads the output of the last node (or its own)
            let last = g
                .node
                .last()?
                .output
                .iter()
                .find(|o| !o.is_empty())?
                .clone();
            let n = &mut g.node[k];
            if n.input.is_empty() {
                return None;
            }
            n.input[0] = last;
            "cycle"
        }
        1 => {
            let n = &mut g.node[k];
            if n.input.is_empty() {
                return None;
            }
            n.input[0] = "no_such_value".into();
            "dangling input"
        }
        2 => {
            let n = &mut g.node[k];
            for _ in 0..12 {
                n.input.push(n.input.first().cloned().unwrap_or_default());
            }
            "too many inputs"
        }
        3 => {
            g.node[k].attribute.push(pb::AttributeProto {
                name: Some("bogus_attribute".into()),
                r#type: Some(2),
                i: Some(3),
                ..Default::default()
            });
            "unknown attribute"
        }
        4 => {
            let o = g.node[k].output.iter().find(|o| !o.is_empty())?.clone();
            let mut dup = g.node[k].clone();
            dup.name = Some("dup".into());
            dup.output = vec![o];
            g.node.push(dup);
            "value produced twice"
        }
        5 => {
            m.graph = None;
            "no graph"
        }
        6 => {
            g.node[k].attribute.push(pb::AttributeProto {
                name: Some("x".into()),
                r#type: Some(99),
                ..Default::default()
            });
            "bad attribute type"
        }
        7 => {
            g.node[k].op_type = None;
            "no op_type"
        }
        8 => {
            g.output.push(pb::ValueInfoProto {
                name: Some("never_defined".into()),
                ..Default::default()
            });
            "undefined output"
        }
        _ => {
            g.initializer.push(pb::TensorProto {
                name: Some("broken_init".into()),
                dims: vec![4, 4],
                data_type: Some(1),
                raw_data: Some(vec![0; 7].into()),
                ..Default::default()
            });
            "initializer data does not match dims"
        }
    };
    Some((m, what))
}

#[test]
fn two_thousand_corrupted_models_never_panic() {
    let dir = mutagraph_tests::scratch("corrupt_models");
    let seeds = seeds();
    assert!(seeds.len() >= 10, "seed models missing from the suite");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut cases: Vec<(PathBuf, Option<&'static str>)> = Vec::new();
    let mut i = 0;
    while cases.len() < 2000 {
        let seed = &seeds[i % seeds.len()];
        let bytes = std::fs::read(seed).unwrap();
        let (data, must_fail): (Vec<u8>, Option<&'static str>) = match i % 4 {
            0 => {
                // truncation strictly inside the message
                let cut = 1 + rng.below(bytes.len() - 1);
                (bytes[..cut].to_vec(), None)
            }
            1 => {
                let mut b = bytes.clone();
                for _ in 0..1 + rng.below(8) {
                    let p = rng.below(b.len());
                    b[p] ^= 1 << rng.below(8);
                }
                (b, None)
            }
            2 => {
                let n = 1 + rng.below(4096);
                ((0..n).map(|_| rng.next() as u8).collect(), None)
            }
            _ => {
                let m = pb::ModelProto::decode(bytes.as_slice()).unwrap();
                match structural(&m, rng.below(10), &mut rng) {
                    Some((m, what)) => (m.encode_to_vec(), Some(what)),
                    None => {
                        i += 1;
                        continue;
                    }
                }
            }
        };
        let p = dir.join(format!("case{:04}.onnx", cases.len()));
        std::fs::write(&p, data).unwrap();
        cases.push((p, must_fail));
        i += 1;
    }
    let exe = env!("CARGO_BIN_EXE_mutagraph");
    let (mut failed, mut passed) = (0, 0);
    let mut problems = Vec::new();
    for (p, must_fail) in &cases {
        let out = Command::new(exe).arg("inspect").arg(p).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        if stderr.contains("panicked") || code.is_none() || code == Some(101) {
            problems.push(format!(
                "{}: PANIC or signal ({code:?}): {stderr}",
                p.display()
            ));
            continue;
        }
        match code {
            // 1: an invalid model reported; 2: a file that is not a model, refused.
            Some(1) | Some(2) => {
                failed += 1;
                let first = stderr.lines().next().unwrap_or("");
                if !first.starts_with(&format!("error: {}: ", p.display()))
                    || first.len() < p.display().to_string().len() + 20
                {
                    problems.push(format!(
                        "{}: exit {code:?} without a message naming the file: {stderr}",
                        p.display()
                    ));
                }
            }
            Some(0) => {
                passed += 1;
                if let Some(what) = must_fail {
                    problems.push(format!("{}: {what} was not reported (exit 0)", p.display()));
                }
            }
            other => problems.push(format!(
                "{}: unexpected exit code {other:?}: {stderr}",
                p.display()
            )),
        }
    }
    println!(
        "{} corrupted models: {failed} rejected with exit 1, {passed} still valid (exit 0)",
        cases.len()
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(
        failed >= 1500,
        "only {failed} of 2000 corrupted models were rejected"
    );
}
