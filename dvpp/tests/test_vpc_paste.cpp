// VPC crop-and-paste, letterbox and batch crop (BOARD-RULES §VPC): pixels equal kes_vpc_crop_resize's, the
// canvas outside the paste area untouched, and the per-board paste and batch rules.
#include <string>

#include "dvpp_test_util.hpp"

using namespace kes_test;

namespace {

void make_nv12(uint32_t w, uint32_t h, Image* img, kes_pixel_format f = KES_PIXEL_NV12) {
    ASSERT_EQ(kes_image_alloc(img, nullptr, f, w, h, 0, 0), KES_OK) << kes_last_error();
    kes_image_plane y, c;
    ASSERT_EQ(kes_image_get_plane(img, 0, &y), KES_OK);
    ASSERT_EQ(kes_image_get_plane(img, 1, &c), KES_OK);
    for (uint32_t r = 0; r < h; ++r)
        for (uint32_t x = 0; x < w; ++x) y.data[r * y.stride + x] = uint8_t((x * 7 + r * 13 + (x * r) % 11) & 255);
    for (uint32_t r = 0; r < h / 2; ++r)
        for (uint32_t x = 0; x < w; ++x) c.data[r * c.stride + x] = uint8_t((x * 5 + r * 9) & 255);
}

void fill(Image* img, uint8_t v) {
    kes_image_plane y, c;
    ASSERT_EQ(kes_image_get_plane(img, 0, &y), KES_OK);
    ASSERT_EQ(kes_image_get_plane(img, 1, &c), KES_OK);
    for (uint32_t r = 0; r < y.rows; ++r) std::memset(y.data + r * y.stride, v, y.row_bytes);
    for (uint32_t r = 0; r < c.rows; ++r) std::memset(c.data + r * c.stride, v, c.row_bytes);
}

// Checks that `canvas` holds `expect` (a crop_resize result) at `area` and `bg` elsewhere.
void expect_pasted(const Image& canvas, const Image& expect, const kes_vpc_roi& area, uint8_t bg) {
    for (uint32_t r = 0; r < canvas.height; ++r)
        for (uint32_t x = 0; x < canvas.width; ++x) {
            const bool in = x >= area.left && x <= area.right && r >= area.top && r <= area.bottom;
            const uint8_t want = in ? expect.row(0, r - area.top)[x - area.left] : bg;
            ASSERT_EQ(canvas.row(0, r)[x], want) << "luma " << x << "," << r;
        }
    for (uint32_t r = 0; r < canvas.height / 2; ++r)
        for (uint32_t x = 0; x < canvas.width; ++x) {
            const bool in = x >= area.left && x <= area.right && 2 * r >= area.top && 2 * r <= area.bottom;
            const uint8_t want = in ? expect.row(1, r - area.top / 2)[x - area.left] : bg;
            ASSERT_EQ(canvas.row(1, r)[x], want) << "chroma " << x << "," << r;
        }
}

}  // namespace

TEST(VpcPaste, CropAndPasteWritesOnlyThePasteArea) {
    Image in, canvas, expect;
    make_nv12(96, 64, &in);
    ASSERT_EQ(kes_image_alloc(&canvas, nullptr, KES_PIXEL_NV12, 80, 60, 0, 0), KES_OK);
    fill(&canvas, 7);
    Channel ch(KES_BOARD_310B);
    const kes_vpc_roi crop = {4, 2, 67, 49}, paste = {10, 8, 59, 43};  // 64×48 → 50×36
    ASSERT_EQ(kes_vpc_crop_and_paste(ch.get(), &in, &crop, &canvas, &paste, KES_VPC_INTERP_BILINEAR), KES_OK)
        << kes_last_error();
    ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, &crop, 50, 36, KES_VPC_INTERP_BILINEAR, nullptr, &expect), KES_OK);
    expect_pasted(canvas, expect, paste, 7);
}

TEST(VpcPaste, PasteRulesPerBoard) {
    Image in, canvas;
    make_nv12(96, 64, &in);
    ASSERT_EQ(kes_image_alloc(&canvas, nullptr, KES_PIXEL_NV12, 96, 64, 0, 0), KES_OK);  // strides 96: align16 ok
    Channel c310(KES_BOARD_310), c310b(KES_BOARD_310B);
    const kes_vpc_roi crop = {0, 0, 63, 47};
    const kes_vpc_roi left8 = {8, 0, 57, 35};
    EXPECT_EQ(kes_vpc_crop_and_paste(c310.get(), &in, &crop, &canvas, &left8, KES_VPC_INTERP_BILINEAR),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("multiple of 16"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_vpc_crop_and_paste(c310b.get(), &in, &crop, &canvas, &left8, KES_VPC_INTERP_BILINEAR), KES_OK)
        << kes_last_error();
    const kes_vpc_roi odd_top = {16, 3, 65, 38};
    EXPECT_EQ(kes_vpc_crop_and_paste(c310b.get(), &in, &crop, &canvas, &odd_top, KES_VPC_INTERP_BILINEAR),
              KES_ERR_INVALID_ARGUMENT);  // 4:2:0 needs even top
    const kes_vpc_roi outside = {16, 0, 97, 35};
    EXPECT_EQ(kes_vpc_crop_and_paste(c310b.get(), &in, &crop, &canvas, &outside, KES_VPC_INTERP_BILINEAR),
              KES_ERR_INVALID_ARGUMENT);
    Image nv21;
    ASSERT_EQ(kes_image_alloc(&nv21, nullptr, KES_PIXEL_NV21, 96, 64, 0, 0), KES_OK);
    EXPECT_EQ(kes_vpc_crop_and_paste(c310b.get(), &in, &crop, &nv21, &left8, KES_VPC_INTERP_BILINEAR),
              KES_ERR_INVALID_ARGUMENT);
    Image narrow;  // 310 output stride rule: width_stride multiple of 16
    ASSERT_EQ(kes_image_alloc(&narrow, nullptr, KES_PIXEL_NV12, 90, 64, 0, 0), KES_OK);
    const kes_vpc_roi p0 = {0, 0, 49, 35};
    EXPECT_EQ(kes_vpc_crop_and_paste(c310.get(), &in, &crop, &narrow, &p0, KES_VPC_INTERP_BILINEAR),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("stride"), std::string::npos) << kes_last_error();
}

TEST(VpcPaste, LetterboxKeepsAspectRatioCentredAndFills) {
    Image in;
    make_nv12(160, 90, &in);  // 16:9
    Channel ch(KES_BOARD_310B);
    kes_vpc_letterbox_config cfg;
    kes_vpc_letterbox_config_init(&cfg);
    cfg.fill_y = 114;
    cfg.fill_u = cfg.fill_v = 114;
    Image out, expect;
    kes_vpc_roi area;
    ASSERT_EQ(kes_vpc_letterbox(ch.get(), &in, nullptr, 64, 64, &cfg, nullptr, &out, &area), KES_OK)
        << kes_last_error();
    // 160×90 into 64×64: width-bound, 64 × 36, centred at top (64 − 36) / 2 = 14.
    EXPECT_EQ(area.left, 0u);
    EXPECT_EQ(area.top, 14u);
    EXPECT_EQ(area.right, 63u);
    EXPECT_EQ(area.bottom, 49u);
    ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, nullptr, 64, 36, KES_VPC_INTERP_BILINEAR, nullptr, &expect), KES_OK);
    expect_pasted(out, expect, area, 114);

    cfg.align = KES_VPC_LETTERBOX_TOP_LEFT;
    Image tl;
    ASSERT_EQ(kes_vpc_letterbox(ch.get(), &in, nullptr, 64, 64, &cfg, nullptr, &tl, &area), KES_OK);
    EXPECT_EQ(area.top, 0u);
    EXPECT_EQ(area.bottom, 35u);
}

TEST(VpcPaste, LetterboxOn310AlignsTheLeftEdgeTo16) {
    Image in;
    make_nv12(90, 160, &in);  // portrait: height-bound
    Channel ch(KES_BOARD_310);
    Image out;
    kes_vpc_roi area;
    ASSERT_EQ(kes_vpc_letterbox(ch.get(), &in, nullptr, 128, 128, nullptr, nullptr, &out, &area), KES_OK)
        << kes_last_error();
    // 90×160 into 128×128: 72 × 128; centred left (128 − 72) / 2 = 28 → 16 on 310.
    EXPECT_EQ(area.left, 16u);
    EXPECT_EQ(area.right - area.left + 1, 72u);
    EXPECT_EQ(area.top, 0u);
    EXPECT_EQ(out.row(0, 5)[0], 0);  // default fill: black
    EXPECT_EQ(out.row(1, 5)[0], 128);
    EXPECT_EQ(out.row(0, 5)[127], 0);
}

TEST(VpcPaste, BatchCropMatchesSingleCropsAcrossImages) {
    Image a, b;
    make_nv12(96, 64, &a);
    make_nv12(128, 80, &b, KES_PIXEL_NV12);
    const kes_image images[2] = {a, b};
    Channel ch(KES_BOARD_310);
    const kes_vpc_batch_roi rois[3] = {
        {0, {0, 0, 31, 31}, 32, 32}, {1, {10, 20, 73, 59}, 40, 24}, {0, {32, 16, 95, 63}, 16, 12}};
    kes_image outs[3];
    ASSERT_EQ(kes_vpc_batch_crop(ch.get(), images, 2, rois, 3, KES_VPC_INTERP_BILINEAR, nullptr, outs), KES_OK)
        << kes_last_error();
    for (int i = 0; i < 3; ++i) {
        Image one;
        ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &images[rois[i].image_index], &rois[i].roi, rois[i].out_width,
                                      rois[i].out_height, KES_VPC_INTERP_BILINEAR, nullptr, &one),
                  KES_OK);
        EXPECT_EQ(outs[i].width_stride, one.width_stride);
        for (uint32_t r = 0; r < one.height; ++r)
            ASSERT_EQ(0, std::memcmp(static_cast<uint8_t*>(outs[i].data) + r * outs[i].width_stride, one.row(0, r),
                                     one.width));
        kes_image_release(&outs[i]);
    }
}

TEST(VpcPaste, BatchCropIsAllOrNothing) {
    Image a;
    make_nv12(96, 64, &a);
    const kes_image images[1] = {a};
    Channel ch(KES_BOARD_310);
    // The second ROI breaks the 310 parity rule: nothing is allocated, the message names rois[1].
    const kes_vpc_batch_roi rois[2] = {{0, {0, 0, 31, 31}, 32, 32}, {0, {1, 0, 32, 31}, 32, 32}};
    kes_image outs[2];
    EXPECT_EQ(kes_vpc_batch_crop(ch.get(), images, 1, rois, 2, KES_VPC_INTERP_BILINEAR, nullptr, outs),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("rois[1]"), std::string::npos) << kes_last_error();
    EXPECT_EQ(outs[0].data, nullptr);
    const kes_vpc_batch_roi bad_index[1] = {{3, {0, 0, 31, 31}, 32, 32}};
    EXPECT_EQ(kes_vpc_batch_crop(ch.get(), images, 1, bad_index, 1, KES_VPC_INTERP_BILINEAR, nullptr, outs),
              KES_ERR_INVALID_ARGUMENT);
    // More than BATCH_ROI_MAX_SIZE (256).
    std::vector<kes_vpc_batch_roi> many(257, kes_vpc_batch_roi{0, {0, 0, 31, 31}, 32, 32});
    std::vector<kes_image> many_out(257);
    EXPECT_EQ(
        kes_vpc_batch_crop(ch.get(), images, 1, many.data(), 257, KES_VPC_INTERP_BILINEAR, nullptr, many_out.data()),
        KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("256"), std::string::npos) << kes_last_error();
    // Exactly 256 is accepted.
    ASSERT_EQ(
        kes_vpc_batch_crop(ch.get(), images, 1, many.data(), 256, KES_VPC_INTERP_BILINEAR, nullptr, many_out.data()),
        KES_OK)
        << kes_last_error();
    for (int i = 0; i < 256; ++i) kes_image_release(&many_out[size_t(i)]);
}
