// qelementwise.cpp — fast elementwise kernels of quantized models, each the reference's arithmetic
// (kernels/ref/quant.cpp, ops/quant.hpp) in a loop the compiler vectorises, split over threads:
// - QLinearAdd (com.microsoft) of two inputs of one shape (a residual): a_s·(a − za) + b_s·(b − zb), then
//   / c_s, in f32, clamped, rounded half to even, + zc. Broadcasts keep the reference kernel.
// - QuantizeLinear per tensor (a model's input): x / scale, clamped, rounded half to even, + zp.
// - Clip on u8/i8 (a Relu left after a QLinearAdd runs on the bytes): min(max(x, lo), hi) as the reference.
// This file is compiled without FP contraction (ops.cmake): an FMA would round the sum differently from
// the reference and from ONNX Runtime.
#include <limits>
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
constexpr float kRound = 12582912.0f;  // 1.5 · 2^23

template <class T>
void qadd(const T* a, const T* b, T* c, size_t n, const QAddSpec& s) {
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

// QuantizeLinear with one scale and zero point, read at run time as the reference reads them.
template <class T>
void quantize(const float* x, T* y, size_t n, float scale, int32_t zp) {
    const float lo = static_cast<float>(std::numeric_limits<T>::min() - zp);
    const float hi = static_cast<float>(std::numeric_limits<T>::max() - zp);
    for (size_t i = 0; i < n; ++i) {
        float v = x[i] / scale;
        v = v > lo ? v : lo;  // NaN takes the lower bound, as in round_to_quantized
        v = v < hi ? v : hi;
        y[i] = static_cast<T>(static_cast<int32_t>((v + kRound) - kRound) + zp);
    }
}

class QuantizeKernel final : public Kernel {
public:
    QuantizeKernel(size_t count, bool is_signed, bool has_zero_point)
        : count_(count), signed_(is_signed), has_zero_point_(has_zero_point) {}
    const char* impl() const override { return "quantize-vectorised"; }
    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const float scale = *static_cast<const float*>(inputs[1]);
        const void* zp = has_zero_point_ ? inputs[2] : nullptr;  // an omitted last input has no slot
        parallel_units(rc, (count_ + kChunk - 1) / kChunk, [&](uint64_t unit, uint32_t) {
            const size_t begin = static_cast<size_t>(unit) * kChunk, n = std::min(kChunk, count_ - begin);
            const float* x = static_cast<const float*>(inputs[0]) + begin;
            if (signed_)
                quantize(x, static_cast<int8_t*>(outputs[0]) + begin, n, scale,
                         zp ? *static_cast<const int8_t*>(zp) : 0);
            else
                quantize(x, static_cast<uint8_t*>(outputs[0]) + begin, n, scale,
                         zp ? *static_cast<const uint8_t*>(zp) : 0);
        });
    }

private:
    size_t count_;
    bool signed_, has_zero_point_;
};

template <class T>
void clip_bytes(const T* x, T* y, size_t n, T lo, T hi) {
    for (size_t i = 0; i < n; ++i) {
        const T v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;  // min > max gives max everywhere, as ONNX says
    }
}

class ClipBytesKernel final : public Kernel {
public:
    ClipBytesKernel(size_t count, bool is_signed, bool has_min, bool has_max)
        : count_(count), signed_(is_signed), has_min_(has_min), has_max_(has_max) {}
    const char* impl() const override { return "clip-bytes"; }
    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        if (signed_)
            clip<int8_t>(rc, inputs, outputs);
        else
            clip<uint8_t>(rc, inputs, outputs);
    }

private:
    template <class T>
    void clip(const RunContext& rc, const void* const* inputs, void* const* outputs) const {
        // Bounds are read per run (they may be runtime tensors); an omitted one is the type's end.
        const T lo = has_min_ && inputs[1] ? *static_cast<const T*>(inputs[1]) : std::numeric_limits<T>::lowest();
        const T hi = has_max_ && inputs[2] ? *static_cast<const T*>(inputs[2]) : std::numeric_limits<T>::max();
        parallel_units(rc, (count_ + kChunk - 1) / kChunk, [&](uint64_t unit, uint32_t) {
            const size_t begin = static_cast<size_t>(unit) * kChunk, n = std::min(kChunk, count_ - begin);
            clip_bytes(static_cast<const T*>(inputs[0]) + begin, static_cast<T*>(outputs[0]) + begin, n, lo, hi);
        });
    }

    size_t count_;
    bool signed_, has_min_, has_max_;
};

}  // namespace

// Clip(x, min, max) on u8/i8; the reference create() has checked it.
std::unique_ptr<Kernel> select_clip_bytes(const NodeDesc& node, const std::vector<TensorDesc>&, const Microkernels&) {
    const TensorDesc& x = *node.inputs[0];
    if (!is_quantized_dtype(x.dtype) || x.elements() == 0) return nullptr;
    return std::make_unique<ClipBytesKernel>(static_cast<size_t>(x.elements()), x.dtype == KES_I8,
                                             node.input(1) != nullptr, node.input(2) != nullptr);
}

// QuantizeLinear(x, y_scale, y_zero_point) per tensor (one scale); the reference create() has checked it.
std::unique_ptr<Kernel> select_quantize_linear(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                               const Microkernels&) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc* zp = node.input(2);
    if (x.dtype != KES_F32 || node.inputs[1]->elements() != 1 || (zp && zp->elements() != 1)) return nullptr;
    if (!is_quantized_dtype(outputs[0].dtype) || x.elements() == 0) return nullptr;
    return std::make_unique<QuantizeKernel>(static_cast<size_t>(x.elements()), outputs[0].dtype == KES_I8,
                                            zp != nullptr);
}

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
