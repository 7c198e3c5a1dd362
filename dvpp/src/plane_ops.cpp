// Plane operations of the software DVPP (see plane_ops.hpp). Scalar reference code: these paths run
// for rotated, re-subsampled or fallback-decoded images only; the common NV12-from-4:2:0 case copies.
#include "plane_ops.hpp"

#include <cstring>

#include "kes/cpu_dispatch.hpp"
#include "vpc_internal.hpp"

#if KES_SIMD_X86
#include <emmintrin.h>  // SSE2: part of x86-64
#elif KES_SIMD_ARM
#include <arm_neon.h>  // ASIMD: part of armv8-a
#endif

namespace kes {
namespace vpc {

// The chroma row kernels of the VPC tables (vpc_internal.hpp). Baseline instructions, so no flags, but
// reached only through the tables: KES_CPU_DISABLE=all gives the plain loops everywhere.
#if KES_SIMD_X86
size_t spread_row_sse2(const uint8_t* s, uint8_t* d, size_t n) {
    // Read-modify-write of 16 pairs: keep the other component's bytes, insert ours. Stops while the
    // 32 bytes touched stay before the last sample, so nothing past it is ever read or written.
    const __m128i keep = _mm_set1_epi16(int16_t(0xFF00)), zero = _mm_setzero_si128();
    size_t i = 0;
    for (; i + 17 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
        __m128i* dv = reinterpret_cast<__m128i*>(d + i * 2);
        const __m128i d0 = _mm_and_si128(_mm_loadu_si128(dv), keep);
        const __m128i d1 = _mm_and_si128(_mm_loadu_si128(dv + 1), keep);
        _mm_storeu_si128(dv, _mm_or_si128(d0, _mm_unpacklo_epi8(v, zero)));
        _mm_storeu_si128(dv + 1, _mm_or_si128(d1, _mm_unpackhi_epi8(v, zero)));
    }
    return i;
}

size_t interleave_row_sse2(const uint8_t* a, const uint8_t* b, uint8_t* d, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
        const __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * i), _mm_unpacklo_epi8(va, vb));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * i + 16), _mm_unpackhi_epi8(va, vb));
    }
    return i;
}
#elif KES_SIMD_ARM
size_t interleave_row_neon(const uint8_t* a, const uint8_t* b, uint8_t* d, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint8x16x2_t v;
        v.val[0] = vld1q_u8(a + i);
        v.val[1] = vld1q_u8(b + i);
        vst2q_u8(d + 2 * i, v);
    }
    return i;
}
#endif

void interleave_row(const uint8_t* a, const uint8_t* b, uint8_t* d, size_t n, const Kernels& k) {
    for (size_t i = k.interleave_row ? k.interleave_row(a, b, d, n) : 0; i < n; ++i) {
        d[2 * i] = a[i];
        d[2 * i + 1] = b[i];
    }
}

void spread_row(const uint8_t* s, uint8_t* d, size_t n, const Kernels& k) {
    for (size_t i = k.spread_row ? k.spread_row(s, d, n) : 0; i < n; ++i) d[2 * i] = s[i];
}

}  // namespace vpc

void orient_plane(const uint8_t* src, uint32_t w, uint32_t h, size_t src_stride, uint32_t bpp, uint32_t orientation,
                  uint8_t* dst, size_t dst_stride, uint32_t out_w, uint32_t out_h) noexcept {
    // Displayed (x', y') from stored (x, y); stored w × h (EXIF 2.3 tag 0x0112):
    // 2 mirror x, 3 rotate 180, 4 mirror y, 5 transpose, 6 rotate 90 CW, 7 transverse, 8 rotate 270 CW.
    for (uint32_t yo = 0; yo < out_h; ++yo) {
        uint8_t* drow = dst + size_t(yo) * dst_stride;
        for (uint32_t xo = 0; xo < out_w; ++xo) {
            uint32_t x = xo, y = yo;
            switch (orientation) {
                case 2: x = w - 1 - xo; break;
                case 3:
                    x = w - 1 - xo;
                    y = h - 1 - yo;
                    break;
                case 4: y = h - 1 - yo; break;
                case 5:
                    x = yo;
                    y = xo;
                    break;
                case 6:
                    x = yo;
                    y = h - 1 - xo;
                    break;
                case 7:
                    x = w - 1 - yo;
                    y = h - 1 - xo;
                    break;
                case 8:
                    x = w - 1 - yo;
                    y = xo;
                    break;
                default: break;
            }
            const uint8_t* s = src + size_t(y) * src_stride + size_t(x) * bpp;
            for (uint32_t b = 0; b < bpp; ++b) drow[size_t(xo) * bpp + b] = s[b];
        }
    }
}

void resample_chroma(const ChromaPlane& src, uint32_t w, uint32_t h, uint32_t dx, uint32_t dy, uint8_t* dst,
                     size_t dst_stride, uint32_t step) noexcept {
    const uint32_t cw = (w + (1u << dx) - 1) >> dx;
    const uint32_t ch = (h + (1u << dy) - 1) >> dy;
    if (src.sx == dx && src.sy == dy) {
        for (uint32_t j = 0; j < ch; ++j) {
            const uint8_t* s = src.data + size_t(j) * src.stride;
            uint8_t* d = dst + size_t(j) * dst_stride;
            if (step == 2) {
                vpc::spread_row(s, d, cw);
            } else {
                for (uint32_t i = 0; i < cw; ++i) d[size_t(i) * step] = s[i];
            }
        }
        return;
    }
    for (uint32_t j = 0; j < ch; ++j) {
        const uint32_t y0 = j << dy;
        const uint32_t y1 = (y0 + (1u << dy) < h) ? y0 + (1u << dy) : h;
        uint8_t* d = dst + size_t(j) * dst_stride;
        for (uint32_t i = 0; i < cw; ++i) {
            const uint32_t x0 = i << dx;
            const uint32_t x1 = (x0 + (1u << dx) < w) ? x0 + (1u << dx) : w;
            uint32_t sum = 0, n = 0;
            for (uint32_t y = y0; y < y1; ++y) {
                const uint8_t* s = src.data + size_t(y >> src.sy) * src.stride;
                for (uint32_t x = x0; x < x1; ++x) sum += s[x >> src.sx];
                n += x1 - x0;
            }
            d[size_t(i) * step] = uint8_t((sum + n / 2) / n);
        }
    }
}

void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, size_t n) noexcept {
    for (size_t i = 0; i < n; ++i) {
        const uint32_t k = cmyk[4 * i + 3];
        for (int c = 0; c < 3; ++c) rgb[3 * i + c] = uint8_t((cmyk[4 * i + c] * k + 127) / 255);
    }
}

void rgb_to_yuv_row(const uint8_t* rgb, size_t n, uint8_t* y, uint8_t* u, uint8_t* v) noexcept {
    // JFIF coefficients in 16.16 fixed point, as libjpeg's jccolor.c uses them.
    constexpr int32_t kOne = 1 << 16, kHalf = 1 << 15;
    auto fix = [](double c) { return int32_t(c * 65536.0 + 0.5); };
    const int32_t yr = fix(0.29900), yg = fix(0.58700), yb = fix(0.11400);
    const int32_t ur = fix(0.16874), ug = fix(0.33126), vg = fix(0.41869), vb = fix(0.08131);
    const int32_t half = fix(0.5);
    for (size_t i = 0; i < n; ++i) {
        const int32_t r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
        if (y) y[i] = uint8_t((yr * r + yg * g + yb * b + kHalf) >> 16);
        if (u) u[i] = uint8_t((-ur * r - ug * g + half * b + 128 * kOne + kHalf - 1) >> 16);
        if (v) v[i] = uint8_t((half * r - vg * g - vb * b + 128 * kOne + kHalf - 1) >> 16);
    }
}

}  // namespace kes
