// ops.hpp — the op families; each adds its OpDefs to the registry (op_registry.cpp calls them all).
#pragma once

#include <vector>

#include "../../op.hpp"
#include "../../ops/dtype_codes.hpp"

namespace kes {

using OpList = std::vector<OpDef>;

void add_elementwise_ops(OpList& ops);  // kernels/ref/elementwise.cpp: unary, binary (broadcast), Clip, PRelu, ...
void add_nn_ops(OpList& ops);           // kernels/ref/nn.cpp: Conv, ConvTranspose, Gemm, MatMul, pools, BatchNorm, ...
void add_shape_ops(OpList& ops);        // kernels/ref/shape.cpp: Reshape, Transpose, Concat, Split, Slice, ...
void add_reduce_ops(OpList& ops);       // kernels/ref/reduce.cpp: Softmax, Reduce*, ...
void add_misc_ops(OpList& ops);         // kernels/ref/misc.cpp: Pad, Cast, Gather, Shape, ConstantOfShape, ...
void add_resize_ops(OpList& ops);       // kernels/ref/resize.cpp: Resize
void add_quant_ops(OpList& ops);        // kernels/ref/quant.cpp: QuantizeLinear, DequantizeLinear, QLinear*, *Integer
void add_rnn_ops(OpList& ops);          // kernels/ref/rnn.cpp: LSTM, GRU, RNN (state kept in the outputs)
void add_sampling_ops(OpList& ops);     // kernels/ref/sampling.cpp: GridSample, RoiAlign, MaxUnpool
void add_detection_ops(OpList& ops);    // kernels/ref/nms.cpp: NonMaxSuppression (bounded output, valid count)
void add_mediapipe_ops(OpList& ops);    // kernels/ref/mediapipe_ops.cpp: MediaPipe's custom TFLite ops

}  // namespace kes
