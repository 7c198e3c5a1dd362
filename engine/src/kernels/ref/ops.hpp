// ops.hpp — the op families; each adds its OpDefs to the registry (op_registry.cpp calls them all).
#pragma once

#include <vector>

#include "../../op.hpp"

namespace kes {

using OpList = std::vector<OpDef>;

void add_elementwise_ops(OpList& ops);  // ops/elementwise.cpp: unary, binary (broadcast), Clip, PRelu, ...
void add_nn_ops(OpList& ops);           // ops/nn.cpp: Conv, ConvTranspose, Gemm, MatMul, pools, BatchNorm, ...
void add_shape_ops(OpList& ops);        // ops/shape.cpp: Reshape, Transpose, Concat, Split, Slice, ...
void add_reduce_ops(OpList& ops);       // ops/reduce.cpp: Softmax, Reduce*, ...
void add_misc_ops(OpList& ops);         // ops/misc.cpp: Resize, Pad, Cast, Gather, Shape, ConstantOfShape, ...
void add_rnn_ops(OpList& ops);          // ops/rnn.cpp: LSTM, GRU, RNN (state kept in the outputs)
void add_sampling_ops(OpList& ops);     // ops/sampling.cpp: GridSample, RoiAlign, MaxUnpool
void add_detection_ops(OpList& ops);    // ops/nms.cpp: NonMaxSuppression (bounded output, valid count)
void add_mediapipe_ops(OpList& ops);    // kernels/ref/mediapipe_ops.cpp: MediaPipe's custom TFLite ops

// ONNX TensorProto data type codes (Cast's "to", ConstantOfShape's "dtype") ↔ kes_dtype (ops/misc.cpp).
// Both throw KES_ERR_UNSUPPORTED for a type Kestrel does not have.
kes_dtype onnx_to_kes_dtype(int64_t onnx_type);
int64_t kes_dtype_to_onnx(kes_dtype dtype);

}  // namespace kes
