"""Dump ONNX's own shape inference for every model of the Debian ONNX backend test suite.

Usage: dump_onnx_inference.py SUITE_DIR OUT.json

For each model.onnx (path relative to SUITE_DIR), the declared value_info and output types are
dropped, then onnx.shape_inference runs with data propagation. The JSON maps model path to
{value name: type} for every node output of the main graph, types written as mutagraph prints
them ("f32[2,3]", "?" for unknown dims, "[*]" for unknown rank) or null when ONNX found nothing.
"""
import json
import sys
from pathlib import Path

import onnx
from onnx import shape_inference

NAMES = {1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64", 8: "string", 9: "bool",
         10: "f16", 11: "f64", 12: "u32", 13: "u64", 14: "c64", 15: "c128", 16: "bf16",
         17: "f8e4m3fn", 18: "f8e4m3fnuz", 19: "f8e5m2", 20: "f8e5m2fnuz", 21: "u4", 22: "i4",
         23: "f4e2m1", 24: "f8e8m0", 25: "u2", 26: "i2"}


def render(tp):
    if not tp.HasField("tensor_type"):
        return None
    t = tp.tensor_type
    if not t.HasField("elem_type") or t.elem_type == 0:
        return None
    s = NAMES.get(t.elem_type, f"dtype#{t.elem_type}")
    if not t.HasField("shape"):
        return s + "[*]"
    dims = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            dims.append(str(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append("?")
    return s + "[" + ",".join(dims) + "]"


def main():
    root = Path(sys.argv[1])
    out = {}
    for path in sorted(root.rglob("model.onnx")):
        rel = str(path.relative_to(root))
        m = onnx.load(str(path))
        del m.graph.value_info[:]
        for o in m.graph.output:
            o.ClearField("type")
        try:
            inf = shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=True)
        except Exception as e:  # noqa: BLE001 - record and move on
            print(f"{rel}: onnx inference failed: {e}", file=sys.stderr)
            out[rel] = {}
            continue
        types = {}
        for v in list(inf.graph.value_info) + list(inf.graph.output):
            types[v.name] = render(v.type)
        vals = {}
        for n in inf.graph.node:
            for o in n.output:
                if o:
                    vals[o] = types.get(o)
        out[rel] = vals
    Path(sys.argv[2]).write_text(json.dumps(out, indent=0, sort_keys=True))


if __name__ == "__main__":
    main()
