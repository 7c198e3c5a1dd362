// VPC resize (BOARD-RULES §VPC). The 310B promises results identical to OpenCV's cv::resize INTER_LINEAR /
// INTER_NEAREST; Kestrel reproduces OpenCV 4.6 (what Debian 12 ships, and what the tests compare
// with) on each plane: the luma plane as CV_8UC1, the interleaved chroma plane as CV_8UC2.
//
// OpenCV's 8-bit bilinear, as observed and reproduced here:
//   - per axis, source coordinate f = (float)((d + 0.5) · (1 / (dst / src)) − 0.5), index floor(f),
//     weights saturate_cast<short>((1 − frac) · 2048) and saturate_cast<short>(frac · 2048);
//   - horizontally the index is clamped to [0, w − 1] with weight (2048, 0) at the clamped ends; the
//     horizontal pass keeps 32-bit sums (sample · weight);
//   - vertically the weights are NOT clamped, only the two row indices are (to [0, h − 1]);
//   - the vertical pass is OpenCV's vectorised one for every element, tails included (checked against
//     Debian's libopencv 4.6 over hundreds of shapes): ((h0 >> 4) · b0 >> 16) + ((h1 >> 4) · b1 >> 16),
//     then (v + 2) >> 2 saturated. It is not the exact (h0 · b0 + h1 · b1 + 2^21) >> 22 of OpenCV's
//     scalar FixedPtCast, which is one higher now and then;
//   - an exact 2× downscale on both axes runs INTER_AREA's fast path instead: (a + b + c + d + 2) >> 2
//     for 1, 3 and 4 channels, round-half-to-even of the mean for 2 channels.
// Nearest: source index min(floor(d · (1 / (dst / src))), src − 1) per axis.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "kes/cpu_dispatch.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "vpc_internal.hpp"

#if KES_SIMD_X86
#include <emmintrin.h>  // SSE2: part of x86-64, no compiler flags
#endif

namespace kes {
namespace vpc {
namespace {

constexpr int kCoefBits = 11;  // OpenCV INTER_RESIZE_COEF_BITS
constexpr int kCoefScale = 1 << kCoefBits;

// OpenCV's bilinear coordinate for destination index d (float arithmetic as OpenCV does it).
struct Coord {
    int index;
    int16_t w0, w1;
};
Coord linear_coord(uint32_t d, double scale) {
    float f = float((d + 0.5) * scale - 0.5);
    const int s = int(std::floor(f));
    f -= float(s);
    // saturate_cast<short>(float) rounds to nearest even (cvRound).
    return {s, int16_t(std::lrint((1.f - f) * kCoefScale)), int16_t(std::lrint(f * kCoefScale))};
}

void resize_area2(const PlaneView& src, uint32_t cn, uint8_t* dst, size_t dst_stride, uint32_t dw, uint32_t dh,
                  const Kernels& k) {
    const size_t n = size_t(dw) * cn;
    for (uint32_t y = 0; y < dh; ++y) {
        const uint8_t* s0 = src.data + size_t(2 * y) * src.stride;
        const uint8_t* s1 = s0 + src.stride;
        uint8_t* d = dst + size_t(y) * dst_stride;
        for (size_t i = k.area2_row ? k.area2_row(s0, s1, cn, d, n) : 0; i < n; ++i) {
            const size_t a = (i / cn) * 2 * cn + i % cn, b = a + cn;
            const uint32_t sum = uint32_t(s0[a]) + s0[b] + s1[a] + s1[b];
            uint32_t v = (sum + 2) >> 2;
            // cn == 2 has no fast kernel in OpenCV: saturate_cast<uchar>(sum · 0.25f) rounds half to even.
            if (cn == 2 && (sum & 3) == 2 && ((sum >> 2) & 1) == 0) v = sum >> 2;
            d[i] = uint8_t(v);
        }
    }
}

class LinearResizer {
public:
    LinearResizer(const PlaneView& src, uint32_t cn, uint32_t dw, uint32_t dh, const Kernels& kernels)
        : k_(kernels), src_(src), cn_(cn), dw_(dw), dh_(dh) {
        const size_t n = size_t(dw) * cn;
        ofs_.resize(n);
        wpair_.resize(n);
        const double scale_x = 1.0 / (double(dw) / double(src.w));  // OpenCV: 1 / inv_scale_x
        n_pair_ = n;
        for (uint32_t d = 0; d < dw; ++d) {
            Coord c = linear_coord(d, scale_x);
            if (c.index < 0) c = {0, int16_t(kCoefScale), 0};
            if (c.index >= int(src.w) - 1) {
                c = {int(src.w) - 1, int16_t(kCoefScale), 0};
                n_pair_ = std::min(n_pair_, size_t(d) * cn);
            }
            for (uint32_t k = 0; k < cn; ++k) {
                ofs_[size_t(d) * cn + k] = int32_t(c.index * int(cn) + int(k));
                wpair_[size_t(d) * cn + k] = int32_t(uint32_t(uint16_t(c.w0)) | (uint32_t(uint16_t(c.w1)) << 16));
            }
        }
        rows_[0].resize(n);
        rows_[1].resize(n);
        // Groups of 4 elements whose samples fit the 16 bytes at the group's first offset.
        const size_t groups = n_pair_ / 4, row_bytes = size_t(src.w) * cn;
        shuffle_.assign(groups * 16 + 16, 0x80);
        window_.assign(groups + 2, 0);
        for (size_t g = 0; g < groups; ++g) {
            const int32_t base = ofs_[4 * g];
            bool fits = size_t(base) + 16 <= row_bytes;
            for (size_t k = 0; k < 4 && fits; ++k) {
                const int32_t a = ofs_[4 * g + k] - base, b = a + int32_t(cn);
                fits = b < 16;
                shuffle_[16 * g + 4 * k] = uint8_t(a);
                shuffle_[16 * g + 4 * k + 2] = uint8_t(b);
            }
            window_[g] = fits ? 1 : 0;
        }
        tables_ = {ofs_.data(), wpair_.data(), shuffle_.data(), window_.data(), n_pair_, cn};
    }

    void run(uint8_t* dst, size_t dst_stride) {
        const double scale_y = 1.0 / (double(dh_) / double(src_.h));
        const size_t n = size_t(dw_) * cn_;
        const int last = int(src_.h) - 1;
        for (uint32_t y = 0; y < dh_; ++y) {
            const Coord c = linear_coord(y, scale_y);
            const int r0 = std::clamp(c.index, 0, last), r1 = std::clamp(c.index + 1, 0, last);
            int k0 = slot(r0), k1 = slot(r1);
            if (k0 < 0 && k1 < 0 && r0 != r1) {  // both new: one pass over the tables for the two rows
                horizontal_two(r0, r1);
                k0 = 0;
                k1 = 1;
            } else {
                if (k0 < 0) k0 = horizontal_one(r0, k1 < 0 ? 0 : k1 ^ 1);
                if (k1 < 0) k1 = r1 == r0 ? k0 : horizontal_one(r1, k0 ^ 1);
            }
            vertical(rows_[k0].data(), rows_[k1].data(), c.w0, c.w1, dst + size_t(y) * dst_stride, n);
        }
    }

private:
    // Cache slot holding the horizontally resized source row r, or -1.
    int slot(int r) const { return cached_[0] == r ? 0 : cached_[1] == r ? 1 : -1; }

    // Resizes source row r into cache slot k; returns k.
    int horizontal_one(int r, int k) {
        const uint8_t* s = src_.data + size_t(r) * src_.stride;
        int16_t* out = rows_[k].data();
        cached_[k] = r;
        const size_t i = k_.hresize_linear ? k_.hresize_linear(&s, 1, tables_, &out) : 0;
        scalar_tail(s, out, i);
        return k;
    }

    // Resizes source rows r0 and r1 into slots 0 and 1.
    void horizontal_two(int r0, int r1) {
        const uint8_t* s[2] = {src_.data + size_t(r0) * src_.stride, src_.data + size_t(r1) * src_.stride};
        int16_t* out[2] = {rows_[0].data(), rows_[1].data()};
        cached_[0] = r0;
        cached_[1] = r1;
        const size_t i = k_.hresize_linear ? k_.hresize_linear(s, 2, tables_, out) : 0;
        scalar_tail(s[0], out[0], i);
        scalar_tail(s[1], out[1], i);
    }

    // Elements from i on: the pairs, then the clamped right edge (sample · 2048), each kept >> 4.
    void scalar_tail(const uint8_t* s, int16_t* out, size_t i) const {
        for (; i < n_pair_; ++i) {
            const int32_t w = wpair_[i];
            const int32_t w0 = int16_t(uint32_t(w) & 0xFFFF), w1 = int16_t(uint32_t(w) >> 16);
            out[i] = int16_t((s[ofs_[i]] * w0 + s[ofs_[i] + int32_t(cn_)] * w1) >> 4);
        }
        for (const size_t n = ofs_.size(); i < n; ++i) out[i] = int16_t((s[ofs_[i]] * kCoefScale) >> 4);
    }

    // h0/h1 hold OpenCV's v_pack(sum >> 4) (no saturation: a sum is at most 255 · 2048). v_mul_hi is
    // (a · b) >> 16, v_rshr_pack_u<2> is (v + 2) >> 2 saturated to 0..255.
    void vertical(const int16_t* h0, const int16_t* h1, int32_t b0, int32_t b1, uint8_t* d, size_t n) const {
        size_t i = k_.vresize_linear ? k_.vresize_linear(h0, h1, b0, b1, d, n) : 0;
        for (; i < n; ++i) {
            const int32_t v = ((h0[i] * b0) >> 16) + ((h1[i] * b1) >> 16);
            const int32_t r = (v + 2) >> 2;
            d[i] = uint8_t(r < 0 ? 0 : r > 255 ? 255 : r);
        }
    }

    const Kernels& k_;
    PlaneView src_;
    uint32_t cn_, dw_, dh_;
    std::vector<int32_t> ofs_, wpair_;
    std::vector<uint8_t> shuffle_, window_;
    HTables tables_{};
    size_t n_pair_ = 0;  // leading elements with both samples inside the row
    std::vector<int16_t> rows_[2];
    int cached_[2] = {-1, -1};
};

void resize_nearest(const PlaneView& src, uint32_t cn, uint8_t* dst, size_t dst_stride, uint32_t dw, uint32_t dh,
                    const Kernels& kernels) {
    const double ifx = 1.0 / (double(dw) / src.w), ify = 1.0 / (double(dh) / src.h);  // OpenCV's 1/fx, 1/fy
    std::vector<uint32_t> xs(dw);
    for (uint32_t x = 0; x < dw; ++x) xs[x] = std::min(uint32_t(std::floor(x * ifx)), src.w - 1) * cn;
    const bool tabled = kernels.nearest_row != nullptr;
    const size_t out_bytes = size_t(dw) * cn, in_bytes = size_t(src.w) * cn;
    std::vector<uint32_t> src_byte, base;
    std::vector<uint8_t> index, window;
    NearestTables t{};
    if (tabled) {
        src_byte.resize(out_bytes);
        for (size_t j = 0; j < out_bytes; ++j) src_byte[j] = xs[j / cn] + uint32_t(j % cn);
        t.groups = out_bytes / 16;
        base.assign(t.groups, 0);
        index.assign(16 * t.groups, 0);
        window.assign(t.groups, 0);
        // Rows under 32 bytes have no window: all their groups go byte by byte.
        for (size_t g = 0; in_bytes >= 32 && g < t.groups; ++g) {
            // Not monotonic for cn > 1 (an upscale repeats a pixel's channels): take the group's span.
            const auto span = std::minmax_element(src_byte.begin() + 16 * g, src_byte.begin() + 16 * g + 16);
            // Near the right edge the 32-byte window starts earlier, to stay inside the row.
            const uint32_t b = std::min(*span.first, uint32_t(in_bytes - 32));
            if (*span.second - b >= 32) continue;
            base[g] = b;
            window[g] = 1;
            for (size_t k = 0; k < 16; ++k) index[16 * g + k] = uint8_t(src_byte[16 * g + k] - b);
        }
        t.src_byte = src_byte.data();
        t.base = base.data();
        t.index = index.data();
        t.window = window.data();
    }
    for (uint32_t y = 0; y < dh; ++y) {
        const uint32_t sy = std::min(uint32_t(std::floor(y * ify)), src.h - 1);
        const uint8_t* s = src.data + size_t(sy) * src.stride;
        uint8_t* d = dst + size_t(y) * dst_stride;
        if (tabled) {
            for (size_t j = kernels.nearest_row(s, t, d); j < out_bytes; ++j) d[j] = s[src_byte[j]];
        } else if (cn == 1) {
            for (uint32_t x = 0; x < dw; ++x) d[x] = s[xs[x]];
        } else if (cn == 2) {
            for (uint32_t x = 0; x < dw; ++x) std::memcpy(d + 2 * size_t(x), s + xs[x], 2);
        } else {
            for (uint32_t x = 0; x < dw; ++x) std::memcpy(d + size_t(x) * cn, s + xs[x], cn);
        }
    }
}

}  // namespace

void resize_plane(const PlaneView& src, uint32_t cn, uint8_t* dst, size_t dst_stride, uint32_t dw, uint32_t dh,
                  Filter filter, const Kernels& k) {
    if (src.w == dw && src.h == dh) {  // cv::resize copies
        for (uint32_t y = 0; y < dh; ++y)
            std::memcpy(dst + size_t(y) * dst_stride, src.data + size_t(y) * src.stride, size_t(dw) * cn);
        return;
    }
    if (filter == Filter::nearest) return resize_nearest(src, cn, dst, dst_stride, dw, dh, k);
    if (src.w == 2 * dw && src.h == 2 * dh) return resize_area2(src, cn, dst, dst_stride, dw, dh, k);
    LinearResizer(src, cn, dw, dh, k).run(dst, dst_stride);
}

namespace {

#if KES_SIMD_X86
// The vertical step 16 elements at a time with x86-64's baseline SSE2.
size_t vresize_linear_sse2(const int16_t* h0, const int16_t* h1, int32_t b0, int32_t b1, uint8_t* d, size_t n) {
    const __m128i vb0 = _mm_set1_epi16(int16_t(b0)), vb1 = _mm_set1_epi16(int16_t(b1)), two = _mm_set1_epi16(2);
    auto step = [&](size_t k) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h0 + k));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h1 + k));
        const __m128i v = _mm_add_epi16(_mm_mulhi_epi16(a, vb0), _mm_mulhi_epi16(b, vb1));
        return _mm_srai_epi16(_mm_add_epi16(v, two), 2);
    };
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm_packus_epi16(step(i), step(i + 8)));
    return i;
}

const Kernels kSse2 = {"sse2",  nullptr, vresize_linear_sse2, nullptr,
                       nullptr, nullptr, interleave_row_sse2, spread_row_sse2};
#endif

const Kernels kScalar = {"scalar", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

// SSE2 has no feature bit of its own (every x86-64 has it): its table goes with SSE4.1, the oldest bit
// cpu.h names, so that KES_CPU_DISABLE=all (or sse4.1) leaves the plain loops alone, as on every
// other table.
constexpr dispatch::Variant<Kernels> kVariants[] = {
    {KES_CPU_AVX2, kernels_avx2},
    {KES_CPU_NEON, kernels_neon},
    {KES_CPU_SSE41, kernels_sse2},
};

}  // namespace

const Kernels& kernels_scalar() noexcept {
    return kScalar;
}

const Kernels* kernels_sse2() noexcept {
#if KES_SIMD_X86
    return &kSse2;
#else
    return nullptr;
#endif
}

const Kernels& kernels_active() noexcept {
    static const Kernels& chosen = dispatch::pick_table(kVariants, kScalar);
    return chosen;
}

std::vector<const Kernels*> kernels_available() {
    return dispatch::usable_tables(kVariants, kScalar);
}

#if !KES_SIMD_X86
const Kernels* kernels_avx2() noexcept {
    return nullptr;
}
#endif
#if !KES_SIMD_ARM
const Kernels* kernels_neon() noexcept {
    return nullptr;
}
#endif

Filter filter_arg(const kes_vpc_interp& interp) {
    const int64_t mode = enum_value(interp);
    if (mode == 3 || mode == 4)
        KES_FAIL(KES_ERR_UNSUPPORTED, "TensorFlow-like interpolation (%lld) is not implemented",
                 static_cast<long long>(mode));
    KES_REQUIRE(mode >= 0 && mode <= 2, "interpolation must be 0 (default), 1 (bilinear) or 2 (nearest) (got %lld)",
                static_cast<long long>(mode));
    return mode == KES_VPC_INTERP_NEAREST ? Filter::nearest : Filter::bilinear;
}

bool is_nv(const kes_pixel_format& format) {
    const int64_t f = enum_value(format);
    return f == KES_PIXEL_NV12 || f == KES_PIXEL_NV21;
}

void check_input_size(const kes_board_profile& b, kes_pixel_format format, uint32_t w, uint32_t h) {
    const bool nv = is_nv(format);
    const uint32_t max = nv ? b.vpc_max_input_dim_nv12 : b.vpc_max_input_dim;
    KES_REQUIRE(
        w >= b.vpc_min_width && h >= b.vpc_min_height && w <= max && h <= max,
        "VPC input %ux%u is outside %ux%u..%u per side for %s input on the %s profile (docs/BOARD-RULES.md §VPC%s)", w,
        h, b.vpc_min_width, b.vpc_min_height, max, kes_pixel_format_name(format), b.name,
        nv ? "" : "; only NV12/NV21 input may exceed vpc_max_input_dim");
}

void check_output_size(const kes_board_profile& b, uint32_t w, uint32_t h) {
    KES_REQUIRE(
        w >= b.vpc_min_width && h >= b.vpc_min_height && w <= b.vpc_max_output_width && h <= b.vpc_max_output_height,
        "VPC output %ux%u is outside %ux%u..%ux%u on the %s profile (docs/BOARD-RULES.md §VPC)", w, h, b.vpc_min_width,
        b.vpc_min_height, b.vpc_max_output_width, b.vpc_max_output_height, b.name);
}

void check_scale(const kes_board_profile& b, uint32_t in, uint32_t out, const char* axis) {
    // out/in within [1/den, max] ⇔ out·den ≥ in and out ≤ in·max (exact in integers).
    KES_REQUIRE(uint64_t(out) * b.vpc_scale_min_den >= in && uint64_t(out) <= uint64_t(in) * b.vpc_scale_max,
                "VPC %s scale %u -> %u is outside [1/%u, %u] on the %s profile (docs/BOARD-RULES.md §VPC)", axis, in,
                out, b.vpc_scale_min_den, b.vpc_scale_max, b.name);
}

void check_roi(const kes_board_profile& b, const kes_vpc_roi& r, uint32_t w, uint32_t h, const char* what) {
    KES_REQUIRE(r.left <= r.right && r.top <= r.bottom && r.right < w && r.bottom < h,
                "%s ROI (left %u, top %u, right %u, bottom %u; inclusive) must lie inside the %ux%u image", what,
                r.left, r.top, r.right, r.bottom, w, h);
    if (b.vpc_roi_parity) {
        KES_REQUIRE(r.left % 2 == 0 && r.top % 2 == 0,
                    "%s ROI left=%u top=%u must be even on the %s profile (docs/BOARD-RULES.md §VPC)", what, r.left,
                    r.top, b.name);
        KES_REQUIRE(r.right % 2 == 1 && r.bottom % 2 == 1,
                    "%s ROI right=%u bottom=%u must be odd on the %s profile (docs/BOARD-RULES.md §VPC)", what, r.right,
                    r.bottom, b.name);
    }
}

kes_vpc_roi check_nv_crop(const kes_board_profile& b, const kes_image& in, const kes_vpc_roi* roi, const char* what) {
    check_sdk(kes_image_validate(&in), what);
    if (!is_nv(in.format))
        KES_FAIL(KES_ERR_UNSUPPORTED, "VPC %s %s: only NV12/NV21 (convert with kes_vpc_convert_color)", what,
                 kes_pixel_format_name(in.format));
    // BOARD-RULES §VPC: VPC silently rounds odd input sizes down to even.
    const uint32_t iw = in.width & ~1u, ih = in.height & ~1u;
    check_input_size(b, in.format, iw, ih);
    const kes_vpc_roi r = roi ? *roi : kes_vpc_roi{0, 0, iw - 1, ih - 1};
    check_roi(b, r, iw, ih, format("%s crop", what).c_str());
    return r;
}

void check_nv_resize(const kes_board_profile& b, const kes_vpc_roi& r, uint32_t out_w, uint32_t out_h,
                     const char* what) {
    KES_REQUIRE(out_w % 2 == 0 && out_h % 2 == 0,
                "VPC %s size must be even for 4:2:0 output (got %ux%u, docs/BOARD-RULES.md §VPC)", what, out_w, out_h);
    check_output_size(b, out_w, out_h);
    check_scale(b, roi_width(r), out_w, "width");
    check_scale(b, roi_height(r), out_h, "height");
}

void resize_nv_region(const kes_image& in, const kes_vpc_roi& r, const kes_image& out, const kes_vpc_roi& area,
                      Filter filter, const Kernels& k) {
    kes_image_plane iy, ic, oy, oc;
    check_sdk(kes_image_get_plane(&in, 0, &iy), "input luma");
    check_sdk(kes_image_get_plane(&in, 1, &ic), "input chroma");
    check_sdk(kes_image_get_plane(&out, 0, &oy), "output luma");
    check_sdk(kes_image_get_plane(&out, 1, &oc), "output chroma");
    // Chroma ROI: the pairs under the luma ROI (exact when left/top are even and right/bottom odd).
    const uint32_t cl = r.left / 2, ct = r.top / 2, cr = r.right / 2, cb = r.bottom / 2;
    const PlaneView ysrc{iy.data + size_t(r.top) * iy.stride + r.left, iy.stride, roi_width(r), roi_height(r)};
    const PlaneView csrc{ic.data + size_t(ct) * ic.stride + size_t(cl) * 2, ic.stride, cr - cl + 1, cb - ct + 1};
    const uint32_t dw = roi_width(area), dh = roi_height(area);
    resize_plane(ysrc, 1, oy.data + size_t(area.top) * oy.stride + area.left, oy.stride, dw, dh, filter, k);
    resize_plane(csrc, 2, oc.data + size_t(area.top / 2) * oc.stride + area.left, oc.stride, dw / 2, dh / 2, filter, k);
}

}  // namespace vpc
}  // namespace kes

extern "C" const char* kes_vpc_kernels_name(void) {
    return kes::vpc::kernels_active().name;
}

extern "C" kes_status kes_vpc_crop_resize(kes_dvpp_channel* channel, const kes_image* in, const kes_vpc_roi* roi,
                                          uint32_t out_width, uint32_t out_height, kes_vpc_interp interp,
                                          kes_mem_pool* pool, kes_image* out_image) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vpc_crop_resize");
        KES_REQUIRE_NOT_NULL(out_image);
        std::memset(out_image, 0, sizeof *out_image);
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(in);
        const kes_board_profile& b = channel->profile;
        const kes::vpc::Filter filter = kes::vpc::filter_arg(interp);
        const kes_vpc_roi r = kes::vpc::check_nv_crop(b, *in, roi, "input");
        kes::vpc::check_nv_resize(b, r, out_width, out_height, "output");

        uint32_t ws = 0, hs = 0;
        kes::check_sdk(kes_image_strides(in->format, out_width, out_height, KES_STRIDE_VPC, b.board, &ws, &hs),
                       "VPC output strides");
        if (kes::served_by_hardware(channel, "VPC crop/resize", [&](kes::AscendDvpp& hw) {
                return kes::vpc_crop_resize_hw(hw, *in, r, interp, {out_width, out_height, ws, hs},
                                               kes::output_pool(channel, pool), out_image);
            }))
            return KES_OK;
        kes::require_cpu_access(*in, "the input image");
        kes::check_sdk(
            kes_image_alloc(out_image, kes::output_pool(channel, pool), in->format, out_width, out_height, ws, hs),
            "VPC output allocation");
        kes::ImageGuard guard(out_image);
        kes::vpc::resize_nv_region(*in, r, *out_image, kes_vpc_roi{0, 0, out_width - 1, out_height - 1}, filter);
        guard.disarm();
        return KES_OK;
    });
}
