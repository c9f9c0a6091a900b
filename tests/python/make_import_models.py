"""Write the models of the import tests (engine/tests/suite/import_cli.rs) into DIR, as exporters do:

- neg_dims.onnx: a graph input and output whose batch dim is declared -1 (torch.onnx and
  tf2onnx write that for a dynamic size);
- inline.onnx: a MatMul + Add + Mul model with its weights in the file, one of them a Constant
  node's tensor attribute;
- external.onnx + external.data: the same model saved by onnx's external data helper, every
  tensor (the Constant's included) in one side file.

Usage: make_import_models.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

out = sys.argv[1]
rng = np.random.default_rng(7)

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 3])
graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "neg", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
onnx.save_model(model, os.path.join(out, "neg_dims.onnx"))

w = numpy_helper.from_array(rng.standard_normal((3, 4)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "b")
scale = numpy_helper.from_array(rng.standard_normal((2, 4)).astype(np.float32), "scale")
nodes = [
    helper.make_node("MatMul", ["x", "w"], ["t"], name="matmul"),
    helper.make_node("Add", ["t", "b"], ["u"], name="add"),
    helper.make_node("Constant", [], ["s"], name="const", value=scale),
    helper.make_node("Mul", ["u", "s"], ["y"], name="mul"),
]
graph = helper.make_graph(
    nodes,
    "weights",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
    [w, b],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
onnx.save_model(model, os.path.join(out, "inline.onnx"))

convert_model_to_external_data(
    model,
    all_tensors_to_one_file=True,
    location="external.data",
    size_threshold=0,
    convert_attribute=True,
)
onnx.save_model(model, os.path.join(out, "external.onnx"))
check = onnx.load(os.path.join(out, "external.onnx"), load_external_data=False)
external = [t.name for t in check.graph.initializer if t.data_location == TensorProto.EXTERNAL]
external += [
    a.t.name
    for n in check.graph.node
    for a in n.attribute
    if a.HasField("t") and a.t.data_location == TensorProto.EXTERNAL
]
assert sorted(external) == ["b", "scale", "w"], external
print("ok")
