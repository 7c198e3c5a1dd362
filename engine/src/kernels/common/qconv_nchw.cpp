// qconv_nchw.cpp — fast QLinearConv (2-D, NCHW, constant weights and bias) on the table's int8
// microkernels; the reference kernel (kernels/ref/quant.cpp) is the oracle, and the results are its
// bytes exactly (test_kernels_quant.cpp).
//
// Choices:
// - Operands are widened to int16 with their zero points subtracted (weights once at load, activations
//   per tile), so the microkernels' sums are exact (Microkernels::qgemm) and need no zero-point
//   compensation: ONNX Runtime's AVX2 kernels for int8 weights use vpmaddubsw, whose 16-bit pair sums
//   saturate on large weights; vpmaddwd on int16 cannot.
// - Requantization is ops/quant.hpp's: f32(acc) · multiplier, clamped, rounded half to even, as MLAS
//   does in f32 (not the fixed-point multiplier of TFLite's int8 kernels, which rounds differently):
//   Kestrel's results stay ONNX Runtime's bit for bit.
// - Dense and grouped convolutions: a unit is (image, group, block of pixels); it gathers its block of
//   the group's input (im2col, int16) into its scratch slot, then runs the qgemm tile over every tile
//   of the group's output channels. NCHW makes the pixels the tile's columns: each output channel's
//   row of pixels is stored contiguously.
// - Depthwise convolutions (one input and one output channel per group): a unit is (image, channel);
//   it copies the channel's plane, padded with zeros, to int16 in its slot, then qdwconv_row runs each
//   output row over the kh·kw tap rows.
// - Fused Relu/Clip is the output range (ops/quant.hpp's fused_activation_range), as in the reference.
#include <algorithm>
#include <cstring>
#include <string>

#include "../../ops/quant.hpp"
#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

// A unit's im2col covers this many qgemm column panels (128 pixels on AVX2): long enough to reuse each
// packed weight tile, short enough that the gathered block stays in L2.
constexpr size_t kPanelsPerBlock = 8;
// Past this scratch per worker (huge K, huge depthwise planes) the reference kernel stays.
constexpr size_t kMaxSlotBytes = 4u << 20;

struct QConvSpec {
    int64_t n = 1, c = 1, m = 1, group = 1, ih = 1, iw = 1, oh = 1, ow = 1;
    Window wh, ww;
    bool x_signed = false;
    int32_t x_zp = 0;
    // Per output channel: the int32 bias (0 when absent) and the requantization multiplier.
    std::vector<int32_t> bias;
    std::vector<float> multiplier;
    QuantOut out{};
    // The weights minus their zero points, [m][c / group][kh][kw].
    std::vector<int16_t> weights;

    int64_t cpg() const { return c / group; }
    int64_t mpg() const { return m / group; }
    int64_t taps() const { return wh.kernel * ww.kernel; }
    bool depthwise() const { return cpg() == 1 && mpg() == 1; }
};

// Reads x as int16 with the zero point subtracted; X is uint8_t or int8_t.
template <class X>
inline int16_t centred(const void* x, size_t i, int32_t zp) {
    return static_cast<int16_t>(static_cast<int32_t>(static_cast<const X*>(x)[i]) - zp);
}

class QConvKernel final : public Kernel {
public:
    QConvKernel(QConvSpec s, const Microkernels& mk) : s_(std::move(s)), mk_(mk) {
        const size_t kg = mk.qgemm_kgroup;
        k_ = static_cast<size_t>(s_.cpg() * s_.taps());
        kgroups_ = (k_ + kg - 1) / kg;
        pixels_ = static_cast<size_t>(s_.oh * s_.ow);
        if (s_.depthwise()) {
            name_ = std::string("qconv-dw-") + mk.name;
            plane_w_ = static_cast<size_t>(s_.iw + s_.ww.pad_begin + s_.ww.pad_end);
            plane_h_ = static_cast<size_t>(s_.ih + s_.wh.pad_begin + s_.wh.pad_end);
            slot_bytes_ = slot_stride(plane_elems() * sizeof(int16_t)) +
                          slot_stride(static_cast<size_t>(s_.taps()) * sizeof(const int16_t*));
            units_ = static_cast<size_t>(s_.n * s_.c);
        } else {
            name_ = std::string("qconv-igemm-") + mk.name;
            pointwise_ = s_.taps() == 1 && s_.wh.stride == 1 && s_.ww.stride == 1 && s_.wh.pad_begin == 0 &&
                         s_.ww.pad_begin == 0 && s_.oh == s_.ih && s_.ow == s_.iw;
            tiles_ = (static_cast<size_t>(s_.mpg()) + mk.qgemm_mr - 1) / mk.qgemm_mr;
            block_ = kPanelsPerBlock * mk.qgemm_nr;
            blocks_ = (pixels_ + block_ - 1) / block_;
            slot_bytes_ = slot_stride(panel_elems() * kPanelsPerBlock * sizeof(int16_t));
            units_ = static_cast<size_t>(s_.n * s_.group) * blocks_;
        }
    }

    size_t slot_bytes() const { return slot_bytes_; }
    const char* impl() const override { return name_.c_str(); }

    // Depthwise: per channel, its taps. Otherwise per group and tile of qgemm_mr output channels, the
    // qgemm weight panel (kgroups × qgemm_mr × kgroup, zeros past the channels and past K).
    size_t packed_bytes() const override {
        if (s_.depthwise()) return static_cast<size_t>(s_.c * s_.taps()) * sizeof(int16_t);
        return static_cast<size_t>(s_.group) * tiles_ * tile_elems() * sizeof(int16_t);
    }

    void pack(void* dst) const override {
        int16_t* out = static_cast<int16_t*>(dst);
        if (s_.depthwise()) {
            std::copy(s_.weights.begin(), s_.weights.end(), out);
            return;
        }
        std::memset(dst, 0, packed_bytes());
        const size_t mr = mk_.qgemm_mr, kg = mk_.qgemm_kgroup;
        const size_t mpg = static_cast<size_t>(s_.mpg());
        for (size_t g = 0; g < static_cast<size_t>(s_.group); ++g)
            for (size_t t = 0; t < tiles_; ++t, out += tile_elems())
                for (size_t r = 0; r < mr && t * mr + r < mpg; ++r) {
                    const int16_t* w = s_.weights.data() + (g * mpg + t * mr + r) * k_;
                    for (size_t k = 0; k < k_; ++k) out[(k / kg) * mr * kg + r * kg + k % kg] = w[k];
                }
    }

    void bind_packed(const void* packed) override { packed_ = static_cast<const int16_t*>(packed); }

    size_t scratch_bytes(uint32_t threads) const override { return std::min<size_t>(threads, units_) * slot_bytes_; }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const void* x = inputs[0];
        auto* y = static_cast<uint8_t*>(outputs[0]);
        parallel_units(rc, units_, [&](uint64_t unit, uint32_t slot) {
            uint8_t* scratch = rc.scratch + slot * slot_bytes_;
            if (s_.depthwise())
                run_depthwise(static_cast<size_t>(unit), x, y, scratch);
            else
                run_gemm(static_cast<size_t>(unit), x, y, reinterpret_cast<int16_t*>(scratch));
        });
    }

private:
    // The padded plane and the zeros after it that qdwconv_row may read.
    size_t plane_elems() const { return plane_w_ * plane_h_ + Microkernels::qdwconv_overread; }
    size_t panel_elems() const { return kgroups_ * mk_.qgemm_nr * mk_.qgemm_kgroup; }
    size_t tile_elems() const { return kgroups_ * mk_.qgemm_mr * mk_.qgemm_kgroup; }

    void run_gemm(size_t unit, const void* x, uint8_t* y, int16_t* cols) const {
        const size_t block = unit % blocks_, image_group = unit / blocks_;
        const size_t g = image_group % static_cast<size_t>(s_.group), img = image_group / static_cast<size_t>(s_.group);
        const size_t p0 = block * block_, count = std::min(block_, pixels_ - p0);
        const size_t in_offset =
            (img * static_cast<size_t>(s_.c) + g * static_cast<size_t>(s_.cpg())) * static_cast<size_t>(s_.ih * s_.iw);
        if (s_.x_signed)
            gather<int8_t>(x, in_offset, p0, count, cols);
        else
            gather<uint8_t>(x, in_offset, p0, count, cols);
        const size_t mr = mk_.qgemm_mr, nr = mk_.qgemm_nr, mpg = static_cast<size_t>(s_.mpg());
        for (size_t t = 0; t < tiles_; ++t) {
            const size_t oc0 = g * mpg + t * mr, rows = std::min(mr, mpg - t * mr);
            const int16_t* w = packed_ + (g * tiles_ + t) * tile_elems();
            uint8_t* dst = y + (img * static_cast<size_t>(s_.m) + oc0) * pixels_ + p0;
            for (size_t q = 0; q < count; q += nr)
                mk_.qgemm(rows, std::min(nr, count - q), kgroups_, w, cols + q / nr * panel_elems(), &s_.bias[oc0],
                          &s_.multiplier[oc0], s_.out, dst + q, pixels_);
        }
    }

    // im2col of `count` output pixels from p0 for one group, into qgemm column panels: element (k, q)
    // at panel q / nr, [k / kgroup][q % nr][k % kgroup]. Taps in the padding, K's padding to whole
    // groups and the last panel's columns past `count` are zero.
    template <class X>
    void gather(const void* x, size_t in_offset, size_t p0, size_t count, int16_t* cols) const {
        const size_t nr = mk_.qgemm_nr, kg = mk_.qgemm_kgroup, panel = panel_elems();
        const size_t panels = (count + nr - 1) / nr;
        std::memset(cols, 0, panels * panel * sizeof(int16_t));
        const int64_t kh = s_.wh.kernel, kw = s_.ww.kernel, plane = s_.ih * s_.iw;
        if (pointwise_) {  // output pixel p is input pixel p: a copy
            if (kg == 2)
                gather_pointwise<X, 2>(static_cast<const X*>(x) + in_offset + p0, static_cast<size_t>(plane), count,
                                       cols);
            else
                gather_pointwise<X, 1>(static_cast<const X*>(x) + in_offset + p0, static_cast<size_t>(plane), count,
                                       cols);
            return;
        }
        for (size_t k = 0; k < k_; ++k) {
            const int64_t c = static_cast<int64_t>(k) / (kh * kw), ky = static_cast<int64_t>(k) / kw % kh,
                          kx = static_cast<int64_t>(k) % kw;
            const size_t c_offset = in_offset + static_cast<size_t>(c * plane);
            int16_t* row = cols + k / kg * nr * kg + k % kg;
            int64_t oy = static_cast<int64_t>(p0) / s_.ow, ox = static_cast<int64_t>(p0) % s_.ow;
            // Runs of pixels along one output row share their input row: one row test per run, and the
            // column within the panel counts up (no division per element).
            const int64_t sw = s_.ww.stride;
            for (size_t q = 0; q < count;) {
                const size_t run = std::min(count - q, static_cast<size_t>(s_.ow - ox));
                const int64_t iy = oy * s_.wh.stride - s_.wh.pad_begin + ky * s_.wh.dilation;
                if (iy >= 0 && iy < s_.ih) {
                    // The pixels i of the run whose tap is inside the row: [first, last), no test per pixel.
                    const int64_t ix0 = ox * sw - s_.ww.pad_begin + kx * s_.ww.dilation;
                    const int64_t first = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
                    const int64_t last =
                        std::min(static_cast<int64_t>(run), ix0 >= s_.iw ? 0 : (s_.iw - ix0 + sw - 1) / sw);
                    const X* px = static_cast<const X*>(x);
                    const int64_t base = static_cast<int64_t>(c_offset) + iy * s_.iw + ix0;  // ≥ 0 from `first` on
                    const size_t at = q + static_cast<size_t>(first);  // its column: panel at / nr, at % nr
                    int16_t* dst = row + at / nr * panel;
                    size_t col = at % nr;
                    for (int64_t i = first; i < last; ++i) {
                        dst[col * kg] = static_cast<int16_t>(px[base + i * sw] - s_.x_zp);
                        if (++col == nr) col = 0, dst += panel;
                    }
                }
                q += run;
                ox = 0, ++oy;
            }
        }
    }

    // The pointwise im2col with the k group size known to the compiler, so that the interleaving of KG
    // channels vectorises: channel k's pixels, `plane` bytes apart, into the panels.
    template <class X, size_t KG>
    void gather_pointwise(const X* x, size_t plane, size_t count, int16_t* cols) const {
        const size_t nr = mk_.qgemm_nr, panel = panel_elems();
        for (size_t k0 = 0; k0 < k_; k0 += KG)
            for (size_t q0 = 0; q0 < count; q0 += nr) {
                int16_t* dst = cols + q0 / nr * panel + k0 * nr;
                const size_t n = std::min(nr, count - q0);
                for (size_t j = 0; j < KG; ++j) {
                    if (k0 + j >= k_) break;  // K's padding to whole groups stays zero
                    const X* src = x + (k0 + j) * plane + q0;
                    for (size_t q = 0; q < n; ++q) dst[q * KG + j] = static_cast<int16_t>(src[q] - s_.x_zp);
                }
            }
    }

    // One input channel, minus its zero point, into the middle of the zero-padded int16 plane.
    template <class X>
    void fill_plane(const void* x, size_t in_offset, int16_t* plane) const {
        for (int64_t iy = 0; iy < s_.ih; ++iy) {
            int16_t* dst =
                plane + static_cast<size_t>(iy + s_.wh.pad_begin) * plane_w_ + static_cast<size_t>(s_.ww.pad_begin);
            const X* src = static_cast<const X*>(x) + in_offset + static_cast<size_t>(iy * s_.iw);
            for (int64_t ix = 0; ix < s_.iw; ++ix) dst[ix] = static_cast<int16_t>(src[ix] - s_.x_zp);
        }
    }

    void run_depthwise(size_t unit, const void* x, uint8_t* y, uint8_t* scratch) const {
        const size_t c = unit % static_cast<size_t>(s_.c);
        auto* plane = reinterpret_cast<int16_t*>(scratch);
        auto** taps = reinterpret_cast<const int16_t**>(scratch + slot_stride(plane_elems() * sizeof(int16_t)));
        std::memset(plane, 0, plane_elems() * sizeof(int16_t));
        const size_t in_offset = unit * static_cast<size_t>(s_.ih * s_.iw);  // unit = image · c + channel
        if (s_.x_signed)
            fill_plane<int8_t>(x, in_offset, plane);
        else
            fill_plane<uint8_t>(x, in_offset, plane);
        const int64_t kh = s_.wh.kernel, kw = s_.ww.kernel;
        const int16_t* w = packed_ + c * static_cast<size_t>(kh * kw);
        for (int64_t oy = 0; oy < s_.oh; ++oy) {
            for (int64_t ky = 0; ky < kh; ++ky)
                for (int64_t kx = 0; kx < kw; ++kx)
                    taps[ky * kw + kx] = plane +
                                         static_cast<size_t>(oy * s_.wh.stride + ky * s_.wh.dilation) * plane_w_ +
                                         static_cast<size_t>(kx * s_.ww.dilation);
            mk_.qdwconv_row(
                static_cast<size_t>(s_.ow), static_cast<size_t>(kh * kw), taps, static_cast<size_t>(s_.ww.stride), w,
                s_.bias[c], s_.multiplier[c], s_.out,
                y + (unit * static_cast<size_t>(s_.oh) + static_cast<size_t>(oy)) * static_cast<size_t>(s_.ow));
        }
    }

    QConvSpec s_;
    const Microkernels& mk_;
    std::string name_;
    const int16_t* packed_ = nullptr;
    size_t k_ = 0, kgroups_ = 0, pixels_ = 0, tiles_ = 0, block_ = 0, blocks_ = 0, units_ = 0, slot_bytes_ = 0;
    size_t plane_w_ = 0, plane_h_ = 0;
    bool pointwise_ = false;  // 1×1, stride 1, no padding: im2col is a copy
};

// The constant weights minus their zero points (per tensor or per output channel), as int16.
template <class W>
std::vector<int16_t> centred_weights(const TensorDesc& w, const Quant& qw) {
    const auto* p = static_cast<const W*>(w.data);
    const int64_t per_channel = w.elements() / w.shape[0];
    std::vector<int16_t> out(static_cast<size_t>(w.elements()));
    for (int64_t i = 0; i < w.elements(); ++i)
        out[static_cast<size_t>(i)] =
            static_cast<int16_t>(static_cast<int32_t>(p[i]) - quant_zero_point(qw, i / per_channel));
    return out;
}

}  // namespace

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): the reference create() has checked
// the node; this takes the 2-D NCHW ones with constant weights and bias.
std::unique_ptr<Kernel> select_qlinear_conv(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                            const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& w = *node.inputs[3];
    const TensorDesc* b = node.input(8);
    const TensorDesc* y_zp = node.input(7);
    const TensorDesc& y = outputs[0];
    if (x.rank() != 4 || get_layout(node.attrs) != Layout::NCHW || !is_quantized_dtype(x.dtype)) return nullptr;
    if (!w.is_const() || (b && !b->is_const()) || !y_zp || y.rank() != 4) return nullptr;
    QConvSpec s;
    s.n = x.shape[0], s.c = x.shape[1], s.ih = x.shape[2], s.iw = x.shape[3];
    s.m = w.shape[0], s.group = node.attrs.get_int("group", 1);
    const std::vector<Window> win =
        resolve_windows(node.attrs, Shape{s.ih, s.iw}, Shape{w.shape[2], w.shape[3]}, false);
    s.wh = win[0], s.ww = win[1];
    s.oh = y.shape[2], s.ow = y.shape[3];
    if (s.n * s.m * s.oh * s.ow == 0 || s.c == 0) return nullptr;
    const Quant qx = read_quant(*node.inputs[1], node.input(2), x.dtype, "x");
    const Quant qw = read_quant(*node.inputs[4], node.input(5), w.dtype, "w", 0, s.m);
    const Quant qy = read_quant(*node.inputs[6], y_zp, y.dtype, "y");
    s.x_signed = x.dtype == KES_I8;
    s.x_zp = quant_zero_point(qx, 0);
    const int32_t zy = quant_zero_point(qy, 0);
    const QuantRange range =
        fused_activation_range(Activation::from_attrs(node.attrs), qy.scale[0], zy, quantized_range(y.dtype));
    s.out = QuantOut{static_cast<float>(range.min - zy), static_cast<float>(range.max - zy), zy};
    for (int64_t oc = 0; oc < s.m; ++oc) {
        s.bias.push_back(b ? static_cast<const int32_t*>(b->data)[oc] : 0);
        s.multiplier.push_back(requant_multiplier(qx.scale[0], quant_scale(qw, oc), qy.scale[0]));
    }
    s.weights = w.dtype == KES_I8 ? centred_weights<int8_t>(w, qw) : centred_weights<uint8_t>(w, qw);
    auto k = std::make_unique<QConvKernel>(std::move(s), mk);
    if (k->slot_bytes() > kMaxSlotBytes) return nullptr;
    return k;
}

}  // namespace kernels
}  // namespace kes
