//! Lossless import/export on the ONNX backend test suite: every model imports, export then
//! re-import gives an identical IR, exports are byte-identical to the files wherever the file
//! itself is canonical, and onnx.checker accepts every export whose original it accepts.
use mutagraph_ir::Model;
use mutagraph_tests::{python, rel, scratch, suite_dir, suite_models};

#[test]
fn every_suite_model_round_trips() {
    let models = suite_models();
    assert_eq!(models.len(), 1072, "the Debian suite has 1072 models");
    let out = scratch("roundtrip");
    let mut byte_exact = 0;
    let mut failures = Vec::new();
    for path in &models {
        let original = std::fs::read(path).unwrap();
        let m = match Model::from_bytes(&original) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}: import failed: {e}", rel(path)));
                continue;
            }
        };
        let bytes = m.to_bytes();
        let again = Model::from_bytes(&bytes).expect("our own export must import");
        if again != m {
            failures.push(format!("{}: re-imported IR differs", rel(path)));
        }
        if again.to_bytes() != bytes {
            failures.push(format!(
                "{}: second export differs from the first",
                rel(path)
            ));
        }
        if bytes == original {
            byte_exact += 1;
        }
        let dst = out.join(rel(path));
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::write(&dst, &bytes).unwrap();
    }
    println!(
        "{byte_exact}/{} exports are byte-identical to the original file",
        models.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The suite files were written by protobuf's C++ encoder: canonical field order, so a
    // lossless round trip reproduces them byte for byte.
    assert_eq!(
        byte_exact,
        models.len(),
        "some exports differ from their original bytes"
    );

    let o = python(
        "checker_compare.py",
        &[suite_dir().to_str().unwrap(), out.to_str().unwrap()],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    println!("{stdout}");
    assert!(
        o.status.success(),
        "onnx.checker rejects exports whose originals it accepts:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("checker: "),
        "checker_compare.py printed no summary"
    );
}
