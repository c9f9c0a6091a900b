//! `mutagraph prompt oracle-eval`: ATOC's accuracy on labelled cases whose right answer is
//! known by construction, built deterministically from the ONNX backend test suite
//! (Debian `libonnx-testdata`, node tests of small ops).
//!
//! - Conformance cases: the suite's expected output is what one backend "produced"; another
//!   "produced" a planted wrong output, a perturbation a reader of the specification can see
//!   (see [`Wrong`]). The right backend's name rotates over [`BACKENDS`], and so does which of
//!   the two is listed first. Every fifth case has both outputs wrong (label `all-wrong`).
//! - Planted-bug cases: a suite model run in process on the reference interpreter and on one
//!   of the planted-bug backends (`mutagraph_backends::planted`) whose bug the test triggers;
//!   the reference's output (checked against the suite's expected one) is the right one.
use anyhow::{Context, Result, anyhow, bail};
use mutagraph_backends::Backend;
use mutagraph_backends::planted;
use mutagraph_backends::reference::Reference;
use mutagraph_backends::suite;
use mutagraph_backends::value::{Data, HostTensor, NamedValues, Value};
use mutagraph_ir::dtype::DType;
use mutagraph_prompts::atoc::eval::{CaseResult, EvalReport, Labelled};
use mutagraph_prompts::atoc::{self, Case, Decision, OpSpecText, SpecSource};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The backend names the cases use, in rotation.
pub const BACKENDS: [&str; 3] = ["ort", "tract", "burn-ndarray"];

/// Every how-many-th conformance case has no right output.
const ALL_WRONG_EVERY: usize = 5;

/// Most characters of an op's documentation in the prompt ([`OpSpecText::brief`]).
///
/// [`OpSpecText::brief`]: mutagraph_prompts::atoc::OpSpecText::brief
pub const DOC_CHARS: usize = 600;

/// How a wrong output is planted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrong {
    /// Every value negated (wrong sign).
    Sign,
    /// Integer outputs (indices) one too large; other outputs shifted by one position.
    OffByOne,
    /// The first input passed through unchanged (a missing clamp, activation or negation).
    Passthrough,
    /// The middle value NaN.
    Nan,
}

impl Wrong {
    fn describe(self) -> &'static str {
        match self {
            Wrong::Sign => "wrong sign",
            Wrong::OffByOne => "off by one",
            Wrong::Passthrough => "input passed through",
            Wrong::Nan => "NaN",
        }
    }
}

/// The conformance cases: node test and the wrong output planted.
pub const CONFORMANCE: &[(&str, Wrong)] = &[
    ("test_clip_example", Wrong::Passthrough),
    ("test_clip_outbounds", Wrong::Passthrough),
    ("test_clip_splitbounds", Wrong::Passthrough),
    ("test_argmax_default_axis_example", Wrong::OffByOne),
    ("test_argmax_keepdims_example", Wrong::OffByOne),
    ("test_argmin_no_keepdims_example", Wrong::OffByOne),
    (
        "test_argmin_default_axis_example_select_last_index",
        Wrong::OffByOne,
    ),
    ("test_ceil_example", Wrong::Sign),
    ("test_floor_example", Wrong::Sign),
    ("test_neg_example", Wrong::Passthrough),
    ("test_reciprocal_example", Wrong::Nan),
    ("test_sqrt_example", Wrong::Nan),
    ("test_softmax_example", Wrong::Nan),
    ("test_leakyrelu_example", Wrong::Passthrough),
    ("test_elu_example", Wrong::Passthrough),
    ("test_hardsigmoid_example", Wrong::Passthrough),
    ("test_selu_example", Wrong::Sign),
    ("test_sigmoid_example", Wrong::Sign),
    ("test_tanh_example", Wrong::Nan),
    ("test_exp_example", Wrong::Sign),
    ("test_log_example", Wrong::Nan),
    ("test_cumsum_1d", Wrong::OffByOne),
    ("test_cumsum_1d_reverse", Wrong::OffByOne),
    ("test_thresholdedrelu_example", Wrong::Passthrough),
    ("test_shrink_soft", Wrong::Passthrough),
    ("test_max_example", Wrong::Sign),
    ("test_min_two_inputs", Wrong::Passthrough),
    ("test_mod_mixed_sign_int32", Wrong::Sign),
    ("test_sign", Wrong::OffByOne),
    ("test_range_float_type_positive_delta", Wrong::OffByOne),
    ("test_gather_elements_0", Wrong::OffByOne),
    ("test_pow_example", Wrong::Nan),
    ("test_softplus_example", Wrong::Sign),
    ("test_reduce_mean_keepdims_example", Wrong::OffByOne),
    ("test_reduce_sum_keepdims_example", Wrong::Sign),
];

/// The planted-bug cases: node test and the planted backend whose bug it triggers.
pub const PLANTED: &[(&str, &str)] = &[
    ("test_softmax_large_number", planted::SOFTMAX),
    (
        "test_reduce_mean_negative_axes_keepdims_example",
        planted::REDUCE_MEAN,
    ),
    (
        "test_reduce_mean_negative_axes_keepdims_random",
        planted::REDUCE_MEAN,
    ),
];

/// One value as the prompt shows it: integers without a fraction, others with at most 4
/// decimals, `nan`, `inf`, `-inf`.
fn fmt_value(x: f64, dtype: DType) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if dtype == DType::Bool {
        return (x != 0.0).to_string();
    }
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// `float[2,3] [1, 2.5, ...]`.
fn describe(dtype: DType, shape: &[usize], values: &[f64]) -> String {
    let shape = shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let values = values
        .iter()
        .map(|&x| fmt_value(x, dtype))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{}[{shape}] [{values}]",
        format!("{dtype:?}").to_lowercase()
    )
}

fn tensor(v: &Value, what: &str) -> Result<HostTensor> {
    let t = v
        .tensor()
        .ok_or_else(|| anyhow!("{what} is not a tensor"))?;
    if matches!(t.data, Data::String(_) | Data::Raw(_)) {
        bail!("{what} holds no numbers");
    }
    Ok(t.clone())
}

fn values(t: &HostTensor) -> Vec<f64> {
    t.to_f64s().unwrap_or_default()
}

fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-5 + 1e-4 * y.abs().max(x.abs())
        })
}

/// The planted wrong values, or none when `w` does not apply or changes nothing.
fn plant(w: Wrong, expected: &HostTensor, first_input: &[f64]) -> Option<Vec<f64>> {
    let v = values(expected);
    let out: Vec<f64> = match w {
        Wrong::Sign => v.iter().map(|x| -x).collect(),
        Wrong::OffByOne if expected.dtype.is_int() => v.iter().map(|x| x + 1.0).collect(),
        Wrong::OffByOne => {
            let mut r = v.clone();
            r.rotate_left(1);
            r
        }
        Wrong::Passthrough if first_input.len() == v.len() => first_input.to_vec(),
        Wrong::Passthrough => return None,
        // Integers have no NaN: such an output is not something a backend could produce.
        Wrong::Nan if expected.dtype.is_int() => return None,
        Wrong::Nan => {
            let mut r = v.clone();
            let mid = r.len() / 2;
            *r.get_mut(mid)? = f64::NAN;
            r
        }
    };
    (!same(&out, &v)).then_some(out)
}

/// `w`'s wrong values, else those of the first other perturbation that changes something.
fn plant_any(w: Wrong, expected: &HostTensor, first_input: &[f64]) -> Result<(Wrong, Vec<f64>)> {
    [w, Wrong::OffByOne, Wrong::Sign, Wrong::Nan]
        .into_iter()
        .find_map(|w| plant(w, expected, first_input).map(|v| (w, v)))
        .ok_or_else(|| anyhow!("no perturbation changes the expected output"))
}

/// A loaded node test: the case without its outputs, the expected output, the first input.
struct Loaded {
    case: Case,
    expected: HostTensor,
    first_input: Vec<f64>,
    inputs: NamedValues,
    model_bytes: Vec<u8>,
}

fn load(root: &Path, test: &str) -> Result<Loaded> {
    let dir = root.join("node").join(test);
    let r = suite::CaseRef {
        part: "node".into(),
        name: test.into(),
        dir: dir.clone(),
    };
    let c = suite::load(&r).map_err(|e| anyhow!("{e}"))?;
    let set = c
        .sets
        .first()
        .ok_or_else(|| anyhow!("{}: no test_data_set_0", dir.display()))?;
    let ops: Vec<String> = c.model.graph.nodes().map(|n| n.op_type.clone()).collect();
    if ops.len() != 1 {
        bail!("{}: not a one-node model ({ops:?})", dir.display());
    }
    if set.outputs.len() != 1 {
        bail!("{}: not a one-output model", dir.display());
    }
    let mut inputs = Vec::new();
    let mut first_input = None;
    for (name, v) in &set.inputs {
        let t = tensor(v, &format!("{}: input {name}", dir.display()))?;
        first_input.get_or_insert_with(|| values(&t));
        inputs.push((name.clone(), describe(t.dtype, &t.shape, &values(&t))));
    }
    let expected = tensor(&set.outputs[0].1, &format!("{}: output", dir.display()))?;
    Ok(Loaded {
        case: Case {
            op: ops[0].clone(),
            domain: String::new(),
            opset: c.model.default_opset(),
            model: {
                // The test's name would give away what it tests.
                let mut m = c.model.clone();
                m.graph.name = Some("case".into());
                m.producer_name = None;
                mutagraph_ir::text::print_model(&m)
            },
            inputs,
            outputs: Vec::new(),
            question: String::new(),
        },
        expected,
        first_input: first_input.unwrap_or_default(),
        inputs: set.inputs.clone(),
        model_bytes: c.model_bytes.clone(),
    })
}

fn run_in_process(mut b: Reference, l: &Loaded) -> Result<String> {
    let name = b.name().to_string();
    let ran = b.prepare(&l.model_bytes).and_then(|mut p| p.run(&l.inputs));
    Ok(match ran {
        Ok(outs) => {
            let (_, v) = outs
                .first()
                .ok_or_else(|| anyhow!("{name} returned no output"))?;
            let t = tensor(v, &format!("{name}'s output"))?;
            describe(t.dtype, &t.shape, &values(&t))
        }
        Err(e) => format!("error: {e}"),
    })
}

/// Every labelled case, in a fixed order, from the suite at `root` (see the module's doc).
pub fn cases(root: &Path) -> Result<Vec<Labelled>> {
    if !root.join("node").is_dir() {
        return Err(anyhow!(
            "{}",
            suite::SuiteError::Missing(root.to_path_buf())
        ));
    }
    let mut out = Vec::new();
    for (i, &(test, wrong)) in CONFORMANCE.iter().enumerate() {
        let l = load(root, test).with_context(|| format!("conformance case {test}"))?;
        let exp = &l.expected;
        let expected_text = describe(exp.dtype, &exp.shape, &values(exp));
        let (a, b) = (BACKENDS[i % 3], BACKENDS[(i + 1) % 3]);
        let (w1, v1) = plant_any(wrong, exp, &l.first_input)
            .with_context(|| format!("conformance case {test}"))?;
        let wrong_text = describe(exp.dtype, &exp.shape, &v1);
        let all_wrong = i % ALL_WRONG_EVERY == ALL_WRONG_EVERY - 1;
        let (outputs, label, source) = if all_wrong {
            let second = if w1 == Wrong::Nan {
                Wrong::Sign
            } else {
                Wrong::Nan
            };
            let (w2, v2) = [second, Wrong::OffByOne, Wrong::Sign, Wrong::Nan]
                .into_iter()
                .filter(|&w| w != w1)
                .find_map(|w| plant(w, exp, &l.first_input).map(|v| (w, v)))
                .ok_or_else(|| anyhow!("conformance case {test}: no second perturbation"))?;
            (
                vec![
                    (a.to_string(), wrong_text),
                    (b.to_string(), describe(exp.dtype, &exp.shape, &v2)),
                ],
                "all-wrong".to_string(),
                format!("node/{test}: {a} {}, {b} {}", w1.describe(), w2.describe()),
            )
        } else {
            let right = (a.to_string(), expected_text);
            let bad = (b.to_string(), wrong_text);
            let outputs = if i.is_multiple_of(2) {
                vec![right, bad]
            } else {
                vec![bad, right]
            };
            (
                outputs,
                a.to_string(),
                format!("node/{test}: {a} expected output, {b} {}", w1.describe()),
            )
        };
        out.push(Labelled {
            id: format!("conformance/{test}"),
            source,
            label,
            case: Case { outputs, ..l.case },
        });
    }
    for (j, &(test, bug)) in PLANTED.iter().enumerate() {
        let l = load(root, test).with_context(|| format!("planted case {test}"))?;
        let exp = &l.expected;
        let ours = Reference::new()
            .prepare(&l.model_bytes)
            .and_then(|mut p| p.run(&l.inputs))
            .map_err(|e| anyhow!("planted case {test}: the reference fails: {e}"))?;
        let t0 = tensor(
            &ours
                .first()
                .ok_or_else(|| anyhow!("planted case {test}: the reference returned nothing"))?
                .1,
            "the reference's output",
        )?;
        if t0.shape != exp.shape || !same(&values(&t0), &values(exp)) {
            bail!("planted case {test}: the reference disagrees with the suite's expected output");
        }
        let reference = describe(t0.dtype, &t0.shape, &values(&t0));
        let p = planted::by_name(bug).ok_or_else(|| anyhow!("no planted backend {bug}"))?;
        let wrong = run_in_process(p, &l)?;
        if wrong == reference {
            bail!("planted case {test}: {bug} gives the right output (its bug is not triggered)");
        }
        let i = CONFORMANCE.len() + j;
        let (a, b) = (BACKENDS[i % 3], BACKENDS[(i + 1) % 3]);
        let right = (a.to_string(), reference);
        let bad = (b.to_string(), wrong);
        let outputs = if i.is_multiple_of(2) {
            vec![right, bad]
        } else {
            vec![bad, right]
        };
        out.push(Labelled {
            id: format!("planted/{test}"),
            source: format!("node/{test}: {a} the reference interpreter, {b} {bug}"),
            label: a.to_string(),
            case: Case { outputs, ..l.case },
        });
    }
    Ok(out)
}

/// `--list`: each case's id, op, label and the size of its prompt (the specification is read
/// as for the evaluation).
pub fn list(
    cases: &[Labelled],
    specs: &dyn SpecSource,
    shorten: &dyn Fn(&OpSpecText) -> OpSpecText,
) -> Result<ExitCode> {
    for l in cases {
        let spec = specs
            .spec(&l.case.domain, &l.case.op, l.case.opset)
            .map_err(|e| anyhow!("case {}: {e}", l.id))?;
        let msgs = atoc::oracle_prompt(&shorten(&spec), &l.case)?;
        let chars: usize = msgs.iter().map(|m| m.content.chars().count()).sum();
        crate::outln!(
            "{:<62} {:<16} {:<13} {chars} chars",
            l.id,
            l.case.op,
            l.label
        );
    }
    let mut labels = std::collections::BTreeMap::<&str, usize>::new();
    for l in cases {
        *labels.entry(l.label.as_str()).or_default() += 1;
    }
    let labels = labels
        .iter()
        .map(|(l, n)| format!("{l} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    crate::outln!("{} cases: {labels}", cases.len());
    Ok(ExitCode::SUCCESS)
}

/// One line per case: id, label, leader with its confidence, decision, right or wrong.
pub fn print_case(r: &CaseResult) -> Result<()> {
    let leader = r.leader.as_deref().unwrap_or("-");
    let verdict = match (&r.decision, r.correct) {
        (Decision::Decided(_), true) => "decided, right",
        (Decision::Decided(_), false) => "decided, WRONG",
        (Decision::Unknown, _) => "unknown",
    };
    crate::outln!(
        "{:<62} label {:<13} leader {:<13} {:>4.0} %  {verdict}  ({}/{} parsed)",
        r.id,
        r.label,
        leader,
        100.0 * r.confidence,
        r.parsed,
        r.received
    );
    Ok(())
}

/// The totals.
pub fn print_summary(report: &EvalReport) -> Result<()> {
    let s = &report.summary;
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:.1} %", 100.0 * x));
    crate::outln!(
        "\n{} cases (k = {}, temperature {}, {}): accuracy {} ({} right), decided {} ({}), \
         accuracy among decided {}, answers parsed {} ({} of {} received, {} asked; {} within \
         the choices)",
        s.cases,
        report.k,
        report.temperature,
        report.llm,
        pct(Some(s.accuracy)),
        s.correct,
        pct(Some(s.decided_share)),
        s.decided,
        pct(s.accuracy_decided),
        pct(s.parse_rate),
        s.answers_parsed,
        s.answers_received,
        s.answers_asked,
        s.answers_in_choices
    );
    Ok(())
}

/// Writes `<out>/oracle-eval-report.json` atomically and returns its path.
pub fn write_report(out: &Path, report: &EvalReport) -> Result<PathBuf> {
    super::session::write_json(out, "oracle-eval-report.json", report)
}
