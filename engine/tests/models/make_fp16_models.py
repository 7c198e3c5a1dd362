#!/usr/bin/python3
"""make_fp16_models.py — fp16 ONNX models written the way the usual float16 conversion tool writes them.

The tool is onnxconverter-common's float16.convert_float_to_float16 (1.13/1.14, the releases users run;
MIT): it is not in Debian and cannot be pip-installed here, so this script applies the same
transformation to a float model with python3-onnx alone:
  - onnx.shape_inference first (the tool needs every tensor's type in value_info);
  - every float initializer and float tensor attribute becomes float16, values clamped as the tool does
    (|x| < 1e-7 -> ±1e-7, |x| > 1e4 -> ±1e4; 0, inf and NaN kept);
  - float graph inputs, outputs and value_info become float16; Cast(to=FLOAT) becomes Cast(to=FLOAT16);
  - keep_io_types=True: the float inputs and outputs stay float, and Cast nodes named graph_input_cast<i>
    (output graph_input_cast_<i>) and graph_output_cast<i> (input graph_output_cast_<i>) are APPENDED AT
    THE END of the node list: the graph is no longer in topological order (issue 24 §1);
  - ops of the tool's block list (Resize, Max, Min, TopK, Range, ...) keep float and get Casts to float
    before and to float16 after, also appended at the end.

usage: /usr/bin/python3 make_fp16_models.py convnet OUT_DIR
       /usr/bin/python3 make_fp16_models.py blazeface MODEL.onnx INPUT.f32 OUT_DIR

  convnet    a small NCHW conv net with random (seeded) weights, two outputs, a Constant node and two
             blocked ops (Resize, Max); writes convnet_float.onnx, convnet_fp16_io32.onnx (keep_io_types
             True), convnet_fp16_io16.onnx (False) and the inputs convnet_input.f32 / convnet_input.f16.
  blazeface  the same two conversions of MediaPipe BlazeFace (blazeface_<S>_fp16_io32/io16.onnx) with
             INPUT.f32 (a photo, from make_reference.cjs) written as blazeface_<S>_input.f32 / .f16. The
             tool leaves a ConstantOfShape without a value attribute float32 (the default) beside float16
             Concat inputs, which ONNX Runtime refuses; the value is first spelt out (0.0f, the default:
             the float model is unchanged) so that the tool converts it, as a user has to.
make_fp16_reference.cjs then runs ONNX Runtime on each model (the expected outputs).
"""
import itertools
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT, FLOAT16 = TensorProto.FLOAT, TensorProto.FLOAT16
# onnxconverter-common's DEFAULT_OP_BLOCK_LIST: ops it keeps in float.
BLOCKED = {"ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer", "FeatureVectorizer",
           "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor", "Normalizer", "OneHotEncoder",
           "RandomUniformLike", "SVMClassifier", "SVMRegressor", "Scaler", "TreeEnsembleClassifier",
           "TreeEnsembleRegressor", "ZipMap", "NonMaxSuppression", "TopK", "RoiAlign", "Resize", "Range", "CumSum",
           "Min", "Max", "Upsample"}


def to_half(values):
    v = np.asarray(values, dtype=np.float32)
    v = np.where((v > 0) & (v < 1e-7), np.float32(1e-7), v)
    v = np.where((v < 0) & (v > -1e-7), np.float32(-1e-7), v)
    v = np.where((v > 1e4) & np.isfinite(v), np.float32(1e4), v)
    v = np.where((v < -1e4) & np.isfinite(v), np.float32(-1e4), v)
    return v.astype(np.float16)


def tensor_to_half(t):
    if t.data_type != FLOAT:
        return
    t.data_type = FLOAT16
    if t.float_data:  # the tool writes the halves' bits into int32_data
        t.int32_data[:] = [int(h) for h in to_half(t.float_data).view(np.uint16)]
        del t.float_data[:]
    if t.raw_data:
        t.raw_data = to_half(np.frombuffer(t.raw_data, dtype=np.float32)).tobytes()


def convert_float_to_float16(model, keep_io_types):
    model = onnx.shape_inference.infer_shapes(model)
    g = model.graph
    rename, skip_io, io_casts, half_values = {}, set(), set(), set()
    appended = []
    if keep_io_types:
        for i, x in enumerate(g.input):
            if x.type.tensor_type.elem_type != FLOAT:
                continue
            name = f"graph_input_cast_{i}"
            rename[x.name] = name
            skip_io.add(x.name)
            vi = g.value_info.add()
            vi.CopyFrom(x)
            vi.name = name
            vi.type.tensor_type.elem_type = FLOAT16
            half_values.add(name)
            appended.append(helper.make_node("Cast", [x.name], [name], to=FLOAT16, name=f"graph_input_cast{i}"))
            io_casts.add(f"graph_input_cast{i}")
        for i, y in enumerate(g.output):
            if y.type.tensor_type.elem_type != FLOAT:
                continue
            name = f"graph_output_cast_{i}"
            rename[y.name] = name
            skip_io.add(y.name)
            vi = g.value_info.add()
            vi.CopyFrom(y)
            vi.name = name
            vi.type.tensor_type.elem_type = FLOAT16
            half_values.add(name)
            appended.append(helper.make_node("Cast", [name], [y.name], to=FLOAT, name=f"graph_output_cast{i}"))
            io_casts.add(f"graph_output_cast{i}")
    g.node.extend(appended)

    blocked = []
    for n in g.node:
        if n.name in io_casts:
            continue
        n.input[:] = [rename.get(s, s) for s in n.input]
        n.output[:] = [rename.get(s, s) for s in n.output]
        if n.op_type in BLOCKED:
            blocked.append(n)
            continue
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == FLOAT:
                a.i = FLOAT16
            if a.type == onnx.AttributeProto.TENSOR:
                tensor_to_half(a.t)
            for t in a.tensors:
                tensor_to_half(t)
    for t in g.initializer:
        if t.data_type == FLOAT:
            tensor_to_half(t)
            half_values.add(t.name)
    for vi in itertools.chain(g.input, g.output, g.value_info):
        if vi.type.tensor_type.elem_type == FLOAT and vi.name not in skip_io:
            vi.type.tensor_type.elem_type = FLOAT16
            half_values.add(vi.name)

    for n in blocked:  # float in, float out: Casts around the node, appended at the end
        for i, s in enumerate(n.input):
            if s in half_values:
                wide = f"{n.name}_input_cast_{i}"
                g.node.append(helper.make_node("Cast", [s], [wide], to=FLOAT, name=f"{n.name}_input_cast{i}"))
                n.input[i] = wide
        for i, s in enumerate(n.output):
            if s in half_values:
                wide = f"{n.name}_output_cast_{i}"
                g.node.append(helper.make_node("Cast", [wide], [s], to=FLOAT16, name=f"{n.name}_output_cast{i}"))
                n.output[i] = wide
    return model


def convnet(seed=7):
    rng = np.random.default_rng(seed)
    inits = []

    def const(name, shape, scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def fixed(name, values):
        inits.append(numpy_helper.from_array(np.array(values, np.float32), name))
        return name

    nodes = [
        helper.make_node("Conv", ["x", const("w1", (8, 3, 3, 3), 0.4), const("b1", (8,), 0.1)], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", const("w2", (16, 8, 3, 3), 0.2), const("b2", (16,), 0.1)], ["c2"],
                         name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Constant", [], ["k"], name="half",
                         value=numpy_helper.from_array(np.array([0.5], np.float32), "k")),
        helper.make_node("Mul", ["c2", "k"], ["m2"], name="scale"),
        helper.make_node("Max", ["m2", const("floor", (1, 16, 1, 1), 0.1)], ["x2"], name="max"),  # blocked
        helper.make_node("Resize", ["x2", "", fixed("scales", [1, 1, 2, 2])], ["up"], name="resize", mode="nearest"),
        helper.make_node("Conv", ["up", const("w3", (8, 16, 1, 1), 0.3), const("b3", (8,), 0.1)], ["c3"],
                         name="conv3"),
        helper.make_node("Add", ["c3", "r1"], ["sum"], name="residual"),
        helper.make_node("Sigmoid", ["sum"], ["map"], name="sigmoid"),
        helper.make_node("GlobalAveragePool", ["sum"], ["pool"], name="pool"),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", const("fc", (5, 8), 0.5), const("fb", (5,), 0.1)], ["logits"], name="fc",
                         transB=1),
    ]
    graph = helper.make_graph(nodes, "fp16_convnet", [helper.make_tensor_value_info("x", FLOAT, [1, 3, 16, 16])], [
        helper.make_tensor_value_info("map", FLOAT, [1, 8, 16, 16]),
        helper.make_tensor_value_info("logits", FLOAT, [1, 5])
    ], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_fp16_models")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def spell_out_constant_of_shape(model):
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and not any(a.name == "value" for a in n.attribute):
            n.attribute.append(helper.make_attribute("value", numpy_helper.from_array(np.zeros(1, np.float32))))
    return model


def write_variants(model, out_dir, stem, x):
    os.makedirs(out_dir, exist_ok=True)
    onnx.save(model, os.path.join(out_dir, f"{stem}_float.onnx"))
    for keep, tag in ((True, "io32"), (False, "io16")):
        # No onnx.checker here: it refuses what the tool writes ("Nodes in a graph must be topologically
        # sorted"), while ONNX Runtime sorts and runs it.
        half = convert_float_to_float16(onnx.ModelProto.FromString(model.SerializeToString()), keep)
        onnx.save(half, os.path.join(out_dir, f"{stem}_fp16_{tag}.onnx"))
    x.astype(np.float32).tofile(os.path.join(out_dir, f"{stem}_input.f32"))
    x.astype(np.float16).tofile(os.path.join(out_dir, f"{stem}_input.f16"))


def main(argv):
    if len(argv) == 3 and argv[1] == "convnet":
        x = np.random.default_rng(11).uniform(-1, 1, (1, 3, 16, 16))
        write_variants(convnet(), argv[2], "convnet", x)
    elif len(argv) == 5 and argv[1] == "blazeface":
        model = spell_out_constant_of_shape(onnx.load(argv[2]))
        size = model.graph.input[0].type.tensor_type.shape.dim[1].dim_value
        x = np.fromfile(argv[3], dtype=np.float32).reshape(1, size, size, 3)
        write_variants(model, argv[4], f"blazeface_{size}", x)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
