#!/usr/bin/python3
# Writes tiny_rgb_net.onnx (committed): x [1,3,16,16] NCHW → Conv 3→4 3×3 pad 1 (+bias) → Relu →
# GlobalAveragePool → y [1,4,1,1]. Fixed pseudo-random weights so the file is reproducible.
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
w = numpy_helper.from_array(rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.normal(0, 0.1, (4,)).astype(np.float32), "b")
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
    helper.make_node("Relu", ["c"], ["r"]),
    helper.make_node("GlobalAveragePool", ["r"], ["y"]),
]
graph = helper.make_graph(nodes, "tiny_rgb_net",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 1, 1])], [w, b])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
onnx.save(model, __file__.replace("make_tiny_rgb_net.py", "tiny_rgb_net.onnx"))
