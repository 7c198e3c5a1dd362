// test_detect.cpp — kestrel/detect.h: anchor grids (BlazeFace's 896 equal the sample's grid), decoding
// and NMS against hand-computed cases and independent naive oracles, every SIMD table against the scalar
// reference bit for bit on random data with ties, the face-search sample's own loop against the helper,
// and hostile input (NaN, infinity, degenerate boxes, capacity 0) giving a status, never UB.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "alloc_counter.hpp"
#include "detect/detect.hpp"
#include "dispatch_expect.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/detect.h"
#include "kestrel/status.h"
#include "struct_size_check.hpp"

namespace {

using kes::detect::Kernels;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// BlazeFace-256 "back" (MediaPipe face_detection_back.pbtxt / the face-search sample).
const uint32_t kBlazeStrides[4] = {16, 32, 32, 32};

kes_detect_anchor_config blazeface_anchor_config() {
    kes_detect_anchor_config c;
    kes_detect_anchor_config_init(&c);
    c.input_width = c.input_height = 256;
    c.num_layers = 4;
    c.strides = kBlazeStrides;
    c.min_scale = 0.15625f;
    c.max_scale = 0.75f;
    c.fixed_anchor_size = 1;
    return c;
}

kes_detect_decode_config blazeface_decode_config(float threshold) {
    kes_detect_decode_config c;
    kes_detect_decode_config_init(&c);
    c.score_threshold = threshold;
    c.x_scale = c.y_scale = c.w_scale = c.h_scale = 256.0f;
    c.num_keypoints = 6;
    return c;
}

std::vector<kes_anchor> blazeface_anchors() {
    const kes_detect_anchor_config c = blazeface_anchor_config();
    std::vector<kes_anchor> a(896);
    size_t n = 0;
    EXPECT_EQ(kes_detect_anchors_generate(&c, a.data(), a.size(), &n), KES_OK) << kes_last_error();
    EXPECT_EQ(n, 896u);
    return a;
}

kes_detection det(float x0, float y0, float x1, float y1, float score, int32_t cls = 0) {
    kes_detection d{};
    d.x0 = x0, d.y0 = y0, d.x1 = x1, d.y1 = y1, d.score = score, d.class_id = cls;
    return d;
}

// Stores any int in a C enum field, as a C caller can (a C++ cast to an out-of-range enum value would be
// undefined behaviour in the test itself).
template <class E>
void set_enum(E& field, int value) {
    static_assert(sizeof(E) == sizeof(int), "int-sized C enum");
    std::memcpy(&field, &value, sizeof value);
}

bool same_bits(const kes_detection* a, const kes_detection* b, size_t n) {
    return n == 0 || std::memcmp(a, b, n * sizeof(kes_detection)) == 0;
}

// ---- anchors ------------------------------------------------------------------------------------------

TEST(DetectAnchors, BlazeFace256Gives896OnTheSampleGrid) {
    const std::vector<kes_anchor> a = blazeface_anchors();
    // face-search decode_faces: grid g has `cells`² cells of `per` anchors, centre ((x + 0.5) / cells).
    size_t i = 0;
    for (const auto& g : {std::pair<int, int>{16, 2}, std::pair<int, int>{8, 6}}) {
        for (int k = 0; k < g.first * g.first * g.second; ++k, ++i) {
            const int cell = k / g.second;
            SCOPED_TRACE(i);
            EXPECT_FLOAT_EQ(a[i].cx, ((float)(cell % g.first) + 0.5f) / (float)g.first);
            EXPECT_FLOAT_EQ(a[i].cy, ((float)(cell / g.first) + 0.5f) / (float)g.first);
            EXPECT_EQ(a[i].w, 1.0f);
            EXPECT_EQ(a[i].h, 1.0f);
        }
    }
    EXPECT_EQ(i, 896u);
}

TEST(DetectAnchors, SsdMobileNetGrid1917WithReducedLowestLayer) {
    // MediaPipe's object_detection_mobile_cpu.pbtxt (SSD MobileNet v2, 300²): 1917 anchors.
    const uint32_t strides[6] = {16, 32, 64, 128, 256, 512};
    const float ratios[5] = {1.0f, 2.0f, 0.5f, 3.0f, 0.3333f};
    kes_detect_anchor_config c;
    kes_detect_anchor_config_init(&c);
    c.input_width = c.input_height = 300;
    c.num_layers = 6;
    c.strides = strides;
    c.aspect_ratios = ratios;
    c.num_aspect_ratios = 5;
    c.min_scale = 0.2f;
    c.max_scale = 0.95f;
    c.reduce_boxes_in_lowest_layer = 1;
    std::vector<kes_anchor> a(1917);
    size_t n = 0;
    ASSERT_EQ(kes_detect_anchors_generate(&c, a.data(), a.size(), &n), KES_OK) << kes_last_error();
    ASSERT_EQ(n, 1917u);  // 19²·3 + 10²·6 + 5²·6 + 3²·6 + 2²·6 + 1·6
    EXPECT_FLOAT_EQ(a[0].cx, 0.5f / 19.0f);
    EXPECT_FLOAT_EQ(a[0].w, 0.1f);
    EXPECT_FLOAT_EQ(a[0].h, 0.1f);
    EXPECT_FLOAT_EQ(a[1].w, 0.2f * std::sqrt(2.0f));
    EXPECT_FLOAT_EQ(a[1].h, 0.2f / std::sqrt(2.0f));
    // Layer 1 (10×10, 6 per cell): scale 0.35, interpolated sqrt(0.35 · 0.5).
    const kes_anchor& l1 = a[19 * 19 * 3];
    EXPECT_FLOAT_EQ(l1.cx, 0.05f);
    EXPECT_FLOAT_EQ(l1.w, 0.35f);
    EXPECT_FLOAT_EQ(a[19 * 19 * 3 + 5].w, std::sqrt(0.35f * 0.5f));
    EXPECT_FLOAT_EQ(a.back().w, std::sqrt(0.95f * 1.0f));  // the last layer interpolates towards 1
}

TEST(DetectAnchors, CountQueryAndShortCapacity) {
    const kes_detect_anchor_config c = blazeface_anchor_config();
    size_t n = 0;
    ASSERT_EQ(kes_detect_anchors_generate(&c, nullptr, 0, &n), KES_OK);
    EXPECT_EQ(n, 896u);
    std::vector<kes_anchor> a(895, kes_anchor{-7, -7, -7, -7});
    n = 0;
    EXPECT_EQ(kes_detect_anchors_generate(&c, a.data(), a.size(), &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(n, 896u);
    EXPECT_NE(std::strstr(kes_last_error(), "capacity 895"), nullptr) << kes_last_error();
    EXPECT_EQ(a[0].cx, -7.0f) << "nothing is written when the capacity is short";
}

TEST(DetectAnchors, BadConfigSaysWhich) {
    kes_detect_anchor_config c = blazeface_anchor_config();
    size_t n = 0;
    c.num_layers = 0;
    EXPECT_EQ(kes_detect_anchors_generate(&c, nullptr, 0, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "num_layers"), nullptr) << kes_last_error();
    c = blazeface_anchor_config();
    c.strides = nullptr;
    EXPECT_EQ(kes_detect_anchors_generate(&c, nullptr, 0, &n), KES_ERR_INVALID_ARGUMENT);
    const uint32_t zero[4] = {16, 0, 32, 32};
    c = blazeface_anchor_config();
    c.strides = zero;
    EXPECT_EQ(kes_detect_anchors_generate(&c, nullptr, 0, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "strides[1]"), nullptr) << kes_last_error();
    c = blazeface_anchor_config();
    c.min_scale = kNaN;
    EXPECT_EQ(kes_detect_anchors_generate(&c, nullptr, 0, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_detect_anchors_generate(nullptr, nullptr, 0, &n), KES_ERR_INVALID_ARGUMENT);
    c = blazeface_anchor_config();
    EXPECT_EQ(kes_detect_anchors_generate(&c, nullptr, 0, nullptr), KES_ERR_INVALID_ARGUMENT);
}

TEST(DetectConfig, StructsGrowByStructSize) {
    const kes_detect_anchor_config ac = blazeface_anchor_config();
    kes_test::expect_struct_growth(ac, KES_STRUCT_SIZE_THROUGH(kes_detect_anchor_config, feature_map_heights),
                                   [](kes_detect_anchor_config* c) {
                                       size_t n;
                                       return kes_detect_anchors_generate(c, nullptr, 0, &n);
                                   });
    const kes_detect_decode_config dc = blazeface_decode_config(0.5f);
    kes_test::expect_struct_growth(dc, KES_STRUCT_SIZE_THROUGH(kes_detect_decode_config, box_value_stride),
                                   [](kes_detect_decode_config* c) {
                                       size_t n;
                                       return kes_detect_decode(c, nullptr, 0, nullptr, 0, nullptr, 0, &n);
                                   });
    kes_detect_nms_config nc;
    kes_detect_nms_config_init(&nc);
    kes_test::expect_struct_growth(nc, KES_STRUCT_SIZE_THROUGH(kes_detect_nms_config, max_per_class),
                                   [](kes_detect_nms_config* c) {
                                       size_t n;
                                       return kes_detect_nms(c, nullptr, 0, nullptr, 0, &n);
                                   });
}

// ---- decode -------------------------------------------------------------------------------------------

TEST(DetectDecode, BlazeFaceBoxHandComputed) {
    const std::vector<kes_anchor> anchors = blazeface_anchors();
    std::vector<float> s0(512, -20.0f), s1(384, -20.0f), b0(512 * 16, 0.0f), b1(384 * 16, 0.0f);
    // Anchor 37: cell 18 of the 16×16 grid = (x 2, y 1), centre (2.5/16, 1.5/16) = 40, 24 px.
    s0[37] = 2.0f;
    float* r = &b0[37 * 16];
    r[0] = 3, r[1] = -4, r[2] = 64, r[3] = 32;
    for (int k = 0; k < 6; ++k) r[4 + 2 * k] = (float)k, r[5 + 2 * k] = -(float)k;
    // Anchor 512 + 100: cell 16 of the 8×8 grid = (0, 2), centre (16, 80) px.
    s1[100] = 5.0f;
    b1[100 * 16 + 2] = 10, b1[100 * 16 + 3] = 20;
    const kes_detect_head heads[2] = {{s0.data(), b0.data(), 512}, {s1.data(), b1.data(), 384}};
    const kes_detect_decode_config c = blazeface_decode_config(0.75f);
    kes_detection out[4];
    size_t found = 0;
    ASSERT_EQ(kes_detect_decode(&c, heads, 2, anchors.data(), anchors.size(), out, 4, &found), KES_OK)
        << kes_last_error();
    ASSERT_EQ(found, 2u);
    EXPECT_EQ(out[0].anchor, 37u);
    EXPECT_EQ(out[0].class_id, 0);
    EXPECT_EQ(out[0].num_keypoints, 6u);
    EXPECT_FLOAT_EQ(out[0].score, 1.0f / (1.0f + std::exp(-2.0f)));
    EXPECT_FLOAT_EQ(out[0].x0 * 256, 40 + 3 - 32);
    EXPECT_FLOAT_EQ(out[0].x1 * 256, 40 + 3 + 32);
    EXPECT_FLOAT_EQ(out[0].y0 * 256, 24 - 4 - 16);
    EXPECT_FLOAT_EQ(out[0].y1 * 256, 24 - 4 + 16);
    for (int k = 0; k < 6; ++k) {
        EXPECT_FLOAT_EQ(out[0].keypoints[k][0] * 256, 40.0f + (float)k);
        EXPECT_FLOAT_EQ(out[0].keypoints[k][1] * 256, 24.0f - (float)k);
    }
    for (int k = 6; k < KES_DETECT_MAX_KEYPOINTS; ++k) EXPECT_EQ(out[0].keypoints[k][0], 0.0f);
    EXPECT_EQ(out[1].anchor, 612u);
    EXPECT_FLOAT_EQ(out[1].x0 * 256, 16 - 5);
    EXPECT_FLOAT_EQ(out[1].y1 * 256, 80 + 10);
}

TEST(DetectDecode, ThresholdIsTheLogitOfTheProbability) {
    // logit(0.75) = ln 3 = 1.0986123: just below never passes, at or above does.
    const float l = static_cast<float>(std::log(3.0));
    std::vector<float> s = {std::nextafter(l, 0.0f), l, std::nextafter(l, 10.0f), kNaN, kInf, -kInf};
    std::vector<float> b(s.size() * 4, 0.0f);
    const kes_detect_head head{s.data(), b.data(), s.size()};
    kes_detect_decode_config c;
    kes_detect_decode_config_init(&c);
    c.score_threshold = 0.75f;
    kes_detection out[6];
    size_t found = 0;
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, out, 6, &found), KES_OK) << kes_last_error();
    ASSERT_EQ(found, 3u);
    EXPECT_EQ(out[0].anchor, 1u);
    EXPECT_EQ(out[1].anchor, 2u);
    EXPECT_EQ(out[2].anchor, 4u);
    EXPECT_EQ(out[2].score, 1.0f) << "+inf logit is probability 1";
    c.score_threshold = 0.0f;  // every logit but NaN
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, out, 6, &found), KES_OK);
    EXPECT_EQ(found, 5u);
    c.score_threshold = 1.5f;  // nothing
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, out, 6, &found), KES_OK);
    EXPECT_EQ(found, 0u);
    c.score_mode = KES_DETECT_SCORE_RAW;
    c.score_threshold = l;
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, out, 6, &found), KES_OK);
    EXPECT_EQ(found, 3u);
    EXPECT_EQ(out[0].score, l) << "RAW reports the value itself";
}

TEST(DetectDecode, SsdVarianceExpAndYxOrder) {
    // TF SSD: regressors (ty, tx, th, tw), scales 10, 10, 5, 5, w = e^(tw/5) · a.w.
    const kes_anchor a{0.5f, 0.25f, 0.2f, 0.4f};
    const float s[3] = {-5.0f, 0.1f, 0.9f};  // background, class 1, class 2 (probabilities)
    const float r[4] = {1.0f, 2.0f, 0.5f, -0.5f};
    const kes_detect_head head{s, r, 1};
    kes_detect_decode_config c;
    kes_detect_decode_config_init(&c);
    c.score_mode = KES_DETECT_SCORE_RAW;
    c.score_threshold = 0.05f;
    c.num_classes = 3;
    c.first_class = 1;
    c.class_mode = KES_DETECT_CLASS_EACH;
    c.box_coding = KES_DETECT_BOX_CENTER_SIZE_EXP;
    c.order = KES_DETECT_ORDER_YX;
    c.x_scale = c.y_scale = 10;
    c.w_scale = c.h_scale = 5;
    kes_detection out[3];
    size_t found = 0;
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, &a, 1, out, 3, &found), KES_OK) << kes_last_error();
    ASSERT_EQ(found, 2u);
    EXPECT_EQ(out[0].class_id, 1);
    EXPECT_EQ(out[1].class_id, 2);
    const float cx = 2.0f / 10 * 0.2f + 0.5f, cy = 1.0f / 10 * 0.4f + 0.25f;
    const float w = std::exp(-0.5f / 5) * 0.2f, h = std::exp(0.5f / 5) * 0.4f;
    EXPECT_FLOAT_EQ(out[0].x0, cx - w / 2);
    EXPECT_FLOAT_EQ(out[0].x1, cx + w / 2);
    EXPECT_FLOAT_EQ(out[0].y0, cy - h / 2);
    EXPECT_FLOAT_EQ(out[0].y1, cy + h / 2);
    c.class_mode = KES_DETECT_CLASS_MAX;
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, &a, 1, out, 3, &found), KES_OK);
    ASSERT_EQ(found, 1u);
    EXPECT_EQ(out[0].class_id, 2);
    EXPECT_FLOAT_EQ(out[0].score, 0.9f);
}

TEST(DetectDecode, CornersAndDistancesWithIdentityAnchors) {
    const float s[1] = {0.9f};
    const float r[4] = {10, 20, 30, 60};
    const kes_detect_head head{s, r, 1};
    kes_detect_decode_config c;
    kes_detect_decode_config_init(&c);
    c.score_mode = KES_DETECT_SCORE_RAW;
    c.x_scale = c.y_scale = 100;
    c.box_coding = KES_DETECT_BOX_CORNERS;
    kes_detection out[1];
    size_t found = 0;
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, out, 1, &found), KES_OK) << kes_last_error();
    EXPECT_FLOAT_EQ(out[0].x0, 0.1f);
    EXPECT_FLOAT_EQ(out[0].y0, 0.2f);
    EXPECT_FLOAT_EQ(out[0].x1, 0.3f);
    EXPECT_FLOAT_EQ(out[0].y1, 0.6f);
    c.box_coding = KES_DETECT_BOX_DISTANCES;
    const kes_anchor a{0.5f, 0.5f, 1.0f, 1.0f};
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, &a, 1, out, 1, &found), KES_OK);
    EXPECT_FLOAT_EQ(out[0].x0, 0.4f);
    EXPECT_FLOAT_EQ(out[0].y0, 0.3f);
    EXPECT_FLOAT_EQ(out[0].x1, 0.8f);
    EXPECT_FLOAT_EQ(out[0].y1, 1.1f);
}

TEST(DetectDecode, PlanarAndInterleavedLayoutsAgree) {
    // YOLOv8-style [4 + C, N] (planar) against the same numbers as [N, 4 + C] (interleaved).
    constexpr size_t N = 301, C = 13, V = 4 + C;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> inter(N * V), planar(V * N);
    for (size_t a = 0; a < N; ++a)
        for (size_t v = 0; v < V; ++v) {
            float x = v < 4 ? u(rng) * 640 : std::round(u(rng) * 20) / 20;  // ties between classes
            inter[a * V + v] = planar[v * N + a] = x;
        }
    kes_detect_decode_config c;
    kes_detect_decode_config_init(&c);
    c.score_mode = KES_DETECT_SCORE_RAW;
    c.score_threshold = 0.9f;
    c.num_classes = C;
    c.x_scale = c.y_scale = c.w_scale = c.h_scale = 640;
    for (kes_detect_class_mode mode : {KES_DETECT_CLASS_MAX, KES_DETECT_CLASS_EACH}) {
        c.class_mode = mode;
        c.score_anchor_stride = V, c.score_class_stride = 1, c.box_anchor_stride = V, c.box_value_stride = 1;
        const kes_detect_head hi{inter.data() + 4, inter.data(), N};
        std::vector<kes_detection> a(N * C), b(N * C);
        size_t na = 0, nb = 0;
        ASSERT_EQ(kes_detect_decode(&c, &hi, 1, nullptr, 0, a.data(), a.size(), &na), KES_OK) << kes_last_error();
        c.score_anchor_stride = 1, c.score_class_stride = N, c.box_anchor_stride = 1, c.box_value_stride = N;
        const kes_detect_head hp{planar.data() + 4 * N, planar.data(), N};
        ASSERT_EQ(kes_detect_decode(&c, &hp, 1, nullptr, 0, b.data(), b.size(), &nb), KES_OK) << kes_last_error();
        ASSERT_EQ(na, nb);
        EXPECT_GT(na, 10u);
        EXPECT_TRUE(same_bits(a.data(), b.data(), na));
        // The oracle: every (anchor, class) ≥ threshold; MAX keeps the first best class.
        size_t expect = 0;
        for (size_t an = 0; an < N; ++an) {
            size_t best = C;
            for (size_t k = 0; k < C; ++k) {
                const float v = inter[an * V + 4 + k];
                if (v < 0.9f) continue;
                if (mode == KES_DETECT_CLASS_EACH) {
                    ASSERT_LT(expect, na);
                    EXPECT_EQ(a[expect].anchor, an);
                    EXPECT_EQ(a[expect++].class_id, (int32_t)k);
                } else if (best == C || v > inter[an * V + 4 + best]) {
                    best = k;
                }
            }
            if (mode == KES_DETECT_CLASS_MAX && best != C) {
                ASSERT_LT(expect, na);
                EXPECT_EQ(a[expect].anchor, an);
                EXPECT_EQ(a[expect++].class_id, (int32_t)best);
            }
        }
        EXPECT_EQ(expect, na);
    }
}

TEST(DetectDecode, OverflowKeepsTheBestInAnchorOrder) {
    const float s[8] = {0.6f, 0.9f, 0.7f, 0.9f, 0.95f, 0.2f, 0.7f, 0.8f};
    float b[8 * 4] = {};
    const kes_detect_head head{s, b, 8};
    kes_detect_decode_config c;
    kes_detect_decode_config_init(&c);
    c.score_mode = KES_DETECT_SCORE_RAW;
    c.score_threshold = 0.5f;
    kes_detection out[4];
    size_t found = 0;
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, out, 4, &found), KES_OK);
    EXPECT_EQ(found, 7u);
    const uint32_t expect[4] = {1, 3, 4, 7};  // 0.95, 0.9, 0.9, 0.8 — back in anchor order
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i].anchor, expect[i]);
    // 0.7 twice competes for the last slot of 5: the lower anchor wins.
    kes_detection five[5];
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, five, 5, &found), KES_OK);
    EXPECT_EQ(five[0].anchor, 1u);
    EXPECT_EQ(five[1].anchor, 2u);
    EXPECT_EQ(five[4].anchor, 7u);
    // Capacity 0 counts only.
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, nullptr, 0, &found), KES_OK);
    EXPECT_EQ(found, 7u);
}

TEST(DetectDecode, NonFiniteBoxIsCorruptDataNamingTheAnchor) {
    const float s[3] = {5, -5, 5};
    float b[12] = {0, 0, 1, 1, kNaN, 0, 1, 1, 0, 0, 1, 1};
    const kes_detect_head head{s, b, 3};
    kes_detect_decode_config c;
    kes_detect_decode_config_init(&c);
    kes_detection out[3];
    size_t found = 0;
    ASSERT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, out, 3, &found), KES_OK) << "anchor 1 does not pass";
    b[8] = kInf;
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, out, 3, &found), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::strstr(kes_last_error(), "anchor 2"), nullptr) << kes_last_error();
    b[8] = 0;
    b[10] = 200;  // e^200 overflows
    c.box_coding = KES_DETECT_BOX_CENTER_SIZE_EXP;
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 0, out, 3, &found), KES_ERR_CORRUPT_DATA);
}

TEST(DetectDecode, BadArgumentsSayWhich) {
    const float s[2] = {1, 1};
    const float b[8] = {};
    const kes_anchor a[2] = {};
    const kes_detect_head head{s, b, 2};
    kes_detect_decode_config c;
    kes_detect_decode_config_init(&c);
    kes_detection out[2];
    size_t n;
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, a, 3, out, 2, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "anchor_count is 3"), nullptr) << kes_last_error();
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, nullptr, 2, out, 2, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, a, 2, nullptr, 2, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, a, 2, out, 2, nullptr), KES_ERR_INVALID_ARGUMENT);
    const kes_detect_head null_head{nullptr, b, 2};
    EXPECT_EQ(kes_detect_decode(&c, &null_head, 1, a, 2, out, 2, &n), KES_ERR_INVALID_ARGUMENT);
    c.score_threshold = kNaN;
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, a, 2, out, 2, &n), KES_ERR_INVALID_ARGUMENT);
    kes_detect_decode_config_init(&c);
    c.x_scale = 0;
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, a, 2, out, 2, &n), KES_ERR_INVALID_ARGUMENT);
    kes_detect_decode_config_init(&c);
    c.num_keypoints = KES_DETECT_MAX_KEYPOINTS + 1;
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, a, 2, out, 2, &n), KES_ERR_INVALID_ARGUMENT);
    kes_detect_decode_config_init(&c);
    c.first_class = 1;
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, a, 2, out, 2, &n), KES_ERR_INVALID_ARGUMENT);
    kes_detect_decode_config_init(&c);
    set_enum(c.box_coding, 9);
    EXPECT_EQ(kes_detect_decode(&c, &head, 1, a, 2, out, 2, &n), KES_ERR_INVALID_ARGUMENT);
}

// ---- NMS ----------------------------------------------------------------------------------------------

size_t run_nms(kes_detect_nms_config c, std::vector<kes_detection>& d) {
    size_t kept = 0;
    EXPECT_EQ(kes_detect_nms(&c, d.data(), d.size(), nullptr, 0, &kept), KES_OK) << kes_last_error();
    return kept;
}

TEST(DetectNms, HardHandComputed) {
    // The 0.5 box overlaps the 0.9 one with IoU 0.6 / 1.4 = 0.43 (suppressed at 0.4) and the 0.8 one with
    // 0.4 / 1.6 = 0.25; the 0.8 box only touches the 0.9 one (IoU 0); the 0.3 one overlaps nothing.
    std::vector<kes_detection> d = {det(1, 0, 2, 1, 0.8f), det(0, 0, 1, 1, 0.9f), det(5, 5, 6, 6, 0.3f),
                                    det(0.4f, 0, 1.4f, 1, 0.5f)};
    kes_detect_nms_config c;
    kes_detect_nms_config_init(&c);
    c.iou_threshold = 0.4f;
    std::vector<kes_detection> a = d;
    ASSERT_EQ(run_nms(c, a), 3u);
    EXPECT_EQ(a[0].score, 0.9f);
    EXPECT_EQ(a[1].score, 0.8f);
    EXPECT_EQ(a[2].score, 0.3f);
    c.iou_threshold = 0.7f;  // only nothing overlaps that much
    a = d;
    ASSERT_EQ(run_nms(c, a), 4u);
    EXPECT_EQ(a[2].score, 0.5f);
    c.max_detections = 2;
    a = d;
    ASSERT_EQ(run_nms(c, a), 2u);
}

TEST(DetectNms, IouAtTheThresholdIsKeptAndTiesKeepTheLowerIndex) {
    // IoU exactly 1/2: not > 0.5.
    std::vector<kes_detection> d = {det(0, 0, 2, 1, 0.5f), det(1, 0, 2, 1, 0.5f)};
    kes_detect_nms_config c;
    kes_detect_nms_config_init(&c);
    EXPECT_EQ(run_nms(c, d), 2u);
    // Equal scores, identical boxes: index 0 survives, whichever order the sort saw them in.
    std::vector<kes_detection> e = {det(0, 0, 1, 1, 0.7f), det(0, 0, 1, 1, 0.7f), det(0, 0, 1, 1, 0.7f)};
    e[0].anchor = 10, e[1].anchor = 11, e[2].anchor = 12;
    ASSERT_EQ(run_nms(c, e), 1u);
    EXPECT_EQ(e[0].anchor, 10u);
}

TEST(DetectNms, WeightedBlendsLikeMediaPipe) {
    std::vector<kes_detection> d = {det(0, 0, 10, 10, 0.5f), det(1, 1, 11, 11, 1.0f), det(50, 50, 60, 60, 0.2f)};
    d[0].num_keypoints = d[1].num_keypoints = d[2].num_keypoints = 1;
    d[0].keypoints[0][0] = 2, d[1].keypoints[0][0] = 5;
    kes_detect_nms_config c;
    kes_detect_nms_config_init(&c);
    c.mode = KES_DETECT_NMS_WEIGHTED;
    c.iou_threshold = 0.3f;
    ASSERT_EQ(run_nms(c, d), 2u);
    // (1.0 · box1 + 0.5 · box0) / 1.5, the top's score.
    EXPECT_FLOAT_EQ(d[0].x0, (1.0f * 1 + 0.5f * 0) / 1.5f);
    EXPECT_FLOAT_EQ(d[0].x1, (1.0f * 11 + 0.5f * 10) / 1.5f);
    EXPECT_FLOAT_EQ(d[0].keypoints[0][0], (1.0f * 5 + 0.5f * 2) / 1.5f);
    EXPECT_EQ(d[0].score, 1.0f);
    EXPECT_EQ(d[1].x0, 50.0f);
    std::vector<kes_detection> neg = {det(0, 0, 1, 1, -0.5f)};
    size_t kept;
    EXPECT_EQ(kes_detect_nms(&c, neg.data(), 1, nullptr, 0, &kept), KES_ERR_INVALID_ARGUMENT);
}

TEST(DetectNms, PerClassWithCaps) {
    std::vector<kes_detection> d = {det(0, 0, 1, 1, 0.9f, 0), det(0, 0, 1, 1, 0.8f, 1), det(0, 0, 1, 1, 0.7f, 1),
                                    det(3, 3, 4, 4, 0.6f, 1), det(6, 6, 7, 7, 0.95f, 2)};
    kes_detect_nms_config c;
    kes_detect_nms_config_init(&c);
    c.per_class = 1;
    std::vector<kes_detection> a = d;
    ASSERT_EQ(run_nms(c, a), 4u);
    const float expect[4] = {0.95f, 0.9f, 0.8f, 0.6f};
    for (int i = 0; i < 4; ++i) EXPECT_EQ(a[i].score, expect[i]);
    c.max_per_class = 1;
    a = d;
    ASSERT_EQ(run_nms(c, a), 3u);
    c.max_detections = 2;
    a = d;
    ASSERT_EQ(run_nms(c, a), 2u);
    EXPECT_EQ(a[1].class_id, 0);
    c.per_class = 0;
    c.max_per_class = 0;
    c.max_detections = 0;
    a = d;
    EXPECT_EQ(run_nms(c, a), 3u) << "across classes the three unit boxes are one";
}

TEST(DetectNms, DegenerateBoxesOverlapNothing) {
    std::vector<kes_detection> d = {det(0, 0, 0, 0, 0.9f), det(0, 0, 0, 0, 0.8f), det(1, 1, -1, -1, 0.7f),
                                    det(-1, -1, 1, 1, 0.6f)};
    kes_detect_nms_config c;
    kes_detect_nms_config_init(&c);
    c.iou_threshold = 0.0f;
    EXPECT_EQ(run_nms(c, d), 4u);
}

TEST(DetectNms, NonFiniteOrShortScratchIsRefusedAndDetsUnchanged) {
    std::vector<kes_detection> d = {det(0, 0, 1, 1, 0.9f), det(0, 0, 1, kNaN, 0.8f)};
    const std::vector<kes_detection> before = d;
    kes_detect_nms_config c;
    kes_detect_nms_config_init(&c);
    size_t kept = 99;
    EXPECT_EQ(kes_detect_nms(&c, d.data(), d.size(), nullptr, 0, &kept), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "dets[1]"), nullptr) << kes_last_error();
    EXPECT_TRUE(same_bits(d.data(), before.data(), d.size()));
    d[1].y1 = 1;
    d[1].score = -kInf;
    EXPECT_EQ(kes_detect_nms(&c, d.data(), d.size(), nullptr, 0, &kept), KES_ERR_INVALID_ARGUMENT);
    d[1].score = 0.8f;
    size_t bytes = 0;
    ASSERT_EQ(kes_detect_nms_scratch_size(d.size(), &bytes), KES_OK);
    std::vector<unsigned char> scratch(bytes);
    EXPECT_EQ(kes_detect_nms(&c, d.data(), d.size(), scratch.data(), bytes - 1, &kept), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_detect_nms(&c, d.data(), d.size(), nullptr, 8, &kept), KES_ERR_INVALID_ARGUMENT);
    c.iou_threshold = 1.5f;
    EXPECT_EQ(kes_detect_nms(&c, d.data(), d.size(), scratch.data(), bytes, &kept), KES_ERR_INVALID_ARGUMENT);
    c.iou_threshold = kNaN;
    EXPECT_EQ(kes_detect_nms(&c, d.data(), d.size(), scratch.data(), bytes, &kept), KES_ERR_INVALID_ARGUMENT);
    kes_detect_nms_config_init(&c);
    EXPECT_EQ(kes_detect_nms(&c, nullptr, 0, nullptr, 0, &kept), KES_OK);
    EXPECT_EQ(kept, 0u);
}

// ---- SIMD tables against the scalar reference --------------------------------------------------------

std::vector<const Kernels*> vector_tables() {
    std::vector<const Kernels*> t = kes::detect::kernels_available();
    t.erase(t.begin());  // the scalar reference itself
    return t;
}

TEST(DetectSimd, TablesPresentAsTheCpuAllows) {
    const std::initializer_list<kes_test::TableGate> gates = {{KES_CPU_AVX2, "avx2"}, {KES_CPU_NEON, "neon"}};
    const std::string want = kes_test::expected_table(gates, "scalar");
    kes_test::record_table("detect", want);
    EXPECT_EQ(kes_detect_kernels_name(), want);
    EXPECT_EQ(kes::detect::kernels_active().name, want);
    EXPECT_EQ(kes_test::names_of(kes::detect::kernels_available()), kes_test::expected_usable(gates, "scalar"));
}

TEST(DetectSimd, FilterEqualsTheReferenceOnEveryLayout) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    const Kernels& ref = kes::detect::kernels_scalar();
    for (const Kernels* k : vector_tables()) {
        for (int trial = 0; trial < 300; ++trial) {
            const size_t count = rng() % 70, classes = 1 + rng() % 20;
            const int layout = static_cast<int>(rng() % 3);  // planar, interleaved, strided
            const size_t as = layout == 0 ? 1 : layout == 1 ? classes : classes + 3;
            const size_t cs = layout == 0 ? count + (rng() % 3) : layout == 1 ? 1 : 2;
            const size_t size = layout == 0 ? cs * classes + count : as * count + cs * classes;
            std::vector<float> s(size + 1);
            for (float& x : s) {
                const unsigned r = rng() % 40;
                x = r == 0 ? kNaN : r == 1 ? kInf : r == 2 ? -kInf : std::round(u(rng) * 4) / 4;  // ties
            }
            const float thr = std::round(u(rng) * 4) / 4 + (trial % 5 == 0 ? 2.5f : 0.0f);
            std::vector<uint32_t> a(count + 1), b(count + 1);
            const size_t na = ref.filter(s.data(), count, as, cs, classes, thr, a.data());
            const size_t nb = k->filter(s.data(), count, as, cs, classes, thr, b.data());
            ASSERT_EQ(na, nb) << k->name << " trial " << trial;
            ASSERT_TRUE(std::equal(a.begin(), a.begin() + na, b.begin())) << k->name << " trial " << trial;
        }
    }
}

// Random detections with ties: scores and coordinates on a coarse grid, so equal scores and IoUs that
// equal the threshold exactly both occur.
std::vector<kes_detection> random_dets(std::mt19937& rng, size_t n, uint32_t classes, bool degenerate) {
    std::vector<kes_detection> d(n);
    for (size_t i = 0; i < n; ++i) {
        const float x = static_cast<float>(rng() % 40), y = static_cast<float>(rng() % 40);
        float w = static_cast<float>(1 + rng() % 12), h = static_cast<float>(1 + rng() % 12);
        if (degenerate && rng() % 10 == 0) w = -w;
        if (degenerate && rng() % 10 == 0) h = 0;
        d[i] = det(x, y, x + w, y + h, static_cast<float>(rng() % 16) / 16.0f, static_cast<int32_t>(rng() % classes));
        d[i].anchor = static_cast<uint32_t>(i);
        d[i].num_keypoints = 2;
        d[i].keypoints[0][0] = x, d[i].keypoints[1][1] = y + h;
    }
    return d;
}

// An independent greedy oracle for HARD mode: the textbook loop over a stable sort, comparing each
// candidate against the kept list with the same IoU rule.
std::vector<uint32_t> naive_hard(const std::vector<kes_detection>& d, float thr, bool per_class, size_t max_det) {
    std::vector<uint32_t> order(d.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return d[a].score > d[b].score; });
    std::vector<uint32_t> kept;
    for (uint32_t i : order) {
        if (max_det && kept.size() == max_det) break;
        bool suppressed = false;
        for (uint32_t k : kept) {
            if (per_class && d[k].class_id != d[i].class_id) continue;
            const float box[4] = {d[k].x0, d[k].y0, d[k].x1, d[k].y1};
            auto area = [](const kes_detection& e) {
                const float w = e.x1 - e.x0, h = e.y1 - e.y0;
                return (w > 0 ? w : 0.0f) * (h > 0 ? h : 0.0f);
            };
            if (kes::detect::iou_above(d[i].x0, d[i].y0, d[i].x1, d[i].y1, area(d[i]), box, area(d[k]), thr)) {
                suppressed = true;
                break;
            }
        }
        if (!suppressed) kept.push_back(i);
    }
    return kept;
}

TEST(DetectSimd, NmsEqualsTheReferenceAndTheNaiveOracle) {
    std::mt19937 rng(5);
    const float thresholds[4] = {0.0f, 0.3f, 0.5f, 0.25f};
    auto tables = kes::detect::kernels_available();
    for (int trial = 0; trial < 200; ++trial) {
        const size_t n = rng() % 120;
        const uint32_t classes = 1 + rng() % 3;
        const std::vector<kes_detection> d = random_dets(rng, n, classes, trial % 2 == 0);
        kes_detect_nms_config c;
        kes_detect_nms_config_init(&c);
        c.iou_threshold = thresholds[trial % 4];
        c.mode = trial % 3 == 0 ? KES_DETECT_NMS_WEIGHTED : KES_DETECT_NMS_HARD;
        c.per_class = trial % 5 == 0;
        c.max_detections = trial % 7 == 0 ? 5 : 0;
        std::vector<kes_detection> ref = d;
        const size_t kref = kes::detect::nms(kes::detect::kernels_scalar(), c, ref.data(), n, nullptr, 0);
        if (c.mode == KES_DETECT_NMS_HARD && !c.per_class) {
            const std::vector<uint32_t> expect = naive_hard(d, c.iou_threshold, false, c.max_detections);
            ASSERT_EQ(kref, expect.size()) << "trial " << trial;
            for (size_t k = 0; k < kref; ++k) ASSERT_EQ(ref[k].anchor, expect[k]) << "trial " << trial;
        }
        if (c.mode == KES_DETECT_NMS_HARD && c.per_class && !c.max_detections) {
            std::vector<uint32_t> expect = naive_hard(d, c.iou_threshold, true, 0);
            ASSERT_EQ(kref, expect.size()) << "trial " << trial;
            for (size_t k = 0; k < kref; ++k) ASSERT_EQ(ref[k].anchor, expect[k]) << "trial " << trial;
        }
        for (const Kernels* k : tables) {
            std::vector<kes_detection> got = d;
            const size_t kk = kes::detect::nms(*k, c, got.data(), n, nullptr, 0);
            ASSERT_EQ(kk, kref) << k->name << " trial " << trial;
            ASSERT_TRUE(same_bits(got.data(), ref.data(), kk)) << k->name << " trial " << trial;
        }
    }
}

TEST(DetectSimd, DecodeEqualsTheReferenceOnRandomBlazeFaceOutputs) {
    const std::vector<kes_anchor> anchors = blazeface_anchors();
    std::mt19937 rng(3);
    std::normal_distribution<float> g(0.0f, 3.0f);
    std::vector<float> s(896), b(896 * 16);
    for (int trial = 0; trial < 50; ++trial) {
        for (float& x : s) x = std::round(g(rng) * 8) / 8;
        for (float& x : b) x = g(rng) * 10;
        const kes_detect_head heads[2] = {{s.data(), b.data(), 512}, {s.data() + 512, b.data() + 512 * 16, 384}};
        const kes_detect_decode_config c = blazeface_decode_config(0.5f + 0.1f * static_cast<float>(trial % 5));
        std::vector<kes_detection> ref(64), got(64);
        const size_t nref =
            kes::detect::decode(kes::detect::kernels_scalar(), c, heads, 2, anchors.data(), 896, ref.data(), 64);
        for (const Kernels* k : vector_tables()) {
            const size_t n = kes::detect::decode(*k, c, heads, 2, anchors.data(), 896, got.data(), 64);
            ASSERT_EQ(n, nref) << k->name;
            ASSERT_TRUE(same_bits(got.data(), ref.data(), std::min<size_t>(n, 64))) << k->name;
        }
    }
}

TEST(DetectAlloc, DecodeAndNmsWithScratchAllocateNothing) {
    const std::vector<kes_anchor> anchors = blazeface_anchors();
    std::vector<float> s(896, 3.0f), b(896 * 16, 1.0f);
    const kes_detect_head heads[2] = {{s.data(), b.data(), 512}, {s.data() + 512, b.data() + 512 * 16, 384}};
    const kes_detect_decode_config dc = blazeface_decode_config(0.75f);
    std::vector<kes_detection> out(100);
    size_t bytes = 0, found = 0, kept = 0;
    ASSERT_EQ(kes_detect_nms_scratch_size(out.size(), &bytes), KES_OK);
    std::vector<unsigned char> scratch(bytes);
    kes_detect_nms_config nc;
    kes_detect_nms_config_init(&nc);
    nc.mode = KES_DETECT_NMS_WEIGHTED;
    kes_test::start_counting();
    const kes_status a = kes_detect_decode(&dc, heads, 2, anchors.data(), 896, out.data(), out.size(), &found);
    const kes_status n = kes_detect_nms(&nc, out.data(), out.size(), scratch.data(), bytes, &kept);
    EXPECT_EQ(kes_test::stop_counting(), 0u);
    EXPECT_EQ(a, KES_OK);
    EXPECT_EQ(n, KES_OK);
    EXPECT_EQ(found, 896u);
}

// ---- the face-search sample's loop against the helper -------------------------------------------------

struct SampleFace {
    float score, cx, cy, w, h;
    float kp[6][2];
};

// The face-search sample's own decode_faces, as it was before kestrel/detect.h (paste = the letterbox ROI,
// inclusive).
size_t sample_decode_faces(const float* const out[4], int paste_left, int paste_top, float scale, SampleFace* faces) {
    const struct {
        int cells, per;
        const float* scores;
        const float* boxes;
    } grids[2] = {{16, 2, out[0], out[2]}, {8, 6, out[1], out[3]}};
    static SampleFace found[1024];
    size_t n = 0;
    for (int g = 0; g < 2; ++g) {
        for (int i = 0; i < grids[g].cells * grids[g].cells * grids[g].per && n < 1024; ++i) {
            const float score = 1.0f / (1.0f + expf(-grids[g].scores[i]));
            if (score < 0.75f) continue;
            const int cell = i / grids[g].per;
            const float* b = grids[g].boxes + (size_t)i * 16;
            const float cx = ((float)(cell % grids[g].cells) + 0.5f) / grids[g].cells * 256 + b[0];
            const float cy = ((float)(cell / grids[g].cells) + 0.5f) / grids[g].cells * 256 + b[1];
            SampleFace f = {
                score, (cx - (float)paste_left) / scale, (cy - (float)paste_top) / scale, b[2] / scale, b[3] / scale,
                {{0}}};
            for (int k = 0; k < 6; ++k) {
                const float ax = ((float)(cell % grids[g].cells) + 0.5f) / grids[g].cells * 256;
                const float ay = ((float)(cell / grids[g].cells) + 0.5f) / grids[g].cells * 256;
                f.kp[k][0] = (ax + b[4 + 2 * k] - (float)paste_left) / scale;
                f.kp[k][1] = (ay + b[5 + 2 * k] - (float)paste_top) / scale;
            }
            found[n++] = f;
        }
    }
    auto iou = [](const SampleFace* a, const SampleFace* b) {
        const float ix = fminf(a->cx + a->w / 2, b->cx + b->w / 2) - fmaxf(a->cx - a->w / 2, b->cx - b->w / 2);
        const float iy = fminf(a->cy + a->h / 2, b->cy + b->h / 2) - fmaxf(a->cy - a->h / 2, b->cy - b->h / 2);
        if (ix <= 0 || iy <= 0) return 0.0f;
        return ix * iy / (a->w * a->h + b->w * b->h - ix * iy);
    };
    size_t kept = 0;
    while (kept < 64) {
        size_t best = n;
        for (size_t i = 0; i < n; ++i)
            if (found[i].score > 0 && (best == n || found[i].score > found[best].score)) best = i;
        if (best == n) break;
        int overlaps = 0;
        for (size_t k = 0; k < kept && !overlaps; ++k) overlaps = iou(&faces[k], &found[best]) >= 0.3f;
        if (!overlaps) faces[kept++] = found[best];
        found[best].score = 0;
    }
    return kept;
}

// BlazeFace-like outputs: a few faces, each seen by the anchors near it with jittered boxes.
void synth_blazeface(std::mt19937& rng, const std::vector<kes_anchor>& anchors, std::vector<float>& s,
                     std::vector<float>& b, int faces) {
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (size_t i = 0; i < 896; ++i) s[i] = -10.0f + 9.0f * u(rng);
    for (float& x : b) x = (u(rng) - 0.5f) * 8;
    for (int f = 0; f < faces; ++f) {
        const float fx = 30 + u(rng) * 196, fy = 30 + u(rng) * 196, fw = 20 + u(rng) * 60;
        for (size_t i = 0; i < 896; ++i) {
            const float ax = anchors[i].cx * 256, ay = anchors[i].cy * 256;
            if (std::fabs(ax - fx) > fw / 2 || std::fabs(ay - fy) > fw / 2) continue;
            s[i] = 1.2f + 4.0f * u(rng);
            float* r = &b[i * 16];
            r[0] = fx - ax + (u(rng) - 0.5f) * 3, r[1] = fy - ay + (u(rng) - 0.5f) * 3;
            r[2] = fw * (0.95f + 0.1f * u(rng)), r[3] = fw * (0.95f + 0.1f * u(rng));
            for (int k = 0; k < 6; ++k)
                r[4 + 2 * k] = fx - ax + (u(rng) - 0.5f) * fw, r[5 + 2 * k] = fy - ay + (u(rng) - 0.5f) * fw;
        }
    }
}

TEST(DetectPipeline, BlazeFaceGivesTheSampleLoopsFaces) {
    const std::vector<kes_anchor> anchors = blazeface_anchors();
    std::mt19937 rng(21);
    std::vector<float> s(896), b(896 * 16);
    size_t faces = 0;
    for (int trial = 0; trial < 40; ++trial) {
        synth_blazeface(rng, anchors, s, b, 1 + trial % 6);
        // A 1280×720 photo letterboxed into 256²: pasted at (0, 56) with 256 × 144.
        const int left = 0, top = 56;
        const float scale = 256.0f / 1280.0f;
        const float* outs[4] = {s.data(), s.data() + 512, b.data(), b.data() + 512 * 16};
        SampleFace want[64];
        const size_t nwant = sample_decode_faces(outs, left, top, scale, want);

        const kes_detect_head heads[2] = {{s.data(), b.data(), 512}, {s.data() + 512, b.data() + 512 * 16, 384}};
        const kes_detect_decode_config dc = blazeface_decode_config(0.75f);
        std::vector<kes_detection> d(1024);
        size_t found = 0, kept = 0;
        ASSERT_EQ(kes_detect_decode(&dc, heads, 2, anchors.data(), 896, d.data(), d.size(), &found), KES_OK);
        kes_detect_nms_config nc;
        kes_detect_nms_config_init(&nc);
        nc.iou_threshold = 0.3f;
        nc.max_detections = 64;
        ASSERT_EQ(kes_detect_nms(&nc, d.data(), found, nullptr, 0, &kept), KES_OK);
        kes_detect_transform t;
        ASSERT_EQ(kes_detect_transform_letterbox(256, 256, left, top, 256, 144, 1280, 720, &t), KES_OK);
        ASSERT_EQ(kes_detect_transform_apply(&t, d.data(), kept), KES_OK);

        ASSERT_EQ(kept, nwant) << "trial " << trial;
        faces += kept;
        for (size_t i = 0; i < kept; ++i) {
            SCOPED_TRACE(testing::Message() << "trial " << trial << " face " << i);
            const kes_detection& g = d[i];
            EXPECT_EQ(g.score, want[i].score);
            EXPECT_NEAR((g.x0 + g.x1) / 2, want[i].cx, 2e-3f);
            EXPECT_NEAR((g.y0 + g.y1) / 2, want[i].cy, 2e-3f);
            EXPECT_NEAR(g.x1 - g.x0, want[i].w, 2e-3f);
            EXPECT_NEAR(g.y1 - g.y0, want[i].h, 2e-3f);
            for (int k = 0; k < 6; ++k) {
                EXPECT_NEAR(g.keypoints[k][0], want[i].kp[k][0], 2e-3f);
                EXPECT_NEAR(g.keypoints[k][1], want[i].kp[k][1], 2e-3f);
            }
        }
    }
    EXPECT_GT(faces, 80u) << "the synthetic outputs must hold faces for the comparison to mean anything";
}

TEST(DetectTransform, LetterboxAndSwapOnNegativeScale) {
    kes_detect_transform t;
    ASSERT_EQ(kes_detect_transform_letterbox(256, 256, 16, 0, 224, 256, 448, 512, &t), KES_OK);
    kes_detection d = det(16.0f / 256, 0, 240.0f / 256, 1, 1);
    d.num_keypoints = 1;
    d.keypoints[0][0] = 128.0f / 256, d.keypoints[0][1] = 0.5f;
    ASSERT_EQ(kes_detect_transform_apply(&t, &d, 1), KES_OK);
    EXPECT_NEAR(d.x0, 0.0f, 1e-4f);
    EXPECT_FLOAT_EQ(d.x1, 448.0f);
    EXPECT_FLOAT_EQ(d.y1, 512.0f);
    EXPECT_FLOAT_EQ(d.keypoints[0][0], 224.0f);
    const kes_detect_transform mirror{-1, 1, 100, 0};
    kes_detection m = det(10, 0, 20, 1, 1);
    ASSERT_EQ(kes_detect_transform_apply(&mirror, &m, 1), KES_OK);
    EXPECT_EQ(m.x0, 80.0f);
    EXPECT_EQ(m.x1, 90.0f);
    EXPECT_EQ(kes_detect_transform_letterbox(256, 256, 0, 0, 0, 256, 448, 512, &t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_detect_transform_letterbox(256, kNaN, 0, 0, 10, 256, 448, 512, &t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_detect_transform_apply(nullptr, &m, 1), KES_ERR_INVALID_ARGUMENT);
}

// ---- hostile input ------------------------------------------------------------------------------------

float hostile(std::mt19937& rng) {
    switch (rng() % 12) {
        case 0: return kNaN;
        case 1: return kInf;
        case 2: return -kInf;
        case 3: return 0.0f;
        case 4: return -0.0f;
        case 5: return std::numeric_limits<float>::max();
        case 6: return std::numeric_limits<float>::denorm_min();
        case 7: return -1e30f;
        default: return (static_cast<float>(rng() % 2001) - 1000.0f) / 100.0f;
    }
}

TEST(DetectRobustness, HostileInputGivesAStatusNeverUb) {
    std::mt19937 rng(99);
    size_t ok = 0, refused = 0;
    for (int trial = 0; trial < 2000; ++trial) {
        const size_t n = rng() % 40;
        kes_detect_decode_config c;
        kes_detect_decode_config_init(&c);
        c.num_classes = 1 + rng() % 4;
        c.first_class = rng() % 5 == 0 ? c.num_classes : 0;
        set_enum(c.class_mode, static_cast<int>(rng() % 3));
        set_enum(c.score_mode, static_cast<int>(rng() % 3));
        set_enum(c.box_coding, static_cast<int>(rng() % 5));
        set_enum(c.order, static_cast<int>(rng() % 3));
        c.score_threshold = rng() % 4 == 0 ? hostile(rng) : 0.3f;
        c.x_scale = rng() % 8 == 0 ? hostile(rng) : 2.0f;
        c.num_keypoints = rng() % 20;
        const size_t values = std::max<size_t>(4, c.keypoint_offset + size_t{c.num_keypoints} * c.keypoint_values);
        std::vector<float> s(n * c.num_classes + 1), b(n * values + 1);
        for (float& x : s) x = hostile(rng);
        for (float& x : b) x = hostile(rng);
        std::vector<kes_anchor> a(n);
        for (auto& x : a) x = {hostile(rng), hostile(rng), hostile(rng), hostile(rng)};
        const kes_detect_head head{s.data(), b.data(), n};
        const size_t cap = rng() % 3 == 0 ? 0 : rng() % 50;
        std::vector<kes_detection> out(cap + 1);
        size_t found = 0;
        const kes_status st =
            kes_detect_decode(&c, &head, 1, rng() % 2 ? a.data() : nullptr, 0, cap ? out.data() : nullptr, cap, &found);
        (void)st;  // anchors and anchor_count mismatch half the time: exercised on purpose
        const kes_status st2 = kes_detect_decode(&c, &head, 1, a.data(), n, cap ? out.data() : nullptr, cap, &found);
        ASSERT_TRUE(st2 == KES_OK || st2 == KES_ERR_INVALID_ARGUMENT || st2 == KES_ERR_CORRUPT_DATA) << st2;
        if (st2 != KES_OK) {
            ASSERT_GT(std::strlen(kes_last_error()), 0u);
            ++refused;
        } else {
            ++ok;
        }
        // NMS over whatever came out, and over raw hostile detections.
        std::vector<kes_detection> d(n);
        for (auto& x : d) {
            x = det(hostile(rng), hostile(rng), hostile(rng), hostile(rng), hostile(rng),
                    static_cast<int32_t>(rng() % 3));
            x.num_keypoints = rng() % 25 == 0 ? 99 : rng() % 3;
        }
        kes_detect_nms_config nc;
        kes_detect_nms_config_init(&nc);
        set_enum(nc.mode, static_cast<int>(rng() % 3));
        nc.iou_threshold = rng() % 6 == 0 ? hostile(rng) : 0.5f;
        nc.per_class = static_cast<int32_t>(rng() % 2);
        nc.max_detections = rng() % 4;
        size_t kept = 0;
        const kes_status sn = kes_detect_nms(&nc, d.data(), n, nullptr, 0, &kept);
        ASSERT_TRUE(sn == KES_OK || sn == KES_ERR_INVALID_ARGUMENT) << sn;
        if (sn == KES_OK) {
            ASSERT_LE(kept, n);
        }
        if (st2 == KES_OK && found > 0) {
            const size_t m = std::min(found, cap);
            const kes_status so = kes_detect_nms(&nc, out.data(), m, nullptr, 0, &kept);
            ASSERT_TRUE(so == KES_OK || so == KES_ERR_INVALID_ARGUMENT) << so;
        }
    }
    EXPECT_GT(ok, 10u);  // most hostile configs are refused; enough pass to run NMS on decoded output
    EXPECT_GT(refused, 100u);
}

}  // namespace

// ---- face alignment (kes_detect_align_*) ------------------------------------------------------------

namespace {

// ArcFace's template for BlazeFace's keypoints 0..3, as detect.h describes it.
const float kArcFace[4][2] = {{38.2946f, 51.6963f}, {73.5318f, 51.5014f}, {56.0252f, 71.7366f}, {56.1396f, 92.2848f}};

// A face whose keypoints 0..3 are the template moved by (x, y) → (s·cos r·x − s·sin r·y + dx, ...).
kes_detection face_at(float s, float r, float dx, float dy) {
    kes_detection d{};
    d.num_keypoints = 6;
    for (int i = 0; i < 4; ++i) {
        const float x = kArcFace[i][0], y = kArcFace[i][1];
        d.keypoints[i][0] = s * (std::cos(r) * x - std::sin(r) * y) + dx;
        d.keypoints[i][1] = s * (std::sin(r) * x + std::cos(r) * y) + dy;
    }
    return d;
}

}  // namespace

TEST(DetectAlign, SimilarityUndoesRotationScaleAndShift) {
    kes_detect_similarity t;
    const kes_detection same = face_at(1, 0, 0, 0);
    ASSERT_EQ(kes_detect_align_similarity(&same, &t), KES_OK) << kes_last_error();
    EXPECT_NEAR(t.a, 1, 1e-5);
    EXPECT_NEAR(t.b, 0, 1e-5);
    EXPECT_NEAR(t.tx, 0, 1e-3);
    EXPECT_NEAR(t.ty, 0, 1e-3);
    const kes_detection f = face_at(2.5f, 0.5f, 300, 120);
    ASSERT_EQ(kes_detect_align_similarity(&f, &t), KES_OK) << kes_last_error();
    for (int i = 0; i < 4; ++i) {
        const float x = f.keypoints[i][0], y = f.keypoints[i][1];
        EXPECT_NEAR(t.a * x - t.b * y + t.tx, kArcFace[i][0], 1e-3) << "keypoint " << i;
        EXPECT_NEAR(t.b * x + t.a * y + t.ty, kArcFace[i][1], 1e-3) << "keypoint " << i;
    }
}

// A source whose luma is x / 2 and whose chroma is (x / 2, y / 2) at chroma sample (x, y): bilinear
// sampling reproduces a linear ramp, so every aligned pixel is known.
TEST(DetectAlign, FaceIsSampledFromTheSourceAtTheTemplate) {
    const uint32_t w = 400, h = 300;
    std::vector<uint8_t> nv12(w * h * 3 / 2);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) nv12[y * w + x] = static_cast<uint8_t>(x / 2);
    for (uint32_t y = 0; y < h / 2; ++y)
        for (uint32_t x = 0; x < w / 2; ++x) {
            nv12[w * h + y * w + 2 * x] = static_cast<uint8_t>(x);
            nv12[w * h + y * w + 2 * x + 1] = static_cast<uint8_t>(y);
        }
    kes_image src, out;
    ASSERT_EQ(kes_image_wrap(&src, KES_PIXEL_NV12, w, h, 0, 0, nv12.data(), nv12.size()), KES_OK);
    // The face twice the template's size at (40, 30), unrotated: aligned (u, v) is source (2u + 40, 2v + 30).
    const kes_detection f = face_at(2, 0, 40, 30);
    ASSERT_EQ(kes_detect_align_face(&f, &src, nullptr, &out), KES_OK) << kes_last_error();
    EXPECT_EQ(out.format, KES_PIXEL_NV12);
    EXPECT_EQ(out.width, uint32_t{KES_DETECT_ALIGN_SIZE});
    EXPECT_EQ(out.height, uint32_t{KES_DETECT_ALIGN_SIZE});
    const uint8_t* y_plane = static_cast<const uint8_t*>(out.data);
    const uint8_t* uv_plane = y_plane + static_cast<size_t>(out.width_stride) * out.height_stride;
    int worst = 0;
    for (uint32_t v = 0; v < KES_DETECT_ALIGN_SIZE; ++v)
        for (uint32_t u = 0; u < KES_DETECT_ALIGN_SIZE; ++u) {
            worst = std::max(worst, std::abs(y_plane[v * out.width_stride + u] - static_cast<int>(u + 20)));
            if (u % 2 == 0 && v % 2 == 0) {
                worst = std::max(worst, std::abs(uv_plane[v / 2 * out.width_stride + u] - static_cast<int>(u + 20)));
                worst =
                    std::max(worst, std::abs(uv_plane[v / 2 * out.width_stride + u + 1] - static_cast<int>(v + 15)));
            }
        }
    EXPECT_LE(worst, 1);
    kes_image_release(&out);
}

TEST(DetectAlign, WhatCannotBeAlignedIsRefusedByName) {
    std::vector<uint8_t> pixels(64 * 64 * 3);
    kes_image nv12, rgb, out;
    ASSERT_EQ(kes_image_wrap(&nv12, KES_PIXEL_NV12, 64, 64, 0, 0, pixels.data(), 64 * 64 * 3 / 2), KES_OK);
    ASSERT_EQ(kes_image_wrap(&rgb, KES_PIXEL_RGB888, 64, 64, 0, 0, pixels.data(), pixels.size()), KES_OK);
    kes_detect_similarity t;
    kes_detection f = face_at(0.25f, 0, 10, 10);
    f.num_keypoints = 3;
    EXPECT_EQ(kes_detect_align_similarity(&f, &t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "3 keypoints"), nullptr) << kes_last_error();
    kes_detection point{};
    point.num_keypoints = 6;
    for (auto& k : point.keypoints) k[0] = k[1] = 20;
    EXPECT_EQ(kes_detect_align_face(&point, &nv12, nullptr, &out), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "no face to align"), nullptr) << kes_last_error();
    EXPECT_EQ(out.data, nullptr) << "out_face is zeroed on failure";
    f.num_keypoints = 6;
    f.keypoints[2][0] = kNaN;
    EXPECT_EQ(kes_detect_align_face(&f, &nv12, nullptr, &out), KES_ERR_INVALID_ARGUMENT);
    f = face_at(0.25f, 0, 10, 10);
    EXPECT_EQ(kes_detect_align_face(&f, &rgb, nullptr, &out), KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::strstr(kes_last_error(), "RGB888"), nullptr) << kes_last_error();
    EXPECT_EQ(kes_detect_align_face(nullptr, &nv12, nullptr, &out), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_detect_align_face(&f, nullptr, nullptr, &out), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_detect_align_face(&f, &nv12, nullptr, nullptr), KES_ERR_INVALID_ARGUMENT);
}
