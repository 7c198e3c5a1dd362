// pool_nhwc.cpp — fast 2-D MaxPool in NHWC (f32, without the Indices output): per output pixel, the
// taps inside the input are maxed over all channels at once. Taps in the padding are skipped, and a
// window with no tap inside gives -infinity, as the reference kernel does (also for NaN: the first
// tap's NaN stays, a later NaN is ignored, on every table).
#include <limits>
#include <string>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

class MaxPoolNhwcKernel final : public Kernel {
public:
    MaxPoolNhwcKernel(int64_t n, int64_t ih, int64_t iw, int64_t c, int64_t oh, int64_t ow, const Window& wh,
                      const Window& ww, const Microkernels& mk)
        : n_(n),
          ih_(ih),
          iw_(iw),
          c_(c),
          oh_(oh),
          ow_(ow),
          wh_(wh),
          ww_(ww),
          mk_(mk),
          name_(std::string("maxpool-") + mk.name) {}

    const char* impl() const override { return name_.c_str(); }
    size_t scratch_bytes(uint32_t threads) const override {
        return std::min<size_t>(threads, static_cast<size_t>(n_ * oh_)) * static_cast<size_t>(wh_.kernel * ww_.kernel) *
               sizeof(float*);
    }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        const size_t taps = static_cast<size_t>(wh_.kernel * ww_.kernel), c = static_cast<size_t>(c_);
        parallel_units(rc, static_cast<uint64_t>(n_ * oh_), [&](uint64_t row, uint32_t slot) {
            const float** ptrs = reinterpret_cast<const float**>(rc.scratch + slot * taps * sizeof(float*));
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
                if (count == 0)
                    std::fill(out, out + c, -std::numeric_limits<float>::infinity());
                else
                    mk_.vmax_taps(c, count, ptrs, out);
            }
        });
    }

private:
    int64_t n_, ih_, iw_, c_, oh_, ow_;
    Window wh_, ww_;
    const Microkernels& mk_;
    std::string name_;
};

}  // namespace

std::unique_ptr<Kernel> select_max_pool(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                        const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() != 4 || x.dtype != KES_F32 || node.output_count != 1 || get_layout(node.attrs) != Layout::NHWC)
        return nullptr;
    const std::vector<int64_t> kernel = node.attrs.get_ints("kernel_shape");
    if (kernel.size() != 2) return nullptr;
    const std::vector<Window> win = resolve_windows(node.attrs, Shape{x.shape[1], x.shape[2]}, kernel, true);
    const Shape& y = outputs[0].shape;
    return std::make_unique<MaxPoolNhwcKernel>(x.shape[0], x.shape[1], x.shape[2], x.shape[3], y[1], y[2], win[0],
                                               win[1], mk);
}

}  // namespace kernels
}  // namespace kes
