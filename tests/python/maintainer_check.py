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
import sys
import threading

import numpy as np

# The checks, the comparison and the report: maintainer_check_lib/ (its __init__ lists the parts).
from maintainer_check_lib.bundle import check_bundle
from maintainer_check_lib.common import WORKER_FLAG, first_line
from maintainer_check_lib.report import json_record, render
from maintainer_check_lib.worker import worker_main


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
