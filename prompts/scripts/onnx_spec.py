"""Prints the schema of one ONNX operator as JSON, read from the installed `onnx` package.

Usage: python3 onnx_spec.py OP OPSET [DOMAIN]
Exit status 2 with a message on stderr when onnx is missing or the operator is unknown.
"""
import json
import sys


def main():
    if len(sys.argv) < 3:
        print("usage: onnx_spec.py OP OPSET [DOMAIN]", file=sys.stderr)
        return 2
    op, opset = sys.argv[1], int(sys.argv[2])
    domain = sys.argv[3] if len(sys.argv) > 3 else ""
    try:
        import onnx
        import onnx.defs
        import onnx.helper
    except ImportError:
        print("the Python package onnx is not installed (pip install onnx)", file=sys.stderr)
        return 3
    try:
        s = onnx.defs.get_schema(op, opset, domain)
    except Exception as e:  # unknown op or opset
        print(f"onnx {onnx.__version__} has no schema for {domain or 'ai.onnx'}::{op} at opset {opset}: {e}",
              file=sys.stderr)
        return 4

    def default(a):
        if not a.default_value or a.default_value.type == 0:
            return None
        try:
            v = onnx.helper.get_attribute_value(a.default_value)
        except Exception:
            return None
        if isinstance(v, bytes):
            return v.decode("utf-8", "replace")
        if isinstance(v, (list, tuple)):
            return [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v]
        if isinstance(v, (int, float, str)):
            return v
        return str(v)

    def ports(ps):
        return [{"name": p.name, "type_str": p.type_str,
                 "option": str(p.option).split(".")[-1].lower()} for p in ps]

    out = {
        "op": op,
        "domain": domain,
        "opset": opset,
        "since_version": s.since_version,
        "onnx_version": onnx.__version__,
        "doc": s.doc or "",
        "attributes": [{
            "name": n,
            "type": str(a.type).split(".")[-1].lower(),
            "required": bool(a.required),
            "default": default(a),
        } for n, a in sorted(s.attributes.items())],
        "inputs": ports(s.inputs),
        "outputs": ports(s.outputs),
        "type_constraints": [{"param": t.type_param_str, "allowed": list(t.allowed_type_strs)}
                             for t in s.type_constraints],
    }
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
