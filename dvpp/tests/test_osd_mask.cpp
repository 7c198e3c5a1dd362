// kes_osd_blend_mask (kestrel/osd.h): every sample against a plain reference written here from the
// header's definition — the mask read at each sample's centre in double precision, the blur as a direct
// (2r + 1)² window mean — on NV12/NV21 frames with odd sizes and padded strides whose padding must stay
// untouched; the three backgrounds, invert, U8 and F32 masks in NHWC/NCHW/ND shapes; and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "kes/struct_size.hpp"
#include "kestrel/osd.h"
#include "struct_size_check.hpp"

namespace {

// This thread's CPU time in ms: the machine may be shared, so wall time would measure the neighbours.
double cpu_ms() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

constexpr uint8_t kSentinel = 0xA5;

// An NV12/NV21 frame in a vector: 4 bytes of padding per row and 2 rows per plane, all kSentinel.
struct Frame {
    Frame(kes_pixel_format f, uint32_t w, uint32_t h, uint32_t seed) {
        const uint32_t ws = ((w + 1) & ~1u) + 4, hs = ((h + 1) & ~1u) + 2;
        size_t size = 0;
        EXPECT_EQ(kes_image_buffer_size(f, ws, hs, &size), KES_OK);
        bytes.assign(size, kSentinel);
        EXPECT_EQ(kes_image_wrap(&img, f, w, h, ws, hs, bytes.data(), size), KES_OK) << kes_last_error();
        for (uint32_t plane = 0; plane < 2; ++plane) {
            kes_image_plane p;
            EXPECT_EQ(kes_image_get_plane(&img, plane, &p), KES_OK);
            for (uint32_t y = 0; y < p.rows; ++y)
                for (uint32_t x = 0; x < p.row_bytes; ++x)
                    p.data[size_t(y) * p.stride + x] =
                        uint8_t(x * (3 + seed) + y * 5 + ((x ^ y) % 7) * 20 + plane * 50);
        }
    }
    kes_image_plane plane(uint32_t i) const {
        kes_image_plane p;
        EXPECT_EQ(kes_image_get_plane(&img, i, &p), KES_OK);
        return p;
    }
    std::vector<uint8_t> bytes;
    kes_image img{};
};

// A mask tensor over a caller-held vector.
struct Mask {
    Mask(uint32_t w, uint32_t h, kes_dtype dtype = KES_F32, kes_layout layout = KES_LAYOUT_NHWC) {
        f32.resize(size_t(w) * h);
        u8.resize(size_t(w) * h);
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) {
                // A soft-edged blob plus values beyond [0, 1] that must be clamped.
                const double d = std::hypot(x - w * 0.45, y - h * 0.55) / (0.3 * w);
                const double v = 1.3 - d;
                f32[size_t(y) * w + x] = float(v);
                u8[size_t(y) * w + x] = uint8_t(std::min(std::max(v, 0.0), 1.0) * 255);
            }
        const int64_t nhwc[4] = {1, h, w, 1}, nchw[4] = {1, 1, h, w}, nd[2] = {h, w};
        const bool is_nd = layout == KES_LAYOUT_ND;
        void* data = dtype == KES_F32 ? static_cast<void*>(f32.data()) : static_cast<void*>(u8.data());
        const size_t bytes = dtype == KES_F32 ? f32.size() * 4 : u8.size();
        EXPECT_EQ(kes_tensor_wrap(&t, dtype, layout, is_nd ? 2 : 4,
                                  is_nd                       ? nd
                                  : layout == KES_LAYOUT_NHWC ? nhwc
                                                              : nchw,
                                  data, bytes),
                  KES_OK)
            << kes_last_error();
        this->w = w, this->h = h, this->dtype = dtype;
    }
    double at(long x, long y) const {
        x = std::min(std::max(x, 0L), long(w) - 1);
        y = std::min(std::max(y, 0L), long(h) - 1);
        const size_t i = size_t(y) * w + size_t(x);
        return dtype == KES_F32 ? std::min(std::max(double(f32[i]), 0.0), 1.0) : u8[i] / 255.0;
    }
    std::vector<float> f32;
    std::vector<uint8_t> u8;
    uint32_t w, h;
    kes_dtype dtype;
    kes_tensor t{};
};

// The header's mask weight at frame point (px, py) (continuous luma coordinates).
double weight(const Mask& m, double px, double py, uint32_t frame_w, uint32_t frame_h, bool invert) {
    const double mx = std::min(std::max(px * m.w / frame_w - 0.5, 0.0), double(m.w - 1));
    const double my = std::min(std::max(py * m.h / frame_h - 0.5, 0.0), double(m.h - 1));
    const long x0 = long(mx), y0 = long(my);
    const double ax = mx - x0, ay = my - y0;
    const double v = (m.at(x0, y0) * (1 - ax) + m.at(x0 + 1, y0) * ax) * (1 - ay) +
                     (m.at(x0, y0 + 1) * (1 - ax) + m.at(x0 + 1, y0 + 1) * ax) * ay;
    return invert ? 1 - v : v;
}

// The direct (2r + 1)² window mean of channel c of a plane, coordinates clamped.
uint8_t blurred(const kes_image_plane& p, uint32_t cn, uint32_t c, long x, long y, long r) {
    const long w = long(p.row_bytes / cn), h = long(p.rows);
    uint32_t sum = 0;
    for (long dy = -r; dy <= r; ++dy)
        for (long dx = -r; dx <= r; ++dx) {
            const long sx = std::min(std::max(x + dx, 0L), w - 1), sy = std::min(std::max(y + dy, 0L), h - 1);
            sum += p.data[size_t(sy) * p.stride + size_t(sx) * cn + c];
        }
    const uint32_t n = uint32_t((2 * r + 1) * (2 * r + 1));
    return uint8_t((sum + n / 2) / n);
}

// Runs the blend on a copy of `src` and checks every sample against the reference, and the padding.
void expect_blend(const Frame& src, const Mask& mask, const kes_osd_mask_config& cfg) {
    Frame out = Frame(src.img.format, src.img.width, src.img.height, 0);
    out.bytes = src.bytes;
    out.img.data = out.bytes.data();
    ASSERT_EQ(kes_osd_blend_mask(&out.img, &mask.t, &cfg), KES_OK) << kes_last_error();
    const bool vu = src.img.format == KES_PIXEL_NV21;
    size_t ties = 0, checked = 0;
    for (uint32_t plane = 0; plane < 2; ++plane) {
        const uint32_t cn = plane + 1, step = plane + 1;
        const kes_image_plane sp = src.plane(plane), op = out.plane(plane);
        for (uint32_t y = 0; y < sp.rows; ++y)
            for (uint32_t x = 0; x < sp.row_bytes / cn; ++x) {
                const double m =
                    weight(mask, (x + 0.5) * step, (y + 0.5) * step, src.img.width, src.img.height, cfg.invert != 0);
                for (uint32_t c = 0; c < cn; ++c) {
                    const size_t i = size_t(y) * sp.stride + size_t(x) * cn + c;
                    double bg;
                    if (cfg.background == KES_OSD_BACKGROUND_BLUR)
                        bg = blurred(sp, cn, c, x, y, plane == 0 ? cfg.blur_radius : (cfg.blur_radius + 1) / 2);
                    else if (cfg.background == KES_OSD_BACKGROUND_COLOR)
                        bg = plane == 0 ? cfg.color.y : ((c == 0) != vu ? cfg.color.u : cfg.color.v);
                    else
                        bg = static_cast<const uint8_t*>(
                            cfg.image->data)[(plane ? size_t(cfg.image->width_stride) * cfg.image->height_stride : 0) +
                                             size_t(y) * cfg.image->width_stride + size_t(x) * cn + c];
                    const double want = m * sp.data[i] + (1 - m) * bg;
                    const int got = op.data[i];
                    ++checked;
                    if (std::fabs(want - std::floor(want) - 0.5) < 0.01) {
                        ++ties;
                        ASSERT_LE(std::fabs(got - want), 0.51);
                    } else {
                        ASSERT_EQ(got, int(std::lround(want)))
                            << "plane " << plane << " (" << x << ", " << y << ") c " << c << " weight " << m;
                    }
                }
            }
    }
    EXPECT_LT(ties * 20, checked);
    // Row and plane padding untouched.
    for (uint32_t plane = 0; plane < 2; ++plane) {
        const kes_image_plane op = out.plane(plane);
        for (uint32_t y = 0; y < op.rows; ++y)
            for (uint32_t x = op.row_bytes; x < op.stride; ++x)
                ASSERT_EQ(op.data[size_t(y) * op.stride + x], kSentinel);
    }
}

kes_osd_mask_config mask_config(kes_osd_background background) {
    kes_osd_mask_config cfg;
    kes_osd_mask_config_init(&cfg);
    cfg.background = background;
    return cfg;
}

TEST(OsdMask, BlurBackgroundMatchesTheReference) {
    for (kes_pixel_format f : {KES_PIXEL_NV12, KES_PIXEL_NV21}) {
        Frame frame(f, 97, 61, 1);
        Mask mask(32, 24);
        kes_osd_mask_config cfg = mask_config(KES_OSD_BACKGROUND_BLUR);
        cfg.blur_radius = 5;
        expect_blend(frame, mask, cfg);
        cfg.blur_radius = 1;
        cfg.invert = 1;
        expect_blend(frame, mask, cfg);
        cfg.blur_radius = 80;  // wider than the frame: the clamped edges dominate
        expect_blend(frame, mask, cfg);
    }
}

TEST(OsdMask, ColourAndImageBackgrounds) {
    Frame frame(KES_PIXEL_NV21, 64, 48, 1);
    Frame other(KES_PIXEL_NV21, 64, 48, 4);
    for (kes_dtype dtype : {KES_F32, KES_U8})
        for (kes_layout layout : {KES_LAYOUT_NHWC, KES_LAYOUT_NCHW, KES_LAYOUT_ND}) {
            SCOPED_TRACE(testing::Message() << "dtype " << dtype << " layout " << layout);
            Mask mask(20, 37, dtype, layout);  // another aspect ratio than the frame: each axis scales alone
            kes_osd_mask_config cfg = mask_config(KES_OSD_BACKGROUND_COLOR);
            cfg.color = kes_osd_color_rgb(0, 200, 40);
            expect_blend(frame, mask, cfg);
            cfg = mask_config(KES_OSD_BACKGROUND_IMAGE);
            cfg.image = &other.img;
            expect_blend(frame, mask, cfg);
        }
}

TEST(OsdMask, AllOrNothingMasks) {
    // Weight 1 everywhere leaves the frame; weight 0 gives exactly the background (here the blur).
    Frame frame(KES_PIXEL_NV12, 40, 30, 2);
    Mask mask(8, 8);
    std::fill(mask.f32.begin(), mask.f32.end(), 1.0f);
    std::vector<uint8_t> before = frame.bytes;
    kes_osd_mask_config cfg = mask_config(KES_OSD_BACKGROUND_BLUR);
    ASSERT_EQ(kes_osd_blend_mask(&frame.img, &mask.t, &cfg), KES_OK) << kes_last_error();
    EXPECT_EQ(frame.bytes, before);
    std::fill(mask.f32.begin(), mask.f32.end(), 0.0f);
    cfg.blur_radius = 3;
    ASSERT_EQ(kes_osd_blend_mask(&frame.img, &mask.t, &cfg), KES_OK) << kes_last_error();
    kes_image orig = frame.img;
    orig.data = before.data();
    kes_image_plane sy, sc;
    ASSERT_EQ(kes_image_get_plane(&orig, 0, &sy), KES_OK);
    ASSERT_EQ(kes_image_get_plane(&orig, 1, &sc), KES_OK);
    const kes_image_plane oy = frame.plane(0), oc = frame.plane(1);
    for (uint32_t y = 0; y < 30; ++y)
        for (uint32_t x = 0; x < 40; ++x) ASSERT_EQ(oy.data[size_t(y) * oy.stride + x], blurred(sy, 1, 0, x, y, 3));
    for (uint32_t y = 0; y < 15; ++y)
        for (uint32_t x = 0; x < 40; ++x)
            ASSERT_EQ(oc.data[size_t(y) * oc.stride + x], blurred(sc, 2, x % 2, x / 2, y, 2));
}

TEST(OsdMask, BadInputIsRefusedAndLeavesTheFrame) {
    Frame frame(KES_PIXEL_NV12, 40, 30, 1);
    const std::vector<uint8_t> before = frame.bytes;
    Mask mask(16, 16);
    kes_osd_mask_config cfg = mask_config(KES_OSD_BACKGROUND_BLUR);
    auto refused = [&](kes_status want, const kes_tensor* m, const char* words) {
        EXPECT_EQ(kes_osd_blend_mask(&frame.img, m, &cfg), want) << words;
        EXPECT_NE(std::strstr(kes_last_error(), words), nullptr) << kes_last_error();
        EXPECT_EQ(frame.bytes, before);
    };
    mask.f32[37] = NAN;
    refused(KES_ERR_CORRUPT_DATA, &mask.t, "(x 5, y 2)");
    mask.f32[37] = 0.5f;
    refused(KES_ERR_INVALID_ARGUMENT, nullptr, "mask");
    kes_tensor bad = mask.t;
    bad.dtype = KES_I32;
    refused(KES_ERR_INVALID_ARGUMENT, &bad, "dtype i32");
    bad = mask.t;
    bad.shape[0] = 2;  // a batch of two masks
    bad.shape[1] = 8;
    bad.strides[0] = 8 * 16;
    refused(KES_ERR_INVALID_ARGUMENT, &bad, "dimension 0 is 2");
    cfg.blur_radius = 0;
    refused(KES_ERR_INVALID_ARGUMENT, &mask.t, "blur_radius");
    cfg = mask_config(KES_OSD_BACKGROUND_IMAGE);
    refused(KES_ERR_INVALID_ARGUMENT, &mask.t, "config->image is NULL");
    Frame small(KES_PIXEL_NV12, 38, 30, 1);
    cfg.image = &small.img;
    refused(KES_ERR_INVALID_ARGUMENT, &mask.t, "must match the frame");
    Frame nv21(KES_PIXEL_NV21, 40, 30, 1);
    cfg.image = &nv21.img;
    refused(KES_ERR_INVALID_ARGUMENT, &mask.t, "must match the frame");
    std::vector<uint8_t> rgb_bg(40 * 30 * 3);
    kes_image rgb_bg_img;
    ASSERT_EQ(kes_image_wrap(&rgb_bg_img, KES_PIXEL_RGB888, 40, 30, 0, 0, rgb_bg.data(), rgb_bg.size()), KES_OK);
    cfg.image = &rgb_bg_img;
    refused(KES_ERR_INVALID_ARGUMENT, &mask.t, "RGB888 40x30: it must match the frame, NV12 40x30");
    cfg = mask_config(KES_OSD_BACKGROUND_BLUR);
    const int bad_mode = 3;
    std::memcpy(&cfg.background, &bad_mode, sizeof bad_mode);
    refused(KES_ERR_INVALID_ARGUMENT, &mask.t, "background 3");
    cfg = mask_config(KES_OSD_BACKGROUND_BLUR);
    cfg.struct_size = 2;
    refused(KES_ERR_INVALID_ARGUMENT, &mask.t, "struct_size");
    std::vector<uint8_t> rgb(40 * 30 * 3);
    kes_image rgb_img;
    ASSERT_EQ(kes_image_wrap(&rgb_img, KES_PIXEL_RGB888, 40, 30, 0, 0, rgb.data(), rgb.size()), KES_OK);
    EXPECT_EQ(kes_osd_blend_mask(&rgb_img, &mask.t, nullptr), KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::strstr(kes_last_error(), "RGB888"), nullptr) << kes_last_error();
}

TEST(OsdMask, ConfigGrowsWithoutBreakingApps) {
    Frame frame(KES_PIXEL_NV12, 40, 30, 1);
    Mask mask(16, 16);
    const kes_osd_mask_config cfg = mask_config(KES_OSD_BACKGROUND_COLOR);
    kes_test::expect_struct_growth(cfg, KES_STRUCT_SIZE_THROUGH(kes_osd_mask_config, invert),
                                   [&](kes_osd_mask_config* c) { return kes_osd_blend_mask(&frame.img, &mask.t, c); });
}

// Not a pass/fail check: what a segmentation app pays per 1080p frame (printed for the record).
TEST(OsdMask, TimesA1080pFrame) {
    Frame frame(KES_PIXEL_NV12, 1920, 1080, 1);
    Mask mask(256, 144);
    for (kes_osd_background bg : {KES_OSD_BACKGROUND_COLOR, KES_OSD_BACKGROUND_BLUR}) {
        kes_osd_mask_config cfg = mask_config(bg);
        double best = 1e9;
        for (int i = 0; i < 5; ++i) {
            const double t0 = cpu_ms();
            ASSERT_EQ(kes_osd_blend_mask(&frame.img, &mask.t, &cfg), KES_OK) << kes_last_error();
            best = std::min(best, cpu_ms() - t0);
        }
        std::printf("kes_osd_blend_mask 1920x1080 NV12, 256x144 mask, %s: %.2f ms CPU time (best of 5)\n",
                    bg == KES_OSD_BACKGROUND_BLUR ? "blur r=12" : "colour", best);
    }
}

}  // namespace
