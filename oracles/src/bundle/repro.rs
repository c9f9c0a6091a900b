//! `repro.py`: a stand-alone script that reproduces a finding by running the faulty library
//! itself, with nothing of mutagraph: ONNX Runtime through `pip install onnxruntime`, tract
//! through its official Python package `pip install tract` (the same version as the crate
//! mutagraph links), burn through the bundle's `repro/` cargo project (burn has no Python API).
//!
//! The script is a fixed body (`repro_body.py`, reviewed as Python) after a header of
//! constants written from a [`ReproSpec`]. What it does:
//!
//! - loads the inputs (`.npz`, keys percent-decoded as [`super::npz`] documents) and the two
//!   expected values: the f64 reference's and the native-precision reference's (the model
//!   evaluated in its own float types, the spec's function bodies step by step);
//! - runs the model in a child process (a segfault or a hang of the library is observed, not
//!   suffered) on every variant that showed the bug (`ort`: `ORT_ENABLE_ALL`; `ort-noopt`:
//!   `ORT_DISABLE_ALL`; one intra-op thread), and, for an optimizer bug, on the variant that
//!   ran the model correctly too; where the finding was judged against that variant (`GROUND`:
//!   the reference could not run the model), its outputs are the expected values;
//! - compares each output with the campaign's own rule and tolerance: an element is right when
//!   it is within the output's tolerance of either expected value or between them;
//! - ends with one line `REPRODUCED: ...` (exit status 0) or `NOT REPRODUCED: ...` (1), or
//!   `CANNOT JUDGE: ...` (2) where a numeric bundle's other model has no expected values, saying
//!   REPRODUCED only when the library's own run shows the bug: a crash with the reported error
//!   (`EXPECT_ERROR`), the reported symptom (wrong shape, wrong values, NaN), a hang, a
//!   steady-state run as slow as reported, or repeated runs that differ.
//!
//! - where the library died in one pass of its optimizer (`OPTIMIZER_PASS`, ONNX Runtime only),
//!   runs each showing variant again with that pass disabled and says whether the bug goes.
//!
//! Options: `--model PATH` runs another model (e.g. `original.onnx`) with the same checks, on
//! the bundle's inputs file that holds its inputs (`--inputs PATH` names one) and with expected
//! values from onnx.reference (the stored ones are the script's model's); `--timeout SECONDS`
//! changes the time limit.

use mutagraph_backends::value::HostTensor;

/// What `repro.py` reproduces.
#[derive(Clone, Debug, PartialEq)]
pub struct ReproSpec {
    /// One line, e.g. `tract: Celu with alpha 2 gives wrong values`.
    pub title: String,
    /// `crash`, `nan`, `inconsistency`, `hang`, `slow`, `memory`, `flaky`.
    pub kind: String,
    /// The symptom class (`shape`, `values`, `nan`, `error`, `panic`, ...).
    pub symptom: String,
    /// The library: `onnxruntime`, `tract`, `burn`, or another name (not run).
    pub library: String,
    /// The variants that showed the bug (`ort`, `ort-noopt`, `tract`, ...).
    pub showing: Vec<String>,
    /// The variants that ran the model correctly (an optimizer bug's unoptimized variant).
    pub clean: Vec<String>,
    /// The variant whose own run gives the expected values (one of `clean`: an optimizer bug
    /// judged against the unoptimized run because the reference could not run the model).
    pub ground: Option<String>,
    /// The model file, relative to the bundle directory (e.g. `minimized.onnx`).
    pub model_file: String,
    /// The inputs (`.npz`, keys = graph input names).
    pub inputs_npz: String,
    /// The f64 reference's outputs (`None` if the reference failed).
    pub expected_npz: Option<String>,
    /// The native-precision reference's outputs, when computed.
    pub expected_native_npz: Option<String>,
    /// Per output: relative and absolute tolerance.
    pub tolerances: Vec<(String, f64, f64)>,
    /// Relative and absolute tolerance of outputs not listed.
    pub default_tolerance: (f64, f64),
    /// A phrase the failure message must contain (crashes).
    pub expect_error: Option<String>,
    /// Steady-state seconds at or above which a `slow` finding reproduces.
    pub slow_seconds: f64,
    /// The f64 reference's outputs written into the script itself (small numeric findings):
    /// the expected values when the stored file is missing and `onnx.reference` cannot
    /// compute them (an op it lacks, attributes it ignores).
    pub embedded_expected: Vec<(String, HostTensor)>,
    /// The optimizer pass the library died in (`NchwcTransformer`): the script runs the
    /// showing variants again with that pass disabled, which tells whether it is the cause.
    pub optimizer_pass: Option<String>,
}

/// The most bytes of expected values [`ReproSpec::embedded_expected`] holds.
pub const EMBED_LIMIT: usize = 256 * 1024;

/// The Python literal of `EMBEDDED_EXPECTED`: `{name: (numpy descr, shape, base64 bytes)}`;
/// tensors numpy cannot hold are left out.
fn embedded(values: &[(String, HostTensor)]) -> String {
    use base64::Engine;
    let items: Vec<String> = values
        .iter()
        .filter_map(|(name, t)| {
            let (descr, bytes) = super::npz::npy::npy_payload(t).ok()?;
            let shape = t.shape.iter().map(|d| d.to_string()).collect::<Vec<_>>();
            Some(format!(
                "{}: ({}, [{}], {})",
                py_str(name),
                py_str(&descr),
                shape.join(", "),
                py_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
            ))
        })
        .collect();
    format!("{{{}}}", items.join(", "))
}

const BODY: &str = include_str!("repro_body.py");

/// A Python string literal holding `s` (double quotes; backslash, quote and control
/// characters escaped).
pub(crate) fn py_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Python float literal (`float("nan")` / `float("inf")` for non-finite values).
fn py_float(x: f64) -> String {
    if x.is_nan() {
        "float(\"nan\")".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "float(\"inf\")".into()
        } else {
            "-float(\"inf\")".into()
        }
    } else {
        format!("{x:?}")
    }
}

fn py_list(v: &[String]) -> String {
    format!(
        "[{}]",
        v.iter().map(|s| py_str(s)).collect::<Vec<_>>().join(", ")
    )
}

fn py_opt(s: &Option<String>) -> String {
    s.as_deref().map_or_else(|| "None".into(), py_str)
}

/// One line of text for a `#` comment (control characters become spaces).
fn comment(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The pip package that holds a library's Python API.
fn pip_package(library: &str) -> &'static str {
    match library {
        "onnxruntime" => "onnxruntime numpy",
        "tract" => "tract numpy onnx",
        _ => "numpy",
    }
}

/// The text of `repro.py` for `spec` (see the [module documentation](self)).
pub fn render_repro_py(spec: &ReproSpec) -> String {
    let list = |v: &[String]| v.iter().map(|b| py_str(b)).collect::<Vec<_>>().join(", ");
    let mut s = String::new();
    s.push_str("#!/usr/bin/env python3\n");
    s.push_str(&format!("# {}\n", comment(&spec.title)));
    let needs = match spec.library.as_str() {
        "burn" => "Rust (cargo): the repro/ project calls burn's tensor API".to_string(),
        l => format!("pip install {}", pip_package(l)),
    };
    s.push_str(&format!(
        "#\n\
         # Reproduction script written by mutagraph (a fuzzer of ONNX inference libraries).\n\
         # Needs Python >= 3.8 and:  {needs}\n\
         # Run:  python repro.py              (files are found next to this script)\n\
         #       python repro.py --model original.onnx   (the model as found, with its own\n\
         #           inputs.npz; expected values from onnx.reference; --inputs F for others)\n\
         # Runs the model with the library itself, compares every output with the expected\n\
         # values, and ends with one line REPRODUCED: ... (exit status 0),\n\
         # NOT REPRODUCED: ... (exit status 1) or, where another model has no expected\n\
         # values, CANNOT JUDGE: ... (exit status 2).\n\
         #\n\
         # The expected values come from mutagraph's interpreter, which evaluates the ONNX\n\
         # operator definitions in float64 (EXPECTED) and in the model's own float types, the\n\
         # spec's function bodies step by step (EXPECTED_NATIVE): a result within tolerance of\n\
         # either, or between them, is right. Without those files (or with --recompute) they\n\
         # are computed with onnx.reference, else taken from EMBEDDED_EXPECTED; the script\n\
         # says which. Where mutagraph judged the bug against the library's own run as GROUND\n\
         # (the reference could not run the model), that run gives them.\n\
         \n\
         import argparse\n\
         import multiprocessing\n\
         import os\n\
         import shutil\n\
         import subprocess\n\
         import sys\n\
         import time\n\
         import urllib.parse\n\
         \n\
         import numpy as np\n\
         \n\
         # ---- what this bundle is about ----\n"
    ));
    let tolerances = spec
        .tolerances
        .iter()
        .map(|(n, r, a)| format!("{}: ({}, {})", py_str(n), py_float(*r), py_float(*a)))
        .collect::<Vec<_>>()
        .join(", ");
    let lines = [
        ("TITLE", py_str(&spec.title), "what went wrong"),
        (
            "KIND",
            py_str(&spec.kind),
            "crash | nan | inconsistency | hang | slow | memory | flaky",
        ),
        (
            "SYMPTOM",
            py_str(&spec.symptom),
            "shape | values | nan | error | panic | ...",
        ),
        (
            "LIBRARY",
            py_str(&spec.library),
            "the library that misbehaved",
        ),
        (
            "SHOWING",
            format!("[{}]", list(&spec.showing)),
            "its variants that showed the bug",
        ),
        (
            "CLEAN",
            format!("[{}]", list(&spec.clean)),
            "its variants that ran the model correctly",
        ),
        (
            "GROUND",
            py_opt(&spec.ground),
            "the variant whose own run gives the expected values (None: the reference)",
        ),
        ("MODEL", py_str(&spec.model_file), "the ONNX model"),
        (
            "INPUTS",
            py_str(&spec.inputs_npz),
            "its inputs, by graph input name",
        ),
        (
            "EXPECTED",
            py_opt(&spec.expected_npz),
            "float64 reference outputs, by graph output name (None: the reference failed)",
        ),
        (
            "EXPECTED_NATIVE",
            py_opt(&spec.expected_native_npz),
            "the reference in the model's own float types (None: not computed)",
        ),
        (
            "TOLERANCES",
            format!("{{{tolerances}}}"),
            "per output: (rtol, atol); wrong when |actual - expected| > atol + rtol * |expected|",
        ),
        (
            "DEFAULT_TOLERANCE",
            format!(
                "({}, {})",
                py_float(spec.default_tolerance.0),
                py_float(spec.default_tolerance.1)
            ),
            "",
        ),
        (
            "EXPECT_ERROR",
            py_opt(&spec.expect_error),
            "kind crash: the failure message contains this",
        ),
        (
            "SLOW_SECONDS",
            py_float(spec.slow_seconds),
            "kind slow: a steady-state run this long or longer reproduces it",
        ),
        (
            "EMBEDDED_EXPECTED",
            embedded(&spec.embedded_expected),
            "float64 reference outputs written here: {name: (dtype, shape, base64 bytes)}",
        ),
        (
            "OPTIMIZER_PASS",
            py_opt(&spec.optimizer_pass),
            "the optimizer pass the library died in (None: not one pass); run again without it",
        ),
        (
            "OPTIMIZER_PASS_NAMES",
            py_list(&spec.optimizer_pass.as_deref().map_or_else(Vec::new, |p| {
                if spec.library == "onnxruntime" {
                    mutagraph_backends::catalog::ort_transformer_names(p)
                } else {
                    vec![p.to_string()]
                }
            })),
            "the names disabling that pass takes (ONNX Runtime registers some once per level)",
        ),
        (
            "PIP_PACKAGE",
            py_str(pip_package(&spec.library)),
            "what to install",
        ),
    ];
    for (name, value, note) in lines {
        if note.is_empty() {
            s.push_str(&format!("{name} = {value}\n"));
        } else {
            s.push_str(&format!("{name} = {value}  # {note}\n"));
        }
    }
    s.push_str(BODY);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ReproSpec {
        ReproSpec {
            title: "tract: \"Conv\" differs\nsecond line".into(),
            kind: "inconsistency".into(),
            symptom: "values".into(),
            library: "tract".into(),
            showing: vec!["tract".into()],
            clean: vec![],
            ground: None,
            model_file: "minimized.onnx".into(),
            inputs_npz: "inputs.npz".into(),
            expected_npz: Some("expected.npz".into()),
            expected_native_npz: None,
            tolerances: vec![("y".into(), 1e-3, 1e-7)],
            default_tolerance: (5e-3, 1e-3),
            expect_error: None,
            slow_seconds: 0.05,
            embedded_expected: vec![],
            optimizer_pass: None,
        }
    }

    #[test]
    fn constants_are_python_literals() {
        let s = render_repro_py(&spec());
        assert!(s.contains("TITLE = \"tract: \\\"Conv\\\" differs\\nsecond line\""));
        assert!(s.contains("# tract: \"Conv\" differs second line\n"));
        assert!(s.contains("SHOWING = [\"tract\"]"));
        assert!(s.contains("EXPECTED = \"expected.npz\""));
        assert!(s.contains("EXPECTED_NATIVE = None"));
        assert!(s.contains("TOLERANCES = {\"y\": (0.001, 1e-7)}"));
        assert!(s.contains("pip install tract numpy onnx"));
        assert!(s.ends_with("sys.exit(main())\n"));
    }

    #[test]
    fn escapes() {
        assert_eq!(py_str("a\\b\x01\u{7f}é"), "\"a\\\\b\\x01\\x7fé\"");
        assert_eq!(py_float(f64::NAN), "float(\"nan\")");
        assert_eq!(py_float(f64::NEG_INFINITY), "-float(\"inf\")");
        assert_eq!(py_float(0.5), "0.5");
    }
}
