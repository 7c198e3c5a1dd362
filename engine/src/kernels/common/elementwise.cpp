// elementwise.cpp — fast Add, Mul, Sub, Div and PRelu (f32) for the broadcasts CNNs use: equal shapes (residual adds),
// one operand over the innermost dims (a per-channel bias or scale in NHWC) and one operand over outer
// and inner dims with 1s between (squeeze-excite's [N,1,1,C] against [N,H,W,C]).
//
// The output is cut into rows of `inner` floats; the broadcast operand supplies one such row per
// outer index. Units are runs of rows fixed by the shape, so any thread count gives the same bytes.
// Also BatchNormalization over the last axis, when it could not be folded into a producer (a
// pre-activation ResNet's BN of a residual sum): a per-channel scale and shift, packed at load.
#include <algorithm>
#include <cmath>
#include <string>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

constexpr size_t kFloatsPerUnit = 16 * 1024;  // 64 KiB of output per unit
constexpr size_t kMinFloatsPerOuter = 64;     // select_binary: below this per outer index, the reference

// out = a op b where b (the broadcast operand, or b == a's shape when mid == 1 and inner == all)
// is [outer, 1..., inner] against a's [outer, mid, inner].
struct BroadcastRows {
    size_t outer = 1, mid = 1, inner = 1;
};

// True when `small`, right-aligned to `out`, is out's outer dims, then 1s, then out's inner dims.
bool match_rows(const Shape& small, const Shape& out, BroadcastRows& r) {
    const size_t rank = out.size();
    if (small.size() > rank) return false;
    Shape s(rank - small.size(), 1);
    s.insert(s.end(), small.begin(), small.end());
    size_t j = rank;
    while (j > 0 && s[j - 1] == out[j - 1]) --j;  // inner: equal dims from the back
    size_t i = 0;
    while (i < j && s[i] == out[i]) ++i;  // outer: equal dims from the front
    for (size_t d = i; d < j; ++d)
        if (s[d] != 1) return false;
    r = BroadcastRows{};
    for (size_t d = 0; d < i; ++d) r.outer *= static_cast<size_t>(out[d]);
    for (size_t d = i; d < j; ++d) r.mid *= static_cast<size_t>(out[d]);
    for (size_t d = j; d < rank; ++d) r.inner *= static_cast<size_t>(out[d]);
    return true;
}

using RowsFn = void (*)(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp clamp);

class BinaryKernel final : public Kernel {
public:
    BinaryKernel(const char* op, const BroadcastRows& rows, bool swap, RowsFn fn, const Activation& act,
                 const Microkernels& mk)
        : rows_(rows), swap_(swap), fn_(fn), name_(std::string(op) + "-" + mk.name) {
        after_ = fused_activation(act, mk);
    }
    const char* impl() const override { return name_.c_str(); }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* a = static_cast<const float*>(inputs[swap_ ? 1 : 0]);
        const auto* b = static_cast<const float*>(inputs[swap_ ? 0 : 1]);
        auto* y = static_cast<float*>(outputs[0]);
        const size_t inner = rows_.inner, mid = rows_.mid;
        const size_t rows_per_unit = std::max<size_t>(1, kFloatsPerUnit / std::max<size_t>(inner, 1));
        const size_t units_per_outer = (mid + rows_per_unit - 1) / rows_per_unit;
        parallel_units(rc, rows_.outer * units_per_outer, [&](uint64_t unit, uint32_t) {
            const size_t o = unit / units_per_outer, r0 = (unit % units_per_outer) * rows_per_unit;
            const size_t rows = std::min(rows_per_unit, mid - r0);
            const size_t at = (o * mid + r0) * inner;
            fn_(rows, inner, a + at, b + o * inner, y + at, after_.clamp);
            after_.apply_after(y + at, rows * inner);
        });
    }

private:
    BroadcastRows rows_;
    bool swap_;
    RowsFn fn_;
    FusedActivation after_;
    std::string name_;
};

std::unique_ptr<Kernel> select_binary(const char* op, RowsFn same_or_rows, bool commutes, const NodeDesc& node,
                                      const std::vector<TensorDesc>& outputs, const Microkernels& mk) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[1];
    const Shape& out = outputs[0].shape;
    if (a.dtype != KES_F32 || b.dtype != KES_F32 || outputs[0].dtype != KES_F32) return nullptr;
    if (!a.quant.empty() || !b.quant.empty() || outputs[0].elements() == 0) return nullptr;
    BroadcastRows rows;
    // Add and Mul commute exactly in floating point, so the full-size operand may come second (not PRelu's).
    bool swap = false;
    if (a.shape == out && match_rows(b.shape, out, rows)) {
        swap = false;
    } else if (commutes && b.shape == out && match_rows(a.shape, out, rows)) {
        swap = true;
    } else {
        return nullptr;
    }
    // Each outer index is a call with its own row of b: when that is a handful of floats (a softmax
    // written as ops, x - max over a last axis of 2: [1,635,475,2] - [1,635,475,1]), the calls cost
    // 5x the reference's loop.
    if (rows.outer > 1 && rows.mid * rows.inner < kMinFloatsPerOuter) return nullptr;
    return std::make_unique<BinaryKernel>(op, rows, swap, same_or_rows, Activation::from_attrs(node.attrs), mk);
}

// BatchNormalization over the last axis (NHWC, or [N, C]): per channel c, y = x · k[c] + d[c] with
// k = scale / sqrt(var + eps) and d = B - mean · k computed at load exactly as the reference computes
// them per run, and packed (2·C floats), so the result is the reference's bit for bit where the
// compiler does not contract the reference's multiply-add (x86-64).
class BatchNormKernel final : public Kernel {
public:
    BatchNormKernel(size_t rows, size_t c, const float* const* params, float eps, const Microkernels& mk)
        : rows_(rows), c_(c), eps_(eps), mk_(mk), name_(std::string("batchnorm-") + mk.name) {
        for (size_t i = 0; i < 4; ++i) params_[i] = params[i];
        rows_per_unit_ = std::max<size_t>(1, kFloatsPerUnit / c);
    }
    const char* impl() const override { return name_.c_str(); }
    size_t packed_bytes() const override { return 2 * c_ * sizeof(float); }
    void pack(void* dst) const override {
        float* k = static_cast<float*>(dst);
        float* d = k + c_;
        const float *scale = params_[0], *bias = params_[1], *mean = params_[2], *var = params_[3];
        for (size_t ch = 0; ch < c_; ++ch) {
            k[ch] = scale[ch] / std::sqrt(var[ch] + eps_);
            d[ch] = bias[ch] - mean[ch] * k[ch];
        }
    }
    void bind_packed(const void* packed) override { packed_ = static_cast<const float*>(packed); }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        parallel_units(rc, (rows_ + rows_per_unit_ - 1) / rows_per_unit_, [&](uint64_t unit, uint32_t) {
            const size_t r0 = unit * rows_per_unit_, rows = std::min(rows_per_unit_, rows_ - r0);
            mk_.vaffine_rows(rows, c_, x + r0 * c_, packed_, packed_ + c_, y + r0 * c_);
        });
    }

private:
    size_t rows_, c_, rows_per_unit_ = 1;
    const float* params_[4];  // scale, B, mean, var: the constants, read by pack() only
    float eps_;
    const Microkernels& mk_;
    std::string name_;
    const float* packed_ = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> select_batch_norm(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                          const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    if (x.dtype != KES_F32 || !x.quant.empty() || outputs.size() != 1 || outputs[0].elements() == 0) return nullptr;
    // The channel axis must be the last: NHWC (the layout pass's) or a 2-D [N, C].
    if (get_layout(node.attrs) != Layout::NHWC && x.rank() != 2) return nullptr;
    const float* params[4];
    for (size_t i = 0; i < 4; ++i) {
        const TensorDesc& p = *node.inputs[i + 1];
        if (!p.is_const() || p.dtype != KES_F32 || !p.quant.empty()) return nullptr;
        params[i] = static_cast<const float*>(p.data);
    }
    const size_t c = static_cast<size_t>(x.shape.back());
    return std::make_unique<BatchNormKernel>(static_cast<size_t>(x.elements()) / c, c, params,
                                             node.attrs.get_float("epsilon", 1e-5f), mk);
}

std::unique_ptr<Kernel> select_add(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                   const Microkernels& mk) {
    return select_binary("add", mk.vadd_rows, true, node, outputs, mk);
}

std::unique_ptr<Kernel> select_mul(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                   const Microkernels& mk) {
    return select_binary("mul", mk.vmul_rows, true, node, outputs, mk);
}

// Sub and Div do not commute: only a full-size first operand (the broadcast one second) is taken.
std::unique_ptr<Kernel> select_sub(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                   const Microkernels& mk) {
    return select_binary("sub", mk.vsub_rows, false, node, outputs, mk);
}

std::unique_ptr<Kernel> select_div(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                   const Microkernels& mk) {
    return select_binary("div", mk.vdiv_rows, false, node, outputs, mk);
}

std::unique_ptr<Kernel> select_prelu(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                     const Microkernels& mk) {
    return select_binary("prelu", mk.vprelu_rows, false, node, outputs, mk);
}

}  // namespace kernels
}  // namespace kes
