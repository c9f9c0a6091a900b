"""Cross-check ir/proto/onnx.proto against the descriptors of the installed `onnx` package.

Every message and field of our schema must exist in onnx's with the same number, type and
label, and every field of onnx's messages must exist in ours (otherwise prost would drop it).
Exit 0 when they agree, 1 with the differences listed otherwise.
"""
import re
import sys
from pathlib import Path

import onnx.onnx_ml_pb2 as pb
from google.protobuf.descriptor import FieldDescriptor as F

TYPES = {
    F.TYPE_STRING: "string", F.TYPE_BYTES: "bytes", F.TYPE_INT64: "int64", F.TYPE_INT32: "int32",
    F.TYPE_FLOAT: "float", F.TYPE_DOUBLE: "double", F.TYPE_UINT64: "uint64",
}


def ours(path):
    fields = {}
    stack = []
    for line in Path(path).read_text().splitlines():
        line = line.split("//")[0].strip()
        m = re.match(r"(message|enum|oneof)\s+(\w+)\s*\{", line)
        if m:
            stack.append((m.group(1), m.group(2)))
            continue
        if line.startswith("}"):
            stack.pop()
            continue
        m = re.match(r"(optional|repeated)?\s*([\w.]+)\s+(\w+)\s*=\s*(\d+)", line)
        if m and stack and stack[-1][0] != "enum":
            msg = ".".join(n for k, n in stack if k == "message")
            label = m.group(1) or "optional"
            fields[(msg, m.group(3))] = (int(m.group(4)), m.group(2).split(".")[-1], label)
    return fields


def theirs():
    fields = {}

    def walk(desc, prefix):
        name = prefix + desc.name
        for f in desc.fields:
            t = TYPES.get(f.type) or (f.message_type.name if f.message_type else f.enum_type.name)
            rep = f.is_repeated if hasattr(f, "is_repeated") else f.label == F.LABEL_REPEATED
            label = "repeated" if rep else "optional"
            fields[(name, f.name)] = (f.number, t, label)
        for n in desc.nested_types:
            if not n.GetOptions().map_entry:
                walk(n, name + ".")

    for d in pb.DESCRIPTOR.message_types_by_name.values():
        walk(d, "")
    return fields


def main():
    a = ours(sys.argv[1] if len(sys.argv) > 1 else "ir/proto/onnx.proto")
    b = theirs()
    bad = []
    for k, v in a.items():
        if k not in b:
            bad.append(f"only in ours: {k} {v}")
        elif b[k] != v:
            bad.append(f"differs: {k} ours={v} onnx={b[k]}")
    for k, v in b.items():
        if k not in a:
            bad.append(f"missing in ours: {k} {v}")
    for line in bad:
        print(line)
    print(f"{len(a)} fields checked, {len(bad)} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
