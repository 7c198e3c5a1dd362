#!/usr/bin/python3
"""make_tflite_reference.py — reference outputs of TFLite models from Arm NN's CpuRef backend.

    make_tflite_reference.py SCHEMA PHOTO OUT_DIR RANGE MODEL.tflite [MODEL.tflite ...]

For each model: the input is PHOTO (a binary PPM) centre-cropped to the model's aspect ratio, sampled
nearest to its input size and scaled to RANGE ("-1,1" or "0,1"); the input and every output (in the
model's output order) are written as raw float32 to OUT_DIR/<model>_input.f32, <model>_out<k>.f32.

Debian's Arm NN 20.08 (python3-pyarmnn, libarmnntfliteparser22, libarmnn-cpuref-backend22) runs the
model after exact rewrites its TFLite parser needs, made on the model's JSON form (flatc with SCHEMA,
Kestrel's engine/schema/tflite_subset.fbs):
  - DEQUANTIZE of an fp16 constant and DENSIFY of a sparse constant become dense float32 constants;
  - PRELU (not in the parser) becomes relu(x) + alpha * (x - relu(x));
  - RESIZE_BILINEAR with half_pixel_centers (the parser drops the flag) becomes an edge pad (slices and
    concatenation), an asymmetric resize to 2k times the padded size and a stride-2 slice, which
    samples the same points: (o + 0.5)/k - 0.5 of the input is (2o + 1 + k)/(2k) of the padded input;
  - DEPTH_TO_SPACE (not in the parser) becomes a TRANSPOSE_CONV with a one-hot filter;
  - MediaPipe's Convolution2DTransposeBias becomes TRANSPOSE_CONV then ADD of the bias;
  - MediaPipe's Landmarks2TransformMatrix, TransformLandmarks and TransformTensorBilinear (version 2)
    are computed here in numpy: their outputs become network inputs and their inputs network outputs,
    and the network runs again until every value is settled (once per level of nesting).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import flatbuffers.flexbuffers as flexbuffers  # python3-flatbuffers
except ImportError:
    flexbuffers = None
import pyarmnn as ann

DENSE, SPARSE_CSR = "DENSE", "SPARSE_CSR"
NP_TYPES = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "UINT8": np.uint8, "INT8": np.int8}


class Model:
    """The model's JSON form and helpers to edit it."""

    def __init__(self, js, names):
        self.js = js
        self.codes_by_name = {n: v for v, n in names.items()}
        self.sg = js["subgraphs"][0]
        self.tensors = self.sg["tensors"]
        self.buffers = js["buffers"]
        self.codes = js["operator_codes"]

    def custom_code(self, op):
        return self.codes[op.get("opcode_index", 0)].get("custom_code")

    def data(self, t):
        """Tensor t's constant as a numpy array (None for an activation)."""
        tensor = self.tensors[t]
        buf = self.buffers[tensor.get("buffer", 0)] if tensor.get("buffer", 0) else {}
        raw = buf.get("data")
        if not raw:
            return None
        return np.frombuffer(bytes(raw), NP_TYPES[tensor.get("type", "FLOAT32")]).copy()

    def set_const(self, t, array):
        """Makes tensor t a float32/int32 constant holding `array` (a new buffer)."""
        array = np.ascontiguousarray(array)
        self.buffers.append({"data": list(array.tobytes())})
        tensor = self.tensors[t]
        tensor["buffer"] = len(self.buffers) - 1
        tensor["type"] = "FLOAT32" if array.dtype == np.float32 else "INT32"
        tensor.pop("sparsity", None)

    def new_tensor(self, name, shape, array=None, dtype="FLOAT32"):
        self.tensors.append({"name": name, "shape": list(shape), "type": dtype})
        t = len(self.tensors) - 1
        if array is not None:
            self.set_const(t, array)
        return t

    def opcode(self, builtin):
        value = self.codes_by_name[builtin]
        for i, c in enumerate(self.codes):
            if max(c.get("deprecated_builtin_code", 0), self.codes_by_name.get(c.get("builtin_code"), 0)) == value:
                if "custom_code" not in c:
                    return i
        # Arm NN 20.08 reads only the schema-3 byte (a 3a file repeats codes up to 127 there).
        code = {"deprecated_builtin_code": min(value, 127), "builtin_code": builtin, "version": 1}
        self.codes.append(code)
        return len(self.codes) - 1

    def make_op(self, builtin, inputs, outputs, options_type=None, options=None):
        op = {"opcode_index": self.opcode(builtin), "inputs": inputs, "outputs": outputs}
        if options_type:
            op["builtin_options_type"] = options_type
            op["builtin_options"] = options or {}
        return op


def builtin_names(schema):
    """BuiltinOperator value -> name, from the schema's enum."""
    import re

    text = open(schema).read()
    body = text[text.index("enum BuiltinOperator") :]
    body = body[: body.index("}")]
    return {int(v): n for n, v in re.findall(r"([A-Z_0-9]+)\s*=\s*(\d+)", body)}


def densify(values, shape, sparsity):
    """TFLite's sparse format → a dense array of `shape` (the traversal TFLite's FormatConverter makes)."""
    order = sparsity["traversal_order"]
    block_map = sparsity.get("block_map", [])
    meta = sparsity["dim_metadata"]
    rank = len(shape)
    block_size = {}
    for level, dim in enumerate(order):
        if dim >= rank:
            block_size[block_map[dim - rank]] = meta[level]["dense_size"]
    out = np.zeros(shape, values.dtype)
    index = [0] * len(order)

    def vector(v):
        return v["values"] if v else []

    def walk(level, pos):
        if level == len(order):
            orig = []
            for d in range(rank):
                i = index[d]
                if d in block_size:
                    i = i * block_size[d] + index[rank + block_map.index(d)]
                orig.append(i)
            out[tuple(orig)] = values[pos]
            return
        m = meta[level]
        dim = order[level]
        if m.get("format", DENSE) == DENSE:
            n = m["dense_size"]
            for i in range(n):
                index[dim] = i
                walk(level + 1, pos * n + i)
        else:
            segments = vector(m.get("array_segments"))
            indices = vector(m.get("array_indices"))
            for j in range(segments[pos], segments[pos + 1]):
                index[dim] = indices[j]
                walk(level + 1, j)

    walk(0, 0)
    return out


def rewrite(model, names):
    """The exact rewrites of the module doc; returns the custom ops left for numpy."""
    ops = model.sg["operators"]
    out_ops, custom = [], []
    for op in ops:
        code = model.codes[op.get("opcode_index", 0)]
        b = code.get("builtin_code", 0)
        name = b if isinstance(b, str) else names.get(max(b, code.get("deprecated_builtin_code", 0)))
        ins, outs = op.get("inputs", []), op.get("outputs", [])
        if name == "DENSIFY":
            t = model.tensors[ins[0]]
            values = model.data(ins[0])
            dense = densify(values, t["shape"], t["sparsity"])
            model.set_const(outs[0], dense.astype(np.float32))
            continue
        if name == "DEQUANTIZE" and model.data(ins[0]) is not None:
            model.set_const(outs[0], model.data(ins[0]).astype(np.float32))
            continue
        if name == "PRELU":
            x, alpha, y = ins[0], ins[1], outs[0]
            shape = model.tensors[y]["shape"]
            pos = model.new_tensor(model.tensors[y]["name"] + "/pos", shape)
            neg = model.new_tensor(model.tensors[y]["name"] + "/neg", shape)
            scaled = model.new_tensor(model.tensors[y]["name"] + "/scaled", shape)
            out_ops.append(model.make_op("RELU", [x], [pos]))
            out_ops.append(model.make_op("SUB", [x, pos], [neg], "SubOptions"))
            out_ops.append(model.make_op("MUL", [neg, alpha], [scaled], "MulOptions"))
            out_ops.append(model.make_op("ADD", [pos, scaled], [y], "AddOptions"))
            continue
        if name == "RESIZE_BILINEAR" and op.get("builtin_options", {}).get("half_pixel_centers"):
            out_ops.extend(half_pixel_resize(model, ins[0], outs[0]))
            continue
        if name == "DEPTH_TO_SPACE":
            out_ops.extend(depth_to_space(model, ins[0], outs[0], op["builtin_options"]["block_size"]))
            continue
        if name == "CUSTOM" and code.get("custom_code") == "Convolution2DTransposeBias":
            out_ops.extend(transpose_conv_bias(model, op))
            continue
        if name == "CUSTOM":
            custom.append(op)
            continue
        out_ops.append(op)
    model.sg["operators"] = out_ops
    return custom


def half_pixel_resize(model, x, y):
    n, h, w, c = model.tensors[x]["shape"]
    _, oh, ow, _ = model.tensors[y]["shape"]
    if oh % h or ow % w or oh // h != ow // w:
        raise SystemExit("half-pixel resize %dx%d -> %dx%d is not an integer upscale" % (h, w, oh, ow))
    k = oh // h
    base = model.tensors[y]["name"]
    ops = []

    def i32(name, values):
        return model.new_tensor(base + "/" + name, [len(values)], np.array(values, np.int32), "INT32")

    cur, ch, cw = x, h, w
    for axis in (1, 2):
        size = [n, ch, cw, c]
        edge = list(size)
        edge[axis] = 1
        first = model.new_tensor(base + "/first%d" % axis, edge)
        last = model.new_tensor(base + "/last%d" % axis, edge)
        begin_last = [0, 0, 0, 0]
        begin_last[axis] = size[axis] - 1
        ops.append(model.make_op("SLICE", [cur, i32("b0_%d" % axis, [0, 0, 0, 0]), i32("s_%d" % axis, edge)], [first]))
        ops.append(model.make_op("SLICE", [cur, i32("b1_%d" % axis, begin_last), i32("s1_%d" % axis, edge)], [last]))
        padded = list(size)
        padded[axis] += 2
        pt = model.new_tensor(base + "/padded%d" % axis, padded)
        ops.append(
            model.make_op(
                "CONCATENATION", [first, cur, last], [pt], "ConcatenationOptions", {"axis": axis}
            )
        )
        cur, ch, cw = pt, padded[1], padded[2]
    big = [n, 2 * k * ch, 2 * k * cw, c]
    bt = model.new_tensor(base + "/upsampled", big)
    ops.append(
        model.make_op(
            "RESIZE_BILINEAR", [cur, i32("size", big[1:3])], [bt], "ResizeBilinearOptions", {}
        )
    )
    ops.append(
        model.make_op(
            "STRIDED_SLICE",
            [bt, i32("begin", [0, k + 1, k + 1, 0]), i32("end", [n, k + 1 + 2 * oh, k + 1 + 2 * ow, c]), i32("strides", [1, 2, 2, 1])],
            [y],
            "StridedSliceOptions",
            {},
        )
    )
    return ops


def depth_to_space(model, x, y, block):
    n, h, w, c = model.tensors[x]["shape"]
    cout = c // (block * block)
    weights = np.zeros((cout, block, block, c), np.float32)  # OHWI
    for i in range(block):
        for j in range(block):
            for o in range(cout):
                weights[o, i, j, (i * block + j) * cout + o] = 1.0
    base = model.tensors[y]["name"]
    wt = model.new_tensor(base + "/one_hot", weights.shape, weights)
    shape = model.new_tensor(base + "/shape", [4], np.array(model.tensors[y]["shape"], np.int32), "INT32")
    opts = {"padding": "VALID", "stride_w": block, "stride_h": block}
    return [model.make_op("TRANSPOSE_CONV", [shape, wt, x], [y], "TransposeConvOptions", opts)]


def transpose_conv_bias(model, op):
    x, wt, bias = op["inputs"]
    y = op["outputs"][0]
    raw = bytes(op.get("custom_options", []))
    padding, stride_w, stride_h = np.frombuffer(raw[:12], np.int32)
    base = model.tensors[y]["name"]
    shape = model.new_tensor(base + "/shape", [4], np.array(model.tensors[y]["shape"], np.int32), "INT32")
    pre = model.new_tensor(base + "/no_bias", model.tensors[y]["shape"])
    opts = {"padding": "SAME" if padding == 1 else "VALID", "stride_w": int(stride_w), "stride_h": int(stride_h)}
    return [
        model.make_op("TRANSPOSE_CONV", [shape, wt, x], [pre], "TransposeConvOptions", opts),
        model.make_op("ADD", [pre, bias], [y], "AddOptions"),
    ]


# ---- MediaPipe's custom ops (version 2), in numpy --------------------------------------------------------


def landmarks_to_transform_matrix(landmarks, o):
    pts = landmarks.reshape(-1, 3)[:, :2].astype(np.float64)
    left, right = pts[o["left_rotation_idx"]], pts[o["right_rotation_idx"]]
    rotation = o["target_rotation_radians"] - np.arctan2(right[1] - left[1], right[0] - left[0])
    cr, sr = np.cos(rotation), np.sin(rotation)
    rot = np.array([[cr, -sr], [sr, cr]])
    subset = pts[o["subset_idxs"]] @ rot.T
    lo, hi = subset.min(axis=0), subset.max(axis=0)
    width, height = hi - lo
    center = rot.T @ ((lo + hi) / 2)  # back to the image's orientation
    sx = o["scale_x"] * width / o["output_width"]
    sy = o["scale_y"] * height / o["output_height"]
    back = np.array([[cr, sr], [-sr, cr]])  # rotation by -rotation
    m = np.eye(4)
    m[:2, :2] = back @ np.diag([sx, sy])
    m[:2, 3] = center + m[:2, :2] @ np.array([-o["output_width"] / 2, -o["output_height"] / 2])
    return m.astype(np.float32).reshape(1, 4, 4)


def transform_landmarks(landmarks, matrix):
    m = matrix.reshape(4, 4).astype(np.float64)
    pts = landmarks.reshape(landmarks.shape[0], landmarks.shape[1], -1).astype(np.float64)
    out = pts.copy()
    out[..., :2] = pts[..., :2] @ m[:2, :2].T + m[:2, 3]
    return out.astype(np.float32)


def transform_tensor_bilinear(image, matrix, o):
    m = matrix.reshape(4, 4).astype(np.float64)
    n, h, w, c = image.shape
    oh, ow = o["output_height"], o["output_width"]
    out = np.zeros((n, oh, ow, c), np.float64)
    for y in range(oh):
        for x in range(ow):
            # Version 2 samples pixel centres: out (x + 0.5, y + 0.5) → in (u, v) + 0.5.
            u = m[0, 0] * (x + 0.5) + m[0, 1] * (y + 0.5) + m[0, 3] - 0.5
            v = m[1, 0] * (x + 0.5) + m[1, 1] * (y + 0.5) + m[1, 3] - 0.5
            if not (0 <= u <= w - 1 and 0 <= v <= h - 1):
                continue
            x0, y0 = int(np.floor(u)), int(np.floor(v))
            fx, fy = u - x0, v - y0

            def at(yy, xx):
                return image[:, yy, xx, :] if 0 <= xx < w and 0 <= yy < h else 0.0

            top = (1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1)
            bottom = (1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1)
            out[:, y, x, :] = (1 - fy) * top + fy * bottom
    return out.astype(np.float32)


def run_custom(model, op, values):
    code = model.custom_code(op)
    ins = [values[t] for t in op["inputs"]]
    options = flexbuffers.Loads(bytes(op["custom_options"])) if op.get("custom_options") else {}
    if code == "Landmarks2TransformMatrix":
        return landmarks_to_transform_matrix(ins[0], options)
    if code == "TransformLandmarks":
        return transform_landmarks(ins[0], ins[1])
    if code == "TransformTensorBilinear":
        return transform_tensor_bilinear(ins[0], ins[1], options)
    raise SystemExit("custom op %s has no numpy reference" % code)


# ---- running -----------------------------------------------------------------------------------------------


def arm_nn_run(path, feeds):
    """Runs the .tflite at `path` on CpuRef; feeds maps input name → array; returns name → array."""
    parser = ann.ITfLiteParser()
    network = parser.CreateNetworkFromBinaryFile(path)
    runtime = ann.IRuntime(ann.CreationOptions())
    optimized, _ = ann.Optimize(network, [ann.BackendId("CpuRef")], runtime.GetDeviceSpec(), ann.OptimizerOptions())
    net_id, _ = runtime.LoadNetwork(optimized)
    in_names = parser.GetSubgraphInputTensorNames(0)
    out_names = parser.GetSubgraphOutputTensorNames(0)
    in_infos = [parser.GetNetworkInputBindingInfo(0, n) for n in in_names]
    out_infos = [parser.GetNetworkOutputBindingInfo(0, n) for n in out_names]
    inputs = ann.make_input_tensors(in_infos, [np.ascontiguousarray(feeds[n], np.float32) for n in in_names])
    outputs = ann.make_output_tensors(out_infos)
    runtime.EnqueueWorkload(net_id, inputs, outputs)
    results = ann.workload_tensors_to_ndarray(outputs)
    runtime.UnloadNetwork(net_id)
    return dict(zip(out_names, results))


def photo_input(photo, shape, lo, hi):
    with open(photo, "rb") as f:
        magic, dims, maxval = f.readline(), f.readline(), f.readline()
        while dims.startswith(b"#"):
            dims = maxval
            maxval = f.readline()
        if magic.strip() != b"P6":
            raise SystemExit(photo + ": not a binary PPM")
        width, height = map(int, dims.split())
        pixels = np.frombuffer(f.read(width * height * 3), np.uint8).reshape(height, width, 3)
    _, h, w, _ = shape
    # Centre crop to the model's aspect ratio, then nearest samples at pixel centres.
    crop_w = min(width, height * w // h)
    crop_h = min(height, width * h // w)
    x0, y0 = (width - crop_w) // 2, (height - crop_h) // 2
    ys = y0 + ((np.arange(h) + 0.5) * crop_h / h).astype(int)
    xs = x0 + ((np.arange(w) + 0.5) * crop_w / w).astype(int)
    img = pixels[ys][:, xs].astype(np.float32) / 255.0
    return (lo + img * (hi - lo)).reshape(shape).astype(np.float32)


def main():
    if len(sys.argv) < 6:
        raise SystemExit(__doc__)
    schema, photo, out_dir, value_range = sys.argv[1:5]
    lo, hi = map(float, value_range.split(","))
    names = builtin_names(schema)
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for path in sys.argv[5:]:
            stem = os.path.basename(path)[: -len(".tflite")]
            subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", tmp, schema, "--", path], check=True)
            with open(os.path.join(tmp, stem + ".json")) as f:
                model = Model(json.load(f), names)
            graph_inputs = list(model.sg["inputs"])
            graph_outputs = list(model.sg["outputs"])
            custom = rewrite(model, names)
            # Custom ops' outputs become inputs, their activation inputs outputs.
            custom_outs = [op["outputs"][0] for op in custom]
            custom_ins = sorted({t for op in custom for t in op["inputs"] if model.data(t) is None} - set(custom_outs))
            model.sg["inputs"] = graph_inputs + custom_outs
            model.sg["outputs"] = graph_outputs + [t for t in custom_ins if t not in graph_outputs]
            for t in model.tensors:
                t.pop("shape_signature", None)
            rewritten = os.path.join(tmp, stem + "_armnn")
            with open(rewritten + ".json", "w") as f:
                json.dump(model.js, f)
            subprocess.run(["flatc", "--binary", "-o", tmp, schema, rewritten + ".json"], check=True)
            tname = lambda t: model.tensors[t]["name"]  # noqa: E731
            x = photo_input(photo, model.tensors[graph_inputs[0]]["shape"], lo, hi)
            values = {graph_inputs[0]: x}
            for t in custom_outs:
                values[t] = np.zeros(model.tensors[t]["shape"], np.float32)
            # Each pass settles one more level of custom ops; once they return what they were fed, the
            # pass's outputs came from settled values.
            for _ in range(len(custom) + 1):
                fed = [values[t] for t in custom_outs]
                result = arm_nn_run(rewritten + ".tflite", {tname(t): values[t] for t in model.sg["inputs"]})
                for t in model.sg["outputs"]:
                    values[t] = result[tname(t)].reshape(model.tensors[t]["shape"])
                for op in custom:
                    values[op["outputs"][0]] = run_custom(model, op, values)
                if all(np.array_equal(a, values[t]) for a, t in zip(fed, custom_outs)):
                    break
            else:
                raise SystemExit("%s: the custom ops did not settle" % stem)
            x.tofile(os.path.join(out_dir, stem + "_input.f32"))
            for k, t in enumerate(graph_outputs):
                values[t].astype(np.float32).tofile(os.path.join(out_dir, "%s_out%d.f32" % (stem, k)))
            print("make_tflite_reference: %s (%d outputs, %d custom ops in numpy)" % (stem, len(graph_outputs), len(custom)))


if __name__ == "__main__":
    main()
