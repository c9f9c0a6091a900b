"""Running one command on one input: its own session, a wall-clock limit, an address-space
limit and its peak resident memory measured, processes left behind found; and the samples of
inputs that get the costlier commands."""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .classify import WS_FRAME, classify, signature


COMMANDS = {
    "inspect": lambda b, m, s: [b, "inspect", m],
    "inspect-json": lambda b, m, s: [b, "inspect", m, "--json"],
    "convert-onnx": lambda b, m, s: [b, "convert", m, f"{s}/out.onnx"],
    "convert-txt": lambda b, m, s: [b, "convert", m, f"{s}/out.onnxtxt"],
    "reduce": lambda b, m, s: [b, "reduce", m, f"{s}/reduced.onnx"],
    "coverage": lambda b, m, s: [b, "coverage", m],
    "run-ref": lambda b, m, s: [b, "run", m, "--backends", "reference"],
    "run-default": lambda b, m, s: [b, "run", m],
    "minimize": lambda b, m, s: [b, "minimize", m, "--max-checks", "5", "--backends", "reference",
                                 "--out", f"{s}/min.onnx"],
    "campaign": lambda b, m, s: [b, "campaign", "--seeds", m, "--out", f"{s}/campaign", "--time", "5s",
                                 "--quiet"],
    # stdout is a pipe whose reading end is closed (`mutagraph inspect M | head -0`)
    "inspect-closed-stdout": lambda b, m, s: [b, "inspect", m],
}
CLOSED_STDOUT = {"inspect-closed-stdout"}
# commands that run backends in workers, each run bounded by the engine's own 10 s per-run
# limit: the default backends one after another, minimize's checks; they get --run-timeout
RUNS_BACKENDS = {"run-ref", "run-default", "minimize"}


def session_alive(sid: int) -> list[int]:
    """Non-zombie processes of a session (the engine puts its workers in process groups of
    their own, not in sessions of their own)."""
    alive = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                st = f.read()
        except OSError:
            continue
        rest = st[st.rfind(b")") + 2 :].split()
        if len(rest) > 3 and int(rest[3]) == sid and rest[0] != b"Z":
            alive.append(int(d))
    return alive


def kill_session(sid: int):
    for _ in range(3):
        pids = session_alive(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def excerpt(b: bytes, head=1500, tail=1500) -> str:
    s = b.decode("utf-8", "replace")
    if len(s) <= head + tail + 20:
        return s
    return s[:head] + f"\n[... {len(s) - head - tail} chars ...]\n" + s[-tail:]


# Runs the command as its child and reports the child's wait status and peak RSS: measured
# from a small process, since a child forked from this one would start with (and report) this
# interpreter's peak RSS. The limits apply to the command only.
LAUNCHER = r"""
import os, resource, sys
out, lim, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
pid = os.fork()
if pid == 0:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 30, 2 << 30))
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, st, ru = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(f"{st} {ru.ru_maxrss}")
"""


def stack_of_child(launcher: int) -> str:
    """The backtrace of the launcher's child (the command) by gdb, if there is one: where a
    timeout was spent."""
    gdb = shutil.which("gdb")
    if not gdb:
        return ""
    try:
        pid = Path(f"/proc/{launcher}/task/{launcher}/children").read_text().split()[0]
        r = subprocess.run([gdb, "-p", pid, "-batch", "-ex", "bt 40"], capture_output=True,
                           timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return ""
    frames = [l for l in r.stdout.decode("utf-8", "replace").splitlines() if l.startswith("#")]
    # the innermost frames, then only the workspace's
    keep = [f for i, f in enumerate(frames) if i < 4 or WS_FRAME.search(f)]
    return "\n".join(f[:300] for f in keep)


ACTIVE: set[int] = set()  # sessions of the runs in flight
STOP = threading.Event()


def run_one(job, opts) -> dict:
    idx, entry, cmd = job
    if STOP.is_set():
        raise concurrent.futures.CancelledError()
    scratch = tempfile.mkdtemp(prefix=f"j{idx}_{cmd}_", dir=opts.scratch_root)
    argv = COMMANDS[cmd](opts.bin, entry["path"], scratch)
    limit = (opts.campaign_timeout if cmd == "campaign"
             else opts.run_timeout if cmd in RUNS_BACKENDS else opts.timeout)
    res = f"{scratch}/rusage"
    env = dict(os.environ, RUST_BACKTRACE="1", TMPDIR=scratch)
    t0 = time.monotonic()
    with open(f"{scratch}/stdout", "wb") as so, open(f"{scratch}/stderr", "wb") as se:
        out_fd = so.fileno()
        if cmd in CLOSED_STDOUT:
            rd, out_fd = os.pipe()
            os.close(rd)
        try:
            p = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, res,
                                  str(opts.as_limit_mb << 20), *argv],
                                 stdin=subprocess.DEVNULL, stdout=out_fd, stderr=se, env=env,
                                 start_new_session=True, cwd=scratch)
        finally:
            if cmd in CLOSED_STDOUT:
                os.close(out_fd)
    sid = p.pid
    ACTIVE.add(sid)
    timed_out = threading.Event()

    stack = []

    def kill():
        timed_out.set()
        if opts.stack_on_timeout:
            stack.append(stack_of_child(sid))
        kill_session(sid)
    timer = threading.Timer(limit, kill)
    timer.start()
    _, lstatus, _ = os.wait4(p.pid, 0)
    timer.cancel()
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(lstatus)
    try:
        st, rss = Path(res).read_text().split()
        rc, maxrss_kb = os.waitstatus_to_exitcode(int(st)), int(rss)
    except (OSError, ValueError):  # the launcher was killed (timeout)
        rc, maxrss_kb = None, 0
    # processes of its session still running after it exited
    leaked = []
    if not timed_out.is_set():
        deadline = time.monotonic() + 1.0
        while True:
            leaked = session_alive(sid)
            if not leaked or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    leaked_cmd = []
    if leaked:
        for pid in leaked:
            try:
                leaked_cmd.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200])
            except OSError:
                pass
    kill_session(sid)
    ACTIVE.discard(sid)
    stderr_b = Path(f"{scratch}/stderr").read_bytes()
    stdout_len = os.path.getsize(f"{scratch}/stdout")
    shutil.rmtree(scratch, ignore_errors=True)
    stderr = stderr_b.decode("utf-8", "replace")
    if stack and stack[0]:
        stderr_b += b"\n[hostile.py: stack at the timeout]\n" + stack[0].encode()
        stderr = stderr_b.decode("utf-8", "replace")
    cls = classify(rc, timed_out.is_set(), maxrss_kb, bool(leaked), stderr,
                   entry["path"], opts.rss_limit_mb << 10)
    return {
        "index": idx, "kind": entry["kind"], "detail": entry["detail"], "path": entry["path"],
        "command": cmd, "argv": argv, "rc": rc, "class": cls, "wall_s": round(wall, 3),
        "maxrss_mb": round(maxrss_kb / 1024, 1), "stdout_bytes": stdout_len,
        "stderr": excerpt(stderr_b), "leaked": leaked_cmd,
        "signature": signature(cls, cmd, stderr, rc),
    }


def sample_arg(s: str):
    """`50`: that many inputs; `0.1`, `1.0` or `10%`: that fraction of them."""
    try:
        if s.endswith("%"):
            return float(s[:-1]) / 100
        return float(s) if "." in s else int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count or a fraction: {s!r}")


def sample_indices(manifest, n: int | float, seed: int, salt: str) -> set[int]:
    """n inputs (a float: that fraction of them), spread over the kinds round-robin."""
    if isinstance(n, float):
        n = int(round(n * len(manifest)))
    rng = random.Random(f"{salt}:{seed}")
    by_kind = collections.defaultdict(list)
    for e in manifest:
        by_kind[e["kind"]].append(e["index"])
    for v in by_kind.values():
        rng.shuffle(v)
    chosen = []
    kinds = sorted(by_kind)
    while len(chosen) < n and any(by_kind.values()):
        for k in kinds:
            if by_kind[k] and len(chosen) < n:
                chosen.append(by_kind[k].pop())
    return set(chosen)
