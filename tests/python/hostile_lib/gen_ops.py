"""Generators at the ONNX level, of ops and their parts: hostile attributes, allocation bombs,
model-local functions, odd types, broken subgraphs; unmodified models and swapped extensions."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from .build import HOSTILE_INTS, Out, f32_init, i64_init, model_of, ser, set_attr_raw, vi
from .gen_bytes import deep_nest_bytes


CONV_LIKE = {
    "Conv": ([1, 3, 8, 8], [("W", [4, 3, 3, 3])], ["kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"]),
    "ConvTranspose": ([1, 3, 8, 8], [("W", [3, 4, 3, 3])], ["kernel_shape", "strides", "pads", "dilations", "group", "output_padding", "output_shape", "auto_pad"]),
    "MaxPool": ([1, 3, 8, 8], [], ["kernel_shape", "strides", "pads", "dilations", "ceil_mode", "storage_order", "auto_pad"]),
    "AveragePool": ([1, 3, 8, 8], [], ["kernel_shape", "strides", "pads", "ceil_mode", "count_include_pad", "auto_pad"]),
    "LpPool": ([1, 3, 8, 8], [], ["kernel_shape", "strides", "pads", "p"]),
}
AXIS_OPS = {
    "Softmax": "axis", "LogSoftmax": "axis", "Flatten": "axis", "Concat": "axis", "Gather": "axis",
    "ArgMax": "axis", "ArgMin": "axis", "Hardmax": "axis", "LpNormalization": "axis",
    "CumSum": None, "Split": "axis", "DepthToSpace": "blocksize", "SpaceToDepth": "blocksize",
    "LRN": "size", "Cast": "to", "Transpose": "perm", "ReduceSum": "axes", "ReduceMean": "axes",
    "Squeeze": "axes", "Unsqueeze": "axes", "GatherElements": "axis", "TopK": "axis",
    "OneHot": "axis", "Compress": "axis", "ReverseSequence": "batch_axis", "Trilu": "upper",
    "Gemm": "transA", "LayerNormalization": "axis", "InstanceNormalization": "epsilon",
    "Einsum": "equation", "MatMul": None,
}


def hostile_list(rng, maxlen=5):
    return [rng.choice(HOSTILE_INTS) for _ in range(rng.randrange(0, maxlen))]


def g_bad_attrs(ctx, rng):
    op = rng.choice(list(CONV_LIKE) * 3 + list(AXIS_OPS))
    opset = rng.choice([11, 13, 17, 18])
    inits = []
    if op in CONV_LIKE:
        xs, ws, names = CONV_LIKE[op]
        node = helper.make_node(op, ["x"] + [w for w, _ in ws], ["y"])
        inits = [f32_init(w, s, np.random.default_rng(rng.randrange(1 << 30))) for w, s in ws]
        chosen = rng.sample(names, rng.randrange(1, len(names) + 1))
        for a in chosen:
            if a == "auto_pad":
                set_attr_raw(node, a, rng.choice(["NOTSET", "SAME_UPPER", "VALID", "GARBAGE", ""]))
            elif a in ("group", "ceil_mode", "storage_order", "count_include_pad", "p"):
                set_attr_raw(node, a, rng.choice(HOSTILE_INTS))
            else:
                set_attr_raw(node, a, hostile_list(rng, 9))
        desc = ", ".join(f"{a.name}={helper.get_attribute_value(a)!r:.60}" for a in node.attribute)
        m = model_of([node], [vi("x", shape=xs)], [vi("y", shape=None)], inits, opset=opset)
        return Out("bad-attrs", f"{op} {desc}", ser(m))
    attr = AXIS_OPS[op]
    ins = ["x"]
    x_shape = [2, 3, 4, 4]
    if op in ("Concat",):
        ins = ["x", "x"]
    if op in ("Gather", "GatherElements"):
        inits.append(i64_init("i", [[rng.choice(HOSTILE_INTS)]] if op == "GatherElements" else [rng.choice(HOSTILE_INTS)]))
        ins = ["x", "i"]
    if op == "CumSum":
        inits.append(i64_init("ax", rng.choice(HOSTILE_INTS)))
        ins = ["x", "ax"]
    if op == "TopK":
        inits.append(i64_init("k", [rng.choice(HOSTILE_INTS)]))
        ins = ["x", "k"]
    if op == "OneHot":
        inits += [i64_init("d", [rng.choice(HOSTILE_INTS)]), i64_init("v", [0, 1])]
        ins = ["i", "d", "v"]
        inits.append(i64_init("i", [1, 2]))
    if op == "Compress":
        inits.append(numpy_helper.from_array(np.array([True, False]), "c"))
        ins = ["x", "c"]
    if op == "ReverseSequence":
        inits.append(i64_init("s", [rng.choice(HOSTILE_INTS)] * 4))
        ins = ["x", "s"]
    if op == "Trilu":
        inits.append(i64_init("k", rng.choice(HOSTILE_INTS)))
        ins = ["x", "k"]
    if op in ("Gemm", "MatMul"):
        x_shape = [4, 4]
        inits.append(f32_init("b", [4, 4], np.random.default_rng(1)))
        ins = ["x", "b"]
    if op == "LayerNormalization":
        inits.append(f32_init("s", [4], np.random.default_rng(1)))
        ins = ["x", "s"]
    if op == "InstanceNormalization":
        inits += [f32_init("s", [3], np.random.default_rng(1)), f32_init("bb", [3], np.random.default_rng(2))]
        ins = ["x", "s", "bb"]
    if op in ("Squeeze", "Unsqueeze", "ReduceSum", "ReduceMean") and opset >= 13 and rng.random() < 0.7:
        inits.append(i64_init("axes", hostile_list(rng, 4)))
        ins = ["x", "axes"]
        attr = None
    if op == "Split" and opset >= 13:
        inits.append(i64_init("sp", hostile_list(rng, 4)))
        ins = ["x", "sp"]
    outs = ["y", "y2"] if op in ("TopK",) else ["y"]
    node = helper.make_node(op, ins, outs)
    if attr in ("perm", "axes"):
        set_attr_raw(node, attr, hostile_list(rng, 6))
    elif attr == "equation":
        set_attr_raw(node, attr, rng.choice(["", "->", "a" * 100 + "->", "ij,jk", "...,...->...",
                                             "i,i,i->", "ab->ba" * 50, "\xff"]))
    elif attr == "epsilon":
        set_attr_raw(node, attr, rng.choice([float("nan"), -1.0, float("inf"), 0.0]))
    elif attr is not None:
        set_attr_raw(node, attr, rng.choice(HOSTILE_INTS))
    if rng.random() < 0.2:  # type confusion: the attribute has a value of another type
        a = node.attribute.add()
        a.name = rng.choice(["axis", "perm", "to", "kernel_shape", "then_branch"])
        a.type = rng.choice([AttributeProto.GRAPH, AttributeProto.FLOATS, AttributeProto.STRING,
                             AttributeProto.TENSOR, AttributeProto.UNDEFINED])
        a.i = 3
    if rng.random() < 0.1:  # duplicate attribute names
        node.attribute.extend(list(node.attribute))
    desc = ", ".join(f"{a.name}={a.i if a.type == AttributeProto.INT else list(a.ints)[:6] if a.type == AttributeProto.INTS else a.type}" for a in node.attribute)
    m = model_of([node], [vi("x", shape=x_shape)], [vi(o, shape=None) for o in outs], inits, opset=opset)
    return Out("bad-attrs", f"{op} opset {opset} {desc} inits {[i.name for i in inits]}", ser(m))


def g_alloc_bomb(ctx, rng):
    """Small models whose run would allocate absurd amounts of memory."""
    kind = rng.choice(["ConstantOfShape", "Expand", "Tile", "Range", "Resize", "Pad", "Reshape",
                       "MatMul-declared", "Upsample", "Conv-dilated", "OneHot", "Loop-trip"])
    big = rng.choice([10**5, 10**6, 10**9, 2**31, 2**40])
    x = [vi("x", shape=[1, 4])]
    y = [vi("y", shape=None)]
    if kind == "ConstantOfShape":
        nodes = [helper.make_node("ConstantOfShape", ["s"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, [], y, [i64_init("s", [big, big])])))
    if kind == "Expand":
        nodes = [helper.make_node("Expand", ["x", "s"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [i64_init("s", [big, 4])])))
    if kind == "Tile":
        nodes = [helper.make_node("Tile", ["x", "r"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [i64_init("r", [big, big])])))
    if kind == "Range":
        nodes = [helper.make_node("Range", ["a", "b", "d"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, [], y, [
            numpy_helper.from_array(np.array(0, np.int64), "a"),
            numpy_helper.from_array(np.array(min(big * big, 2**63 - 1), np.int64), "b"),
            numpy_helper.from_array(np.array(1, np.int64), "d")])))
    if kind == "Resize":
        nodes = [helper.make_node("Resize", ["x", "", "sc"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [
            numpy_helper.from_array(np.array([1, float(big)], np.float32), "sc")])))
    if kind == "Upsample":
        nodes = [helper.make_node("Upsample", ["x", "sc"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [
            numpy_helper.from_array(np.array([float(big), float(big)], np.float32), "sc")], opset=9)))
    if kind == "Pad":
        nodes = [helper.make_node("Pad", ["x", "p"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [i64_init("p", [big, big, 0, big])])))
    if kind == "Reshape":
        nodes = [helper.make_node("Reshape", ["x", "s"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [i64_init("s", [big, -1, 0])])))
    if kind == "MatMul-declared":
        d = min(big, 10**6)
        nodes = [helper.make_node("MatMul", ["a", "b"], ["y"])]
        return Out("alloc-bomb", f"{kind} {d}", ser(model_of(
            nodes, [vi("a", shape=[d, d]), vi("b", shape=[d, d])], y)))
    if kind == "Conv-dilated":
        nodes = [helper.make_node("Conv", ["x4", "w"], ["y"], dilations=[big, big], pads=[big] * 4)]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(
            nodes, [vi("x4", shape=[1, 1, 4, 4])], y, [f32_init("w", [1, 1, 2, 2], np.random.default_rng(0))])))
    if kind == "OneHot":
        nodes = [helper.make_node("OneHot", ["i", "d", "v"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, [], y, [
            i64_init("i", [1, 2, 3]), i64_init("d", [big]), numpy_helper.from_array(np.array([0, 1], np.float32), "v")])))
    # Loop with a huge trip count that concatenates a scan output
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Identity", ["xo"], ["scan"])],
        "body", [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []), vi("xo", shape=[1, 4])],
        [vi("c_out", TensorProto.BOOL, []), vi("xo2", shape=[1, 4]), vi("scan", shape=[1, 4])])
    body.node.append(helper.make_node("Identity", ["xo"], ["xo2"]))
    nodes = [helper.make_node("Loop", ["M", "cond", "x"], ["xf", "y"], body=body)]
    return Out("alloc-bomb", f"Loop trip {big}", ser(model_of(nodes, x, [vi("xf", shape=[1, 4]), vi("y", shape=None)], [
        i64_init("M", big), numpy_helper.from_array(np.array(True), "cond")])))


def g_functions(ctx, rng):
    """Model-local functions: self-recursive, mutually recursive, shadowing ops, bad bodies."""
    kind = rng.choice(["self", "mutual", "shadow-op", "missing-body", "arity", "dup"])
    dom = "local"
    if kind == "self":
        fns = [helper.make_function(dom, "F", ["a"], ["b"], [helper.make_node("F", ["a"], ["b"], domain=dom)],
                                    [helper.make_opsetid("", 17), helper.make_opsetid(dom, 1)])]
    elif kind == "mutual":
        fns = [helper.make_function(dom, "F", ["a"], ["b"], [helper.make_node("G", ["a"], ["b"], domain=dom)],
                                    [helper.make_opsetid("", 17), helper.make_opsetid(dom, 1)]),
               helper.make_function(dom, "G", ["a"], ["b"], [helper.make_node("F", ["a"], ["b"], domain=dom)],
                                    [helper.make_opsetid("", 17), helper.make_opsetid(dom, 1)])]
    elif kind == "shadow-op":
        dom = ""
        fns = [helper.make_function("", "Relu", ["a"], ["b"], [helper.make_node("Neg", ["a"], ["b"])],
                                    [helper.make_opsetid("", 17)])]
    elif kind == "missing-body":
        fns = [helper.make_function(dom, "F", ["a"], ["b"], [], [helper.make_opsetid("", 17)])]
    elif kind == "arity":
        fns = [helper.make_function(dom, "F", ["a", "a2", "a3"], ["b", "b2"],
                                    [helper.make_node("Relu", ["a"], ["b"])], [helper.make_opsetid("", 17)])]
    else:
        f = helper.make_function(dom, "F", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                                 [helper.make_opsetid("", 17)])
        fns = [f, f]
    op = "Relu" if kind == "shadow-op" else "F"
    node = helper.make_node(op, ["x"], ["y"], domain=dom)
    m = model_of([node], [vi("x")], [vi("y")])
    if dom:
        m.opset_import.append(helper.make_opsetid(dom, 1))
    m.functions.extend(fns)
    return Out("functions", kind, ser(m))


def g_weird_types(ctx, rng):
    kind = rng.choice(["sequence", "map", "optional", "sparse", "string", "no-type", "no-shape",
                       "sparse-bad-indices", "training-info", "nested-seq"])
    if kind == "sequence":
        t = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
        inp = helper.make_value_info("x", t)
        m = model_of([helper.make_node("SequenceLength", ["x"], ["y"])], [inp], [vi("y", TensorProto.INT64, [])])
    elif kind == "nested-seq":
        d = rng.choice([5, 50, 500])
        return Out("weird-types", f"{kind} depth {d}", deep_nest_bytes(d, "type-seq"))
    elif kind == "map":
        t = helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
        m = model_of([helper.make_node("Identity", ["x"], ["y"])], [helper.make_value_info("x", t)],
                     [helper.make_value_info("y", t)])
    elif kind == "optional":
        t = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
        m = model_of([helper.make_node("OptionalGetElement", ["x"], ["y"])], [helper.make_value_info("x", t)],
                     [vi("y", shape=[2])], opset=18)
    elif kind in ("sparse", "sparse-bad-indices"):
        vals = numpy_helper.from_array(np.ones(3, np.float32), "w")
        idx = [0, 1, 2] if kind == "sparse" else rng.choice([[5, 5, 5], [-1, 0, 1], [2**62, 0, 1], [0, 1]])
        sp = helper.make_sparse_tensor(vals, numpy_helper.from_array(np.array(idx, np.int64), ""), [4])
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", shape=[4])])
        m.graph.sparse_initializer.append(sp)
    elif kind == "string":
        t = helper.make_tensor("w", TensorProto.STRING, [2], [b"a" * 100000, b"\xff\x00"])
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", TensorProto.STRING, [2])], [t])
    elif kind == "no-type":
        v = onnx.ValueInfoProto(name="x")
        m = model_of([helper.make_node("Relu", ["x"], ["y"])], [v], [onnx.ValueInfoProto(name="y")])
    elif kind == "no-shape":
        m = model_of([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape=None)], [vi("y", shape=None)])
    else:
        name, m = ctx.base_model(rng)
        ti = m.training_info.add()
        ti.algorithm.CopyFrom(m.graph)
        ti.update_binding.add(key="ghost", value="nothing")
        return Out("weird-types", f"{name} {kind}", ser(m))
    return Out("weird-types", kind, ser(m))


def g_subgraph_mess(ctx, rng):
    kind = rng.choice(["if-no-branches", "if-int-branch", "loop-bad-arity", "scan-no-body",
                       "branch-wrong-outputs", "graphs-attr", "branch-shadows-outer"])
    c = vi("c", TensorProto.BOOL, [])
    x = vi("x")
    if kind == "if-no-branches":
        nodes = [helper.make_node("If", ["c"], ["y"])]
    elif kind == "if-int-branch":
        nodes = [helper.make_node("If", ["c"], ["y"], then_branch=3, else_branch=[1, 2])]
    elif kind == "loop-bad-arity":
        body = helper.make_graph([helper.make_node("Relu", ["x"], ["o"])], "b", [], [vi("o")])
        nodes = [helper.make_node("Loop", ["", "c", "x"], ["y"], body=body)]
    elif kind == "scan-no-body":
        nodes = [helper.make_node("Scan", ["x"], ["y"], num_scan_inputs=1)]
    elif kind == "branch-wrong-outputs":
        g1 = helper.make_graph([helper.make_node("Relu", ["x"], ["o"])], "t", [], [vi("o")])
        g2 = helper.make_graph([helper.make_node("Split", ["x"], ["o1", "o2"], axis=1, num_outputs=2)],
                               "e", [], [vi("o1"), vi("o2", TensorProto.INT64, [99])])
        nodes = [helper.make_node("If", ["c"], ["y"], then_branch=g1, else_branch=g2)]
    elif kind == "graphs-attr":
        g1 = helper.make_graph([helper.make_node("Relu", ["x"], ["o"])], "t", [], [vi("o")])
        n = helper.make_node("If", ["c"], ["y"])
        a = n.attribute.add()
        a.name = "then_branch"
        a.type = AttributeProto.GRAPHS
        a.graphs.extend([g1, g1])
        nodes = [n]
    else:
        g1 = helper.make_graph([helper.make_node("Relu", ["x"], ["x"])], "t", [vi("x")], [vi("x")])
        nodes = [helper.make_node("If", ["c"], ["y"], then_branch=g1, else_branch=g1)]
    return Out("subgraph-mess", kind, ser(model_of(nodes, [c, x], [vi("y")], opset=18)))


def g_valid(ctx, rng):
    name, data = ctx.base(rng)
    return Out("valid", name, data)


def g_ext_swap(ctx, rng):
    """Protobuf named .onnxtxt, text named .onnx."""
    if rng.random() < 0.5:
        name, data = ctx.base(rng)
        return Out("ext-swap", f"{name} protobuf as .onnxtxt", data, ext=".onnxtxt")
    name, text = rng.choice(ctx.texts)
    return Out("ext-swap", f"{name} text as .onnx", text.encode(), ext=".onnx")
