// qpool_nchw.cpp — fast MaxPool on u8/i8 NCHW images (the quantized models' pools: the max commutes
// with quantization, so they run on the bytes). The reference's result (kernels/ref/nn.cpp): the max over
// the window's taps inside the image, the type's lowest for a window wholly in the padding. A unit is
// one image plane; each output row reads its taps' rows directly, and the interior of a row (all taps
// inside) runs without bounds tests, in a loop the compiler vectorises. NHWC f32 pools are pool_nhwc.cpp's.
#include <algorithm>
#include <limits>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

struct QPoolSpec {
    int64_t planes = 1, ih = 1, iw = 1, oh = 1, ow = 1;
    Window wh, ww;
    bool is_signed = false;
};

// The taps [first, last) of a window along one axis that fall inside the input.
struct Taps {
    int64_t first, last;
};
Taps taps_inside(const Window& w, int64_t o) {
    const int64_t start = o * w.stride - w.pad_begin;
    Taps t{0, w.kernel};
    while (t.first < t.last && start + t.first * w.dilation < 0) ++t.first;
    while (t.last > t.first && start + (t.last - 1) * w.dilation >= w.in) --t.last;
    return t;
}

template <class T>
void max_pool_plane(const QPoolSpec& s, const T* x, T* y) {
    const int64_t sw = s.ww.stride, dw = s.ww.dilation, kw = s.ww.kernel;
    // Outputs [x0, x1) of a row have every horizontal tap inside.
    int64_t x0 = 0, x1 = s.ow;
    while (x0 < s.ow && taps_inside(s.ww, x0).first != 0) ++x0;
    while (x1 > x0 && taps_inside(s.ww, x1 - 1).last != kw) --x1;
    for (int64_t oy = 0; oy < s.oh; ++oy) {
        T* out = y + oy * s.ow;
        const Taps ty = taps_inside(s.wh, oy);
        std::fill(out, out + s.ow, std::numeric_limits<T>::lowest());
        for (int64_t ky = ty.first; ky < ty.last; ++ky) {
            const T* row = x + (oy * s.wh.stride - s.wh.pad_begin + ky * s.wh.dilation) * s.iw;
            for (int64_t ox = 0; ox < s.ow; ++ox) {
                if (ox == x0 && x1 > x0) {  // the interior: no tests
                    for (int64_t kx = 0; kx < kw; ++kx) {
                        const T* in = row - s.ww.pad_begin + kx * dw;
                        for (int64_t i = x0; i < x1; ++i) out[i] = std::max(out[i], in[i * sw]);
                    }
                    ox = x1 - 1;
                    continue;
                }
                const Taps tx = taps_inside(s.ww, ox);
                const T* in = row + ox * sw - s.ww.pad_begin;
                for (int64_t kx = tx.first; kx < tx.last; ++kx) out[ox] = std::max(out[ox], in[kx * dw]);
            }
        }
    }
}

class QMaxPoolKernel final : public Kernel {
public:
    explicit QMaxPoolKernel(const QPoolSpec& s) : s_(s) {}
    const char* impl() const override { return "qmaxpool-nchw"; }
    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const size_t in_plane = static_cast<size_t>(s_.ih * s_.iw), out_plane = static_cast<size_t>(s_.oh * s_.ow);
        parallel_units(rc, static_cast<uint64_t>(s_.planes), [&](uint64_t p, uint32_t) {
            if (s_.is_signed)
                max_pool_plane(s_, static_cast<const int8_t*>(inputs[0]) + p * in_plane,
                               static_cast<int8_t*>(outputs[0]) + p * out_plane);
            else
                max_pool_plane(s_, static_cast<const uint8_t*>(inputs[0]) + p * in_plane,
                               static_cast<uint8_t*>(outputs[0]) + p * out_plane);
        });
    }

private:
    QPoolSpec s_;
};

}  // namespace

// MaxPool on a u8/i8 2-D NCHW image without the Indices output; the reference create() has checked it.
std::unique_ptr<Kernel> select_quantized_max_pool(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                                  const Microkernels&) {
    const TensorDesc& x = *node.inputs[0];
    if ((x.dtype != KES_U8 && x.dtype != KES_I8) || x.rank() != 4 || outputs.size() != 1) return nullptr;
    if (get_layout(node.attrs) != Layout::NCHW || outputs[0].rank() != 4) return nullptr;
    QPoolSpec s;
    s.planes = x.shape[0] * x.shape[1], s.ih = x.shape[2], s.iw = x.shape[3];
    const std::vector<Window> win =
        resolve_windows(node.attrs, Shape{s.ih, s.iw}, node.attrs.get_ints("kernel_shape", {}), true);
    s.wh = win[0], s.ww = win[1];
    s.oh = outputs[0].shape[2], s.ow = outputs[0].shape[3];
    if (s.oh != s.wh.out || s.ow != s.ww.out || s.planes * s.oh * s.ow == 0) return nullptr;
    s.is_signed = x.dtype == KES_I8;
    return std::make_unique<QMaxPoolKernel>(s);
}

}  // namespace kernels
}  // namespace kes
