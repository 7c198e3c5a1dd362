// pool_nhwc.cpp — fast 2-D pools in NHWC (f32): MaxPool (without the Indices output), AveragePool,
// GlobalAveragePool and GlobalMaxPool.
//
// - MaxPool: per output pixel, the taps inside the input are maxed over all channels at once. Taps in
//   the padding are skipped, and a window with no tap inside gives -infinity, as the reference kernel
//   does (also for NaN: the first tap's NaN stays, a later NaN is ignored, on every table).
// - AveragePool: the same tap pointers, summed in the reference's order and divided by its count (the
//   taps inside the input, or with count_include_pad those inside [-pad_begin, in + pad_end), never
//   ceil_mode's overhang): the reference's result bit for bit. A window with no tap inside gives 0.
// - Global pools: per image, a block of channels summed (or maxed) over all pixels in pixel order, as
//   the reference kernel does, so again bit for bit.
#include <algorithm>
#include <limits>
#include <string>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

// AveragePool's divisor for taps [lo, lo + kernel·dilation) along one axis: the taps inside the input
// and, with count_include_pad, inside the padded input.
struct AxisCount {
    int64_t inside = 0, padded = 0;
};
AxisCount count_axis(int64_t start, const Window& w) {
    AxisCount c;
    for (int64_t k = 0; k < w.kernel; ++k) {
        const int64_t i = start + k * w.dilation;
        c.inside += i >= 0 && i < w.in;
        c.padded += i >= -w.pad_begin && i < w.in + w.pad_end;
    }
    return c;
}

class PoolNhwcKernel final : public Kernel {
public:
    PoolNhwcKernel(bool average, bool include_pad, int64_t n, int64_t ih, int64_t iw, int64_t c, int64_t oh, int64_t ow,
                   const Window& wh, const Window& ww, const Microkernels& mk)
        : average_(average),
          include_pad_(include_pad),
          n_(n),
          ih_(ih),
          iw_(iw),
          c_(c),
          oh_(oh),
          ow_(ow),
          wh_(wh),
          ww_(ww),
          mk_(mk),
          name_(std::string(average ? "avgpool-" : "maxpool-") + mk.name) {}

    const char* impl() const override { return name_.c_str(); }
    size_t scratch_bytes(uint32_t threads) const override {
        return std::min<size_t>(threads, static_cast<size_t>(n_ * oh_)) * slot_bytes();
    }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        const size_t c = static_cast<size_t>(c_);
        parallel_units(rc, static_cast<uint64_t>(n_ * oh_), [&](uint64_t row, uint32_t slot) {
            const float** ptrs = reinterpret_cast<const float**>(rc.scratch + slot * slot_bytes());
            const int64_t n = static_cast<int64_t>(row) / oh_, oy = static_cast<int64_t>(row) % oh_;
            float* out = y + row * static_cast<uint64_t>(ow_) * c;
            for (int64_t ox = 0; ox < ow_; ++ox, out += c) {
                size_t count = 0;
                for (int64_t ky = 0; ky < wh_.kernel; ++ky) {
                    const int64_t iy = oy * wh_.stride - wh_.pad_begin + ky * wh_.dilation;
                    if (iy < 0 || iy >= ih_) continue;
                    for (int64_t kx = 0; kx < ww_.kernel; ++kx) {
                        const int64_t ix = ox * ww_.stride - ww_.pad_begin + kx * ww_.dilation;
                        if (ix < 0 || ix >= iw_) continue;
                        ptrs[count++] = x + ((n * ih_ + iy) * iw_ + ix) * c_;
                    }
                }
                if (!average_) {
                    if (count == 0)
                        std::fill(out, out + c, -std::numeric_limits<float>::infinity());
                    else
                        mk_.vmax_taps(c, count, ptrs, out);
                    continue;
                }
                // The window's counts per axis multiply: a tap is inside (or padded) when it is along both.
                const AxisCount cy = count_axis(oy * wh_.stride - wh_.pad_begin, wh_);
                const AxisCount cx = count_axis(ox * ww_.stride - ww_.pad_begin, ww_);
                const int64_t divisor = include_pad_ ? cy.padded * cx.padded : cy.inside * cx.inside;
                if (count == 0 || divisor == 0)
                    std::fill(out, out + c, 0.0f);
                else
                    mk_.vavg_taps(c, count, ptrs, out, static_cast<float>(divisor));
            }
        });
    }

private:
    size_t slot_bytes() const { return slot_stride(static_cast<size_t>(wh_.kernel * ww_.kernel) * sizeof(float*)); }

    bool average_, include_pad_;
    int64_t n_, ih_, iw_, c_, oh_, ow_;
    Window wh_, ww_;
    const Microkernels& mk_;
    std::string name_;
};

// Channel blocks per unit: a multiple of every vector width, so a block's tail is the tensor's only.
constexpr int64_t kGlobalBlock = 256;

class GlobalPoolNhwcKernel final : public Kernel {
public:
    GlobalPoolNhwcKernel(bool max, int64_t n, int64_t pixels, int64_t c, const Microkernels& mk)
        : max_(max),
          n_(n),
          pixels_(pixels),
          c_(c),
          mk_(mk),
          name_(std::string(max ? "gmaxpool-" : "gavgpool-") + mk.name) {}

    const char* impl() const override { return name_.c_str(); }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        const int64_t blocks = (c_ + kGlobalBlock - 1) / kGlobalBlock;
        parallel_units(rc, static_cast<uint64_t>(n_ * blocks), [&](uint64_t unit, uint32_t) {
            const int64_t b = static_cast<int64_t>(unit) / blocks,
                          c0 = static_cast<int64_t>(unit) % blocks * kGlobalBlock;
            const size_t m = static_cast<size_t>(std::min(kGlobalBlock, c_ - c0));
            const float* xb = x + b * pixels_ * c_ + c0;
            float* yb = y + b * c_ + c0;
            if (max_)
                mk_.vmax_rows(static_cast<size_t>(pixels_), m, static_cast<size_t>(c_), xb, yb);
            else
                mk_.vsum_rows(static_cast<size_t>(pixels_), m, static_cast<size_t>(c_), xb, yb,
                              static_cast<float>(pixels_));
        });
    }

private:
    bool max_;
    int64_t n_, pixels_, c_;
    const Microkernels& mk_;
    std::string name_;
};

std::unique_ptr<Kernel> select_pool(bool average, const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                    const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() != 4 || x.dtype != KES_F32 || node.output_count != 1 || get_layout(node.attrs) != Layout::NHWC)
        return nullptr;
    const std::vector<int64_t> kernel = node.attrs.get_ints("kernel_shape");
    if (kernel.size() != 2) return nullptr;
    const std::vector<Window> win = resolve_windows(node.attrs, Shape{x.shape[1], x.shape[2]}, kernel, true);
    const Shape& y = outputs[0].shape;
    if (shape_elements(y) == 0) return nullptr;
    return std::make_unique<PoolNhwcKernel>(average, node.attrs.get_int("count_include_pad", 0) != 0, x.shape[0],
                                            x.shape[1], x.shape[2], x.shape[3], y[1], y[2], win[0], win[1], mk);
}

std::unique_ptr<Kernel> select_global_pool(bool max, const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                           const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() < 3 || x.dtype != KES_F32 || !x.quant.empty() || get_layout(node.attrs) != Layout::NHWC)
        return nullptr;
    const int64_t n = x.shape[0], c = x.shape.back();
    if (n * c == 0 || outputs[0].elements() != n * c) return nullptr;
    return std::make_unique<GlobalPoolNhwcKernel>(max, n, x.elements() / (n * c), c, mk);
}

}  // namespace

std::unique_ptr<Kernel> select_average_pool(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                            const Microkernels& mk) {
    return select_pool(true, node, outputs, mk);
}

std::unique_ptr<Kernel> select_global_average_pool(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                                   const Microkernels& mk) {
    return select_global_pool(false, node, outputs, mk);
}

std::unique_ptr<Kernel> select_global_max_pool(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                               const Microkernels& mk) {
    return select_global_pool(true, node, outputs, mk);
}

std::unique_ptr<Kernel> select_max_pool(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                        const Microkernels& mk) {
    return select_pool(false, node, outputs, mk);
}

}  // namespace kernels
}  // namespace kes
