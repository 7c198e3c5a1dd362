// The two-stage pipeline's geometry end to end, public APIs only (detect.h, warp.h): a frame with dots at
// known places, a "palm detection" whose keypoints point the hand sideways, the MediaPipe hand region
// from it (kes_detect_roi_from_detection), the rotated crop (kes_warp_matrix_from_rect + kes_warp_affine),
// a stand-in landmark model that finds each dot's centroid in the crop, and kes_detect_landmarks_decode
// through the crop's matrix: every dot must come back where it was drawn. A half-pixel slip in either
// module's coordinate convention, a rotation the wrong way or a transposed matrix moves them by pixels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kestrel/kestrel.h"

namespace {

constexpr uint32_t kW = 320, kH = 240, kCrop = 224;
constexpr double kPi = 3.14159265358979323846;

struct Dot {
    float x, y;  // source pixels (continuous: pixel i spans [i, i + 1))
};

// A dark NV12 frame with a soft round dot (radius ~2.5 px) centred at each point.
std::vector<uint8_t> frame_with_dots(const std::vector<Dot>& dots, kes_image* img) {
    size_t size = 0;
    EXPECT_EQ(kes_image_buffer_size(KES_PIXEL_NV12, kW, kH, &size), KES_OK);
    std::vector<uint8_t> bytes(size, 128);
    for (uint32_t y = 0; y < kH; ++y)
        for (uint32_t x = 0; x < kW; ++x) {
            double v = 16;
            for (const Dot& d : dots) {
                const double r2 = std::pow(x + 0.5 - d.x, 2) + std::pow(y + 0.5 - d.y, 2);
                v += 220 * std::exp(-r2 / (2 * 1.5 * 1.5));
            }
            bytes[size_t(y) * kW + x] = uint8_t(std::min(255.0, v + 0.5));
        }
    EXPECT_EQ(kes_image_wrap(img, KES_PIXEL_NV12, kW, kH, kW, kH, bytes.data(), size), KES_OK) << kes_last_error();
    return bytes;
}

// The stand-in landmark model: the brightness-weighted centroid (above the background) of the crop's
// pixels within 12 px of `guess`, in crop pixels (continuous), as MediaPipe's landmark tensors give.
void centroid(const kes_image& crop, float gx, float gy, float* out) {
    kes_image_plane p;
    ASSERT_EQ(kes_image_get_plane(&crop, 0, &p), KES_OK);
    double sx = 0, sy = 0, sw = 0;
    for (uint32_t y = 0; y < p.rows; ++y)
        for (uint32_t x = 0; x < p.row_bytes; ++x) {
            if (std::hypot(x + 0.5 - gx, y + 0.5 - gy) > 12) continue;
            const double w = std::max(0, int(p.data[size_t(y) * p.stride + x]) - 16);
            sx += w * (x + 0.5), sy += w * (y + 0.5), sw += w;
        }
    ASSERT_GT(sw, 0) << "no dot near (" << gx << ", " << gy << ") in the crop";
    out[0] = float(sx / sw);
    out[1] = float(sy / sw);
    out[2] = 0;
}

TEST(RotatedLandmarks, DotsComeBackWhereTheyWereDrawn) {
    // A hand lying on its side, fingers to the right: wrist (keypoint 0) at (120, 130), the middle finger's
    // base (keypoint 2) at (170, 110). The dots are where landmarks would be: around the palm and out along
    // the fingers, inside the region MediaPipe crops (2.6 × the palm box, shifted towards the fingers).
    const std::vector<Dot> dots = {{120.3f, 130.6f}, {170.f, 110.f}, {150.5f, 150.25f}, {200.7f, 95.4f},
                                   {190.f, 140.f},   {140.f, 100.f}, {215.25f, 125.75f}};
    kes_image img;
    const std::vector<uint8_t> keep = frame_with_dots(dots, &img);

    kes_detection palm;
    std::memset(&palm, 0, sizeof palm);
    palm.x0 = 115, palm.y0 = 95, palm.x1 = 175, palm.y1 = 145, palm.score = 0.9f;
    palm.num_keypoints = 3;
    const float kps[3][2] = {{120, 130}, {150, 120}, {170, 110}};
    std::memcpy(palm.keypoints, kps, sizeof kps);
    kes_detect_roi_config rc;
    kes_detect_roi_config_init(&rc);
    rc.rotate = 1;
    rc.start_keypoint = 0;
    rc.end_keypoint = 2;
    rc.target_angle = float(kPi / 2);
    rc.scale_x = rc.scale_y = 2.6f;
    rc.shift_y = -0.5f;
    rc.square = KES_DETECT_ROI_SQUARE_LONG;
    kes_detect_rect rect;
    ASSERT_EQ(kes_detect_roi_from_detection(&rc, &palm, &rect), KES_OK) << kes_last_error();
    // Fingers point right and a little up (atan2(20, 50) above the x axis): turned clockwise by 90° less that.
    EXPECT_NEAR(rect.rotation, kPi / 2 - std::atan2(20.0, 50.0), 1e-5);

    kes_warp_matrix m;
    ASSERT_EQ(kes_warp_matrix_from_rect(rect.cx, rect.cy, rect.width, rect.height, rect.rotation, kCrop, kCrop, &m),
              KES_OK);
    kes_warp_matrix inv;
    ASSERT_EQ(kes_warp_matrix_invert(&m, &inv), KES_OK);
    kes_dvpp_channel_config cc;
    kes_dvpp_channel_config_init(&cc);
    cc.board_profile = kes_board_get_profile(KES_BOARD_HOST);
    kes_dvpp_channel* ch = nullptr;
    ASSERT_EQ(kes_dvpp_channel_create(&cc, &ch), KES_OK) << kes_last_error();
    kes_image crop;
    ASSERT_EQ(kes_warp_affine(ch, &img, &m, kCrop, kCrop, nullptr, nullptr, &crop), KES_OK) << kes_last_error();

    // The landmark tensor: each dot found in the crop near where the inverse matrix puts it.
    std::vector<float> tensor(dots.size() * 3);
    for (size_t i = 0; i < dots.size(); ++i) {
        float gx = 0, gy = 0;
        ASSERT_EQ(kes_warp_matrix_apply(&inv, dots[i].x, dots[i].y, &gx, &gy), KES_OK);
        ASSERT_TRUE(gx > 12 && gy > 12 && gx < kCrop - 12 && gy < kCrop - 12) << "dot " << i << " not in the crop";
        centroid(crop, gx, gy, &tensor[3 * i]);
        // The crop magnifies the region's 2.6 × 60 = 156 source pixels to 224: the dot's centre sits
        // where the inverse map says, to a few hundredths of a crop pixel (measured: under 0.01).
        EXPECT_NEAR(tensor[3 * i], gx, 0.08) << "dot " << i;
        EXPECT_NEAR(tensor[3 * i + 1], gy, 0.08) << "dot " << i;
    }
    kes_detect_landmark_config lc;
    kes_detect_landmark_config_init(&lc);
    lc.num_landmarks = uint32_t(dots.size());
    std::vector<kes_landmark> out(dots.size());
    ASSERT_EQ(kes_detect_landmarks_decode(&lc, tensor.data(), tensor.size(), m.m, out.data(), out.size()), KES_OK)
        << kes_last_error();
    for (size_t i = 0; i < dots.size(); ++i) {
        EXPECT_NEAR(out[i].x, dots[i].x, 0.05) << "dot " << i;
        EXPECT_NEAR(out[i].y, dots[i].y, 0.05) << "dot " << i;
    }
    kes_image_release(&crop);
    kes_dvpp_channel_destroy(ch);
}

}  // namespace
