"""Dump facts of ONNX's operator schemas (every version) as JSON, for the registry cross-check,
with ONNX Runtime's `com.microsoft` schemas (its contrib ops, from the onnxruntime package) and
ORT's own default-domain schemas of ops ONNX lacks (SimplifiedLayerNormalization; marked
"ort": true).

Usage: dump_onnx_schemas.py OUT.json
Output: {"domain/op": {"versions": [...], "deprecated": bool, ["ort": true,]
                       "attrs": {name: {"type": kind, "required": bool, "versions": [...]}}}}
"""
import json
import sys
from collections import defaultdict

import onnx.defs

KINDS = {1: "float", 2: "int", 3: "string", 4: "tensor", 5: "graph", 6: "floats", 7: "ints",
         8: "strings", 9: "tensors", 10: "graphs", 11: "sparse_tensor", 12: "sparse_tensors",
         13: "type_proto", 14: "type_protos"}

try:
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_schemas
except ImportError:
    sys.exit("onnxruntime is needed for its contrib-op schemas: pip install onnxruntime==1.31.1")

out = defaultdict(lambda: {"versions": [], "deprecated": False, "attrs": {}})
everything = ort_schemas.get_all_operator_schema()
contrib = [s for s in everything if s.domain == "com.microsoft"]
onnx_names = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""}
ort_default = [s for s in everything if s.domain == "" and s.name not in onnx_names]
for s in ort_default:
    out[f"/{s.name}"]["ort"] = True
for s in list(onnx.defs.get_all_schemas_with_history()) + contrib + ort_default:
    if s.domain not in ("", "ai.onnx.preview.training", "com.microsoft"):
        continue
    e = out[f"{s.domain}/{s.name}"]
    e["versions"].append(s.since_version)
    e["deprecated"] = e["deprecated"] or s.deprecated
    for name, a in s.attributes.items():
        ae = e["attrs"].setdefault(name, {"types": [], "required": False, "versions": []})
        kind = KINDS.get(int(a.type.value if hasattr(a.type, "value") else a.type), str(a.type))
        if kind not in ae["types"]:
            ae["types"].append(kind)
        ae["required"] = ae["required"] or a.required
        ae["versions"].append(s.since_version)
for e in out.values():
    e["versions"].sort()
json.dump(out, open(sys.argv[1], "w"), indent=1, sort_keys=True)
