// kes_osd_blend_mask (kestrel/osd.h): a segmentation model's mask, upsampled bilinearly over the whole
// NV12/NV21 frame, blends the frame with a blurred copy of itself, a colour or another image. Plain
// C++: the mask's taps are tabled once per column and per row, so each sample costs a few multiplies.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/osd.h"

namespace kes {
namespace osd {
namespace {

constexpr size_t kMaskConfigV1 = KES_STRUCT_SIZE_THROUGH(kes_osd_mask_config, invert);

struct Planes {
    kes_image_plane y, c;  // luma; interleaved chroma pairs
};

// The planes of an NV12/NV21 image the CPU reads; `what` names it in messages.
Planes planes_of(const kes_image& image, const char* what) {
    check_sdk(kes_image_validate(&image), what);
    const int64_t f = enum_value(image.format);
    if (f != KES_PIXEL_NV12 && f != KES_PIXEL_NV21)
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "%s format %s is not supported: kes_osd_blend_mask takes NV12 and NV21 (convert with "
                 "kes_vpc_convert_color first)",
                 what, kes_pixel_format_name(image.format));
    require_cpu_access(image, what);
    Planes p;
    check_sdk(kes_image_get_plane(&image, 0, &p.y), what);
    check_sdk(kes_image_get_plane(&image, 1, &p.c), what);
    return p;
}

// The mask as H × W foreground weights in [0, 1], row after row.
std::vector<float> read_mask(const kes_tensor& t, bool invert, uint32_t* out_w, uint32_t* out_h) {
    check_sdk(kes_tensor_validate(&t), "mask");
    const int64_t dtype = enum_value(t.dtype);
    KES_REQUIRE(dtype == KES_F32 || dtype == KES_U8, "mask dtype %s is not supported: F32 weights or U8 (255 = 1)",
                kes_dtype_name(t.dtype));
    const bool nhwc = enum_value(t.layout) == KES_LAYOUT_NHWC;
    const uint32_t spatial = nhwc ? 3 : 2;
    KES_REQUIRE(t.ndim >= spatial, "mask has %u dimensions: it needs %s", t.ndim,
                nhwc ? "[..., H, W, 1] (NHWC)" : "[..., H, W]");
    const uint32_t hd = t.ndim - spatial, wd = hd + 1;
    for (uint32_t d = 0; d < t.ndim; ++d)
        KES_REQUIRE(d == hd || d == wd || t.shape[d] == 1,
                    "mask dimension %u is %lld: every dimension but H (%u) and W (%u) must be 1", d,
                    static_cast<long long>(t.shape[d]), hd, wd);
    KES_REQUIRE(t.shape[hd] >= 1 && t.shape[wd] >= 1 && t.shape[hd] <= 65536 && t.shape[wd] <= 65536,
                "mask size %lldx%lld must be 1..65536 per side", static_cast<long long>(t.shape[wd]),
                static_cast<long long>(t.shape[hd]));
    const uint32_t w = uint32_t(t.shape[wd]), h = uint32_t(t.shape[hd]);
    std::vector<float> m(size_t(w) * h);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            const int64_t at = int64_t(y) * t.strides[hd] + int64_t(x) * t.strides[wd];
            float v;
            if (dtype == KES_F32) {
                v = static_cast<const float*>(t.data)[at];
                if (!std::isfinite(v))
                    KES_FAIL(KES_ERR_CORRUPT_DATA, "mask value at (x %u, y %u) is %g: the model's output is not finite",
                             x, y, double(v));
                v = std::min(std::max(v, 0.0f), 1.0f);
            } else {
                v = static_cast<const uint8_t*>(t.data)[at] / 255.0f;
            }
            m[size_t(y) * w + x] = invert ? 1.0f - v : v;
        }
    *out_w = w;
    *out_h = h;
    return m;
}

// Bilinear taps along one axis: output sample i of n, each `step` frame pixels wide, reads the mask of
// size `src` at ((i + 0.5)·step·src/frame − 0.5), clamped (kes_vpc_crop_resize's convention).
struct AxisTaps {
    std::vector<uint32_t> i0, i1;
    std::vector<float> w1;
};

AxisTaps axis_taps(uint32_t n, uint32_t step, uint32_t frame, uint32_t src) {
    AxisTaps t;
    t.i0.resize(n);
    t.i1.resize(n);
    t.w1.resize(n);
    const double scale = double(src) / frame;
    for (uint32_t i = 0; i < n; ++i) {
        const double x = std::min(std::max((i + 0.5) * step * scale - 0.5, 0.0), double(src - 1));
        t.i0[i] = uint32_t(x);
        t.i1[i] = std::min(t.i0[i] + 1, src - 1);
        t.w1[i] = float(x - t.i0[i]);
    }
    return t;
}

// A box blur of radius r over a plane of w × h samples of cn interleaved channels (edges clamped), into
// a tight buffer: per row, window sums along the row (extended by its clamped edges); down the plane, a
// running sum of 2r + 1 such rows. The row sums live in a ring of 2r + 2 rows (the window and the row
// entering it), so the scratch beyond the output stays small whatever the frame.
std::vector<uint8_t> box_blur(const kes_image_plane& p, uint32_t cn, uint32_t r) {
    const uint32_t w = p.row_bytes / cn, h = p.rows;
    const size_t n = size_t(w) * cn;
    const uint32_t slots = std::min(2 * r + 2, h);  // rows closer than this never share a slot
    std::vector<uint32_t> ring(size_t(slots) * n);
    std::vector<int64_t> held(slots, -1);
    std::vector<uint8_t> ext((size_t(w) + 2 * r + 1) * cn);
    auto row_sums = [&](int64_t y) -> const uint32_t* {
        y = std::min<int64_t>(std::max<int64_t>(y, 0), h - 1);
        const size_t slot = size_t(y) % slots;
        uint32_t* out = &ring[slot * n];
        if (held[slot] == y) return out;
        held[slot] = y;
        const uint8_t* row = p.data + size_t(y) * p.stride;
        for (int64_t x = -int64_t(r); x <= int64_t(w) + r; ++x) {
            const size_t from = size_t(std::min<int64_t>(std::max<int64_t>(x, 0), w - 1)) * cn;
            for (uint32_t c = 0; c < cn; ++c) ext[size_t(x + r) * cn + c] = row[from + c];
        }
        for (uint32_t c = 0; c < cn; ++c) {
            uint32_t s = 0;
            for (uint32_t x = 0; x <= 2 * r; ++x) s += ext[size_t(x) * cn + c];
            for (uint32_t x = 0; x < w; ++x) {
                out[size_t(x) * cn + c] = s;
                s += ext[size_t(x + 2 * r + 1) * cn + c];
                s -= ext[size_t(x) * cn + c];
            }
        }
        return out;
    };
    // (sum + area/2) / area as a multiply: the numerator a ≤ 256·area, so with M = ceil(2^46 / area)
    // a·M < 2^55 fits, and its error a·(M − 2^46/area) / 2^46 < 256·area / 2^46 stays below 1/area (area
    // < 2^18): the shift gives the exact floor.
    const uint32_t area = (2 * r + 1) * (2 * r + 1);
    const uint64_t magic = ((uint64_t(1) << 46) + area - 1) / area;
    std::vector<uint8_t> blurred(n * h);
    std::vector<uint32_t> col(n, 0);
    for (int64_t y = -int64_t(r); y <= int64_t(r); ++y) {
        const uint32_t* s = row_sums(y);
        for (size_t i = 0; i < n; ++i) col[i] += s[i];
    }
    for (uint32_t y = 0; y < h; ++y) {
        uint8_t* out = &blurred[size_t(y) * n];
        for (size_t i = 0; i < n; ++i) out[i] = uint8_t((uint64_t(col[i] + area / 2) * magic) >> 46);
        if (y + 1 == h) break;
        // The leaving row was entered 2r + 1 rows ago and is still in the ring; the entering one, 2r + 1
        // rows further down, lands in another slot, so both pointers stay valid.
        const uint32_t* sub = row_sums(int64_t(y) - r);
        const uint32_t* add = row_sums(int64_t(y) + r + 1);
        for (size_t i = 0; i < n; ++i) col[i] += add[i] - sub[i];
    }
    return blurred;
}

// A plane of background samples: rows `stride` bytes apart (0 for a colour: one row serves every row).
struct Background {
    const uint8_t* data;
    size_t stride;
};

// out = m·frame + (1 − m)·background over one plane of cn channels (1 luma, 2 chroma pairs), each sample
// `step` luma pixels wide. Per row the two mask rows are first blended vertically (mw values), then each
// sample's weight is looked up, and the blend itself runs over the row's bytes in one plain loop.
void blend_plane(const kes_image_plane& p, uint32_t cn, uint32_t step, const Background& bg,
                 const std::vector<float>& mask, uint32_t mw, uint32_t mh, uint32_t frame_w, uint32_t frame_h) {
    const uint32_t w = p.row_bytes / cn;
    const size_t n = size_t(w) * cn;
    const AxisTaps tx = axis_taps(w, step, frame_w, mw), ty = axis_taps(p.rows, step, frame_h, mh);
    std::vector<float> mrow(mw), weight(n);
    for (uint32_t y = 0; y < p.rows; ++y) {
        const float* m0 = &mask[size_t(ty.i0[y]) * mw];
        const float* m1 = &mask[size_t(ty.i1[y]) * mw];
        const float wy = ty.w1[y];
        for (uint32_t i = 0; i < mw; ++i) mrow[i] = m0[i] + (m1[i] - m0[i]) * wy;
        for (uint32_t x = 0; x < w; ++x) {
            const float left = mrow[tx.i0[x]];
            const float m = left + (mrow[tx.i1[x]] - left) * tx.w1[x];
            for (uint32_t c = 0; c < cn; ++c) weight[size_t(x) * cn + c] = m;
        }
        uint8_t* row = p.data + size_t(y) * p.stride;
        const uint8_t* back = bg.data + size_t(y) * bg.stride;
        for (size_t i = 0; i < n; ++i) {
            const float b = back[i];
            row[i] = uint8_t(std::min(b + (float(row[i]) - b) * weight[i] + 0.5f, 255.0f));
        }
    }
}

}  // namespace
}  // namespace osd
}  // namespace kes

extern "C" {

void kes_osd_mask_config_init(kes_osd_mask_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->background = KES_OSD_BACKGROUND_BLUR;
    config->blur_radius = 12;
    config->color = kes_osd_color{0, 128, 128, 255};
}

kes_status kes_osd_blend_mask(kes_image* frame, const kes_tensor* mask, const kes_osd_mask_config* config) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "osd_blend_mask");
        KES_REQUIRE_NOT_NULL(frame);
        KES_REQUIRE_NOT_NULL(mask);
        kes_osd_mask_config cfg;
        kes_osd_mask_config_init(&cfg);
        if (config) kes::read_struct(config, kes::osd::kMaskConfigV1, "config", "kes_osd_mask_config", &cfg);
        const kes::osd::Planes fp = kes::osd::planes_of(*frame, "frame");
        const int64_t mode = kes::enum_value(cfg.background);
        KES_REQUIRE(mode >= KES_OSD_BACKGROUND_BLUR && mode <= KES_OSD_BACKGROUND_IMAGE,
                    "config->background %lld is not a kes_osd_background", static_cast<long long>(mode));
        const bool vu = kes::enum_value(frame->format) == KES_PIXEL_NV21;
        kes::osd::Background luma_bg{nullptr, 0}, chroma_bg{nullptr, 0};
        std::vector<uint8_t> scratch_luma, scratch_chroma;  // BLUR's blurred planes, COLOR's one row each
        if (mode == KES_OSD_BACKGROUND_BLUR) {
            KES_REQUIRE(cfg.blur_radius >= 1 && cfg.blur_radius <= KES_OSD_MAX_BLUR_RADIUS,
                        "config->blur_radius must be 1..%d (got %u)", KES_OSD_MAX_BLUR_RADIUS, cfg.blur_radius);
        } else if (mode == KES_OSD_BACKGROUND_COLOR) {
            scratch_luma.assign(fp.y.row_bytes, cfg.color.y);
            scratch_chroma.resize(fp.c.row_bytes);
            for (size_t i = 0; i + 1 < scratch_chroma.size(); i += 2) {
                scratch_chroma[i] = vu ? cfg.color.v : cfg.color.u;
                scratch_chroma[i + 1] = vu ? cfg.color.u : cfg.color.v;
            }
            luma_bg = {scratch_luma.data(), 0};
            chroma_bg = {scratch_chroma.data(), 0};
        } else {
            KES_REQUIRE(cfg.image != nullptr, "config->image is NULL with background KES_OSD_BACKGROUND_IMAGE");
            KES_REQUIRE(kes::enum_value(cfg.image->format) == kes::enum_value(frame->format) &&
                            cfg.image->width == frame->width && cfg.image->height == frame->height,
                        "config->image is %s %ux%u: it must match the frame, %s %ux%u",
                        kes_pixel_format_name(cfg.image->format), cfg.image->width, cfg.image->height,
                        kes_pixel_format_name(frame->format), frame->width, frame->height);
            const kes::osd::Planes bp = kes::osd::planes_of(*cfg.image, "config->image");
            luma_bg = {bp.y.data, bp.y.stride};
            chroma_bg = {bp.c.data, bp.c.stride};
        }
        uint32_t mw = 0, mh = 0;
        const std::vector<float> weights = kes::osd::read_mask(*mask, cfg.invert != 0, &mw, &mh);
        if (mode == KES_OSD_BACKGROUND_BLUR) {
            scratch_luma = kes::osd::box_blur(fp.y, 1, cfg.blur_radius);
            scratch_chroma = kes::osd::box_blur(fp.c, 2, (cfg.blur_radius + 1) / 2);
            luma_bg = {scratch_luma.data(), fp.y.row_bytes};
            chroma_bg = {scratch_chroma.data(), fp.c.row_bytes};
        }
        kes::osd::blend_plane(fp.y, 1, 1, luma_bg, weights, mw, mh, frame->width, frame->height);
        kes::osd::blend_plane(fp.c, 2, 2, chroma_bg, weights, mw, mh, frame->width, frame->height);
        return KES_OK;
    });
}

}  // extern "C"
