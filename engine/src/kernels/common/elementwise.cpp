// elementwise.cpp — fast Add, Mul and PRelu (f32) for the broadcasts CNNs use: equal shapes (residual adds),
// one operand over the innermost dims (a per-channel bias or scale in NHWC) and one operand over outer
// and inner dims with 1s between (squeeze-excite's [N,1,1,C] against [N,H,W,C]).
//
// The output is cut into rows of `inner` floats; the broadcast operand supplies one such row per
// outer index. Units are runs of rows fixed by the shape, so any thread count gives the same bytes.
#include <algorithm>
#include <string>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

constexpr size_t kFloatsPerUnit = 16 * 1024;  // 64 KiB of output per unit

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
    return std::make_unique<BinaryKernel>(op, rows, swap, same_or_rows, Activation::from_attrs(node.attrs), mk);
}

}  // namespace

std::unique_ptr<Kernel> select_add(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                   const Microkernels& mk) {
    return select_binary("add", mk.vadd_rows, true, node, outputs, mk);
}

std::unique_ptr<Kernel> select_mul(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                   const Microkernels& mk) {
    return select_binary("mul", mk.vmul_rows, true, node, outputs, mk);
}

std::unique_ptr<Kernel> select_prelu(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                     const Microkernels& mk) {
    return select_binary("prelu", mk.vprelu_rows, false, node, outputs, mk);
}

}  // namespace kernels
}  // namespace kes
