// VPC crop/resize behaviour (BOARD-RULES §VPC): board rules, OpenCV-style interpolation, ROI parity.
#include <string>

#include "dvpp_test_util.hpp"

using namespace kes_test;

namespace {

// NV12 test image with luma = (x * 7 + y * 3) & 255 and chroma pairs (x * 5, y * 9) per 2×2 block.
void make_nv12(uint32_t w, uint32_t h, Image* img, kes_pixel_format f = KES_PIXEL_NV12) {
    ASSERT_EQ(kes_image_alloc(img, nullptr, f, w, h, 0, 0), KES_OK) << kes_last_error();
    kes_image_plane y, c;
    ASSERT_EQ(kes_image_get_plane(img, 0, &y), KES_OK);
    ASSERT_EQ(kes_image_get_plane(img, 1, &c), KES_OK);
    for (uint32_t r = 0; r < h; ++r)
        for (uint32_t x = 0; x < w; ++x) y.data[r * y.stride + x] = uint8_t((x * 7 + r * 3) & 255);
    for (uint32_t r = 0; r < h / 2; ++r)
        for (uint32_t x = 0; x < w / 2; ++x) {
            c.data[r * c.stride + 2 * x] = uint8_t(x * 5);
            c.data[r * c.stride + 2 * x + 1] = uint8_t(r * 9);
        }
}

}  // namespace

TEST(VpcResize, SameSizeBilinearIsACopy) {
    Image in;
    make_nv12(64, 48, &in);
    Channel ch(KES_BOARD_310);
    Image out;
    ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, nullptr, 64, 48, KES_VPC_INTERP_BILINEAR, nullptr, &out), KES_OK)
        << kes_last_error();
    for (uint32_t y = 0; y < 48; ++y) ASSERT_EQ(0, std::memcmp(out.row(0, y), in.row(0, y), 64));
    for (uint32_t y = 0; y < 24; ++y) ASSERT_EQ(0, std::memcmp(out.row(1, y), in.row(1, y), 64));
}

TEST(VpcResize, OutputStridesFollowBoardProfile) {
    Image in;
    make_nv12(64, 48, &in);
    Channel c310(KES_BOARD_310), c310b(KES_BOARD_310B);
    Image a, b;
    ASSERT_EQ(kes_vpc_crop_resize(c310.get(), &in, nullptr, 50, 30, KES_VPC_INTERP_DEFAULT, nullptr, &a), KES_OK)
        << kes_last_error();
    EXPECT_EQ(a.width_stride, 64u);  // align16(50)
    EXPECT_EQ(a.height_stride, 30u);
    ASSERT_EQ(kes_vpc_crop_resize(c310b.get(), &in, nullptr, 50, 30, KES_VPC_INTERP_DEFAULT, nullptr, &b), KES_OK);
    EXPECT_EQ(b.width_stride, 50u);  // 310B: no width alignment
}

TEST(VpcResize, TwoTimesDownscaleAveragesLikeOpenCvArea) {
    Image in;
    make_nv12(64, 48, &in);
    Channel ch;
    Image out;
    ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, nullptr, 32, 24, KES_VPC_INTERP_BILINEAR, nullptr, &out), KES_OK);
    for (uint32_t y = 0; y < 24; ++y)
        for (uint32_t x = 0; x < 32; ++x) {
            const int s = in.row(0, 2 * y)[2 * x] + in.row(0, 2 * y)[2 * x + 1] + in.row(0, 2 * y + 1)[2 * x] +
                          in.row(0, 2 * y + 1)[2 * x + 1];
            ASSERT_EQ(out.row(0, y)[x], (s + 2) >> 2) << x << "," << y;
        }
}

TEST(VpcResize, BilinearUpscaleInterpolatesBetweenNeighbours) {
    // A horizontal ramp 0, 8, 16, ... upscaled ×2: OpenCV's half-pixel centres give 0,2,6,10,...
    Image in;
    ASSERT_EQ(kes_image_alloc(&in, nullptr, KES_PIXEL_NV12, 16, 16, 0, 0), KES_OK);
    kes_image_plane y, c;
    ASSERT_EQ(kes_image_get_plane(&in, 0, &y), KES_OK);
    ASSERT_EQ(kes_image_get_plane(&in, 1, &c), KES_OK);
    for (uint32_t r = 0; r < 16; ++r)
        for (uint32_t x = 0; x < 16; ++x) y.data[r * y.stride + x] = uint8_t(x * 8);
    for (uint32_t r = 0; r < 8; ++r) std::memset(c.data + r * c.stride, 128, 16);
    Channel ch;
    Image out;
    ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, nullptr, 32, 32, KES_VPC_INTERP_BILINEAR, nullptr, &out), KES_OK);
    const uint8_t* r0 = out.row(0, 5);
    EXPECT_EQ(r0[0], 0);     // clamped left edge
    EXPECT_EQ(r0[1], 2);     // src 0.25
    EXPECT_EQ(r0[2], 6);     // src 0.75
    EXPECT_EQ(r0[3], 10);    // src 1.25
    EXPECT_EQ(r0[31], 120);  // clamped right edge
    EXPECT_EQ(out.row(1, 3)[7], 128);
}

TEST(VpcResize, NearestPicksFloorOfScaledIndex) {
    Image in;
    make_nv12(60, 40, &in);
    Channel ch;
    Image out;
    ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, nullptr, 40, 30, KES_VPC_INTERP_NEAREST, nullptr, &out), KES_OK);
    for (uint32_t y = 0; y < 30; ++y)
        for (uint32_t x = 0; x < 40; ++x) ASSERT_EQ(out.row(0, y)[x], in.row(0, y * 40 / 30)[x * 60 / 40]);
}

TEST(VpcResize, CropCopiesTheNamedRectangle) {
    Image in;
    make_nv12(64, 48, &in, KES_PIXEL_NV21);
    Channel ch(KES_BOARD_310);
    const kes_vpc_roi roi = {10, 4, 41, 23};  // 32×20
    Image out;
    ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, &roi, 32, 20, KES_VPC_INTERP_BILINEAR, nullptr, &out), KES_OK)
        << kes_last_error();
    EXPECT_EQ(out.format, KES_PIXEL_NV21);
    for (uint32_t y = 0; y < 20; ++y) ASSERT_EQ(0, std::memcmp(out.row(0, y), in.row(0, y + 4) + 10, 32));
    for (uint32_t y = 0; y < 10; ++y) ASSERT_EQ(0, std::memcmp(out.row(1, y), in.row(1, y + 2) + 10, 32));
}

TEST(VpcResize, RoiParityEnforcedOn310Only) {
    Image in;
    make_nv12(64, 48, &in);
    const kes_vpc_roi odd_left = {1, 0, 32, 19};
    Channel c310(KES_BOARD_310), c310b(KES_BOARD_310B);
    Image out;
    EXPECT_EQ(kes_vpc_crop_resize(c310.get(), &in, &odd_left, 32, 20, KES_VPC_INTERP_BILINEAR, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("left=1"), std::string::npos) << kes_last_error();
    const kes_vpc_roi even_right = {0, 0, 31, 18};
    EXPECT_EQ(kes_vpc_crop_resize(c310.get(), &in, &even_right, 32, 20, KES_VPC_INTERP_BILINEAR, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("odd"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_vpc_crop_resize(c310b.get(), &in, &odd_left, 32, 20, KES_VPC_INTERP_BILINEAR, nullptr, &out), KES_OK)
        << kes_last_error();
}

TEST(VpcResize, BoardLimitsAreEnforced) {
    Image in;
    make_nv12(64, 48, &in);
    Channel ch(KES_BOARD_310);
    Image out;
    EXPECT_EQ(kes_vpc_crop_resize(ch.get(), &in, nullptr, 8, 6, KES_VPC_INTERP_BILINEAR, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);  // below 10×6
    EXPECT_EQ(kes_vpc_crop_resize(ch.get(), &in, nullptr, 2048, 1536, KES_VPC_INTERP_BILINEAR, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);  // ×32 > ×16
    EXPECT_NE(std::string(kes_last_error()).find("[1/32, 16]"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_vpc_crop_resize(ch.get(), &in, nullptr, 33, 20, KES_VPC_INTERP_BILINEAR, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);  // odd output
    const kes_vpc_roi outside = {0, 0, 63, 49};
    EXPECT_EQ(kes_vpc_crop_resize(ch.get(), &in, &outside, 32, 20, KES_VPC_INTERP_BILINEAR, nullptr, &out),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_vpc_crop_resize(ch.get(), &in, nullptr, 32, 20, static_cast<kes_vpc_interp>(3), nullptr, &out),
              KES_ERR_UNSUPPORTED);
    EXPECT_EQ(out.data, nullptr);
}
