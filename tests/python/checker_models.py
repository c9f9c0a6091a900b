"""The validity cross-check: every model given passes ONNX's own rules.

Usage: checker_models.py DIR_OR_FILE... [--json FILE]

For each .onnx file (directories are searched recursively): onnx.checker.check_model with
full_check=True, then onnx.shape_inference.infer_shapes with check_type, strict_mode and
data_prop. Prints one line per failing model (its path and the first line of ONNX's error),
then a summary "checker: N models, K fail" and, per op type of the failing nodes ONNX names,
the count. Exit status 1 when a model fails, 2 on bad arguments.

ONNX's shape inference can crash the process (a segfault) instead of raising: onnx 1.22 does
on an EyeLike whose input has no type, which an op of a domain ONNX has no schema for (ONNX
Runtime's com.microsoft ops) leaves untyped. The checks therefore run in a child process; a
model that kills it is listed as "CRASH" (ONNX's own bug: not a verdict on the model), with
whether it holds an op outside ONNX's domains, and the child starts again at the next model.
"""
import collections
import json
import re
import sys
from pathlib import Path

import onnx
from onnx import shape_inference


def check(path):
    """None when the model passes, else the first line of ONNX's complaint."""
    try:
        model = onnx.load(str(path))
        onnx.checker.check_model(model, full_check=True)
        shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
        return None
    except Exception as e:  # noqa: BLE001 - the checker raises several types
        text = str(e).strip()
        return text.splitlines()[0] if text else type(e).__name__


def worker():
    """Checks the model paths read from stdin, one verdict per line on stdout (`ok` or the
    error): the child process of `check_all`."""
    for line in sys.stdin:
        why = check(Path(line.strip()))
        sys.stdout.write(("ok" if why is None else "FAIL " + why.replace("\n", " ")) + "\n")
        sys.stdout.flush()


def foreign_ops(path):
    """The ops of a model outside ONNX's domains (`domain::Op`)."""
    try:
        m = onnx.load(str(path))
    except Exception:  # noqa: BLE001
        return []
    return sorted({"%s::%s" % (n.domain, n.op_type) for n in m.graph.node
                   if n.domain not in ("", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training")})


def check_all(files):
    """(path, verdict) per file: None (passes), the error, or `CRASH` when ONNX killed the
    checking process on it."""
    import subprocess
    child = None
    for f in files:
        if child is None:
            child = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        child.stdin.write(str(f) + "\n")
        child.stdin.flush()
        line = child.stdout.readline()
        if not line:
            child.wait()
            child = None
            yield f, "CRASH"
            continue
        line = line.rstrip("\n")
        yield f, None if line == "ok" else line[len("FAIL "):]
    if child is not None:
        child.stdin.close()
        child.wait()


def main(argv):
    if argv == ["--worker"]:
        worker()
        return 0
    args, out = [], None
    it = iter(argv)
    for a in it:
        if a == "--json":
            out = next(it, None)
            if out is None:
                print("checker_models.py: --json needs a file", file=sys.stderr)
                return 2
        else:
            args.append(a)
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    files = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            files.extend(sorted(p.rglob("*.onnx")))
        elif p.is_file():
            files.append(p)
        else:
            print("checker_models.py: %s: no such file or directory" % a, file=sys.stderr)
            return 2
    failures = []
    crashes = []
    ops = collections.Counter()
    for f, why in check_all(files):
        if why == "CRASH":
            foreign = foreign_ops(f)
            crashes.append({"model": str(f), "foreign_ops": foreign})
            print("CRASH %s: ONNX's checker died on it (ops outside ONNX: %s)"
                  % (f, ", ".join(foreign) or "none"))
            continue
        if why is not None:
            failures.append({"model": str(f), "error": why})
            m = re.search(r"op_type:(\w+)", why)
            ops[m.group(1) if m else "?"] += 1
            print("FAIL %s: %s" % (f, why[:400]))
    print("checker: %d models, %d fail, %d crashed ONNX's checker" % (len(files), len(failures),
                                                                       len(crashes)))
    for op, n in ops.most_common():
        print("  %s: %d" % (op, n))
    if out:
        Path(out).write_text(json.dumps({"failures": failures, "crashes": crashes}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
