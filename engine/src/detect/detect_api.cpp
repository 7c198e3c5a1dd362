// detect_api.cpp — kestrel/detect.h's C entry points: struct_size reading, argument checks, the kernel
// table this CPU runs, and the letterbox transform.
#include <cmath>
#include <cstring>
#include <utility>

#include "detect.hpp"
#include "kes/error.hpp"
#include "kes/struct_size.hpp"

namespace {

// The first (and so far only) release of each config struct: these sizes stay fixed when fields are
// appended.
constexpr size_t kAnchorConfigV1 = KES_STRUCT_SIZE_THROUGH(kes_detect_anchor_config, feature_map_heights);
constexpr size_t kDecodeConfigV1 = KES_STRUCT_SIZE_THROUGH(kes_detect_decode_config, box_value_stride);
constexpr size_t kNmsConfigV1 = KES_STRUCT_SIZE_THROUGH(kes_detect_nms_config, max_per_class);

bool finite_positive(float v) {
    return std::isfinite(v) && v > 0.0f;
}

}  // namespace

extern "C" {

void kes_detect_anchor_config_init(kes_detect_anchor_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->min_scale = 0.2f;
    config->max_scale = 0.95f;
    config->anchor_offset_x = 0.5f;
    config->anchor_offset_y = 0.5f;
    config->interpolated_scale_aspect_ratio = 1.0f;
}

kes_status kes_detect_anchors_generate(const kes_detect_anchor_config* config, kes_anchor* out, size_t capacity,
                                       size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_count);
        KES_REQUIRE(out != nullptr || capacity == 0, "out is NULL with capacity %zu", capacity);
        kes_detect_anchor_config c;
        kes_detect_anchor_config_init(&c);
        kes::read_struct(config, kAnchorConfigV1, "config", "kes_detect_anchor_config", &c);
        const size_t count = kes::detect::anchors_generate(c, nullptr, 0);
        *out_count = count;
        if (!out) return KES_OK;
        KES_REQUIRE(capacity >= count, "capacity %zu is below the %zu anchors of this grid (*out_count has it)",
                    capacity, count);
        kes::detect::anchors_generate(c, out, capacity);
        return KES_OK;
    });
}

void kes_detect_decode_config_init(kes_detect_decode_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->score_threshold = 0.5f;
    config->score_mode = KES_DETECT_SCORE_SIGMOID;
    config->class_mode = KES_DETECT_CLASS_MAX;
    config->num_classes = 1;
    config->box_coding = KES_DETECT_BOX_CENTER_SIZE;
    config->order = KES_DETECT_ORDER_XY;
    config->x_scale = config->y_scale = config->w_scale = config->h_scale = 1.0f;
    config->keypoint_offset = 4;
    config->keypoint_values = 2;
}

kes_status kes_detect_decode(const kes_detect_decode_config* config, const kes_detect_head* heads, size_t head_count,
                             const kes_anchor* anchors, size_t anchor_count, kes_detection* out, size_t capacity,
                             size_t* out_found) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_found);
        kes_detect_decode_config c;
        kes_detect_decode_config_init(&c);
        kes::read_struct(config, kDecodeConfigV1, "config", "kes_detect_decode_config", &c);
        *out_found = kes::detect::decode(kes::detect::kernels_active(), c, heads, head_count, anchors, anchor_count,
                                         out, capacity);
        return KES_OK;
    });
}

void kes_detect_nms_config_init(kes_detect_nms_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->mode = KES_DETECT_NMS_HARD;
    config->iou_threshold = 0.5f;
}

const char* kes_detect_kernels_name(void) {
    return kes::detect::kernels_active().name;
}

kes_status kes_detect_nms_scratch_size(size_t count, size_t* out_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_bytes);
        *out_bytes = kes::detect::nms_scratch_bytes(count);
        return KES_OK;
    });
}

kes_status kes_detect_nms(const kes_detect_nms_config* config, kes_detection* dets, size_t count, void* scratch,
                          size_t scratch_size, size_t* out_kept) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_kept);
        kes_detect_nms_config c;
        kes_detect_nms_config_init(&c);
        kes::read_struct(config, kNmsConfigV1, "config", "kes_detect_nms_config", &c);
        *out_kept = kes::detect::nms(kes::detect::kernels_active(), c, dets, count, scratch, scratch_size);
        return KES_OK;
    });
}

kes_status kes_detect_transform_letterbox(float input_width, float input_height, float paste_x, float paste_y,
                                          float paste_width, float paste_height, float source_width,
                                          float source_height, kes_detect_transform* out_transform) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_transform);
        KES_REQUIRE(finite_positive(input_width) && finite_positive(input_height),
                    "input size %g × %g must be finite and > 0", static_cast<double>(input_width),
                    static_cast<double>(input_height));
        KES_REQUIRE(finite_positive(paste_width) && finite_positive(paste_height),
                    "paste size %g × %g must be finite and > 0", static_cast<double>(paste_width),
                    static_cast<double>(paste_height));
        KES_REQUIRE(finite_positive(source_width) && finite_positive(source_height),
                    "source size %g × %g must be finite and > 0", static_cast<double>(source_width),
                    static_cast<double>(source_height));
        KES_REQUIRE(std::isfinite(paste_x) && std::isfinite(paste_y), "paste_x/paste_y must be finite");
        const double sx = static_cast<double>(source_width) / paste_width;
        const double sy = static_cast<double>(source_height) / paste_height;
        out_transform->scale_x = static_cast<float>(input_width * sx);
        out_transform->scale_y = static_cast<float>(input_height * sy);
        out_transform->offset_x = static_cast<float>(-paste_x * sx);
        out_transform->offset_y = static_cast<float>(-paste_y * sy);
        return KES_OK;
    });
}

kes_status kes_detect_transform_apply(const kes_detect_transform* transform, kes_detection* dets, size_t count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(transform);
        KES_REQUIRE(count == 0 || dets != nullptr, "dets is NULL with count %zu", count);
        const kes_detect_transform t = *transform;
        KES_REQUIRE(std::isfinite(t.scale_x) && std::isfinite(t.scale_y) && std::isfinite(t.offset_x) &&
                        std::isfinite(t.offset_y),
                    "transform has a non-finite value");
        for (size_t i = 0; i < count; ++i)
            KES_REQUIRE(dets[i].num_keypoints <= KES_DETECT_MAX_KEYPOINTS, "dets[%zu].num_keypoints is %u: at most %d",
                        i, dets[i].num_keypoints, KES_DETECT_MAX_KEYPOINTS);
        for (size_t i = 0; i < count; ++i) {
            kes_detection& d = dets[i];
            float x0 = d.x0 * t.scale_x + t.offset_x, x1 = d.x1 * t.scale_x + t.offset_x;
            float y0 = d.y0 * t.scale_y + t.offset_y, y1 = d.y1 * t.scale_y + t.offset_y;
            if (t.scale_x < 0) std::swap(x0, x1);
            if (t.scale_y < 0) std::swap(y0, y1);
            d.x0 = x0, d.y0 = y0, d.x1 = x1, d.y1 = y1;
            for (uint32_t k = 0; k < d.num_keypoints; ++k) {
                d.keypoints[k][0] = d.keypoints[k][0] * t.scale_x + t.offset_x;
                d.keypoints[k][1] = d.keypoints[k][1] * t.scale_y + t.offset_y;
            }
        }
        return KES_OK;
    });
}

}  // extern "C"
