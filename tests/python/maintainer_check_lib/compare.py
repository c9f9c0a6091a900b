"""Comparison of a run's outputs with the bundle's expected outputs."""

import numpy as np

from .common import DEFAULT_TOLERANCE, TOLERANCES


def tolerance_for(name, meta, expected_dtype, actual_dtype):
    """(atol, rtol, source) for output `name`: the bundle's own per-output tolerance when it has
    one (`reproduce.tolerances` = {name: [rtol, atol]}), exact for integers, booleans and
    strings, otherwise `reproduce.default_tolerance` ([rtol, atol]) or the named tolerance
    (meta.json `tolerance`), widened to `approximate` for f16 values as mutagraph does."""
    reproduce = meta.get("reproduce") if isinstance(meta.get("reproduce"), dict) else {}
    per_output = reproduce.get("tolerances")
    if isinstance(per_output, dict) and name in per_output:
        try:
            rtol, atol = (float(x) for x in per_output[name])
            return atol, rtol, "reproduce.tolerances"
        except (TypeError, ValueError):
            pass
    if expected_dtype is not None and expected_dtype.kind in "biuUS":
        return 0.0, 0.0, "exact (not a float)"
    # A bundle may also give the tolerance of unlisted outputs as [rtol, atol].
    default = reproduce.get("default_tolerance")
    if isinstance(default, (list, tuple)) and len(default) == 2:
        try:
            rtol, atol = (float(x) for x in default)
            return atol, rtol, "reproduce.default_tolerance"
        except (TypeError, ValueError):
            pass
    named = meta.get("tolerance")
    if named not in TOLERANCES:
        named = DEFAULT_TOLERANCE
    atol, rtol = TOLERANCES[named]
    f16 = np.dtype(np.float16)
    if f16 in (expected_dtype, actual_dtype):
        floor_atol, floor_rtol = TOLERANCES["approximate"]
        if floor_rtol > rtol:
            atol, rtol, named = floor_atol, floor_rtol, named + "->approximate (f16)"
    return atol, rtol, named


def compare_output(actual, expected, native, atol, rtol):
    """Metrics of one output: elements, mismatches (beyond tolerance and outside the envelope
    of the two references), new_nonfinite (NaN/Inf where the references have a finite value),
    max_abs (largest |actual - expected| over elements finite in both) and problem (shape,
    dtype or type trouble, in words)."""
    m = {"elements": int(expected.size), "mismatches": 0, "new_nonfinite": 0, "nonfinite_diff": 0,
         "max_abs": None, "problem": None}
    if not isinstance(actual, np.ndarray):
        m["problem"] = "not a tensor"
        m["mismatches"] = max(int(expected.size), 1)
        return m
    if actual.shape != expected.shape:
        m["problem"] = "shape %s, expected %s" % (list(actual.shape), list(expected.shape))
        m["mismatches"] = max(int(actual.size), int(expected.size), 1)
        return m
    ek, ak = expected.dtype.kind, actual.dtype.kind
    if ek != ak or (ek in "biuf" and expected.dtype.itemsize != actual.dtype.itemsize):
        # bfloat16 is stored as f32 in bundles, and nothing here can produce bf16: the only
        # difference that is not a finding.
        m["problem"] = "dtype %s, expected %s" % (actual.dtype, expected.dtype)
        m["mismatches"] = max(int(expected.size), 1)
        return m
    if ek in "US" or ek not in "biuf":
        m["mismatches"] = int(np.count_nonzero(actual != expected))
        return m
    if ek in "biu":  # integers and booleans compare exactly
        m["mismatches"] = int(np.count_nonzero(actual != expected))
        if ek in "iu" and m["mismatches"]:
            diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
            m["max_abs"] = float(diff.max())
        return m
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    n = None
    if native is not None and isinstance(native, np.ndarray) and native.shape == expected.shape \
            and native.dtype.kind == "f":
        n = native.astype(np.float64)

    with np.errstate(invalid="ignore", over="ignore"):
        def close(x):
            # NaN matches NaN, an infinity only the same infinity, else atol + rtol * |x|.
            a_nan, x_nan = np.isnan(a), np.isnan(x)
            a_inf, x_inf = np.isinf(a), np.isinf(x)
            within = np.abs(x - a) <= atol + rtol * np.abs(x)
            return np.where(a_nan | x_nan, a_nan & x_nan,
                            np.where(a_inf | x_inf, x == a, within))

        ok = close(e)
        finite_ref = np.isfinite(e)
        if n is not None:
            between = (a >= np.minimum(e, n)) & (a <= np.maximum(e, n))
            ok = ok | close(n) | between
            finite_ref = finite_ref & np.isfinite(n)
        m["mismatches"] = int(np.count_nonzero(~ok))
        m["new_nonfinite"] = int(np.count_nonzero(~np.isfinite(a) & finite_ref))
        # Mismatches where the actual or the expected value is NaN/Inf (max_abs ignores them).
        m["nonfinite_diff"] = int(np.count_nonzero(~ok & ~(np.isfinite(a) & np.isfinite(e))))
        both = np.isfinite(a) & np.isfinite(e)
        if both.any():
            m["max_abs"] = float(np.abs(a[both] - e[both]).max())
    return m


def compare_run(run, expected, native, meta):
    """Adds `comparison` to a run that produced outputs: per output metrics against the
    expected values, and totals. Without expected outputs only NaN/Inf are counted."""
    outputs = run.get("outputs") or []
    per = {}
    total_mismatch = 0
    total_nonfinite = 0
    got = {name: value for name, value, _ in outputs}
    for name, value, what in outputs:
        if expected is None or name not in expected:
            entry = {"compared": False, "what": what}
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                entry["nonfinite"] = int(np.count_nonzero(~np.isfinite(value)))
                if expected is None:  # nothing to compare with: every NaN/Inf is "new"
                    total_nonfinite += entry["nonfinite"]
            per[name] = entry
            continue
        exp = expected[name]
        nat = native.get(name) if native else None
        adt = value.dtype if isinstance(value, np.ndarray) else None
        atol, rtol, source = tolerance_for(name, meta, exp.dtype, adt)
        if value is None:
            metrics = {"elements": int(exp.size), "mismatches": max(int(exp.size), 1),
                       "new_nonfinite": 0, "max_abs": None,
                       "problem": "not a tensor (%s)" % what}
        else:
            metrics = compare_output(value, exp, nat, atol, rtol)
        metrics.update(compared=True, what=what, atol=atol, rtol=rtol, tolerance=source,
                       envelope=nat is not None)
        per[name] = metrics
        total_mismatch += metrics["mismatches"]
        total_nonfinite += metrics["new_nonfinite"]
    if expected is not None:
        for name, exp in expected.items():
            if name not in got:
                per[name] = {"compared": True, "elements": int(exp.size),
                             "mismatches": max(int(exp.size), 1), "new_nonfinite": 0,
                             "max_abs": None, "problem": "output missing"}
                total_mismatch += per[name]["mismatches"]
    run["comparison"] = {
        "has_expected": expected is not None,
        "outputs": per,
        "mismatches": total_mismatch,
        "new_nonfinite": total_nonfinite,
        "matches": expected is not None and total_mismatch == 0,
    }


def mismatch_summary(run):
    """One line on the first output that differs, for the details below the table."""
    comparison = run.get("comparison") or {}
    for name, m in comparison.get("outputs", {}).items():
        if m.get("compared") and m.get("mismatches"):
            if m.get("problem"):
                return "output '%s': %s" % (name, m["problem"])
            if m["atol"] == 0 and m["rtol"] == 0:
                how = "differ (exact comparison)"
            else:
                how = "beyond tolerance (atol %g, rtol %g%s)" % (
                    m["atol"], m["rtol"], ", envelope of two references" if m.get("envelope") else "")
            text = "output '%s': %d of %d elements %s" % (name, m["mismatches"], m["elements"], how)
            if m.get("max_abs") is not None and m["mismatches"] > m.get("nonfinite_diff", 0):
                text += ", max abs error %.4g" % m["max_abs"]
            if m.get("nonfinite_diff"):
                text += ", %d of them NaN/Inf on one side only" % m["nonfinite_diff"]
            if m.get("new_nonfinite"):
                text += ", %d new NaN/Inf" % m["new_nonfinite"]
            return text
    if comparison.get("new_nonfinite"):
        return "%d NaN/Inf in the outputs (no expected values)" % comparison["new_nonfinite"]
    return ""
