// kernels.hpp — the fast kernels' entry points, one per op family (kernels/common/*.cpp). Each looks
// at a node that the reference create() has already validated and shaped, and returns a fast kernel
// for it, or nullptr when it does not cover the case (the reference kernel then stays).
#pragma once

#include <memory>
#include <vector>

#include "../../op.hpp"
#include "microkernels.hpp"

namespace kes {
namespace kernels {

// A fused activation as the fast kernels apply it: Relu, Relu6 and Clip as the clamp the microkernels
// apply in registers; any other (Sigmoid, Swish, HardSwish, LeakyRelu, ...) by the table's vectorised
// unary function over outputs just stored (still in L1), not by the reference's scalar std::exp.
struct FusedActivation {
    Clamp clamp;
    UnaryFn after = nullptr;  // nullptr when the clamp is all there is
    UnaryParams params{};
    void apply_after(float* y, size_t n) const {
        if (after) after(n, y, y, params);
    }
};
FusedActivation fused_activation(const Activation& act, const Microkernels& mk);

using SelectFn = std::unique_ptr<Kernel> (*)(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                             const Microkernels& mk);

std::unique_ptr<Kernel> select_conv(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_conv_transpose(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_transpose(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_batch_norm(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_resize(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_channel_shuffle(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_concat(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_split(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_add(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_mul(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_sub(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_div(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_prelu(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_pow(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_max_pool(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_average_pool(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_global_average_pool(const NodeDesc&, const std::vector<TensorDesc>&,
                                                   const Microkernels&);
std::unique_ptr<Kernel> select_global_max_pool(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
// A 1×1 Conv on images smaller than a tile, as one Gemm (gemm.cpp); nullptr otherwise (select_conv's turn).
std::unique_ptr<Kernel> select_pointwise_conv(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
// A depthwise Conv's fast kernel and the 1×1, stride-1, ungrouped Conv's fast kernel that consumes its
// output, as one kernel over bands of output rows (conv_nhwc.cpp): the intermediate tensor stays in
// the worker's scratch tile. nullptr when the pair does not qualify (another kernel, another table,
// a residual on the depthwise conv, shapes that do not chain). The result borrows both kernels, which
// keep their packed weights (pack and bind them before running it); it takes the pointwise node's
// inputs with input 0 replaced by the depthwise node's input 0, and writes the pointwise node's output.
// Same bytes as the two kernels run one after the other, for any thread count.
std::unique_ptr<Kernel> fuse_depthwise_pointwise(const Kernel& dw, const Kernel& pw);
// QLinearConv, 2-D NCHW with constant weights and bias, on the int8 microkernels (qconv_nchw.cpp).
std::unique_ptr<Kernel> select_qlinear_conv(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
// QLinearAdd of two inputs of one shape, vectorised (qelementwise.cpp).
std::unique_ptr<Kernel> select_qlinear_add(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
// MaxPool on u8/i8 2-D NCHW images, without Indices (qpool_nchw.cpp).
std::unique_ptr<Kernel> select_quantized_max_pool(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
// QuantizeLinear per tensor, vectorised (qelementwise.cpp).
std::unique_ptr<Kernel> select_quantize_linear(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
// Clip on u8/i8 (qelementwise.cpp).
std::unique_ptr<Kernel> select_clip_bytes(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
// QLinearMatMul with a constant 2-D B on the int8 qgemm tile (qgemm.cpp).
std::unique_ptr<Kernel> select_qlinear_matmul(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_gemm(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_matmul(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_relu(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_clip(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_leaky_relu(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_hard_sigmoid(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_hard_swish(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_sigmoid(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_tanh(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_exp(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);
std::unique_ptr<Kernel> select_softmax(const NodeDesc&, const std::vector<TensorDesc>&, const Microkernels&);

}  // namespace kernels
}  // namespace kes
