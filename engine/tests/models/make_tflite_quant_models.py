#!/usr/bin/python3
"""make_tflite_quant_models.py — fully quantized TFLite fixtures (engine/tests/models/tflite_quant/).

Debian has no TensorFlow, so the models are written here as FlatBuffers through Kestrel's TFLite
schema (engine/schema/tflite_subset.fbs, whose tables keep TFLite's field order; `flatc --python`
generates the writer at run time), and their reference outputs come from an independent numpy
implementation of TFLite's reference integer kernels (tensorflow/lite/kernels/internal/reference/
integer_ops and common.h: QuantizeMultiplier, MultiplyByQuantizedMultiplier, the ADD/MUL/CONV
parameter preparation). Arm NN (python3-pyarmnn, backend CpuRef) runs every model as a cross-check of
the files: it computes in float and requantizes, so it is within 1 LSB of TFLite, not exact; the largest
difference is printed and must stay <= 1 LSB.

Models (NHWC 1x16x16x3 input, 16 channels):
  int8_cnn   float input → QUANTIZE → CONV_2D 3x3 (per-channel int8 weights, RELU6) → DEPTHWISE_CONV_2D
             3x3 s2 (per-channel, RELU) → CONV_2D 1x1 → ADD (other scales) → MUL → MAX_POOL_2D →
             CONCATENATION → RESHAPE → FULLY_CONNECTED → SOFTMAX → DEQUANTIZE (output 0, float), and
             LOGISTIC of the FULLY_CONNECTED (output 1, int8)
  int8_io    the same graph with an int8 input (no QUANTIZE) and both outputs int8
  uint8_cnn  the legacy uint8 form: per-tensor asymmetric uint8 weights, uint8 activations
Files: <name>.tflite, <name>_input.bin (the input as the model takes it: f32 or int8 bytes),
<name>_out<k>.bin (TFLite's output k: f32 or the raw 8-bit values). Outputs 2-4 are intermediate
tensors, the FULLY_CONNECTED's logits (which every integer op before them decides), the ADD's output
and the first CONV_2D's, so a difference shows where it starts. SOFTMAX and LOGISTIC (no quantized
op in Kestrel: f32 between DequantizeLinear and QuantizeLinear) are computed here as TFLite's optimized
kernels do (a float transform rounded half away from zero), so those outputs may differ by 1 LSB.
Run: python3 make_tflite_quant_models.py [out_dir]   (needs flatc, python3-flatbuffers, numpy)

  make_tflite_quant_models.py quantize FLOAT.tflite INPUT.f32 OUT_DIR NAME
post-training quantizes a float model (CONV_2D, DEPTHWISE_CONV_2D, ADD, RELU, PAD, RESHAPE, MAX_POOL_2D,
CONCATENATION, fp16 DEQUANTIZE weights: MediaPipe's BlazeFace, which fetch_models.sh quantizes) to int8 as
TFLite's converter does (quantize_model) and writes TFLite's integer results and the float model's.
Arm NN is only reported there: its 20.08 CpuRef pads a quantized PAD with 0 instead of the zero point
(a reference padding with 0 comes within 6 LSB of it on BlazeFace, the one padding with the zero point,
as TFLite, up to 249 LSB away).
"""
import importlib
import os
import subprocess
import sys
import tempfile

import flatbuffers
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "schema", "tflite_subset.fbs")
GEN = tempfile.mkdtemp(prefix="tflite_py_")
subprocess.run(["flatc", "--python", "-o", GEN, SCHEMA], check=True)
sys.path.insert(0, GEN)


def T(name):
    return importlib.import_module("kes.tflite." + name)


TYPES = {np.float32: 0, np.int32: 2, np.uint8: 3, np.int8: 9}
OPS = {"ADD": 0, "CONCATENATION": 2, "CONV_2D": 3, "DEPTHWISE_CONV_2D": 4, "DEQUANTIZE": 6, "FULLY_CONNECTED": 9,
       "LOGISTIC": 14, "MAX_POOL_2D": 17, "MUL": 18, "RESHAPE": 22, "SOFTMAX": 25, "QUANTIZE": 114}
OPTIONS = {"Conv2DOptions": 1, "DepthwiseConv2DOptions": 2, "Pool2DOptions": 5, "FullyConnectedOptions": 8,
           "SoftmaxOptions": 9, "ConcatenationOptions": 10, "AddOptions": 11, "ReshapeOptions": 17, "MulOptions": 21}
RELU, RELU6 = 1, 3

# ---- TFLite's integer arithmetic (common.h, quantization_util.cc) --------------------------------------


def quantize_multiplier(real):
    if real == 0.0:
        return 0, 0
    q, shift = np.frexp(real)
    q_fixed = int(np.floor(q * (1 << 31) + 0.5))  # TfLiteRound (half away from zero) of a positive value
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, int(shift)


def srdhm(a, b):  # SaturatingRoundingDoublingHighMul, elementwise on int64 arrays
    a = np.asarray(a, np.int64)
    ab = a * np.int64(b)
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    s = ab + nudge
    r = np.where(s >= 0, s // (1 << 31), -((-s) // (1 << 31)))  # C++ division truncates
    return np.where((a == b) & (a == -(1 << 31)), (1 << 31) - 1, r).astype(np.int64)


def rdbpot(x, e):  # RoundingDivideByPOT
    x = np.asarray(x, np.int64)
    mask = (1 << e) - 1
    rem = x & mask
    thr = (mask >> 1) + (x < 0)
    return (x >> e) + (rem > thr)


def mbqm(x, mult, shift):  # MultiplyByQuantizedMultiplier
    left, right = max(shift, 0), max(-shift, 0)
    return rdbpot(srdhm(np.asarray(x, np.int64) * (1 << left), mult), right)


def round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


class Q:
    def __init__(self, scale, zp, dtype):
        self.scale, self.zp, self.dtype = np.float32(scale), int(zp), dtype
        info = np.iinfo(dtype)
        self.lo, self.hi = info.min, info.max


def act_range(act, q):  # CalculateActivationRangeQuantized
    lo, hi = q.lo, q.hi
    quant = lambda f: q.zp + int(round_away(np.float32(f) / q.scale))
    if act == RELU:
        lo = max(lo, quant(0.0))
    elif act == RELU6:
        lo, hi = max(lo, quant(0.0)), min(hi, quant(6.0))
    return lo, hi


def quantize(x, q):
    v = round_away((x.astype(np.float32) / q.scale).astype(np.float32)) + q.zp
    return np.clip(v, q.lo, q.hi).astype(q.dtype)


def dequantize(x, q):
    return (np.float64(q.scale) * (x.astype(np.int64) - q.zp)).astype(np.float32)


def conv_ref(x, qx, w, wq, bias, qy, stride, act, depthwise, same=True):
    """x [1,H,W,C]; w OHWI ([1,KH,KW,C] for depthwise); SAME or VALID padding; per-channel or per-tensor
    wq. qy None: the real values of the sums (calibration)."""
    _, H, W, C = x.shape
    kh, kw = w.shape[1], w.shape[2]
    cout = w.shape[3] if depthwise else w.shape[0]
    if same:
        oh, ow = -(-H // stride), -(-W // stride)
        ph = max((oh - 1) * stride + kh - H, 0) // 2
        pw = max((ow - 1) * stride + kw - W, 0) // 2
    else:
        oh, ow, ph, pw = (H - kh) // stride + 1, (W - kw) // stride + 1, 0, 0
    # Taps outside the image read the zero point: (x - zx) = 0 there, as TFLite skips them.
    xs = np.zeros((H + kh + stride, W + kw + stride, C), np.int64)
    xs[ph:ph + H, pw:pw + W] = x[0].astype(np.int64) - qx.zp
    ws, wz = wq
    wz = np.reshape(np.asarray(wz, np.int64), (-1,))
    acc = np.zeros((oh, ow, cout), np.int64)
    for ky in range(kh):
        for kx in range(kw):
            tap = xs[ky:ky + (oh - 1) * stride + 1:stride, kx:kx + (ow - 1) * stride + 1:stride]
            if depthwise:
                acc += tap * (w[0, ky, kx].astype(np.int64) - wz)
            else:
                acc += tap @ (w[:, ky, kx, :].astype(np.int64) - wz[:, None]).T
    acc += bias
    if qy is None:  # calibration: the real values
        return (acc * (float(qx.scale) * np.asarray(ws, np.float64))).astype(np.float32)[None]
    out = np.zeros_like(acc)
    for c in range(cout):
        s = ws[c] if len(ws) > 1 else ws[0]
        if qx.dtype == np.uint8:  # GetQuantizedConvolutionMultipler: the product in float
            real = float(np.float32(qx.scale * np.float32(s))) / float(qy.scale)
        else:  # PopulateConvolutionQuantizationParams: double
            real = float(qx.scale) * float(s) / float(qy.scale)
        m, sh = quantize_multiplier(real)
        out[..., c] = mbqm(acc[..., c], m, sh)
    lo, hi = act_range(act, qy)
    return np.clip(out + qy.zp, lo, hi).astype(qy.dtype)[None]


def fc_ref(x, qx, w, wq, bias, qy):
    acc = (x.astype(np.int64) - qx.zp) @ (w.astype(np.int64) - wq[1]).T + bias
    if qy is None:
        return (acc * float(qx.scale) * float(wq[0][0])).astype(np.float32)
    real = float(np.float32(qx.scale * wq[0][0])) / float(qy.scale)  # per tensor: the product in float
    m, sh = quantize_multiplier(real)
    return np.clip(mbqm(acc, m, sh) + qy.zp, qy.lo, qy.hi).astype(qy.dtype)


def add_ref(a, qa, b, qb, qy):
    twice_max = 2.0 * float(max(qa.scale, qb.scale))
    ma = quantize_multiplier(float(qa.scale) / twice_max)
    mb = quantize_multiplier(float(qb.scale) / twice_max)
    mo = quantize_multiplier(twice_max / ((1 << 20) * float(qy.scale)))
    sa = mbqm((a.astype(np.int64) - qa.zp) * (1 << 20), *ma)
    sb = mbqm((b.astype(np.int64) - qb.zp) * (1 << 20), *mb)
    return np.clip(mbqm(sa + sb, *mo) + qy.zp, qy.lo, qy.hi).astype(qy.dtype)


def mul_ref(a, qa, b, qb, qy):
    m = quantize_multiplier(float(np.float32(qa.scale * qb.scale / qy.scale)))
    p = (a.astype(np.int64) - qa.zp) * (b.astype(np.int64) - qb.zp)
    return np.clip(mbqm(p, *m) + qy.zp, qy.lo, qy.hi).astype(qy.dtype)


def calibrated(real, dtype, act=0):
    """Scale and zero point covering `real` (and 0), as TFLite's converter calibrates an activation."""
    lo, hi = min(float(real.min()), 0.0), max(float(real.max()), 0.0)
    if act in (RELU, RELU6):
        lo, hi = 0.0, hi if act == RELU else min(hi, 6.0)
    info = np.iinfo(dtype)
    scale = np.float32((hi - lo) / 255.0)
    zp = int(np.clip(np.round(info.min - lo / float(scale)), info.min, info.max))
    return Q(scale, zp, dtype)


def lut_ref(x, qx, qy, f):  # TFLite's optimized LOGISTIC: a float transform, rounded half away
    real = (np.float32(qx.scale) * (x.astype(np.int32) - qx.zp).astype(np.float32)).astype(np.float32)
    v = round_away((f(real) * (np.float32(1.0) / qy.scale)).astype(np.float32)) + qy.zp
    return np.clip(v, qy.lo, qy.hi).astype(qy.dtype)


def softmax_ref(x, qx, qy):  # float softmax of the dequantized row, quantized half away
    real = dequantize(x, qx).astype(np.float64)
    e = np.exp(real - real.max(axis=-1, keepdims=True))
    return quantize((e / e.sum(axis=-1, keepdims=True)).astype(np.float32), qy)


# ---- the FlatBuffer writer -----------------------------------------------------------------------------


class Writer:
    def __init__(self):
        self.tensors, self.buffers, self.ops, self.codes = [], [b""], [], []

    def tensor(self, name, shape, dtype, q=None, data=None):
        buf = 0
        if data is not None:
            self.buffers.append(np.ascontiguousarray(data).tobytes())
            buf = len(self.buffers) - 1
        self.tensors.append((name, list(shape), TYPES[dtype], buf, q))
        return len(self.tensors) - 1

    def op(self, code, ins, outs, opt_name=None, opt_fields=None):
        if code not in self.codes:
            self.codes.append(code)
        self.ops.append((self.codes.index(code), ins, outs, opt_name, opt_fields or {}))

    def finish(self, inputs, outputs):
        b = flatbuffers.Builder(4096)

        def ivec(start, vals, kind="Int32"):
            start(b, len(vals))
            for v in reversed(vals):
                getattr(b, "Prepend" + kind)(v)
            return b.EndVector()

        bufs = []
        for data in self.buffers:
            d = None
            if data:
                b.StartVector(1, len(data), 16)
                b.head = b.head - len(data)
                b.Bytes[b.head:b.head + len(data)] = data
                d = b.EndVector()
            T("Buffer").BufferStart(b)
            if d is not None:
                T("Buffer").BufferAddData(b, d)
            bufs.append(T("Buffer").BufferEnd(b))
        tens = []
        for name, shape, ttype, buf, q in self.tensors:
            n = b.CreateString(name)
            sh = ivec(T("Tensor").TensorStartShapeVector, shape)
            qp = None
            if q is not None:
                scales, zps, axis = q
                sv = ivec(T("QuantizationParameters").QuantizationParametersStartScaleVector, scales, "Float32")
                zv = ivec(T("QuantizationParameters").QuantizationParametersStartZeroPointVector, zps, "Int64")
                Qp = T("QuantizationParameters")
                Qp.QuantizationParametersStart(b)
                Qp.QuantizationParametersAddScale(b, sv)
                Qp.QuantizationParametersAddZeroPoint(b, zv)
                Qp.QuantizationParametersAddQuantizedDimension(b, axis)
                qp = Qp.QuantizationParametersEnd(b)
            Tt = T("Tensor")
            Tt.TensorStart(b)
            Tt.TensorAddShape(b, sh)
            Tt.TensorAddType(b, ttype)
            Tt.TensorAddBuffer(b, buf)
            Tt.TensorAddName(b, n)
            if qp is not None:
                Tt.TensorAddQuantization(b, qp)
            tens.append(Tt.TensorEnd(b))
        ops = []
        for code, ins, outs, opt_name, fields in self.ops:
            iv = ivec(T("Operator").OperatorStartInputsVector, ins)
            ov = ivec(T("Operator").OperatorStartOutputsVector, outs)
            opt = None
            if opt_name:
                m = T(opt_name)
                vecs = {k: ivec(getattr(m, opt_name + "Start" + k + "Vector"), v) for k, v in fields.items()
                        if isinstance(v, list)}
                getattr(m, opt_name + "Start")(b)
                for k, v in fields.items():
                    getattr(m, opt_name + "Add" + k)(b, vecs.get(k, v))
                opt = getattr(m, opt_name + "End")(b)
            O = T("Operator")
            O.OperatorStart(b)
            O.OperatorAddOpcodeIndex(b, code)
            O.OperatorAddInputs(b, iv)
            O.OperatorAddOutputs(b, ov)
            if opt is not None:
                O.OperatorAddBuiltinOptionsType(b, OPTIONS[opt_name])
                O.OperatorAddBuiltinOptions(b, opt)
            ops.append(O.OperatorEnd(b))

        def tvec(start, items):
            start(b, len(items))
            for it in reversed(items):
                b.PrependUOffsetTRelative(it)
            return b.EndVector()

        S = T("SubGraph")
        tv = tvec(S.SubGraphStartTensorsVector, tens)
        inv = ivec(S.SubGraphStartInputsVector, inputs)
        outv = ivec(S.SubGraphStartOutputsVector, outputs)
        opv = tvec(S.SubGraphStartOperatorsVector, ops)
        S.SubGraphStart(b)
        S.SubGraphAddTensors(b, tv)
        S.SubGraphAddInputs(b, inv)
        S.SubGraphAddOutputs(b, outv)
        S.SubGraphAddOperators(b, opv)
        sg = S.SubGraphEnd(b)
        C = T("OperatorCode")
        codes = []
        for code in self.codes:
            C.OperatorCodeStart(b)
            C.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
            C.OperatorCodeAddVersion(b, 1)
            C.OperatorCodeAddBuiltinCode(b, code)
            codes.append(C.OperatorCodeEnd(b))
        M = T("Model")
        cv = tvec(M.ModelStartOperatorCodesVector, codes)
        sv = tvec(M.ModelStartSubgraphsVector, [sg])
        bv = tvec(M.ModelStartBuffersVector, bufs)
        desc = b.CreateString("Kestrel make_tflite_quant_models.py")
        M.ModelStart(b)
        M.ModelAddVersion(b, 3)
        M.ModelAddOperatorCodes(b, cv)
        M.ModelAddSubgraphs(b, sv)
        M.ModelAddDescription(b, desc)
        M.ModelAddBuffers(b, bv)
        b.Finish(M.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())


# ---- the models ----------------------------------------------------------------------------------------


H, C = 16, 16  # input H = W, channels of the convolutions
K = (H // 4) * (H // 4) * 2 * C  # FULLY_CONNECTED's input size


def build(name, act_dtype, float_input, out_dir, rng):
    w = Writer()
    per_channel = act_dtype == np.int8
    wdtype = act_dtype
    qin = Q(0.02, -5 if act_dtype == np.int8 else 123, act_dtype)

    def weights(shape, channels_axis, count):
        if per_channel:
            wv = rng.integers(-127, 128, size=shape).astype(np.int8)
            scales = (rng.uniform(0.002, 0.02, size=count)).astype(np.float32)
            return wv, (scales, np.zeros(count, np.int64)), ([float(s) for s in scales], [0] * count, channels_axis)
        wv = rng.integers(0, 256, size=shape).astype(np.uint8)
        s, z = np.float32(0.01), 131
        return wv, (np.array([s], np.float32), np.int64(z)), ([float(s)], [z], 0)

    def aq(scale, zp8, zpu):
        return Q(scale, zp8 if act_dtype == np.int8 else zpu, act_dtype)

    def qparams(q):
        return ([float(q.scale)], [q.zp], 0)

    def bias_for(qx, ws, count):
        bv = rng.integers(-2000, 2000, size=count).astype(np.int32)
        return bv, ([float(qx.scale * s) for s in ws[0]], [0] * len(ws[0]), 0)

    x_real = rng.uniform(-2.0, 2.5, size=(1, H, H, 3)).astype(np.float32)
    if float_input:
        t_in = w.tensor("input", [1, H, H, 3], np.float32)
        t_q = w.tensor("input_q", [1, H, H, 3], act_dtype, qparams(qin))
        w.op(OPS["QUANTIZE"], [t_in], [t_q])
        x = quantize(x_real, qin)
        model_input = x_real
    else:
        t_in = t_q = w.tensor("input", [1, H, H, 3], act_dtype, qparams(qin))
        x = quantize(x_real, qin)
        model_input = x

    # CONV_2D 3x3 3→C, RELU6
    w1, wq1, wp1 = weights((C, 3, 3, 3), 0, C)
    b1, bp1 = bias_for(qin, wq1, C)
    q1 = calibrated(conv_ref(x, qin, w1, wq1, b1, None, 1, RELU6, False), act_dtype, RELU6)
    t_w1 = w.tensor("conv1/w", w1.shape, wdtype, wp1, w1)
    t_b1 = w.tensor("conv1/b", [C], np.int32, bp1, b1)
    t1 = w.tensor("conv1", [1, H, H, C], act_dtype, qparams(q1))
    w.op(OPS["CONV_2D"], [t_q, t_w1, t_b1], [t1], "Conv2DOptions",
         {"Padding": 0, "StrideW": 1, "StrideH": 1, "FusedActivationFunction": RELU6})
    y1 = conv_ref(x, qin, w1, wq1, b1, q1, 1, RELU6, False)

    # DEPTHWISE_CONV_2D 3x3 s2, RELU
    w2, wq2, wp2 = weights((1, 3, 3, C), 3, C)
    b2, bp2 = bias_for(q1, wq2, C)
    q2 = calibrated(conv_ref(y1, q1, w2, wq2, b2, None, 2, RELU, True), act_dtype, RELU)
    t_w2 = w.tensor("dw/w", w2.shape, wdtype, wp2, w2)
    t_b2 = w.tensor("dw/b", [C], np.int32, bp2, b2)
    t2 = w.tensor("dw", [1, H // 2, H // 2, C], act_dtype, qparams(q2))
    w.op(OPS["DEPTHWISE_CONV_2D"], [t1, t_w2, t_b2], [t2], "DepthwiseConv2DOptions",
         {"Padding": 0, "StrideW": 2, "StrideH": 2, "DepthMultiplier": 1, "FusedActivationFunction": RELU})
    y2 = conv_ref(y1, q1, w2, wq2, b2, q2, 2, RELU, True)

    # CONV_2D 1x1 C→C, no activation
    w3, wq3, wp3 = weights((C, 1, 1, C), 0, C)
    b3, bp3 = bias_for(q2, wq3, C)
    q3 = calibrated(conv_ref(y2, q2, w3, wq3, b3, None, 1, 0, False), act_dtype)
    t_w3 = w.tensor("pw/w", w3.shape, wdtype, wp3, w3)
    t_b3 = w.tensor("pw/b", [C], np.int32, bp3, b3)
    t3 = w.tensor("pw", [1, H // 2, H // 2, C], act_dtype, qparams(q3))
    w.op(OPS["CONV_2D"], [t2, t_w3, t_b3], [t3], "Conv2DOptions", {"Padding": 0, "StrideW": 1, "StrideH": 1})
    y3 = conv_ref(y2, q2, w3, wq3, b3, q3, 1, 0, False)

    # ADD (dw, pw) → other scale; MUL (add, pw)
    q4 = calibrated(dequantize(y2, q2) + dequantize(y3, q3), act_dtype)
    t4 = w.tensor("add", [1, H // 2, H // 2, C], act_dtype, qparams(q4))
    w.op(OPS["ADD"], [t2, t3], [t4], "AddOptions", {"FusedActivationFunction": 0})
    y4 = add_ref(y2, q2, y3, q3, q4)
    q5 = calibrated(dequantize(add_ref(y2, q2, y3, q3, q4), q4) * dequantize(y3, q3), act_dtype)
    t5 = w.tensor("mul", [1, H // 2, H // 2, C], act_dtype, qparams(q5))
    w.op(OPS["MUL"], [t4, t3], [t5], "MulOptions", {"FusedActivationFunction": 0})
    y5 = mul_ref(y4, q4, y3, q3, q5)

    # MAX_POOL_2D 2x2 (same quantization), CONCATENATION with itself, RESHAPE
    t6 = w.tensor("pool", [1, H // 4, H // 4, C], act_dtype, qparams(q5))
    w.op(OPS["MAX_POOL_2D"], [t5], [t6], "Pool2DOptions",
         {"Padding": 1, "StrideW": 2, "StrideH": 2, "FilterWidth": 2, "FilterHeight": 2})
    y6 = y5.reshape(1, H // 4, 2, H // 4, 2, C).max(axis=(2, 4))
    t7 = w.tensor("concat", [1, H // 4, H // 4, 2 * C], act_dtype, qparams(q5))
    w.op(OPS["CONCATENATION"], [t6, t6], [t7], "ConcatenationOptions", {"Axis": 3})
    y7 = np.concatenate([y6, y6], axis=3)
    t_shape = w.tensor("flat/shape", [2], np.int32, None, np.array([1, K], np.int32))
    t8 = w.tensor("flat", [1, K], act_dtype, qparams(q5))
    w.op(OPS["RESHAPE"], [t7, t_shape], [t8], "ReshapeOptions", {"NewShape": [1, K]})
    y8 = y7.reshape(1, K)

    # FULLY_CONNECTED K→10 (per-tensor weights, as TFLite's converter writes them)
    wf = (rng.integers(-127, 128, size=(10, K)) if per_channel else rng.integers(0, 256, size=(10, K))).astype(wdtype)
    bf = rng.integers(-3000, 3000, size=10).astype(np.int32)
    # A weight scale that puts the logits in about [-4, 4], so SOFTMAX and LOGISTIC do not saturate.
    wfz = 0 if per_channel else 120
    unit = fc_ref(y8, q5, wf, (np.array([1.0], np.float32), wfz), bf * 0, None)
    wfq = (np.array([4.0 / float(np.abs(unit).max())], np.float32), wfz)
    bf = (bf // 50).astype(np.int32)
    q9 = calibrated(fc_ref(y8, q5, wf, wfq, bf, None), act_dtype)
    t_wf = w.tensor("fc/w", [10, K], wdtype, ([float(wfq[0][0])], [wfq[1]], 0), wf)
    t_bf = w.tensor("fc/b", [10], np.int32, ([float(q5.scale * wfq[0][0])], [0], 0), bf)
    t9 = w.tensor("fc", [1, 10], act_dtype, qparams(q9))
    w.op(OPS["FULLY_CONNECTED"], [t8, t_wf, t_bf], [t9], "FullyConnectedOptions", {"FusedActivationFunction": 0})
    y9 = fc_ref(y8, q5, wf, wfq, bf, q9)

    # SOFTMAX → (DEQUANTIZE); LOGISTIC (TFLite fixes both outputs' quantization: 1/256, -128 or 0)
    qs = aq(1.0 / 256, -128, 0)
    t10 = w.tensor("softmax", [1, 10], act_dtype, qparams(qs))
    w.op(OPS["SOFTMAX"], [t9], [t10], "SoftmaxOptions", {"Beta": 1.0})
    y10 = softmax_ref(y9, q9, qs)
    t11 = w.tensor("logistic", [1, 10], act_dtype, qparams(qs))
    w.op(OPS["LOGISTIC"], [t9], [t11])
    y11 = lut_ref(y9, q9, qs, lambda v: (np.float32(1) / (np.float32(1) + np.exp(-v))).astype(np.float32))
    if float_input:
        t12 = w.tensor("probabilities", [1, 10], np.float32)
        w.op(OPS["DEQUANTIZE"], [t10], [t12])
        outputs, refs = [t12, t11, t9, t4, t1], [dequantize(y10, qs), y11, y9, y4, y1]
    else:
        outputs, refs = [t10, t11, t9, t4, t1], [y10, y11, y9, y4, y1]
    data = w.finish([t_in], outputs)
    with open(os.path.join(out_dir, name + ".tflite"), "wb") as f:
        f.write(data)
    model_input.tofile(os.path.join(out_dir, name + "_input.bin"))
    for k, r in enumerate(refs):
        r.tofile(os.path.join(out_dir, "%s_out%d.bin" % (name, k)))
    return data, model_input, refs, [qs, qs, q9, q4, q1]


def armnn_check(path, model_input, refs, qs):
    """Runs the file on Arm NN's CpuRef; returns the largest difference from the reference, in LSB."""
    try:
        import pyarmnn as ann
    except ImportError:
        return None
    parser = ann.ITfLiteParser()
    net = parser.CreateNetworkFromBinaryFile(path)
    in_name = parser.GetSubgraphInputTensorNames(0)[0]
    in_info = parser.GetNetworkInputBindingInfo(0, in_name)
    out_names = parser.GetSubgraphOutputTensorNames(0)
    runtime = ann.IRuntime(ann.CreationOptions())
    opt, _ = ann.Optimize(net, [ann.BackendId("CpuRef")], runtime.GetDeviceSpec(), ann.OptimizerOptions())
    net_id, _ = runtime.LoadNetwork(opt)
    out_infos = [parser.GetNetworkOutputBindingInfo(0, n) for n in out_names]
    inputs = ann.make_input_tensors([in_info], [model_input])
    outputs = ann.make_output_tensors(out_infos)
    runtime.EnqueueWorkload(net_id, inputs, outputs)
    got = ann.workload_tensors_to_ndarray(outputs)
    worst, differing, total = 0.0, 0, 0
    for g, r, q in zip(got, refs, qs):
        g = np.asarray(g).reshape(r.shape)
        if r.dtype == np.float32:
            d = np.abs(g.astype(np.float64) - r) / float(q.scale)
        else:
            d = np.abs(g.astype(np.int64) - r.astype(np.int64))
        worst = max(worst, float(d.max()))
        differing += int((d > 1e-6).sum())
        total += d.size
    print("  Arm NN CpuRef: %d of %d output values differ from TFLite's integer arithmetic" % (differing, total))
    return worst


# ---- post-training quantization of a float TFLite model (BlazeFace 128, from the model cache) -----------

READ_OPS = {v: k for k, v in OPS.items()}
READ_OPS.update({19: "RELU", 34: "PAD"})


def read_float_model(path):
    """The float model's tensors (name, shape, type, constant values) and operators, in file order."""
    M = T("Model").Model
    buf = open(path, "rb").read()
    m = M.GetRootAs(buf, 0)
    sg = m.Subgraphs(0)
    tensors = []
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        data = m.Buffers(t.Buffer()).DataAsNumpy() if t.Buffer() else 0
        value = None
        if not isinstance(data, int) and len(data):
            dt = {0: np.float32, 1: np.float16, 2: np.int32}[t.Type()]
            value = np.frombuffer(bytes(data), dt).reshape(t.ShapeAsNumpy())
        tensors.append({"name": t.Name().decode(), "shape": list(t.ShapeAsNumpy()), "value": value})
    ops = []
    for i in range(sg.OperatorsLength()):
        o = sg.Operators(i)
        code = m.OperatorCodes(o.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        opts = {}
        table = o.BuiltinOptions()
        kind = {3: "Conv2DOptions", 4: "DepthwiseConv2DOptions", 17: "Pool2DOptions", 0: "AddOptions",
                2: "ConcatenationOptions"}.get(builtin)
        if kind and table is not None:
            cls = getattr(T(kind), kind)()
            cls.Init(table.Bytes, table.Pos)
            for f in ("Padding", "StrideW", "StrideH", "FilterWidth", "FilterHeight", "FusedActivationFunction",
                      "Axis", "DilationWFactor", "DilationHFactor"):
                if hasattr(cls, f):
                    opts[f] = getattr(cls, f)()
        ops.append({"op": READ_OPS.get(builtin, builtin), "ins": list(o.InputsAsNumpy()),
                    "outs": list(o.OutputsAsNumpy()), "opts": opts})
    return tensors, ops, [sg.Inputs(i) for i in range(sg.InputsLength())], \
        [sg.Outputs(i) for i in range(sg.OutputsLength())]


def float_conv(x, w, b, stride, same, depthwise):
    _, H, W, C = x.shape
    kh, kw = w.shape[1], w.shape[2]
    if same:
        oh, ow = -(-H // stride), -(-W // stride)
        ph, pw = max((oh - 1) * stride + kh - H, 0) // 2, max((ow - 1) * stride + kw - W, 0) // 2
    else:
        oh, ow, ph, pw = (H - kh) // stride + 1, (W - kw) // stride + 1, 0, 0
    xs = np.zeros((H + kh + stride, W + kw + stride, C), np.float64)
    xs[ph:ph + H, pw:pw + W] = x[0]
    acc = np.zeros((oh, ow, w.shape[3] if depthwise else w.shape[0]), np.float64)
    for ky in range(kh):
        for kx in range(kw):
            tap = xs[ky:ky + (oh - 1) * stride + 1:stride, kx:kx + (ow - 1) * stride + 1:stride]
            acc += tap * w[0, ky, kx] if depthwise else tap @ w[:, ky, kx, :].T.astype(np.float64)
    return (acc + b)[None]


def run_model(tensors, ops, inputs, x, quantized=None):
    """Runs the graph: in float (quantized None) or on TFLite's integer arithmetic (quantized: the
    plan of quantize_model). Returns every tensor's values."""
    v = {inputs[0]: x}
    for o in ops:
        kind, ins, outs, opts = o["op"], o["ins"], o["outs"], o["opts"]
        act = opts.get("FusedActivationFunction", 0)
        if o.get("fused_relu"):
            act = RELU
        val = lambda i: v[i] if i in v else tensors[i]["value"]
        if kind == "DEQUANTIZE":
            v[outs[0]] = tensors[ins[0]]["value"].astype(np.float32)
            continue
        if quantized is None:
            if kind in ("CONV_2D", "DEPTHWISE_CONV_2D"):
                y = float_conv(val(ins[0]), val(ins[1]), val(ins[2]), opts["StrideH"], opts["Padding"] == 0,
                               kind == "DEPTHWISE_CONV_2D")
            elif kind == "ADD":
                y = val(ins[0]).astype(np.float64) + val(ins[1])
            elif kind == "RELU":
                y = val(ins[0])
                act = RELU
            elif kind == "PAD":
                y = np.pad(val(ins[0]), val(ins[1]))
            elif kind == "RESHAPE":
                y = val(ins[0]).reshape(tensors[outs[0]]["shape"])
            elif kind == "MAX_POOL_2D":
                x0 = val(ins[0])
                k = opts["FilterHeight"]
                y = x0.reshape(1, x0.shape[1] // k, k, x0.shape[2] // k, k, x0.shape[3]).max(axis=(2, 4))
            elif kind == "CONCATENATION":
                y = np.concatenate([val(i) for i in ins], axis=opts["Axis"])
            else:
                raise SystemExit("quantize: op %s is not handled" % kind)
            if act == RELU:
                y = np.maximum(y, 0)
            v[outs[0]] = np.asarray(y, np.float32)
            continue
        q = quantized["q"]
        qi = lambda i: q[i]
        if kind in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            wv, wq = quantized["weights"][ins[1]]
            y = conv_ref(val(ins[0]), qi(ins[0]), wv, wq, quantized["bias"][ins[2]], qi(outs[0]), opts["StrideH"], act,
                         kind == "DEPTHWISE_CONV_2D", opts["Padding"] == 0)
        elif kind == "ADD":
            y = add_ref(val(ins[0]), qi(ins[0]), val(ins[1]), qi(ins[1]), qi(outs[0]))
            if act == RELU:
                y = np.maximum(y, act_range(RELU, qi(outs[0]))[0]).astype(np.int8)
        elif kind == "RELU":  # tied to its input's quantization: the clamp at the zero point
            y = np.maximum(val(ins[0]), qi(ins[0]).zp).astype(np.int8)
        elif kind == "PAD":  # TFLite pads a quantized tensor with its zero point
            y = np.pad(val(ins[0]), val(ins[1]), constant_values=qi(ins[0]).zp)
        elif kind == "RESHAPE":
            y = val(ins[0]).reshape(tensors[outs[0]]["shape"])
        elif kind == "MAX_POOL_2D":
            x0 = val(ins[0])
            k = opts["FilterHeight"]
            y = x0.reshape(1, x0.shape[1] // k, k, x0.shape[2] // k, k, x0.shape[3]).max(axis=(2, 4))
        elif kind == "CONCATENATION":
            y = np.concatenate([val(i) for i in ins], axis=opts["Axis"])
        v[outs[0]] = y
    return v


def quantize_model(src, input_path, out_dir, name):
    """int8 post-training quantization as TFLite's converter does it: per-channel symmetric weights,
    int32 biases, per-tensor asymmetric activations calibrated on one input, a RELU after an ADD or a
    conv with no other reader fused into it, PAD/RESHAPE/MAX_POOL_2D/RELU outputs quantized as their
    input and CONCATENATION's inputs as its output; float input and outputs through QUANTIZE and
    DEQUANTIZE. Writes <name>.tflite, <name>_input.bin, <name>_out<k>.bin (TFLite's int8 results,
    dequantized) and <name>_float_out<k>.bin (the float model's)."""
    tensors, ops, inputs, outputs = read_float_model(src)
    x = np.fromfile(input_path, np.float32).reshape(tensors[inputs[0]]["shape"])
    for o in ops:  # fp16 weights behind DEQUANTIZE become the float constants they stand for
        if o["op"] == "DEQUANTIZE":
            tensors[o["outs"][0]]["value"] = tensors[o["ins"][0]]["value"].astype(np.float32)
    ops = [o for o in ops if o["op"] != "DEQUANTIZE"]
    readers = {}
    for o in ops:
        for i in o["ins"]:
            readers[i] = readers.get(i, 0) + 1
    fused = []
    producer = {}
    for o in ops:
        if o["op"] == "RELU" and o["ins"][0] in producer and readers.get(o["ins"][0]) == 1 and \
                o["ins"][0] not in outputs and producer[o["ins"][0]]["op"] in ("ADD", "CONV_2D", "DEPTHWISE_CONV_2D") \
                and producer[o["ins"][0]]["opts"].get("FusedActivationFunction", 0) == 0:
            p = producer[o["ins"][0]]
            p["fused_relu"] = True
            p["outs"] = o["outs"]
            producer[o["outs"][0]] = p
            continue
        fused.append(o)
        for t in o["outs"]:
            producer[t] = o
    ops = fused
    real = run_model(tensors, ops, inputs, x)
    # Tensors that must share a quantization (union-find), then one calibration per group.
    parent = {}
    find = lambda t: t if parent.get(t, t) == t else find(parent[t])
    def tie(a, b):
        parent[find(a)] = find(b)
    for o in ops:
        if o["op"] in ("PAD", "RESHAPE", "MAX_POOL_2D", "RELU"):
            tie(o["outs"][0], o["ins"][0])
        elif o["op"] == "CONCATENATION":
            for i in o["ins"]:
                tie(i, o["outs"][0])
    groups = {}
    for t in real:
        groups.setdefault(find(t), []).append(t)
    q = {}
    for members in groups.values():
        lo = min(min(float(real[t].min()), 0.0) for t in members)
        hi = max(max(float(real[t].max()), 0.0) for t in members)
        scale = np.float32(max(hi - lo, 1e-6) / 255.0)
        zp = int(np.clip(np.round(-128 - lo / float(scale)), -128, 127))
        for t in members:
            q[t] = Q(scale, zp, np.int8)
    weights, bias = {}, {}
    for o in ops:
        if o["op"] in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            w = tensors[o["ins"][1]]["value"].astype(np.float32)
            axis = 3 if o["op"] == "DEPTHWISE_CONV_2D" else 0
            other = tuple(a for a in range(4) if a != axis)
            ws = (np.maximum(np.abs(w).max(axis=other), 1e-8) / 127.0).astype(np.float32)
            shape = [1, 1, 1, 1]
            shape[axis] = -1
            wv = np.clip(round_away(w / ws.reshape(shape)), -127, 127).astype(np.int8)
            weights[o["ins"][1]] = (wv, (ws, np.zeros(len(ws), np.int64)))
            bscale = (np.float64(q[o["ins"][0]].scale) * ws.astype(np.float64))
            bias[o["ins"][2]] = np.round(tensors[o["ins"][2]]["value"] / bscale).astype(np.int32)
    qv = run_model(tensors, ops, inputs, quantize(x, q[inputs[0]]),
                   {"q": q, "weights": weights, "bias": bias})

    w = Writer()
    ids = {}
    def tensor_id(t):
        if t in ids:
            return ids[t]
        info = tensors[t]
        if t in weights:
            wv, (ws, _) = weights[t]
            axis = 3 if info["shape"][0] == 1 and len(info["shape"]) == 4 and any(
                o["op"] == "DEPTHWISE_CONV_2D" and o["ins"][1] == t for o in ops) else 0
            ids[t] = w.tensor(info["name"], info["shape"], np.int8, ([float(v) for v in ws], [0] * len(ws), axis), wv)
        elif t in bias:
            conv = next(o for o in ops if o["op"] in option_names and len(o["ins"]) > 2 and o["ins"][2] == t)
            ws = weights[conv["ins"][1]][1][0]
            sc = [float(np.float32(q[conv["ins"][0]].scale * s)) for s in ws]
            ids[t] = w.tensor(info["name"], info["shape"], np.int32, (sc, [0] * len(sc), 0), bias[t])
        elif info["value"] is not None and info["value"].dtype == np.int32:
            ids[t] = w.tensor(info["name"], info["shape"], np.int32, None, info["value"])
        else:
            ids[t] = w.tensor(info["name"], info["shape"], np.int8, ([float(q[t].scale)], [q[t].zp], 0))
        return ids[t]
    t_in = w.tensor(tensors[inputs[0]]["name"] + "_f32", tensors[inputs[0]]["shape"], np.float32)
    w.op(OPS["QUANTIZE"], [t_in], [tensor_id(inputs[0])])
    option_names = {"CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
                    "MAX_POOL_2D": "Pool2DOptions", "ADD": "AddOptions", "CONCATENATION": "ConcatenationOptions"}
    for o in ops:
        kind = o["op"]
        fields = {k: v for k, v in o["opts"].items() if k not in ("DilationWFactor", "DilationHFactor")}
        if o.get("fused_relu"):
            fields["FusedActivationFunction"] = RELU
        if kind == "DEPTHWISE_CONV_2D":
            fields["DepthMultiplier"] = 1
        if kind == "RESHAPE":
            fields = {"NewShape": [int(d) for d in tensors[o["outs"][0]]["shape"]]}
        code = {"RELU": 19, "PAD": 34}.get(kind, OPS.get(kind))
        opt = option_names.get(kind) or ("ReshapeOptions" if kind == "RESHAPE" else None)
        w.op(code, [tensor_id(i) for i in o["ins"]], [tensor_id(t) for t in o["outs"]], opt,
             fields if opt else None)
    outs = []
    for k, t in enumerate(outputs):
        outs.append(w.tensor(tensors[t]["name"] + "_f32", tensors[t]["shape"], np.float32))
        w.op(OPS["DEQUANTIZE"], [tensor_id(t)], [outs[-1]])
    data = w.finish([t_in], outs)
    os.makedirs(out_dir, exist_ok=True)
    open(os.path.join(out_dir, name + ".tflite"), "wb").write(data)
    x.tofile(os.path.join(out_dir, name + "_input.bin"))
    for k, t in enumerate(outputs):
        dequantize(qv[t], q[t]).tofile(os.path.join(out_dir, "%s_out%d.bin" % (name, k)))
        real[t].astype(np.float32).tofile(os.path.join(out_dir, "%s_float_out%d.bin" % (name, k)))
        a, b = dequantize(qv[t], q[t]).ravel().astype(np.float64), real[t].ravel().astype(np.float64)
        print("%s output %d: int8 vs float cosine %.4f" % (name, k, a @ b / np.sqrt((a @ a) * (b @ b))))
    return os.path.join(out_dir, name + ".tflite"), x, [dequantize(qv[t], q[t]) for t in outputs], \
        [q[t] for t in outputs]


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "quantize":  # quantize <float.tflite> <input.f32> <out_dir> <name>
        path, x, refs, qs = quantize_model(*sys.argv[2:])
        worst = armnn_check(path, x, refs, qs)
        print("%s: Arm NN CpuRef vs the reference: %s" % (sys.argv[5], "not run" if worst is None else
                                                          "max %.3g LSB" % worst))
        return
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "tflite_quant")
    os.makedirs(out_dir, exist_ok=True)
    for name, dtype, float_input, seed in [("int8_cnn", np.int8, True, 1), ("int8_io", np.int8, False, 1),
                                           ("uint8_cnn", np.uint8, True, 2)]:
        _, model_input, refs, qs = build(name, dtype, float_input, out_dir, np.random.default_rng(seed))
        worst = armnn_check(os.path.join(out_dir, name + ".tflite"), model_input, refs, qs)
        print("%s: written; Arm NN CpuRef vs the reference: %s" %
              (name, "not run" if worst is None else "max %.3g LSB" % worst))
        if worst is not None and worst > 1.0 + 1e-6:
            sys.exit("%s: Arm NN differs by more than 1 LSB" % name)


if __name__ == "__main__":
    main()
