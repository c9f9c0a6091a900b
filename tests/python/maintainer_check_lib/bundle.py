"""One bundle: its files and facts, every check of it, and the suggestion drawn from them."""

import json
import os

from .common import CHECKS, KINDS, RUNS, first_line, load_npz
from .compare import compare_run
from .launch import run_check


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
