// select.cpp — one table from op name to the fast kernels that may run it (select.hpp).
#include "select.hpp"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "common/kernels.hpp"
#include "kes/logging.hpp"

namespace kes {

namespace {

struct FastOp {
    std::string_view op;
    kernels::SelectFn select;
};

constexpr FastOp kFastOps[] = {
    {"Add", kernels::select_add},
    {"AveragePool", kernels::select_average_pool},
    {"BatchNormalization", kernels::select_batch_norm},
    {"ChannelShuffle", kernels::select_channel_shuffle},
    {"Clip", kernels::select_clip},
    {"Clip", kernels::select_clip_bytes},
    {"Concat", kernels::select_concat},
    {"Conv", kernels::select_pointwise_conv},
    {"Conv", kernels::select_conv},
    {"ConvTranspose", kernels::select_conv_transpose},
    {"Div", kernels::select_div},
    {"Exp", kernels::select_exp},
    {"Gemm", kernels::select_gemm},
    {"GlobalAveragePool", kernels::select_global_average_pool},
    {"GlobalMaxPool", kernels::select_global_max_pool},
    {"HardSigmoid", kernels::select_hard_sigmoid},
    {"HardSwish", kernels::select_hard_swish},
    {"LeakyRelu", kernels::select_leaky_relu},
    {"MatMul", kernels::select_matmul},
    {"MaxPool", kernels::select_max_pool},
    {"MaxPool", kernels::select_quantized_max_pool},
    {"Mul", kernels::select_mul},
    {"PRelu", kernels::select_prelu},
    {"Pow", kernels::select_pow},
    {"QLinearAdd", kernels::select_qlinear_add},
    {"QLinearConv", kernels::select_qlinear_conv},
    {"QLinearMatMul", kernels::select_qlinear_matmul},
    {"QuantizeLinear", kernels::select_quantize_linear},
    {"Relu", kernels::select_relu},
    {"Resize", kernels::select_resize},
    {"Sigmoid", kernels::select_sigmoid},
    {"Softmax", kernels::select_softmax},
    {"Split", kernels::select_split},
    {"Sub", kernels::select_sub},
    {"Tanh", kernels::select_tanh},
    {"Transpose", kernels::select_transpose},
};

// KES_KERNELS=reference runs the reference kernels only; unset or empty, the fast kernels. Any other
// value is a typo to warn about (as every other KES_* variable does), not a silent default.
bool reference_only() {
    static const bool ref = [] {
        const char* v = std::getenv("KES_KERNELS");
        if (v == nullptr || *v == '\0') return false;
        if (std::strcmp(v, "reference") == 0) return true;
        KES_LOGW("engine", "KES_KERNELS=%s is not \"reference\" (the only value); using the fast kernels", v);
        return false;
    }();
    return ref;
}

}  // namespace

std::unique_ptr<Kernel> select_kernel(const NodeDesc& node, const std::vector<TensorDesc>& outputs) {
    if (reference_only()) return nullptr;
    return select_kernel(node, outputs, kernels::microkernels_active());
}

std::unique_ptr<Kernel> select_kernel(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                      const kernels::Microkernels& table) {
    // The fast int8 kernels requantize as ONNX Runtime does (an f32 multiplier); a TFLite model's quantized
    // ops follow TFLite's fixed-point arithmetic (kes_requantization "tflite", ops/quant.hpp), which only
    // their reference kernels implement, so they keep those and stay bit-exact with TFLite.
    if (node.attrs.get_string("kes_requantization") == "tflite") return nullptr;
    // An op may have several entries, most specific first: the first that takes the node runs it.
    for (const FastOp& f : kFastOps)
        if (f.op == node.op)
            if (std::unique_ptr<Kernel> k = f.select(node, outputs, table)) return k;
    return nullptr;
}

const char* kernel_set_name() {
    return reference_only() ? "reference" : kernels::microkernels_active().name;
}

}  // namespace kes
