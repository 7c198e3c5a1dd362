// qelementwise.cpp — fast QLinearAdd (com.microsoft) of two inputs of one shape (a residual connection):
// the reference's arithmetic, a_s·(a − za) + b_s·(b − zb), then / c_s, in f32, clamped, rounded half to
// even, + zc (kernels/ref/quant.cpp, ops/quant.hpp), in a loop the compiler vectorises, over threads.
// This file is compiled without FP contraction (ops.cmake): an FMA would round the sum differently from
// the reference and from ONNX Runtime. Other shapes (broadcasts) keep the reference kernel.
#include <string>

#include "../../ops/quant.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

// Elements per unit: enough to outweigh taking one, few enough to share a layer over threads.
constexpr size_t kChunk = 16 * 1024;

struct QAddSpec {
    size_t count = 0;
    bool is_signed = false;
    float sa = 1, sb = 1, sc = 1, lo = 0, hi = 0;
    int32_t za = 0, zb = 0, zc = 0;
};

// round_to_quantized() of ops/quant.hpp, in a form SSE2 and NEON vectorise: v clamped (a NaN takes the
// lower bound, as there) to within ±510 of zero, where adding and subtracting 1.5·2²³ rounds half to
// even (the default rounding mode) exactly as nearbyint does.
template <class T>
void qadd(const T* a, const T* b, T* c, size_t n, const QAddSpec& s) {
    constexpr float kRound = 12582912.0f;  // 1.5 · 2^23
    for (size_t i = 0; i < n; ++i) {
        const float da = static_cast<float>(static_cast<int32_t>(a[i]) - s.za);
        const float db = static_cast<float>(static_cast<int32_t>(b[i]) - s.zb);
        const float sum = s.sa * da + s.sb * db;
        float v = sum / s.sc;
        v = v > s.lo ? v : s.lo;
        v = v < s.hi ? v : s.hi;
        const float rounded = (v + kRound) - kRound;
        c[i] = static_cast<T>(static_cast<int32_t>(rounded) + s.zc);
    }
}

class QAddKernel final : public Kernel {
public:
    explicit QAddKernel(const QAddSpec& s) : s_(s) {}
    const char* impl() const override { return "qadd-vectorised"; }
    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        parallel_units(rc, (s_.count + kChunk - 1) / kChunk, [&](uint64_t unit, uint32_t) {
            const size_t begin = static_cast<size_t>(unit) * kChunk, n = std::min(kChunk, s_.count - begin);
            if (s_.is_signed)
                qadd(static_cast<const int8_t*>(inputs[0]) + begin, static_cast<const int8_t*>(inputs[3]) + begin,
                     static_cast<int8_t*>(outputs[0]) + begin, n, s_);
            else
                qadd(static_cast<const uint8_t*>(inputs[0]) + begin, static_cast<const uint8_t*>(inputs[3]) + begin,
                     static_cast<uint8_t*>(outputs[0]) + begin, n, s_);
        });
    }

private:
    QAddSpec s_;
};

}  // namespace

// QLinearAdd(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp): the reference create() has checked it.
std::unique_ptr<Kernel> select_qlinear_add(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                           const Microkernels&) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[3];
    if (a.shape != b.shape || outputs[0].shape != a.shape || !is_quantized_dtype(a.dtype)) return nullptr;
    const Quant qa = read_quant(*node.inputs[1], node.input(2), a.dtype, "A");
    const Quant qb = read_quant(*node.inputs[4], node.input(5), b.dtype, "B");
    const Quant qc = read_quant(*node.inputs[6], node.input(7), a.dtype, "C");
    QAddSpec s;
    s.count = static_cast<size_t>(a.elements());
    if (s.count == 0) return nullptr;
    s.is_signed = a.dtype == KES_I8;
    s.sa = qa.scale[0], s.sb = qb.scale[0], s.sc = qc.scale[0];
    s.za = quant_zero_point(qa, 0), s.zb = quant_zero_point(qb, 0), s.zc = quant_zero_point(qc, 0);
    const QuantRange range =
        fused_activation_range(Activation::from_attrs(node.attrs), s.sc, s.zc, quantized_range(a.dtype));
    s.lo = static_cast<float>(range.min - s.zc), s.hi = static_cast<float>(range.max - s.zc);
    return std::make_unique<QAddKernel>(s);
}

}  // namespace kernels
}  // namespace kes
