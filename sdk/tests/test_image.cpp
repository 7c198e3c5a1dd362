// Image descriptor: format facts, the strides each DVPP unit writes on each board (docs/BOARD-RULES.md), buffer
// sizes, wrap/alloc/release and validation.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kestrel/image.h"

namespace {

std::string last_error() {
    return kes_last_error();
}

struct StrideCase {
    kes_board board;
    kes_stride_rule rule;
    kes_pixel_format format;
    uint32_t width, height;
    uint32_t width_stride, height_stride;  // expected
};

void expect_strides(const std::vector<StrideCase>& cases) {
    for (const StrideCase& c : cases) {
        uint32_t ws = 0, hs = 0;
        SCOPED_TRACE(std::string(kes_board_name(c.board)) + " rule " + std::to_string(c.rule) + " " +
                     kes_pixel_format_name(c.format) + " " + std::to_string(c.width) + "x" + std::to_string(c.height));
        ASSERT_EQ(kes_image_strides(c.format, c.width, c.height, c.rule, c.board, &ws, &hs), KES_OK) << last_error();
        EXPECT_EQ(ws, c.width_stride);
        EXPECT_EQ(hs, c.height_stride);
    }
}

constexpr kes_board k310 = KES_BOARD_310;
constexpr kes_board k310B = KES_BOARD_310B;
constexpr kes_board kHost = KES_BOARD_HOST;

const kes_pixel_format kAllFormats[] = {KES_PIXEL_YUV400,   KES_PIXEL_NV12,     KES_PIXEL_NV21,     KES_PIXEL_YUV422SP,
                                        KES_PIXEL_YVU422SP, KES_PIXEL_YUV444SP, KES_PIXEL_YVU444SP, KES_PIXEL_YUYV422,
                                        KES_PIXEL_UYVY422,  KES_PIXEL_YVYU422,  KES_PIXEL_VYUY422,  KES_PIXEL_YUV444,
                                        KES_PIXEL_RGB888,   KES_PIXEL_BGR888,   KES_PIXEL_ARGB8888, KES_PIXEL_ABGR8888,
                                        KES_PIXEL_RGBA8888, KES_PIXEL_BGRA8888, KES_PIXEL_YUV440SP, KES_PIXEL_YVU440SP,
                                        KES_PIXEL_I420};
const kes_stride_rule kAllRules[] = {KES_STRIDE_TIGHT, KES_STRIDE_VPC,  KES_STRIDE_JPEGD,
                                     KES_STRIDE_JPEGE, KES_STRIDE_PNGD, KES_STRIDE_VDEC};
const kes_board kAllBoards[] = {kHost, k310, k310B};

}  // namespace

// ---- format facts ---------------------------------------------------------------------------------

TEST(PixelFormat, NamesPlanesAndFamilies) {
    EXPECT_STREQ(kes_pixel_format_name(KES_PIXEL_NV12), "NV12");
    EXPECT_STREQ(kes_pixel_format_name(KES_PIXEL_RGB888), "RGB888");
    EXPECT_STREQ(kes_pixel_format_name(KES_PIXEL_YVU440SP), "YVU440SP");
    EXPECT_STREQ(kes_pixel_format_name(KES_PIXEL_I420), "I420");
    EXPECT_STREQ(kes_pixel_format_name(KES_PIXEL_UNKNOWN), "UNKNOWN");
    EXPECT_STREQ(kes_pixel_format_name(static_cast<kes_pixel_format>(18)), "UNKNOWN");
    EXPECT_STREQ(kes_pixel_format_name(static_cast<kes_pixel_format>(-1)), "UNKNOWN");

    EXPECT_EQ(kes_pixel_format_planes(KES_PIXEL_YUV400), 1u);
    EXPECT_EQ(kes_pixel_format_planes(KES_PIXEL_NV21), 2u);
    EXPECT_EQ(kes_pixel_format_planes(KES_PIXEL_YUV444SP), 2u);
    EXPECT_EQ(kes_pixel_format_planes(KES_PIXEL_I420), 3u);
    EXPECT_EQ(kes_pixel_format_planes(KES_PIXEL_UYVY422), 1u);
    EXPECT_EQ(kes_pixel_format_planes(KES_PIXEL_BGRA8888), 1u);
    EXPECT_EQ(kes_pixel_format_planes(KES_PIXEL_UNKNOWN), 0u);

    EXPECT_EQ(kes_pixel_format_is_yuv(KES_PIXEL_YUV444), 1);
    EXPECT_EQ(kes_pixel_format_is_yuv(KES_PIXEL_VYUY422), 1);
    EXPECT_EQ(kes_pixel_format_is_yuv(KES_PIXEL_I420), 1);
    EXPECT_EQ(kes_pixel_format_is_yuv(KES_PIXEL_RGB888), 0);
    EXPECT_EQ(kes_pixel_format_is_yuv(KES_PIXEL_ARGB8888), 0);
    EXPECT_EQ(kes_pixel_format_is_yuv(KES_PIXEL_UNKNOWN), 0);
}

TEST(PixelFormat, SubsamplingShiftsFollowChromaLayout) {
    struct {
        kes_pixel_format format;
        uint32_t sx, sy;
    } cases[] = {{KES_PIXEL_NV12, 1, 1},    {KES_PIXEL_I420, 1, 1},     {KES_PIXEL_YUV422SP, 1, 0},
                 {KES_PIXEL_YUYV422, 1, 0}, {KES_PIXEL_YUV440SP, 0, 1}, {KES_PIXEL_YUV444SP, 0, 0},
                 {KES_PIXEL_RGB888, 0, 0},  {KES_PIXEL_YUV400, 0, 0}};
    for (const auto& c : cases) {
        uint32_t sx = 9, sy = 9;
        ASSERT_EQ(kes_pixel_format_subsampling(c.format, &sx, &sy), KES_OK);
        EXPECT_EQ(sx, c.sx) << kes_pixel_format_name(c.format);
        EXPECT_EQ(sy, c.sy) << kes_pixel_format_name(c.format);
    }
    uint32_t sx, sy;
    EXPECT_EQ(kes_pixel_format_subsampling(KES_PIXEL_UNKNOWN, &sx, &sy), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_pixel_format_subsampling(KES_PIXEL_NV12, nullptr, &sy), KES_ERR_INVALID_ARGUMENT);
}

// ---- strides per unit and board (docs/BOARD-RULES.md) ---------------------------------------------------------

TEST(ImageStrides, HeaderExamplesHold) {
    expect_strides({{k310, KES_STRIDE_JPEGD, KES_PIXEL_NV12, 1920, 1080, 1920, 1088},
                    {k310B, KES_STRIDE_JPEGD, KES_PIXEL_NV12, 1920, 1080, 1920, 1088},
                    {k310, KES_STRIDE_VPC, KES_PIXEL_NV12, 1000, 600, 1008, 600}});
}

TEST(ImageStrides, JpegdOn310AlignsWidthTo128AndHeightTo16) {
    expect_strides({
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_NV12, 1300, 601, 1408, 608},
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_NV12, 1919, 1079, 1920, 1088},
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_YUV400, 1919, 1079, 1920, 1088},
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_YUV422SP, 1300, 601, 1408, 608},
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_YUV444SP, 1300, 601, 1408, 608},
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_YUV440SP, 1300, 601, 1408, 608},
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_I420, 1919, 1079, 1920, 1088},
        // Bytes of an aligned pixel width (DVPP widthStride semantics).
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_RGB888, 1300, 601, 1408 * 3, 608},
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_RGBA8888, 1300, 601, 1408 * 4, 608},
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_YUYV422, 1300, 601, 1408 * 2, 608},
        {k310, KES_STRIDE_JPEGD, KES_PIXEL_NV12, 32, 32, 128, 32},
    });
}

TEST(ImageStrides, JpegdOn310BAlignsWidthTo64AndHeightTo16) {
    expect_strides({
        {k310B, KES_STRIDE_JPEGD, KES_PIXEL_NV12, 1300, 601, 1344, 608},
        {k310B, KES_STRIDE_JPEGD, KES_PIXEL_NV12, 1919, 1079, 1920, 1088},
        {k310B, KES_STRIDE_JPEGD, KES_PIXEL_YUV400, 1919, 1079, 1920, 1088},
        {k310B, KES_STRIDE_JPEGD, KES_PIXEL_YUV422SP, 1300, 601, 1344, 608},
        {k310B, KES_STRIDE_JPEGD, KES_PIXEL_YUV444SP, 1300, 601, 1344, 608},
        {k310B, KES_STRIDE_JPEGD, KES_PIXEL_I420, 1300, 601, 1344, 608},
        {k310B, KES_STRIDE_JPEGD, KES_PIXEL_RGB888, 1300, 601, 1344 * 3, 608},
        {k310B, KES_STRIDE_JPEGD, KES_PIXEL_RGBA8888, 1300, 601, 1344 * 4, 608},
        {k310B, KES_STRIDE_JPEGD, KES_PIXEL_NV12, 32, 32, 64, 32},
    });
}

TEST(ImageStrides, VpcOn310AlignsWidthTo16AndHeightTo2) {
    expect_strides({
        {k310, KES_STRIDE_VPC, KES_PIXEL_NV12, 1919, 1079, 1920, 1080},
        {k310, KES_STRIDE_VPC, KES_PIXEL_NV21, 1300, 601, 1312, 602},
        {k310, KES_STRIDE_VPC, KES_PIXEL_YUV400, 1919, 1079, 1920, 1080},
        {k310, KES_STRIDE_VPC, KES_PIXEL_YUV422SP, 1300, 601, 1312, 602},
        {k310, KES_STRIDE_VPC, KES_PIXEL_YUV444SP, 1300, 601, 1312, 602},
        {k310, KES_STRIDE_VPC, KES_PIXEL_I420, 1300, 601, 1312, 602},
        // BOARD-RULES §VPC: packed 422 align16(w)·2, RGB888 align16(w)·3, 8888 align16(w)·4.
        {k310, KES_STRIDE_VPC, KES_PIXEL_YUYV422, 1300, 601, 1312 * 2, 602},
        {k310, KES_STRIDE_VPC, KES_PIXEL_RGB888, 1300, 601, 1312 * 3, 602},
        {k310, KES_STRIDE_VPC, KES_PIXEL_RGB888, 1919, 1079, 1920 * 3, 1080},
        {k310, KES_STRIDE_VPC, KES_PIXEL_RGBA8888, 1300, 601, 1312 * 4, 602},
    });
}

TEST(ImageStrides, VpcOn310BNeedsNoWidthAlignment) {
    expect_strides({
        {k310B, KES_STRIDE_VPC, KES_PIXEL_NV12, 1000, 600, 1000, 600},
        {k310B, KES_STRIDE_VPC, KES_PIXEL_NV12, 1300, 601, 1300, 602},
        // Odd widths of subsampled formats: the stride is still even (whole UV pairs).
        {k310B, KES_STRIDE_VPC, KES_PIXEL_NV12, 1919, 1079, 1920, 1080},
        {k310B, KES_STRIDE_VPC, KES_PIXEL_I420, 1919, 1079, 1920, 1080},
        {k310B, KES_STRIDE_VPC, KES_PIXEL_YUV422SP, 1919, 1079, 1920, 1080},
        {k310B, KES_STRIDE_VPC, KES_PIXEL_YUYV422, 1919, 1079, 3840, 1080},
        {k310B, KES_STRIDE_VPC, KES_PIXEL_YUV400, 1919, 1079, 1919, 1080},
        {k310B, KES_STRIDE_VPC, KES_PIXEL_YUV444SP, 1919, 1079, 1919, 1080},
        {k310B, KES_STRIDE_VPC, KES_PIXEL_RGB888, 1919, 1079, 1919 * 3, 1080},
        {k310B, KES_STRIDE_VPC, KES_PIXEL_RGBA8888, 1919, 1079, 1919 * 4, 1080},
    });
}

TEST(ImageStrides, JpegeAlignsTheByteWidthTo16AndKeepsHeight) {
    for (kes_board b : {k310, k310B}) {
        expect_strides({
            {b, KES_STRIDE_JPEGE, KES_PIXEL_NV12, 1919, 1079, 1920, 1080},  // 4:2:0 height stays even
            {b, KES_STRIDE_JPEGE, KES_PIXEL_NV21, 1300, 601, 1312, 602},
            {b, KES_STRIDE_JPEGE, KES_PIXEL_YUV400, 1919, 1079, 1920, 1079},
            {b, KES_STRIDE_JPEGE, KES_PIXEL_YUV422SP, 1919, 1079, 1920, 1079},
            {b, KES_STRIDE_JPEGE, KES_PIXEL_YUV444SP, 1300, 601, 1312, 601},
            {b, KES_STRIDE_JPEGE, KES_PIXEL_I420, 1919, 1079, 1920, 1080},
            // BOARD-RULES §JPEGE: packed 422 widthStride = align16(2w) — 2608, not VPC's align16(w)·2 = 2624.
            {b, KES_STRIDE_JPEGE, KES_PIXEL_YUYV422, 1300, 601, 2608, 601},
            {b, KES_STRIDE_JPEGE, KES_PIXEL_UYVY422, 1010, 7, 2032, 7},
            {b, KES_STRIDE_JPEGE, KES_PIXEL_YUYV422, 1919, 1079, 3840, 1079},
            {b, KES_STRIDE_JPEGE, KES_PIXEL_RGB888, 1919, 1079, 5760, 1079},
            {b, KES_STRIDE_JPEGE, KES_PIXEL_RGBA8888, 1919, 1079, 7680, 1079},
        });
    }
}

TEST(ImageStrides, PngdUsesTheBoardsPngdAlignment) {
    // BOARD-RULES §PNGD gives align128(w) × align16(h) for 310; 310B follows its profile (UNCONFIRMED there).
    expect_strides({
        {k310, KES_STRIDE_PNGD, KES_PIXEL_RGB888, 1300, 601, 1408 * 3, 608},
        {k310, KES_STRIDE_PNGD, KES_PIXEL_RGBA8888, 1919, 1079, 1920 * 4, 1088},
    });
    const kes_board_profile* p = kes_board_get_profile(k310B);
    ASSERT_NE(p, nullptr);
    const auto align = [](uint32_t v, uint32_t a) { return a <= 1 ? v : (v + a - 1) / a * a; };
    expect_strides({
        {k310B, KES_STRIDE_PNGD, KES_PIXEL_RGB888, 1300, 601, align(1300, p->pngd_width_align) * 3,
         align(601, p->pngd_height_align)},
        {k310B, KES_STRIDE_PNGD, KES_PIXEL_RGBA8888, 1919, 1079, align(1919, p->pngd_width_align) * 4,
         align(1079, p->pngd_height_align)},
    });
}

TEST(ImageStrides, VdecAlignsTo16By2WithMinimumWidthStride32OnBothBoards) {
    for (kes_board b : {k310, k310B}) {
        expect_strides({
            {b, KES_STRIDE_VDEC, KES_PIXEL_NV12, 1919, 1079, 1920, 1080},
            {b, KES_STRIDE_VDEC, KES_PIXEL_NV21, 1300, 601, 1312, 602},
            {b, KES_STRIDE_VDEC, KES_PIXEL_NV12, 1000, 600, 1008, 600},
            {b, KES_STRIDE_VDEC, KES_PIXEL_NV12, 10, 6, 32, 6},
            {b, KES_STRIDE_VDEC, KES_PIXEL_NV12, 16, 6, 32, 6},
            {b, KES_STRIDE_VDEC, KES_PIXEL_NV12, 34, 6, 48, 6},
        });
    }
    expect_strides({{kHost, KES_STRIDE_VDEC, KES_PIXEL_NV12, 10, 6, 10, 6}});
}

TEST(ImageStrides, TightKeepsOnlyWhatTheFormatNeeds) {
    for (kes_board b : kAllBoards) {
        expect_strides({
            {b, KES_STRIDE_TIGHT, KES_PIXEL_NV12, 1919, 1079, 1920, 1080},
            {b, KES_STRIDE_TIGHT, KES_PIXEL_I420, 1919, 1079, 1920, 1080},
            {b, KES_STRIDE_TIGHT, KES_PIXEL_YUV400, 1919, 1079, 1919, 1079},
            {b, KES_STRIDE_TIGHT, KES_PIXEL_YUV422SP, 1919, 1079, 1920, 1079},
            {b, KES_STRIDE_TIGHT, KES_PIXEL_YUV440SP, 1919, 1079, 1919, 1080},
            {b, KES_STRIDE_TIGHT, KES_PIXEL_YUV444SP, 1919, 1079, 1919, 1079},
            {b, KES_STRIDE_TIGHT, KES_PIXEL_YUYV422, 1919, 1079, 3840, 1079},
            {b, KES_STRIDE_TIGHT, KES_PIXEL_RGB888, 1919, 1079, 5757, 1079},
            {b, KES_STRIDE_TIGHT, KES_PIXEL_RGBA8888, 1919, 1079, 7676, 1079},
            {b, KES_STRIDE_TIGHT, KES_PIXEL_NV12, 1, 1, 2, 2},
        });
    }
}

TEST(ImageStrides, HostProfileIsTightForEveryUnit) {
    const kes_pixel_format formats[] = {KES_PIXEL_NV12,     KES_PIXEL_YUV400,   KES_PIXEL_RGB888, KES_PIXEL_RGBA8888,
                                        KES_PIXEL_YUV422SP, KES_PIXEL_YUV444SP, KES_PIXEL_I420,   KES_PIXEL_YUYV422};
    for (kes_stride_rule rule : kAllRules) {
        for (kes_pixel_format f : formats) {
            for (uint32_t w : {1u, 1919u, 1300u}) {
                uint32_t tws, ths, ws, hs;
                ASSERT_EQ(kes_image_strides(f, w, 1079, KES_STRIDE_TIGHT, kHost, &tws, &ths), KES_OK);
                ASSERT_EQ(kes_image_strides(f, w, 1079, rule, kHost, &ws, &hs), KES_OK);
                EXPECT_EQ(ws, tws) << kes_pixel_format_name(f) << " rule " << rule << " w " << w;
                EXPECT_EQ(hs, ths) << kes_pixel_format_name(f) << " rule " << rule << " w " << w;
            }
        }
    }
}

TEST(ImageStrides, EveryCombinationDescribesAValidImage) {
    // Whatever a unit produces must be something kes_image_wrap/validate accept.
    static uint8_t dummy;
    for (kes_board b : kAllBoards)
        for (kes_stride_rule rule : kAllRules)
            for (kes_pixel_format f : kAllFormats)
                for (uint32_t w : {1u, 2u, 15u, 1919u})
                    for (uint32_t h : {1u, 3u, 1079u}) {
                        uint32_t ws, hs;
                        ASSERT_EQ(kes_image_strides(f, w, h, rule, b, &ws, &hs), KES_OK) << last_error();
                        size_t size = 0;
                        ASSERT_EQ(kes_image_buffer_size(f, ws, hs, &size), KES_OK) << last_error();
                        kes_image img;
                        ASSERT_EQ(kes_image_wrap(&img, f, w, h, ws, hs, &dummy, size), KES_OK) << last_error();
                        ASSERT_EQ(kes_image_validate(&img), KES_OK) << last_error();
                    }
}

TEST(ImageStrides, RejectsZeroAbsurdAndUnknownArguments) {
    uint32_t ws, hs;
    EXPECT_EQ(kes_image_strides(KES_PIXEL_NV12, 0, 1080, KES_STRIDE_TIGHT, k310, &ws, &hs), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("width 0"), std::string::npos) << last_error();
    EXPECT_EQ(kes_image_strides(KES_PIXEL_NV12, 1920, 0, KES_STRIDE_TIGHT, k310, &ws, &hs), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_strides(KES_PIXEL_NV12, 65537, 2, KES_STRIDE_TIGHT, k310, &ws, &hs), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_strides(KES_PIXEL_NV12, 0xffffffffu, 2, KES_STRIDE_VPC, k310, &ws, &hs),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_strides(KES_PIXEL_UNKNOWN, 16, 16, KES_STRIDE_TIGHT, k310, &ws, &hs), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_strides(KES_PIXEL_NV12, 16, 16, static_cast<kes_stride_rule>(42), k310, &ws, &hs),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_strides(KES_PIXEL_NV12, 16, 16, KES_STRIDE_VPC, static_cast<kes_board>(7), &ws, &hs),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_strides(KES_PIXEL_NV12, 16, 16, KES_STRIDE_VPC, k310, nullptr, &hs), KES_ERR_INVALID_ARGUMENT);
    // The largest accepted size still works for the widest format and coarsest alignment.
    EXPECT_EQ(kes_image_strides(KES_PIXEL_RGBA8888, 65536, 65536, KES_STRIDE_JPEGD, k310, &ws, &hs), KES_OK);
    EXPECT_EQ(ws, 65536u * 4);
    EXPECT_EQ(hs, 65536u);
}

// ---- buffer sizes -----------------------------------------------------------------------------------

TEST(ImageBufferSize, Nv12IsThreeHalvesOfStrides) {
    size_t size = 0;
    ASSERT_EQ(kes_image_buffer_size(KES_PIXEL_NV12, 1920, 1088, &size), KES_OK);
    EXPECT_EQ(size, size_t{1920} * 1088 * 3 / 2);
    ASSERT_EQ(kes_image_buffer_size(KES_PIXEL_NV21, 1008, 600, &size), KES_OK);
    EXPECT_EQ(size, size_t{1008} * 600 * 3 / 2);
}

TEST(ImageBufferSize, EachLayoutAddsItsChromaPlanes) {
    struct {
        kes_pixel_format format;
        uint32_t ws, hs;
        size_t size;
    } cases[] = {
        {KES_PIXEL_YUV400, 1919, 1079, size_t{1919} * 1079},
        {KES_PIXEL_I420, 1920, 1080, size_t{1920} * 1080 * 3 / 2},
        {KES_PIXEL_YUV422SP, 1920, 1079, size_t{1920} * 1079 * 2},
        {KES_PIXEL_YUV440SP, 1919, 1080, size_t{1919} * 1080 * 2},
        {KES_PIXEL_YUV444SP, 1919, 1079, size_t{1919} * 1079 * 3},  // BOARD-RULES §JPEGD: 444SP ≥ ws·hs·3
        {KES_PIXEL_YUYV422, 3840, 1079, size_t{3840} * 1079},
        {KES_PIXEL_RGB888, 5760, 1088, size_t{5760} * 1088},
        {KES_PIXEL_RGBA8888, 7676, 1079, size_t{7676} * 1079},
    };
    for (const auto& c : cases) {
        size_t size = 0;
        ASSERT_EQ(kes_image_buffer_size(c.format, c.ws, c.hs, &size), KES_OK) << last_error();
        EXPECT_EQ(size, c.size) << kes_pixel_format_name(c.format);
    }
}

TEST(ImageBufferSize, RejectsStridesChromaCannotUse) {
    size_t size = 0;
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_NV12, 1919, 1080, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("width_stride 1919 must be even for NV12"), std::string::npos) << last_error();
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_NV12, 1920, 1079, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("height_stride 1079"), std::string::npos) << last_error();
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_I420, 1921, 1080, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_YUV440SP, 1920, 1079, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_YUYV422, 3839, 1079, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_RGB888, 0, 1079, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_RGB888, 5757, 0, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_RGB888, 0xffffffffu, 0xffffffffu, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_UNKNOWN, 16, 16, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_NV12, 16, 16, nullptr), KES_ERR_INVALID_ARGUMENT);
    // Even sizes are fine for 4:4:4 and grey whatever their parity.
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_YUV444SP, 1919, 1079, &size), KES_OK);
}

// ---- wrap, planes, validate -------------------------------------------------------------------------

TEST(ImageWrap, ZeroStridesMeanTight) {
    std::vector<uint8_t> buf(size_t{1920} * 1080 * 3 / 2);
    kes_image img;
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_NV12, 1919, 1079, 0, 0, buf.data(), buf.size()), KES_OK) << last_error();
    EXPECT_EQ(img.width_stride, 1920u);
    EXPECT_EQ(img.height_stride, 1080u);
    EXPECT_EQ(img.data, buf.data());
    EXPECT_EQ(img.size, buf.size());
    EXPECT_EQ(img.owns_data, 0u);
    EXPECT_EQ(img.pool, nullptr);
    EXPECT_EQ(kes_image_validate(&img), KES_OK);
    kes_image_release(&img);  // borrowed: only clears the struct
    EXPECT_EQ(img.data, nullptr);
    EXPECT_EQ(buf.size(), size_t{1920 * 1080 * 3 / 2});

    // One explicit stride, the other tight.
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_NV12, 1919, 1079, 2048, 0, buf.data(), size_t{2048} * 1080 * 3 / 2),
              KES_OK);
    EXPECT_EQ(img.width_stride, 2048u);
    EXPECT_EQ(img.height_stride, 1080u);
}

TEST(ImageWrap, RejectsTooSmallBufferAndZeroesTheOutput) {
    std::vector<uint8_t> buf(100);
    kes_image img;
    std::memset(&img, 0xab, sizeof img);
    EXPECT_EQ(kes_image_wrap(&img, KES_PIXEL_RGB888, 100, 100, 0, 0, buf.data(), buf.size()), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("size 100 < 30000"), std::string::npos) << last_error();
    EXPECT_EQ(img.data, nullptr);
    EXPECT_EQ(img.owns_data, 0u);
    EXPECT_EQ(kes_image_wrap(&img, KES_PIXEL_RGB888, 4, 4, 0, 0, nullptr, 1000), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_wrap(&img, KES_PIXEL_RGB888, 4, 4, 11, 0, buf.data(), buf.size()), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_wrap(&img, KES_PIXEL_RGB888, 4, 4, 0, 3, buf.data(), buf.size()), KES_ERR_INVALID_ARGUMENT);
}

TEST(ImagePlanes, Nv12ChromaFollowsLumaAtStrideTimesHeightStride) {
    std::vector<uint8_t> buf(size_t{1920} * 1088 * 3 / 2);
    kes_image img;
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_NV12, 1919, 1079, 1920, 1088, buf.data(), buf.size()), KES_OK);
    kes_image_plane p;
    ASSERT_EQ(kes_image_get_plane(&img, 0, &p), KES_OK);
    EXPECT_EQ(p.data, buf.data());
    EXPECT_EQ(p.row_bytes, 1919u);
    EXPECT_EQ(p.stride, 1920u);
    EXPECT_EQ(p.rows, 1079u);
    ASSERT_EQ(kes_image_get_plane(&img, 1, &p), KES_OK);
    EXPECT_EQ(p.data, buf.data() + size_t{1920} * 1088);
    EXPECT_EQ(p.row_bytes, 1920u);  // 960 UV pairs
    EXPECT_EQ(p.stride, 1920u);
    EXPECT_EQ(p.rows, 540u);
    EXPECT_EQ(kes_image_get_plane(&img, 2, &p), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("NV12 has 2 plane"), std::string::npos) << last_error();
}

TEST(ImagePlanes, I420HasQuarterChromaPlanesAtHalfStride) {
    std::vector<uint8_t> buf(size_t{64} * 32 * 3 / 2);
    kes_image img;
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_I420, 61, 31, 64, 32, buf.data(), buf.size()), KES_OK);
    kes_image_plane u, v;
    ASSERT_EQ(kes_image_get_plane(&img, 1, &u), KES_OK);
    ASSERT_EQ(kes_image_get_plane(&img, 2, &v), KES_OK);
    EXPECT_EQ(u.data, buf.data() + size_t{64} * 32);
    EXPECT_EQ(v.data, buf.data() + size_t{64} * 32 + size_t{32} * 16);
    EXPECT_EQ(u.stride, 32u);
    EXPECT_EQ(u.row_bytes, 31u);
    EXPECT_EQ(u.rows, 16u);
    EXPECT_EQ(v.stride, 32u);
    EXPECT_EQ(v.data + size_t{v.stride} * 16, buf.data() + buf.size());
}

TEST(ImagePlanes, SemiPlanar444And440ChromaRowsAreTwiceTheStride) {
    std::vector<uint8_t> buf(size_t{16} * 8 * 3);
    kes_image img;
    kes_image_plane p;
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_YUV444SP, 15, 7, 16, 8, buf.data(), buf.size()), KES_OK);
    ASSERT_EQ(kes_image_get_plane(&img, 1, &p), KES_OK);
    EXPECT_EQ(p.data, buf.data() + 128);
    EXPECT_EQ(p.row_bytes, 30u);
    EXPECT_EQ(p.stride, 32u);
    EXPECT_EQ(p.rows, 7u);
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_YVU440SP, 15, 7, 16, 8, buf.data(), buf.size()), KES_OK);
    ASSERT_EQ(kes_image_get_plane(&img, 1, &p), KES_OK);
    EXPECT_EQ(p.stride, 32u);
    EXPECT_EQ(p.rows, 4u);
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_YUYV422, 15, 7, 0, 0, buf.data(), buf.size()), KES_OK);
    ASSERT_EQ(kes_image_get_plane(&img, 0, &p), KES_OK);
    EXPECT_EQ(p.row_bytes, 32u);  // 8 macropixels: an odd width still ends on a whole one
}

TEST(ImageValidate, RejectsStrideSmallerThanRow) {
    std::vector<uint8_t> buf(size_t{3000} * 10);
    kes_image img;
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_RGB888, 1000, 10, 0, 0, buf.data(), buf.size()), KES_OK);
    img.width_stride = 1000;
    EXPECT_EQ(kes_image_validate(&img), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("kes_image_validate"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("width_stride 1000 < row bytes 3000 for RGB888 width 1000"), std::string::npos)
        << last_error();
}

TEST(ImageValidate, RejectsEveryInconsistency) {
    std::vector<uint8_t> buf(size_t{64} * 64 * 4);
    kes_image good;
    ASSERT_EQ(kes_image_wrap(&good, KES_PIXEL_NV12, 63, 63, 64, 64, buf.data(), buf.size()), KES_OK);
    ASSERT_EQ(kes_image_validate(&good), KES_OK);

    kes_image img = good;
    img.height_stride = 62;
    EXPECT_EQ(kes_image_validate(&img), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("height_stride 62 < height 63"), std::string::npos) << last_error();
    img = good;
    img.size = 64 * 64 * 3 / 2 - 1;
    EXPECT_EQ(kes_image_validate(&img), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("size 6143 < 6144"), std::string::npos) << last_error();
    img = good;
    img.data = nullptr;
    EXPECT_EQ(kes_image_validate(&img), KES_ERR_INVALID_ARGUMENT);
    img = good;
    img.format = KES_PIXEL_UNKNOWN;
    EXPECT_EQ(kes_image_validate(&img), KES_ERR_INVALID_ARGUMENT);
    img = good;
    img.width = 0;
    EXPECT_EQ(kes_image_validate(&img), KES_ERR_INVALID_ARGUMENT);
    img = good;
    img.width_stride = 63;  // odd stride cannot hold NV12's UV pairs
    EXPECT_EQ(kes_image_validate(&img), KES_ERR_INVALID_ARGUMENT);
    img = good;
    img.owns_data = 2;
    EXPECT_EQ(kes_image_validate(&img), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_image_validate(nullptr), KES_ERR_INVALID_ARGUMENT);
}

// ---- alloc and release ------------------------------------------------------------------------------

TEST(ImageAlloc, FromPoolIs128ByteAligned) {
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.initial_bytes = 16u << 20;
    cfg.name = "test-image";
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&cfg, &pool), KES_OK) << last_error();

    uint32_t ws, hs;
    ASSERT_EQ(kes_image_strides(KES_PIXEL_NV12, 1919, 1079, KES_STRIDE_JPEGD, k310, &ws, &hs), KES_OK);
    kes_image images[3];
    for (kes_image& img : images) {
        ASSERT_EQ(kes_image_alloc(&img, pool, KES_PIXEL_NV12, 1919, 1079, ws, hs), KES_OK) << last_error();
        EXPECT_EQ(reinterpret_cast<uintptr_t>(img.data) % KES_MEM_ALIGNMENT, 0u);
        EXPECT_EQ(img.pool, pool);
        EXPECT_EQ(img.owns_data, 1u);
        EXPECT_EQ(img.width_stride, 1920u);
        EXPECT_EQ(img.height_stride, 1088u);
        EXPECT_GE(img.size, size_t{1920 * 1088 * 3 / 2});
        EXPECT_EQ(kes_mem_pool_contains(pool, img.data), 1);
        EXPECT_EQ(kes_image_validate(&img), KES_OK) << last_error();
    }
    kes_mem_pool_stats stats;
    ASSERT_EQ(kes_mem_pool_get_stats(pool, &stats), KES_OK);
    EXPECT_EQ(stats.live_blocks, 3u);
    for (kes_image& img : images) {
        kes_image_release(&img);
        EXPECT_EQ(img.data, nullptr);
        EXPECT_EQ(img.pool, nullptr);
        EXPECT_EQ(img.owns_data, 0u);
        kes_image_release(&img);  // already released: no-op
    }
    ASSERT_EQ(kes_mem_pool_get_stats(pool, &stats), KES_OK);
    EXPECT_EQ(stats.live_blocks, 0u);
    kes_mem_pool_destroy(pool);
}

TEST(ImageAlloc, WithoutPoolUsesAlignedHostMemory) {
    kes_image img;
    ASSERT_EQ(kes_image_alloc(&img, nullptr, KES_PIXEL_RGB888, 1919, 1079, 0, 0), KES_OK) << last_error();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(img.data) % KES_MEM_ALIGNMENT, 0u);
    EXPECT_EQ(img.width_stride, 5757u);
    EXPECT_EQ(img.height_stride, 1079u);
    EXPECT_EQ(img.size, size_t{5757} * 1079);
    EXPECT_EQ(img.pool, nullptr);
    EXPECT_EQ(img.owns_data, 1u);
    static_cast<uint8_t*>(img.data)[img.size - 1] = 0x5a;  // the whole buffer is writable
    kes_image_release(&img);
    EXPECT_EQ(img.data, nullptr);
    kes_image_release(nullptr);
}

TEST(ImageAlloc, ExhaustedPoolReportsOutOfMemoryAndZeroesTheOutput) {
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.initial_bytes = 1u << 20;
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&cfg, &pool), KES_OK) << last_error();
    kes_image img;
    EXPECT_EQ(kes_image_alloc(&img, pool, KES_PIXEL_RGB888, 1920, 1080, 0, 0), KES_ERR_OUT_OF_MEMORY);
    EXPECT_NE(last_error().find("kes_image_alloc"), std::string::npos) << last_error();
    // What was asked for, from where: the size, the image and the pool.
    EXPECT_NE(last_error().find("cannot allocate 6220800 bytes for RGB888 1920x1080"), std::string::npos)
        << last_error();
    EXPECT_NE(last_error().find("from the pool"), std::string::npos) << last_error();
    EXPECT_EQ(img.data, nullptr);
    EXPECT_EQ(img.owns_data, 0u);
    EXPECT_EQ(kes_image_alloc(&img, pool, KES_PIXEL_NV12, 16, 16, 15, 0), KES_ERR_INVALID_ARGUMENT);
    kes_mem_pool_destroy(pool);
}

TEST(ImageMemory, SaysWhereThePixelsLive) {
    EXPECT_EQ(kes_image_memory(nullptr), KES_MEM_HOST);
    kes_image img;
    ASSERT_EQ(kes_image_alloc(&img, nullptr, KES_PIXEL_NV12, 64, 32, 0, 0), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_image_memory(&img), KES_MEM_HOST);
    kes_image_release(&img);
    kes_mem_pool_config pc;
    kes_mem_pool_config_init(&pc);
    pc.backend = KES_MEM_DVPP;
    pc.initial_bytes = 1 << 16;
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&pc, &pool), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_image_alloc(&img, pool, KES_PIXEL_NV12, 64, 32, 0, 0), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_image_memory(&img), KES_MEM_DVPP);
    kes_image_release(&img);
    kes_mem_pool_destroy(pool);
    void* p = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 64 * 48, &p), KES_OK);
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_NV12, 64, 32, 0, 0, p, 64 * 48), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_image_memory(&img), KES_MEM_HOST);  // borrowed: Kestrel cannot know
    img.owns_data = 1;                                // as an owned kes_mem_alloc buffer it can
    EXPECT_EQ(kes_image_memory(&img), KES_MEM_DEVICE);
    kes_image_release(&img);
}
