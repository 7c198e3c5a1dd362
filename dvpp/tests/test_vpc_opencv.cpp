// VPC against real OpenCV (host builds with libopencv-dev only): resize bit-exact with cv::resize
// INTER_LINEAR / INTER_NEAREST on the luma plane (CV_8UC1) and the chroma plane (CV_8UC2), over many
// sizes; the test reference (test_vpc_reference.hpp) against cv::resize too.
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "dvpp_test_util.hpp"
#include "test_vpc_reference.hpp"
#include "vpc_internal.hpp"

using namespace kes_test;

namespace {

RefPlane cv_resize(const RefPlane& s, uint32_t dw, uint32_t dh, int interp) {
    const cv::Mat src(int(s.h), int(s.w), CV_8UC(int(s.cn)), const_cast<uint8_t*>(s.px.data()));
    cv::Mat dst;
    cv::resize(src, dst, cv::Size(int(dw), int(dh)), 0, 0, interp);
    RefPlane d{dw, dh, s.cn, {}};
    for (int r = 0; r < dst.rows; ++r) d.px.insert(d.px.end(), dst.ptr<uint8_t>(r), dst.ptr<uint8_t>(r) + dw * s.cn);
    return d;
}

RefPlane module_resize(const RefPlane& s, uint32_t dw, uint32_t dh, kes::vpc::Filter f) {
    RefPlane d{dw, dh, s.cn, std::vector<uint8_t>(size_t(dw) * dh * s.cn)};
    kes::vpc::resize_plane({s.px.data(), size_t(s.w) * s.cn, s.w, s.h}, s.cn, d.px.data(), size_t(dw) * s.cn, dw, dh,
                           f);
    return d;
}

int first_diff(const RefPlane& a, const RefPlane& b) {
    for (size_t i = 0; i < a.px.size(); ++i)
        if (a.px[i] != b.px[i]) return int(i);
    return -1;
}

}  // namespace

TEST(VpcOpenCv, ResizeIsBitExactWithCvResizeOverManySizes) {
    cv::setNumThreads(1);
    std::mt19937 rng(42);
    int cases = 0;
    auto run = [&](uint32_t sw, uint32_t sh, uint32_t dw, uint32_t dh, uint32_t cn) {
        const RefPlane s = random_plane(sw, sh, cn, rng());
        for (int interp : {cv::INTER_LINEAR, cv::INTER_NEAREST}) {
            const auto f = interp == cv::INTER_LINEAR ? kes::vpc::Filter::bilinear : kes::vpc::Filter::nearest;
            const RefPlane want = cv_resize(s, dw, dh, interp);
            const RefPlane got = module_resize(s, dw, dh, f);
            const int at = first_diff(got, want);
            ASSERT_EQ(at, -1) << sw << "x" << sh << " -> " << dw << "x" << dh << " cn " << cn << " interp " << interp
                              << " element " << at << " got " << int(got.px[at]) << " want " << int(want.px[at]);
            const RefPlane ref =
                interp == cv::INTER_LINEAR ? ref_resize_linear(s, dw, dh) : ref_resize_nearest(s, dw, dh);
            ASSERT_EQ(first_diff(ref, want), -1) << "test reference disagrees with OpenCV " << sw << "x" << sh << " -> "
                                                 << dw << "x" << dh << " cn " << cn;
            ++cases;
        }
    };
    // Fixed shapes: 1080p → model inputs, exact 2×, ratios at the 1/32 and 16 limits, odd sizes.
    for (uint32_t cn : {1u, 2u}) {
        run(1920 / cn, 1080 / cn, 416 / cn, 416 / cn, cn);
        run(1920 / cn, 1080 / cn, 224 / cn, 224 / cn, cn);
        run(640, 480, 320, 240, cn);
        run(640, 480, 20, 15, cn);  // 1/32
        run(20, 15, 320, 240, cn);  // 16
        run(641, 479, 21, 17, cn);  // just inside 1/32 with odd sizes
        run(21, 17, 335, 271, cn);  // just under 16
        run(31, 29, 29, 31, cn);    // near 1
        run(1, 1, 16, 16, cn);
        run(37, 23, 37, 40, cn);  // one axis unchanged
    }
    // Random shapes within the VPC ratio range [1/32, 16] per axis.
    for (int i = 0; i < 200; ++i) {
        const uint32_t cn = 1 + rng() % 2;
        const uint32_t sw = 1 + rng() % 400, sh = 1 + rng() % 300;
        auto pick = [&](uint32_t s) {
            const uint32_t lo = std::max(1u, (s + 31) / 32), hi = std::min(s * 16, 600u);
            return lo + rng() % (hi - lo + 1);
        };
        run(sw, sh, pick(sw), pick(sh), cn);
    }
    EXPECT_GT(cases, 400);
}

TEST(VpcOpenCv, Nv12CropResizeMatchesCvResizeOnThePlanes) {
    cv::setNumThreads(1);
    const uint32_t w = 1280, h = 720;
    Image in;
    ASSERT_EQ(kes_image_alloc(&in, nullptr, KES_PIXEL_NV12, w, h, 0, 0), KES_OK);
    const RefPlane y = random_plane(w, h, 1, 11), uv = random_plane(w / 2, h / 2, 2, 12);
    kes_image_plane py, pc;
    ASSERT_EQ(kes_image_get_plane(&in, 0, &py), KES_OK);
    ASSERT_EQ(kes_image_get_plane(&in, 1, &pc), KES_OK);
    for (uint32_t r = 0; r < h; ++r) std::memcpy(py.data + r * py.stride, &y.px[r * w], w);
    for (uint32_t r = 0; r < h / 2; ++r) std::memcpy(pc.data + r * pc.stride, &uv.px[r * w], w);
    Channel ch(KES_BOARD_310B);
    const kes_vpc_roi roi = {100, 50, 1099, 649};  // 1000 × 600
    const cv::Mat ym(int(h), int(w), CV_8UC1, py.data, py.stride),
        cm(int(h / 2), int(w / 2), CV_8UC2, pc.data, pc.stride);
    for (auto [f, interp] :
         {std::pair{KES_VPC_INTERP_BILINEAR, cv::INTER_LINEAR}, {KES_VPC_INTERP_NEAREST, cv::INTER_NEAREST}}) {
        Image out;
        ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, &roi, 416, 416, f, nullptr, &out), KES_OK) << kes_last_error();
        cv::Mat wy, wc;
        cv::resize(ym(cv::Rect(100, 50, 1000, 600)), wy, cv::Size(416, 416), 0, 0, interp);
        cv::resize(cm(cv::Rect(50, 25, 500, 300)), wc, cv::Size(208, 208), 0, 0, interp);
        for (int r = 0; r < 416; ++r) ASSERT_EQ(0, std::memcmp(out.row(0, r), wy.ptr(r), 416)) << r;
        for (int r = 0; r < 208; ++r) ASSERT_EQ(0, std::memcmp(out.row(1, r), wc.ptr(r), 416)) << r;
    }
}

// OpenCV's NV12/NV21/I420 → RGB is BT.601 narrow range with nearest chroma; its own fixed point
// rounds its constants to 3 digits (1.164, 1.596, ...), so the two may differ by a little. OpenCV
// also clamps Y − 16 at 0, so the data stays in studio range (Y 16..235, U/V 16..240).
TEST(VpcOpenCv, Yuv420ToRgbAgreesWithCvtColorBt601Narrow) {
    const uint32_t w = 128, h = 64;
    Channel ch(KES_BOARD_310B);
    std::mt19937 rng(8);
    for (auto [fmt, code] : {std::pair{KES_PIXEL_NV12, int(cv::COLOR_YUV2RGB_NV12)},
                             {KES_PIXEL_NV21, int(cv::COLOR_YUV2RGB_NV21)},
                             {KES_PIXEL_I420, int(cv::COLOR_YUV2RGB_I420)}}) {
        Image in;
        ASSERT_EQ(kes_image_alloc(&in, nullptr, fmt, w, h, 0, 0), KES_OK);
        std::vector<uint8_t> packed;  // tight planes, as cv::cvtColor takes them (w × h·3/2)
        for (uint32_t p = 0; p < kes_pixel_format_planes(fmt); ++p) {
            kes_image_plane pl;
            ASSERT_EQ(kes_image_get_plane(&in, p, &pl), KES_OK);
            for (uint32_t r = 0; r < pl.rows; ++r)
                for (uint32_t x = 0; x < pl.row_bytes; ++x) {
                    pl.data[r * pl.stride + x] = uint8_t(16 + rng() % (p == 0 ? 220 : 225));
                    packed.push_back(pl.data[r * pl.stride + x]);
                }
        }
        const cv::Mat src(int(h * 3 / 2), int(w), CV_8UC1, packed.data());
        cv::Mat want;
        cv::cvtColor(src, want, code);
        Image out;
        ASSERT_EQ(kes_vpc_convert_color(ch.get(), &in, KES_PIXEL_RGB888, KES_VPC_CSC_BT601_NARROW, nullptr, &out),
                  KES_OK)
            << kes_last_error();
        int worst = 0;
        for (uint32_t r = 0; r < h; ++r)
            for (uint32_t x = 0; x < w * 3; ++x)
                worst = std::max(worst, std::abs(out.row(0, r)[x] - want.ptr(int(r))[x]));
        EXPECT_LE(worst, 2) << kes_pixel_format_name(fmt);
    }
}

// OpenCV's RGB → YCrCb is BT.601 full range (JPEG), 4:4:4: our luma must agree, and our chroma on
// flat 2×2 blocks (where the block mean is the pixel).
TEST(VpcOpenCv, RgbToNv12AgreesWithCvtColorYCrCb) {
    const uint32_t w = 64, h = 32;
    Image rgb;
    ASSERT_EQ(kes_image_alloc(&rgb, nullptr, KES_PIXEL_RGB888, w, h, 0, 0), KES_OK);
    kes_image_plane p;
    ASSERT_EQ(kes_image_get_plane(&rgb, 0, &p), KES_OK);
    std::mt19937 rng(21);
    for (uint32_t by = 0; by < h / 2; ++by)
        for (uint32_t bx = 0; bx < w / 2; ++bx) {
            const uint8_t c[3] = {uint8_t(rng()), uint8_t(rng()), uint8_t(rng())};
            for (uint32_t y = 2 * by; y < 2 * by + 2; ++y)
                for (uint32_t x = 2 * bx; x < 2 * bx + 2; ++x) std::memcpy(p.data + y * p.stride + 3 * x, c, 3);
        }
    const cv::Mat src(int(h), int(w), CV_8UC3, p.data, p.stride);
    cv::Mat ycrcb;
    cv::cvtColor(src, ycrcb, cv::COLOR_RGB2YCrCb);
    Channel ch(KES_BOARD_310B);
    Image out;
    ASSERT_EQ(kes_vpc_convert_color(ch.get(), &rgb, KES_PIXEL_NV12, KES_VPC_CSC_BT601_WIDE, nullptr, &out), KES_OK);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            const uint8_t* o = ycrcb.ptr(int(y)) + 3 * x;
            ASSERT_LE(std::abs(out.row(0, y)[x] - o[0]), 1) << x << "," << y;
            const uint8_t* c = out.row(1, y / 2) + (x / 2) * 2;
            ASSERT_LE(std::abs(c[0] - o[2]), 1) << "Cb " << x << "," << y;
            ASSERT_LE(std::abs(c[1] - o[1]), 1) << "Cr " << x << "," << y;
        }
}
