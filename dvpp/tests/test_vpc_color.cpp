// VPC colour conversion against the formulas (BT.601/BT.709, wide/narrow), layouts and board rules.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "dvpp_test_util.hpp"

using namespace kes_test;

namespace {

struct Coefs {
    double kr, kb, ys, cs, y0;
};
Coefs coefs(kes_vpc_csc_matrix m) {
    const bool bt709 = m == KES_VPC_CSC_BT709_WIDE || m == KES_VPC_CSC_BT709_NARROW;
    const bool narrow = m == KES_VPC_CSC_BT601_NARROW || m == KES_VPC_CSC_BT709_NARROW;
    return {bt709 ? 0.2126 : 0.299, bt709 ? 0.0722 : 0.114, narrow ? 219.0 / 255 : 1.0, narrow ? 224.0 / 255 : 1.0,
            narrow ? 16.0 : 0.0};
}

int clamp_round(double v) {
    return std::clamp(int(std::floor(v + 0.5)), 0, 255);
}

// The formula in doubles: YUV → RGB.
void formula_rgb(kes_vpc_csc_matrix m, int y, int u, int v, int rgb[3]) {
    const Coefs c = coefs(m);
    const double yy = (y - c.y0) / c.ys, uu = (u - 128) / c.cs, vv = (v - 128) / c.cs;
    const double r = yy + 2 * (1 - c.kr) * vv, b = yy + 2 * (1 - c.kb) * uu;
    const double g = (yy - c.kr * r - c.kb * b) / (1 - c.kr - c.kb);
    rgb[0] = clamp_round(r);
    rgb[1] = clamp_round(g);
    rgb[2] = clamp_round(b);
}

void formula_yuv(kes_vpc_csc_matrix m, int r, int g, int b, int yuv[3]) {
    const Coefs c = coefs(m);
    const double y = c.kr * r + (1 - c.kr - c.kb) * g + c.kb * b;
    yuv[0] = clamp_round(y * c.ys + c.y0);
    yuv[1] = clamp_round((b - y) / (2 * (1 - c.kb)) * c.cs + 128);
    yuv[2] = clamp_round((r - y) / (2 * (1 - c.kr)) * c.cs + 128);
}

void random_fill(Image* img, uint32_t seed) {
    std::mt19937 rng(seed);
    for (uint32_t p = 0; p < kes_pixel_format_planes(img->format); ++p) {
        kes_image_plane pl;
        ASSERT_EQ(kes_image_get_plane(img, p, &pl), KES_OK);
        for (uint32_t r = 0; r < pl.rows; ++r)
            for (uint32_t x = 0; x < pl.row_bytes; ++x) pl.data[r * pl.stride + x] = uint8_t(rng());
    }
}

const kes_vpc_csc_matrix kMatrices[] = {KES_VPC_CSC_BT601_WIDE, KES_VPC_CSC_BT601_NARROW, KES_VPC_CSC_BT709_WIDE,
                                        KES_VPC_CSC_BT709_NARROW};

}  // namespace

TEST(VpcColor, Nv12ToRgbWithinOneOfTheFormulaForEveryMatrix) {
    Image in;
    ASSERT_EQ(kes_image_alloc(&in, nullptr, KES_PIXEL_NV21, 64, 32, 0, 0), KES_OK);
    random_fill(&in, 3);
    Channel ch(KES_BOARD_310B);
    for (kes_vpc_csc_matrix m : kMatrices)
        for (kes_pixel_format f : {KES_PIXEL_RGB888, KES_PIXEL_BGR888}) {
            Image out;
            ASSERT_EQ(kes_vpc_convert_color(ch.get(), &in, f, m, nullptr, &out), KES_OK) << kes_last_error();
            int exact = 0, total = 0;
            for (uint32_t y = 0; y < 32; ++y)
                for (uint32_t x = 0; x < 64; ++x) {
                    const uint8_t* c = in.row(1, y / 2) + (x / 2) * 2;
                    int want[3];
                    formula_rgb(m, in.row(0, y)[x], c[1], c[0], want);  // NV21: V first
                    const uint8_t* got = out.row(0, y) + 3 * x;
                    for (int k = 0; k < 3; ++k) {
                        const int g = got[f == KES_PIXEL_BGR888 ? 2 - k : k];
                        ASSERT_LE(std::abs(g - want[k]), 1) << m << " " << x << "," << y << " ch " << k;
                        exact += g == want[k];
                        ++total;
                    }
                }
            EXPECT_GT(exact, total * 95 / 100) << "matrix " << m;  // off-by-one only at rounding ties
        }
}

TEST(VpcColor, RgbToNv12WithinOneOfTheFormulaAndChromaFromTheBlockMean) {
    Image in;
    ASSERT_EQ(kes_image_alloc(&in, nullptr, KES_PIXEL_RGB888, 48, 30, 0, 0), KES_OK);
    random_fill(&in, 9);
    Channel ch(KES_BOARD_310B);
    for (kes_vpc_csc_matrix m : kMatrices)
        for (kes_pixel_format f : {KES_PIXEL_NV12, KES_PIXEL_NV21, KES_PIXEL_I420}) {
            Image out;
            ASSERT_EQ(kes_vpc_convert_color(ch.get(), &in, f, m, nullptr, &out), KES_OK) << kes_last_error();
            for (uint32_t y = 0; y < 30; ++y)
                for (uint32_t x = 0; x < 48; ++x) {
                    const uint8_t* p = in.row(0, y) + 3 * x;
                    int want[3];
                    formula_yuv(m, p[0], p[1], p[2], want);
                    ASSERT_LE(std::abs(out.row(0, y)[x] - want[0]), 1) << m << " " << x << "," << y;
                }
            for (uint32_t cy = 0; cy < 15; ++cy)
                for (uint32_t cx = 0; cx < 24; ++cx) {
                    int mean[3];
                    for (int k = 0; k < 3; ++k)
                        mean[k] = (in.row(0, 2 * cy)[6 * cx + k] + in.row(0, 2 * cy)[6 * cx + 3 + k] +
                                   in.row(0, 2 * cy + 1)[6 * cx + k] + in.row(0, 2 * cy + 1)[6 * cx + 3 + k] + 2) >>
                                  2;
                    int want[3];
                    formula_yuv(m, mean[0], mean[1], mean[2], want);
                    int u, v;
                    if (f == KES_PIXEL_I420) {
                        u = out.row(1, cy)[cx];
                        v = out.row(2, cy)[cx];
                    } else {
                        const uint8_t* c = out.row(1, cy) + 2 * cx;
                        u = f == KES_PIXEL_NV12 ? c[0] : c[1];
                        v = f == KES_PIXEL_NV12 ? c[1] : c[0];
                    }
                    ASSERT_LE(std::abs(u - want[1]), 1) << m << " " << cx << "," << cy;
                    ASSERT_LE(std::abs(v - want[2]), 1) << m << " " << cx << "," << cy;
                }
        }
}

TEST(VpcColor, LayoutChangesAreExactAndYuv400KeepsLuma) {
    Image nv12;
    ASSERT_EQ(kes_image_alloc(&nv12, nullptr, KES_PIXEL_NV12, 40, 22, 0, 0), KES_OK);
    random_fill(&nv12, 17);
    Channel ch;
    Image i420, nv21, back, grey;
    ASSERT_EQ(kes_vpc_convert_color(ch.get(), &nv12, KES_PIXEL_I420, KES_VPC_CSC_BT601_WIDE, nullptr, &i420), KES_OK)
        << kes_last_error();
    ASSERT_EQ(kes_vpc_convert_color(ch.get(), &i420, KES_PIXEL_NV21, KES_VPC_CSC_BT601_WIDE, nullptr, &nv21), KES_OK);
    ASSERT_EQ(kes_vpc_convert_color(ch.get(), &nv21, KES_PIXEL_NV12, KES_VPC_CSC_BT601_WIDE, nullptr, &back), KES_OK);
    ASSERT_EQ(kes_vpc_convert_color(ch.get(), &nv12, KES_PIXEL_YUV400, KES_VPC_CSC_BT601_WIDE, nullptr, &grey), KES_OK);
    for (uint32_t y = 0; y < 22; ++y) {
        ASSERT_EQ(0, std::memcmp(back.row(0, y), nv12.row(0, y), 40));
        ASSERT_EQ(0, std::memcmp(grey.row(0, y), nv12.row(0, y), 40));
    }
    for (uint32_t y = 0; y < 11; ++y) {
        ASSERT_EQ(0, std::memcmp(back.row(1, y), nv12.row(1, y), 40));
        for (uint32_t x = 0; x < 20; ++x) {
            ASSERT_EQ(i420.row(1, y)[x], nv12.row(1, y)[2 * x]);
            ASSERT_EQ(i420.row(2, y)[x], nv12.row(1, y)[2 * x + 1]);
            ASSERT_EQ(nv21.row(1, y)[2 * x], nv12.row(1, y)[2 * x + 1]);
        }
    }
}

TEST(VpcColor, RoundTripRgbYuvRgbIsClose) {
    // Flat 2×2 blocks so 4:2:0 loses nothing but rounding.
    Image rgb;
    ASSERT_EQ(kes_image_alloc(&rgb, nullptr, KES_PIXEL_BGR888, 32, 16, 0, 0), KES_OK);
    kes_image_plane p;
    ASSERT_EQ(kes_image_get_plane(&rgb, 0, &p), KES_OK);
    std::mt19937 rng(5);
    for (uint32_t by = 0; by < 8; ++by)
        for (uint32_t bx = 0; bx < 16; ++bx) {
            const uint8_t c[3] = {uint8_t(rng()), uint8_t(rng()), uint8_t(rng())};
            for (uint32_t y = 2 * by; y < 2 * by + 2; ++y)
                for (uint32_t x = 2 * bx; x < 2 * bx + 2; ++x) std::memcpy(p.data + y * p.stride + 3 * x, c, 3);
        }
    Channel ch;
    for (kes_vpc_csc_matrix m : {KES_VPC_CSC_BT601_WIDE, KES_VPC_CSC_BT709_WIDE}) {
        Image yuv, back;
        ASSERT_EQ(kes_vpc_convert_color(ch.get(), &rgb, KES_PIXEL_NV12, m, nullptr, &yuv), KES_OK);
        ASSERT_EQ(kes_vpc_convert_color(ch.get(), &yuv, KES_PIXEL_BGR888, m, nullptr, &back), KES_OK);
        for (uint32_t y = 0; y < 16; ++y)
            for (uint32_t x = 0; x < 96; ++x) ASSERT_LE(std::abs(back.row(0, y)[x] - rgb.row(0, y)[x]), 3) << m;
    }
}

TEST(VpcColor, BoardRulesAndUnsupportedPairs) {
    Image nv12, rgb;
    ASSERT_EQ(kes_image_alloc(&nv12, nullptr, KES_PIXEL_NV12, 64, 32, 0, 0), KES_OK);
    ASSERT_EQ(kes_image_alloc(&rgb, nullptr, KES_PIXEL_RGB888, 64, 32, 0, 0), KES_OK);
    random_fill(&nv12, 1);
    random_fill(&rgb, 2);
    Channel c310(KES_BOARD_310), c310b(KES_BOARD_310B);
    Image out;
    EXPECT_EQ(kes_vpc_convert_color(c310.get(), &nv12, KES_PIXEL_RGB888, KES_VPC_CSC_BT601_WIDE, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("NV12 or NV21 only"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_vpc_convert_color(c310.get(), &rgb, KES_PIXEL_NV12, KES_VPC_CSC_BT709_NARROW, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_vpc_convert_color(c310.get(), &rgb, KES_PIXEL_NV12, KES_VPC_CSC_BT601_WIDE, nullptr, &out), KES_OK)
        << kes_last_error();
    kes_image_release(&out);
    EXPECT_EQ(kes_vpc_convert_color(c310b.get(), &rgb, KES_PIXEL_RGBA8888, KES_VPC_CSC_BT601_WIDE, nullptr, &out),
              KES_ERR_UNSUPPORTED);
    EXPECT_EQ(
        kes_vpc_convert_color(c310b.get(), &nv12, KES_PIXEL_RGB888, static_cast<kes_vpc_csc_matrix>(4), nullptr, &out),
        KES_ERR_INVALID_ARGUMENT);
    Image tiny;  // below the 10×6 VPC minimum
    ASSERT_EQ(kes_image_alloc(&tiny, nullptr, KES_PIXEL_RGB888, 8, 4, 0, 0), KES_OK);
    EXPECT_EQ(kes_vpc_convert_color(c310b.get(), &tiny, KES_PIXEL_NV12, KES_VPC_CSC_BT601_WIDE, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("10x6"), std::string::npos) << kes_last_error();
    EXPECT_EQ(out.data, nullptr);
}

TEST(VpcColor, OddSizesRoundDownToEven) {
    Image rgb;
    ASSERT_EQ(kes_image_alloc(&rgb, nullptr, KES_PIXEL_RGB888, 31, 17, 0, 0), KES_OK);
    random_fill(&rgb, 4);
    Channel ch;
    Image out;
    ASSERT_EQ(kes_vpc_convert_color(ch.get(), &rgb, KES_PIXEL_NV12, KES_VPC_CSC_BT601_WIDE, nullptr, &out), KES_OK)
        << kes_last_error();
    EXPECT_EQ(out.width, 30u);
    EXPECT_EQ(out.height, 16u);
}

TEST(VpcColor, InputSizeLimitDependsOnFormat) {
    // 310: 4096 per side for any input, 8192 for NV12/NV21 ("8K mode", BOARD-RULES §VPC).
    Image rgb, nv12;
    ASSERT_EQ(kes_image_alloc(&rgb, nullptr, KES_PIXEL_RGB888, 4098, 16, 0, 0), KES_OK);
    ASSERT_EQ(kes_image_alloc(&nv12, nullptr, KES_PIXEL_NV12, 4098, 16, 0, 0), KES_OK);
    random_fill(&rgb, 6);
    random_fill(&nv12, 7);
    Channel c310(KES_BOARD_310);
    Image out;
    EXPECT_EQ(kes_vpc_convert_color(c310.get(), &rgb, KES_PIXEL_NV12, KES_VPC_CSC_BT601_WIDE, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("..4096 per side for RGB888"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_vpc_crop_resize(c310.get(), &nv12, nullptr, 2048, 16, KES_VPC_INTERP_BILINEAR, nullptr, &out), KES_OK)
        << kes_last_error();
    EXPECT_EQ(out.width, 2048u);
}
