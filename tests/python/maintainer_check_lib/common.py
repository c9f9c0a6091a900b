"""What the worker and the parent share: the checks, tolerances and limits, and small helpers."""

import os
import re
import urllib.parse

import numpy as np


# Hidden first argument that makes maintainer_check.py act as a worker process (one library run).
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

# The kinds of finding mutagraph writes.
KINDS = ("crash", "nan", "inconsistency", "hang", "slow", "memory", "flaky")

# Longest error line shown below the table.
LINE_CHARS = 200
# Longest error text kept in the JSON records.
FULL_CHARS = 4000

# The script a worker process runs (with WORKER_FLAG first): the command-line entry point.
ENTRY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "maintainer_check.py")


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
