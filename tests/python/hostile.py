#!/usr/bin/env python3
"""Hostile-input generator and runner for the `mutagraph` binary (issue 20).

Writes N hostile model inputs (deterministic from --seed) into a work directory, runs every
input through every command that takes a model, each in its own process group with a wall-clock
timeout, an address-space limit (RLIMIT_AS) and its peak resident memory measured (wait4), and
classifies each run:

  ok                     exit 0
  rejected               exit 1 or 2, stderr names the input (full path or file name)
  rejected-without-path  exit 1 or 2, the message does not say which file     (defect)
  panic                  exit 101, or a panic located in this workspace's code (defect)
  signal                 killed by a signal it did not get from us (abort, segv) (defect)
  timeout                still running at the time limit                      (defect)
  over-memory            peak RSS above --rss-limit (2 GiB)                   (defect)
  leaked-process         processes of its group still alive after it exited   (defect)
  other-exit             any other exit code                                  (defect)
  backend-panic          exit 0/1 with a panic inside a dependency's code (a worker's backend
                         panicked and the tool reported it): a finding, not a defect

Commands run on every input: inspect, inspect --json, convert to .onnx and to .onnxtxt, reduce,
coverage, run --backends reference, minimize --max-checks 5 --backends reference; on a sample:
run with the default backends (10 %), campaign --time 5s --quiet (50 inputs), inspect with its
stdout a closed pipe (5 %).

Usage:
  python3 tests/python/hostile.py --count 500 --seed 1 --out /tmp/hostile.json
  python3 tests/python/hostile.py --count 300 --campaign-sample 10 --fail-on-defect   # quick CI check
  nohup python3 tests/python/hostile.py --count 10000 --keep --workdir /tmp/h10k --out /tmp/h10k.json &
  python3 tests/python/hostile.py --workdir /tmp/h10k --reuse --commands inspect,run-ref  # same inputs
  python3 tests/python/hostile.py --workdir /tmp/h10k --reuse --bin target/debug/mutagraph  # overflow checks
  python3 tests/python/hostile.py --from-results /tmp/h10k.results.jsonl   # re-summarize, reclassify
  python3 tests/python/hostile.py --list-kinds

Writes OUT (JSON: counts per command and class, defects per input kind, up to 5 examples per defect
class with their stderr, the distinct signatures of each class) and OUT-STEM.results.jsonl (every
run), and prints the table. The binary under test is best a copy (`cp target/release/mutagraph
/tmp/`): others rebuilding target/ in the middle of a run would mix two versions.

Only Python 3 with `onnx` and `numpy`.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

# The generators, the runner and the summary: hostile_lib/ (its __init__ lists the parts).
from hostile_lib.build import Ctx
from hostile_lib.classify import DEFECTS, classify, signature
from hostile_lib.kinds import ALL_KINDS, FEW, KIND_DOC, MIX, generate
from hostile_lib.runner import (ACTIVE, CLOSED_STDOUT, COMMANDS, STOP, kill_session, run_one, sample_arg,
                               sample_indices)
from hostile_lib.summary import Summary

REPO = Path(__file__).resolve().parents[2]


def resummarize(opts) -> int:
    rows = [json.loads(l) for l in open(opts.from_results) if l.strip()]
    cmds = list(dict.fromkeys(r["command"] for r in rows))
    opts.commands = cmds
    manifest = {r["index"] for r in rows}
    summary = Summary(opts, manifest)
    for r in rows:
        timed_out = r["class"] == "timeout"
        r["class"] = classify(r["rc"], timed_out, int(r["maxrss_mb"] * 1024), bool(r["leaked"]),
                              r["stderr"], r["path"], opts.rss_limit_mb << 10)
        r["signature"] = signature(r["class"], r["command"], r["stderr"], r["rc"])
        summary.add(r)
    js = summary.to_json(0, True)
    js["from_results"] = opts.from_results
    Path(opts.out).write_text(json.dumps(js, indent=1))
    print(summary.table())
    print(f"\n{summary.n} runs over {len(manifest)} inputs; summary: {opts.out}")
    return 1 if opts.fail_on_defect and summary.defect_count() else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--count", type=int, default=10000, help="inputs to generate (default 10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bin", default=str(REPO / "target/release/mutagraph"))
    ap.add_argument("--commands", default=",".join(COMMANDS),
                    help=f"comma-separated subset of {','.join(COMMANDS)}")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the work directory (the inputs and their manifest.json)")
    ap.add_argument("--workdir", help="work directory (default: a new temporary one)")
    ap.add_argument("--reuse", action="store_true", help="reuse the inputs already in --workdir")
    ap.add_argument("--generate-only", action="store_true")
    ap.add_argument("--kinds", help="only these input kinds (comma-separated; see --list-kinds)")
    ap.add_argument("--list-kinds", action="store_true")
    ap.add_argument("--out", default="hostile-summary.json",
                    help="JSON summary (default hostile-summary.json); every run goes to OUT-STEM.results.jsonl")
    ap.add_argument("--timeout", type=float, default=20,
                    help="seconds per run of inspect, convert, reduce, coverage (default 20)")
    ap.add_argument("--run-timeout", type=float, default=60,
                    help="seconds per run of run and minimize, which run backends (default 60)")
    ap.add_argument("--campaign-timeout", type=float, default=120,
                    help="seconds per campaign run, --time 5s plus admission and minimization (default 120)")
    ap.add_argument("--campaign-sample", type=sample_arg, default=50,
                    help="inputs that get a campaign (a count, or a fraction: 0.1, 10%%; default 50)")
    ap.add_argument("--default-run-sample", type=sample_arg, default=0.1,
                    help="inputs that get `run` with the default backends (default 0.1 = 10%%)")
    ap.add_argument("--closed-stdout-sample", type=sample_arg, default=0.05,
                    help="inputs that get `inspect` with a closed stdout pipe (default 0.05)")
    ap.add_argument("--no-stack-on-timeout", dest="stack_on_timeout", action="store_false",
                    help="do not take the command's backtrace with gdb when it times out")
    ap.add_argument("--as-limit-mb", type=int, default=4096, help="RLIMIT_AS of each run (default 4096)")
    ap.add_argument("--rss-limit-mb", type=int, default=2048, help="over-memory above this (default 2048)")
    ap.add_argument("--from-results", metavar="RESULTS_JSONL",
                    help="only summarize (reclassifying) the runs of an earlier results.jsonl")
    ap.add_argument("--fail-on-defect", action="store_true", help="exit 1 when any defect class occurs")
    ap.add_argument("--quiet", action="store_true")
    opts = ap.parse_args()
    if opts.list_kinds:
        for k in FEW:
            print(f"{k:20} {FEW[k][1]:>3} in 10 000  {KIND_DOC.get(k, '')}")
        total = sum(w for _, w in MIX.values())
        for k in MIX:
            print(f"{k:20} {MIX[k][1] / total:>7.1%} of the rest  {KIND_DOC.get(k, '')}")
        return 0
    opts.commands = [c.strip() for c in opts.commands.split(",") if c.strip()]
    if opts.from_results:
        return resummarize(opts)
    bad = [c for c in opts.commands if c not in COMMANDS]
    if bad:
        ap.error(f"unknown commands {bad}; known: {list(COMMANDS)}")
    opts.bin = os.path.abspath(opts.bin)
    if not os.access(opts.bin, os.X_OK):
        ap.error(f"no binary at {opts.bin} (cargo build --release -p mutagraph-engine)")
    kinds = set(opts.kinds.split(",")) if opts.kinds else None
    if kinds and kinds - set(ALL_KINDS):
        ap.error(f"unknown kinds {sorted(kinds - set(ALL_KINDS))}")

    tmp = opts.workdir is None
    workdir = Path(opts.workdir or tempfile.mkdtemp(prefix="hostile-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    inputs_dir = workdir / "inputs"
    man_path = workdir / "manifest.json"
    t0 = time.time()
    if opts.reuse and man_path.exists():
        manifest = json.loads(man_path.read_text())
    else:
        if inputs_dir.exists():
            for p in inputs_dir.iterdir():  # chmod back what no-read-perm took away
                try:
                    if not p.is_symlink():
                        os.chmod(p, 0o755 if p.is_dir() else 0o644)
                except OSError:
                    pass
            shutil.rmtree(inputs_dir)
        ctx = Ctx(opts.bin, workdir, opts.seed)
        manifest = generate(ctx, inputs_dir, opts.count, opts.seed, kinds)
        man_path.write_text(json.dumps(manifest, indent=0))
    gen_s = time.time() - t0
    if not opts.quiet:
        print(f"{len(manifest)} inputs in {inputs_dir} ({gen_s:.0f} s to generate)", file=sys.stderr)
    if opts.generate_only:
        return 0

    opts.scratch_root = str(workdir / "scratch")
    os.makedirs(opts.scratch_root, exist_ok=True)
    camp = sample_indices(manifest, opts.campaign_sample, opts.seed, "campaign")
    dflt = sample_indices(manifest, opts.default_run_sample, opts.seed, "default-run")
    closed = sample_indices(manifest, opts.closed_stdout_sample, opts.seed, "closed-stdout")
    jobs = []
    for e in manifest:
        for c in opts.commands:
            if c == "campaign" and e["index"] not in camp:
                continue
            if c == "run-default" and e["index"] not in dflt:
                continue
            if c in CLOSED_STDOUT and e["index"] not in closed:
                continue
            jobs.append((e["index"], e, c))
    summary = Summary(opts, manifest)
    out_path = Path(opts.out)
    results_path = out_path.with_name(out_path.stem + ".results.jsonl")  # every run, one a line
    t_run = time.time()
    last_write = time.time()
    def on_term(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_term)
    ex = concurrent.futures.ThreadPoolExecutor(opts.jobs)
    rf = open(results_path, "w")
    try:
        futs = [ex.submit(run_one, j, opts) for j in jobs]
        for n, f in enumerate(concurrent.futures.as_completed(futs), 1):
            r = f.result()
            summary.add(r)
            rf.write(json.dumps(r) + "\n")
            first = summary.sigs.get(r["class"], {}).get(r["signature"], {}).get("count") == 1
            if r["class"] in DEFECTS and first and not opts.quiet:  # the first of each signature
                print(f"[{r['class']}] {r['command']} {r['path']} ({r['kind']}: {r['detail'][:80]}): "
                      f"{r['signature'][:160]}", file=sys.stderr)
            if not opts.quiet and (n % 500 == 0 or n == len(jobs)):
                el = time.time() - t_run
                print(f"progress {n}/{len(jobs)} runs, {el:.0f} s, eta {el / n * (len(jobs) - n):.0f} s, "
                      f"defects {summary.defect_count()}", file=sys.stderr)
            if time.time() - last_write > 60:
                out_path.write_text(json.dumps(summary.to_json(time.time() - t_run, False), indent=1))
                rf.flush()
                last_write = time.time()
    except KeyboardInterrupt:
        print("interrupted; writing the partial summary", file=sys.stderr)
        STOP.set()
        ex.shutdown(wait=False, cancel_futures=True)
        for sid in list(ACTIVE):
            kill_session(sid)
    finally:
        rf.close()
        ex.shutdown(wait=False, cancel_futures=True)
    wall = time.time() - t_run
    js = summary.to_json(wall, summary.n == len(jobs))
    js["generate_s"] = round(gen_s, 1)
    js["workdir"] = str(workdir) if (opts.keep or not tmp) else None
    out_path.write_text(json.dumps(js, indent=1))
    print(summary.table())
    print(f"\n{summary.n} runs over {len(manifest)} inputs in {wall:.0f} s "
          f"({wall * 1000 / max(1, len(manifest)):.0f} s per 1000 inputs, {opts.jobs} jobs); "
          f"summary: {out_path}")
    if not (opts.keep or not tmp):
        for p in inputs_dir.iterdir() if inputs_dir.exists() else []:
            try:
                if not p.is_symlink() and p.exists():
                    os.chmod(p, 0o755 if p.is_dir() else 0o644)
            except OSError:
                pass
        shutil.rmtree(workdir, ignore_errors=True)
    if opts.fail_on_defect and summary.defect_count():
        print(f"{summary.defect_count()} defect runs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
