// VPC resize against the plain statement of OpenCV's algorithm (test_vpc_reference.hpp), which the
// host-only test_vpc_opencv.cpp checks against cv::resize itself. Runs on every build (also the
// emulated board, where the AVX2 path is absent and the scalar one is compared).
#include <string>

#include "dvpp_test_util.hpp"
#include "test_vpc_reference.hpp"
#include "vpc_internal.hpp"

using namespace kes_test;

namespace {

RefPlane module_resize(const RefPlane& s, uint32_t dw, uint32_t dh, kes::vpc::Filter f) {
    RefPlane d{dw, dh, s.cn, std::vector<uint8_t>(size_t(dw) * dh * s.cn)};
    kes::vpc::resize_plane({s.px.data(), size_t(s.w) * s.cn, s.w, s.h}, s.cn, d.px.data(), size_t(dw) * s.cn, dw, dh,
                           f);
    return d;
}

struct Case {
    uint32_t sw, sh, dw, dh;
};

// Up and down scales, odd sizes, exact 2×, ratios near 1/32 and 16, widths around the vector tails.
const Case kCases[] = {{64, 48, 32, 24}, {64, 48, 128, 96}, {63, 47, 17, 9},    {17, 9, 63, 47},    {320, 200, 10, 7},
                       {10, 6, 160, 96}, {33, 31, 32, 30},  {32, 30, 33, 31},   {100, 75, 1, 1},    {7, 5, 9, 200},
                       {250, 3, 31, 50}, {97, 41, 24, 24},  {640, 360, 20, 12}, {23, 29, 368, 464}, {41, 37, 41, 19},
                       {41, 37, 20, 37}, {36, 28, 18, 14},  {12, 10, 8, 5},     {1, 1, 5, 3},       {5, 1, 80, 2}};

}  // namespace

TEST(VpcReference, BilinearMatchesReferenceOnOneAndTwoChannels) {
    for (uint32_t cn : {1u, 2u, 3u})
        for (const Case& c : kCases) {
            const RefPlane s = random_plane(c.sw, c.sh, cn, c.sw * 131 + c.sh + cn);
            const RefPlane want = ref_resize_linear(s, c.dw, c.dh);
            const RefPlane got = module_resize(s, c.dw, c.dh, kes::vpc::Filter::bilinear);
            ASSERT_EQ(got.px, want.px) << c.sw << "x" << c.sh << " -> " << c.dw << "x" << c.dh << " cn " << cn;
        }
}

TEST(VpcReference, NearestMatchesReference) {
    for (uint32_t cn : {1u, 2u})
        for (const Case& c : kCases) {
            const RefPlane s = random_plane(c.sw, c.sh, cn, c.sw + c.sh * 7 + cn);
            ASSERT_EQ(module_resize(s, c.dw, c.dh, kes::vpc::Filter::nearest).px, ref_resize_nearest(s, c.dw, c.dh).px)
                << c.sw << "x" << c.sh << " -> " << c.dw << "x" << c.dh << " cn " << cn;
        }
}

TEST(VpcReference, VerticalStepIsOpenCvsVectorFormulaNotTheExactOne) {
    // 3×2 → 5×3, pixel (3, 2): cv::resize (Debian libopencv 4.6) gives 193 where the exact fixed-point
    // blend (h0·b0 + h1·b1 + 2^21) >> 22 gives 194 — OpenCV's vector step truncates first.
    const RefPlane s{3, 2, 1, {106, 152, 249, 131, 184, 200}};
    RefPlane got{5, 3, 1, std::vector<uint8_t>(15)};
    kes::vpc::resize_plane({s.px.data(), 3, 3, 2}, 1, got.px.data(), 5, 5, 3, kes::vpc::Filter::bilinear);
    EXPECT_EQ(got.px[2 * 5 + 3], 193);
    EXPECT_EQ(got.px, ref_resize_linear(s, 5, 3).px);
}

TEST(VpcReference, Nv12CropResizeOn310BMatchesReferencePerPlane) {
    // The public call: luma as one plane, chroma as 2-channel pairs, both from the ROI.
    const uint32_t w = 96, h = 64;
    Image in;
    ASSERT_EQ(kes_image_alloc(&in, nullptr, KES_PIXEL_NV12, w, h, 0, 0), KES_OK);
    const RefPlane y = random_plane(w, h, 1, 5), uv = random_plane(w / 2, h / 2, 2, 6);
    kes_image_plane py, pc;
    ASSERT_EQ(kes_image_get_plane(&in, 0, &py), KES_OK);
    ASSERT_EQ(kes_image_get_plane(&in, 1, &pc), KES_OK);
    for (uint32_t r = 0; r < h; ++r) std::memcpy(py.data + r * py.stride, &y.px[r * w], w);
    for (uint32_t r = 0; r < h / 2; ++r) std::memcpy(pc.data + r * pc.stride, &uv.px[r * w], w);
    Channel ch(KES_BOARD_310B);
    const kes_vpc_roi roi = {6, 4, 85, 59};  // 80 × 56
    for (auto f : {KES_VPC_INTERP_BILINEAR, KES_VPC_INTERP_NEAREST, KES_VPC_INTERP_DEFAULT}) {
        Image out;
        ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, &roi, 50, 36, f, nullptr, &out), KES_OK) << kes_last_error();
        RefPlane ys{80, 56, 1, {}}, cs{40, 28, 2, {}};
        for (uint32_t r = 0; r < 56; ++r)
            for (uint32_t x = 0; x < 80; ++x) ys.px.push_back(y.at(6 + x, 4 + r, 0));
        for (uint32_t r = 0; r < 28; ++r)
            for (uint32_t x = 0; x < 40; ++x)
                for (uint32_t c = 0; c < 2; ++c) cs.px.push_back(uv.at(3 + x, 2 + r, c));
        const bool nearest = f == KES_VPC_INTERP_NEAREST;
        const RefPlane wy = nearest ? ref_resize_nearest(ys, 50, 36) : ref_resize_linear(ys, 50, 36);
        const RefPlane wc = nearest ? ref_resize_nearest(cs, 25, 18) : ref_resize_linear(cs, 25, 18);
        for (uint32_t r = 0; r < 36; ++r) ASSERT_EQ(0, std::memcmp(out.row(0, r), &wy.px[r * 50], 50)) << f << " " << r;
        for (uint32_t r = 0; r < 18; ++r) ASSERT_EQ(0, std::memcmp(out.row(1, r), &wc.px[r * 50], 50)) << f << " " << r;
    }
}
