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
//     ArgMax/ArgMin with keepdims, Split, Pad, Slice, Resize (constant axes / pads / scales / sizes).
// Every Transpose is a region boundary. Storing a whole region permuted by D changes each Transpose
// at its edge (perms compose; one that becomes the identity disappears, one that only moves size-1
// dims becomes a Reshape) and needs a new Transpose where the region meets any other op, a graph
// input or a graph output. A region is rewritten only when that removes more Transposes than it adds,
// NHWC ones first, until none is left (so Transpose pairs and runs of Transposes cancel or
// compose too). Graph inputs and outputs keep their tensors, shapes and meaning exactly. Transposes
// with the identity perm are removed. With batch gears (--dynamic-batch) the batch axis never moves;
// with batch or image size gears no Transpose becomes a Reshape (its shape would hold one gear's).
#pragma once

#include "passes.hpp"

namespace kes::ir {

// nodes_removed: net number of nodes removed; nodes_fused: layout-sensitive ops switched to NHWC.
PassStats choose_layout(Graph& g);

}  // namespace kes::ir
