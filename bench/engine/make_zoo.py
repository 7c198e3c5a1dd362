#!/usr/bin/python3
"""make_zoo.py — writes public CNN architectures as ONNX models with random seeded weights.

The engine is judged on public ONNX models that are not in this repository, and none can be downloaded
here, so these are the architectures as their public exports spell them (opset 13, NCHW float32 input
[1,3,H,W] as PyTorch exports, Conv -> BatchNormalization left unfused, SiLU as Sigmoid + Mul, channel
shuffle as Reshape -> Transpose -> Reshape, constants where a static export folds shapes) with
He-scaled random weights, so activations stay O(1) through the depth, and BatchNormalization
statistics that are random but not trivial. Only the graph's shape matters for speed; the weights are
seeded, so every run writes the same bytes. bench/engine/zoo.sh times them against ONNX Runtime.

usage: /usr/bin/python3 make_zoo.py OUTDIR [--models a,b,...] [--seed S] [--ort] [--list]
  writes OUTDIR/<name>.onnx and prints each model's input shape, node count and op histogram;
  --ort also runs each in ONNX Runtime (node + onnxruntime-node from $NODE_PATH, or the model cache
  of engine/tests/models/fetch_models.sh) and prints its outputs' shapes and ranges.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "engine", "tests", "models"))
import make_nchw_cnn  # noqa: E402  (MobileNetV2, and the Builder this file extends)


class Zoo(make_nchw_cnn.Builder):
    """make_nchw_cnn's Builder with the ops of the other architectures; nodes named as PyTorch 1.x
    names them (Conv_12), so kes-model-bench's profile reads like one of a public export."""

    def node(self, op, inputs, outputs=1, **attrs):
        index = len(self.nodes)
        names = [f"{op.lower()}_{index}" + (f"_{i}" if outputs > 1 else "") for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=f"{op}_{index}", **attrs))
        return names if outputs > 1 else names[0]

    def ints(self, base, values):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.array(values, np.int64), n))
        return n

    def conv(self, x, cin, cout, k, stride=1, pad=None, group=1, bias=False, gain=2.0, dilation=1):
        # He scaling (gain 2 before a ReLU-like activation, 1 before none) keeps the activations' second
        # moment constant from layer to layer, so 100 layers of random weights neither vanish nor explode.
        kh, kw = (k, k) if isinstance(k, int) else k
        fan_in = cin // group * kh * kw
        w = self.rng.standard_normal((cout, cin // group, kh, kw)) * np.sqrt(gain / fan_in)
        inputs = [x, self.const("w", w)]
        if bias:
            inputs.append(self.const("b", 0.1 * self.rng.standard_normal(cout)))
        pad = (kh // 2 if pad is None else pad)
        pads = [pad] * 4 if isinstance(pad, int) else pad
        return self.node("Conv", inputs, dilations=[dilation, dilation], group=group, kernel_shape=[kh, kw],
                         pads=pads, strides=[stride, stride])

    def bn(self, x, c, gamma=1.0):
        # Statistics as a trained model's look (means off zero, variances spread over [0.5, 2]) rather than
        # the identity, so that folding them into the conv is exercised; gamma < 1 scales a residual branch
        # down as training does, so sums of branches stay O(1).
        var = 0.5 + 1.5 * self.rng.random(c)
        return self.node("BatchNormalization", [
            x, self.const("gamma", gamma * np.sqrt(var) * (1.0 + 0.2 * self.rng.standard_normal(c))),
            self.const("beta", 0.2 * self.rng.standard_normal(c)),
            self.const("mean", 0.2 * self.rng.standard_normal(c)),
            self.const("var", var)], epsilon=1e-5, momentum=0.9)

    def relu(self, x):
        return self.node("Relu", [x])

    def silu(self, x):
        # torch.nn.SiLU at opset 13 exports as x * sigmoid(x).
        return self.node("Mul", [x, self.node("Sigmoid", [x])])

    def cbr(self, x, cin, cout, k, stride=1, pad=None, group=1, act="relu", gamma=1.0):
        y = self.bn(self.conv(x, cin, cout, k, stride, pad, group, gain=1.0 if act is None else 2.0), cout, gamma)
        if act == "relu":
            return self.relu(y)
        if act == "silu":
            return self.silu(y)
        return y

    def maxpool(self, x, k, s, pad=0, ceil=0):
        return self.node("MaxPool", [x], ceil_mode=ceil, kernel_shape=[k, k], pads=[pad] * 4, strides=[s, s])

    def concat(self, xs, axis=1):
        return self.node("Concat", xs, axis=axis)

    def reshape(self, x, shape):
        return self.node("Reshape", [x, self.ints("shape", shape)])

    def gemm(self, x, cin, cout):
        return self.node("Gemm", [x, self.const("fc_w", self.rng.standard_normal((cout, cin)) / np.sqrt(cin)),
                                  self.const("fc_b", 0.01 * self.rng.standard_normal(cout))],
                         alpha=1.0, beta=1.0, transB=1)

    def classifier(self, x, cin, classes=1000):
        return self.gemm(self.node("Flatten", [self.node("GlobalAveragePool", [x])], axis=1), cin, classes)

    def model(self, name, inputs, outputs):
        graph = helper.make_graph(self.nodes, name, [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs
        ], [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_zoo")
        m.ir_version = 8
        return m


def rename(b, tensor, name):
    """Gives the graph output the name a public export gives it (the last node writes it directly)."""
    last = b.nodes[-1]
    assert last.output[0] == tensor
    last.output[0] = name
    return name


def resnet18(seed):
    """torchvision resnet18: 7x7/2 stem, MaxPool 3/2, BasicBlocks [2,2,2,2] with 1x1/2 downsample."""
    b = Zoo(seed)
    x = b.maxpool(b.cbr("input", 3, 64, 7, 2, 3), 3, 2, 1)
    cin = 64
    for planes, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for i in range(2):
            s = stride if i == 0 else 1
            y = b.cbr(x, cin, planes, 3, s)
            y = b.cbr(y, planes, planes, 3, 1, act=None, gamma=0.5)
            short = b.cbr(x, cin, planes, 1, s, 0, act=None) if (s != 1 or cin != planes) else x
            x = b.relu(b.node("Add", [y, short]))
            cin = planes
    rename(b, b.classifier(x, 512), "output")
    return b.model("resnet18", [("input", [1, 3, 224, 224])], [("output", [1, 1000])])


def squeezenet1_1(seed):
    """torchvision squeezenet1_1: no BatchNormalization (biased convs), Fire modules, ceil-mode pools."""
    b = Zoo(seed)

    def conv_relu(x, cin, cout, k, stride=1, pad=0):
        return b.relu(b.conv(x, cin, cout, k, stride, pad, bias=True))

    def fire(x, cin, squeeze, e1, e3):
        s = conv_relu(x, cin, squeeze, 1)
        return b.concat([conv_relu(s, squeeze, e1, 1), conv_relu(s, squeeze, e3, 3, pad=1)])

    x = b.maxpool(conv_relu("input", 3, 64, 3, 2), 3, 2, ceil=1)
    x = fire(fire(x, 64, 16, 64, 64), 128, 16, 64, 64)
    x = b.maxpool(x, 3, 2, ceil=1)
    x = fire(fire(x, 128, 32, 128, 128), 256, 32, 128, 128)
    x = b.maxpool(x, 3, 2, ceil=1)
    for cin, sq, e in [(256, 48, 192), (384, 48, 192), (384, 64, 256), (512, 64, 256)]:
        x = fire(x, cin, sq, e, e)
    x = conv_relu(x, 512, 1000, 1)
    rename(b, b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1), "output")
    return b.model("squeezenet1_1", [("input", [1, 3, 224, 224])], [("output", [1, 1000])])


def shufflenet_v2_x1_0(seed):
    """torchvision shufflenet_v2_x1_0: stages [4,8,4] of widths 116/232/464, chunk as Split, channel
    shuffle as Reshape -> Transpose(0,2,1,3,4) -> Reshape, mean([2,3]) as ReduceMean, Gemm."""
    b = Zoo(seed)
    x = b.maxpool(b.cbr("input", 3, 24, 3, 2, 1), 3, 2, 1)
    cin, size = 24, 56

    def shuffle(x, c, h):
        y = b.reshape(x, [1, 2, c // 2, h, h])
        return b.reshape(b.node("Transpose", [y], perm=[0, 2, 1, 3, 4]), [1, c, h, h])

    for cout, repeats in [(116, 4), (232, 8), (464, 4)]:
        half = cout // 2
        for i in range(repeats):
            if i == 0:  # stride 2: both branches see the whole input
                size //= 2
                b1 = b.cbr(b.cbr(x, cin, cin, 3, 2, 1, group=cin, act=None), cin, half, 1, 1, 0)
                b2 = b.cbr(x, cin, half, 1, 1, 0)
            else:  # stride 1: x.chunk(2, dim=1), the first half passes through
                b1, b2 = b.node("Split", [x, b.ints("split", [half, half])], outputs=2, axis=1)
                b2 = b.cbr(b2, half, half, 1, 1, 0)
            b2 = b.cbr(b2, half, half, 3, 2 if i == 0 else 1, 1, group=half, act=None)
            b2 = b.cbr(b2, half, half, 1, 1, 0)
            x = shuffle(b.concat([b1, b2]), cout, size)
            cin = cout
    x = b.cbr(x, 464, 1024, 1, 1, 0)
    x = b.node("ReduceMean", [x], axes=[2, 3], keepdims=0)
    rename(b, b.gemm(x, 1024, 1000), "output")
    return b.model("shufflenet_v2_x1_0", [("input", [1, 3, 224, 224])], [("output", [1, 1000])])


def yolov5n(seed, size=320):
    """ultralytics yolov5n v7.0 (depth 0.33, width 0.25) as `export.py --include onnx --opset 13` writes
    it at a static 320x320 input, BatchNormalization left unfused: Conv+BN+SiLU, C3 blocks, SPPF, the
    FPN/PAN neck with nearest Resize x2, and the Detect head with its grid/anchor decode (Sigmoid, Split,
    xy*2 + grid times stride, (wh*2)^2 times anchor_grid) concatenated into [1, N, 85]."""
    b = Zoo(seed)

    def conv(x, cin, cout, k, s=1, p=None):
        return b.cbr(x, cin, cout, k, s, k // 2 if p is None else p, act="silu")

    def c3(x, cin, cout, n, shortcut=True):
        c_ = cout // 2
        m = conv(x, cin, c_, 1)
        for _ in range(n):
            y = conv(conv(m, c_, c_, 1), c_, c_, 3)
            m = b.node("Add", [m, y]) if shortcut else y
        return conv(b.concat([m, conv(x, cin, c_, 1)]), 2 * c_, cout, 1)

    def sppf(x, cin, cout):
        c_ = cin // 2
        x = conv(x, cin, c_, 1)
        y1 = b.maxpool(x, 5, 1, 2)
        y2 = b.maxpool(y1, 5, 1, 2)
        return conv(b.concat([x, y1, y2, b.maxpool(y2, 5, 1, 2)]), 4 * c_, cout, 1)

    def upsample(x):
        roi = b.const("roi", np.zeros(0))
        return b.node("Resize", [x, roi, b.const("scales", np.array([1.0, 1.0, 2.0, 2.0]))],
                      coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.75, mode="nearest",
                      nearest_mode="floor")

    x = conv("images", 3, 16, 6, 2, 2)
    x = c3(conv(x, 16, 32, 3, 2), 32, 32, 1)
    p3 = c3(conv(x, 32, 64, 3, 2), 64, 64, 2)
    p4 = c3(conv(p3, 64, 128, 3, 2), 128, 128, 3)
    x = sppf(c3(conv(p4, 128, 256, 3, 2), 256, 256, 1), 256, 256)
    h10 = conv(x, 256, 128, 1)
    x = c3(b.concat([upsample(h10), p4]), 256, 128, 1, False)
    h14 = conv(x, 128, 64, 1)
    out3 = c3(b.concat([upsample(h14), p3]), 128, 64, 1, False)
    out4 = c3(b.concat([conv(out3, 64, 64, 3, 2), h14]), 128, 128, 1, False)
    out5 = c3(b.concat([conv(out4, 128, 128, 3, 2), h10]), 256, 256, 1, False)

    anchors = [[(10, 13), (16, 30), (33, 23)], [(30, 61), (62, 45), (59, 119)], [(116, 90), (156, 198), (373, 326)]]
    levels = []
    for i, (feat, cin, stride) in enumerate([(out3, 64, 8), (out4, 128, 16), (out5, 256, 32)]):
        ny = nx = size // stride
        p = b.conv(feat, cin, 3 * 85, 1, pad=0, bias=True, gain=1.0)
        p = b.node("Transpose", [b.reshape(p, [1, 3, 85, ny, nx])], perm=[0, 1, 3, 4, 2])
        xy, wh, conf = b.node("Split", [b.node("Sigmoid", [p]), b.ints("split", [2, 2, 81])], outputs=3, axis=4)
        yv, xv = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
        grid = np.broadcast_to(np.stack((xv, yv), 2)[None, None], (1, 3, ny, nx, 2)) - 0.5
        anchor_grid = np.broadcast_to(np.array(anchors[i], np.float32).reshape(1, 3, 1, 1, 2), (1, 3, ny, nx, 2))
        two = lambda: b.const("two", np.array(2.0))  # noqa: E731  (each Mul/Pow gets its own Constant, as exported)
        xy = b.node("Mul", [b.node("Add", [b.node("Mul", [xy, two()]), b.const("grid", grid)]),
                            b.const("stride", np.array(float(stride)))])
        wh = b.node("Mul", [b.node("Pow", [b.node("Mul", [wh, two()]), two()]), b.const("anchor_grid", anchor_grid)])
        levels.append(b.reshape(b.concat([xy, wh, conf], axis=4), [1, 3 * ny * nx, 85]))
    n = sum(3 * (size // s) ** 2 for s in (8, 16, 32))
    rename(b, b.concat(levels), "output0")
    return b.model("yolov5n", [("images", [1, 3, size, size])], [("output0", [1, n, 85])])


def ultraface_slim(seed):
    """Ultra-Light-Fast-Generic-Face-Detector-1MB version-slim-320 (Mb_Tiny, base 16 channels) at
    240x320: conv_bn / conv_dw backbone, an extra 1x1 + separable 3x3/2 layer, SeperableConv2d heads
    (depthwise 3x3 + Relu + 1x1, biased) on 4 scales, each Transpose(0,2,3,1) + Reshape, Concat,
    Softmax on the scores, and the prior-box decode (center/size variance 0.1/0.2) to corner boxes,
    as the public version-slim-320.onnx ends: scores [1,4420,2], boxes [1,4420,4]."""
    b = Zoo(seed)
    bc = 16

    def conv_dw(x, cin, cout, s):
        return b.cbr(b.cbr(x, cin, cin, 3, s, 1, group=cin), cin, cout, 1, 1, 0)

    def sep(x, cin, cout, stride=1):
        y = b.relu(b.conv(x, cin, cin, 3, stride, 1, group=cin, bias=True))
        return b.conv(y, cin, cout, 1, 1, 0, bias=True, gain=1.0)

    x = b.cbr("input", 3, bc, 3, 2, 1)
    plan = [(bc, bc * 2, 1), (bc * 2, bc * 2, 2), (bc * 2, bc * 2, 1), (bc * 2, bc * 4, 2), (bc * 4, bc * 4, 1),
            (bc * 4, bc * 4, 1), (bc * 4, bc * 4, 1), (bc * 4, bc * 8, 2), (bc * 8, bc * 8, 1), (bc * 8, bc * 8, 1),
            (bc * 8, bc * 16, 2), (bc * 16, bc * 16, 1)]
    feats = []
    for i, (cin, cout, s) in enumerate(plan):
        x = conv_dw(x, cin, cout, s)
        if i + 1 in (7, 10, 12):  # source_layer_indexes [8, 11, 13] of the Sequential (stem is 0)
            feats.append((x, cout))
    x = b.relu(b.conv(x, bc * 16, bc * 4, 1, 1, 0, bias=True))
    x = b.relu(sep(x, bc * 4, bc * 16, 2))
    feats.append((x, bc * 16))
    anchors = [3, 2, 2, 3]
    locs, confs = [], []
    for i, (f, c) in enumerate(feats):
        head = (lambda x, c, o: b.conv(x, c, o, 3, 1, 1, bias=True, gain=1.0)) if i == 3 else sep
        conf = b.node("Transpose", [head(f, c, anchors[i] * 2)], perm=[0, 2, 3, 1])
        confs.append(b.reshape(conf, [1, -1, 2]))
        loc = b.node("Transpose", [head(f, c, anchors[i] * 4)], perm=[0, 2, 3, 1])
        locs.append(b.reshape(loc, [1, -1, 4]))
    scores = b.node("Softmax", [b.concat(confs)], axis=2)
    rename(b, scores, "scores")
    locations = b.concat(locs)
    # priors: define_img_size(320) of the repository, in (cx, cy, w, h) of the image.
    min_boxes = [[10, 16, 24], [32, 48], [64, 96], [128, 192, 256]]
    priors = []
    for (fh, fw), stride, boxes in zip([(30, 40), (15, 20), (8, 10), (4, 5)], [8, 16, 32, 64], min_boxes):
        for j in range(fh):
            for i in range(fw):
                for m in boxes:
                    priors.append([(i + 0.5) / (320 / stride), (j + 0.5) / (240 / stride), m / 320, m / 240])
    priors = np.clip(np.array(priors, np.float32), 0.0, 1.0)[None]

    def slice_last(x, start, end):
        return b.node("Slice", [x, b.ints("starts", [start]), b.ints("ends", [end]), b.ints("axes", [2]),
                                b.ints("steps", [1])])

    pri = b.const("priors", priors)
    cxcy = b.node("Add", [b.node("Mul", [b.node("Mul", [slice_last(locations, 0, 2), b.const("cv", np.array(0.1))]),
                                          slice_last(pri, 2, 4)]), slice_last(pri, 0, 2)])
    wh = b.node("Mul", [b.node("Exp", [b.node("Mul", [slice_last(locations, 2, 4), b.const("sv", np.array(0.2))])]),
                        slice_last(pri, 2, 4)])
    half = b.node("Div", [wh, b.const("two", np.array(2.0))])
    boxes = b.concat([b.node("Sub", [cxcy, half]), b.node("Add", [cxcy, half])], axis=2)
    rename(b, boxes, "boxes")
    return b.model("ultraface_slim", [("input", [1, 3, 240, 320])], [("scores", [1, 4420, 2]), ("boxes", [1, 4420, 4])])


def iresnet_arcface(seed):
    """insightface arcface_torch iresnet18 ([2,2,2,2]) at 112x112: stem Conv 3x3 + BN + PRelu; IBasicBlock
    BN -> Conv 3x3 -> BN -> PRelu -> Conv 3x3 (stride 2 in a layer's first block) -> BN, plus a 1x1/2
    Conv + BN shortcut, Add; final BN -> Flatten -> Gemm 25088->512 -> BatchNormalization on [1,512]."""
    b = Zoo(seed)

    def prelu(x, c):
        return b.node("PRelu", [x, b.const("slope", (0.25 + 0.05 * b.rng.standard_normal(c)).reshape(c, 1, 1))])

    x = prelu(b.cbr("input", 3, 64, 3, 1, 1, act=None), 64)
    cin = 64
    for planes in [64, 128, 256, 512]:
        for i in range(2):
            s = 2 if i == 0 else 1
            y = b.bn(x, cin)
            y = prelu(b.bn(b.conv(y, cin, planes, 3, 1, 1), planes), planes)
            y = b.cbr(y, planes, planes, 3, s, 1, act=None, gamma=0.5)
            short = b.cbr(x, cin, planes, 1, s, 0, act=None) if i == 0 else x
            x = b.node("Add", [y, short])
            cin = planes
    x = b.node("Flatten", [b.bn(x, 512)], axis=1)
    x = b.gemm(x, 512 * 7 * 7, 512)
    rename(b, b.bn(x, 512), "embedding")
    return b.model("iresnet_arcface", [("input", [1, 3, 112, 112])], [("embedding", [1, 512])])


def unet_small(seed, base=16, size=256):
    """U-Net (Ronneberger 2015, as milesial/Pytorch-UNet with bilinear=False) at a quarter of its widths
    (16..256 channels): double 3x3 Conv+BN+Relu per level, MaxPool 2, ConvTranspose 2x2/2 up, Concat
    with the skip, a 1x1 Conv to one channel and Sigmoid."""
    b = Zoo(seed)

    def double(x, cin, cout):
        return b.cbr(b.cbr(x, cin, cout, 3, 1, 1), cout, cout, 3, 1, 1)

    widths = [base * 2 ** i for i in range(5)]
    skips, x, cin = [], "input", 3
    for i, w in enumerate(widths):
        x = double(x if i == 0 else b.maxpool(x, 2, 2), cin, w)
        skips.append(x)
        cin = w
    for w, skip in zip(reversed(widths[:-1]), reversed(skips[:-1])):
        up = b.node("ConvTranspose", [x, b.const("w", b.rng.standard_normal((cin, w, 2, 2)) * np.sqrt(1.0 / cin)),
                                      b.const("b", 0.1 * b.rng.standard_normal(w))],
                    kernel_shape=[2, 2], strides=[2, 2])
        x = double(b.concat([skip, up]), 2 * w, w)
        cin = w
    rename(b, b.node("Sigmoid", [b.conv(x, cin, 1, 1, 1, 0, bias=True, gain=1.0)]), "output")
    return b.model("unet_small", [("input", [1, 3, size, size])], [("output", [1, 1, size, size])])


def efficientnet_b0(seed):
    """torchvision efficientnet_b0: MBConv (1x1 expand, depthwise 3x3/5x5 at strides 1 and 2, squeeze-
    excite GlobalAveragePool -> Conv -> SiLU -> Conv -> Sigmoid -> Mul, 1x1 project, residual Add),
    SiLU as Sigmoid + Mul, 1280-channel head, Gemm 1000."""
    b = Zoo(seed)
    x = b.cbr("input", 3, 32, 3, 2, 1, act="silu")
    cin = 32
    for t, k, s, cout, n in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                             (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = b.cbr(x, cin, hidden, 1, 1, 0, act="silu") if t != 1 else x
            y = b.cbr(y, hidden, hidden, k, stride, k // 2, group=hidden, act="silu")
            sq = max(1, cin // 4)
            se = b.silu(b.conv(b.node("GlobalAveragePool", [y]), hidden, sq, 1, 1, 0, bias=True))
            se = b.node("Sigmoid", [b.conv(se, sq, hidden, 1, 1, 0, bias=True, gain=1.0)])
            y = b.node("Mul", [se, y])
            y = b.cbr(y, hidden, cout, 1, 1, 0, act=None, gamma=0.5 if stride == 1 and cin == cout else 1.0)
            x = b.node("Add", [y, x]) if stride == 1 and cin == cout else y
            cin = cout
    x = b.cbr(x, 320, 1280, 1, 1, 0, act="silu")
    rename(b, b.classifier(x, 1280), "output")
    return b.model("efficientnet_b0", [("input", [1, 3, 224, 224])], [("output", [1, 1000])])


def mobilenetv2(seed):
    return make_nchw_cnn.build(224, 1.0, seed)


MODELS = collections.OrderedDict([
    ("mobilenetv2", mobilenetv2), ("resnet18", resnet18), ("squeezenet1_1", squeezenet1_1),
    ("shufflenet_v2_x1_0", shufflenet_v2_x1_0), ("yolov5n", yolov5n), ("ultraface_slim", ultraface_slim),
    ("iresnet_arcface", iresnet_arcface), ("unet_small", unet_small), ("efficientnet_b0", efficientnet_b0),
])

# Runs each model once in ONNX Runtime (on input uniform in [-1, 1]) and prints its outputs' ranges.
ORT_CHECK = r"""
const ort = require('onnxruntime-node');
(async () => {
  const report = {};
  for (const file of process.argv.slice(1)) {
    const s = await ort.InferenceSession.create(file, {intraOpNumThreads: 1, graphOptimizationLevel: 'disabled'});
    const feeds = {};
    for (const [i, name] of s.inputNames.entries()) {
      const dims = s.inputMetadata[i].shape;
      const n = dims.reduce((a, b) => a * b, 1);
      const d = new Float32Array(n);
      let seed = 1;
      for (let j = 0; j < n; j++) { seed = (seed * 1103515245 + 12345) & 0x7fffffff; d[j] = seed / 0x7fffffff * 2 - 1; }
      feeds[name] = new ort.Tensor('float32', d, dims);
    }
    const r = await s.run(feeds);
    report[file] = s.outputNames.map((o) => {
      const d = r[o].data;
      let lo = Infinity, hi = -Infinity, abs = 0, finite = true;
      for (const v of d) { if (!Number.isFinite(v)) finite = false; lo = Math.min(lo, v); hi = Math.max(hi, v); abs += Math.abs(v); }
      return {name: o, dims: r[o].dims, min: lo, max: hi, mean_abs: abs / d.length, finite};
    });
  }
  console.log(JSON.stringify(report));
})().catch((e) => { console.error(e.message); process.exit(1); });
"""


def ort_check(files):
    env = dict(os.environ)
    if "NODE_PATH" not in env:
        cache = env.get("KES_MODEL_CACHE", os.path.expanduser("~/.cache/kestrel/models"))
        env["NODE_PATH"] = os.path.join(cache, "ort", "node_modules")
    out = subprocess.run(["node", "-e", ORT_CHECK] + files, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated names (default: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ort", action="store_true", help="run each model in ONNX Runtime and print its outputs")
    ap.add_argument("--list", action="store_true", help="print the model names, one per line, and exit")
    a = ap.parse_args()
    if a.list:
        print("\n".join(MODELS))
        return
    if not a.outdir:
        ap.error("OUTDIR is required")
    names = [m for m in a.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown or not names:
        ap.error(f"unknown model(s) {','.join(unknown) or '(none given)'}; known: {','.join(MODELS)}")
    os.makedirs(a.outdir, exist_ok=True)
    files = []
    for name in names:
        model = MODELS[name](a.seed)
        onnx.checker.check_model(model, full_check=True)  # full_check: shape inference agrees too
        path = os.path.join(a.outdir, f"{name}.onnx")
        onnx.save(model, path)
        files.append(path)
        shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        ops = collections.Counter(n.op_type for n in model.graph.node)
        params = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type == TensorProto.FLOAT)
        print(f"{name}: input {model.graph.input[0].name} {shape}, {len(model.graph.node)} nodes, "
              f"{params / 1e6:.2f} M parameters")
        print("  ops: " + ", ".join(f"{op} {n}" for op, n in ops.most_common()))
    if a.ort:
        for path, outputs in ort_check(files).items():
            for o in outputs:
                print(f"ort {os.path.basename(path)}: {o['name']} {o['dims']} min {o['min']:.4g} max {o['max']:.4g} "
                      f"mean|x| {o['mean_abs']:.4g}{'' if o['finite'] else ' NOT FINITE'}")


if __name__ == "__main__":
    main()
