"""The class of one run (ok, rejected, or a defect) from its exit, limits and stderr, and the
signature that groups runs of one cause."""

from __future__ import annotations

import os
import re
import signal


DEFECTS = ["panic", "signal", "timeout", "over-memory", "leaked-process", "rejected-without-path",
           "other-exit"]
CLASSES = ["ok", "rejected"] + DEFECTS + ["backend-panic"]
WORKSPACE_DIRS = ("ir/", "engine/", "backends/", "mutators/", "oracles/", "prompts/", "tests/", "benches/")


def names_path(stderr: str, path: str) -> bool:
    b = os.fsencode(path)
    forms = {path, b.decode("utf-8", "replace"), os.path.basename(b).decode("utf-8", "replace")}
    return any(f and f in stderr for f in forms)


def panic_location(stderr: str) -> str | None:
    m = re.search(r"panicked at ([^\n]+?):(\d+):(\d+)", stderr)
    return m.group(1) if m else None


WS_FRAME = re.compile(r"at (?:\S*?/)?((?:ir|engine|backends|mutators|oracles|prompts|tests|benches)/src/[^:\s]+:\d+)")
DEP_FRAME = re.compile(r"at (\S*/\.cargo/registry/\S+)")


def panic_in_workspace(stderr: str, loc: str) -> bool:
    """The panic is this workspace's: located in its code, or in std (an overflow, an
    `unwrap`) called from its code before any dependency's frame."""
    if loc.startswith(WORKSPACE_DIRS) or re.search(r"/(ir|engine|backends|mutators|oracles|prompts)/src/", loc):
        return True
    if loc.startswith("/rustc/"):
        i = stderr.find("stack backtrace:")
        if i >= 0:
            ws, dep = WS_FRAME.search(stderr, i), DEP_FRAME.search(stderr, i)
            return ws is not None and (dep is None or ws.start() < dep.start())
    return False


def classify(rc, timed_out, maxrss_kb, leaked, stderr: str, path: str, rss_limit_kb: int) -> str:
    if timed_out:
        return "timeout"
    loc = panic_location(stderr)
    if rc == 101:
        return "panic"
    if loc is not None and panic_in_workspace(stderr, loc):
        return "panic"
    if rc is not None and rc < 0:
        return "signal"
    if maxrss_kb > rss_limit_kb:
        return "over-memory"
    if leaked:
        return "leaked-process"
    if rc == 0:
        return "backend-panic" if loc else "ok"
    # 1: a failure the command reports (an invalid model); 2: an input it refuses.
    if rc in (1, 2):
        if not names_path(stderr, path):
            return "rejected-without-path"
        return "backend-panic" if loc else "rejected"
    return "other-exit"


def signature(cls: str, cmd: str, stderr: str, rc) -> str:
    if cls in ("panic", "backend-panic"):
        m = re.search(r"panicked at ([^\n]+?):(\d+):\d+:\n([^\n]*)", stderr)
        if m:
            where = f"{m.group(1)}:{m.group(2)}"
            if where.startswith("/rustc/") or "/.cargo/registry/" in where:
                ws = WS_FRAME.search(stderr, m.end())
                short = re.sub(r"^.*/registry/src/[^/]+/", "", re.sub(r"^/rustc/[0-9a-f]+/", "", where))
                # the workspace's frame that called into std or a dependency
                where = f"{short} from {ws.group(1)}" if ws else short
            return f"panic at {where}: {norm(m.group(3))}"
    if cls == "signal":
        try:
            name = signal.Signals(-rc).name
        except (ValueError, TypeError):
            name = str(rc)
        first = next((l for l in stderr.splitlines() if l.strip()), "")
        return f"{name}: {norm(first)}"
    if cls == "timeout":
        i = stderr.find("[hostile.py: stack at the timeout]")
        if i >= 0:  # the innermost frame of the workspace's code
            frames = re.finditer(r"#\d+\s+(?:0x[0-9a-f]+ in )?(.+?) (?:\(\) )?at (?:\S*?/)?"
                                 r"((?:ir|engine|backends|mutators|oracles|prompts)/src/[^:\s]+):(\d+)", stderr[i:])
            named = [m for m in frames if not m.group(1).startswith("{closure")]
            if named:
                m = named[0]
                fn = re.sub(r"<.*", "", m.group(1)).strip()
                return f"timeout at {m.group(2)}:{m.group(3)} ({fn})"
        return f"timeout in {cmd}"
    first = next((l for l in stderr.splitlines() if l.startswith("error")), None)
    if first is None:
        first = next((l for l in stderr.splitlines() if l.strip()), "(no stderr)")
    return norm(first)


def norm(s: str) -> str:
    s = re.sub(r"(?<![\w.])/[^\s:'\"()]+", "PATH", s)
    s = re.sub(r"\d+", "N", s)
    return s[:200]
