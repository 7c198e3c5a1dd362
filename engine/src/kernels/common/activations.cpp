// activations.cpp — fast standalone activations (f32): Relu, Clip, LeakyRelu, HardSigmoid, HardSwish,
// Sigmoid, Tanh as nodes of their own (the converter fuses most into their producer; these are the
// ones it could not, e.g. after an Add or a Concat), Exp, Pow(x, 2), and Softmax over the last axis.
//
// - Relu, Clip, LeakyRelu, HardSigmoid and HardSwish compute what the reference computes, in the same
//   operations, so they agree bit for bit. Sigmoid, Tanh and Softmax use the tables' polynomial e^x
//   (microkernels.hpp): within a few ulp of the reference's std::exp / std::tanh, not equal to them. So
//   does Exp, outside the polynomial's range through std::exp itself.
// - Units are runs of a fixed number of elements (Softmax: of whole rows), never of the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

constexpr size_t kFloatsPerUnit = 16 * 1024;  // 64 KiB of output per unit
constexpr size_t kMinSoftmaxRow = 16;

class UnaryKernel final : public Kernel {
public:
    // clip_inputs: how many inputs the node has; Clip's min and max are inputs 1 and 2 (either may be
    // absent), read at each run as the reference does, since they may be runtime tensors.
    UnaryKernel(const char* op, size_t n, UnaryFn fn, const UnaryParams& p, size_t clip_inputs, const Microkernels& mk)
        : n_(n), fn_(fn), p_(p), clip_inputs_(clip_inputs), name_(std::string(op) + "-" + mk.name) {}

    const char* impl() const override { return name_.c_str(); }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        UnaryParams p = p_;
        if (clip_inputs_ > 0) {
            // The reference's defaults: the finite float range (so Clip with a max only maps -inf to lowest).
            const float* lo = clip_inputs_ > 1 ? static_cast<const float*>(inputs[1]) : nullptr;
            const float* hi = clip_inputs_ > 2 ? static_cast<const float*>(inputs[2]) : nullptr;
            p.clamp.min = lo ? *lo : std::numeric_limits<float>::lowest();
            p.clamp.max = hi ? *hi : std::numeric_limits<float>::max();
        }
        parallel_units(rc, (n_ + kFloatsPerUnit - 1) / kFloatsPerUnit, [&](uint64_t unit, uint32_t) {
            const size_t at = unit * kFloatsPerUnit;
            fn_(std::min(kFloatsPerUnit, n_ - at), x + at, y + at, p);
        });
    }

private:
    size_t n_;
    UnaryFn fn_;
    UnaryParams p_;
    size_t clip_inputs_;
    std::string name_;
};

// Exp: the table's polynomial over the run, then std::exp for the inputs outside its range (overflow
// to infinity, underflow to subnormals and zero, NaN), so every input gets what the reference gives
// within a few ulp.
class ExpKernel final : public Kernel {
public:
    ExpKernel(size_t n, const Microkernels& mk) : n_(n), mk_(mk), name_(std::string("exp-") + mk.name) {}
    const char* impl() const override { return name_.c_str(); }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        parallel_units(rc, (n_ + kFloatsPerUnit - 1) / kFloatsPerUnit, [&](uint64_t unit, uint32_t) {
            const size_t at = unit * kFloatsPerUnit, n = std::min(kFloatsPerUnit, n_ - at);
            // Read before the polynomial writes: y may be x (an in-place node).
            bool outside = false;
            for (size_t i = 0; i < n; ++i) outside |= !(x[at + i] >= -87.0f && x[at + i] <= 88.0f);
            if (!outside) return mk_.vexp(n, x + at, y + at, UnaryParams{});
            for (size_t i = 0; i < n; ++i) y[at + i] = std::exp(x[at + i]);
        });
    }

private:
    size_t n_;
    const Microkernels& mk_;
    std::string name_;
};

class SoftmaxKernel final : public Kernel {
public:
    SoftmaxKernel(size_t rows, size_t m, const Microkernels& mk)
        : rows_(rows), m_(m), mk_(mk), name_(std::string("softmax-") + mk.name) {
        rows_per_unit_ = std::max<size_t>(1, kFloatsPerUnit / m);
    }

    const char* impl() const override { return name_.c_str(); }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        parallel_units(rc, (rows_ + rows_per_unit_ - 1) / rows_per_unit_, [&](uint64_t unit, uint32_t) {
            const size_t r0 = unit * rows_per_unit_, rows = std::min(rows_per_unit_, rows_ - r0);
            if (m_ >= kMinSoftmaxRow)
                mk_.vsoftmax_rows(rows, m_, x + r0 * m_, y + r0 * m_);
            else
                short_rows(rows, x + r0 * m_, y + r0 * m_);
        });
    }

private:
    // Rows shorter than a vector or two (a detector's 2-class scores): the per-row vector reductions and
    // partial loads of vsoftmax_rows cost more than std::exp on two floats, so the maxima and sums are
    // scalar and only the exponentials are vectorised, one call over the unit. x - max ≤ 0 is inside
    // vexp's range except below -87, where e^x < 2^-125 is negligible beside the sum (≥ 1) either way.
    void short_rows(size_t rows, const float* x, float* y) const {
        const size_t m = m_;
        for (size_t r = 0; r < rows; ++r) {
            const float* xr = x + r * m;
            float mx = xr[0];
            for (size_t i = 1; i < m; ++i) mx = std::max(mx, xr[i]);
            for (size_t i = 0; i < m; ++i) y[r * m + i] = xr[i] - mx;
        }
        mk_.vexp(rows * m, y, y, UnaryParams{});
        for (size_t r = 0; r < rows; ++r) {
            float* yr = y + r * m;
            float sum = 0.0f;
            for (size_t i = 0; i < m; ++i) sum += yr[i];
            for (size_t i = 0; i < m; ++i) yr[i] /= sum;
        }
    }

    size_t rows_, m_, rows_per_unit_ = 1;
    const Microkernels& mk_;
    std::string name_;
};

bool plain_f32(const TensorDesc& t) {
    return t.dtype == KES_F32 && t.quant.empty();
}

UnaryParams no_params() {
    return UnaryParams{{-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()}, 0.0f, 0.0f};
}

std::unique_ptr<Kernel> unary(const char* op, UnaryFn fn, const UnaryParams& p, const NodeDesc& node,
                              const Microkernels& mk, size_t clip_inputs = 0) {
    const TensorDesc& x = *node.inputs[0];
    if (!plain_f32(x) || x.elements() == 0) return nullptr;
    return std::make_unique<UnaryKernel>(op, static_cast<size_t>(x.elements()), fn, p, clip_inputs, mk);
}

// The value of a constant one-element tensor of a float or integer dtype, or NaN.
double constant_scalar(const TensorDesc& t) {
    if (!t.is_const() || t.elements() != 1 || !t.quant.empty()) return NAN;
    switch (t.dtype) {
        case KES_F32: return *static_cast<const float*>(t.data);
        case KES_F64: return *static_cast<const double*>(t.data);
        case KES_I32: return *static_cast<const int32_t*>(t.data);
        case KES_I64: return static_cast<double>(*static_cast<const int64_t*>(t.data));
        default: return NAN;
    }
}

}  // namespace

// Pow(x, 2), a YOLO decode's, as the unary x·x: the reference computes pow in double and rounds to
// float, which for an exponent of 2 is the rounded exact square, what one float multiply gives.
std::unique_ptr<Kernel> select_pow(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                   const Microkernels& mk) {
    if (outputs[0].shape != node.inputs[0]->shape || constant_scalar(*node.inputs[1]) != 2.0) return nullptr;
    return unary("square", mk.vsquare, no_params(), node, mk);
}

std::unique_ptr<Kernel> select_relu(const NodeDesc& node, const std::vector<TensorDesc>&, const Microkernels& mk) {
    UnaryParams p = no_params();
    p.clamp.min = 0.0f;
    return unary("relu", mk.vclamp, p, node, mk);
}

std::unique_ptr<Kernel> select_clip(const NodeDesc& node, const std::vector<TensorDesc>&, const Microkernels& mk) {
    for (size_t i = 1; i < 3; ++i)
        if (node.input(i) && !plain_f32(*node.input(i))) return nullptr;
    return unary("clip", mk.vclamp, no_params(), node, mk, node.inputs.size());
}

std::unique_ptr<Kernel> select_leaky_relu(const NodeDesc& node, const std::vector<TensorDesc>&,
                                          const Microkernels& mk) {
    UnaryParams p = no_params();
    p.alpha = node.attrs.get_float("alpha", 0.01f);
    return unary("leakyrelu", mk.vleaky_relu, p, node, mk);
}

std::unique_ptr<Kernel> select_hard_sigmoid(const NodeDesc& node, const std::vector<TensorDesc>&,
                                            const Microkernels& mk) {
    UnaryParams p = no_params();
    p.alpha = node.attrs.get_float("alpha", 0.2f);
    p.beta = node.attrs.get_float("beta", 0.5f);
    return unary("hardsigmoid", mk.vhard_sigmoid, p, node, mk);
}

std::unique_ptr<Kernel> select_hard_swish(const NodeDesc& node, const std::vector<TensorDesc>&,
                                          const Microkernels& mk) {
    return unary("hardswish", mk.vhard_swish, no_params(), node, mk);
}

std::unique_ptr<Kernel> select_sigmoid(const NodeDesc& node, const std::vector<TensorDesc>&, const Microkernels& mk) {
    return unary("sigmoid", mk.vsigmoid, no_params(), node, mk);
}

std::unique_ptr<Kernel> select_exp(const NodeDesc& node, const std::vector<TensorDesc>&, const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    if (!plain_f32(x) || x.elements() == 0) return nullptr;
    return std::make_unique<ExpKernel>(static_cast<size_t>(x.elements()), mk);
}

std::unique_ptr<Kernel> select_tanh(const NodeDesc& node, const std::vector<TensorDesc>&, const Microkernels& mk) {
    return unary("tanh", mk.vtanh, no_params(), node, mk);
}

std::unique_ptr<Kernel> select_softmax(const NodeDesc& node, const std::vector<TensorDesc>&, const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    if (!plain_f32(x) || x.rank() == 0 || x.elements() == 0) return nullptr;
    // The last axis, or one with only 1s after it: then the reduced elements are contiguous rows.
    const AxisSplit around = split_at_axis(x.shape, normalize_axis(node.attrs.get_int("axis", -1), x.rank()));
    if (around.inner != 1) return nullptr;
    return std::make_unique<SoftmaxKernel>(static_cast<size_t>(around.outer), static_cast<size_t>(around.dim), mk);
}

}  // namespace kernels
}  // namespace kes
