// image.cpp — pixel-format facts, DVPP stride rules and the kes_image descriptor (kestrel/image.h).
//
// Everything here is arithmetic on the structs passed in. The numbers that differ between boards
// (alignments) come from kes_board_get_profile(); this file only knows how each unit applies them
// (docs/BOARD-RULES.md).
#include "kestrel/image.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "owned_block.hpp"

namespace kes {
namespace {

// Beyond every board's limit (16384² on 310B JPEGD) with room to spare, yet small enough that every
// stride and plane size below fits comfortably in 64-bit arithmetic: a bigger value is a bug
// (uninitialised struct, negative number cast to unsigned), not a picture.
constexpr uint32_t kMaxImageDim = 65536;
// Strides may exceed the visible size (a crop wrapped in place, a caller's own padding) but not
// absurdly: 16 MiB per row and 1 Mi rows keep ws·hs·3 far from 64-bit overflow and the chroma stride
// 2·ws (440SP/444SP) inside uint32.
constexpr uint32_t kMaxWidthStride = 1u << 24;
constexpr uint32_t kMaxHeightStride = 1u << 20;
// BOARD-RULES §VDEC: VDEC widthStride is at least 32 "when w < 16".
constexpr uint64_t kVdecMinWidthStride = 32;

enum class Layout {
    kGrey,           // YUV400: Y only
    kSemiPlanar420,  // Y, then interleaved chroma ws bytes × hs/2 rows
    kSemiPlanar422,  // Y, then interleaved chroma ws bytes × hs rows
    kSemiPlanar440,  // Y, then interleaved chroma 2·ws bytes × hs/2 rows
    kSemiPlanar444,  // Y, then interleaved chroma 2·ws bytes × hs rows
    kPlanar420,      // Y, U (ws/2 × hs/2), V (ws/2 × hs/2)
    kPacked422,      // YUYV-style macropixels: 4 bytes per 2 pixels
    kPacked3,        // 3 bytes per pixel (YUV444 packed, RGB888, BGR888)
    kPacked4         // 4 bytes per pixel (ARGB/ABGR/RGBA/BGRA8888)
};

struct FormatInfo {
    const char* name;
    Layout layout;
    uint32_t planes;
    uint32_t bytes_per_pixel;  // plane 0
    uint32_t shift_x, shift_y;
    bool yuv;
};

// Returns nullptr for values outside the enum (the enum is sparse: 0..17, 1000, 1001, 2000).
const FormatInfo* format_info(int64_t value) noexcept {
    static const FormatInfo kBase[] = {
        {"YUV400", Layout::kGrey, 1, 1, 0, 0, true},
        {"NV12", Layout::kSemiPlanar420, 2, 1, 1, 1, true},
        {"NV21", Layout::kSemiPlanar420, 2, 1, 1, 1, true},
        {"YUV422SP", Layout::kSemiPlanar422, 2, 1, 1, 0, true},
        {"YVU422SP", Layout::kSemiPlanar422, 2, 1, 1, 0, true},
        {"YUV444SP", Layout::kSemiPlanar444, 2, 1, 0, 0, true},
        {"YVU444SP", Layout::kSemiPlanar444, 2, 1, 0, 0, true},
        {"YUYV422", Layout::kPacked422, 1, 2, 1, 0, true},
        {"UYVY422", Layout::kPacked422, 1, 2, 1, 0, true},
        {"YVYU422", Layout::kPacked422, 1, 2, 1, 0, true},
        {"VYUY422", Layout::kPacked422, 1, 2, 1, 0, true},
        {"YUV444", Layout::kPacked3, 1, 3, 0, 0, true},
        {"RGB888", Layout::kPacked3, 1, 3, 0, 0, false},
        {"BGR888", Layout::kPacked3, 1, 3, 0, 0, false},
        {"ARGB8888", Layout::kPacked4, 1, 4, 0, 0, false},
        {"ABGR8888", Layout::kPacked4, 1, 4, 0, 0, false},
        {"RGBA8888", Layout::kPacked4, 1, 4, 0, 0, false},
        {"BGRA8888", Layout::kPacked4, 1, 4, 0, 0, false},
    };
    static const FormatInfo kYuv440sp = {"YUV440SP", Layout::kSemiPlanar440, 2, 1, 0, 1, true};
    static const FormatInfo kYvu440sp = {"YVU440SP", Layout::kSemiPlanar440, 2, 1, 0, 1, true};
    static const FormatInfo kI420 = {"I420", Layout::kPlanar420, 3, 1, 1, 1, true};

    if (value >= 0 && value < static_cast<int64_t>(sizeof kBase / sizeof kBase[0])) return &kBase[value];
    switch (value) {
        case KES_PIXEL_YUV440SP: return &kYuv440sp;
        case KES_PIXEL_YVU440SP: return &kYvu440sp;
        case KES_PIXEL_I420: return &kI420;
        default: return nullptr;
    }
}

const FormatInfo& require_format(const kes_pixel_format& format) {
    const int64_t value = enum_value(format);
    const FormatInfo* info = format_info(value);
    KES_REQUIRE(info != nullptr, "format %lld is not a kes_pixel_format", static_cast<long long>(value));
    return *info;
}

void require_dims(uint32_t width, uint32_t height) {
    KES_REQUIRE(width >= 1 && width <= kMaxImageDim, "width %u outside 1..%u", width, kMaxImageDim);
    KES_REQUIRE(height >= 1 && height <= kMaxImageDim, "height %u outside 1..%u", height, kMaxImageDim);
}

// Bytes of pixel data in one plane-0 row. A YUYV macropixel carries two pixels, so an odd width
// still occupies whole macropixels: 2·align2(w), not 2·w.
uint64_t row_bytes(const FormatInfo& f, uint64_t width) noexcept {
    if (f.layout == Layout::kPacked422) return 2 * align_up(width, 2);
    return width * f.bytes_per_pixel;
}

const char* rule_name(int64_t rule) noexcept {
    switch (rule) {
        case KES_STRIDE_TIGHT: return "TIGHT";
        case KES_STRIDE_VPC: return "VPC";
        case KES_STRIDE_JPEGD: return "JPEGD";
        case KES_STRIDE_JPEGE: return "JPEGE";
        case KES_STRIDE_PNGD: return "PNGD";
        case KES_STRIDE_VDEC: return "VDEC";
    }
    return "?";
}

struct Strides {
    uint32_t width_stride, height_stride;
};

// The strides `rule` produces on `board`, in the units image.h defines (bytes × rows).
Strides compute_strides(const FormatInfo& f, uint32_t width, uint32_t height, const kes_stride_rule& rule_arg,
                        const kes_board& board_arg) {
    require_dims(width, height);
    const int64_t board = enum_value(board_arg), rule = enum_value(rule_arg);
    KES_REQUIRE(board == KES_BOARD_HOST || board == KES_BOARD_310 || board == KES_BOARD_310B,
                "board %lld is not a kes_board", static_cast<long long>(board));
    const kes_board_profile* profile = kes_board_get_profile(static_cast<kes_board>(board));
    KES_REQUIRE(profile != nullptr, "board %lld has no profile", static_cast<long long>(board));

    // Pixel-width alignment, row alignment, and whether the unit aligns the byte width instead of the
    // pixel width. A profile value of 0 or 1 means "no alignment" (the host profile).
    uint64_t align_w = 1, align_h = 1, min_ws = 0;
    bool align_bytes = false;
    switch (rule) {
        case KES_STRIDE_TIGHT: break;
        case KES_STRIDE_VPC:  // BOARD-RULES §VPC: align16(w)·bpp × align2(h) on 310; 310B: no width alignment
            // UNCONFIRMED: §VPC also lists widthStride ≥ 32 on 310 (and mxVision a 32-pixel minimum
            // output), yet VPC outputs may be 10 wide; align16(10) = 16 is what we give. Revisit with a
            // board trace.
            align_w = profile->vpc_width_align;
            align_h = profile->vpc_height_align;
            break;
        case KES_STRIDE_JPEGD:  // BOARD-RULES §JPEGD: align128/align64(w) × align16(h)
            align_w = profile->jpegd_width_align;
            align_h = profile->jpegd_height_align;
            break;
        case KES_STRIDE_JPEGE:
            // BOARD-RULES §JPEGE: NV12 input widthStride = align16(w), heightStride = h (even for 4:2:0, which
            // the format rule below supplies; align16(h) is also accepted — we give the minimum);
            // packed 422 input widthStride = align16(2w), i.e. the BYTE width is aligned, unlike VPC's
            // align16(w)·2. Other formats: byte width aligned the same way (UNCONFIRMED; JPEGE takes
            // only 4:2:0 SP and packed 422 input).
            align_w = profile->jpege_width_align;
            align_bytes = true;
            break;
        case KES_STRIDE_PNGD:  // BOARD-RULES §PNGD: PredictDecSize uses align128(w) × align16(h) on 310
            align_w = profile->pngd_width_align;
            align_h = profile->pngd_height_align;
            break;
        case KES_STRIDE_VDEC:  // BOARD-RULES §VDEC: align16(w) (min 32) × align2(h) on both boards
            align_w = profile->vdec_width_align;
            align_h = profile->vdec_height_align;
            // The minimum belongs to the aligning hardware; the host profile (no alignment) stays tight.
            if (align_w > 1) min_ws = kVdecMinWidthStride;
            break;
        default: KES_FAIL(KES_ERR_INVALID_ARGUMENT, "rule %lld is not a kes_stride_rule", static_cast<long long>(rule));
    }
    if (align_w == 0) align_w = 1;
    if (align_h == 0) align_h = 1;

    // Subsampled chroma needs whole chroma samples: an odd width/height is rounded up to even first
    // (VPC/JPEGD themselves round odd 4:2:0 sizes down, BOARD-RULES §VPC, §JPEGD — the caller then passes the
    // even size it will get; rounding up here never makes a buffer too small).
    const uint64_t w = f.shift_x ? align_up(width, 2) : width;
    const uint64_t h = f.shift_y ? align_up(height, 2) : height;

    uint64_t ws = align_bytes ? round_up(row_bytes(f, w), align_w) : row_bytes(f, round_up(w, align_w));
    uint64_t hs = round_up(h, align_h);
    if (ws < min_ws) ws = min_ws;
    // Non-power-of-two profile alignments could leave odd strides; chroma still needs even ones.
    if (f.shift_x) ws = align_up(ws, 2);
    if (f.shift_y) hs = align_up(hs, 2);
    KES_REQUIRE(ws <= kMaxWidthStride && hs <= kMaxHeightStride,
                "%s %ux%u with rule %s on board %s gives strides %llu x %llu, beyond the limits %u x %u", f.name, width,
                height, rule_name(rule), profile->name, static_cast<unsigned long long>(ws),
                static_cast<unsigned long long>(hs), kMaxWidthStride, kMaxHeightStride);
    return {static_cast<uint32_t>(ws), static_cast<uint32_t>(hs)};
}

// Checks that the strides can hold the format's planes and returns the bytes of all planes.
size_t compute_buffer_size(const FormatInfo& f, uint32_t ws, uint32_t hs) {
    KES_REQUIRE(ws >= 1 && ws <= kMaxWidthStride, "width_stride %u outside 1..%u for %s", ws, kMaxWidthStride, f.name);
    KES_REQUIRE(hs >= 1 && hs <= kMaxHeightStride, "height_stride %u outside 1..%u for %s", hs, kMaxHeightStride,
                f.name);
    // Interleaved 4:2:x chroma rows hold UV pairs and I420's chroma stride is ws/2; packed 4:2:2 is
    // 2 bytes per pixel: all need an even byte stride.
    KES_REQUIRE(!f.shift_x || ws % 2 == 0, "width_stride %u must be even for %s (horizontally subsampled chroma)", ws,
                f.name);
    KES_REQUIRE(!f.shift_y || hs % 2 == 0, "height_stride %u must be even for %s (vertically subsampled chroma)", hs,
                f.name);

    const uint64_t luma = static_cast<uint64_t>(ws) * hs;
    uint64_t total = 0;
    switch (f.layout) {
        case Layout::kGrey:
        case Layout::kPacked422:
        case Layout::kPacked3:
        case Layout::kPacked4: total = luma; break;
        case Layout::kSemiPlanar420:
        case Layout::kPlanar420: total = luma + luma / 2; break;
        case Layout::kSemiPlanar422:
        case Layout::kSemiPlanar440: total = 2 * luma; break;
        case Layout::kSemiPlanar444: total = 3 * luma; break;
    }
    // Bounded by the stride limits (< 2^46) — this only bites where size_t is 32 bits.
    KES_REQUIRE(total <= SIZE_MAX, "%s buffer for strides %u x %u needs %llu bytes, more than size_t holds", f.name, ws,
                hs, static_cast<unsigned long long>(total));
    return static_cast<size_t>(total);
}

// The checks of kes_image_validate; returns the format info and the required buffer size.
const FormatInfo& check_image(const kes_image& img, size_t* out_needed) {
    const FormatInfo& f = require_format(img.format);
    require_dims(img.width, img.height);
    const uint64_t need = row_bytes(f, img.width);
    KES_REQUIRE(img.width_stride >= need, "width_stride %u < row bytes %llu for %s width %u", img.width_stride,
                static_cast<unsigned long long>(need), f.name, img.width);
    KES_REQUIRE(img.height_stride >= img.height, "height_stride %u < height %u for %s", img.height_stride, img.height,
                f.name);
    const size_t size = compute_buffer_size(f, img.width_stride, img.height_stride);
    KES_REQUIRE(img.data != nullptr, "data is NULL for %s %ux%u", f.name, img.width, img.height);
    KES_REQUIRE(img.size >= size, "size %zu < %zu bytes needed by %s with strides %u x %u", img.size, size, f.name,
                img.width_stride, img.height_stride);
    KES_REQUIRE(img.owns_data <= 1, "owns_data %u must be 0 or 1", img.owns_data);
    KES_REQUIRE(img.pool == nullptr || img.owns_data == 1,
                "pool is set but owns_data is 0: only an owned buffer comes from a pool");
    if (out_needed) *out_needed = size;
    return f;
}

// Fills *out with a descriptor for `format` width × height with the given strides (0 = tight) and
// returns the bytes it needs; data/size are left for the caller.
size_t describe(kes_image* out, kes_pixel_format format, uint32_t width, uint32_t height, uint32_t ws, uint32_t hs) {
    const FormatInfo& f = require_format(format);
    if (ws == 0 || hs == 0) {
        const Strides tight = compute_strides(f, width, height, KES_STRIDE_TIGHT, KES_BOARD_HOST);
        if (ws == 0) ws = tight.width_stride;
        if (hs == 0) hs = tight.height_stride;
    }
    require_dims(width, height);
    const uint64_t need = row_bytes(f, width);
    KES_REQUIRE(ws >= need, "width_stride %u < row bytes %llu for %s width %u", ws,
                static_cast<unsigned long long>(need), f.name, width);
    KES_REQUIRE(hs >= height, "height_stride %u < height %u for %s", hs, height, f.name);
    const size_t size = compute_buffer_size(f, ws, hs);
    std::memset(out, 0, sizeof *out);
    out->format = format;
    out->width = width;
    out->height = height;
    out->width_stride = ws;
    out->height_stride = hs;
    return size;
}

}  // namespace
}  // namespace kes

extern "C" {

const char* kes_pixel_format_name(kes_pixel_format format) {
    const kes::FormatInfo* info = kes::format_info(kes::enum_value(format));
    return info ? info->name : "UNKNOWN";
}

uint32_t kes_pixel_format_planes(kes_pixel_format format) {
    const kes::FormatInfo* info = kes::format_info(kes::enum_value(format));
    return info ? info->planes : 0;
}

int kes_pixel_format_is_yuv(kes_pixel_format format) {
    const kes::FormatInfo* info = kes::format_info(kes::enum_value(format));
    return info && info->yuv ? 1 : 0;
}

kes_status kes_pixel_format_subsampling(kes_pixel_format format, uint32_t* out_shift_x, uint32_t* out_shift_y) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_shift_x);
        KES_REQUIRE_NOT_NULL(out_shift_y);
        const kes::FormatInfo& f = kes::require_format(format);
        *out_shift_x = f.shift_x;
        *out_shift_y = f.shift_y;
        return KES_OK;
    });
}

kes_status kes_image_strides(kes_pixel_format format, uint32_t width, uint32_t height, kes_stride_rule rule,
                             kes_board board, uint32_t* out_width_stride, uint32_t* out_height_stride) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_width_stride);
        KES_REQUIRE_NOT_NULL(out_height_stride);
        const kes::Strides s = kes::compute_strides(kes::require_format(format), width, height, rule, board);
        *out_width_stride = s.width_stride;
        *out_height_stride = s.height_stride;
        return KES_OK;
    });
}

kes_status kes_image_buffer_size(kes_pixel_format format, uint32_t width_stride, uint32_t height_stride,
                                 size_t* out_size) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_size);
        *out_size = kes::compute_buffer_size(kes::require_format(format), width_stride, height_stride);
        return KES_OK;
    });
}

kes_status kes_image_validate(const kes_image* image) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(image);
        kes::check_image(*image, nullptr);
        return KES_OK;
    });
}

kes_status kes_image_wrap(kes_image* out_image, kes_pixel_format format, uint32_t width, uint32_t height,
                          uint32_t width_stride, uint32_t height_stride, void* data, size_t size) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_image);
        std::memset(out_image, 0, sizeof *out_image);
        kes_image img;
        const size_t need = kes::describe(&img, format, width, height, width_stride, height_stride);
        KES_REQUIRE(data != nullptr, "data is NULL");
        KES_REQUIRE(size >= need, "size %zu < %zu bytes needed by %s %ux%u with strides %u x %u", size, need,
                    kes_pixel_format_name(format), width, height, img.width_stride, img.height_stride);
        img.data = data;
        img.size = size;
        *out_image = img;
        return KES_OK;
    });
}

kes_status kes_image_alloc(kes_image* out_image, kes_mem_pool* pool, kes_pixel_format format, uint32_t width,
                           uint32_t height, uint32_t width_stride, uint32_t height_stride) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_image);
        std::memset(out_image, 0, sizeof *out_image);
        kes_image img;
        const size_t need = kes::describe(&img, format, width, height, width_stride, height_stride);
        img.data = kes::alloc_owned_block(pool, need, [&] {
            return kes::format("%s %ux%u (strides %u x %u)", kes_pixel_format_name(format), width, height,
                               img.width_stride, img.height_stride);
        });
        img.size = need;
        img.pool = pool;
        img.owns_data = 1;
        *out_image = img;
        return KES_OK;
    });
}

kes_mem_backend kes_image_memory(const kes_image* image) {
    if (!image || !image->data) return KES_MEM_HOST;
    if (image->pool) return kes_mem_pool_backend(image->pool);
    kes_mem_backend where = KES_MEM_HOST;
    if (image->owns_data && kes_mem_get_backend(image->data, &where) != KES_OK) where = KES_MEM_HOST;
    return where;
}

void kes_image_release(kes_image* image) {
    (void)kes::guard(__func__, [&] {
        if (image == nullptr) return KES_OK;
        if (image->owns_data) kes::free_owned_block(image->pool, image->data, "kes_image_release");
        std::memset(image, 0, sizeof *image);
        return KES_OK;
    });
}

kes_status kes_image_get_plane(const kes_image* image, uint32_t index, kes_image_plane* out_plane) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(image);
        KES_REQUIRE_NOT_NULL(out_plane);
        const kes::FormatInfo& f = kes::check_image(*image, nullptr);
        KES_REQUIRE(index < f.planes, "plane index %u out of range: %s has %u plane(s)", index, f.name, f.planes);

        auto* base = static_cast<uint8_t*>(image->data);
        const uint32_t w = image->width, h = image->height;
        const uint32_t ws = image->width_stride, hs = image->height_stride;
        const size_t luma = static_cast<size_t>(ws) * hs;
        const uint32_t w2 = (w + 1) / 2, h2 = (h + 1) / 2;  // chroma samples of odd sizes round up
        kes_image_plane p{};
        if (index == 0) {
            p = {base, static_cast<uint32_t>(kes::row_bytes(f, w)), ws, h};
        } else {
            switch (f.layout) {
                case kes::Layout::kSemiPlanar420: p = {base + luma, 2 * w2, ws, h2}; break;
                case kes::Layout::kSemiPlanar422: p = {base + luma, 2 * w2, ws, h}; break;
                case kes::Layout::kSemiPlanar440: p = {base + luma, 2 * w, 2 * ws, h2}; break;
                case kes::Layout::kSemiPlanar444: p = {base + luma, 2 * w, 2 * ws, h}; break;
                case kes::Layout::kPlanar420: {
                    const size_t chroma = static_cast<size_t>(ws / 2) * (hs / 2);
                    p = {base + luma + (index == 2 ? chroma : 0), w2, ws / 2, h2};
                    break;
                }
                default: KES_FAIL(KES_ERR_INTERNAL, "%s has no plane %u", f.name, index);
            }
        }
        *out_plane = p;
        return KES_OK;
    });
}

}  // extern "C"
