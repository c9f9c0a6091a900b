//! `mutagraph zoo`: writes the twelve seed models, each loadable, valid, and accepted by the
//! ONNX checker.
use crate::common::mg;
use mutagraph_ir::{Model, validate};
use std::process::Command;

const NAMES: [&str; 12] = [
    "lenet5",
    "alexnet",
    "vgg",
    "resnet_basic",
    "resnet_bottleneck",
    "mobilenetv2",
    "densenet_block",
    "inception_block",
    "xception",
    "lstm",
    "gru",
    "transformer_encoder",
];

#[test]
fn zoo_list_prints_every_model_with_its_counts() {
    let o = mg(&["zoo", "--list"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    for name in NAMES {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing from:\n{text}"));
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert!(cols[1].parse::<usize>().unwrap() > 0, "{line}");
        assert!(cols[2].parse::<usize>().unwrap() > 1000, "{line}");
    }
}

#[test]
fn zoo_without_out_or_list_is_a_usage_error() {
    let o = mg(&["zoo"]);
    assert!(!o.status.success());
}

#[test]
fn zoo_writes_twelve_valid_models_the_onnx_checker_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("seeds");
    let o = mg(&["zoo", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut entries: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    entries.sort();
    let mut expected: Vec<String> = NAMES.iter().map(|n| format!("{n}.onnx")).collect();
    expected.sort();
    assert_eq!(
        entries, expected,
        "exactly the twelve models, no temp files"
    );
    let mut paths = Vec::new();
    for name in NAMES {
        let path = out.join(format!("{name}.onnx"));
        let m = Model::load(&path).unwrap();
        validate::validate(&m).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.graph.name.as_deref(), Some(name));
        // Same bytes as building it in-process.
        let built = mutagraph_mutators::zoo::build(name).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), built.to_bytes(), "{name}");
        paths.push(path.display().to_string());
    }
    let check = Command::new("python3")
        .arg("-c")
        .arg(
            "import onnx, sys\n\
             for p in sys.argv[1:]:\n    onnx.checker.check_model(onnx.load(p), full_check=True)",
        )
        .args(&paths)
        .output()
        .expect("python3 with the onnx package");
    assert!(
        check.status.success(),
        "onnx checker: {}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn zoo_into_an_unwritable_path_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let out = blocker.join("sub");
    let o = mg(&["zoo", "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(out.to_str().unwrap()), "{err}");
}
