"""The validity cross-check: every model given passes ONNX's own rules.

Usage: checker_models.py DIR_OR_FILE... [--json FILE]

For each .onnx file (directories are searched recursively): onnx.checker.check_model with
full_check=True, then onnx.shape_inference.infer_shapes with check_type, strict_mode and
data_prop. Prints one line per failing model (its path and the first line of ONNX's error),
then a summary "checker: N models, K fail" and, per op type of the failing nodes ONNX names,
the count. Exit status 1 when a model fails, 2 on bad arguments.
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


def main(argv):
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
    ops = collections.Counter()
    for f in files:
        why = check(f)
        if why is not None:
            failures.append({"model": str(f), "error": why})
            m = re.search(r"op_type:(\w+)", why)
            ops[m.group(1) if m else "?"] += 1
            print("FAIL %s: %s" % (f, why[:400]))
    print("checker: %d models, %d fail" % (len(files), len(failures)))
    for op, n in ops.most_common():
        print("  %s: %d" % (op, n))
    if out:
        Path(out).write_text(json.dumps(failures, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
