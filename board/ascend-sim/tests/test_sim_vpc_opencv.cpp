// The simulator's VPC (libacl_dvpp.so's acldvppVpcCropResizeAsync, through the C API in DVPP memory)
// against OpenCV's own cv::resize: the 310B promises "result identical to OpenCV-3.4.2" for its bilinear
// and nearest, so the luma ROI must equal cv::resize of the luma plane (CV_8UC1) and the chroma must
// equal cv::resize of the (U, V) pairs under the ROI as a CV_8UC2 picture (pair columns left/2 ..
// right/2, rows top/2 .. bottom/2) to out_w/2 x out_h/2 — bit for bit, on many random sizes, ROIs and
// scales (1/32 .. 16, down and up, odd and even, exactly 2x, equal sizes), both filters, on each SoC.
// Host builds with OpenCV only (board/ascend-sim/CMakeLists.txt).
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdio>
#include <random>

#include "sim_dvpp_fixture.hpp"

namespace {

struct Plane {
    uint32_t x, y, w, h;
};

// The pairs under an inclusive luma ROI.
Plane pairs_under(uint32_t left, uint32_t right, uint32_t top, uint32_t bottom) {
    return Plane{left / 2, top / 2, right / 2 - left / 2 + 1, bottom / 2 - top / 2 + 1};
}

// One random crop-and-resize: the source picture, the ROI, the output and the interpolation.
struct Case {
    uint32_t w, h, ws, hs;
    uint32_t left, right, top, bottom;
    uint32_t ow, oh, ows, ohs;
    uint32_t interpolation;
    bool in_nv21, out_nv21, binary;
    std::string text() const {
        return std::to_string(w) + "x" + std::to_string(h) + " ROI (" + std::to_string(left) + ".." +
               std::to_string(right) + ", " + std::to_string(top) + ".." + std::to_string(bottom) + ") -> " +
               std::to_string(ow) + "x" + std::to_string(oh) + " interpolation " + std::to_string(interpolation);
    }
};

// A size within [1/32, 16] of `s`, even and >= `min`; `kind` picks equal, exactly half, down or up.
uint32_t out_size(std::mt19937& rng, uint32_t s, uint32_t min, uint32_t max, int kind) {
    const uint32_t lo = std::max(min, ((s + 31) / 32 + 1) & ~1u), hi = std::min(max, s * 16) & ~1u;
    uint32_t d = 0;
    switch (kind) {
        case 0: d = s & ~1u; break;  // (nearly) equal
        case 1: d = s / 2; break;    // exactly half when s is even
        case 2: d = lo + uint32_t(rng()) % std::max(1u, std::min(s, hi) - lo + 1); break;        // down
        default: d = s + uint32_t(rng()) % std::max(1u, std::min({hi, 16 * s, 2048u}) - s + 1);  // up
    }
    d &= ~1u;
    return std::min(std::max(d, lo), hi);
}

class SimVpcOpenCv : public SimDvpp {
protected:
    Case random_case(std::mt19937& rng) const {
        Case c{};
        const bool big = uint32_t(rng()) % 16 == 0;
        c.w = (10 + uint32_t(rng()) % (big ? 1200 : 300)) & ~1u;
        c.h = (6 + uint32_t(rng()) % (big ? 700 : 200)) & ~1u;
        c.w = std::max(c.w, 10u), c.h = std::max(c.h, 6u);
        c.ws = v100() ? std::max(align(c.w, 16) + 16 * (uint32_t(rng()) % 2), 32u) : c.w + uint32_t(rng()) % 3 * 2;
        c.hs = c.h + 2 * (uint32_t(rng()) % 2);
        // An ROI of at least 10x6 inside; on 310 with even left/top and odd right/bottom.
        const int kind = int(uint32_t(rng()) % 8);
        // Mostly the same kind on both axes (2x exactly on both needs it), sometimes mixed.
        const int kind_y = uint32_t(rng()) % 4 == 0 ? int(uint32_t(rng()) % 4) : kind;
        uint32_t rw = 10 + uint32_t(rng()) % (c.w - 9), rh = 6 + uint32_t(rng()) % (c.h - 5);
        if (kind == 1) rw &= ~1u;  // an exact half needs an even ROI
        if (kind_y == 1) rh &= ~1u;
        c.left = uint32_t(rng()) % (c.w - rw + 1), c.top = uint32_t(rng()) % (c.h - rh + 1);
        c.right = c.left + rw - 1, c.bottom = c.top + rh - 1;
        if (v100()) {
            c.left &= ~1u, c.top &= ~1u, c.right |= 1u, c.bottom |= 1u;
        }
        const uint32_t roi_w = c.right - c.left + 1, roi_h = c.bottom - c.top + 1;
        c.ow = out_size(rng, roi_w, 10, 4096, kind);
        c.oh = out_size(rng, roi_h, 6, v100() ? 4096 : 8192, kind_y);
        c.ows = v100() ? std::max(align(c.ow, 16), 32u) : c.ow;
        c.ohs = c.oh;
        const uint32_t interpolations = v100() ? 3 : 6;  // 310: 3/4 are refused (tested apart)
        c.interpolation = uint32_t(rng()) % interpolations;
        c.in_nv21 = uint32_t(rng()) % 4 == 0;
        c.out_nv21 = uint32_t(rng()) % 3 == 0 ? !c.in_nv21 : c.in_nv21;
        c.binary = uint32_t(rng()) % 5 == 0;  // 0/255 only: the saturating corners of the arithmetic
        return c;
    }

    // Runs one case through the simulator and counts the samples that differ from cv::resize; adds the
    // number of plane comparisons made to *compared.
    size_t run(const Case& c, std::mt19937& rng, acl::DvppChannelDesc* ch, acl::DvppResizeConfig* config,
               size_t* compared) {
        std::vector<uint8_t> src(size_t(c.ws) * c.hs * 3 / 2);
        for (uint8_t& v : src) v = c.binary ? uint8_t(uint32_t(rng()) % 2 ? 255 : 0) : uint8_t(uint32_t(rng()));
        Buffer in(api, rt, src.size());
        in.upload(src);
        const size_t out_bytes = size_t(c.ows) * c.ohs * 3 / 2;
        Buffer out(api, rt, out_bytes, 0x5A);
        Pic pin(api, in.p, uint32_t(src.size()), c.in_nv21 ? acl::kDvppNv21 : acl::kDvppNv12, c.w, c.h, c.ws, c.hs);
        Pic pout(api, out.p, uint32_t(out_bytes), c.out_nv21 ? acl::kDvppNv21 : acl::kDvppNv12, c.ow, c.oh, c.ows,
                 c.ohs);
        Roi roi(api, c.left, c.right, c.top, c.bottom);
        EXPECT_EQ(vpc.acldvppSetResizeConfigInterpolation(config, c.interpolation), 0) << recent();
        EXPECT_EQ(vpc.acldvppVpcCropResizeAsync(ch, pin.d, pout.d, roi.r, config, stream), 0)
            << c.text() << ": " << recent();
        EXPECT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
        const std::vector<uint8_t> got = out.download();
        const int filter = c.interpolation == 2 || c.interpolation == 4 ? cv::INTER_NEAREST : cv::INTER_LINEAR;
        size_t diffs = 0;
        // Luma.
        const cv::Mat luma(int(c.bottom - c.top + 1), int(c.right - c.left + 1), CV_8UC1,
                           src.data() + size_t(c.top) * c.ws + c.left, c.ws);
        cv::Mat want;
        cv::resize(luma, want, cv::Size(int(c.ow), int(c.oh)), 0, 0, filter);
        for (uint32_t y = 0; y < c.oh; ++y) {
            for (uint32_t x = 0; x < c.ow; ++x) diffs += got[size_t(y) * c.ows + x] != want.at<uint8_t>(int(y), int(x));
        }
        // Chroma: the pairs under the ROI as a two-channel picture.
        const Plane p = pairs_under(c.left, c.right, c.top, c.bottom);
        const cv::Mat pairs(int(p.h), int(p.w), CV_8UC2,
                            src.data() + size_t(c.ws) * c.hs + size_t(p.y) * c.ws + 2 * p.x, c.ws);
        cv::resize(pairs, want, cv::Size(int(c.ow / 2), int(c.oh / 2)), 0, 0, filter);
        const bool swap = c.in_nv21 != c.out_nv21;
        const uint8_t* uv = got.data() + size_t(c.ows) * c.ohs;
        for (uint32_t y = 0; y < c.oh / 2; ++y) {
            for (uint32_t x = 0; x < c.ow / 2; ++x) {
                const cv::Vec2b w = want.at<cv::Vec2b>(int(y), int(x));
                diffs += uv[size_t(y) * c.ows + 2 * x] != w[swap ? 1 : 0];
                diffs += uv[size_t(y) * c.ows + 2 * x + 1] != w[swap ? 0 : 1];
            }
        }
        *compared += 2;
        return diffs;
    }
};

TEST_P(SimVpcOpenCv, CropResizeEqualsCvResizeOnLumaAndChromaPairs) {
    start();
    Channel ch(api);
    ASSERT_EQ(ch.created, 0) << recent();
    acl::DvppResizeConfig* config = api.acldvppCreateResizeConfig();
    std::mt19937 rng(v100() ? 310 : 3102);
    size_t compared = 0, failed_cases = 0, equal = 0, half = 0, nearest = 0;
    const int cases = 2000;
    for (int i = 0; i < cases; ++i) {
        const Case c = random_case(rng);
        const uint32_t roi_w = c.right - c.left + 1, roi_h = c.bottom - c.top + 1;
        equal += roi_w == c.ow && roi_h == c.oh;
        half += roi_w == 2 * c.ow && roi_h == 2 * c.oh;
        nearest += c.interpolation == 2 || c.interpolation == 4;
        const size_t diffs = run(c, rng, ch.d, config, &compared);
        if (diffs) {
            ADD_FAILURE() << c.text() << ": " << diffs << " samples differ from cv::resize";
            if (++failed_cases > 10) break;
        }
    }
    EXPECT_EQ(failed_cases, 0u);
    // The random cases cover the special paths: copies, exact halves, nearest.
    EXPECT_GT(equal, 50u);
    EXPECT_GT(half, 30u);
    EXPECT_GT(nearest, 300u);
    std::printf("%zu plane comparisons with cv::resize (%d crop-resizes), %zu cases differ\n", compared, cases,
                failed_cases);
    EXPECT_EQ(api.acldvppDestroyResizeConfig(config), 0);
}

// The 310's TensorFlow-like filters (3, 4) are not simulated: 200006, nothing queued.
TEST_P(SimVpcOpenCv, TensorFlowLikeFiltersOf310AreNotSimulated) {
    start();
    Channel ch(api);
    acl::DvppResizeConfig* config = api.acldvppCreateResizeConfig();
    Buffer in(api, rt, 64 * 32 * 3 / 2), out(api, rt, 32 * 16 * 3 / 2, 0x33);
    Pic pin(api, in.p, 64 * 32 * 3 / 2, acl::kDvppNv12, 64, 32, 64, 32);
    Pic pout(api, out.p, 32 * 16 * 3 / 2, acl::kDvppNv12, 32, 16, 32, 16);
    Roi roi(api, 0, 63, 0, 31);
    for (uint32_t interpolation : {3u, 4u}) {
        ASSERT_EQ(vpc.acldvppSetResizeConfigInterpolation(config, interpolation), 0) << recent();
        EXPECT_EQ(vpc.acldvppVpcCropResizeAsync(ch.d, pin.d, pout.d, roi.r, config, stream),
                  v100() ? acl::kFeatureUnsupported : 0)
            << interpolation;
        if (v100()) {
            EXPECT_NE(recent().find("not simulated"), std::string::npos) << recent();
        }
    }
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    if (v100()) {
        EXPECT_EQ(out.download(), std::vector<uint8_t>(32 * 16 * 3 / 2, 0x33));
    }
    EXPECT_EQ(api.acldvppDestroyResizeConfig(config), 0);
}

INSTANTIATE_TEST_SUITE_P(Sim, SimVpcOpenCv, testing::ValuesIn(kes_test::kSimBoards), kes_test::sim_board_name);

}  // namespace
