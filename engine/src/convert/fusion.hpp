// fusion.hpp — the converter's fusion passes (run by convert.cpp after fold_constants, before
// remove_dead_nodes; see passes.hpp). Each needs inferred shapes, keeps every tensor's shape, and keeps
// the graph's outputs (up to float rounding where weights are rescaled). A fusion applies only when
// the intermediate tensor has exactly one consumer and is not a graph output, and only to f32 data.
#pragma once

#include "passes.hpp"

namespace kes::ir {

// BatchNormalization (inference) and per-channel affine "scale" ops — Mul, Add, Sub, Div by a constant
// that is a scalar or varies along the channel axis only — after a Conv (NCHW: channel axis 1, NHWC:
// the last; the filter's dim 0 is the output channel in both layouts) or a Gemm (axis 1) are folded
// into the weights and bias (Gemm: B and C; beta becomes 1). The producer must have constant weights
// and no fused activation yet. Repeats until nothing changes (Conv → BN → Mul → Add fold in one call).
PassStats fuse_channel_affine(Graph& g);

// Relu, Clip (constant bounds), LeakyRelu, HardSwish, HardSigmoid, Sigmoid, Tanh after Conv,
// ConvTranspose, Gemm, MatMul, Add, Sub, Mul or Div become the producer's "activation" attributes
// (op.hpp's Activation), and so does Mul(x, Sigmoid(x)) after such a producer (Swish, the SiLU of
// YOLOv5/v8 and EfficientNet exports), when x feeds nothing else. A producer already carrying an
// activation is left alone.
PassStats fuse_activations(Graph& g);

// Add(Conv(x), r) (and its fused activation) → Conv(x, w, b, r): the Conv's input 3 is added before its
// activation, saving a pass over both tensors (ONNX Runtime's Conv+Add fusion). Only an Add without
// broadcast whose other input is not the Conv's output; the fused node takes the Add's place.
PassStats fuse_residual_adds(Graph& g);

// ShuffleNet's channel shuffle, Reshape (one axis of C split into g × C/g) → Transpose (swapping those
// two) → Reshape (back to the input's shape), becomes one ChannelShuffle node (axis, group; see
// kernels/ref/shape.cpp), when the intermediates feed nothing else. convert.cpp runs it before the
// layout pass, which renumbers its axis like Softmax's: the shuffle then stays inside an NHWC region
// instead of ending it with a Transpose on each side.
PassStats fuse_channel_shuffle(Graph& g);

// Conv, MaxPool, AveragePool and LpPool with auto_pad SAME_UPPER / SAME_LOWER / VALID get the explicit
// "pads" those modes compute (TF's SAME), and auto_pad is removed, so the file never depends on an
// input-shape-derived padding rule. Graphs with dynamic image size gears keep auto_pad (their pads
// follow the gear).
PassStats make_padding_explicit(Graph& g);

// QDQ groups (DequantizeLinear → Conv/MatMul/Gemm/Add/Mul/Concat/GlobalAveragePool/... → QuantizeLinear,
// as ONNX Runtime's quantize_static writes them) become the quantized ops QLinearConv, QLinearMatMul,
// QLinearAdd, ...; ops that commute with the quantization (MaxPool, Relu, Clip, view ops) run on the
// quantized values. fusion_qdq.cpp lists the rules. Needs inferred shapes and the DequantizeLinear
// of weights unfolded (fold_constants' keep_quantized); logs what stays in f32. Not part of run_fusions:
// convert.cpp runs it right after shape inference, before the other passes see float weights.
PassStats fuse_qdq(Graph& g);

// All of the above in the order convert.cpp runs them: padding, channel affine, activations.
PassStats run_fusions(Graph& g);

}  // namespace kes::ir
