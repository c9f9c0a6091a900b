"""Generators at the ONNX level: fields set to extremes, hostile dims and element types, unknown
ops, versions, cycles, names, long chains, deep If nesting, tensor data and external data."""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .build import (HOSTILE_DIMS, HOSTILE_INTS, Out, clamp_i64, model_of, raw_vi, ser, set_attr_raw,
                    vi)
from .wire import f_bytes, f_varint


# ---- ONNX level


def is_rep(fd) -> bool:
    r = getattr(fd, "is_repeated", None)
    if r is not None:
        return bool(r)
    return fd.label == fd.LABEL_REPEATED


def g_onnx_field(ctx, rng):
    """Set a random field of a random message of a real model to an extreme value."""
    name, m = ctx.base_model(rng)
    msgs = []

    def walk(msg):
        msgs.append(msg)
        for fd, val in msg.ListFields():
            if fd.type == fd.TYPE_MESSAGE:
                if is_rep(fd):
                    for x in val[:200]:
                        walk(x)
                else:
                    walk(val)
    walk(m)
    msg = rng.choice(msgs)
    fd = rng.choice(msg.DESCRIPTOR.fields)
    what = f"{msg.DESCRIPTOR.name}.{fd.name}"
    try:
        rep = is_rep(fd)
        if fd.type == fd.TYPE_MESSAGE:
            if rep:
                op = rng.choice(["clear", "add-empty", "dup"])
                cont = getattr(msg, fd.name)
                if op == "clear":
                    del cont[:]
                elif op == "add-empty" or not len(cont):
                    cont.add()
                else:
                    cont.add().CopyFrom(cont[rng.randrange(len(cont))])
            else:
                op = rng.choice(["clear", "empty"])
                msg.ClearField(fd.name)
                if op == "empty":
                    getattr(msg, fd.name).SetInParent()
            what += f" {op}"
        else:
            if fd.type in (fd.TYPE_INT64, fd.TYPE_SINT64, fd.TYPE_SFIXED64):
                vals = [clamp_i64(v) for v in HOSTILE_INTS + HOSTILE_DIMS]
            elif fd.type in (fd.TYPE_INT32, fd.TYPE_SINT32, fd.TYPE_SFIXED32, fd.TYPE_ENUM):
                vals = [0, -1, 1, 12345, 2**31 - 1, -(2**31), 17, 23, 999]
            elif fd.type in (fd.TYPE_UINT64, fd.TYPE_FIXED64):
                vals = [0, 2**64 - 1, 2**63, 10**12]
            elif fd.type in (fd.TYPE_UINT32, fd.TYPE_FIXED32):
                vals = [0, 2**32 - 1]
            elif fd.type in (fd.TYPE_FLOAT, fd.TYPE_DOUBLE):
                vals = [float("nan"), float("inf"), -float("inf"), -0.0, 3.4e38, 1e-45]
            elif fd.type == fd.TYPE_BOOL:
                vals = [True, False]
            else:
                vals = ["", "x" * 100000, "\x00", "é", "../../etc/passwd", "/dev/zero",
                        " ", "a b", "ai.onnx.ml", "com.microsoft", "\u202e", "%s%n"]
                if fd.type == fd.TYPE_BYTES:
                    vals = [v.encode() for v in vals] + [b"\xff\xfe", os.urandom(3)]
            v = rng.choice(vals)
            if rep:
                cont = getattr(msg, fd.name)
                op = rng.choice(["append", "clear", "set"])
                if op == "clear":
                    del cont[:]
                elif op == "set" and len(cont):
                    cont[rng.randrange(len(cont))] = v
                else:
                    cont.append(v)
                what += f" {op} {v!r:.40}"
            else:
                setattr(msg, fd.name, v)
                what += f" = {v!r:.40}"
        return Out("onnx-field", f"{name} {what}", ser(m))
    except Exception as e:  # closed enums etc.
        return Out("onnx-field", f"{name} {what} (failed: {type(e).__name__})", ser(m))


def g_huge_dims(ctx, rng):
    d = [rng.choice(HOSTILE_DIMS) for _ in range(rng.randrange(1, 5))]
    elem = rng.choice([TensorProto.FLOAT, TensorProto.INT64, TensorProto.DOUBLE, TensorProto.UINT8])
    op = rng.choice(["Relu", "Identity", "Neg", "Abs"]) if elem != TensorProto.UINT8 else "Identity"
    where = rng.choice(["input", "output", "both", "value_info", "rank-1000"])
    if where == "rank-1000":
        d = [1] * rng.choice([1000, 100000])
    x = raw_vi("x", elem, d if where != "output" else [1, 4])
    y = raw_vi("y", elem, d if where in ("output", "both", "rank-1000") else [1, 4])
    if where == "output":
        x = raw_vi("x", elem, [1, 4])
    nodes = [helper.make_node(op, ["x"], ["t"]), helper.make_node("Identity", ["t"], ["y"])]
    vis = [raw_vi("t", elem, d)] if where == "value_info" else []
    m = model_of(nodes, [x], [y], value_info=vis)
    return Out("huge-dims", f"{where} dims {d[:6]}", ser(m))


def g_real_huge_dims(ctx, rng):
    """Declared input dims of a real model set to hostile sizes: whatever inference, solving or
    checking walks per element or per window shows up as a hang."""
    name, m = ctx.base_model(rng)
    changed = []
    for v in m.graph.input:
        if not v.type.HasField("tensor_type") or not v.type.tensor_type.HasField("shape"):
            continue
        for j, d in enumerate(v.type.tensor_type.shape.dim):
            if rng.random() < 0.5:
                nd = rng.choice(HOSTILE_DIMS + [2**31, 2**34, 10**9])
                d.dim_value = clamp_i64(nd)
                changed.append(f"{v.name}[{j}]={nd}")
    if rng.random() < 0.3:  # the outputs too: they disagree with inference now
        for v in m.graph.output:
            for d in v.type.tensor_type.shape.dim:
                d.dim_value = clamp_i64(rng.choice(HOSTILE_DIMS))
    return Out("real-huge-dims", f"{name} {' '.join(changed)[:200]}", ser(m))


def g_bad_elem_type(ctx, rng):
    et = rng.choice([0, 12345, -1, 17, 18, 19, 20, 21, 22, 23, 24, 25, 8, 14, 15, 2**31 - 1])
    where = rng.choice(["input", "initializer", "cast-to", "constant"])
    if where == "input":
        m = model_of([helper.make_node("Identity", ["x"], ["y"])], [raw_vi("x", et, [1, 4])],
                     [raw_vi("y", et, [1, 4])])
    elif where == "initializer":
        t = TensorProto()
        t.name = "w"
        t.data_type = et
        t.dims.extend([2, 2])
        t.raw_data = bytes(16)
        m = model_of([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", shape=[2, 2])],
                     [vi("y", shape=[2, 2])], [t])
    elif where == "cast-to":
        n = helper.make_node("Cast", ["x"], ["y"])
        set_attr_raw(n, "to", et)
        m = model_of([n], [vi("x")], [raw_vi("y", et, [1, 4])])
    else:
        t = TensorProto()
        t.data_type = et
        t.dims.extend([4])
        t.raw_data = bytes(4)
        n = helper.make_node("Constant", [], ["y"], value=t)
        m = model_of([n], [], [raw_vi("y", et, [4])])
    return Out("bad-elem-type", f"{where} elem_type {et}", ser(m))


def g_unknown_op(ctx, rng):
    op = rng.choice(["FooBar", "", "relu", "Relu ", "If", "Loop", "Scan", "Custom_" + "x" * 300,
                     "Conv\x00", "Softmax"])
    dom = rng.choice(["", "", "ai.onnx", "com.microsoft", "unknown.domain", "ai.onnx.ml"])
    nodes = [helper.make_node(op, ["x"], ["y"], domain=dom)]
    m = model_of(nodes, [vi("x")], [vi("y")])
    if dom not in ("", "ai.onnx") and rng.random() < 0.5:
        m.opset_import.append(helper.make_opsetid(dom, rng.choice([1, 0, 9999])))
    return Out("unknown-op", f"op {op!r:.30} domain {dom!r}", ser(m))


def g_bad_version(ctx, rng):
    name, m = ctx.base_model(rng)
    what = rng.choice(["ir", "opset", "no-opset", "dup-opset", "ir-opset"])
    if what in ("ir", "ir-opset"):
        m.ir_version = clamp_i64(rng.choice([999, 0, -1, 1, 2, 2**62, 2**63 - 1, 11, 12]))
    if what in ("opset", "ir-opset"):
        v = rng.choice([0, 9999, -1, 1, 2**62, 5, 6, 22, 23, 24, 25, 30])
        if m.opset_import:
            m.opset_import[0].version = clamp_i64(v)
    if what == "no-opset":
        del m.opset_import[:]
    if what == "dup-opset":
        m.opset_import.append(helper.make_opsetid("", rng.choice([1, 9999, 13])))
    return Out("bad-version", f"{name} {what} ir={m.ir_version} "
               f"opsets={[(o.domain, o.version) for o in m.opset_import]}", ser(m))


def g_graph_cycle(ctx, rng):
    kind = rng.choice(["two", "self", "long", "through-output", "in-base"])
    if kind == "in-base":
        name, m = ctx.base_model(rng)
        g = m.graph
        if len(g.node) >= 2 and g.node[0].input and g.node[-1].output:
            g.node[0].input[0] = g.node[-1].output[0]
            return Out("graph-cycle", f"{name} first node reads the last node's output", ser(m))
        kind = "two"
    if kind == "self":
        nodes = [helper.make_node("Add", ["x", "a"], ["a"]), helper.make_node("Identity", ["a"], ["y"])]
    elif kind == "two":
        nodes = [helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                 helper.make_node("Identity", ["b"], ["y"])]
    elif kind == "through-output":
        nodes = [helper.make_node("Add", ["x", "y"], ["y"])]
    else:
        n = 1000
        nodes = [helper.make_node("Add", ["x", f"v{n - 1}"], ["v0"])]
        nodes += [helper.make_node("Relu", [f"v{i - 1}"], [f"v{i}"]) for i in range(1, n)]
        nodes.append(helper.make_node("Identity", [f"v{n - 1}"], ["y"]))
    return Out("graph-cycle", kind, ser(model_of(nodes, [vi("x")], [vi("y")])))


def g_duplicate_names(ctx, rng):
    kind = rng.choice(["two-producers", "output-twice", "input-is-output", "init-shadows-input",
                       "dup-input", "dup-init", "node-output-twice", "dup-node-names"])
    inputs, outputs, inits = [vi("x")], [vi("y")], []
    if kind == "two-producers":
        nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])]
    elif kind == "output-twice":
        nodes = [helper.make_node("Relu", ["x"], ["y"])]
        outputs = [vi("y"), vi("y")]
    elif kind == "input-is-output":
        nodes = [helper.make_node("Relu", ["x"], ["x"])]
        outputs = [vi("x")]
    elif kind == "init-shadows-input":
        nodes = [helper.make_node("Relu", ["x"], ["y"])]
        inits = [numpy_helper.from_array(np.ones((2, 3), np.float32), "x")]
    elif kind == "dup-input":
        nodes = [helper.make_node("Add", ["x", "x"], ["y"])]
        inputs = [vi("x"), vi("x", TensorProto.INT64, [7])]
    elif kind == "dup-init":
        nodes = [helper.make_node("Add", ["x", "w"], ["y"])]
        inits = [numpy_helper.from_array(np.ones((1, 4), np.float32), "w"),
                 numpy_helper.from_array(np.ones((3,), np.int64), "w")]
    elif kind == "node-output-twice":
        nodes = [helper.make_node("Split", ["x"], ["y", "y"], axis=1, num_outputs=2)]
        return Out("duplicate-names", kind, ser(model_of(nodes, inputs, outputs, opset=18)))
    else:
        nodes = [helper.make_node("Relu", ["x"], ["t"], name="n"),
                 helper.make_node("Relu", ["t"], ["y"], name="n")]
    return Out("duplicate-names", kind, ser(model_of(nodes, inputs, outputs, inits)))


def g_undefined_input(ctx, rng):
    kind = rng.choice(["node-input", "graph-output", "in-base", "subgraph-capture", "optional-empty"])
    if kind == "in-base":
        name, m = ctx.base_model(rng)
        if m.graph.node:
            n = rng.choice(m.graph.node)
            if n.input:
                n.input[rng.randrange(len(n.input))] = "nobody_defines_this"
            else:
                n.input.append("nobody_defines_this")
        return Out("undefined-input", f"{name} node input undefined", ser(m))
    if kind == "node-input":
        nodes = [helper.make_node("Add", ["x", "ghost"], ["y"])]
    elif kind == "graph-output":
        nodes = [helper.make_node("Relu", ["x"], ["t"])]
        return Out("undefined-input", kind, ser(model_of(nodes, [vi("x")], [vi("ghost")])))
    elif kind == "subgraph-capture":
        then_g = helper.make_graph([helper.make_node("Identity", ["ghost"], ["o"])], "then", [], [vi("o")])
        else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["o2"])], "else", [], [vi("o2")])
        nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
        return Out("undefined-input", kind, ser(model_of(
            nodes, [vi("x"), vi("c", TensorProto.BOOL, [])], [vi("y")])))
    else:
        nodes = [helper.make_node("Relu", [""], ["y"])]
    return Out("undefined-input", kind, ser(model_of(nodes, [vi("x")], [vi("y")])))


def g_empty_names(ctx, rng):
    kind = rng.choice(["output", "input", "graph-input", "all", "in-base"])
    if kind == "in-base":
        name, m = ctx.base_model(rng)
        for n in m.graph.node:
            if rng.random() < 0.3 and n.output:
                n.output[0] = ""
        return Out("empty-names", f"{name} some node outputs empty", ser(m))
    if kind == "output":
        m = model_of([helper.make_node("Relu", ["x"], [""]), helper.make_node("Neg", [""], ["y"])],
                     [vi("x")], [vi("y")])
    elif kind == "input":
        m = model_of([helper.make_node("Relu", [""], ["y"])], [vi("")], [vi("y")])
    elif kind == "graph-input":
        m = model_of([helper.make_node("Relu", ["x"], ["y"])], [vi(""), vi("x")], [vi("")])
    else:
        m = model_of([helper.make_node("Relu", [""], [""])], [vi("")], [vi("")], name="")
    return Out("empty-names", kind, ser(m))


def g_long_names(ctx, rng):
    n = rng.choice([10000, 1 << 20, 4 << 20])
    long = rng.choice(["x", "é", "\u202e", "a/b", "\n"]) * n
    where = rng.choice(["value", "node", "graph", "op", "domain", "doc", "attr"])
    x = long if where == "value" else "x"
    node = helper.make_node("Relu", [x], ["y"])
    if where == "node":
        node.name = long
    if where == "op":
        node.op_type = long
    if where == "domain":
        node.domain = long
    if where == "doc":
        node.doc_string = long
    if where == "attr":
        set_attr_raw(node, long, 1)
    m = model_of([node], [vi(x)], [vi("y")], name=long if where == "graph" else "g")
    return Out("long-names", f"{where} name of {len(long.encode())} bytes", ser(m))


def chain_model(n: int, op: str) -> onnx.ModelProto:
    nodes = []
    prev = "x"
    for i in range(n):
        cur = f"v{i}" if i < n - 1 else "y"
        nodes.append(onnx.NodeProto(op_type=op, input=[prev], output=[cur]))
        prev = cur
    return model_of(nodes, [vi("x")], [vi("y")])


def g_chain(ctx, rng):
    n = rng.choice([10000, 100000])
    op = rng.choice(["Relu", "Identity", "Neg"])
    return Out("chain", f"{n} {op} nodes", ser(chain_model(n, op)))


def g_chain_100k(ctx, rng):
    return Out("chain-100k", "100000 Relu nodes", ser(chain_model(100000, "Relu")))


def deep_if_bytes(depth: int) -> bytes:
    """If inside If `depth` deep (then-branch nests, else-branch is an Identity), built as
    wire bytes inside out: the onnx package's serializer recurses."""
    fvi = lambda nm: f_bytes(1, nm) + f_bytes(2, f_bytes(1, f_varint(1, 1) + f_bytes(2, f_bytes(1, f_varint(1, 4)))))
    leaf = f_bytes(1, f_bytes(1, "x") + f_bytes(2, "o") + f_bytes(4, "Identity")) + f_bytes(2, "leaf") + f_bytes(12, fvi("o"))
    else_g = f_bytes(1, f_bytes(1, "x") + f_bytes(2, "o") + f_bytes(4, "Identity")) + f_bytes(2, "else") + f_bytes(12, fvi("o"))
    inner = leaf
    for i in range(depth):
        node = (f_bytes(1, "c") + f_bytes(2, "o") + f_bytes(4, "If")
                + f_bytes(5, f_bytes(1, "then_branch") + f_varint(20, 5) + f_bytes(6, inner))
                + f_bytes(5, f_bytes(1, "else_branch") + f_varint(20, 5) + f_bytes(6, else_g)))
        inner = f_bytes(1, node) + f_bytes(2, f"g{i}") + f_bytes(12, fvi("o"))
    cond = f_bytes(1, "c") + f_bytes(2, f_bytes(1, f_varint(1, 9) + f_bytes(2, b"")))
    # the top graph: inputs c, x; output o
    top = inner + f_bytes(11, cond) + f_bytes(11, fvi("x"))
    return f_varint(1, 8) + f_bytes(8, f_varint(2, 17)) + f_bytes(7, top)


def g_deep_if(ctx, rng):
    depth = rng.choice([10, 100, 1000])
    return Out("deep-if", f"If nested {depth} deep", deep_if_bytes(depth))


def g_deep_if_10k(ctx, rng):
    return Out("deep-if-10k", "If nested 10000 deep", deep_if_bytes(10000))


def g_raw_data_mismatch(ctx, rng):
    dims = rng.choice([[2, 3], [4], [1, 4], [], [0], [3, 0, 2]])
    et = rng.choice([TensorProto.FLOAT, TensorProto.INT64, TensorProto.DOUBLE, TensorProto.FLOAT16,
                     TensorProto.BOOL, TensorProto.INT4, TensorProto.STRING])
    n = int(np.prod(dims)) if dims else 1
    t = TensorProto()
    t.name = "w"
    t.data_type = et
    t.dims.extend(dims)
    how = rng.choice(["short", "long", "empty", "odd", "typed-field-wrong-count", "both"])
    if how == "short":
        t.raw_data = bytes(max(0, n * 4 - 3))
    elif how == "long":
        t.raw_data = bytes(n * 8 + 1000)
    elif how == "empty":
        t.raw_data = b""
    elif how == "odd":
        t.raw_data = b"\x01" * 7
    elif how == "typed-field-wrong-count":
        t.float_data.extend([1.0] * (n + 3))
        t.int64_data.extend([1] * max(0, n - 1))
    else:
        t.raw_data = bytes(n * 4)
        t.float_data.extend([1.0] * n)
    use = rng.choice(["initializer", "constant"])
    if use == "constant":
        t.ClearField("name")
        m = model_of([helper.make_node("Constant", [], ["y"], value=t)], [], [raw_vi("y", et, dims)])
    else:
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [raw_vi("y", et, dims)], [t])
    return Out("raw-data-mismatch", f"{use} {TensorProto.DataType.Name(et) if et in TensorProto.DataType.values() else et} dims {dims} {how}", ser(m))


def g_dims_overflow(ctx, rng):
    dims = rng.choice([[2**40, 2**40, 2**40], [2**32, 2**32], [2**63 - 1, 2], [2**62, 4],
                       [-1, -1], [-(2**63), 1], [10**12, 10**12], [1] * 10 + [2**31] * 3,
                       [65536, 65536, 65536, 65536], [0, 2**63 - 1, 2**63 - 1]])
    t = TensorProto()
    t.name = "w"
    t.data_type = rng.choice([TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.STRING])
    t.dims.extend(clamp_i64(d) for d in dims)
    data = rng.choice(["none", "raw-small", "float-data"])
    if data == "raw-small":
        t.raw_data = bytes(16)
    elif data == "float-data":
        t.float_data.extend([1.0, 2.0])
    use = rng.choice(["initializer", "constant", "sparse"])
    if use == "constant":
        t.ClearField("name")
        m = model_of([helper.make_node("Constant", [], ["y"], value=t)], [], [vi("y", t.data_type, None)])
    elif use == "sparse":
        vals = numpy_helper.from_array(np.ones(2, np.float32), "w")
        idx = numpy_helper.from_array(np.array([0, 2**62], np.int64), "")
        sp = helper.make_sparse_tensor(vals, idx, [clamp_i64(d) for d in dims])
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", TensorProto.FLOAT, None)])
        m.graph.sparse_initializer.append(sp)
    else:
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", t.data_type, None)], [t])
    return Out("dims-overflow", f"{use} dims {dims} data {data}", ser(m))


def g_external_data(ctx, rng):
    loc = rng.choice(["missing.bin", "/dev/zero", "/dev/urandom", "../../etc/passwd", "/etc/passwd",
                      "side/ok.bin", "side/ok.bin", "side", "", "/", "/proc/self/mem",
                      "side/../../../../../etc/shadow", "\x00", "side/ok.bin\x00.x", "C:\\x.bin",
                      "/dev/stdin", "/proc/self/fd/0"])
    offset = rng.choice([None, 0, 4, -1, 2**62, 2**63 - 1, 10**12, 3])
    length = rng.choice([None, 16, 0, -1, 2**62, 10**12, 2**31, 15, 1 << 33])
    dims = rng.choice([[2, 2], [4], [2**20, 1024], [10**12]])
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL if rng.random() < 0.9 else TensorProto.DEFAULT
    for k, v in (("location", loc), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key = k
            e.value = str(v)
    if rng.random() < 0.1:
        e = t.external_data.add()
        e.key = rng.choice(["location", "checksum", "unknown_key", ""])
        e.value = rng.choice(["other.bin", "x" * 5000, ""])
    if rng.random() < 0.1:
        t.raw_data = bytes(16)
    m = model_of([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", shape=[2, 2])],
                 [vi("y", shape=[2, 2])], [t])
    side = {"side/ok.bin": bytes(64)}
    return Out("external-data", f"location {loc!r} offset {offset} length {length} dims {dims}",
               ser(m), side=side)
