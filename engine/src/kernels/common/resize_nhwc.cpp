// resize_nhwc.cpp — fast Resize (f32) of the height and width of an NHWC image, nearest or linear: an
// FPN / YOLO neck's 2x upsampling, a segmentation head's resize to the input size.
//
// Choices:
// - The reference's own tap tables (plan_resize, op_util.hpp): every coordinate mode and nearest mode
//   the reference has gives the same source pixels and weights here. Cubic, tf_crop_and_resize's
//   outside samples, and any resize that changes N or C keep the reference kernel.
// - Per output pixel the channels are contiguous in both images: a nearest pixel is one memcpy of C
//   floats, a linear one the weighted sum of up to 4 source pixels' channel vectors. The reference sums
//   each output in double with the weight products rounded once, so linear results agree with it to
//   rounding (nearest ones bit for bit).
// - Units are output rows (image, oy): fixed by the shapes, so any thread count gives the same bytes.
#include <algorithm>
#include <cstring>
#include <string>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

class ResizeNhwcKernel final : public Kernel {
public:
    ResizeNhwcKernel(const Shape& in, ResizePlan plan) : plan_(std::move(plan)) {
        n_ = static_cast<size_t>(in[0]), ih_ = static_cast<size_t>(in[1]), iw_ = static_cast<size_t>(in[2]);
        c_ = static_cast<size_t>(in[3]);
        oh_ = static_cast<size_t>(plan_.out[1]), ow_ = static_cast<size_t>(plan_.out[2]);
        const bool nearest = plan_.axis[1].taps == 1 && plan_.axis[2].taps == 1;
        name_ = nearest ? "resize-nearest" : "resize-linear";
    }
    const char* impl() const override { return name_.c_str(); }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        const ResizePlan::Axis ay = plan_.axis[1], ax = plan_.axis[2];
        const int64_t* index = plan_.tap_index.data();
        const float* weight = plan_.tap_weight.data();
        const size_t c = c_;
        parallel_units(rc, n_ * oh_, [&](uint64_t unit, uint32_t) {
            const size_t img = unit / oh_, oy = unit % oh_;
            const float* xn = x + img * ih_ * iw_ * c;
            float* row = y + unit * ow_ * c;
            const size_t ky = static_cast<size_t>(ay.first) + oy * static_cast<size_t>(ay.taps);
            for (size_t ox = 0; ox < ow_; ++ox) {
                float* out = row + ox * c;
                const size_t kx = static_cast<size_t>(ax.first) + ox * static_cast<size_t>(ax.taps);
                if (ay.taps == 1 && ax.taps == 1) {
                    const size_t iy = static_cast<size_t>(index[ky]), ix = static_cast<size_t>(index[kx]);
                    std::memcpy(out, xn + (iy * iw_ + ix) * c, c * sizeof(float));
                    continue;
                }
                bool first = true;
                for (int ty = 0; ty < ay.taps; ++ty)
                    for (int tx = 0; tx < ax.taps; ++tx) {
                        // The weight product as the reference forms it (in double), rounded once.
                        const float w = static_cast<float>(static_cast<double>(weight[ky + static_cast<size_t>(ty)]) *
                                                           static_cast<double>(weight[kx + static_cast<size_t>(tx)]));
                        if (w == 0.0f && !first) continue;
                        const float* src = xn + (static_cast<size_t>(index[ky + static_cast<size_t>(ty)]) * iw_ +
                                                 static_cast<size_t>(index[kx + static_cast<size_t>(tx)])) *
                                                    c;
                        if (first) {
                            for (size_t ch = 0; ch < c; ++ch) out[ch] = w * src[ch];
                            first = false;
                        } else {
                            for (size_t ch = 0; ch < c; ++ch) out[ch] += w * src[ch];
                        }
                    }
            }
        });
    }

private:
    ResizePlan plan_;
    size_t n_ = 1, ih_ = 1, iw_ = 1, c_ = 1, oh_ = 1, ow_ = 1;
    std::string name_;
};

}  // namespace

std::unique_ptr<Kernel> select_resize(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                      const Microkernels&) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() != 4 || x.dtype != KES_F32 || !x.quant.empty() || outputs[0].elements() == 0) return nullptr;
    ResizePlan plan = plan_resize(node);
    if (plan.axis.size() != 4 || plan.out != outputs[0].shape) return nullptr;
    // N and C unchanged (one tap, o → o); H and W nearest or linear.
    for (size_t d : {size_t{0}, size_t{3}}) {
        if (plan.axis[d].taps != 1 || plan.out[d] != x.shape[d]) return nullptr;
        for (int64_t o = 0; o < plan.out[d]; ++o)
            if (plan.tap_index[static_cast<size_t>(plan.axis[d].first + o)] != o) return nullptr;
    }
    for (size_t d : {size_t{1}, size_t{2}})
        if (plan.axis[d].taps > 2) return nullptr;
    if (std::any_of(plan.tap_index.begin(), plan.tap_index.end(), [](int64_t i) { return i < 0; })) return nullptr;
    return std::make_unique<ResizeNhwcKernel>(x.shape, std::move(plan));
}

}  // namespace kernels
}  // namespace kes
