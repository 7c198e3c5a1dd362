#!/usr/bin/python3
"""make_quant_models.py — quantized ONNX models written the way ONNX Runtime's quantization tools write them.

The tools (onnxruntime.quantization: quantize_static, quantize_dynamic) are not in Debian and cannot be
pip-installed here, so this script writes their three output forms with python3-onnx alone, calibrated
by ONNX Runtime itself (make_quant_reference.cjs runs the float model with every activation exposed):
  - QDQ (quantize_static, QuantFormat.QDQ, the default): every quantized activation tensor T becomes
    T -> QuantizeLinear -> DequantizeLinear -> its readers; weights are stored quantized behind a
    DequantizeLinear (per tensor, or per output channel: axis 0 for Conv, the column axis for Gemm/MatMul);
    biases are int32 with scale x_scale * w_scale and zero point 0. A Relu or Clip right after a
    Conv/Gemm/MatMul is not quantized on its own: its output is (the quantizer's fusion).
  - QOperator (quantize_static, QuantFormat.QOperator): the same layers as QuantizeLinear,
    QLinearConv, QLinearMatMul (ONNX) and QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
    QLinearConcat, QGemm (com.microsoft) on u8 tensors, DequantizeLinear at the end.
  - dynamic (quantize_dynamic): DynamicQuantizeLinear on the activation, ConvInteger / MatMulInteger with
    constant quantized weights, Cast to float, Mul by x_scale * w_scale, Add the float bias.
Activations: uint8 asymmetric (range [min(0, lo), max(0, hi)] over 255 steps), int8 symmetric
(max |x| / 127, zero point 0) or int8 asymmetric. Weights: int8 symmetric or uint8 asymmetric, per
tensor or per channel. Random (seeded) weights.

usage: /usr/bin/python3 make_quant_models.py small OUT_DIR
       /usr/bin/python3 make_quant_models.py blazeface MODEL.onnx INPUT.f32 OUT_DIR
Needs node and NODE_PATH pointing at onnxruntime-node (as make_quant_reference.cjs); writes for each
model NAME: NAME.onnx, NAME_input.f32 (small) and ONNX Runtime's outputs NAME_out<k>.f32 (optimisation
level all: its integer kernels).

  small      cnn_<variant>.onnx (QDQ; variants below) on a [1,3,16,16] input: Conv+bias -> Relu -> MaxPool
             -> depthwise Conv -> Clip(0,6) -> 1x1 Conv -> Add (residual) -> Concat -> Sigmoid (no quantized
             form: stays float) -> Mul -> GlobalAveragePool -> Flatten -> Gemm (transB, bias) and MatMul;
             two outputs. qop_u8.onnx: the QOperator form of cnn_u8_asym_tensor. dynamic.onnx.
  blazeface  MediaPipe BlazeFace (NHWC input [1,S,S,3]) as QDQ, u8 activations and int8 per-channel
             weights: blazeface_<S>_qdq.onnx, its float outputs and ONNX Runtime's on INPUT.f32.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.version_converter
from onnx import TensorProto, helper, numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
FLOAT, UINT8, INT8, INT32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
NP = {UINT8: np.uint8, INT8: np.int8}
QUANTIZED_OPS = {"Conv", "MatMul", "Gemm", "Add", "Mul", "Concat", "GlobalAveragePool", "MaxPool", "Relu", "Clip",
                 "Reshape", "Flatten", "Transpose", "AveragePool", "Pad", "Resize", "Squeeze", "Unsqueeze"}
WEIGHTED = {"Conv", "MatMul", "Gemm"}
VARIANTS = {  # name: activation type, activation symmetric, weight type, weight per channel
    "u8_asym_tensor": (UINT8, False, UINT8, False),
    "s8_sym_channel": (INT8, True, INT8, True),
    "u8s8_channel": (UINT8, False, INT8, True),
    "s8_asym_tensor": (INT8, False, INT8, False),
}


def run_ort(model_path, input_path, dims, prefix, level="all"):
    cmd = ["node", os.path.join(HERE, "make_quant_reference.cjs"), model_path, input_path,
           ",".join(map(str, dims)), prefix, level]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["outputs"]


def quant_params(lo, hi, qtype, symmetric):
    """Scale and zero point of a range, as the quantizer's compute_scale_zp (f32)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if symmetric:
        qmax = 127 if qtype == INT8 else 255
        absmax = max(abs(lo), abs(hi))
        scale = np.float32(absmax / qmax if absmax > 0 else 1.0)
        zp = 0 if qtype == INT8 else 128
        return scale, zp
    qmin, qmax = (0, 255) if qtype == UINT8 else (-128, 127)
    scale = np.float32((hi - lo) / (qmax - qmin) if hi > lo else 1.0)
    zp = int(np.clip(np.round(qmin - lo / scale), qmin, qmax))
    return scale, zp


def quantize(x, scale, zp, qtype):
    info = np.iinfo(NP[qtype])
    return np.clip(np.rint(np.asarray(x, np.float32) / scale) + zp, info.min, info.max).astype(NP[qtype])


def quantize_weight(w, qtype, per_channel, axis):
    """Quantized weight, scale (scalar or per channel along axis) and zero point (int8 symmetric or
    uint8 asymmetric, as the quantizer's defaults for those types)."""
    w = np.asarray(w, np.float32)
    if per_channel:
        moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
        params = [quant_params(r.min(), r.max(), qtype, qtype == INT8) for r in moved]
        scale = np.array([p[0] for p in params], np.float32)
        zp = np.array([p[1] for p in params], NP[qtype])
        shape = [1] * w.ndim
        shape[axis] = -1
        q = quantize(w, scale.reshape(shape), zp.astype(np.int32).reshape(shape), qtype)
        return q, scale, zp
    scale, zp = quant_params(w.min(), w.max(), qtype, qtype == INT8)
    return quantize(w, scale, zp, qtype), np.float32(scale), np.array(zp, NP[qtype])


def float_activations(model, input_path, dims):
    """min/max of every float tensor over the calibration input, from ONNX Runtime."""
    inferred = shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type for v in inferred.graph.value_info}
    calib = onnx.ModelProto()
    calib.CopyFrom(model)
    existing = {o.name for o in calib.graph.output}
    names = []
    for node in calib.graph.node:
        for o in node.output:
            if o and types.get(o) == FLOAT and o not in existing:
                calib.graph.output.append(helper.make_tensor_value_info(o, FLOAT, None))
                existing.add(o)
    names = [o.name for o in calib.graph.output]
    ranges = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calib.onnx")
        onnx.save(calib, path)
        outs = run_ort(path, input_path, dims, os.path.join(tmp, "act"), "disabled")
        for k, (name, o) in enumerate(zip(names, outs)):
            if o["type"] != "float32":
                continue
            v = np.fromfile(os.path.join(tmp, f"act_out{k}.f32"), np.float32)
            ranges[name] = (float(v.min()), float(v.max())) if v.size else (0.0, 0.0)
    inp = np.fromfile(input_path, np.float32)
    ranges[model.graph.input[0].name] = (float(inp.min()), float(inp.max()))
    return ranges


def to_qdq(model, ranges, act_type, act_symmetric, w_type, w_per_channel):
    """The QDQ form of a float model (see the top of this file)."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producers = {o: n for n in g.node for o in n.output}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}

    def fused_into_activation(t):
        # A weighted op's output read only by a Relu/Clip: the activation's output is quantized instead.
        p = producers.get(t)
        r = readers.get(t, [])
        return p is not None and p.op_type in WEIGHTED and len(r) == 1 and r[0].op_type in ("Relu", "Clip") \
            and t not in outputs

    quantized = set()
    for n in g.node:
        if n.op_type not in QUANTIZED_OPS:
            continue
        for t in list(n.input[:1] if n.op_type in WEIGHTED else n.input) + list(n.output[:1]):
            if t and t not in inits and t in ranges and not fused_into_activation(t):
                quantized.add(t)
    new_nodes, new_inits = [], list(g.initializer)
    params = {}
    for t in sorted(quantized):
        params[t] = quant_params(ranges[t][0], ranges[t][1], act_type, act_symmetric)
    renamed = {}

    def qdq_after(t):
        s, z = params[t]
        new_inits.append(numpy_helper.from_array(np.array(s, np.float32), t + "_scale"))
        new_inits.append(numpy_helper.from_array(np.array(z, NP[act_type]), t + "_zero_point"))
        new_nodes.append(helper.make_node("QuantizeLinear", [t, t + "_scale", t + "_zero_point"], [t + "_quantized"],
                                          name=t + "_QuantizeLinear"))
        new_nodes.append(helper.make_node("DequantizeLinear", [t + "_quantized", t + "_scale", t + "_zero_point"],
                                          [t + "_dequantized"], name=t + "_DequantizeLinear"))
        renamed[t] = t + "_dequantized"

    for t in [i.name for i in g.input]:
        if t in quantized:
            qdq_after(t)
    for n in g.node:
        node = onnx.NodeProto()
        node.CopyFrom(n)
        for k, i in enumerate(node.input):
            if i in renamed:
                node.input[k] = renamed[i]
        if n.op_type in WEIGHTED and n.input[1] in inits and renamed.get(n.input[0]):
            x_scale = params[n.input[0]][0]
            w = numpy_helper.to_array(inits[n.input[1]])
            trans_b = n.op_type == "Gemm" and any(a.name == "transB" and a.i for a in n.attribute)
            axis = 0 if n.op_type == "Conv" or trans_b else 1
            q, s, z = quantize_weight(w, w_type, w_per_channel, axis)
            wn = n.input[1]
            new_inits += [numpy_helper.from_array(q, wn + "_quantized"), numpy_helper.from_array(s, wn + "_scale"),
                          numpy_helper.from_array(z, wn + "_zero_point")]
            attrs = [helper.make_attribute("axis", axis)] if w_per_channel else []
            dq = helper.make_node("DequantizeLinear", [wn + "_quantized", wn + "_scale", wn + "_zero_point"],
                                  [wn + "_dequantized"], name=wn + "_DequantizeLinear")
            dq.attribute.extend(attrs)
            new_nodes.append(dq)
            node.input[1] = wn + "_dequantized"
            if len(n.input) > 2 and n.input[2] in inits:
                b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float32)
                bs = (np.float32(x_scale) * s).astype(np.float32)
                bq = np.rint(b / bs).astype(np.int32)
                bn = n.input[2]
                new_inits += [numpy_helper.from_array(bq, bn + "_quantized"),
                              numpy_helper.from_array(np.asarray(bs, np.float32), bn + "_scale"),
                              numpy_helper.from_array(np.zeros(np.shape(bs), np.int32), bn + "_zero_point")]
                bdq = helper.make_node("DequantizeLinear", [bn + "_quantized", bn + "_scale", bn + "_zero_point"],
                                       [bn + "_dequantized"], name=bn + "_DequantizeLinear")
                if np.ndim(bs):
                    bdq.attribute.extend([helper.make_attribute("axis", 0)])
                new_nodes.append(bdq)
                node.input[2] = bn + "_dequantized"
        new_nodes.append(node)
        for o in n.output:
            if o in quantized:
                qdq_after(o)
    # Graph outputs keep their names: the producer writes NAME_float, the last DequantizeLinear NAME.
    for o in g.output:
        if o.name not in renamed:
            continue
        mid, deq = o.name + "_float", renamed[o.name]
        for n in new_nodes:
            n.output[:] = [mid if x == o.name else o.name if x == deq else x for x in n.output]
            n.input[:] = [mid if x == o.name else o.name if x == deq else x for x in n.input]
    used = {i for n in new_nodes for i in n.input}
    weights_done = {i for i in inits if i not in used}
    del g.node[:]
    g.node.extend(new_nodes)
    del g.initializer[:]
    g.initializer.extend([t for t in new_inits if t.name not in weights_done])
    return model, params


def small_float_model(rng):
    def w(*shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.4).astype(np.float32))

    inits = []

    def init(name, arr):
        t = numpy_helper.from_array(np.asarray(arr, np.float32), name)
        inits.append(t)
        return name

    nodes = [
        helper.make_node("Conv", ["x", init("w1", rng.standard_normal((8, 3, 3, 3)) * 0.4),
                                  init("b1", rng.standard_normal(8) * 0.1)], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", init("w2", rng.standard_normal((8, 1, 3, 3)) * 0.5),
                                  init("b2", rng.standard_normal(8) * 0.1)], ["c2"], pads=[1, 1, 1, 1], group=8),
        helper.make_node("Clip", ["c2", init("clip_min", np.float32(0)), init("clip_max", np.float32(6))], ["r2"]),
        helper.make_node("Conv", ["r2", init("w3", rng.standard_normal((8, 8, 1, 1)) * 0.4)], ["c3"]),
        helper.make_node("Add", ["c3", "p1"], ["a1"]),
        helper.make_node("Concat", ["a1", "p1"], ["cat"], axis=1),
        helper.make_node("Sigmoid", ["cat"], ["sig"]),
        helper.make_node("Mul", ["cat", "sig"], ["m1"]),
        helper.make_node("GlobalAveragePool", ["m1"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", init("wg", rng.standard_normal((10, 16)) * 0.4),
                                  init("bg", rng.standard_normal(10) * 0.1)], ["logits"], transB=1),
        helper.make_node("MatMul", ["flat", init("wm", rng.standard_normal((16, 6)) * 0.4)], ["embed"]),
    ]
    graph = helper.make_graph(nodes, "quant_cnn", [helper.make_tensor_value_info("x", FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("logits", FLOAT, [1, 10]),
                               helper.make_tensor_value_info("embed", FLOAT, [1, 6])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def qoperator_model(float_model, params, rng_weights):
    """cnn_u8_asym_tensor in QOperator form: u8 activations, u8 per-tensor weights (see the top)."""
    inits = {t.name: numpy_helper.to_array(t) for t in float_model.graph.initializer}
    tensors = []

    def const(name, arr):
        if name not in {t.name for t in tensors}:
            tensors.append(numpy_helper.from_array(arr, name))
        return name

    def act(t):  # scale and zero point names of activation t
        s, z = params[t]
        return [const(t + "_s", np.array(s, np.float32)), const(t + "_z", np.array(z, np.uint8))]

    def weight(name, axis=0):
        q, s, z = quantize_weight(inits[name], UINT8, False, axis)
        return [const(name + "_q", q), const(name + "_s", np.array(s, np.float32)), const(name + "_z", z)], s

    def bias(name, x, ws):
        b = inits[name]
        return const(name + "_q", np.rint(b / (np.float32(params[x][0]) * np.float32(ws))).astype(np.int32))

    ms = "com.microsoft"
    w1, s1 = weight("w1")
    w2, s2 = weight("w2")
    w3, _ = weight("w3")
    wg, sg = weight("wg")
    wm, _ = weight("wm")
    nodes = [
        helper.make_node("QuantizeLinear", ["x"] + act("x"), ["xq"]),
        helper.make_node("QLinearConv", ["xq"] + act("x") + w1 + act("r1") + [bias("b1", "x", s1)], ["r1q"],
                         pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["r1q"], ["p1q"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("QLinearConv", ["p1q"] + act("r1") + w2 + act("r2") + [bias("b2", "r1", s2)], ["r2q"],
                         pads=[1, 1, 1, 1], group=8),
        helper.make_node("QLinearConv", ["r2q"] + act("r2") + w3 + act("c3"), ["c3q"]),
        helper.make_node("QLinearAdd", ["c3q"] + act("c3") + ["p1q"] + act("r1") + act("a1"), ["a1q"], domain=ms),
        helper.make_node("QLinearConcat", act("cat") + ["a1q"] + act("a1") + ["p1q"] + act("r1"), ["catq"], axis=1,
                         domain=ms),
        helper.make_node("DequantizeLinear", ["catq"] + act("cat"), ["cat"]),
        helper.make_node("Sigmoid", ["cat"], ["sig"]),
        helper.make_node("QuantizeLinear", ["sig"] + act("sig"), ["sigq"]),
        helper.make_node("QLinearMul", ["catq"] + act("cat") + ["sigq"] + act("sig") + act("m1"), ["m1q"], domain=ms),
        helper.make_node("QLinearGlobalAveragePool", ["m1q"] + act("m1") + act("gap"), ["gapq"], domain=ms,
                         channels_last=0),
        helper.make_node("Reshape", ["gapq", const("flat_shape", np.array([1, 16], np.int64))], ["flatq"]),
        helper.make_node("QGemm", ["flatq"] + act("gap") + wg + [bias("bg", "gap", sg)] + act("logits"), ["logitsq"],
                         transB=1, domain=ms),
        helper.make_node("DequantizeLinear", ["logitsq"] + act("logits"), ["logits"]),
        helper.make_node("QLinearMatMul", ["flatq"] + act("gap") + wm + act("embed"), ["embedq"]),
        helper.make_node("DequantizeLinear", ["embedq"] + act("embed"), ["embed"]),
    ]
    graph = helper.make_graph(nodes, "quant_cnn_qoperator", [helper.make_tensor_value_info("x", FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("logits", FLOAT, [1, 10]),
                               helper.make_tensor_value_info("embed", FLOAT, [1, 6])], tensors)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(ms, 1)],
                             ir_version=7)


def dynamic_model(rng):
    """quantize_dynamic's form: DynamicQuantizeLinear + ConvInteger (u8 weights) and MatMulInteger (i8)."""
    wc = (rng.standard_normal((4, 3, 3, 3)) * 0.4).astype(np.float32)
    bc = (rng.standard_normal(4) * 0.1).astype(np.float32)
    wm = (rng.standard_normal((4 * 8 * 8, 5)) * 0.1).astype(np.float32)
    wcq, wcs, wcz = quantize_weight(wc, UINT8, False, 0)
    wmq, wms, wmz = quantize_weight(wm, INT8, False, 1)
    t = [numpy_helper.from_array(a, n) for n, a in [
        ("wc_q", wcq), ("wc_s", np.array(wcs, np.float32)), ("wc_z", wcz), ("bc", bc.reshape(1, 4, 1, 1)),
        ("wm_q", wmq), ("wm_s", np.array(wms, np.float32)), ("wm_z", wmz), ("shape", np.array([1, -1], np.int64))]]
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("ConvInteger", ["xq", "wc_q", "xz", "wc_z"], ["ci"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Cast", ["ci"], ["cf"], to=FLOAT),
        helper.make_node("Mul", ["xs", "wc_s"], ["cs"]),
        helper.make_node("Mul", ["cf", "cs"], ["cm"]),
        helper.make_node("Add", ["cm", "bc"], ["conv"]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("Reshape", ["relu", "shape"], ["flat"]),
        helper.make_node("DynamicQuantizeLinear", ["flat"], ["fq", "fs", "fz"]),
        helper.make_node("MatMulInteger", ["fq", "wm_q", "fz", "wm_z"], ["mi"]),
        helper.make_node("Cast", ["mi"], ["mf"], to=FLOAT),
        helper.make_node("Mul", ["fs", "wm_s"], ["ms"]),
        helper.make_node("Mul", ["mf", "ms"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "quant_dynamic", [helper.make_tensor_value_info("x", FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", FLOAT, [1, 5])], t)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def uint8_twin(model):
    """The model with every int8 tensor as uint8 + 128 and its zero points + 128: the same real values and,
    in exact integer arithmetic, the same results (QuantizeLinear's range and every zero point shift
    alike). Every int8 tensor of these models is an initializer (weights, zero points)."""
    twin = onnx.ModelProto()
    twin.CopyFrom(model)
    for i, t in enumerate(twin.graph.initializer):
        if t.data_type == INT8:
            shifted = (numpy_helper.to_array(t).astype(np.int32) + 128).astype(np.uint8)
            twin.graph.initializer[i].CopyFrom(numpy_helper.from_array(shifted, t.name))
    return twin


def save_with_reference(model, out_dir, name, input_path, dims):
    """NAME.onnx and the reference NAME_out<k>.f32: ONNX Runtime on the model's uint8 twin. Its x86 kernels
    for int8 weights (u8s8, s8s8 through vpmaddubsw) saturate 16-bit pair sums, up to tens of steps off the
    exact result on large weights, while its u8u8 kernels are exact; where the twin differs from the model,
    ONNX Runtime's own outputs on the model are kept too, as NAME_ort_int8_out<k>.f32 (reported, not a
    reference)."""
    onnx.checker.check_model(model)
    path = os.path.join(out_dir, name + ".onnx")
    onnx.save(model, path)
    twin = uint8_twin(model)
    if twin == model:
        outs = run_ort(path, input_path, dims, os.path.join(out_dir, name))
    else:
        outs = run_ort(path, input_path, dims, os.path.join(out_dir, name + "_ort_int8"))
        with tempfile.TemporaryDirectory() as tmp:
            twin_path = os.path.join(tmp, "twin.onnx")
            onnx.save(twin, twin_path)
            run_ort(twin_path, input_path, dims, os.path.join(out_dir, name))
    print(f"make_quant_models: {name}: {len(model.graph.node)} nodes, {len(outs)} outputs")


def small(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(20261128)
    dims = [1, 3, 16, 16]
    input_path = os.path.join(out_dir, "cnn_input.f32")
    rng.uniform(-1, 1, dims).astype(np.float32).tofile(input_path)
    float_model = small_float_model(rng)
    ranges = float_activations(float_model, input_path, dims)
    for variant, (act_type, act_sym, w_type, w_pc) in VARIANTS.items():
        m = onnx.ModelProto()
        m.CopyFrom(float_model)
        qdq, params = to_qdq(m, ranges, act_type, act_sym, w_type, w_pc)
        save_with_reference(qdq, out_dir, "cnn_" + variant, input_path, dims)
    params = {t: quant_params(lo, hi, UINT8, False) for t, (lo, hi) in ranges.items()}
    save_with_reference(qoperator_model(float_model, params, rng), out_dir, "qop_u8", input_path, dims)
    save_with_reference(dynamic_model(rng), out_dir, "dynamic", input_path, dims)


def blazeface(model_path, input_path, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    # Per-channel DequantizeLinear (its axis) needs opset 13; the quantizer converts older models too.
    model = onnx.version_converter.convert_version(onnx.load(model_path), 13)
    side = int(round((np.fromfile(input_path, np.float32).size / 3) ** 0.5))
    dims = [1, side, side, 3]
    ranges = float_activations(model, input_path, dims)
    qdq, _ = to_qdq(model, ranges, UINT8, False, INT8, True)
    name = f"blazeface_{side}_qdq"
    save_with_reference(qdq, out_dir, name, input_path, dims)
    run_ort(model_path, input_path, dims, os.path.join(out_dir, f"blazeface_{side}_float"), "disabled")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "small":
        small(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "blazeface":
        blazeface(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
