// VPC colour conversion (acldvppVpcConvertColorAsync, BOARD-RULES §Formats acldvppCscMatrix, §VPC formats):
// NV12/NV21/I420 ↔ RGB888/BGR888 with BT.601 / BT.709 in full ("wide") or narrow range, between the
// 4:2:0 layouts, and to YUV400. Fixed point with 16-bit fractions: every result is within 1 of the
// formula evaluated exactly and rounded (tests check it, and against OpenCV's cvtColor).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kes/cpu_dispatch.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "vpc_internal.hpp"

#if KES_SIMD_ARM
#include <arm_neon.h>  // baseline armv8-a: no flags; in kernels_neon()'s table (vpc_resize_neon.cpp)
#endif

namespace kes {
namespace vpc {
namespace {

constexpr int kShift = kCscShift;
constexpr int32_t kHalf = kCscHalf;

int32_t fix(double v) {
    return int32_t(std::lround(v * (1 << kShift)));
}
uint8_t clamp8(int32_t v) {
    return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
}

Matrix make_matrix(int64_t which) {
    const bool bt709 = which == KES_VPC_CSC_BT709_WIDE || which == KES_VPC_CSC_BT709_NARROW;
    const bool narrow = which == KES_VPC_CSC_BT601_NARROW || which == KES_VPC_CSC_BT709_NARROW;
    const double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114, kg = 1.0 - kr - kb;
    const double ys = narrow ? 219.0 / 255.0 : 1.0, cs = narrow ? 224.0 / 255.0 : 1.0;
    const double ub = 0.5 / (1.0 - kb), vr = 0.5 / (1.0 - kr);
    Matrix m{};
    m.ky_r = fix(kr * ys);
    m.ky_g = fix(kg * ys);
    m.ky_b = fix(kb * ys);
    m.ku_r = fix(-kr * ub * cs);
    m.ku_g = fix(-kg * ub * cs);
    m.ku_b = fix((1.0 - kb) * ub * cs);
    m.kv_r = fix((1.0 - kr) * vr * cs);
    m.kv_g = fix(-kg * vr * cs);
    m.kv_b = fix(-kb * vr * cs);
    m.y_off = narrow ? 16 : 0;
    m.y0 = narrow ? 16 : 0;
    m.cy = fix(1.0 / ys);
    m.r_v = fix(2.0 * (1.0 - kr) / cs);
    m.b_u = fix(2.0 * (1.0 - kb) / cs);
    m.g_u = fix(-2.0 * (1.0 - kb) * kb / kg / cs);
    m.g_v = fix(-2.0 * (1.0 - kr) * kr / kg / cs);
    return m;
}

// The 4:2:0 planes of an NV12/NV21/I420 image: luma, and U/V with their element step.
struct Yuv420 {
    uint8_t* y;
    size_t y_stride;
    uint8_t *u, *v;
    size_t c_stride;
    uint32_t c_step;
};

Yuv420 yuv420_planes(const kes_image& img) {
    kes_image_plane py, p1;
    check_sdk(kes_image_get_plane(&img, 0, &py), "luma plane");
    check_sdk(kes_image_get_plane(&img, 1, &p1), "chroma plane");
    const int64_t f = enum_value(img.format);
    if (f == KES_PIXEL_I420) {
        kes_image_plane p2;
        check_sdk(kes_image_get_plane(&img, 2, &p2), "V plane");
        return {py.data, py.stride, p1.data, p2.data, p1.stride, 1};
    }
    const bool vu = f == KES_PIXEL_NV21;
    return {py.data, py.stride, p1.data + (vu ? 1 : 0), p1.data + (vu ? 0 : 1), p1.stride, 2};
}

bool is_yuv420(int64_t f) {
    return f == KES_PIXEL_NV12 || f == KES_PIXEL_NV21 || f == KES_PIXEL_I420;
}
bool is_rgb(int64_t f) {
    return f == KES_PIXEL_RGB888 || f == KES_PIXEL_BGR888;
}

void yuv_to_rgb(const Yuv420& s, const Matrix& m, uint8_t* dst, size_t dst_stride, bool bgr, uint32_t w, uint32_t h,
                const Kernels& k) {
    const int ri = bgr ? 2 : 0, bi = bgr ? 0 : 2;
    for (uint32_t y = 0; y < h; ++y) {
        const uint8_t* ys = s.y + size_t(y) * s.y_stride;
        const uint8_t* us = s.u + size_t(y / 2) * s.c_stride;
        const uint8_t* vs = s.v + size_t(y / 2) * s.c_stride;
        uint8_t* d = dst + size_t(y) * dst_stride;
        const uint32_t x0 = k.yuv_to_rgb_row ? k.yuv_to_rgb_row(ys, us, vs, s.c_step, m, d, bgr ? 1 : 0, w) : 0;
        for (uint32_t x = x0; x < w; ++x) {
            const int32_t yy = m.cy * (ys[x] - m.y0) + kHalf;
            const int32_t u = us[size_t(x / 2) * s.c_step] - 128, v = vs[size_t(x / 2) * s.c_step] - 128;
            d[3 * x + ri] = clamp8((yy + m.r_v * v) >> kShift);
            d[3 * x + 1] = clamp8((yy + m.g_u * u + m.g_v * v) >> kShift);
            d[3 * x + bi] = clamp8((yy + m.b_u * u) >> kShift);
        }
    }
}

// Luma per pixel; chroma of each 2×2 block from the block's rounded mean R, G, B (the mean colour,
// then converted, as libyuv's ARGBToUV does).
void rgb_to_yuv(const uint8_t* src, size_t src_stride, bool bgr, const Matrix& m, const Yuv420* d, uint8_t* y_only,
                size_t y_only_stride, uint32_t w, uint32_t h) {
    const int ri = bgr ? 2 : 0, bi = bgr ? 0 : 2;
    for (uint32_t y = 0; y < h; ++y) {
        const uint8_t* s = src + size_t(y) * src_stride;
        uint8_t* yd = d ? d->y + size_t(y) * d->y_stride : y_only + size_t(y) * y_only_stride;
        for (uint32_t x = 0; x < w; ++x) {
            const int32_t r = s[3 * x + ri], g = s[3 * x + 1], b = s[3 * x + bi];
            yd[x] = clamp8(((m.ky_r * r + m.ky_g * g + m.ky_b * b + kHalf) >> kShift) + m.y_off);
        }
    }
    if (!d) return;
    for (uint32_t cy = 0; cy < h / 2; ++cy) {
        const uint8_t* s0 = src + size_t(2 * cy) * src_stride;
        const uint8_t* s1 = s0 + src_stride;
        uint8_t* ud = d->u + size_t(cy) * d->c_stride;
        uint8_t* vd = d->v + size_t(cy) * d->c_stride;
        for (uint32_t cx = 0; cx < w / 2; ++cx) {
            int32_t rgb[3];
            for (int c = 0; c < 3; ++c) {
                const size_t a = size_t(6) * cx + size_t(c);
                rgb[c] = (s0[a] + s0[a + 3] + s1[a] + s1[a + 3] + 2) >> 2;
            }
            const int32_t r = rgb[ri], g = rgb[1], b = rgb[bi];
            ud[size_t(cx) * d->c_step] = clamp8(((m.ku_r * r + m.ku_g * g + m.ku_b * b + kHalf) >> kShift) + 128);
            vd[size_t(cx) * d->c_step] = clamp8(((m.kv_r * r + m.kv_g * g + m.kv_b * b + kHalf) >> kShift) + 128);
        }
    }
}

void copy_yuv420(const Yuv420& s, const Yuv420& d, uint32_t w, uint32_t h) {
    for (uint32_t y = 0; y < h; ++y) std::memcpy(d.y + size_t(y) * d.y_stride, s.y + size_t(y) * s.y_stride, w);
    for (uint32_t y = 0; y < h / 2; ++y) {
        const uint8_t* su = s.u + size_t(y) * s.c_stride;
        const uint8_t* sv = s.v + size_t(y) * s.c_stride;
        uint8_t* du = d.u + size_t(y) * d.c_stride;
        uint8_t* dv = d.v + size_t(y) * d.c_stride;
        for (uint32_t x = 0; x < w / 2; ++x) {
            du[size_t(x) * d.c_step] = su[size_t(x) * s.c_step];
            dv[size_t(x) * d.c_step] = sv[size_t(x) * s.c_step];
        }
    }
}

}  // namespace

#if KES_SIMD_ARM
// yuv_to_rgb's arithmetic for 16 pixels at a time in 32-bit lanes (the products do not fit 16 bits),
// so the bits are the scalar loop's; vqmovn then vqmovun is clamp8. Returns the pixels done.
uint32_t yuv_to_rgb_row_neon(const uint8_t* ys, const uint8_t* us, const uint8_t* vs, uint32_t c_step, const Matrix& m,
                             uint8_t* d, int bgr, uint32_t w) {
    const int16x8_t bias = vdupq_n_s16(128), y0 = vdupq_n_s16(int16_t(m.y0));
    const int32x4_t half = vdupq_n_s32(kHalf);
    auto widen = [](int16x8_t v, int32x4_t out[2]) {
        out[0] = vmovl_s16(vget_low_s16(v));
        out[1] = vmovl_high_s16(v);
    };
    // Four 32-bit sums of 4 pixels each → 16 clamped bytes.
    auto narrow = [](const int32x4_t v[4]) {
        const int16x8_t lo = vcombine_s16(vqmovn_s32(vshrq_n_s32(v[0], kShift)), vqmovn_s32(vshrq_n_s32(v[1], kShift)));
        const int16x8_t hi = vcombine_s16(vqmovn_s32(vshrq_n_s32(v[2], kShift)), vqmovn_s32(vshrq_n_s32(v[3], kShift)));
        return vcombine_u8(vqmovun_s16(lo), vqmovun_s16(hi));
    };
    uint32_t x = 0;
    for (; x + 16 <= w; x += 16) {
        uint8x8_t u8, v8;
        if (c_step == 2) {  // NV12/NV21: 8 interleaved pairs, U first when its pointer is
            const uint8x8x2_t uv = vld2_u8(std::min(us, vs) + x);
            u8 = us < vs ? uv.val[0] : uv.val[1];
            v8 = us < vs ? uv.val[1] : uv.val[0];
        } else {
            u8 = vld1_u8(us + x / 2);
            v8 = vld1_u8(vs + x / 2);
        }
        int32x4_t u[2], v[2];
        widen(vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(u8)), bias), u);
        widen(vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(v8)), bias), v);
        // Chroma terms of the 8 samples, each then doubled up for its two pixels.
        int32x4_t rc[4], gc[4], bc[4];
        for (int k = 0; k < 2; ++k) {
            const int32x4_t r = vmulq_n_s32(v[k], m.r_v);
            const int32x4_t g = vmlaq_n_s32(vmulq_n_s32(u[k], m.g_u), v[k], m.g_v);
            const int32x4_t b = vmulq_n_s32(u[k], m.b_u);
            rc[2 * k] = vzip1q_s32(r, r);
            rc[2 * k + 1] = vzip2q_s32(r, r);
            gc[2 * k] = vzip1q_s32(g, g);
            gc[2 * k + 1] = vzip2q_s32(g, g);
            bc[2 * k] = vzip1q_s32(b, b);
            bc[2 * k + 1] = vzip2q_s32(b, b);
        }
        const uint8x16_t yb = vld1q_u8(ys + x);
        int32x4_t yy[4];
        widen(vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(yb))), y0), yy);
        widen(vsubq_s16(vreinterpretq_s16_u16(vmovl_high_u8(yb)), y0), yy + 2);
        int32x4_t r[4], g[4], b[4];
        for (int k = 0; k < 4; ++k) {
            yy[k] = vmlaq_n_s32(half, yy[k], m.cy);
            r[k] = vaddq_s32(yy[k], rc[k]);
            g[k] = vaddq_s32(yy[k], gc[k]);
            b[k] = vaddq_s32(yy[k], bc[k]);
        }
        const uint8x16_t rr = narrow(r), gg = narrow(g), bb = narrow(b);
        const uint8x16x3_t px = {{bgr ? bb : rr, gg, bgr ? rr : bb}};
        vst3q_u8(d + 3 * size_t(x), px);
    }
    return x;
}
#endif

void yuv420_to_rgb(const kes_image& in, const kes_image& out, int64_t matrix, const Kernels& k) {
    kes_image_plane out0;
    check_sdk(kes_image_get_plane(&out, 0, &out0), "output plane");
    yuv_to_rgb(yuv420_planes(in), make_matrix(matrix), out0.data, out0.stride,
               enum_value(out.format) == KES_PIXEL_BGR888, out.width, out.height, k);
}

}  // namespace vpc
}  // namespace kes

extern "C" kes_status kes_vpc_convert_color(kes_dvpp_channel* channel, const kes_image* in, kes_pixel_format out_format,
                                            kes_vpc_csc_matrix matrix, kes_mem_pool* pool, kes_image* out_image) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vpc_convert_color");
        KES_REQUIRE_NOT_NULL(out_image);
        std::memset(out_image, 0, sizeof *out_image);
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(in);
        kes::check_sdk(kes_image_validate(in), "input image");
        kes::require_cpu_access(*in, "the input image");
        ++channel->cpu_calls;  // acldvppVpcConvertColorAsync is not wired: the CPU serves every conversion
        const kes_board_profile& b = channel->profile;
        const int64_t of = kes::enum_value(kes::format_arg(out_format, "out_format"));
        const int64_t inf = kes::enum_value(in->format);
        const int64_t mx = kes::enum_value(matrix);
        KES_REQUIRE(mx >= KES_VPC_CSC_BT601_WIDE && mx <= KES_VPC_CSC_BT709_NARROW,
                    "matrix must be a kes_vpc_csc_matrix (BT.601/BT.709, wide or narrow; got %lld)",
                    static_cast<long long>(mx));
        const bool supported =
            (kes::vpc::is_yuv420(inf) && (kes::vpc::is_rgb(of) || kes::vpc::is_yuv420(of) || of == KES_PIXEL_YUV400)) ||
            (kes::vpc::is_rgb(inf) && (kes::vpc::is_yuv420(of) || of == KES_PIXEL_YUV400));
        if (!supported)
            KES_FAIL(KES_ERR_UNSUPPORTED,
                     "conversion %s -> %s is not supported (NV12/NV21/I420 <-> RGB888/BGR888, between NV12/NV21/I420, "
                     "and to YUV400)",
                     kes_pixel_format_name(in->format), kes_pixel_format_name(out_format));
        if (b.vpc_output_420sp_only)
            KES_REQUIRE(of == KES_PIXEL_NV12 || of == KES_PIXEL_NV21,
                        "VPC output on the %s profile is NV12 or NV21 only (got %s; docs/BOARD-RULES.md §VPC)", b.name,
                        kes_pixel_format_name(out_format));
        if (b.vpc_csc_bt601_wide_only)
            KES_REQUIRE(
                mx == KES_VPC_CSC_BT601_WIDE,
                "the %s profile has no colour-matrix setting (acldvppCscMatrix, docs/BOARD-RULES.md §Formats): only "
                "KES_VPC_CSC_BT601_WIDE",
                b.name);
        // BOARD-RULES §VPC: VPC silently rounds odd input sizes down to even.
        const uint32_t w = in->width & ~1u, h = in->height & ~1u;
        kes::vpc::check_input_size(b, in->format, w, h);
        kes::vpc::check_output_size(b, w, h);

        const kes_pixel_format out_fmt = static_cast<kes_pixel_format>(of);
        uint32_t ws = 0, hs = 0;
        kes::check_sdk(kes_image_strides(out_fmt, w, h, KES_STRIDE_VPC, b.board, &ws, &hs), "VPC output strides");
        kes::check_sdk(kes_image_alloc(out_image, kes::output_pool(channel, pool), out_fmt, w, h, ws, hs),
                       "VPC output allocation");
        kes::ImageGuard guard(out_image);
        const kes::vpc::Matrix m = kes::vpc::make_matrix(mx);
        kes_image_plane out0;
        kes::check_sdk(kes_image_get_plane(out_image, 0, &out0), "output plane");
        if (kes::vpc::is_yuv420(inf)) {
            const kes::vpc::Yuv420 s = kes::vpc::yuv420_planes(*in);
            if (kes::vpc::is_rgb(of)) {
                kes::vpc::yuv420_to_rgb(*in, *out_image, mx);
            } else if (of == KES_PIXEL_YUV400) {
                for (uint32_t y = 0; y < h; ++y)
                    std::memcpy(out0.data + size_t(y) * out0.stride, s.y + size_t(y) * s.y_stride, w);
            } else {
                kes::vpc::copy_yuv420(s, kes::vpc::yuv420_planes(*out_image), w, h);
            }
        } else {
            kes_image_plane in0;
            kes::check_sdk(kes_image_get_plane(in, 0, &in0), "input plane");
            const bool bgr = inf == KES_PIXEL_BGR888;
            if (of == KES_PIXEL_YUV400) {
                kes::vpc::rgb_to_yuv(in0.data, in0.stride, bgr, m, nullptr, out0.data, out0.stride, w, h);
            } else {
                const kes::vpc::Yuv420 d = kes::vpc::yuv420_planes(*out_image);
                kes::vpc::rgb_to_yuv(in0.data, in0.stride, bgr, m, &d, nullptr, 0, w, h);
            }
        }
        guard.disarm();
        return KES_OK;
    });
}
