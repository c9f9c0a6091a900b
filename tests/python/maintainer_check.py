#!/usr/bin/env python3
"""Independent re-check of mutagraph bug bundles, the way a library maintainer would do it.

mutagraph (a fuzzer of ONNX inference libraries) writes one "bug bundle" per finding under
`<campaign>/findings/<id>/`. Before a maintainer of ONNX Runtime or tract believes a bundle,
they re-run its model with the official Python packages, not with mutagraph. This script
automates that re-check and prints one Markdown table row per bundle:

    python3 tests/python/maintainer_check.py DIR... [--json FILE] [--timeout S] [-j N]

Each DIR is a bundle (a directory with `meta.json`, `minimized.onnx` or `original.onnx`), a
directory of bundles (e.g. `<campaign>/findings`) or a campaign directory that has a
`findings/` subdirectory.

Per bundle, every check runs in a FRESH Python process (this same file, started with a hidden
worker flag) under a time limit, so a segfault, an abort or a hang of a library never takes
this script down:

- `checker`:   onnx.checker.check_model(full_check=True), then onnx.shape_inference.infer_shapes
               (check_type, strict_mode, data_prop);
- `ort-noopt`: onnxruntime, ORT_DISABLE_ALL, 1 intra-op thread, CPUExecutionProvider;
- `ort`:       onnxruntime, ORT_ENABLE_ALL, 1 intra-op thread, CPUExecutionProvider;
- `onnx-ref`:  onnx.reference.ReferenceEvaluator;
- `tract`:     the official `tract` wheel (tract.onnx().load -> set_input_fact -> into_model ->
               into_runnable -> run).

Each run that produced outputs is compared with the bundle's expected outputs (mutagraph's f64
reference cast to the declared dtype, plus optionally a "native" reference computed in the
model's own float precision: an element then matches when it is within tolerance of either
reference or lies between them).

From this, the script derives a *suggestion* for a human (never a verdict):

- `invalid-model`: the ONNX checker rejects the model;
- `real`: the bundle's own library shows the bug's kind again, and at least one independent
  implementation ran the model fine (and, for numeric kinds, matched the expected outputs);
- `unconfirmed`: anything else.

The exit status is 0 whatever the bundles show (this is a report); 2 means bad arguments.
Dependencies: Python 3.8+, numpy, onnx, onnxruntime, tract (stdlib otherwise).
"""

import argparse
import concurrent.futures
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import numpy as np

# Hidden first argument that makes this file act as a worker process (one library run).
WORKER_FLAG = "--maintainer-check-worker"

# The checks, in table order. The four library runs can produce outputs; `checker` cannot.
RUNS = ["ort-noopt", "ort", "onnx-ref", "tract"]
CHECKS = ["checker"] + RUNS

# mutagraph's named tolerances: name -> (atol, rtol); an element agrees when
# |actual - expected| <= atol + rtol * |expected|.
TOLERANCES = {
    "exact": (0.0, 0.0),
    "suite": (1e-7, 1e-3),
    "close": (1e-5, 1e-4),
    "approximate": (1e-3, 5e-3),
    "very-approximate": (5e-2, 5e-2),
}
# Used when a bundle names no (or an unknown) tolerance: mutagraph's usual campaign setting.
DEFAULT_TOLERANCE = "approximate"

# numpy element types of onnxruntime's input type strings.
ORT_INPUT_TYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(float16)": np.float16,
    "tensor(int8)": np.int8,
    "tensor(int16)": np.int16,
    "tensor(int32)": np.int32,
    "tensor(int64)": np.int64,
    "tensor(uint8)": np.uint8,
    "tensor(uint16)": np.uint16,
    "tensor(uint32)": np.uint32,
    "tensor(uint64)": np.uint64,
    "tensor(bool)": np.bool_,
    "tensor(string)": np.str_,
}

# tract's element type mnemonics (for input facts) of numpy dtypes.
TRACT_TYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.float16): "f16",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.bool_): "bool",
}

# The kinds of finding mutagraph writes.
KINDS = ("crash", "nan", "inconsistency", "hang", "slow", "memory", "flaky")

# Longest error line shown below the table.
LINE_CHARS = 200
# Longest error text kept in the JSON records.
FULL_CHARS = 4000


# ------------------------------------------------------------------------------------------
# Small helpers shared by the worker and the parent
# ------------------------------------------------------------------------------------------

def load_npz(path):
    """{tensor name: array} of an .npz written by mutagraph (keys are percent-encoded)."""
    with np.load(path, allow_pickle=False) as archive:
        return {urllib.parse.unquote(key): archive[key] for key in archive.files}


def first_line(text, limit=LINE_CHARS):
    """The first non-empty line of `text`, cut to `limit` characters."""
    for line in str(text).splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def flatten_error(text):
    """One line of an error chain as Rust's anyhow prints it ("msg\n\nCaused by:\n    0: a\n
    1: b\n\nStack backtrace: ..."): "msg: a: b", without the backtrace. tract's first line alone
    only names the node ("Evaluating #1 "Erf_3" Erf"); the cause says what went wrong."""
    text = re.split(r"\n\s*Stack backtrace:", str(text))[0]
    parts = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line == "Caused by:":
            continue
        parts.append(re.sub(r"^\d+: ", "", line))
    return ": ".join(parts)


def headline(message, limit=LINE_CHARS):
    """What the details below the table show of an error: its first line, cut to `limit`
    characters; a flattened chain that is too long keeps its head and its root cause."""
    line = first_line(message, limit=10 ** 6)
    if len(line) <= limit:
        return line
    parts = line.split(": ")
    if len(parts) > 2:
        root = parts[-1]
        if len(root) < limit // 2:
            head = line[: limit - len(root) - 4].rstrip()
            return head + " … " + root
    return line[: limit - 1] + "…"


def describe(value):
    """A short description of an output value (dtype and shape)."""
    if isinstance(value, np.ndarray):
        return "%s%s" % (value.dtype, list(value.shape))
    return type(value).__name__


# ------------------------------------------------------------------------------------------
# Worker side: one check of one model, in its own process
# ------------------------------------------------------------------------------------------

class SetupError(Exception):
    """The bundle cannot be fed to the library as given (not a bug of the library)."""


def onnx_input_dtypes(model_path):
    """{graph input name: numpy dtype} as the ONNX graph declares them (tensors only)."""
    import onnx
    from onnx import helper

    model = onnx.load(model_path, load_external_data=False)
    dtypes = {}
    for vi in model.graph.input:
        if vi.type.HasField("tensor_type"):
            try:
                dtypes[vi.name] = np.dtype(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
            except Exception:  # bfloat16, float8, undefined...: leave the array as stored
                pass
    return model, dtypes


def cast_to(value, dtype, name, notes):
    """`value` as `dtype` (noting the cast), refusing what numpy cannot represent."""
    if dtype is None or value.dtype == dtype:
        return value
    if dtype.kind in "US" and value.dtype.kind in "US":  # strings: numpy sizes them itself
        return value
    if dtype.kind == "V" or dtype.name.startswith(("bfloat", "float8")):
        raise SetupError("input '%s' has a type numpy cannot hold (%s)" % (name, dtype))
    notes.append("input '%s' cast from %s to %s" % (name, value.dtype, dtype))
    return value.astype(dtype)


def worker_checker(model_path, _inputs):
    import onnx

    model = onnx.load(model_path)
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    return [], []


def worker_ort(level):
    def run(model_path, inputs):
        import onnxruntime as ort

        notes = []
        options = ort.SessionOptions()
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
        feeds = {}
        for arg in session.get_inputs():
            if arg.name not in inputs:
                raise SetupError("the inputs file lacks the model input '%s'" % arg.name)
            if arg.type == "tensor(bfloat16)":
                raise SetupError("input '%s' is bfloat16, which numpy cannot hold" % arg.name)
            want = ORT_INPUT_TYPES.get(arg.type)
            feeds[arg.name] = cast_to(inputs[arg.name], None if want is None else np.dtype(want),
                                      arg.name, notes)
        for name in inputs:
            if name not in feeds:
                notes.append("input file holds '%s', which the session does not take" % name)
        names = [o.name for o in session.get_outputs()]
        values = session.run(names, feeds)
        return list(zip(names, values)), notes
    return run


def worker_onnx_ref(model_path, inputs):
    from onnx.reference import ReferenceEvaluator

    notes = []
    model, dtypes = onnx_input_dtypes(model_path)
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inputs:
            feeds[vi.name] = cast_to(inputs[vi.name], dtypes.get(vi.name), vi.name, notes)
        elif vi.name not in initializers:
            raise SetupError("the inputs file lacks the model input '%s'" % vi.name)
    evaluator = ReferenceEvaluator(model)
    values = evaluator.run(None, feeds)
    names = [o.name for o in model.graph.output]
    return list(zip(names, values)), notes


def worker_tract(model_path, inputs):
    import tract

    notes = []
    # tract reads the file itself; onnx only supplies the declared input types and the output
    # names (tract keeps the graph's output order), and may fail where tract does not.
    inference_model = tract.onnx().load(model_path)
    try:
        model, dtypes = onnx_input_dtypes(model_path)
        names = [o.name for o in model.graph.output]
    except Exception as e:
        notes.append("onnx could not read the model (%s); tract's own names are used"
                     % first_line(e))
        dtypes = {}
        names = [inference_model.output_name(i) for i in range(inference_model.output_count())]
    arrays = []
    for i in range(inference_model.input_count()):
        name = inference_model.input_name(i)
        if name not in inputs:
            raise SetupError("the inputs file lacks the model input '%s'" % name)
        value = cast_to(inputs[name], dtypes.get(name), name, notes)
        dt = TRACT_TYPES.get(value.dtype)
        if dt is None:
            raise SetupError("input '%s' has dtype %s, which the tract wheel cannot take"
                             % (name, value.dtype))
        # Fact syntax: "d0,d1,...,dt"; a rank-0 input is just "dt".
        spec = ",".join([str(d) for d in value.shape] + [dt])
        inference_model.set_input_fact(i, spec)
        arrays.append(np.ascontiguousarray(value))
    runnable = inference_model.into_model().into_runnable()
    outs = runnable.run(arrays)
    values = [o.to_numpy() for o in outs]
    if len(values) != len(names):
        notes.append("tract returned %d outputs, the ONNX graph declares %d (matched by position)"
                     % (len(values), len(names)))
    named = [(names[i] if i < len(names) else "#%d" % i, v) for i, v in enumerate(values)]
    return named, notes


WORKERS = {
    "checker": worker_checker,
    "ort-noopt": worker_ort("ORT_DISABLE_ALL"),
    "ort": worker_ort("ORT_ENABLE_ALL"),
    "onnx-ref": worker_onnx_ref,
    "tract": worker_tract,
}


def write_json_atomic(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def worker_main(argv):
    """Worker process: `WORKER_FLAG task model inputs_npz_or_empty outdir`.

    Writes `outdir/result.json` ({status: ok|error|setup, message, outputs, notes, seconds})
    and, for outputs, `outdir/outputs.npz` (keys o0, o1, ... in output order). A crash or a
    hang leaves no result.json behind; the parent sees that from the exit status / timeout."""
    task, model_path, inputs_path, outdir = argv
    result = {"status": "ok", "message": "", "outputs": [], "notes": [], "seconds": None}
    arrays = {}
    try:
        inputs = load_npz(inputs_path) if inputs_path else {}
        start = time.perf_counter()
        outputs, notes = WORKERS[task](model_path, inputs)
        result["seconds"] = time.perf_counter() - start
        result["notes"] = notes
        for i, (name, value) in enumerate(outputs):
            entry = {"name": name, "key": None, "what": describe(value)}
            if isinstance(value, np.generic):
                value = np.asarray(value)
            if isinstance(value, np.ndarray):
                if value.dtype == object:  # ORT gives string tensors as object arrays
                    try:
                        value = value.astype(str)
                    except Exception:
                        value = None
                if value is not None:
                    entry["key"] = "o%d" % i
                    arrays[entry["key"]] = value
            result["outputs"].append(entry)
    except SetupError as e:
        result.update(status="setup", message=str(e))
    except Exception as e:  # any exception of the library is part of the story
        text = str(e) or type(e).__name__
        if task == "tract":
            text = flatten_error(text)
        result.update(status="error", message="%s: %s" % (type(e).__name__, text))
    if arrays:
        try:
            np.savez(os.path.join(outdir, "outputs.npz"), **arrays)
        except Exception as e:  # an output numpy cannot store: report it, keep the status
            for entry in result["outputs"]:
                entry["key"] = None
            result["notes"].append("outputs could not be passed back: %s" % first_line(e))
    write_json_atomic(os.path.join(outdir, "result.json"), result)
    sys.stdout.flush()
    sys.stderr.flush()
    return 0


# ------------------------------------------------------------------------------------------
# Parent side: starting workers
# ------------------------------------------------------------------------------------------

def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def crash_hint(stderr):
    """The most telling line of a dead worker's stderr: a Rust panic message, else the last line."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    for i, line in enumerate(lines):
        if "panicked at" in line:
            # Rust prints "thread '...' panicked at file:line:col:" then the message.
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            where = line[line.index("panicked at"):]
            # ".../registry/src/index.crates.io-<hash>/ndarray-0.17.2/src/lib.rs" -> "ndarray-0.17.2/..."
            where = re.sub(r"\S*/registry/src/[^/]+/", "", where)
            return (where + " " + nxt).strip()
    return lines[-1] if lines else ""


def run_check(task, model_path, inputs_path, timeout):
    """Runs one check in a fresh process. Returns a dict with at least `status`
    (ok | error | setup | crash | timeout), `message`, `notes` and `outputs`
    ([(name, array or None, description)])."""
    with tempfile.TemporaryDirectory(prefix="maintainer_check_") as outdir:
        cmd = [sys.executable, os.path.abspath(__file__), WORKER_FLAG, task, model_path,
               inputs_path or "", outdir]
        env = dict(os.environ)
        env.setdefault("OMP_NUM_THREADS", "1")
        # Rust backtraces make tract's errors and panics pages long; the message is enough.
        env["RUST_BACKTRACE"] = "0"
        env.pop("RUST_LIB_BACKTRACE", None)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        except OSError as e:
            return {"status": "setup", "message": "cannot start a worker: %s" % e,
                    "notes": [], "outputs": []}
        try:
            _, err = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            # Stop the worker and anything it started (its own process group).
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                proc.kill()
            _, err = proc.communicate()
            timed_out = True
        wall = time.monotonic() - start
        err = err.decode("utf-8", "replace")
        stderr_tail = err[-FULL_CHARS:]
        result_path = os.path.join(outdir, "result.json")
        if timed_out:
            return {"status": "timeout", "message": "no result after %g s (process killed)" % timeout,
                    "notes": [], "outputs": [], "stderr": stderr_tail, "wall_s": wall}
        if not os.path.exists(result_path):
            code = proc.returncode
            if code is not None and code < 0:
                how = "died of %s" % signal_name(-code)
            else:
                how = "exited with status %s without a result" % code
            hint = crash_hint(err)
            return {"status": "crash", "message": how + (": " + hint if hint else ""),
                    "signal": -code if code is not None and code < 0 else None,
                    "notes": [], "outputs": [], "stderr": stderr_tail, "wall_s": wall}
        with open(result_path) as f:
            result = json.load(f)
        if proc.returncode:
            # The result was written, and the process died afterwards (e.g. in a destructor).
            result["notes"].append("the worker exited with %s after reporting its result" % (
                signal_name(-proc.returncode) if proc.returncode < 0 else
                "status %d" % proc.returncode))
        outputs = []
        arrays = {}
        npz = os.path.join(outdir, "outputs.npz")
        if os.path.exists(npz):
            with np.load(npz, allow_pickle=False) as archive:
                arrays = {k: archive[k] for k in archive.files}
        for entry in result.pop("outputs", []):
            outputs.append((entry["name"], arrays.get(entry["key"]) if entry["key"] else None,
                            entry["what"]))
        result["outputs"] = outputs
        result["stderr"] = stderr_tail
        result["wall_s"] = wall
        return result


# ------------------------------------------------------------------------------------------
# Comparison with the expected outputs
# ------------------------------------------------------------------------------------------

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


# ------------------------------------------------------------------------------------------
# One bundle
# ------------------------------------------------------------------------------------------

def library_of(name):
    """The library a backend name belongs to: ort-noopt -> ort, tract-opt -> tract, ..."""
    name = (name or "").strip().lower()
    for lib in ("ort", "tract", "burn", "reference"):
        if name == lib or name.startswith(lib + "-") or name.startswith(lib + "_"):
            return lib
    if name.startswith("onnxruntime"):
        return "ort"
    return name or "unknown"


def read_meta(bundle, problems):
    path = os.path.join(bundle, "meta.json")
    try:
        with open(path) as f:
            meta = json.load(f)
        if not isinstance(meta, dict):
            problems.append("meta.json is not a JSON object")
            return {}
        return meta
    except FileNotFoundError:
        problems.append("no meta.json")
    except (OSError, ValueError) as e:
        problems.append("meta.json unreadable: %s" % first_line(e))
    return {}


def load_optional_npz(path, what, problems):
    if not os.path.exists(path):
        return None
    try:
        return load_npz(path)
    except Exception as e:
        problems.append("%s unreadable: %s" % (what, first_line(e)))
        return None


def bundle_facts(bundle, meta):
    """id, kind, library, variants, op, expect_error from meta.json, tolerating gaps."""
    signature = meta.get("signature") if isinstance(meta.get("signature"), str) else ""
    fields = signature.split("|")
    kind = meta.get("kind") if isinstance(meta.get("kind"), str) else (fields[0] if fields[0] else "?")
    backends = meta.get("backends")
    if not isinstance(backends, list) or not all(isinstance(b, str) for b in backends):
        backends = []
    lib_field = fields[1] if len(fields) > 1 else ""
    if not backends and lib_field:
        backends = [b for b in lib_field.split("+") if b]
    library = library_of(lib_field.split("+")[0]) if lib_field else (
        library_of(backends[0]) if backends else "unknown")
    op = meta.get("op_type") if isinstance(meta.get("op_type"), str) else None
    if not op:
        for field in fields:
            if field.startswith("op="):
                op = field[3:]
    # Without meta.json, mutagraph's directory names still say "<kind>-<backend>-...".
    name_parts = os.path.basename(os.path.normpath(bundle)).split("-")
    if kind == "?" and name_parts[0] in KINDS:
        kind = name_parts[0]
    if library == "unknown" and len(name_parts) > 1 and name_parts[0] in KINDS:
        backend = name_parts[1].replace("_", "-")
        library = library_of(backend)
        backends = backends or [backend]
    reproduce = meta.get("reproduce") if isinstance(meta.get("reproduce"), dict) else {}
    expect_error = reproduce.get("expect_error")
    return {
        "id": str(meta.get("id") or os.path.basename(os.path.normpath(bundle))),
        "signature": signature,
        "kind": kind,
        "library": library,
        "variants": backends,
        "op": op,
        "message": meta.get("message") if isinstance(meta.get("message"), str) else "",
        "expect_error": expect_error if isinstance(expect_error, str) and expect_error else None,
    }


def check_bundle(bundle, timeout):
    """Every check of one bundle; never raises (problems land in the record)."""
    problems = []
    meta = read_meta(bundle, problems)
    record = bundle_facts(bundle, meta)
    record.update(path=bundle, problems=problems, runs={})

    # The model, and the inputs / expected outputs that belong to it.
    if os.path.isfile(os.path.join(bundle, "minimized.onnx")):
        model, prefix = "minimized.onnx", "minimized_"
    elif os.path.isfile(os.path.join(bundle, "original.onnx")):
        model, prefix = "original.onnx", ""
    else:
        model, prefix = None, ""
        problems.append("no minimized.onnx or original.onnx")
    record["model"] = model
    inputs_path = os.path.join(bundle, prefix + "inputs.npz")
    if model is not None and not os.path.isfile(inputs_path):
        problems.append("no %s: the runs get no inputs" % (prefix + "inputs.npz"))
        inputs_path = None
    expected = load_optional_npz(os.path.join(bundle, prefix + "expected.npz"),
                                 prefix + "expected.npz", problems)
    native = load_optional_npz(os.path.join(bundle, prefix + "expected_native.npz"),
                               prefix + "expected_native.npz", problems)
    record["expected"] = None if expected is None else prefix + "expected.npz"
    record["expected_native"] = None if native is None else prefix + "expected_native.npz"
    if expected is None and native is not None:
        # Only the native reference: use it as the expected values.
        expected, native = native, None
    if record["kind"] not in ("crash", "hang") and expected is None:
        problems.append("no expected outputs (the reference failed?): values are not compared")

    for task in CHECKS:
        if model is None:
            record["runs"][task] = {"status": "n/a", "message": "no model", "notes": [], "outputs": []}
            continue
        try:
            run = run_check(task, os.path.join(bundle, model), inputs_path, timeout)
            if run["status"] == "ok" and task != "checker":
                compare_run(run, expected, native, meta)
        except Exception as e:  # a bug of this script must not lose the other rows
            run = {"status": "setup", "message": "maintainer_check internal error: %s: %s"
                   % (type(e).__name__, e), "notes": [], "outputs": []}
        record["runs"][task] = run

    judge(record)
    return record


# ------------------------------------------------------------------------------------------
# Verdict helper
# ------------------------------------------------------------------------------------------

def run_shows(kind, run, expect_error):
    """(shows, why) for one run of the faulty library: does it show the bug's kind?
    `shows` is True, False or None (cannot tell)."""
    status = run.get("status")
    if status in ("setup", "n/a"):
        return None, "could not be run: %s" % first_line(run.get("message", ""))
    if kind == "crash":
        if status in ("error", "crash"):
            if expect_error:
                # Case and runs of white space do not matter.
                phrase = " ".join(expect_error.lower().split())
                hit = phrase in " ".join(run.get("message", "").lower().split())
                return True, "fails (%s)" % ("message has the expected phrase" if hit
                                             else "message LACKS the expected phrase")
            return True, "fails"
        if status == "timeout":
            return False, "hangs instead of failing"
        return False, "runs without error"
    if kind == "hang":
        return (status == "timeout"), ("does not finish" if status == "timeout" else
                                       "finishes (%s)" % status)
    if kind in ("inconsistency", "nan"):
        if status != "ok":
            return False, "does not run (%s) instead of showing the %s" % (status, kind)
        comparison = run.get("comparison") or {}
        if kind == "inconsistency":
            if not comparison.get("has_expected"):
                return None, "no expected outputs to compare with"
            if comparison.get("mismatches"):
                return True, "differs from expected (%d elements)" % comparison["mismatches"]
            return False, "matches expected"
        if comparison.get("new_nonfinite"):
            return True, "%d new NaN/Inf" % comparison["new_nonfinite"]
        return False, "no new NaN/Inf"
    return None, "kind '%s' is not judged by this script" % kind


def judge(record):
    """Fills shows_it, others_agree_with_expected and suggested."""
    kind, library, runs = record["kind"], record["library"], record["runs"]
    expect_error = record["expect_error"]

    # Runs of the faulty library, and the independent ones.
    if library == "ort":
        mine = []
        for v in record["variants"]:
            if library_of(v) == "ort":
                task = "ort-noopt" if "noopt" in v else "ort"
                if task not in mine:
                    mine.append(task)
        mine = mine or ["ort-noopt", "ort"]
        others = [r for r in RUNS if r not in ("ort", "ort-noopt")]
    elif library == "tract":
        mine = ["tract"]
        others = [r for r in RUNS if r != "tract"]
    else:
        mine = []
        others = list(RUNS)
    record["judged_runs"] = mine

    shows, why = None, ""
    if library == "burn":
        shows_cell, why = "n/a", "burn has no Python API"
    elif library == "reference":
        shows_cell, why = "n/a", "the faulty party is mutagraph's own reference"
    elif not mine:
        shows_cell, why = "n/a", "library '%s' is not run by this script" % library
    else:
        verdicts = {task: run_shows(kind, runs.get(task, {}), expect_error) for task in mine}
        yes = [t for t, (s, _) in verdicts.items() if s is True]
        no = [t for t, (s, _) in verdicts.items() if s is False]
        why = "; ".join("%s %s" % (t, w) for t, (_, w) in verdicts.items())
        if yes and not no:
            shows, shows_cell = True, "yes"
        elif yes:
            shows, shows_cell = True, "partly (%s)" % ",".join(yes)
        elif no:
            shows, shows_cell = False, "no"
        else:
            shows_cell = "n/a"
        if shows and kind == "crash" and expect_error:
            lacking = [t for t in yes if "LACKS" in verdicts[t][1]]
            shows_cell += " msg✗" if lacking else " msg✓"
    record["shows_it"] = shows
    record["shows_it_cell"] = shows_cell
    record["shows_it_why"] = why

    # Independent runs that ran fine / agree with the expected outputs.
    ran_ok = [r for r in others if runs.get(r, {}).get("status") == "ok"]
    agree = [r for r in ran_ok if (runs[r].get("comparison") or {}).get("matches")]
    record["others_ran_ok"] = ran_ok
    record["others_agree_with_expected"] = agree

    checker = runs.get("checker", {}).get("status")
    if checker == "error":
        suggested = "invalid-model"
    elif shows and (agree if kind in ("inconsistency", "nan") else ran_ok):
        suggested = "real"
    else:
        suggested = "unconfirmed"
    record["suggested"] = suggested


# ------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------

def cell_of(task, run):
    status = run.get("status", "n/a")
    if task == "checker" or status != "ok":
        return {"ok": "ok", "error": "err", "setup": "setup", "crash": "crash",
                "timeout": "timeout"}.get(status, "n/a")
    comparison = run.get("comparison") or {}
    if comparison.get("mismatches"):
        return "ok≠%d" % comparison["mismatches"]
    if not comparison.get("has_expected"):
        return "ok*" + ("(NaN)" if comparison.get("new_nonfinite") else "")
    return "ok"


def md(text):
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(records, out):
    header = ["id", "kind", "library/variants", "op", "checker"] + RUNS + ["shows-it", "suggested"]
    out.write("| " + " | ".join(header) + " |\n")
    out.write("|" + "---|" * len(header) + "\n")
    for r in records:
        variants = ",".join(r["variants"])
        lib = r["library"] + (" (%s)" % variants if variants and variants != r["library"] else "")
        op = r["op"] or "-"
        if len(op) > 40:
            op = op[:39] + "…"
        cells = [r["id"], r["kind"], lib, op]
        cells += [cell_of(t, r["runs"].get(t, {})) for t in CHECKS]
        cells += [r["shows_it_cell"], r["suggested"]]
        out.write("| " + " | ".join(md(c) for c in cells) + " |\n")

    out.write("\n`ok`: ran and matched the expected outputs; `ok≠N`: ran, N elements differ from "
              "them; `ok*`: ran, no expected outputs to compare with; `err`: the library "
              "raised an error; `crash`: the process died; `timeout`: killed after the time "
              "limit; `setup`: the bundle could not be fed to it; `n/a`: not run. shows-it: "
              "whether the bundle's own library shows the bug's kind again (`msg✓`/`msg✗`: its "
              "error does / does not contain the bundle's expected phrase).\n")

    counts = {}
    for r in records:
        counts[r["suggested"]] = counts.get(r["suggested"], 0) + 1
    out.write("\nSuggested: " + ", ".join("%s %d" % (k, v) for k, v in sorted(counts.items()))
              + " (of %d bundles; a suggestion for a human, not a verdict)\n" % len(records))

    out.write("\n## Details\n")
    for r in records:
        out.write("\n**%s** (`%s`)\n" % (r["id"], r["path"]))
        if r["signature"]:
            out.write("- signature: `%s`\n" % first_line(r["signature"]).replace("`", "'"))
        if r["expect_error"]:
            out.write("- expected error phrase: %s\n" % first_line(r["expect_error"]))
        for p in r["problems"]:
            out.write("- bundle: %s\n" % first_line(p))
        for task in CHECKS:
            run = r["runs"].get(task, {})
            status = run.get("status")
            if status in ("error", "crash", "timeout", "setup"):
                out.write("- %s: %s: %s\n" % (task, status, headline(run.get("message", ""))))
            elif status == "ok" and task != "checker":
                summary = mismatch_summary(run)
                if summary:
                    out.write("- %s: %s\n" % (task, first_line(summary)))
            for note in run.get("notes") or []:
                out.write("- %s: note: %s\n" % (task, first_line(note)))
        out.write("- shows-it: %s — %s\n" % (r["shows_it_cell"], first_line(r["shows_it_why"])))
        out.write("- others ran ok: %s; agree with expected: %s\n" % (
            ", ".join(r["others_ran_ok"]) or "none",
            ", ".join(r["others_agree_with_expected"]) or "none"))


def jsonable(obj):
    """The record without arrays, with NaN/Inf as strings (strict JSON)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return describe(obj)
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj


def json_record(record):
    r = dict(record)
    runs = {}
    for task, run in record["runs"].items():
        run = dict(run)
        run["outputs"] = [{"name": n, "what": w} for n, _, w in run.get("outputs", [])]
        if isinstance(run.get("message"), str):
            run["message"] = run["message"][:FULL_CHARS]
        runs[task] = run
    r["runs"] = runs
    return jsonable(r)


# ------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------

def is_bundle(path):
    if not os.path.isdir(path):
        return False
    return any(os.path.exists(os.path.join(path, f))
               for f in ("meta.json", "minimized.onnx", "original.onnx"))


def find_bundles(arg):
    """The bundles named by one command-line DIR (a bundle, a directory of bundles or a
    campaign directory with findings/). None when DIR holds none."""
    if is_bundle(arg):
        return [arg]
    for base in (arg, os.path.join(arg, "findings")):
        if not os.path.isdir(base):
            continue
        found = sorted(os.path.join(base, d) for d in os.listdir(base)
                       if is_bundle(os.path.join(base, d)))
        if found:
            return found
    return None


def main(argv):
    parser = argparse.ArgumentParser(
        description="Re-check mutagraph bug bundles with onnx, onnxruntime and tract, each run "
                    "in a fresh process, and print a Markdown table.")
    parser.add_argument("dirs", nargs="+", metavar="DIR",
                        help="a bundle, a directory of bundles, or a campaign directory")
    parser.add_argument("--json", metavar="FILE",
                        help="write one JSON object per bundle (one per line, in table order) "
                             "with every detail to FILE")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="time limit of each library run (default 60)")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                        help="bundles checked in parallel (default 1)")
    args = parser.parse_args(argv)

    if not args.timeout > 0 or not math.isfinite(args.timeout):
        parser.error("--timeout must be a positive number of seconds, not %s" % args.timeout)
    if args.jobs < 1:
        parser.error("-j must be at least 1, not %d" % args.jobs)
    bundles = []
    for d in args.dirs:
        if not os.path.exists(d):
            parser.error("%s does not exist" % d)
        if not os.path.isdir(d):
            parser.error("%s is not a directory" % d)
        found = find_bundles(d)
        if not found:
            parser.error("%s is not a bundle and holds no bundles (directories with meta.json, "
                         "minimized.onnx or original.onnx), nor a findings/ directory of them" % d)
        bundles += [b for b in found if b not in bundles]
    json_file = None
    if args.json:
        try:
            json_file = open(args.json, "w")
        except OSError as e:
            parser.error("cannot write --json file %s: %s" % (args.json, e))

    try:
        import onnx, onnxruntime, tract  # noqa: F401  (versions for the record)
        versions = "onnx %s, onnxruntime %s, tract %s, numpy %s" % (
            onnx.__version__, onnxruntime.__version__, tract.version(), np.__version__)
    except Exception as e:  # the workers will report the same problem per run
        versions = "import problem: %s" % first_line(e)
    sys.stderr.write("maintainer_check: %d bundle(s), timeout %g s, %d job(s); %s\n"
                     % (len(bundles), args.timeout, args.jobs, versions))

    records = [None] * len(bundles)
    done = [0]
    written = [0]  # JSON lines go out in bundle order, as soon as their turn comes
    lock = threading.Lock()

    def one(i):
        try:
            rec = check_bundle(bundles[i], args.timeout)
        except Exception as e:  # belt and braces: a row for every bundle
            rec = {"id": os.path.basename(os.path.normpath(bundles[i])), "path": bundles[i],
                   "kind": "?", "library": "?", "variants": [], "op": None, "signature": "",
                   "expect_error": None, "runs": {}, "shows_it": None, "shows_it_cell": "n/a",
                   "shows_it_why": "", "others_ran_ok": [], "others_agree_with_expected": [],
                   "suggested": "unconfirmed",
                   "problems": ["maintainer_check internal error: %s: %s" % (type(e).__name__, e)]}
        records[i] = rec
        with lock:
            done[0] += 1
            sys.stderr.write("[%d/%d] %s: %s\n" % (done[0], len(bundles), rec["id"], rec["suggested"]))
            while json_file and written[0] < len(records) and records[written[0]] is not None:
                json_file.write(json.dumps(json_record(records[written[0]])) + "\n")
                json_file.flush()
                written[0] += 1

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(one, range(len(bundles))))
    if json_file:
        json_file.close()

    sys.stdout.write("# maintainer_check (%s)\n\n" % versions)
    render(records, sys.stdout)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == WORKER_FLAG:
        sys.exit(worker_main(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
