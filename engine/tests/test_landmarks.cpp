// test_landmarks.cpp — kestrel/detect.h's rotated regions (MediaPipe's DetectionsToRects /
// AlignmentPointsRects + RectTransformation) and landmark decoding, against cases computed by hand
// from MediaPipe's formulas: upright, turned and upside-down hands and poses, the shift along the
// rectangle's own axes, squaring, the angle's normalisation, the matrix map back, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kes/struct_size.hpp"
#include "kestrel/detect.h"
#include "kestrel/status.h"
#include "struct_size_check.hpp"

namespace {

constexpr float kPi = 3.14159265358979323846f;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

kes_detection detection(float x0, float y0, float x1, float y1, std::initializer_list<std::pair<float, float>> kps) {
    kes_detection d;
    std::memset(&d, 0, sizeof d);
    d.x0 = x0, d.y0 = y0, d.x1 = x1, d.y1 = y1, d.score = 0.9f;
    for (const auto& k : kps) {
        d.keypoints[d.num_keypoints][0] = k.first;
        d.keypoints[d.num_keypoints][1] = k.second;
        ++d.num_keypoints;
    }
    return d;
}

// MediaPipe's palm_detection_detection_to_roi and pose_detection_to_roi, as the header lists them.
kes_detect_roi_config hands_config() {
    kes_detect_roi_config c;
    kes_detect_roi_config_init(&c);
    c.rotate = 1;
    c.start_keypoint = 0;
    c.end_keypoint = 2;
    c.target_angle = kPi / 2;
    c.scale_x = c.scale_y = 2.6f;
    c.shift_y = -0.5f;
    c.square = KES_DETECT_ROI_SQUARE_LONG;
    return c;
}

kes_detect_roi_config pose_config() {
    kes_detect_roi_config c;
    kes_detect_roi_config_init(&c);
    c.size_from = KES_DETECT_ROI_SIZE_KEYPOINTS;
    c.rotate = 1;
    c.start_keypoint = 0;
    c.end_keypoint = 1;
    c.target_angle = kPi / 2;
    c.scale_x = c.scale_y = 1.25f;
    c.square = KES_DETECT_ROI_SQUARE_LONG;
    return c;
}

void expect_rect(const kes_detect_rect& r, float cx, float cy, float w, float h, float rot) {
    EXPECT_NEAR(r.cx, cx, 1e-3f);
    EXPECT_NEAR(r.cy, cy, 1e-3f);
    EXPECT_NEAR(r.width, w, 1e-3f);
    EXPECT_NEAR(r.height, h, 1e-3f);
    EXPECT_NEAR(r.rotation, rot, 1e-5f);
}

kes_detect_rect roi(const kes_detect_roi_config* c, const kes_detection& d) {
    kes_detect_rect r{};
    EXPECT_EQ(kes_detect_roi_from_detection(c, &d, &r), KES_OK) << kes_last_error();
    return r;
}

TEST(DetectRoi, DefaultsGiveTheBox) {
    const kes_detection d = detection(10, 20, 50, 100, {});
    expect_rect(roi(nullptr, d), 30, 60, 40, 80, 0);
    kes_detect_roi_config c;
    kes_detect_roi_config_init(&c);
    c.square = KES_DETECT_ROI_SQUARE_SHORT;
    c.scale_x = 2;
    c.scale_y = 0.5f;
    expect_rect(roi(&c, d), 30, 60, 80, 20, 0);
    // Unrotated shifts move by the size before squaring: x by 0.25·40, y by −0.5·80.
    c.square = KES_DETECT_ROI_SQUARE_LONG;
    c.scale_x = c.scale_y = 1;
    c.shift_x = 0.25f;
    c.shift_y = -0.5f;
    expect_rect(roi(&c, d), 40, 20, 80, 80, 0);
}

TEST(DetectRoi, PalmPointingUpRightAndDown) {
    const kes_detect_roi_config c = hands_config();
    // Box (60, 80)-(140, 220): centre (100, 150), 80 × 140. Wrist (kp 0) below the middle finger's base (kp 2):
    // the hand is upright, rotation π/2 − atan2(100, 0) = 0, the shift −0.5·140 moves the centre up by 70,
    // and the square side is 140 · 2.6 = 364.
    kes_detection up = detection(60, 80, 140, 220, {{100, 200}, {0, 0}, {100, 100}});
    expect_rect(roi(&c, up), 100, 80, 364, 364, 0);
    // Fingers to the right: atan2(0, 100) = 0, rotation π/2 (turned clockwise); "up" in the hand's frame is
    // R(π/2)·(0, −70) = (70, 0): the centre moves right.
    kes_detection right = detection(60, 80, 140, 220, {{100, 200}, {0, 0}, {200, 200}});
    expect_rect(roi(&c, right), 170, 150, 364, 364, kPi / 2);
    // Fingers down: π/2 − atan2(−100, 0) = π, normalised into [−π, π) to −π; the shift moves down.
    kes_detection down = detection(60, 80, 140, 220, {{100, 200}, {0, 0}, {100, 300}});
    expect_rect(roi(&c, down), 100, 220, 364, 364, -kPi);
    // 45° to the upper left: atan2(50, −50) = 3π/4, rotation −π/4; shift R(−π/4)·(0, −70) = (−49.497, −49.497).
    kes_detection tilted = detection(60, 80, 140, 220, {{100, 200}, {0, 0}, {50, 150}});
    const float s = 70 * std::sqrt(0.5f);
    expect_rect(roi(&c, tilted), 100 - s, 150 - s, 364, 364, -kPi / 4);
}

TEST(DetectRoi, PoseFromItsAlignmentKeypoints) {
    const kes_detect_roi_config c = pose_config();
    // Hip centre (300, 400) and the circle point 200 px above: upright, side 2·200·1.25 = 500; the box is unused.
    kes_detection upright = detection(0, 0, 1, 1, {{300, 400}, {300, 200}});
    expect_rect(roi(&c, upright), 300, 400, 500, 500, 0);
    // Leaning 0.3 rad clockwise (top to the right): rotation 0.3.
    kes_detection leaning =
        detection(0, 0, 1, 1, {{300, 400}, {300 + 200 * std::sin(0.3f), 400 - 200 * std::cos(0.3f)}});
    expect_rect(roi(&c, leaning), 300, 400, 500, 500, 0.3f);
}

TEST(DetectRoi, BadInputIsRefusedByName) {
    kes_detect_roi_config c = hands_config();
    kes_detect_rect r;
    kes_detection two = detection(60, 80, 140, 220, {{100, 200}, {100, 100}});
    EXPECT_EQ(kes_detect_roi_from_detection(&c, &two, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "end_keypoint is 2"), nullptr) << kes_last_error();
    kes_detection nan_kp = detection(60, 80, 140, 220, {{100, 200}, {0, 0}, {kNaN, 100}});
    EXPECT_EQ(kes_detect_roi_from_detection(&c, &nan_kp, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "not finite"), nullptr) << kes_last_error();
    kes_detection empty_box = detection(60, 80, 60, 220, {{100, 200}, {0, 0}, {100, 100}});
    c.square = KES_DETECT_ROI_SQUARE_SHORT;
    EXPECT_EQ(kes_detect_roi_from_detection(&c, &empty_box, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "positive"), nullptr) << kes_last_error();
    kes_detect_roi_config p = pose_config();
    kes_detection vast = detection(-3e38f, 0, 3e38f, 10, {});  // 6e38 wide: beyond float
    EXPECT_EQ(kes_detect_roi_from_detection(nullptr, &vast, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "positive and finite"), nullptr) << kes_last_error();
    kes_detection same = detection(0, 0, 1, 1, {{300, 400}, {300, 400}});
    EXPECT_EQ(kes_detect_roi_from_detection(&p, &same, &r), KES_ERR_INVALID_ARGUMENT);
    c = hands_config();
    c.scale_x = 0;
    EXPECT_EQ(kes_detect_roi_from_detection(&c, &two, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "scale_x"), nullptr) << kes_last_error();
    c = hands_config();
    const int bad = 9;
    std::memcpy(&c.square, &bad, sizeof bad);
    EXPECT_EQ(kes_detect_roi_from_detection(&c, &two, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "square"), nullptr) << kes_last_error();
    c = hands_config();
    c.struct_size = 4;
    EXPECT_EQ(kes_detect_roi_from_detection(&c, &two, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_detect_roi_from_detection(nullptr, nullptr, &r), KES_ERR_INVALID_ARGUMENT);
}

TEST(DetectLandmarks, MapsThroughTheCropMatrix) {
    // A 64 × 64 rectangle centred at (100, 50), turned π/2, cropped to a 256 × 256 model input: each model
    // pixel is 0.25 source pixels, x_src = −0.25·y + 132, y_src = 0.25·x + 18 (kes_warp_matrix_from_rect's
    // formula: m[2] = 100 − (−0.25)·128, m[5] = 50 − 0.25·128).
    const float m[6] = {0, -0.25f, 132, 0.25f, 0, 18};
    // Pose-style: x, y, z, visibility logit, presence logit.
    const std::vector<float> values = {128, 128, 8,  0, 2,  // the centre
                                       0,   0,   -4, 4, -1, 256, 0, 0, -2, 0};
    kes_detect_landmark_config c;
    kes_detect_landmark_config_init(&c);
    c.num_landmarks = 3;
    c.values_per_landmark = 5;
    kes_landmark out[3];
    ASSERT_EQ(kes_detect_landmarks_decode(&c, values.data(), values.size(), m, out, 3), KES_OK) << kes_last_error();
    EXPECT_FLOAT_EQ(out[0].x, 100);
    EXPECT_FLOAT_EQ(out[0].y, 50);
    EXPECT_FLOAT_EQ(out[0].z, 2);  // 8 model pixels of depth = 2 source pixels
    EXPECT_FLOAT_EQ(out[0].visibility, 0.5f);
    EXPECT_NEAR(out[0].presence, 1 / (1 + std::exp(-2.0)), 1e-6);
    // The model's top-left corner is the rectangle's rotated top-left: centre + R(π/2)·(−32, −32) = (132, 18).
    EXPECT_FLOAT_EQ(out[1].x, 132);
    EXPECT_FLOAT_EQ(out[1].y, 18);
    EXPECT_FLOAT_EQ(out[1].z, -1);
    EXPECT_NEAR(out[1].visibility, 1 / (1 + std::exp(-4.0)), 1e-6);
    EXPECT_FLOAT_EQ(out[2].x, 132);
    EXPECT_FLOAT_EQ(out[2].y, 82);
    // RAW keeps the values; no matrix keeps model pixels.
    c.visibility_mode = KES_DETECT_SCORE_RAW;
    ASSERT_EQ(kes_detect_landmarks_decode(&c, values.data(), values.size(), nullptr, out, 3), KES_OK);
    EXPECT_FLOAT_EQ(out[1].x, 0);
    EXPECT_FLOAT_EQ(out[1].z, -4);
    EXPECT_FLOAT_EQ(out[1].visibility, 4);
    EXPECT_FLOAT_EQ(out[1].presence, -1);
}

TEST(DetectLandmarks, HandLayoutHasNoVisibility) {
    // 21 × 3 values (MediaPipe's hand landmark model); the tensor may be longer than needed.
    std::vector<float> values(63 + 5, 0.0f);
    for (int i = 0; i < 21; ++i) {
        values[3 * i] = float(10 * i);
        values[3 * i + 1] = float(224 - 10 * i);
        values[3 * i + 2] = float(i) - 10;
    }
    const float scale2[6] = {2, 0, 5, 0, 2, 7};  // unrotated: ×2 and shifted
    kes_detect_landmark_config c;
    kes_detect_landmark_config_init(&c);
    c.num_landmarks = 21;
    std::vector<kes_landmark> out(21);
    ASSERT_EQ(kes_detect_landmarks_decode(&c, values.data(), values.size(), scale2, out.data(), out.size()), KES_OK)
        << kes_last_error();
    for (int i = 0; i < 21; ++i) {
        EXPECT_FLOAT_EQ(out[i].x, 20.0f * i + 5) << i;
        EXPECT_FLOAT_EQ(out[i].y, 2.0f * (224 - 10 * i) + 7) << i;
        EXPECT_FLOAT_EQ(out[i].z, 2.0f * (i - 10)) << i;
        EXPECT_EQ(out[i].visibility, 1.0f);
        EXPECT_EQ(out[i].presence, 1.0f);
    }
}

TEST(DetectLandmarks, BadInputIsRefusedByName) {
    std::vector<float> values(15, 1.0f);
    kes_detect_landmark_config c;
    kes_detect_landmark_config_init(&c);
    kes_landmark out[5];
    auto refused = [&](kes_status want, const float* m, size_t count, size_t capacity, const char* words) {
        EXPECT_EQ(kes_detect_landmarks_decode(&c, values.data(), count, m, out, capacity), want) << words;
        EXPECT_NE(std::strstr(kes_last_error(), words), nullptr) << kes_last_error();
    };
    refused(KES_ERR_INVALID_ARGUMENT, nullptr, 15, 5, "num_landmarks is 0");
    c.num_landmarks = 5;
    refused(KES_ERR_INVALID_ARGUMENT, nullptr, 14, 5, "value_count 14");
    refused(KES_ERR_INVALID_ARGUMENT, nullptr, 15, 4, "capacity 4");
    const float nan_matrix[6] = {1, 0, kNaN, 0, 1, 0};
    refused(KES_ERR_INVALID_ARGUMENT, nan_matrix, 15, 5, "to_image[2]");
    const float huge[6] = {3e38f, 0, 0, 0, 1, 0};  // 3e38 · 1 fits; landmark 0's x = 1 does, but ·10 would not
    values[3] = 10;
    refused(KES_ERR_CORRUPT_DATA, huge, 15, 5, "landmark 1 maps to (3e+39");
    values[3] = 1;
    values[7] = kNaN;
    refused(KES_ERR_CORRUPT_DATA, nullptr, 15, 5, "landmark 2 value 1");
    values[7] = 1;
    c.values_per_landmark = 6;
    refused(KES_ERR_INVALID_ARGUMENT, nullptr, 15, 5, "values_per_landmark is 6");
    c.values_per_landmark = 3;
    const int bad = 5;
    std::memcpy(&c.visibility_mode, &bad, sizeof bad);
    refused(KES_ERR_INVALID_ARGUMENT, nullptr, 15, 5, "visibility_mode");
    EXPECT_EQ(kes_detect_landmarks_decode(nullptr, values.data(), 15, nullptr, out, 5), KES_ERR_INVALID_ARGUMENT);
}

TEST(DetectLandmarks, ConfigsGrowWithoutBreakingApps) {
    const kes_detection d = detection(60, 80, 140, 220, {{100, 200}, {0, 0}, {100, 100}});
    kes_test::expect_struct_growth(hands_config(), KES_STRUCT_SIZE_THROUGH(kes_detect_roi_config, square),
                                   [&](kes_detect_roi_config* c) {
                                       kes_detect_rect r;
                                       return kes_detect_roi_from_detection(c, &d, &r);
                                   });
    kes_detect_landmark_config lc;
    kes_detect_landmark_config_init(&lc);
    lc.num_landmarks = 2;
    const float values[6] = {1, 2, 3, 4, 5, 6};
    kes_test::expect_struct_growth(lc, KES_STRUCT_SIZE_THROUGH(kes_detect_landmark_config, visibility_mode),
                                   [&](kes_detect_landmark_config* c) {
                                       kes_landmark out[2];
                                       return kes_detect_landmarks_decode(c, values, 6, nullptr, out, 2);
                                   });
}

}  // namespace
