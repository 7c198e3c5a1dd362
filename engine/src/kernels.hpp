// kernels.hpp — scalar f32 reference kernels: clear, checked against double-precision oracles in the
// tests, and the baseline every faster kernel is compared with. None allocates.
#pragma once

#include <cstdint>

#include "model.hpp"

namespace kes {

// Binary elementwise with numpy broadcasting. Shapes are the verified tensor shapes; `out` may alias
// an input of the output's shape (each element is read before it is written).
void kernel_binary(Op op, const TensorInfo& a, const float* pa, const TensorInfo& b, const float* pb,
                   const TensorInfo& out, float* po, bool relu);
void kernel_unary(Op op, uint64_t count, const float* in, float* out);
// NHWC input, OHWI filter, optional bias (may be null).
void kernel_conv2d(const NodeInfo& node, const TensorInfo& in, const float* pin, const TensorInfo& filter,
                   const float* pf, const float* bias, const TensorInfo& out, float* pout);
// [N,K] x [Cout,K]^T + bias.
void kernel_fully_connected(const TensorInfo& in, const float* pin, const TensorInfo& w, const float* pw,
                            const float* bias, float* pout, bool relu);
// [M,K] x [K,N].
void kernel_matmul(const TensorInfo& a, const float* pa, const TensorInfo& b, const float* pb, float* pout);

}  // namespace kes
