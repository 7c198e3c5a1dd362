// conv_transpose_nhwc.cpp — fast 2-D ConvTranspose (NHWC, f32, one group, constant weights: what the
// layout pass gives a U-Net decoder, a CenterNet or pose head, an FPN's learned upsampling), on the
// table's igemm microkernel.
//
// Choices:
// - Gather, not scatter. Output row oy takes kernel row ky when oy + pad - ky·dilation is a multiple of
//   the stride (then input row (oy + pad - ky·dilation) / stride, when inside the input): which kernel
//   rows an output row takes depends only on its phase, (oy + pad) mod stride, and likewise along x.
//   So the output splits into stride_h·stride_w phases, each an ordinary stride-1 convolution of the
//   input with its own sub-kernel (the taps of that phase): an output pixel is one igemm row over its
//   phase's taps, and a tile of gemm_mr pixels of one phase along a row is written with a row stride of
//   stride_w pixels. Every output is computed once, by one unit: no scatter-add, no races, no zeroing
//   pass, bias and clamp in registers (the usual col2im approach adds each output up to k²/s² times).
// - Weights are packed at load per phase, in conv_nhwc.cpp's panel form (bias, then the phase's taps ×
//   C rows of a panel's columns): every tap belongs to exactly one phase, so the packed weights are the
//   raw ones plus one bias row per phase and panel.
// - A tap whose input pixel falls outside the input points at a zero row (C zeros in the packed region).
// - Units are output rows (image, oy): fixed by the shapes, so the bytes do not depend on the threads.
// - Sums run over the taps in kernel order, each over C in order: not the reference's order (which
//   scatters input channel by input channel), so the two agree to rounding, not bit for bit.
// - Grouped, 1-D and 3-D ConvTranspose keep the reference kernel.
#include <algorithm>
#include <cstring>
#include <string>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

constexpr size_t kMaxMr = 16;
// A tile's pointers live in a worker's scratch slot: taps × gemm_mr of them.
constexpr int64_t kMaxTaps = 1024;

// Positive remainder (pad_begin may be negative: output_shape beyond the full size).
int64_t mod(int64_t a, int64_t b) {
    const int64_t r = a % b;
    return r < 0 ? r + b : r;
}

// One spatial axis of the transposed conv: which kernel positions serve which output phase.
struct Axis {
    Window win;
    std::vector<std::vector<int64_t>> taps;  // [phase] → kernel positions k with (k·dilation) mod stride = phase

    explicit Axis(const Window& w) : win(w), taps(static_cast<size_t>(w.stride)) {
        for (int64_t k = 0; k < w.kernel; ++k) taps[static_cast<size_t>(mod(k * w.dilation, w.stride))].push_back(k);
    }
    // The phase of output position o: the taps it takes are taps[phase(o)].
    size_t phase(int64_t o) const { return static_cast<size_t>(mod(o + win.pad_begin, win.stride)); }
    // The input position output o reads through kernel position k, or -1 outside the input.
    int64_t input(int64_t o, int64_t k) const {
        const int64_t t = o + win.pad_begin - k * win.dilation;  // a multiple of the stride for k in taps[phase(o)]
        if (t < 0) return -1;
        const int64_t i = t / win.stride;
        return i < win.in ? i : -1;
    }
};

class ConvTransposeNhwcKernel final : public Kernel {
public:
    ConvTransposeNhwcKernel(int64_t n, int64_t c, int64_t m, const Window& wh, const Window& ww, const float* weights,
                            const float* bias, const Activation& act, const Microkernels& mk)
        : n_(n),
          c_(c),
          m_(m),
          y_(wh),
          x_(ww),
          weights_(weights),
          bias_(bias),
          mk_(mk),
          name_(std::string("deconv-igemm-") + mk.name) {
        after_ = fused_activation(act, mk);
        size_t at = 0, max_taps = 0;
        for (size_t py = 0; py < y_.taps.size(); ++py)
            for (size_t px = 0; px < x_.taps.size(); ++px) {
                const size_t taps = y_.taps[py].size() * x_.taps[px].size();
                phase_offset_.push_back(at);
                phase_taps_.push_back(taps);
                // Each phase starts on a 128-byte boundary: a narrow last panel would misalign the next.
                at += (mk.panel_columns(static_cast<size_t>(m)) * (1 + taps * static_cast<size_t>(c)) + 31) / 32 * 32;
                max_taps = std::max(max_taps, taps);
            }
        packed_floats_ = at;
        slot_bytes_ = slot_stride(std::max<size_t>(1, max_taps) * mk.gemm_mr * sizeof(float*));
    }

    const char* impl() const override { return name_.c_str(); }

    // The phases' panels, the zero row, then the zeros a narrow panel's tile reads past its end.
    size_t packed_bytes() const override {
        return (packed_floats_ + static_cast<size_t>(c_) + mk_.panel_overread()) * sizeof(float);
    }

    void pack(void* dst) const override {
        float* out = static_cast<float*>(dst);
        std::memset(out, 0, packed_bytes());
        const int64_t nr = mk_.gemm_nr, kh = y_.win.kernel, kw = x_.win.kernel;
        size_t phase = 0;
        for (const std::vector<int64_t>& ky_taps : y_.taps)
            for (const std::vector<int64_t>& kx_taps : x_.taps) {
                float* p = out + phase_offset_[phase++];
                for (int64_t n0 = 0; n0 < m_; n0 += nr) {
                    const int64_t nc = std::min(nr, m_ - n0);
                    const int64_t pw = static_cast<int64_t>(mk_.panel_width(static_cast<size_t>(nc)));
                    for (int64_t j = 0; j < nc; ++j) p[j] = bias_ ? bias_[n0 + j] : 0.0f;
                    p += pw;
                    // The filter is [M, KH, KW, C]; a panel row is one (tap, input channel).
                    for (int64_t ky : ky_taps)
                        for (int64_t kx : kx_taps)
                            for (int64_t ci = 0; ci < c_; ++ci, p += pw)
                                for (int64_t j = 0; j < nc; ++j)
                                    p[j] = weights_[(((n0 + j) * kh + ky) * kw + kx) * c_ + ci];
                }
            }
    }

    void bind_packed(const void* packed) override { packed_ = static_cast<const float*>(packed); }

    size_t scratch_bytes(uint32_t threads) const override {
        return std::min<size_t>(threads, static_cast<size_t>(n_ * y_.win.out)) * slot_bytes_;
    }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        const float* zero = packed_ + packed_floats_;
        const size_t mr = mk_.gemm_mr, nr = mk_.gemm_nr, m = static_cast<size_t>(m_), c = static_cast<size_t>(c_);
        const int64_t ih = y_.win.in, iw = x_.win.in, oh = y_.win.out, ow = x_.win.out, sw = x_.win.stride;
        const size_t panels = (m + nr - 1) / nr;
        parallel_units(rc, static_cast<uint64_t>(n_ * oh), [&](uint64_t unit, uint32_t slot) {
            const int64_t img = static_cast<int64_t>(unit) / oh, oy = static_cast<int64_t>(unit) % oh;
            const float* xn = x + static_cast<size_t>(img * ih * iw) * c;
            float* row = y + static_cast<size_t>(unit) * static_cast<size_t>(ow) * m;
            const float** ptrs = reinterpret_cast<const float**>(rc.scratch + slot * slot_bytes_);
            const std::vector<int64_t>& ky_taps = y_.taps[y_.phase(oy)];
            for (size_t px = 0; px < x_.taps.size(); ++px) {
                const std::vector<int64_t>& kx_taps = x_.taps[px];
                const size_t phase = y_.phase(oy) * x_.taps.size() + px, ks = phase_taps_[phase];
                const float* w = packed_ + phase_offset_[phase];
                // This phase's output columns: ox0, ox0 + sw, ... (ox0 the first with phase px).
                const int64_t ox0 = mod(static_cast<int64_t>(px) - x_.win.pad_begin, sw);
                if (ox0 >= ow) continue;
                const size_t count = static_cast<size_t>((ow - 1 - ox0) / sw + 1);
                for (size_t t0 = 0; t0 < count; t0 += mr) {
                    const size_t rows = std::min(mr, count - t0);
                    // Pointers tap by tap, gemm_mr rows each (rows past the last repeat it).
                    size_t t = 0;
                    for (int64_t ky : ky_taps) {
                        const int64_t iy = y_.input(oy, ky);
                        for (int64_t kx : kx_taps) {
                            for (size_t r = 0; r < mr; ++r) {
                                const int64_t ox = ox0 + static_cast<int64_t>(t0 + std::min(r, rows - 1)) * sw;
                                const int64_t ix = iy < 0 ? -1 : x_.input(ox, kx);
                                ptrs[t * mr + r] = ix < 0 ? zero : xn + static_cast<size_t>(iy * iw + ix) * c;
                            }
                            ++t;
                        }
                    }
                    float* out = row + static_cast<size_t>(ox0 + static_cast<int64_t>(t0) * sw) * m;
                    for (size_t pb = 0; pb < panels; ++pb) {
                        const size_t nc = std::min(nr, m - pb * nr);
                        mk_.igemm(nc, rows)(rows, nc, c, ks, ptrs, w + pb * nr * (1 + ks * c), out + pb * nr,
                                            static_cast<size_t>(sw) * m, after_.clamp);
                    }
                }
            }
            after_.apply_after(row, static_cast<size_t>(ow) * m);
        });
    }

private:
    int64_t n_, c_, m_;
    Axis y_, x_;
    const float* weights_;  // the raw [M, KH, KW, C] filter and bias, read by pack() only
    const float* bias_;
    const Microkernels& mk_;
    std::string name_;
    FusedActivation after_;
    std::vector<size_t> phase_offset_, phase_taps_;  // per phase (py · stride_w + px): packed floats before it, taps
    size_t packed_floats_ = 0, slot_bytes_ = 0;
    const float* packed_ = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> select_conv_transpose(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                              const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& w = *node.inputs[1];
    const TensorDesc* b = node.input(2);
    if (x.rank() != 4 || x.dtype != KES_F32 || !x.quant.empty() || get_layout(node.attrs) != Layout::NHWC)
        return nullptr;
    if (!w.is_const() || (b && !b->is_const()) || node.attrs.get_int("group", 1) != 1) return nullptr;
    if (mk.gemm_mr > kMaxMr || w.shape[1] * w.shape[2] > kMaxTaps) return nullptr;
    const Shape& ys = outputs[0].shape;
    if (x.elements() == 0 || outputs[0].elements() == 0) return nullptr;
    // The filter is [M, KH, KW, C] in NHWC (the layout pass's form of ONNX's [C, M, KH, KW]).
    const std::vector<Window> win = resolve_transposed_windows(node.attrs, Shape{x.shape[1], x.shape[2]},
                                                               Shape{w.shape[1], w.shape[2]}, Layout::NHWC);
    if (win[0].out != ys[1] || win[1].out != ys[2] || w.shape[0] != ys[3]) return nullptr;
    return std::make_unique<ConvTransposeNhwcKernel>(
        x.shape[0], x.shape[3], ys[3], win[0], win[1], static_cast<const float*>(w.data),
        b ? static_cast<const float*>(b->data) : nullptr, Activation::from_attrs(node.attrs), mk);
}

}  // namespace kernels
}  // namespace kes
