// anchors.cpp — the SSD anchor grid, MediaPipe's SsdAnchorsCalculator (mediapipe/calculators/tflite/
// ssd_anchors_calculator.cc, GenerateAnchors) operation for operation, so the anchors equal MediaPipe's
// floats: CalculateScale mixes double (its `* 1.0`) and float exactly as below.
#include <cmath>
#include <cstdint>
#include <limits>

#include "detect.hpp"
#include "kes/error.hpp"

namespace kes {
namespace detect {
namespace {

constexpr uint32_t kMaxLayers = 16, kMaxRatios = 16;

float calculate_scale(float min_scale, float max_scale, uint32_t stride_index, uint32_t num_strides) {
    if (num_strides == 1) return (min_scale + max_scale) * 0.5f;
    return static_cast<float>(min_scale + (max_scale - min_scale) * 1.0 * stride_index / (num_strides - 1.0f));
}

bool finite(float v) {
    return std::isfinite(v);
}

}  // namespace

size_t anchors_generate(const kes_detect_anchor_config& c, kes_anchor* out, size_t capacity) {
    KES_REQUIRE(c.num_layers >= 1 && c.num_layers <= kMaxLayers, "config->num_layers is %u: must be 1 to %u",
                c.num_layers, kMaxLayers);
    KES_REQUIRE(c.strides != nullptr, "config->strides is NULL (num_layers %u)", c.num_layers);
    KES_REQUIRE((c.feature_map_widths == nullptr) == (c.feature_map_heights == nullptr),
                "config->feature_map_widths and feature_map_heights must both be set or both be NULL");
    const bool explicit_maps = c.feature_map_widths != nullptr;
    for (uint32_t l = 0; l < c.num_layers; ++l) {
        KES_REQUIRE(c.strides[l] > 0, "config->strides[%u] is 0", l);
        if (explicit_maps)
            KES_REQUIRE(c.feature_map_widths[l] > 0 && c.feature_map_heights[l] > 0,
                        "config->feature_map_widths/heights[%u] is 0", l);
    }
    if (!explicit_maps)
        KES_REQUIRE(c.input_width > 0 && c.input_height > 0, "config->input_width × input_height is %u × %u",
                    c.input_width, c.input_height);
    const float one = 1.0f;
    const float* ratios = c.aspect_ratios ? c.aspect_ratios : &one;
    const uint32_t num_ratios = c.aspect_ratios ? c.num_aspect_ratios : 1;
    KES_REQUIRE(num_ratios <= kMaxRatios, "config->num_aspect_ratios is %u: at most %u", num_ratios, kMaxRatios);
    for (uint32_t i = 0; i < num_ratios; ++i)
        KES_REQUIRE(finite(ratios[i]) && ratios[i] > 0, "config->aspect_ratios[%u] is %g: must be > 0", i,
                    static_cast<double>(ratios[i]));
    KES_REQUIRE(finite(c.min_scale) && finite(c.max_scale) && c.min_scale > 0 && c.max_scale > 0,
                "config->min_scale and max_scale must be finite and > 0 (got %g, %g)", static_cast<double>(c.min_scale),
                static_cast<double>(c.max_scale));
    KES_REQUIRE(finite(c.anchor_offset_x) && finite(c.anchor_offset_y) && finite(c.interpolated_scale_aspect_ratio),
                "config->anchor_offset_x/y and interpolated_scale_aspect_ratio must be finite");
    KES_REQUIRE(c.interpolated_scale_aspect_ratio >= 0, "config->interpolated_scale_aspect_ratio is %g: must be >= 0",
                static_cast<double>(c.interpolated_scale_aspect_ratio));
    KES_REQUIRE(num_ratios > 0 || c.interpolated_scale_aspect_ratio > 0 || c.reduce_boxes_in_lowest_layer,
                "config gives no anchor per cell: no aspect ratio and no interpolated_scale_aspect_ratio");

    size_t total = 0;
    uint32_t layer = 0;
    while (layer < c.num_layers) {
        float heights[kMaxLayers * (kMaxRatios + 1)], widths[kMaxLayers * (kMaxRatios + 1)];
        size_t per_cell = 0;
        uint32_t last = layer;
        while (last < c.num_layers && c.strides[last] == c.strides[layer]) {
            const float scale = calculate_scale(c.min_scale, c.max_scale, last, c.num_layers);
            float r[kMaxRatios + 1], s[kMaxRatios + 1];
            size_t k = 0;
            if (last == 0 && c.reduce_boxes_in_lowest_layer) {
                r[0] = 1.0f, r[1] = 2.0f, r[2] = 0.5f;
                s[0] = 0.1f, s[1] = scale, s[2] = scale;
                k = 3;
            } else {
                for (uint32_t i = 0; i < num_ratios; ++i) r[k] = ratios[i], s[k++] = scale;
                if (c.interpolated_scale_aspect_ratio > 0.0f) {
                    const float next = last == c.num_layers - 1
                                           ? 1.0f
                                           : calculate_scale(c.min_scale, c.max_scale, last + 1, c.num_layers);
                    s[k] = std::sqrt(scale * next);
                    r[k++] = c.interpolated_scale_aspect_ratio;
                }
            }
            for (size_t i = 0; i < k; ++i) {
                const float ratio_sqrt = std::sqrt(r[i]);
                heights[per_cell] = s[i] / ratio_sqrt;
                widths[per_cell++] = s[i] * ratio_sqrt;
            }
            ++last;
        }
        uint32_t fh, fw;
        if (explicit_maps) {
            fh = c.feature_map_heights[layer], fw = c.feature_map_widths[layer];
        } else {
            fh = static_cast<uint32_t>(
                std::ceil(1.0f * static_cast<float>(c.input_height) / static_cast<float>(c.strides[layer])));
            fw = static_cast<uint32_t>(
                std::ceil(1.0f * static_cast<float>(c.input_width) / static_cast<float>(c.strides[layer])));
        }
        const size_t n = static_cast<size_t>(fh) * fw * per_cell;
        KES_REQUIRE(n <= std::numeric_limits<uint32_t>::max() - total,
                    "config makes more than 2^32 anchors (layer %u: %u × %u cells × %zu)", layer, fw, fh, per_cell);
        if (out && total + n <= capacity) {
            kes_anchor* o = out + total;
            for (uint32_t y = 0; y < fh; ++y) {
                for (uint32_t x = 0; x < fw; ++x) {
                    const float cx = (static_cast<float>(x) + c.anchor_offset_x) * 1.0f / static_cast<float>(fw);
                    const float cy = (static_cast<float>(y) + c.anchor_offset_y) * 1.0f / static_cast<float>(fh);
                    for (size_t a = 0; a < per_cell; ++a) {
                        *o++ = c.fixed_anchor_size ? kes_anchor{cx, cy, 1.0f, 1.0f}
                                                   : kes_anchor{cx, cy, widths[a], heights[a]};
                    }
                }
            }
        }
        total += n;
        layer = last;
    }
    return total;
}

}  // namespace detect
}  // namespace kes
