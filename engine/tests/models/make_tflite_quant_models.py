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


def conv_ref(x, qx, w, wq, bias, qy, stride, act, depthwise):
    """x [1,H,W,C]; w OHWI ([1,KH,KW,C] for depthwise); SAME padding; per-channel or per-tensor wq."""
    _, H, W, C = x.shape
    kh, kw = w.shape[1], w.shape[2]
    cout = w.shape[3] if depthwise else w.shape[0]
    oh, ow = -(-H // stride), -(-W // stride)
    ph = max((oh - 1) * stride + kh - H, 0) // 2
    pw = max((ow - 1) * stride + kw - W, 0) // 2
    xs = x.astype(np.int64) - qx.zp
    ws, wz = wq
    acc = np.zeros((oh, ow, cout), np.int64)
    for oy in range(oh):
        for ox in range(ow):
            for ky in range(kh):
                for kx in range(kw):
                    iy, ix = oy * stride - ph + ky, ox * stride - pw + kx
                    if 0 <= iy < H and 0 <= ix < W:
                        if depthwise:
                            acc[oy, ox] += xs[0, iy, ix] * (w[0, ky, kx].astype(np.int64) - wz)
                        else:
                            acc[oy, ox] += (w[:, ky, kx, :].astype(np.int64) - np.reshape(wz, (-1, 1))) @ xs[0, iy, ix]
    acc += bias
    if qy is None:  # calibration: the real values
        return (acc * (float(qx.scale) * np.asarray(ws, np.float64))).astype(np.float32)
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


def main():
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
