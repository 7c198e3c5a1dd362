// landmarks.cpp — kes_detect_roi_from_detection (MediaPipe's DetectionsToRects / AlignmentPointsRects +
// RectTransformation, in pixels) and kes_detect_landmarks_decode (TensorsToLandmarks + LandmarkProjection
// through the crop's matrix).
#include <cmath>
#include <cstring>
#include <limits>

#include "detect.hpp"
#include "kes/error.hpp"
#include "kes/struct_size.hpp"

namespace kes {
namespace detect {
namespace {

constexpr size_t kRoiConfigV1 = KES_STRUCT_SIZE_THROUGH(kes_detect_roi_config, square);
constexpr size_t kLandmarkConfigV1 = KES_STRUCT_SIZE_THROUGH(kes_detect_landmark_config, visibility_mode);
constexpr uint32_t kMaxLandmarks = 4096;
constexpr double kPi = 3.14159265358979323846;

// |v| within float's range (a double beyond it would be undefined behaviour to convert; NaN fails too).
bool fits_float(double v) {
    return std::fabs(v) <= double(std::numeric_limits<float>::max());
}

// Into [−π, π), as MediaPipe's NormalizeRadians.
double normalize_radians(double angle) {
    return angle - 2 * kPi * std::floor((angle + kPi) / (2 * kPi));
}

void check_roi_config(const kes_detect_roi_config& c) {
    const int32_t size_from = enum_bits(c.size_from), square = enum_bits(c.square);
    KES_REQUIRE(size_from == KES_DETECT_ROI_SIZE_BOX || size_from == KES_DETECT_ROI_SIZE_KEYPOINTS,
                "config->size_from %d is not a kes_detect_roi_size", size_from);
    KES_REQUIRE(square >= KES_DETECT_ROI_SQUARE_NONE && square <= KES_DETECT_ROI_SQUARE_SHORT,
                "config->square %d is not a kes_detect_roi_square", square);
    KES_REQUIRE(std::isfinite(c.scale_x) && std::isfinite(c.scale_y) && c.scale_x > 0 && c.scale_y > 0,
                "config->scale_x, scale_y (%g, %g) must be finite and positive", double(c.scale_x), double(c.scale_y));
    KES_REQUIRE(std::isfinite(c.shift_x) && std::isfinite(c.shift_y) && std::isfinite(c.target_angle),
                "config->shift_x, shift_y and target_angle must be finite");
}

// Keypoint k of the detection, checked to exist and be finite.
void keypoint(const kes_detection& d, uint32_t k, const char* role, double* x, double* y) {
    KES_REQUIRE(k < d.num_keypoints && k < KES_DETECT_MAX_KEYPOINTS,
                "config->%s_keypoint is %u but the detection has %u keypoints", role, k, d.num_keypoints);
    KES_REQUIRE(std::isfinite(d.keypoints[k][0]) && std::isfinite(d.keypoints[k][1]),
                "the detection's keypoint %u (%s) is not finite", k, role);
    *x = d.keypoints[k][0];
    *y = d.keypoints[k][1];
}

kes_detect_rect roi_from_detection(const kes_detect_roi_config& c, const kes_detection& d) {
    double rotation = 0;
    if (c.rotate) {
        double x0, y0, x1, y1;
        keypoint(d, c.start_keypoint, "start", &x0, &y0);
        keypoint(d, c.end_keypoint, "end", &x1, &y1);
        rotation = normalize_radians(double(c.target_angle) - std::atan2(-(y1 - y0), x1 - x0));
    }
    double cx, cy, w, h;
    if (enum_bits(c.size_from) == KES_DETECT_ROI_SIZE_KEYPOINTS) {
        double x1, y1;
        keypoint(d, c.start_keypoint, "start", &cx, &cy);
        keypoint(d, c.end_keypoint, "end", &x1, &y1);
        w = h = 2 * std::hypot(x1 - cx, y1 - cy);
    } else {
        KES_REQUIRE(std::isfinite(d.x0) && std::isfinite(d.y0) && std::isfinite(d.x1) && std::isfinite(d.y1),
                    "the detection's box is not finite");
        cx = (double(d.x0) + d.x1) / 2, cy = (double(d.y0) + d.y1) / 2;
        w = double(d.x1) - d.x0, h = double(d.y1) - d.y0;
    }
    // The shift is along the rectangle's own axes, in its size before squaring (RectTransformation).
    const double cs = std::cos(rotation), sn = std::sin(rotation);
    const double sx = c.shift_x * w, sy = c.shift_y * h;
    cx += cs * sx - sn * sy;
    cy += sn * sx + cs * sy;
    const int32_t square = enum_bits(c.square);
    if (square == KES_DETECT_ROI_SQUARE_LONG) w = h = std::fmax(w, h);
    if (square == KES_DETECT_ROI_SQUARE_SHORT) w = h = std::fmin(w, h);
    w *= c.scale_x;
    h *= c.scale_y;
    KES_REQUIRE(fits_float(w) && fits_float(h) && w > 0 && h > 0 && fits_float(cx) && fits_float(cy),
                "the region is %g x %g at (%g, %g): its size must be positive and finite (a box with x1 <= x0 or "
                "y1 <= y0, or equal alignment keypoints?)",
                w, h, cx, cy);
    const kes_detect_rect r{float(cx), float(cy), float(w), float(h), float(rotation)};
    KES_REQUIRE(r.width > 0 && r.height > 0, "the region %g x %g is too small for a float", w, h);
    return r;
}

float activate(float v, int32_t mode) {
    return mode == KES_DETECT_SCORE_SIGMOID ? 1.0f / (1.0f + std::exp(-v)) : v;
}

void landmarks_decode(const kes_detect_landmark_config& c, const float* values, const float* m, kes_landmark* out) {
    const uint32_t vpl = c.values_per_landmark;
    const int32_t mode = enum_bits(c.visibility_mode);
    // z is a length along the crop's x axis: one model pixel spans |column 0| source pixels.
    const double z_scale = m ? std::hypot(double(m[0]), double(m[3])) : 1.0;
    for (uint32_t i = 0; i < c.num_landmarks; ++i) {
        const float* v = values + size_t(i) * vpl;
        for (uint32_t k = 0; k < vpl; ++k)
            if (!std::isfinite(v[k]))
                KES_FAIL(KES_ERR_CORRUPT_DATA, "landmark %u value %u is %g: the model's output is not finite", i, k,
                         double(v[k]));
        const double x = v[0], y = v[1];
        const double px = m ? m[0] * x + m[1] * y + m[2] : x, py = m ? m[3] * x + m[4] * y + m[5] : y;
        const double pz = v[2] * z_scale;
        if (!fits_float(px) || !fits_float(py) || !fits_float(pz))
            KES_FAIL(KES_ERR_CORRUPT_DATA, "landmark %u maps to (%g, %g, %g), beyond float's range", i, px, py, pz);
        kes_landmark& l = out[i];
        l.x = float(px);
        l.y = float(py);
        l.z = float(pz);
        l.visibility = vpl > 3 ? activate(v[3], mode) : 1.0f;
        l.presence = vpl > 4 ? activate(v[4], mode) : 1.0f;
    }
}

}  // namespace
}  // namespace detect
}  // namespace kes

extern "C" {

void kes_detect_roi_config_init(kes_detect_roi_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->size_from = KES_DETECT_ROI_SIZE_BOX;
    config->end_keypoint = 1;
    config->scale_x = config->scale_y = 1.0f;
    config->square = KES_DETECT_ROI_SQUARE_NONE;
}

kes_status kes_detect_roi_from_detection(const kes_detect_roi_config* config, const kes_detection* detection,
                                         kes_detect_rect* out_rect) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(detection);
        KES_REQUIRE_NOT_NULL(out_rect);
        kes_detect_roi_config c;
        kes_detect_roi_config_init(&c);
        if (config) kes::read_struct(config, kes::detect::kRoiConfigV1, "config", "kes_detect_roi_config", &c);
        kes::detect::check_roi_config(c);
        *out_rect = kes::detect::roi_from_detection(c, *detection);
        return KES_OK;
    });
}

void kes_detect_landmark_config_init(kes_detect_landmark_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->values_per_landmark = 3;
    config->visibility_mode = KES_DETECT_SCORE_SIGMOID;
}

kes_status kes_detect_landmarks_decode(const kes_detect_landmark_config* config, const float* values,
                                       size_t value_count, const float* to_image, kes_landmark* out, size_t capacity) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(config);
        KES_REQUIRE_NOT_NULL(values);
        KES_REQUIRE_NOT_NULL(out);
        kes_detect_landmark_config c;
        kes_detect_landmark_config_init(&c);
        kes::read_struct(config, kes::detect::kLandmarkConfigV1, "config", "kes_detect_landmark_config", &c);
        KES_REQUIRE(c.num_landmarks >= 1 && c.num_landmarks <= kes::detect::kMaxLandmarks,
                    "config->num_landmarks is %u: set it to the model's count (1..%u)", c.num_landmarks,
                    kes::detect::kMaxLandmarks);
        KES_REQUIRE(c.values_per_landmark >= 3 && c.values_per_landmark <= 5,
                    "config->values_per_landmark is %u: 3 (x, y, z) to 5 (+ visibility, presence)",
                    c.values_per_landmark);
        const int32_t mode = kes::detect::enum_bits(c.visibility_mode);
        KES_REQUIRE(mode == KES_DETECT_SCORE_SIGMOID || mode == KES_DETECT_SCORE_RAW,
                    "config->visibility_mode %d is not a kes_detect_score_mode", mode);
        const size_t needed = size_t(c.num_landmarks) * c.values_per_landmark;
        KES_REQUIRE(value_count >= needed, "value_count %zu is below the %zu values of %u landmarks x %u", value_count,
                    needed, c.num_landmarks, c.values_per_landmark);
        KES_REQUIRE(capacity >= c.num_landmarks, "capacity %zu is below num_landmarks %u", capacity, c.num_landmarks);
        if (to_image)
            for (int i = 0; i < 6; ++i)
                KES_REQUIRE(std::isfinite(to_image[i]), "to_image[%d] is %g: every matrix entry must be finite", i,
                            double(to_image[i]));
        kes::detect::landmarks_decode(c, values, to_image, out);
        return KES_OK;
    });
}

}  // extern "C"
