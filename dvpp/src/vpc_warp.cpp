// kestrel/warp.h: affine warps of NV12/NV21/RGB888/BGR888 images on the CPU (the rotated crop of
// MediaPipe's landmark pipelines) and the matrices that describe them. Plain C++: the reference, and so
// far the only implementation (a 256×256 crop is a small fraction of a landmark model's run).
#include "kestrel/warp.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "vpc_internal.hpp"

namespace kes {
namespace vpc {
namespace {

// Below this |determinant| a matrix folds the output onto (nearly) a line: nothing sensible to sample.
constexpr double kMinDeterminant = 1e-12;

double determinant(const kes_warp_matrix& m) {
    return double(m.m[0]) * m.m[4] - double(m.m[1]) * m.m[3];
}

void check_matrix(const kes_warp_matrix& m, const char* what) {
    for (int i = 0; i < 6; ++i)
        KES_REQUIRE(std::isfinite(m.m[i]), "%s m[%d] is %g: every entry must be finite", what, i, double(m.m[i]));
    const double det = determinant(m);
    KES_REQUIRE(std::fabs(det) >= kMinDeterminant,
                "%s is singular (determinant m[0]*m[4] - m[1]*m[3] = %g): it maps the output onto a line", what, det);
}

// Six doubles as a kes_warp_matrix, refusing an entry beyond float's range (converting it would be
// undefined behaviour, and no image needs it).
kes_warp_matrix to_matrix(const double (&v)[6], const char* what) {
    kes_warp_matrix m;
    for (int i = 0; i < 6; ++i) {
        KES_REQUIRE(std::fabs(v[i]) <= double(std::numeric_limits<float>::max()),
                    "%s m[%d] = %g does not fit in a float", what, i, v[i]);
        m.m[i] = float(v[i]);
    }
    return m;
}

// The output → input map of one plane in sample indices. A plane sampled every `s` luma pixels (1 for
// luma and packed RGB, 2 for 4:2:0 chroma) has its sample (u, v) centred at luma point ((u + ½)·s, (v + ½)·s),
// and an input point p is sample p / s − ½ of the input plane: the linear part is the matrix's own,
// only the offset changes.
struct IndexMap {
    double a, b, c, d, e, f;
};

IndexMap plane_map(const kes_warp_matrix& m, double s) {
    const double m0 = m.m[0], m1 = m.m[1], m3 = m.m[3], m4 = m.m[4];
    return {m0, m1, 0.5 * (m0 + m1) + m.m[2] / s - 0.5, m3, m4, 0.5 * (m3 + m4) + m.m[5] / s - 0.5};
}

// The two taps along one axis of n samples around sample position x, and the weight of the second.
struct Taps {
    int32_t i0, i1;
    bool in0, in1;
    float w1;
};

Taps axis_taps(double x, uint32_t n, kes_warp_border border) {
    const double last = double(n) - 1;
    Taps t;
    if (border == KES_WARP_BORDER_REPLICATE) {
        x = std::min(std::max(x, 0.0), last);
        t.i0 = int32_t(x);  // x ≥ 0: truncation is floor
        t.i1 = std::min<int32_t>(t.i0 + 1, int32_t(n) - 1);
        t.in0 = t.in1 = true;
    } else {
        // Beyond one sample outside, both taps read the fill; clamping keeps the integers small.
        x = std::min(std::max(x, -1.0), double(n));
        t.i0 = int32_t(std::floor(x));
        t.i1 = t.i0 + 1;
        t.in0 = t.i0 >= 0 && t.i0 < int32_t(n);
        t.in1 = t.i1 >= 0 && t.i1 < int32_t(n);
    }
    t.w1 = float(x - std::floor(x));
    return t;
}

struct SrcPlane {
    const uint8_t* data;
    size_t stride;
    uint32_t w, h;  // samples (pairs for chroma)
};

// Warps one plane of cn interleaved channels into dw × dh samples at dst.
void warp_plane(const SrcPlane& src, uint32_t cn, const IndexMap& map, kes_warp_border border, const uint8_t* fill,
                uint8_t* dst, size_t dst_stride, uint32_t dw, uint32_t dh) {
    for (uint32_t v = 0; v < dh; ++v) {
        uint8_t* out = dst + size_t(v) * dst_stride;
        const double row_x = map.b * v + map.c, row_y = map.e * v + map.f;
        for (uint32_t u = 0; u < dw; ++u) {
            const Taps tx = axis_taps(map.a * u + row_x, src.w, border);
            const Taps ty = axis_taps(map.d * u + row_y, src.h, border);
            const uint8_t* r0 = src.data + size_t(std::max(ty.i0, 0)) * src.stride;
            const uint8_t* r1 = src.data + size_t(std::max(ty.i1, 0)) * src.stride;
            const size_t o0 = size_t(std::max(tx.i0, 0)) * cn, o1 = size_t(std::max(tx.i1, 0)) * cn;
            for (uint32_t c = 0; c < cn; ++c) {
                const float p00 = ty.in0 && tx.in0 ? r0[o0 + c] : fill[c];
                const float p01 = ty.in0 && tx.in1 ? r0[o1 + c] : fill[c];
                const float p10 = ty.in1 && tx.in0 ? r1[o0 + c] : fill[c];
                const float p11 = ty.in1 && tx.in1 ? r1[o1 + c] : fill[c];
                const float top = p00 + (p01 - p00) * tx.w1, bottom = p10 + (p11 - p10) * tx.w1;
                const float value = top + (bottom - top) * ty.w1;
                out[size_t(u) * cn + c] = uint8_t(std::min(value + 0.5f, 255.0f));
            }
        }
    }
}

SrcPlane src_plane(const kes_image& img, uint32_t index, uint32_t cn) {
    kes_image_plane p;
    check_sdk(kes_image_get_plane(&img, index, &p), index == 0 ? "input plane 0" : "input chroma");
    return {p.data, p.stride, p.row_bytes / cn, p.rows};
}

void warp_image(const kes_image& in, const kes_warp_matrix& m, const kes_warp_config& cfg, const kes_image& out) {
    const int64_t f = enum_value(in.format);
    const kes_warp_border border = cfg.border;
    kes_image_plane o0;
    check_sdk(kes_image_get_plane(&out, 0, &o0), "output plane 0");
    if (f == KES_PIXEL_RGB888 || f == KES_PIXEL_BGR888) {
        const uint8_t rgb[3] = {cfg.fill_r, cfg.fill_g, cfg.fill_b}, bgr[3] = {cfg.fill_b, cfg.fill_g, cfg.fill_r};
        warp_plane(src_plane(in, 0, 3), 3, plane_map(m, 1), border, f == KES_PIXEL_RGB888 ? rgb : bgr, o0.data,
                   o0.stride, out.width, out.height);
        return;
    }
    const uint8_t luma_fill = cfg.fill_y;
    warp_plane(src_plane(in, 0, 1), 1, plane_map(m, 1), border, &luma_fill, o0.data, o0.stride, out.width, out.height);
    kes_image_plane o1;
    check_sdk(kes_image_get_plane(&out, 1, &o1), "output chroma");
    const uint8_t uv[2] = {cfg.fill_u, cfg.fill_v}, vu[2] = {cfg.fill_v, cfg.fill_u};
    warp_plane(src_plane(in, 1, 2), 2, plane_map(m, 2), border, f == KES_PIXEL_NV21 ? vu : uv, o1.data, o1.stride,
               o1.row_bytes / 2, o1.rows);
}

}  // namespace
}  // namespace vpc
}  // namespace kes

extern "C" {

kes_status kes_warp_matrix_from_rect(float center_x, float center_y, float width, float height, float rotation,
                                     uint32_t out_width, uint32_t out_height, kes_warp_matrix* out_matrix) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_matrix);
        KES_REQUIRE(std::isfinite(center_x) && std::isfinite(center_y) && std::isfinite(rotation),
                    "the rectangle's centre (%g, %g) and rotation %g must be finite", double(center_x),
                    double(center_y), double(rotation));
        KES_REQUIRE(std::isfinite(width) && std::isfinite(height) && width > 0 && height > 0,
                    "the rectangle's size %g x %g must be finite and positive", double(width), double(height));
        KES_REQUIRE(out_width > 0 && out_height > 0, "the output size %ux%u must not be 0", out_width, out_height);
        const double c = std::cos(double(rotation)), s = std::sin(double(rotation));
        // Per output pixel the rectangle advances width/out_width along its rotated x axis.
        const double sx = double(width) / out_width, sy = double(height) / out_height;
        const double a = c * sx, b = -s * sy, d = s * sx, e = c * sy;
        // The output's centre (out_width/2, out_height/2) lands on the rectangle's centre.
        const double hx = 0.5 * out_width, hy = 0.5 * out_height;
        const double v[6] = {a, b, center_x - a * hx - b * hy, d, e, center_y - d * hx - e * hy};
        *out_matrix = kes::vpc::to_matrix(v, "the rectangle's matrix");
        return KES_OK;
    });
}

kes_status kes_warp_matrix_invert(const kes_warp_matrix* matrix, kes_warp_matrix* out_inverse) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(matrix);
        KES_REQUIRE_NOT_NULL(out_inverse);
        kes::vpc::check_matrix(*matrix, "matrix");
        const float* m = matrix->m;
        const double det = kes::vpc::determinant(*matrix);
        const double a = m[4] / det, b = -m[1] / det, d = -m[3] / det, e = m[0] / det;
        const double v[6] = {a, b, -(a * m[2] + b * m[5]), d, e, -(d * m[2] + e * m[5])};
        *out_inverse = kes::vpc::to_matrix(v, "matrix is too close to singular: its inverse's");
        return KES_OK;
    });
}

kes_status kes_warp_matrix_apply(const kes_warp_matrix* matrix, float x, float y, float* out_x, float* out_y) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(matrix);
        KES_REQUIRE_NOT_NULL(out_x);
        KES_REQUIRE_NOT_NULL(out_y);
        const float* m = matrix->m;
        const double px = double(m[0]) * x + double(m[1]) * y + m[2], py = double(m[3]) * x + double(m[4]) * y + m[5];
        const double limit = std::numeric_limits<float>::max();
        KES_REQUIRE(std::fabs(px) <= limit && std::fabs(py) <= limit,
                    "(%g, %g) maps to (%g, %g), beyond float's range (or not a number)", double(x), double(y), px, py);
        *out_x = float(px);
        *out_y = float(py);
        return KES_OK;
    });
}

void kes_warp_config_init(kes_warp_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->border = KES_WARP_BORDER_CONSTANT;
    config->fill_u = config->fill_v = 128;
}

kes_status kes_warp_affine(kes_dvpp_channel* channel, const kes_image* in, const kes_warp_matrix* matrix,
                           uint32_t out_width, uint32_t out_height, const kes_warp_config* config, kes_mem_pool* pool,
                           kes_image* out_image) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "warp_affine");
        KES_REQUIRE_NOT_NULL(out_image);
        std::memset(out_image, 0, sizeof *out_image);
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(in);
        KES_REQUIRE_NOT_NULL(matrix);
        kes_warp_config cfg;
        kes_warp_config_init(&cfg);
        if (config)
            kes::read_struct(config, KES_STRUCT_SIZE_THROUGH(kes_warp_config, fill_b), "config", "kes_warp_config",
                             &cfg);
        const int64_t border = kes::enum_value(cfg.border);
        KES_REQUIRE(border == KES_WARP_BORDER_CONSTANT || border == KES_WARP_BORDER_REPLICATE,
                    "config->border must be KES_WARP_BORDER_CONSTANT or _REPLICATE (got %lld)",
                    static_cast<long long>(border));
        kes::vpc::check_matrix(*matrix, "matrix");
        kes::check_sdk(kes_image_validate(in), "input");
        const int64_t f = kes::enum_value(in->format);
        if (f != KES_PIXEL_NV12 && f != KES_PIXEL_NV21 && f != KES_PIXEL_RGB888 && f != KES_PIXEL_BGR888)
            KES_FAIL(KES_ERR_UNSUPPORTED, "input is %s; the warp takes NV12, NV21, RGB888 or BGR888",
                     kes_pixel_format_name(in->format));
        const kes_board_profile& b = channel->profile;
        kes::vpc::check_input_size(b, in->format, in->width, in->height);
        kes::vpc::check_output_size(b, out_width, out_height);
        ++channel->cpu_calls;  // the VPC has no affine warp: always the CPU, never a fallback
        kes::require_cpu_access(*in, "the input image");
        uint32_t ws = 0, hs = 0;
        kes::check_sdk(kes_image_strides(in->format, out_width, out_height, KES_STRIDE_VPC, b.board, &ws, &hs),
                       "VPC output strides");
        kes::check_sdk(
            kes_image_alloc(out_image, kes::output_pool(channel, pool), in->format, out_width, out_height, ws, hs),
            "warp output allocation");
        kes::ImageGuard guard(out_image);
        kes::vpc::warp_image(*in, *matrix, cfg, *out_image);
        guard.disarm();
        return KES_OK;
    });
}

}  // extern "C"
