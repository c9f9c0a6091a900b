//! Comparison of values: error metrics (max abs / max rel / NaN / Inf) and `allclose` with
//! named tolerances.
use crate::value::{Data, HostTensor, Value};
use mutagraph_ir::dtype::DType;
use serde::{Deserialize, Serialize};

/// A named tolerance: `|a - e| <= atol + rtol * |e|` element-wise.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Name shown in reports.
    pub name: &'static str,
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
}

impl Tolerance {
    /// Exact equality.
    pub const EXACT: Tolerance = Tolerance {
        name: "exact",
        atol: 0.0,
        rtol: 0.0,
    };
    /// What the ONNX backend test runner uses by default (`rtol=1e-3, atol=1e-7`).
    pub const SUITE: Tolerance = Tolerance {
        name: "suite",
        atol: 1e-7,
        rtol: 1e-3,
    };
    /// Close enough for f32 arithmetic done in another order.
    pub const CLOSE: Tolerance = Tolerance {
        name: "close",
        atol: 1e-5,
        rtol: 1e-4,
    };
    /// Approximate: reduced precision (f16, bf16, fast-math kernels).
    pub const APPROXIMATE: Tolerance = Tolerance {
        name: "approximate",
        atol: 1e-3,
        rtol: 5e-3,
    };
    /// Integers off by one unit: the result of an interpolation or an average rounded back to
    /// an integer type, a rounding ONNX does not fix.
    pub const INTEGER_ROUNDING: Tolerance = Tolerance {
        name: "integer-rounding",
        atol: 1.0,
        rtol: 0.0,
    };
    /// Very loose, for low-precision element types.
    pub const VERY_APPROXIMATE: Tolerance = Tolerance {
        name: "very-approximate",
        atol: 5e-2,
        rtol: 5e-2,
    };

    /// The named tolerances a user may ask for, tightest first.
    pub const NAMED: [Tolerance; 5] = [
        Tolerance::EXACT,
        Tolerance::SUITE,
        Tolerance::CLOSE,
        Tolerance::APPROXIMATE,
        Tolerance::VERY_APPROXIMATE,
    ];

    /// A tolerance by name ([`Tolerance::NAMED`]; `custom` is not one).
    pub fn by_name(name: &str) -> Option<Tolerance> {
        Tolerance::NAMED.into_iter().find(|t| t.name == name)
    }

    /// The names of [`Tolerance::NAMED`], comma-separated (for error messages).
    pub fn names() -> String {
        Tolerance::NAMED.map(|t| t.name).join(", ")
    }

    /// This tolerance with the absolute and relative tolerances given (Polygraphy's
    /// `--atol`/`--rtol`), named `custom`.
    pub fn with(self, atol: Option<f64>, rtol: Option<f64>) -> Tolerance {
        if atol.is_none() && rtol.is_none() {
            return self;
        }
        Tolerance {
            name: "custom",
            atol: atol.unwrap_or(self.atol),
            rtol: rtol.unwrap_or(self.rtol),
        }
    }

    /// Widens this tolerance to what the element type can hold (f16/bf16 values are never
    /// compared tighter than `approximate` / `very-approximate`).
    pub fn for_dtype(self, dtype: mutagraph_ir::dtype::DType) -> Tolerance {
        let floor = match dtype {
            DType::F16 => Tolerance::APPROXIMATE,
            DType::BF16 => Tolerance::VERY_APPROXIMATE,
            _ => return self,
        };
        if floor.rtol > self.rtol { floor } else { self }
    }
}

/// Error metrics of one value against a reference.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Largest absolute difference over elements that are finite in both.
    pub max_abs: f64,
    /// Largest relative difference `|a - e| / |e|` over elements finite in both whose expected
    /// value is not zero.
    pub max_rel: f64,
    /// NaN elements in the actual value.
    pub nan: usize,
    /// Infinite elements in the actual value.
    pub inf: usize,
    /// Positions where exactly one side is NaN, or the infinities differ.
    pub nonfinite_mismatch: usize,
    /// Elements outside the tolerance.
    pub mismatched: usize,
    /// Elements compared.
    pub elements: usize,
}

impl Metrics {
    /// Adds the metrics of another value (of the same set of outputs): the largest errors,
    /// the summed counts.
    pub fn absorb(&mut self, m: &Metrics) {
        self.max_abs = self.max_abs.max(m.max_abs);
        self.max_rel = self.max_rel.max(m.max_rel);
        self.nan += m.nan;
        self.inf += m.inf;
        self.nonfinite_mismatch += m.nonfinite_mismatch;
        self.mismatched += m.mismatched;
        self.elements += m.elements;
    }
}

/// The verdict of a comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// True when the values agree within the tolerance.
    pub ok: bool,
    /// Why they do not, in words.
    pub reason: Option<String>,
    /// Error metrics (all tensors of the value together).
    pub metrics: Metrics,
}

impl Comparison {
    fn fail(reason: String, metrics: Metrics) -> Comparison {
        Comparison {
            ok: false,
            reason: Some(reason),
            metrics,
        }
    }
}

/// Options of a comparison.
#[derive(Clone, Copy, Debug)]
pub struct CompareOptions {
    /// The tolerance for floating-point elements (integers, booleans and strings compare exactly).
    pub tolerance: Tolerance,
    /// Require the same element type (the suite does; the f64 reference does not).
    pub check_dtype: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            tolerance: Tolerance::SUITE,
            check_dtype: true,
        }
    }
}

/// Compares `actual` against `expected`.
pub fn compare(expected: &Value, actual: &Value, opts: CompareOptions) -> Comparison {
    let mut m = Metrics::default();
    match compare_into(expected, actual, opts, &mut m) {
        Ok(()) if m.mismatched == 0 && m.nonfinite_mismatch == 0 => Comparison {
            ok: true,
            reason: None,
            metrics: m,
        },
        Ok(()) => {
            let nonfinite = if m.nonfinite_mismatch > 0 {
                format!(", {} NaN/Inf where the other is not", m.nonfinite_mismatch)
            } else {
                String::new()
            };
            let r = format!(
                "{} of {} elements differ (max abs {:.3e}, max rel {:.3e}{nonfinite}, tolerance {})",
                m.mismatched + m.nonfinite_mismatch,
                m.elements,
                m.max_abs,
                m.max_rel,
                opts.tolerance.name
            );
            Comparison::fail(r, m)
        }
        Err(r) => Comparison::fail(r.to_string(), m),
    }
}

/// Why two values cannot be compared element by element (the comparison fails with this as
/// its reason).
#[derive(Debug, thiserror::Error)]
enum Incomparable {
    /// Sequences of different lengths.
    #[error("sequence of {actual} items, expected {expected}")]
    SequenceLength { actual: usize, expected: usize },
    /// Values of different kinds (a tensor and a sequence, ...).
    #[error("got {actual}, expected {expected}")]
    Kind { actual: String, expected: String },
    /// Tensors of different element types (when the options require the same).
    #[error("dtype {actual}, expected {expected}")]
    DType { actual: DType, expected: DType },
    /// Tensors of different shapes.
    #[error("shape {actual:?}, expected {expected:?}")]
    Shape {
        actual: Vec<usize>,
        expected: Vec<usize>,
    },
    /// Element types whose values cannot be compared as numbers.
    #[error("cannot compare {actual} with {expected}")]
    Elements { actual: DType, expected: DType },
}

fn compare_into(
    expected: &Value,
    actual: &Value,
    opts: CompareOptions,
    m: &mut Metrics,
) -> Result<(), Incomparable> {
    match (expected, actual) {
        (Value::Tensor(e), Value::Tensor(a)) => compare_tensors(e, a, opts, m),
        (Value::Sequence(e), Value::Sequence(a)) => {
            if e.len() != a.len() {
                return Err(Incomparable::SequenceLength {
                    actual: a.len(),
                    expected: e.len(),
                });
            }
            for (x, y) in e.iter().zip(a) {
                compare_into(x, y, opts, m)?;
            }
            Ok(())
        }
        (Value::Optional(None), Value::Optional(None)) => Ok(()),
        (Value::Optional(Some(e)), Value::Optional(Some(a))) => compare_into(e, a, opts, m),
        // A backend may hand back an optional's content directly.
        (Value::Optional(Some(e)), a) => compare_into(e, a, opts, m),
        (e, a) => Err(Incomparable::Kind {
            actual: a.describe(),
            expected: e.describe(),
        }),
    }
}

fn compare_tensors(
    e: &HostTensor,
    a: &HostTensor,
    opts: CompareOptions,
    m: &mut Metrics,
) -> Result<(), Incomparable> {
    if opts.check_dtype && e.dtype != a.dtype {
        return Err(Incomparable::DType {
            actual: a.dtype,
            expected: e.dtype,
        });
    }
    if e.shape != a.shape {
        return Err(Incomparable::Shape {
            actual: a.shape.clone(),
            expected: e.shape.clone(),
        });
    }
    let (nan, inf) = a.nan_inf_counts();
    m.nan += nan;
    m.inf += inf;
    match (&e.data, &a.data) {
        (Data::String(x), Data::String(y)) => {
            m.elements += x.len();
            m.mismatched += x.iter().zip(y).filter(|(p, q)| p != q).count();
            return Ok(());
        }
        (Data::Raw(x), Data::Raw(y)) => {
            m.elements += x.len();
            m.mismatched += x.iter().zip(y).filter(|(p, q)| p != q).count();
            return Ok(());
        }
        _ => {}
    }
    let (Some(ev), Some(av)) = (e.to_f64s(), a.to_f64s()) else {
        return Err(Incomparable::Elements {
            actual: a.dtype,
            expected: e.dtype,
        });
    };
    let float = e.dtype.is_float() || a.dtype.is_float();
    let tol = if float {
        opts.tolerance.for_dtype(e.dtype).for_dtype(a.dtype)
    } else {
        Tolerance::EXACT
    };
    m.elements += ev.len();
    for (&x, &y) in ev.iter().zip(&av) {
        if x.is_nan() || y.is_nan() {
            if x.is_nan() != y.is_nan() {
                m.nonfinite_mismatch += 1;
            }
            continue;
        }
        if x.is_infinite() || y.is_infinite() {
            if x != y {
                m.nonfinite_mismatch += 1;
            }
            continue;
        }
        let d = (x - y).abs();
        m.max_abs = m.max_abs.max(d);
        if d > 0.0 && x != 0.0 {
            m.max_rel = m.max_rel.max(d / x.abs());
        }
        if d > tol.atol + tol.rtol * x.abs() {
            m.mismatched += 1;
        }
    }
    Ok(())
}

/// Integer results against the two references: an element is inside when it lies between
/// them, widened by `slack` whole units (0 unless the tolerance allows units: an integer result
/// of an interpolation, whose rounding ONNX does not fix). The references differ only where
/// ONNX leaves a float intermediate's precision open (a quantization quotient at a tie).
fn compare_int_envelope(ev: &[f64], nv: &[f64], av: &[f64], slack: f64) -> Comparison {
    let off = |((e, n), a): ((&f64, &f64), &f64)| {
        let (lo, hi) = (e.min(*n), e.max(*n));
        (lo - a).max(a - hi).max(0.0)
    };
    let wrong = ev
        .iter()
        .zip(nv)
        .zip(av)
        .filter(|&x| off(x) > slack)
        .count();
    let m = Metrics {
        max_abs: ev
            .iter()
            .zip(av)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max),
        mismatched: wrong,
        elements: ev.len(),
        ..Default::default()
    };
    if wrong == 0 {
        return Comparison {
            ok: true,
            reason: None,
            metrics: m,
        };
    }
    let beyond = if slack > 0.0 {
        format!(" by more than {slack}")
    } else {
        String::new()
    };
    Comparison::fail(
        format!(
            "{wrong} of {} elements differ{beyond} (max abs {})",
            ev.len(),
            m.max_abs
        ),
        m,
    )
}

/// Compares `actual` against the envelope of legitimate results bounded by `expected` (the f64
/// reference) and `native` (the same computation in the model's own element types, function
/// bodies step by step: `reference-native`). An element agrees when it is within tolerance of
/// either bound or lies between them; a NaN or an infinity agrees when either bound holds the
/// same. Without `native` (or when its shape differs) this is [`compare`].
pub fn compare_envelope(
    expected: &Value,
    native: Option<&Value>,
    actual: &Value,
    opts: CompareOptions,
) -> Comparison {
    let Some(native) = native else {
        return compare(expected, actual, opts);
    };
    match (expected, native, actual) {
        (Value::Tensor(e), Value::Tensor(n), Value::Tensor(a))
            if e.shape == n.shape && e.shape == a.shape =>
        {
            let (Some(ev), Some(nv), Some(av)) = (e.to_f64s(), n.to_f64s(), a.to_f64s()) else {
                return compare(expected, actual, opts);
            };
            if !(e.dtype.is_float() || a.dtype.is_float()) {
                let slack = opts.tolerance.atol.floor();
                if slack == 0.0 && ev == nv {
                    return compare(expected, actual, opts);
                }
                return compare_int_envelope(&ev, &nv, &av, slack);
            }
            let tol = opts.tolerance.for_dtype(e.dtype).for_dtype(a.dtype);
            let mut m = Metrics::default();
            let (nan, inf) = a.nan_inf_counts();
            m.nan = nan;
            m.inf = inf;
            m.elements = ev.len();
            for ((&x, &z), &y) in ev.iter().zip(&nv).zip(&av) {
                if envelope_holds(x, z, y, tol) {
                    continue;
                }
                if !y.is_finite() || !x.is_finite() {
                    m.nonfinite_mismatch += 1;
                    continue;
                }
                let d = (x - y).abs();
                m.max_abs = m.max_abs.max(d);
                if x != 0.0 {
                    m.max_rel = m.max_rel.max(d / x.abs());
                }
                m.mismatched += 1;
            }
            if m.mismatched == 0 && m.nonfinite_mismatch == 0 {
                Comparison {
                    ok: true,
                    reason: None,
                    metrics: m,
                }
            } else {
                // Only the elements finite on both sides have an error to give.
                let mut how = Vec::new();
                if m.mismatched > 0 {
                    how.push(format!(
                        "max abs {:.3e}, max rel {:.3e}",
                        m.max_abs, m.max_rel
                    ));
                }
                if m.nonfinite_mismatch > 0 {
                    how.push(format!(
                        "{} where one side is NaN/Inf and the other is not",
                        m.nonfinite_mismatch
                    ));
                }
                how.push(format!("tolerance {}", tol.name));
                Comparison::fail(
                    format!(
                        "{} of {} elements outside the precision envelope ({})",
                        m.mismatched + m.nonfinite_mismatch,
                        m.elements,
                        how.join(", ")
                    ),
                    m,
                )
            }
        }
        _ => compare(expected, actual, opts),
    }
}

/// One element against the envelope of `e` (f64) and `n` (native): see [`compare_envelope`].
pub fn envelope_holds(e: f64, n: f64, a: f64, tol: Tolerance) -> bool {
    let close = |x: f64| {
        if x.is_nan() || a.is_nan() {
            return x.is_nan() && a.is_nan();
        }
        if x.is_infinite() || a.is_infinite() {
            return x == a;
        }
        (x - a).abs() <= tol.atol + tol.rtol * x.abs()
    };
    close(e) || close(n) || (a >= e.min(n) && a <= e.max(n))
}

/// Compares two output sets output by output, matched by name ([`compare`] for each): the
/// metrics summed over the outputs (largest `max_abs` / `max_rel`), the first disagreement as
/// the reason (`output 'y': ...`). An output of `expected` that `actual` lacks disagrees; an
/// output only `actual` has is not looked at.
pub fn compare_named(
    expected: &crate::value::NamedValues,
    actual: &crate::value::NamedValues,
    opts: CompareOptions,
) -> Comparison {
    let mut total = Metrics::default();
    let mut reason = None;
    for (name, want) in expected {
        let Some((_, have)) = actual.iter().find(|(n, _)| n == name) else {
            reason.get_or_insert(format!("output '{name}' is missing"));
            continue;
        };
        let c = compare(want, have, opts);
        let m = &c.metrics;
        total.absorb(m);
        if !c.ok && reason.is_none() {
            reason = Some(format!("output '{name}': {}", c.reason.unwrap_or_default()));
        }
    }
    Comparison {
        ok: reason.is_none(),
        reason,
        metrics: total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: &[f32]) -> Value {
        Value::Tensor(HostTensor::new(vec![v.len()], Data::F32(v.to_vec())))
    }

    #[test]
    fn within_and_outside_tolerance() {
        let c = compare(
            &f(&[1.0, 2.0]),
            &f(&[1.0, 2.0005]),
            CompareOptions::default(),
        );
        assert!(c.ok, "{c:?}");
        let c = compare(&f(&[1.0, 2.0]), &f(&[1.0, 2.01]), CompareOptions::default());
        assert!(!c.ok);
        assert_eq!(c.metrics.mismatched, 1);
        assert!((c.metrics.max_abs - 0.01).abs() < 1e-6);
    }

    #[test]
    fn output_sets_compare_by_name() {
        let want = vec![("a".to_string(), f(&[1.0])), ("b".to_string(), f(&[2.0]))];
        // Order does not matter, an extra output is not looked at.
        let got = vec![
            ("x".to_string(), f(&[9.0])),
            ("b".to_string(), f(&[2.0])),
            ("a".to_string(), f(&[1.0])),
        ];
        let c = compare_named(&want, &got, CompareOptions::default());
        assert!(c.ok, "{c:?}");
        assert_eq!(c.metrics.elements, 2);
        let got = vec![
            ("a".to_string(), f(&[1.5])),
            ("b".to_string(), f(&[f32::NAN])),
        ];
        let c = compare_named(&want, &got, CompareOptions::default());
        assert!(!c.ok);
        assert!(c.reason.unwrap().starts_with("output 'a'"));
        assert_eq!((c.metrics.mismatched, c.metrics.nonfinite_mismatch), (1, 1));
        let only_a = vec![("a".to_string(), f(&[1.0]))];
        let c = compare_named(&want, &only_a, CompareOptions::default());
        assert_eq!(c.reason.as_deref(), Some("output 'b' is missing"));
    }

    #[test]
    fn nan_positions_must_agree() {
        let c = compare(
            &f(&[f32::NAN, 1.0]),
            &f(&[f32::NAN, 1.0]),
            CompareOptions::default(),
        );
        assert!(c.ok);
        let c = compare(
            &f(&[0.0, 1.0]),
            &f(&[f32::NAN, 1.0]),
            CompareOptions::default(),
        );
        assert!(!c.ok);
        assert_eq!(c.metrics.nan, 1);
        let c = compare(
            &f(&[f32::INFINITY]),
            &f(&[f32::NEG_INFINITY]),
            CompareOptions::default(),
        );
        assert!(!c.ok);
    }

    #[test]
    fn shape_and_dtype_are_checked() {
        let e = f(&[1.0, 2.0]);
        let a = Value::Tensor(HostTensor::new(vec![1, 2], Data::F32(vec![1.0, 2.0])));
        assert!(
            compare(&e, &a, CompareOptions::default())
                .reason
                .unwrap()
                .contains("shape")
        );
        let a = Value::Tensor(HostTensor::new(vec![2], Data::F64(vec![1.0, 2.0])));
        assert!(!compare(&e, &a, CompareOptions::default()).ok);
        let lax = CompareOptions {
            check_dtype: false,
            ..Default::default()
        };
        assert!(compare(&e, &a, lax).ok);
    }

    #[test]
    fn the_envelope_takes_either_bound_or_between() {
        let opts = CompareOptions {
            tolerance: Tolerance::CLOSE,
            check_dtype: false,
        };
        // f64 says 100, the f32 function body overflows to +Inf: both are legitimate.
        let e = f(&[100.0, 1.0, 2.0]);
        let n = f(&[f32::INFINITY, 1.5, 2.0]);
        assert!(compare_envelope(&e, Some(&n), &f(&[f32::INFINITY, 1.25, 2.0]), opts).ok);
        assert!(compare_envelope(&e, Some(&n), &f(&[100.0, 1.5, 2.0]), opts).ok);
        // Outside both: a NaN neither bound has, a value beyond the envelope.
        let c = compare_envelope(&e, Some(&n), &f(&[f32::NAN, 1.0, 2.0]), opts);
        assert!(!c.ok && c.metrics.nonfinite_mismatch == 1, "{c:?}");
        let c = compare_envelope(&e, Some(&n), &f(&[100.0, 1.7, 2.0]), opts);
        assert!(!c.ok && c.metrics.mismatched == 1, "{c:?}");
        // Without the native bound it is the plain comparison.
        assert!(!compare_envelope(&e, None, &f(&[f32::INFINITY, 1.0, 2.0]), opts).ok);
    }

    #[test]
    fn integers_compare_exactly() {
        let e = Value::Tensor(HostTensor::new(vec![1], Data::I64(vec![1_000_000])));
        let a = Value::Tensor(HostTensor::new(vec![1], Data::I64(vec![1_000_001])));
        assert!(!compare(&e, &a, CompareOptions::default()).ok);
    }
}
