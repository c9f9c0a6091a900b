//! `repro.py`: a stand-alone script that reproduces a finding with `pip install onnxruntime
//! numpy` only.
//!
//! The script is a fixed body (`repro_body.py`, reviewed as Python) after a header of
//! constants written from a [`ReproSpec`]. What it does:
//!
//! - loads the inputs (`.npz`, keys percent-decoded as [`super::npz`] documents), the reference
//!   outputs and the faulty backend's recorded outputs when the bundle has them;
//! - runs the model with ONNX Runtime on the CPU in a child process (so that a segfault or a
//!   hang of the library is observed, not suffered), once per ORT variant among the faulty
//!   backends (`ort`: `ORT_ENABLE_ALL`; `ort-noopt`: `ORT_DISABLE_ALL`; `ort-cuda`: the CUDA
//!   provider when installed), or once as `ort` for a cross-check when the faulty backend is
//!   another library;
//! - prints each output (dtype, shape, first values), the reference's values, the error
//!   metrics (max abs / rel error, elements beyond `atol + rtol*|expected|`, NaN / Inf counts)
//!   and the recorded outputs;
//! - ends with one line `REPRODUCED: ...` (exit status 0) or `NOT REPRODUCED: ...` (1).
//!
//! Verdicts. For an ORT variant: `crash` = an exception or a dead process; `hang` / `timeout` =
//! no result after `HANG_SECONDS` (60 s, or `--timeout`); `inconsistency` = some element beyond
//! tolerance, a wrong shape or a missing output; `nan` = NaN / Inf where the reference is finite
//! (any NaN / Inf without a reference); `flaky` = repeated runs differ. `slow` and
//! `memory` / `oom` are printed (time, peak RSS) but not judged: NOT REPRODUCED. For another
//! backend the script checks the bundle is self-consistent: `inconsistency` / `nan` are
//! reproduced when the recorded outputs differ from the reference that way; the other kinds
//! leave nothing to check (NOT REPRODUCED, pointing at `report.md`). The final line says
//! whether ORT agrees with the reference.
//!
//! Options: `--model PATH` runs another model (e.g. `original.onnx`) with the same checks,
//! `--timeout SECONDS` changes the time limit.

/// What `repro.py` reproduces.
#[derive(Clone, Debug, PartialEq)]
pub struct ReproSpec {
    /// One line, e.g. `tract: Conv output differs from the reference`.
    pub title: String,
    /// `crash`, `nan`, `inconsistency`, `hang` (or `timeout`), `slow`, `memory` (or `oom`),
    /// `flaky`.
    pub kind: String,
    /// The faulty backends' names (`ort`, `ort-noopt`, `tract`, `burn-ndarray`, `reference`...).
    pub faulty: Vec<String>,
    /// The model file, relative to the bundle directory (e.g. `minimized.onnx`).
    pub model_file: String,
    /// The inputs (`.npz`, keys = graph input names).
    pub inputs_npz: String,
    /// The reference outputs (`.npz`, keys = graph output names), `None` if the reference
    /// failed.
    pub expected_npz: Option<String>,
    /// The faulty backend's outputs as recorded, if any.
    pub faulty_npz: Option<String>,
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
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

fn py_opt(s: &Option<String>) -> String {
    s.as_deref().map_or_else(|| "None".into(), py_str)
}

/// One line of text for a `#` comment (control characters become spaces).
fn comment(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The text of `repro.py` for `spec` (see the [module documentation](self)).
pub fn render_repro_py(spec: &ReproSpec) -> String {
    let faulty = spec
        .faulty
        .iter()
        .map(|b| py_str(b))
        .collect::<Vec<_>>()
        .join(", ");
    let mut s = String::new();
    s.push_str("#!/usr/bin/env python3\n");
    s.push_str(&format!("# {}\n", comment(&spec.title)));
    s.push_str(
        "#\n\
         # Reproduction script written by mutagraph (a fuzzer of ONNX inference libraries).\n\
         # Needs Python >= 3.8 and:  pip install onnxruntime numpy\n\
         # Run:  python repro.py              (files are found next to this script)\n\
         #       python repro.py --model original.onnx   (same checks on another model)\n\
         # Prints every output, compares it with the reference outputs, and ends with one line\n\
         # REPRODUCED: ... (exit status 0) or NOT REPRODUCED: ... (exit status 1).\n\
         #\n\
         # The reference outputs come from mutagraph's float64 interpreter, which evaluates\n\
         # the ONNX operator definitions directly.\n\
         \n\
         import argparse\n\
         import multiprocessing\n\
         import os\n\
         import sys\n\
         import time\n\
         import urllib.parse\n\
         \n\
         import numpy as np\n\
         \n\
         # ---- what this bundle is about ----\n",
    );
    let lines = [
        ("TITLE", py_str(&spec.title), "what went wrong"),
        (
            "KIND",
            py_str(&spec.kind),
            "crash | nan | inconsistency | hang | slow | memory | flaky",
        ),
        (
            "FAULTY",
            format!("[{faulty}]"),
            "the backend(s) that misbehaved",
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
            "reference outputs, by graph output name (None: the reference failed)",
        ),
        (
            "FAULTY_OUTPUTS",
            py_opt(&spec.faulty_npz),
            "the faulty backend's outputs as mutagraph recorded them",
        ),
        (
            "RTOL",
            py_float(spec.rtol),
            "an element is wrong when |actual - expected| > ATOL + RTOL * |expected|",
        ),
        ("ATOL", py_float(spec.atol), ""),
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
            faulty: vec!["tract".into()],
            model_file: "minimized.onnx".into(),
            inputs_npz: "inputs.npz".into(),
            expected_npz: Some("expected.npz".into()),
            faulty_npz: None,
            rtol: 1e-3,
            atol: 1e-7,
        }
    }

    #[test]
    fn constants_are_python_literals() {
        let s = render_repro_py(&spec());
        assert!(s.contains("TITLE = \"tract: \\\"Conv\\\" differs\\nsecond line\""));
        assert!(s.contains("# tract: \"Conv\" differs second line\n"));
        assert!(s.contains("FAULTY = [\"tract\"]"));
        assert!(s.contains("EXPECTED = \"expected.npz\""));
        assert!(s.contains("FAULTY_OUTPUTS = None"));
        assert!(s.contains("RTOL = 0.001"));
        assert!(s.contains("ATOL = 1e-7"));
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
