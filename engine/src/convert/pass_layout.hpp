// pass_layout.hpp — the converter's layout choice: removes the Transposes that tf2onnx-style exports
// wrap around every Conv and pool (x NHWC → Transpose(0,3,1,2) → Conv → Transpose(0,2,3,1) → ...) by
// switching those ops to data_layout NHWC (op.hpp) and letting the Transposes cancel. A converter pass
// (passes.hpp): it needs inferred shapes and leaves them inferred (it runs infer_shapes itself when it
// changed the graph); convert.cpp runs it after fold_constants / infer_shapes, before the fusions.
//
// How: tensors connected through ops that can work in either layout form regions. An op joins a
// region when it does not care about the layout or can be told the new one:
//   - elementwise unary ops and Clip (scalar bounds), Cast, Identity, one-output Dropout;
//   - broadcasting ops (Add, Sub, Mul, Div, Pow, Mod, PRelu, Max, Min, Sum, Mean, comparisons, logic,
//     Where) whose runtime operands all have the output's rank — constant operands are rewritten
//     (a per-channel [C,1,1] becomes [1,1,1,C]);
//   - NCHW Conv with a constant weight (OIHW → OHWI), NCHW ConvTranspose with a constant weight
//     ([C, M/g, K...] → [M, K..., C/g]), MaxPool (no Indices output), AveragePool, GlobalAveragePool,
//     GlobalMaxPool, BatchNormalization — only when the region turns NCHW into NHWC;
//   - ops with axes, which are renumbered: Concat, Softmax, LogSoftmax, Hardmax, Reduce* and
//     ArgMax/ArgMin with keepdims, Split, ChannelShuffle, Pad, Slice, Resize (constant axes / pads /
//     scales / sizes).
// Every Transpose is a region boundary. Storing a whole region permuted by D changes each Transpose
// at its edge (perms compose; one that becomes the identity disappears, one that only moves size-1
// dims becomes a Reshape) and needs a new Transpose where the region meets any other op, a graph
// input or a graph output. A region is rewritten only when that pays: when it removes more Transposes
// than it adds, or, for NCHW → NHWC, when the convs and pools it hands to the fast NHWC kernels gain
// more than the Transposes it adds cost (below); NHWC ones first, until none is left (so Transpose
// pairs and runs of Transposes cancel or compose too). So a plain NCHW CNN (PyTorch's exports) is
// stored NHWC between one Transpose after its input and one before each output that a region reaches
// (a Flatten or Reshape of a region tensor reads the NCHW order through a Transpose too, or through
// a Reshape when only size-1 dims move, as after a global pool). Graph inputs and outputs keep their
// tensors, shapes and meaning exactly. Transposes
// with the identity perm are removed. With batch gears (--dynamic-batch) the batch axis never moves;
// with batch or image size gears no Transpose becomes a Reshape (its shape would hold one gear's).
#pragma once

#include "passes.hpp"

namespace kes::ir {

// The cost model's units: one Transpose added = 1. A 2-D f32 Conv (or one-group ConvTranspose) switched
// to NHWC gains kNhwcGainConv: the fast kernels run only NHWC convs, and the reference conv is 20-50x
// slower. Even the cheapest conv a CNN has, a 3x3 depthwise one, costs the reference kernel ~20 ns per
// output element (MobileNetV2's [1,144,56,56]: 9.5 ms), a Transpose ~0.6 ns per element (its
// [1,3,224,224] input: 0.085 ms; kes-model-bench --profile, one AMD EPYC thread): one conv outweighs
// many Transposes of its own size. 4, not 10+: the Transposes a region adds sit at its edges, whose
// tensors can be larger than a strided or narrow conv's output. So a region of one conv meeting the
// graph at five or more places stays NCHW, any conv chain goes NHWC.
// A MaxPool gains 1: its fast kernel saves little beside a conv's (k*k compares per output).
constexpr int kNhwcGainConv = 4;
constexpr int kNhwcGainMaxPool = 1;

// nodes_removed: net number of nodes removed; nodes_fused: layout-sensitive ops switched to NHWC.
PassStats choose_layout(Graph& g);

}  // namespace kes::ir
