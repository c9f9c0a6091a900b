//! The files of a bug bundle that a maintainer reads without this tool: NumPy `.npz` archives
//! of inputs and outputs, `repro.py` (needs only `pip install onnxruntime numpy`) and
//! `REPORT.md`, the text of an upstream issue.
use mutagraph_backends::value::{Data, HostTensor, NamedValues, Value};
use mutagraph_ir::model::write_atomic;
use std::path::Path;

/// Why a bundle file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// Writing failed.
    #[error("{path}: {problem}")]
    Write {
        /// The file.
        path: String,
        /// What went wrong.
        problem: String,
    },
}

// ---------------------------------------------------------------------------------------------
// .npz: a zip archive (stored, no compression) of .npy files.

fn crc32(bytes: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *t = c;
    }
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c = table[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8);
    }
    c ^ 0xFFFF_FFFF
}

/// The `.npy` bytes of a tensor (format 1.0, little-endian, C order). bf16 is written as f32
/// (NumPy has no bf16); strings are not supported (`None`).
pub fn npy(t: &HostTensor) -> Option<Vec<u8>> {
    let (descr, body): (&str, Vec<u8>) = match &t.data {
        Data::F32(v) => ("<f4", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        Data::F64(v) => ("<f8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        Data::I8(v) => ("|i1", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        Data::I16(v) => ("<i2", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        Data::I32(v) => ("<i4", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        Data::I64(v) => ("<i8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        Data::U8(v) => ("|u1", v.clone()),
        Data::U16(v) => ("<u2", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        Data::U32(v) => ("<u4", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        Data::U64(v) => ("<u8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        Data::Bool(v) => ("|b1", v.iter().map(|&b| b as u8).collect()),
        _ => {
            // f16 / bf16 and friends: as f32 values.
            let v = t.to_f64s()?;
            (
                "<f4",
                v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect(),
            )
        }
    };
    let shape = match t.shape.len() {
        0 => "()".to_string(),
        1 => format!("({},)", t.shape[0]),
        _ => format!(
            "({})",
            t.shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(body);
    Some(out)
}

/// A stored zip archive of `files`.
pub fn zip_stored(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in files {
        let crc = crc32(data);
        let offset = out.len() as u32;
        let fixed = |v: &mut Vec<u8>| {
            v.extend(20u16.to_le_bytes()); // version needed
            v.extend(0u16.to_le_bytes()); // flags
            v.extend(0u16.to_le_bytes()); // stored
            v.extend(0u16.to_le_bytes()); // time
            v.extend(0x21u16.to_le_bytes()); // date (1980-01-01)
            v.extend(crc.to_le_bytes());
            v.extend((data.len() as u32).to_le_bytes());
            v.extend((data.len() as u32).to_le_bytes());
            v.extend((name.len() as u16).to_le_bytes());
            v.extend(0u16.to_le_bytes()); // extra
        };
        out.extend(0x0403_4b50u32.to_le_bytes());
        fixed(&mut out);
        out.extend(name.as_bytes());
        out.extend(data);
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend(20u16.to_le_bytes()); // version made by
        fixed(&mut central);
        central.extend(0u16.to_le_bytes()); // comment
        central.extend(0u16.to_le_bytes()); // disk
        central.extend(0u16.to_le_bytes()); // internal attributes
        central.extend(0u32.to_le_bytes()); // external attributes
        central.extend(offset.to_le_bytes());
        central.extend(name.as_bytes());
    }
    let start = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(start.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

/// Writes `values` as an `.npz` (keys are the value names; tensors only, strings skipped),
/// atomically.
pub fn write_npz(path: &Path, values: &NamedValues) -> Result<(), BundleError> {
    let files: Vec<(String, Vec<u8>)> = values
        .iter()
        .filter_map(|(n, v)| match v {
            Value::Tensor(t) => Some((format!("{n}.npy"), npy(t)?)),
            _ => None,
        })
        .collect();
    write_atomic(path, &zip_stored(&files)).map_err(|e| BundleError::Write {
        path: path.display().to_string(),
        problem: e.to_string(),
    })
}

// ---------------------------------------------------------------------------------------------
// repro.py

/// What `repro.py` reproduces.
#[derive(Clone, Debug)]
pub struct ReproSpec {
    /// One line.
    pub title: String,
    /// crash | nan | inconsistency | hang | slow | memory | flaky.
    pub kind: String,
    /// The faulty backends.
    pub faulty: Vec<String>,
    /// Model file, relative to the bundle.
    pub model_file: String,
    /// Inputs (`.npz`, keys = graph input names).
    pub inputs_npz: String,
    /// The reference outputs, when the reference ran.
    pub expected_npz: Option<String>,
    /// The faulty backend's outputs, when it produced any.
    pub faulty_npz: Option<String>,
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

fn py_str(s: &str) -> String {
    format!("{:?}", s)
}

/// The text of `repro.py`.
pub fn render_repro_py(spec: &ReproSpec) -> String {
    let faulty = spec
        .faulty
        .iter()
        .map(|b| py_str(b))
        .collect::<Vec<_>>()
        .join(", ");
    let opt = |o: &Option<String>| o.as_deref().map(py_str).unwrap_or_else(|| "None".into());
    format!(
        r#"#!/usr/bin/env python3
# {title}
# Reproduction script written by mutagraph. Needs only: pip install onnxruntime numpy
# Usage: python repro.py [--model other.onnx]
# Exit status 0: the recorded bug shows; 1: it does not.
import os
import sys

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
KIND = {kind}
FAULTY = [{faulty}]
MODEL = {model}
INPUTS = {inputs}
EXPECTED = {expected}
FAULTY_OUTPUTS = {faulty_npz}
RTOL, ATOL = {rtol:e}, {atol:e}


def load(name):
    if name is None:
        return None
    with np.load(os.path.join(HERE, name)) as z:
        return {{k: z[k] for k in z.files}}


def show(label, arrays):
    for k, v in arrays.items():
        flat = np.asarray(v).ravel()
        print(f"  {{label}} {{k}}: shape {{list(np.shape(v))}} dtype {{np.asarray(v).dtype}} first {{flat[:10].tolist()}}")


def differs(expected, got):
    """Returns (bad, text): whether `got` shows the KIND symptom against `expected`."""
    bad = False
    lines = []
    for k, e in expected.items():
        if k not in got:
            lines.append(f"  output {{k}} missing")
            bad = True
            continue
        g = np.asarray(got[k])
        e = np.asarray(e)
        if g.shape != e.shape:
            lines.append(f"  output {{k}}: shape {{list(g.shape)}}, expected {{list(e.shape)}}")
            bad = True
            continue
        ef = e.astype(np.float64)
        gf = g.astype(np.float64)
        new_nonfinite = int(np.sum(np.isfinite(ef) & ~np.isfinite(gf)))
        both = np.isfinite(ef) & np.isfinite(gf)
        err = np.abs(gf - ef)
        beyond = int(np.sum(both & (err > ATOL + RTOL * np.abs(ef))))
        max_abs = float(err[both].max()) if both.any() else 0.0
        lines.append(f"  output {{k}}: max abs error {{max_abs:.3g}}, {{beyond}} elements beyond tolerance, {{new_nonfinite}} new NaN/Inf")
        if KIND == "nan":
            bad |= new_nonfinite > 0
        else:
            bad |= beyond > 0 or new_nonfinite > 0
    return bad, "\n".join(lines)


def main():
    model = MODEL
    if "--model" in sys.argv:
        model = sys.argv[sys.argv.index("--model") + 1]
    inputs = load(INPUTS)
    expected = load(EXPECTED)
    recorded = load(FAULTY_OUTPUTS)
    ort_faulty = [b for b in FAULTY if b.startswith("ort")]
    so = ort.SessionOptions()
    if "ort-noopt" in FAULTY:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    print(f"onnxruntime {{ort.__version__}}, model {{model}}, bug: {{KIND}} in {{', '.join(FAULTY)}}")
    try:
        sess = ort.InferenceSession(os.path.join(HERE, model), so, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        got = dict(zip(names, sess.run(None, inputs)))
        error = None
    except Exception as e:  # a crash of onnxruntime is the bug for crash findings
        got, error = None, e
    if expected is not None:
        print("expected (reference interpreter, computed in f64):")
        show("expected", expected)
    if error is not None:
        print(f"onnxruntime raised: {{type(error).__name__}}: {{error}}")
    else:
        print("onnxruntime:")
        show("got", got)
    if ort_faulty:
        if KIND == "crash":
            ok = error is not None
        elif got is None or expected is None:
            ok = False
        else:
            ok, text = differs(expected, got)
            print(text)
        print(("REPRODUCED: " if ok else "NOT REPRODUCED: ") + f"{{KIND}} in {{', '.join(ort_faulty)}}")
        return 0 if ok else 1
    # The faulty backend is not onnxruntime: onnxruntime is a cross-check, and the recorded
    # outputs of the faulty backend show the discrepancy.
    if got is not None and expected is not None:
        agrees, text = differs(expected, got)
        print(text)
        print("onnxruntime " + ("DISAGREES with" if agrees else "agrees with") + " the reference")
    if recorded is not None and expected is not None:
        print(f"recorded outputs of {{', '.join(FAULTY)}}:")
        show("recorded", recorded)
        ok, text = differs(expected, recorded)
        print(text)
    else:
        ok = KIND in ("crash", "hang", "memory", "slow")
    print(("REPRODUCED: " if ok else "NOT REPRODUCED: ") + f"{{KIND}} in {{', '.join(FAULTY)}} (recorded outputs; run that backend to see it live, see REPORT.md)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
"#,
        title = spec.title.replace('\n', " "),
        kind = py_str(&spec.kind),
        model = py_str(&spec.model_file),
        inputs = py_str(&spec.inputs_npz),
        expected = opt(&spec.expected_npz),
        faulty_npz = opt(&spec.faulty_npz),
        rtol = spec.rtol,
        atol = spec.atol,
    )
}

// ---------------------------------------------------------------------------------------------
// REPORT.md

/// The content of `REPORT.md`.
#[derive(Clone, Debug, Default)]
pub struct ReportSpec {
    /// Title.
    pub title: String,
    /// One paragraph.
    pub summary: String,
    /// (backend, version, status line) of every backend that ran.
    pub environment: Vec<(String, String, String)>,
    /// The model, one line per node, and its inputs / outputs.
    pub model_text: String,
    /// (label, shell command).
    pub steps: Vec<(String, String)>,
    /// (output, expected first values, actual first values, max abs error).
    pub values: Vec<(String, String, String, String)>,
    /// Error text of a crash.
    pub error: Option<String>,
    /// Localization, in words.
    pub localization: Option<String>,
    /// Provenance lines.
    pub provenance: Vec<String>,
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The text of `REPORT.md`.
pub fn render_report_md(r: &ReportSpec) -> String {
    let mut s = format!(
        "# {}\n\n## Summary\n\n{}\n\n## Environment\n\n",
        r.title, r.summary
    );
    s.push_str("| backend | version | result |\n|---|---|---|\n");
    for (b, v, st) in &r.environment {
        s.push_str(&format!("| {} | {} | {} |\n", cell(b), cell(v), cell(st)));
    }
    s.push_str(&format!(
        "\n## Minimal model\n\n```\n{}\n```\n\n## Steps to reproduce\n\n",
        r.model_text.trim_end()
    ));
    for (label, cmd) in &r.steps {
        s.push_str(&format!("{label}:\n\n```sh\n{cmd}\n```\n\n"));
    }
    if !r.values.is_empty() {
        s.push_str("## Expected vs actual\n\n| output | expected (reference, f64) | actual | max abs error |\n|---|---|---|---|\n");
        for (o, e, a, m) in &r.values {
            s.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                cell(o),
                cell(e),
                cell(a),
                cell(m)
            ));
        }
        s.push('\n');
    }
    if let Some(e) = &r.error {
        s.push_str(&format!("## Error\n\n```\n{}\n```\n\n", e.trim_end()));
    }
    if let Some(l) = &r.localization {
        s.push_str(&format!("## Details\n\n{l}\n\n"));
    }
    s.push_str("## Provenance\n\n");
    for p in &r.provenance {
        s.push_str(&format!("- {p}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_and_npy_headers_are_right() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let t = HostTensor::new(vec![2, 3], Data::F32(vec![0.0; 6]));
        let b = npy(&t).unwrap();
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        let hl = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + hl) % 64, 0);
        let h = std::str::from_utf8(&b[10..10 + hl]).unwrap();
        assert!(h.contains("'shape': (2, 3)") && h.contains("<f4"), "{h}");
        assert_eq!(b.len(), 10 + hl + 24);
        let s = npy(&HostTensor::new(vec![], Data::I64(vec![7]))).unwrap();
        assert!(std::str::from_utf8(&s[10..20]).is_ok());
    }

    #[test]
    fn report_escapes_cells_and_skips_empty_sections() {
        let r = ReportSpec {
            title: "t".into(),
            environment: vec![("ort".into(), "1|2".into(), "ok".into())],
            ..Default::default()
        };
        let md = render_report_md(&r);
        assert!(md.contains("1\\|2"));
        assert!(!md.contains("## Error") && !md.contains("## Expected vs actual"));
    }
}
