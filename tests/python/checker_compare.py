"""Run onnx.checker (full check) on original and re-exported models.

Usage: checker_compare.py SUITE_DIR EXPORT_DIR

EXPORT_DIR mirrors SUITE_DIR (same relative paths). Prints one line per model where the
original passes the checker and the export does not, then a summary line
"checker: N originals pass, M exports pass, K regressions". Exit 1 if K > 0.
"""
import sys
from pathlib import Path

import onnx


def ok(path):
    try:
        onnx.checker.check_model(onnx.load(str(path)), full_check=True)
        return True, ""
    except Exception as e:  # noqa: BLE001 - the checker raises several types
        return False, str(e).splitlines()[0] if str(e) else type(e).__name__


def main():
    suite, export = Path(sys.argv[1]), Path(sys.argv[2])
    n_orig = n_exp = regress = 0
    for exp in sorted(export.rglob("*.onnx")):
        rel = exp.relative_to(export)
        o_ok, _ = ok(suite / rel)
        e_ok, msg = ok(exp)
        n_orig += o_ok
        n_exp += e_ok
        if o_ok and not e_ok:
            regress += 1
            print(f"regression: {rel}: {msg}")
    print(f"checker: {n_orig} originals pass, {n_exp} exports pass, {regress} regressions")
    return 1 if regress else 0


if __name__ == "__main__":
    sys.exit(main())
