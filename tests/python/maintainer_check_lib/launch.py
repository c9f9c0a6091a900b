"""Parent side: starting a worker for one check and reading back its result."""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from .common import ENTRY, FULL_CHARS, WORKER_FLAG


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
        cmd = [sys.executable, ENTRY, WORKER_FLAG, task, model_path,
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
