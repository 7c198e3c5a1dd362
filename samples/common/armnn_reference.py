#!/usr/bin/python3
"""The hands and pose samples' reference runtime: Arm NN's CpuRef backend (Debian's python3-pyarmnn) runs
MediaPipe's landmark .tflite files on the exact crops the app fed its converted models, and the app's
printed results are checked against those outputs. Nothing of Kestrel runs here. (Its TFLite parser has
no PRELU, which the palm detector uses, so the detectors are checked through the landmark model: the
crops they lead to must hold what the landmark model, run by Arm NN, calls a hand or a body.)

MediaPipe ships these models with fp16 weights behind DEQUANTIZE ops, which Arm NN's TFLite parser
refuses (it wants constant fp32 weights). widen_fp16_weights() rewrites a copy of the file in place
(FlatBuffers offsets only point forward, so new fp32 data appended at the end of the file can be
reached from the old Buffer tables): each fp16 constant becomes fp32, its consumers read it directly,
and the DEQUANTIZE ops are dropped from the operator list. The arithmetic of the graph is unchanged
(DEQUANTIZE of fp16 is the exact widening done here).

usage: armnn_reference.py run MODEL.tflite INPUT.f32 OUT_PREFIX   (writes OUT_PREFIX<i>.f32 per output)
       armnn_reference.py check LANDMARK.tflite RESULTS.jsonl DUMP_DIR MIN_CONFIRMED VALUES_PER_LANDMARK
           [BASE TIP]   (see check())
"""
import struct
import sys

import numpy as np

DEQUANTIZE = 6
FLOAT32, FLOAT16 = 0, 1


class Table:
    """A FlatBuffers table at absolute position pos of buf (the subset of the reader this needs)."""

    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        self.vtable = pos - struct.unpack_from("<i", buf, pos)[0]
        self.vtable_size = struct.unpack_from("<H", buf, self.vtable)[0]

    def field(self, index):
        """Absolute position of field `index`, or None when the table leaves it at its default."""
        slot = 4 + 2 * index
        if slot >= self.vtable_size:
            return None
        rel = struct.unpack_from("<H", self.buf, self.vtable + slot)[0]
        return self.pos + rel if rel else None

    def scalar(self, index, fmt, default=0):
        at = self.field(index)
        return default if at is None else struct.unpack_from(fmt, self.buf, at)[0]

    def vector(self, index):
        """(absolute position of element 0, length), or (None, 0)."""
        at = self.field(index)
        if at is None:
            return None, 0
        start = at + struct.unpack_from("<I", self.buf, at)[0]
        return start + 4, struct.unpack_from("<I", self.buf, start)[0]

    def tables(self, index):
        start, count = self.vector(index)
        return [Table(self.buf, start + 4 * i + struct.unpack_from("<I", self.buf, start + 4 * i)[0])
                for i in range(count)]


def widen_fp16_weights(data):
    buf = bytearray(data)
    model = Table(buf, struct.unpack_from("<I", buf, 0)[0])
    codes = model.tables(1)
    dequantize = {i for i, c in enumerate(codes)
                  if max(c.scalar(0, "<b"), c.scalar(3, "<i")) == DEQUANTIZE}
    buffers = model.tables(4)
    widened = {}
    for graph in model.tables(2):
        tensors = graph.tables(0)
        ops_start, _ = graph.vector(3)
        ops = graph.tables(3)
        replace = {}
        for op in ops:
            if op.scalar(0, "<I") not in dequantize:
                continue
            in_start, _ = op.vector(1)
            out_start, _ = op.vector(2)
            src = struct.unpack_from("<i", buf, in_start)[0]
            dst = struct.unpack_from("<i", buf, out_start)[0]
            if tensors[src].scalar(1, "<b") != FLOAT16:
                raise SystemExit("DEQUANTIZE of a tensor that is not fp16: not a pattern this tool widens")
            replace[dst] = src
        for op in ops:
            if op.scalar(0, "<I") in dequantize:
                continue
            start, count = op.vector(1)
            for i in range(count):
                t = struct.unpack_from("<i", buf, start + 4 * i)[0]
                if t in replace:
                    struct.pack_into("<i", buf, start + 4 * i, replace[t])
        for src in set(replace.values()):
            tensor = tensors[src]
            struct.pack_into("<b", buf, tensor.field(1), FLOAT32)
            index = tensor.scalar(2, "<I")
            if index in widened:
                continue
            values_at, count = buffers[index].vector(0)
            fp32 = np.frombuffer(bytes(buf[values_at:values_at + count]), dtype="<f2").astype("<f4").tobytes()
            while (len(buf) + 4) % 16:
                buf.append(0)
            prefix = len(buf)
            buf += struct.pack("<I", len(fp32)) + fp32
            field = buffers[index].field(0)
            struct.pack_into("<I", buf, field, prefix - field)
            widened[index] = True
        # Compact the operator list without the DEQUANTIZE ops: each element is an offset from its own
        # position, recomputed for its new slot (slots only move back, so offsets stay forward).
        kept = [op.pos for op in ops if op.scalar(0, "<I") not in dequantize]
        for i, pos in enumerate(kept):
            struct.pack_into("<I", buf, ops_start + 4 * i, pos - (ops_start + 4 * i))
        struct.pack_into("<I", buf, ops_start - 4, len(kept))
    return bytes(buf)


class Network:
    """One .tflite file loaded into Arm NN's CpuRef backend."""

    def __init__(self, model_path):
        import os
        import tempfile

        import pyarmnn as ann

        self.ann = ann
        with open(model_path, "rb") as f:
            patched = widen_fp16_weights(f.read())
        with tempfile.NamedTemporaryFile(suffix=".tflite", delete=False) as f:
            f.write(patched)
            patched_path = f.name
        try:
            self.parser = ann.ITfLiteParser()
            network = self.parser.CreateNetworkFromBinaryFile(patched_path)
        finally:
            os.unlink(patched_path)
        self.output_names = self.parser.GetSubgraphOutputTensorNames(0)
        self.runtime = ann.IRuntime(ann.CreationOptions())
        optimized, _ = ann.Optimize(network, [ann.BackendId("CpuRef")], self.runtime.GetDeviceSpec(),
                                    ann.OptimizerOptions())
        self.net_id, _ = self.runtime.LoadNetwork(optimized)
        self.in_binding = self.parser.GetNetworkInputBindingInfo(0, self.parser.GetSubgraphInputTensorNames(0)[0])
        self.out_bindings = [self.parser.GetNetworkOutputBindingInfo(0, n) for n in self.output_names]

    def run(self, values):
        if values.size != self.in_binding[1].GetNumElements():
            raise SystemExit(f"{values.size} floats, the model's input takes {self.in_binding[1].GetNumElements()}")
        inputs = self.ann.make_input_tensors([self.in_binding], [values.astype("<f4")])
        outputs = self.ann.make_output_tensors(self.out_bindings)
        self.runtime.EnqueueWorkload(self.net_id, inputs, outputs)
        return [np.asarray(r, dtype="<f4").ravel() for r in self.ann.workload_tensors_to_ndarray(outputs)]


def run(model_path, input_path, out_prefix):
    network = Network(model_path)
    for i, result in enumerate(network.run(np.fromfile(input_path, dtype="<f4"))):
        result.tofile(f"{out_prefix}{i}.f32")
        print(network.output_names[i], result.size)


def check(landmark_model, results_path, dump_dir, min_confirmed, values_per_landmark, upright=None):
    """Every object the app printed (hands, poses) against Arm NN's run of the landmark model on the crop
    it dumped: the presence flag (output 1) and handedness (output 2, where printed) within 0.01; the
    landmarks (output 0, values_per_landmark values each), taken through the crop matrix the app
    printed, within 0.5 source pixels (z too) and their visibility (sigmoid of value 3, where printed)
    within 0.01. Then at least min_confirmed objects that Arm NN also finds present (flag >= 0.5) over
    all images: the detector and the rotated region sent real objects to the landmark model.
    upright = (base, tip): the region must also hold the object as MediaPipe's region intends, judged
    from Arm NN's landmarks in the crop: base → tip within 30 degrees of straight up, and the landmarks'
    box centred vertically within 0.12 of the crop's side (hands: the wrist → middle finger's base; a
    region shifted the wrong way by half a palm puts the hand 0.17-0.19 off, the right one 0.06-0.08)."""
    import json

    network = Network(landmark_model)
    worst = worst_score = 0.0
    confirmed = checked = 0
    with open(results_path) as f:
        for line in f:
            image = json.loads(line)
            key = next(k for k, v in image.items() if k.endswith("s") and isinstance(v, list))
            stem = image["image"].rsplit("/", 1)[-1].rsplit(".", 1)[0]
            if "frame" in image:
                stem += f"_{image['frame']}"
            for i, found in enumerate(image[key]):
                where = f"{stem} {key[:-1]} {i}"
                out = network.run(np.fromfile(f"{dump_dir}/{stem}_{key[:-1]}{i}.f32", dtype="<f4"))
                scores = [("presence", float(out[1][0]))]
                if "handedness" in found:
                    scores.append(("handedness", float(out[2][0])))
                for name, reference in scores:
                    worst_score = max(worst_score, abs(reference - found[name]))
                    if abs(reference - found[name]) > 0.01:
                        raise SystemExit(f"FAIL: {where}: Arm NN's {name} {reference:.4f}, the app's {found[name]:.4f}")
                checked += 1
                if scores[0][1] < 0.5:
                    if "landmarks" in found:
                        raise SystemExit(f"FAIL: {where}: landmarks printed for a presence of {scores[0][1]:.4f}")
                    continue
                confirmed += 1
                if upright:
                    crop_xy = out[0].reshape(-1, values_per_landmark)[:, :2].astype(np.float64)
                    size = float(network.in_binding[1].GetShape()[1])
                    v = crop_xy[upright[1]] - crop_xy[upright[0]]
                    angle = abs(np.degrees(np.arctan2(v[0], -v[1])))
                    box = crop_xy[: len(found["landmarks"])]
                    off = abs((box[:, 1].min() + box[:, 1].max()) / 2 / size - 0.5)
                    if angle > 30 or off > 0.12:
                        raise SystemExit(f"FAIL: {where}: the crop holds it {angle:.0f} degrees from upright and "
                                         f"{off:.2f} off centre vertically (want <= 30 and <= 0.12)")
                app = np.array(found["landmarks"], dtype=np.float64)
                m = np.array(found["matrix"], dtype=np.float64).reshape(2, 3)
                model = out[0].reshape(-1, values_per_landmark)[: len(app)].astype(np.float64)
                xy = model[:, :2] @ m[:, :2].T + m[:, 2]
                z = model[:, 2] * np.hypot(m[0, 0], m[1, 0])
                err = max(np.abs(app[:, :2] - xy).max(), np.abs(app[:, 2] - z).max())
                worst = max(worst, err)
                if err > 0.5:
                    raise SystemExit(f"FAIL: {where}: landmarks {err:.3f} px from Arm NN's")
                if app.shape[1] > 3:
                    visibility = 1 / (1 + np.exp(-model[:, 3]))
                    worst_score = max(worst_score, np.abs(app[:, 3] - visibility).max())
                    if np.abs(app[:, 3] - visibility).max() > 0.01:
                        raise SystemExit(f"FAIL: {where}: visibility differs from Arm NN's")
    print(f"{checked} checked, {confirmed} confirmed by Arm NN; landmarks within {worst:.4f} px, "
          f"scores within {worst_score:.5f}")
    if confirmed < min_confirmed:
        raise SystemExit(f"FAIL: {confirmed} confirmed by Arm NN, want at least {min_confirmed}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "run":
        run(*sys.argv[2:])
    elif len(sys.argv) in (7, 9) and sys.argv[1] == "check":
        upright = (int(sys.argv[7]), int(sys.argv[8])) if len(sys.argv) == 9 else None
        check(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), upright)
    else:
        sys.exit(__doc__)
