"""Cross-check mutagraph's textual syntax with onnx.printer / onnx.parser.

Usage: text_compare.py NODE_DIR WORK_DIR

For every NODE_DIR/<test>/model.onnx:
  * writes onnx.printer.to_text(model) to WORK_DIR/python/<test>.txt (when it can print it);
  * parses WORK_DIR/ours/<test>.onnxtxt (mutagraph's text of the model) with
    onnx.parser.parse_model and compares it with the original, both reduced to what the text
    carries (see `canon`).
Prints one JSON object per model: {"test", "printable", "ours": "ok" | "<problem>"}.
"""
import json
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx.parser
import onnx.printer
from onnx import numpy_helper

FLOAT_KINDS = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16,
               onnx.TensorProto.BFLOAT16, onnx.TensorProto.COMPLEX64,
               onnx.TensorProto.COMPLEX128}


def canon_tensor(t):
    """Same values, one storage form: raw bytes of the decoded array, NaNs canonical."""
    t.ClearField("doc_string")
    if t.data_location == onnx.TensorProto.EXTERNAL:
        return
    if t.data_type == onnx.TensorProto.STRING:
        return
    arr = numpy_helper.to_array(t)
    if t.data_type in FLOAT_KINDS and arr.dtype.kind in "fc":
        arr = np.where(np.isnan(arr), np.nan, arr).astype(arr.dtype)
    raw = arr.tobytes()
    for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data",
              "raw_data", "data_location"):
        t.ClearField(f)
    t.raw_data = raw


def canon_attr(a):
    a.ClearField("doc_string")
    A = onnx.AttributeProto
    if a.ref_attr_name:
        return
    # onnx.parser also sets `i` for a float written without a point: keep the declared field.
    keep = {A.FLOAT: "f", A.INT: "i", A.STRING: "s", A.TENSOR: "t", A.GRAPH: "g",
            A.TYPE_PROTO: "tp"}.get(a.type)
    for f in ("f", "i", "s"):
        if f != keep:
            a.ClearField(f)
    if a.type == A.FLOAT:
        a.f = float("nan") if np.isnan(a.f) else a.f
    if a.type == A.FLOATS:
        vals = [float("nan") if np.isnan(v) else v for v in a.floats]
        del a.floats[:]
        a.floats.extend(vals)
    if keep in ("f", "i", "s") and not a.HasField(keep):
        setattr(a, keep, type(getattr(a, keep))())
    if a.HasField("t"):
        if not a.t.name:
            a.t.ClearField("name")
        canon_tensor(a.t)
    for t in a.tensors:
        if not t.name:
            t.ClearField("name")
        canon_tensor(t)
    if a.HasField("g"):
        canon_graph(a.g)
    for g in a.graphs:
        canon_graph(g)


def canon_graph(g):
    g.ClearField("doc_string")
    for v in list(g.input) + list(g.output) + list(g.value_info):
        v.ClearField("doc_string")
    for t in g.initializer:
        canon_tensor(t)
    for n in g.node:
        if n.domain == "":
            n.ClearField("domain")
        n.ClearField("doc_string")
        for a in n.attribute:
            canon_attr(a)


def canon(m):
    for o in m.opset_import:
        o.domain = o.domain
    canon_graph(m.graph)
    return m.SerializeToString(deterministic=True)


def main():
    node_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
    (work / "python").mkdir(parents=True, exist_ok=True)
    for d in sorted(p for p in node_dir.iterdir() if (p / "model.onnx").is_file()):
        orig = onnx.load(str(d / "model.onnx"))
        rec = {"test": d.name, "printable": False, "ours": "ok"}
        try:
            (work / "python" / f"{d.name}.txt").write_text(onnx.printer.to_text(orig))
            rec["printable"] = True
        except Exception as e:  # noqa: BLE001 - report, do not stop
            rec["print_error"] = str(e)[:200]
        ours = work / "ours" / f"{d.name}.onnxtxt"
        try:
            parsed = onnx.parser.parse_model(ours.read_text())
            if canon(parsed) != canon(onnx.load(str(d / "model.onnx"))):
                rec["ours"] = "onnx.parser reads our text as a different model"
        except Exception as e:  # noqa: BLE001
            rec["ours"] = "onnx.parser rejects our text: " + str(e).replace("\n", " ")[:300]
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
