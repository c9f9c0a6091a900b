"""The report: the Markdown table with its details, and the records as strict JSON."""

import math

import numpy as np

from .common import CHECKS, FULL_CHARS, RUNS, describe, first_line, headline
from .compare import mismatch_summary


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
