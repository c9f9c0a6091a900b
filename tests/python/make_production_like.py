"""Write a model with the features of production models that the suite's single-op tests lack
together: a custom-domain op with attributes we do not model, a quantized path
(DynamicQuantizeLinear -> ConvInteger, MatMulInteger), an LSTM, an If with two subgraphs, a Loop
whose body captures an outer value, a model-local function, metadata and doc strings.

Usage: make_production_like.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def init(name, arr):
    return numpy_helper.from_array(arr, name)


nodes = [
    helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dql"),
    helper.make_node("ConvInteger", ["xq", "wq", "xz"], ["conv_i32"], name="convint", pads=[1, 1, 1, 1]),
    helper.make_node("Cast", ["conv_i32"], ["conv_f"], to=TensorProto.FLOAT, name="cast"),
    helper.make_node("GemmFastGelu", ["conv_f"], ["act"], domain="com.microsoft", alpha=1.702,
                     name="custom", unmodeled_knob=7),
    helper.make_node("Reshape", ["act", "shape"], ["seq"], name="reshape"),
    helper.make_node("LSTM", ["seq", "W", "R"], ["", "h_last"], hidden_size=4, name="lstm"),
    helper.make_node("Flatten", ["h_last"], ["h2"], axis=1, name="flat"),
    helper.make_node("DynamicQuantizeLinear", ["h2"], ["hq", "hs", "hz"], name="dql2"),
    helper.make_node("MatMulInteger", ["hq", "mq", "hz"], ["mm"], name="mmint"),
    helper.make_node("ReduceSum", ["mm"], ["total"], keepdims=0, name="sum"),
    helper.make_node("Greater", ["total", "zero"], ["cond"], name="gt"),
]
then_g = helper.make_graph([helper.make_node("Relu", ["h2"], ["t"])], "then",
                           [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 4])])
else_g = helper.make_graph([helper.make_node("Neg", ["h2"], ["e"])], "else",
                           [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 4])])
nodes.append(helper.make_node("If", ["cond"], ["branch"], then_branch=then_g, else_branch=else_g, name="if"))
body = helper.make_graph(
    [helper.make_node("Add", ["acc", "h2"], ["acc_next"]), helper.make_node("Identity", ["c"], ["c_out"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("c", TensorProto.BOOL, []),
     helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1, 4])],
    [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("acc_next", TensorProto.FLOAT, [1, 4])])
nodes.append(helper.make_node("Loop", ["trips", "", "branch"], ["looped"], body=body, name="loop"))
nodes.append(helper.make_node("LocalScale", ["looped"], ["y"], domain="local.fn", name="fn_call"))

fn = helper.make_function("local.fn", "LocalScale", ["a"], ["b"],
                          [helper.make_node("Mul", ["a", "a"], ["b"])],
                          [helper.make_opsetid("", 17)])
graph = helper.make_graph(
    nodes, "production_like",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    initializer=[
        init("wq", rng.integers(0, 255, (3, 2, 3, 3), dtype=np.uint8)),
        init("shape", np.array([4, 1, 12], dtype=np.int64)),
        init("W", rng.standard_normal((1, 16, 12)).astype(np.float32)),
        init("R", rng.standard_normal((1, 16, 4)).astype(np.float32)),
        init("mq", rng.integers(0, 255, (4, 4), dtype=np.uint8)),
        init("zero", np.array(0, dtype=np.int32)),
        init("trips", np.array(2, dtype=np.int64)),
    ],
    doc_string="production-like model for mutagraph's tests",
    # Exporters declare the types of custom-op outputs: nothing else can know them.
    value_info=[helper.make_tensor_value_info("act", TensorProto.FLOAT, [1, 3, 4, 4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1),
                                                helper.make_opsetid("local.fn", 1)],
                          functions=[fn], producer_name="mutagraph-tests")
model.ir_version = 8
helper.set_model_props(model, {"origin": "tests/python/make_production_like.py"})
onnx.save(model, sys.argv[1])
