// kestrel/warp.h: the affine warp against a double-precision oracle written here straight from the
// header's definition (sample point, taps, borders, chroma siting), on every format, both borders, odd
// sizes and padded strides; exact pixel permutations for crops and quarter turns; the rectangle matrix
// against hand-computed corners; and the refusals.
#include "kestrel/warp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "dvpp_test_util.hpp"
#include "kes/struct_size.hpp"
#include "struct_size_check.hpp"

using kes_test::Channel;
using kes_test::Image;

namespace {

// This thread's CPU time in ms: the machine may be shared, so wall time would measure the neighbours.
double cpu_ms() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

constexpr double kPi = 3.14159265358979323846;

// A host image with padded strides (2 extra rows per plane, 6 extra bytes per row) and a pattern that
// has both gradients (so bilinear weights matter) and texture (so a wrong tap shows).
struct Source {
    Source(kes_pixel_format f, uint32_t w, uint32_t h) : format(f) {
        const uint32_t bpp = (f == KES_PIXEL_RGB888 || f == KES_PIXEL_BGR888) ? 3 : 1;
        const uint32_t ws = ((w + 1) & ~1u) * bpp + 6, hs = ((h + 1) & ~1u) + 2;
        size_t size = 0;
        EXPECT_EQ(kes_image_buffer_size(f, ws, hs, &size), KES_OK) << kes_last_error();
        bytes.resize(size);
        for (size_t i = 0; i < size; ++i) bytes[i] = uint8_t((i * 2654435761u >> 13) ^ (i * 7 / 5));
        EXPECT_EQ(kes_image_wrap(&img, f, w, h, ws, hs, bytes.data(), size), KES_OK) << kes_last_error();
        kes_image_plane p;
        EXPECT_EQ(kes_image_get_plane(&img, 0, &p), KES_OK);
        for (uint32_t y = 0; y < p.rows; ++y)
            for (uint32_t x = 0; x < p.row_bytes; ++x)
                p.data[size_t(y) * p.stride + x] = uint8_t(x * 3 + y * 2 + ((x * y) % 17) * 5);
        if (kes_pixel_format_planes(f) > 1) {
            EXPECT_EQ(kes_image_get_plane(&img, 1, &p), KES_OK);
            for (uint32_t y = 0; y < p.rows; ++y)
                for (uint32_t x = 0; x < p.row_bytes; ++x)
                    p.data[size_t(y) * p.stride + x] = uint8_t(200 - x * 5 + y * 7 + (x & 1) * 60);
        }
    }
    kes_pixel_format format;
    std::vector<uint8_t> bytes;
    kes_image img{};
};

uint8_t at(const kes_image& img, uint32_t plane, uint32_t x_byte, uint32_t y) {
    kes_image_plane p;
    EXPECT_EQ(kes_image_get_plane(&img, plane, &p), KES_OK);
    return p.data[size_t(y) * p.stride + x_byte];
}

// The header's definition in double precision: the value (before rounding) of channel c of output sample
// (u, v) of plane `plane` (luma/RGB: pixel (u, v); 4:2:0 chroma: the pair (u, v)).
double oracle(const kes_image& in, const kes_warp_matrix& m, const kes_warp_config& cfg, uint32_t plane, uint32_t cn,
              uint32_t c, uint32_t u, uint32_t v) {
    const double s = plane == 0 ? 1 : 2;  // luma pixels per sample
    const double ox = (u + 0.5) * s, oy = (v + 0.5) * s;
    const double px = double(m.m[0]) * ox + double(m.m[1]) * oy + m.m[2];
    const double py = double(m.m[3]) * ox + double(m.m[4]) * oy + m.m[5];
    const double sx = px / s - 0.5, sy = py / s - 0.5;  // sample coordinates, centres at integers
    kes_image_plane p;
    EXPECT_EQ(kes_image_get_plane(&in, plane, &p), KES_OK);
    const long w = long(p.row_bytes / cn), h = long(p.rows);
    const bool nv21 = in.format == KES_PIXEL_NV21, bgr = in.format == KES_PIXEL_BGR888;
    double fill;
    if (cn == 1)
        fill = cfg.fill_y;
    else if (cn == 2)
        fill = (c == 0) != nv21 ? cfg.fill_u : cfg.fill_v;
    else
        fill = c == 1 ? cfg.fill_g : ((c == 0) != bgr ? cfg.fill_r : cfg.fill_b);
    auto tap = [&](long x, long y) -> double {
        if (cfg.border == KES_WARP_BORDER_REPLICATE) {
            x = std::min(std::max(x, 0L), w - 1);
            y = std::min(std::max(y, 0L), h - 1);
        } else if (x < 0 || y < 0 || x >= w || y >= h) {
            return fill;
        }
        return p.data[size_t(y) * p.stride + size_t(x) * cn + c];
    };
    double cx = sx, cy = sy;
    if (cfg.border == KES_WARP_BORDER_REPLICATE) {  // a point beyond the edge takes the edge
        cx = std::min(std::max(cx, 0.0), double(w - 1));
        cy = std::min(std::max(cy, 0.0), double(h - 1));
    }
    const double fx = std::floor(cx), fy = std::floor(cy);
    const double ax = cx - fx, ay = cy - fy;
    const long x0 = long(fx), y0 = long(fy);
    return (tap(x0, y0) * (1 - ax) + tap(x0 + 1, y0) * ax) * (1 - ay) +
           (tap(x0, y0 + 1) * (1 - ax) + tap(x0 + 1, y0 + 1) * ax) * ay;
}

// Every visible sample of `out` against the oracle: within 1 everywhere, and equal to the rounded value
// wherever that is not within 0.01 of a rounding tie (single-precision weights may fall either side).
void expect_matches_oracle(const kes_image& in, const kes_warp_matrix& m, const kes_warp_config& cfg,
                           const kes_image& out) {
    const bool rgb = in.format == KES_PIXEL_RGB888 || in.format == KES_PIXEL_BGR888;
    size_t checked = 0, ties = 0;
    for (uint32_t plane = 0; plane < (rgb ? 1u : 2u); ++plane) {
        const uint32_t cn = rgb ? 3 : plane + 1;
        kes_image_plane p;
        ASSERT_EQ(kes_image_get_plane(&out, plane, &p), KES_OK);
        for (uint32_t v = 0; v < p.rows; ++v)
            for (uint32_t u = 0; u < p.row_bytes / cn; ++u)
                for (uint32_t c = 0; c < cn; ++c) {
                    const double want = oracle(in, m, cfg, plane, cn, c, u, v);
                    const int got = p.data[size_t(v) * p.stride + size_t(u) * cn + c];
                    const double frac = want - std::floor(want);
                    ++checked;
                    if (std::fabs(frac - 0.5) < 0.01) {
                        ++ties;
                        ASSERT_LE(std::fabs(got - want), 0.51) << "plane " << plane << " (" << u << ", " << v << ")";
                    } else {
                        ASSERT_EQ(got, int(std::lround(want))) << "plane " << plane << " sample (" << u << ", " << v
                                                               << ") channel " << c << ": oracle " << want;
                    }
                }
    }
    EXPECT_GT(checked, 100u);
    EXPECT_LT(ties * 20, checked) << "the oracle test should not be mostly rounding ties";
}

kes_warp_matrix rect_matrix(float cx, float cy, float w, float h, float rot, uint32_t ow, uint32_t oh) {
    kes_warp_matrix m{};
    EXPECT_EQ(kes_warp_matrix_from_rect(cx, cy, w, h, rot, ow, oh, &m), KES_OK) << kes_last_error();
    return m;
}

kes_warp_config config(kes_warp_border border) {
    kes_warp_config cfg;
    kes_warp_config_init(&cfg);
    cfg.border = border;
    cfg.fill_y = 17;
    cfg.fill_u = 90;
    cfg.fill_v = 200;
    cfg.fill_r = 1;
    cfg.fill_g = 2;
    cfg.fill_b = 250;
    return cfg;
}

TEST(Warp, MatchesTheDoublePrecisionOracle) {
    Channel ch;
    const kes_pixel_format formats[] = {KES_PIXEL_NV12, KES_PIXEL_NV21, KES_PIXEL_RGB888, KES_PIXEL_BGR888};
    struct Case {
        uint32_t in_w, in_h, out_w, out_h;
        float cx, cy, w, h, rot;
    };
    const Case cases[] = {
        {64, 48, 32, 32, 30.3f, 22.7f, 40.f, 40.f, 0.3f},     // rotated and shrunk, partly outside
        {101, 77, 33, 27, 50.f, 38.f, 70.f, 51.f, -2.4f},     // odd sizes in and out
        {40, 30, 48, 40, 20.f, 15.f, 30.f, 25.f, 1.0f},       // enlarged
        {50, 50, 20, 20, -30.f, 25.f, 40.f, 40.f, 0.7f},      // half off the left edge and beyond
        {64, 36, 24, 16, 32.f, 18.f, 120.f, 80.f, 3.14159f},  // upside down, borders all round
    };
    for (kes_pixel_format f : formats)
        for (const Case& c : cases)
            for (kes_warp_border border : {KES_WARP_BORDER_CONSTANT, KES_WARP_BORDER_REPLICATE}) {
                SCOPED_TRACE(testing::Message()
                             << kes_pixel_format_name(f) << " " << c.in_w << "x" << c.in_h << " -> " << c.out_w << "x"
                             << c.out_h << " rot " << c.rot << " border " << border);
                Source src(f, c.in_w, c.in_h);
                const kes_warp_matrix m = rect_matrix(c.cx, c.cy, c.w, c.h, c.rot, c.out_w, c.out_h);
                const kes_warp_config cfg = config(border);
                Image out;
                ASSERT_EQ(kes_warp_affine(ch.get(), &src.img, &m, c.out_w, c.out_h, &cfg, nullptr, &out), KES_OK)
                    << kes_last_error();
                ASSERT_EQ(out.format, f);
                ASSERT_EQ(out.width, c.out_w);
                ASSERT_EQ(out.height, c.out_h);
                expect_matches_oracle(src.img, m, cfg, out);
            }
}

TEST(Warp, IdentityAndIntegerTranslationsAreCrops) {
    Channel ch;
    for (kes_pixel_format f : {KES_PIXEL_NV12, KES_PIXEL_NV21, KES_PIXEL_BGR888}) {
        Source src(f, 90, 70);
        const bool rgb = f == KES_PIXEL_BGR888;
        // The identity over the whole image, then a crop at (12, 6) and (7, 5) (odd: luma still exact).
        for (int shift : {0, 1, 2}) {
            const uint32_t left = shift == 0 ? 0 : shift == 1 ? 12 : 7, top = shift == 0 ? 0 : shift == 1 ? 6 : 5;
            const uint32_t ow = shift == 0 ? 90 : 41, oh = shift == 0 ? 70 : 23;
            const kes_warp_matrix m{{1, 0, float(left), 0, 1, float(top)}};
            Image out;
            ASSERT_EQ(kes_warp_affine(ch.get(), &src.img, &m, ow, oh, nullptr, nullptr, &out), KES_OK)
                << kes_last_error();
            const uint32_t bpp = rgb ? 3 : 1;
            for (uint32_t y = 0; y < oh; ++y)
                for (uint32_t x = 0; x < ow * bpp; ++x)
                    ASSERT_EQ(at(out, 0, x, y), at(src.img, 0, left * bpp + x, top + y)) << x << "," << y;
            if (rgb || left % 2) continue;  // chroma is a copy only for even offsets
            for (uint32_t y = 0; y < (oh + 1) / 2; ++y)
                for (uint32_t x = 0; x < (ow + 1) / 2 * 2; ++x)
                    ASSERT_EQ(at(out, 1, x, y), at(src.img, 1, left + x, top / 2 + y)) << x << "," << y;
        }
    }
}

TEST(Warp, QuarterTurnIsAPixelPermutation) {
    // A 32×32 rectangle centred at (40, 24), turned 90° clockwise: output (i, j) is input pixel
    // (40 + 16 − 1 − j, 24 − 16 + i) (rect centre plus R(90°) of the output pixel's offset), and its
    // chroma pair likewise at half those (the centre and half-size are even, so every sample lands exactly).
    Channel ch;
    Source src(KES_PIXEL_NV12, 80, 60);
    const kes_warp_matrix m = rect_matrix(40, 24, 32, 32, float(kPi / 2), 32, 32);
    Image out;
    ASSERT_EQ(kes_warp_affine(ch.get(), &src.img, &m, 32, 32, nullptr, nullptr, &out), KES_OK) << kes_last_error();
    for (uint32_t j = 0; j < 32; ++j)
        for (uint32_t i = 0; i < 32; ++i) ASSERT_EQ(at(out, 0, i, j), at(src.img, 0, 55 - j, 8 + i)) << i << "," << j;
    for (uint32_t cj = 0; cj < 16; ++cj)
        for (uint32_t ci = 0; ci < 16; ++ci)
            for (uint32_t c = 0; c < 2; ++c)
                ASSERT_EQ(at(out, 1, 2 * ci + c, cj), at(src.img, 1, 2 * (27 - cj) + c, 4 + ci)) << ci << "," << cj;
    // Four quarter turns compose to the identity; -90° is the mirror permutation.
    const kes_warp_matrix back = rect_matrix(40, 24, 32, 32, float(-kPi / 2), 32, 32);
    Image out2;
    ASSERT_EQ(kes_warp_affine(ch.get(), &src.img, &back, 32, 32, nullptr, nullptr, &out2), KES_OK);
    for (uint32_t j = 0; j < 32; ++j)
        for (uint32_t i = 0; i < 32; ++i) ASSERT_EQ(at(out2, 0, i, j), at(src.img, 0, 24 + j, 39 - i)) << i << "," << j;
}

TEST(Warp, BordersFillOrReplicate) {
    Channel ch;
    Source src(KES_PIXEL_NV21, 40, 30);
    const kes_warp_matrix far_away{{1, 0, 500, 0, 1, -400}};  // every point outside the image
    kes_warp_config cfg = config(KES_WARP_BORDER_CONSTANT);
    Image out;
    ASSERT_EQ(kes_warp_affine(ch.get(), &src.img, &far_away, 16, 12, &cfg, nullptr, &out), KES_OK);
    for (uint32_t y = 0; y < 12; ++y)
        for (uint32_t x = 0; x < 16; ++x) ASSERT_EQ(at(out, 0, x, y), cfg.fill_y);
    for (uint32_t y = 0; y < 6; ++y)
        for (uint32_t x = 0; x < 8; ++x) {
            ASSERT_EQ(at(out, 1, 2 * x, y), cfg.fill_v) << "NV21 stores V first";
            ASSERT_EQ(at(out, 1, 2 * x + 1, y), cfg.fill_u);
        }
    // Replicate: far up and right reads the top-right pixel (and chroma pair).
    cfg.border = KES_WARP_BORDER_REPLICATE;
    Image rep;
    ASSERT_EQ(kes_warp_affine(ch.get(), &src.img, &far_away, 16, 12, &cfg, nullptr, &rep), KES_OK);
    for (uint32_t y = 0; y < 12; ++y)
        for (uint32_t x = 0; x < 16; ++x) ASSERT_EQ(at(rep, 0, x, y), at(src.img, 0, 39, 0));
    ASSERT_EQ(at(rep, 1, 0, 3), at(src.img, 1, 38, 0));
    ASSERT_EQ(at(rep, 1, 1, 3), at(src.img, 1, 39, 0));
    // The default config's fill is black.
    Image black;
    ASSERT_EQ(kes_warp_affine(ch.get(), &src.img, &far_away, 16, 12, nullptr, nullptr, &black), KES_OK);
    EXPECT_EQ(at(black, 0, 5, 5), 0);
    EXPECT_EQ(at(black, 1, 4, 2), 128);
    EXPECT_EQ(at(black, 1, 5, 2), 128);
}

TEST(Warp, OutputHasTheBoardsVpcStridesAndCountsAsCpuCall) {
    Channel ch(KES_BOARD_310);
    Source src(KES_PIXEL_NV12, 64, 48);
    const kes_warp_matrix m = rect_matrix(32, 24, 30, 20, 0.2f, 33, 21);
    Image out;
    ASSERT_EQ(kes_warp_affine(ch.get(), &src.img, &m, 33, 21, nullptr, nullptr, &out), KES_OK) << kes_last_error();
    uint32_t ws = 0, hs = 0;
    ASSERT_EQ(kes_image_strides(KES_PIXEL_NV12, 33, 21, KES_STRIDE_VPC, KES_BOARD_310, &ws, &hs), KES_OK);
    EXPECT_EQ(out.width_stride, ws);
    EXPECT_EQ(out.height_stride, hs);
    EXPECT_EQ(out.width_stride % 16, 0u);
    kes_dvpp_channel_stats stats{};
    stats.struct_size = sizeof stats;
    ASSERT_EQ(kes_dvpp_channel_get_stats(ch.get(), &stats), KES_OK);
    EXPECT_EQ(stats.cpu_calls, 1u);
    EXPECT_EQ(stats.hardware_calls, 0u);
}

TEST(Warp, RectMatrixMapsTheCornersAndInverts) {
    // Unrotated: the output's pixel grid scaled onto the rectangle 80..120 × 40..60.
    kes_warp_matrix m = rect_matrix(100, 50, 40, 20, 0, 80, 40);
    const float want[6] = {0.5f, 0, 80, 0, 0.5f, 40};
    for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(m.m[i], want[i]) << i;
    // Rotated by θ: output corner (0, 0) is centre + R(θ)·(−w/2, −h/2), (ow, 0) is centre + R(θ)·(w/2, −h/2).
    const double th = 0.6, c = std::cos(th), s = std::sin(th);
    m = rect_matrix(200, 120, 64, 48, float(th), 256, 256);
    struct Corner {
        float ox, oy;
        double dx, dy;
    } corners[] = {{0, 0, -32, -24}, {256, 0, 32, -24}, {256, 256, 32, 24}, {0, 256, -32, 24}, {128, 128, 0, 0}};
    for (const Corner& k : corners) {
        float x = 0, y = 0;
        ASSERT_EQ(kes_warp_matrix_apply(&m, k.ox, k.oy, &x, &y), KES_OK);
        EXPECT_NEAR(x, 200 + c * k.dx - s * k.dy, 1e-3) << k.ox << "," << k.oy;
        EXPECT_NEAR(y, 120 + s * k.dx + c * k.dy, 1e-3) << k.ox << "," << k.oy;
    }
    kes_warp_matrix inv;
    ASSERT_EQ(kes_warp_matrix_invert(&m, &inv), KES_OK) << kes_last_error();
    for (const Corner& k : corners) {
        float x = 0, y = 0, bx = 0, by = 0;
        ASSERT_EQ(kes_warp_matrix_apply(&m, k.ox, k.oy, &x, &y), KES_OK);
        ASSERT_EQ(kes_warp_matrix_apply(&inv, x, y, &bx, &by), KES_OK);
        EXPECT_NEAR(bx, k.ox, 1e-3);
        EXPECT_NEAR(by, k.oy, 1e-3);
    }
}

TEST(Warp, BadInputIsRefusedByName) {
    Channel ch(KES_BOARD_310);
    Source src(KES_PIXEL_NV12, 64, 48);
    const kes_warp_matrix ok{{1, 0, 0, 0, 1, 0}};
    Image out;
    auto refused = [&](kes_status want, const kes_image* in, const kes_warp_matrix* m, uint32_t w, uint32_t h,
                       const kes_warp_config* cfg, const char* words) {
        const kes_status st = kes_warp_affine(ch.get(), in, m, w, h, cfg, nullptr, &out);
        EXPECT_EQ(st, want) << words;
        EXPECT_NE(std::strstr(kes_last_error(), words), nullptr) << kes_last_error();
        EXPECT_EQ(out.data, nullptr);
    };
    kes_warp_matrix nan = ok;
    nan.m[2] = NAN;
    refused(KES_ERR_INVALID_ARGUMENT, &src.img, &nan, 32, 32, nullptr, "m[2]");
    const kes_warp_matrix line{{1, 2, 0, 2, 4, 0}};
    refused(KES_ERR_INVALID_ARGUMENT, &src.img, &line, 32, 32, nullptr, "singular");
    refused(KES_ERR_INVALID_ARGUMENT, &src.img, &ok, 8, 4, nullptr, "VPC output 8x4");
    refused(KES_ERR_INVALID_ARGUMENT, &src.img, &ok, 0, 32, nullptr, "VPC output 0x32");
    refused(KES_ERR_INVALID_ARGUMENT, &src.img, nullptr, 32, 32, nullptr, "matrix");
    refused(KES_ERR_INVALID_ARGUMENT, nullptr, &ok, 32, 32, nullptr, "in");
    kes_warp_config cfg;
    kes_warp_config_init(&cfg);
    int bad_border = 7;
    std::memcpy(&cfg.border, &bad_border, sizeof bad_border);
    refused(KES_ERR_INVALID_ARGUMENT, &src.img, &ok, 32, 32, &cfg, "border");
    kes_warp_config_init(&cfg);
    cfg.struct_size = 3;
    refused(KES_ERR_INVALID_ARGUMENT, &src.img, &ok, 32, 32, &cfg, "struct_size");
    Source grey(KES_PIXEL_YUV400, 64, 48);
    refused(KES_ERR_UNSUPPORTED, &grey.img, &ok, 32, 32, nullptr, "YUV400");
    Source tiny(KES_PIXEL_NV12, 8, 4);
    refused(KES_ERR_INVALID_ARGUMENT, &tiny.img, &ok, 32, 32, nullptr, "VPC input 8x4");
    EXPECT_EQ(kes_warp_affine(ch.get(), &src.img, &ok, 32, 32, nullptr, nullptr, nullptr), KES_ERR_INVALID_ARGUMENT);

    kes_warp_matrix m;
    EXPECT_EQ(kes_warp_matrix_from_rect(0, 0, 0, 10, 0, 32, 32, &m), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "size"), nullptr);
    EXPECT_EQ(kes_warp_matrix_from_rect(0, 0, 10, 10, INFINITY, 32, 32, &m), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_warp_matrix_from_rect(0, 0, 10, 10, 0, 0, 32, &m), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_warp_matrix_invert(&line, &m), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "singular"), nullptr);
    EXPECT_EQ(kes_warp_matrix_invert(&nan, &m), KES_ERR_INVALID_ARGUMENT);
    const kes_warp_matrix tiny_scale{{1e-7f, 0, 0, 0, 1e-7f, 0}};  // det 1e-14
    EXPECT_EQ(kes_warp_matrix_invert(&tiny_scale, &m), KES_ERR_INVALID_ARGUMENT);
    // Results beyond float's range are refused, not converted (that would be undefined behaviour).
    EXPECT_EQ(kes_warp_matrix_from_rect(3e38f, 0, 3e38f, 10, float(kPi), 1, 1, &m), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "does not fit in a float"), nullptr) << kes_last_error();
    const kes_warp_matrix far_shift{{1e-5f, 0, 3e38f, 0, 1e-5f, 0}};
    EXPECT_EQ(kes_warp_matrix_invert(&far_shift, &m), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "does not fit in a float"), nullptr) << kes_last_error();
    const kes_warp_matrix huge{{3e38f, 0, 0, 0, 1, 0}};
    float x = 0, y = 0;
    EXPECT_EQ(kes_warp_matrix_apply(&huge, 10, 0, &x, &y), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "beyond float's range"), nullptr) << kes_last_error();
}

TEST(Warp, ConfigGrowsWithoutBreakingApps) {
    Channel ch;
    Source src(KES_PIXEL_NV12, 64, 48);
    kes_warp_config cfg;
    kes_warp_config_init(&cfg);
    kes_test::expect_struct_growth(cfg, KES_STRUCT_SIZE_THROUGH(kes_warp_config, fill_b), [&](kes_warp_config* c) {
        const kes_warp_matrix m{{1, 0, 0, 0, 1, 0}};
        Image out;
        return kes_warp_affine(ch.get(), &src.img, &m, 16, 16, c, nullptr, &out);
    });
}

// Not a pass/fail check: the time a pose pipeline spends per frame (printed for the record).
TEST(Warp, TimesA256CropOfA1080pFrame) {
    Channel ch;
    Source src(KES_PIXEL_NV12, 1920, 1080);
    const kes_warp_matrix m = rect_matrix(960, 540, 700, 700, 0.4f, 256, 256);
    double best = 1e9;
    for (int i = 0; i < 20; ++i) {
        Image out;
        const double t0 = cpu_ms();
        ASSERT_EQ(kes_warp_affine(ch.get(), &src.img, &m, 256, 256, nullptr, nullptr, &out), KES_OK);
        best = std::min(best, cpu_ms() - t0);
    }
    RecordProperty("warp_256_ms", std::to_string(best));
    std::printf("kes_warp_affine 1920x1080 NV12 -> 256x256 rotated: %.3f ms CPU time (best of 20)\n", best);
}

}  // namespace
