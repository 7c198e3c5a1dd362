#!/usr/bin/python3
"""make_nchw_cnn.py — writes a MobileNetV2-shaped NCHW ONNX classifier with random weights.

The layout pass (engine/src/convert/pass_layout.hpp) is measured on what PyTorch exports: NCHW input,
Conv + BatchNormalization (unfused) + Clip(0, 6) stems, inverted residual blocks (1x1 expand,
3x3 depthwise, 1x1 project, residual Add), a GlobalAveragePool -> Flatten -> Gemm -> Softmax head.
No public model is needed: the weights are random (seeded), only the graph's shape matters for speed.

usage: /usr/bin/python3 make_nchw_cnn.py OUT.onnx [--size 224] [--width 1.0]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (expansion t, output channels c, repeats n, first stride s): MobileNetV2's table (Sandler et al. 2018).
BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base, array):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(array.astype(np.float32), n))
        return n

    def conv_bn(self, x, cin, cout, k, stride, group=1, relu6=True):
        # He-style scale keeps activations O(1) through 50 layers of random weights.
        w = self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (cin // group * k * k))
        c = self.name("conv")
        self.nodes.append(helper.make_node("Conv", [x, self.const("w", w)], [c], kernel_shape=[k, k],
                                           strides=[stride, stride], pads=[k // 2] * 4, group=group))
        bn = self.name("bn")
        self.nodes.append(helper.make_node(
            "BatchNormalization",
            [c, self.const("gamma", 1.0 + 0.1 * self.rng.standard_normal(cout)),
             self.const("beta", 0.1 * self.rng.standard_normal(cout)),
             self.const("mean", 0.1 * self.rng.standard_normal(cout)),
             self.const("var", 1.0 + 0.1 * self.rng.random(cout))], [bn], epsilon=1e-5))
        if not relu6:
            return bn
        y = self.name("relu6")
        lo, hi = self.name("lo"), self.name("hi")
        self.inits.append(numpy_helper.from_array(np.array(0.0, np.float32), lo))
        self.inits.append(numpy_helper.from_array(np.array(6.0, np.float32), hi))
        self.nodes.append(helper.make_node("Clip", [bn, lo, hi], [y]))
        return y


def build(size, width, seed):
    b = Builder(seed)
    ch = lambda c: max(8, int(c * width + 4) // 8 * 8)
    x = b.conv_bn("input", 3, ch(32), 3, 2)
    cin = ch(32)
    for t, c, n, s in BLOCKS:
        cout = ch(c)
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = b.conv_bn(x, cin, hidden, 1, 1) if t != 1 else x
            y = b.conv_bn(y, hidden, hidden, 3, stride, group=hidden)
            y = b.conv_bn(y, hidden, cout, 1, 1, relu6=False)
            if stride == 1 and cin == cout:
                r = b.name("add")
                b.nodes.append(helper.make_node("Add", [x, y], [r]))
                y = r
            x, cin = y, cout
    x = b.conv_bn(x, cin, 1280, 1, 1)
    b.nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"]))
    b.nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], axis=1))
    fc = b.const("fc_w", b.rng.standard_normal((1000, 1280)) / np.sqrt(1280))
    fb = b.const("fc_b", 0.01 * b.rng.standard_normal(1000))
    b.nodes.append(helper.make_node("Gemm", ["flat", fc, fb], ["logits"], transB=1))
    b.nodes.append(helper.make_node("Softmax", ["logits"], ["prob"], axis=1))
    graph = helper.make_graph(b.nodes, "mobilenetv2_like", [
        helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])
    ], [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 1000])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_nchw_cnn")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--width", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    onnx.save(build(a.size, a.width, a.seed), a.out)


if __name__ == "__main__":
    main()
