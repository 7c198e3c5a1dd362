// JPEGD on the host (BOARD-RULES §JPEGD): TurboJPEG API 2 decodes, this file applies the board's rules —
// output formats per source subsampling, JPEGD strides, size limits, EXIF orientation, the 310B even
// rounding of 4:2:0 output, and strict refusal of what the hardware cannot decode.
#include <cstring>
#include <vector>

#include "dvpp_internal.hpp"
#include "jpeg_markers.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "plane_ops.hpp"

namespace kes {
namespace {

const char* css_name(int tjsamp) {
    switch (tjsamp) {
        case TJSAMP_444: return "4:4:4";
        case TJSAMP_422: return "4:2:2";
        case TJSAMP_420: return "4:2:0";
        case TJSAMP_GRAY: return "4:0:0 (grey)";
        case TJSAMP_440: return "4:4:0";
        case TJSAMP_411: return "4:1:1";
        default: return "unknown";
    }
}

// Everything a decode needs to know before touching pixels.
struct DecodePlan {
    int tj_width = 0, tj_height = 0, tjsamp = -1, tjcs = -1;
    JpegMarkers markers;
    uint32_t hw_unsupported = 0;
    uint32_t orientation = 1;
    tjscalingfactor scale{1, 1};
    uint32_t scaled_w = 0, scaled_h = 0;  // decoded, before orientation
    kes_pixel_format format = KES_PIXEL_UNKNOWN;
    uint32_t out_w = 0, out_h = 0;  // displayed, after orientation and even rounding
    uint32_t ws = 0, hs = 0;
    size_t bytes = 0;
};

tjhandle decoder(kes_dvpp_channel* ch) {
    if (!ch->decoder) {
        ch->decoder.reset(tjInitDecompress());
        if (!ch->decoder) KES_FAIL(KES_ERR_OUT_OF_MEMORY, "tjInitDecompress failed: %s", tjGetErrorStr2(nullptr));
    }
    return ch->decoder.get();
}

int decode_flags(const kes_dvpp_channel* ch) {
    // LIMITSCANS: a progressive file with thousands of scans is a known CPU-exhaustion input.
    return TJFLAG_LIMITSCANS | (ch->accept_warnings ? 0 : TJFLAG_STOPONWARNING);
}

void tj_check(int rc, tjhandle h, const kes_dvpp_channel* ch, const char* what) {
    if (rc == 0) return;
    const bool warning = tjGetErrorCode(h) == TJERR_WARNING;
    if (warning && ch->accept_warnings) return;
    KES_FAIL(KES_ERR_CORRUPT_DATA, "%s: %s%s", what, tjGetErrorStr2(h),
             warning ? " (a libjpeg warning; the channel does not accept warnings)" : "");
}

uint32_t hw_flags(const DecodePlan& p) {
    uint32_t f = 0;
    if (p.markers.progressive()) f |= KES_JPEG_HW_PROGRESSIVE;
    if (p.markers.arithmetic()) f |= KES_JPEG_HW_ARITHMETIC;
    if (p.markers.lossless()) f |= KES_JPEG_HW_LOSSLESS;
    if (p.markers.found_sof && p.markers.precision != 8) f |= KES_JPEG_HW_PRECISION;
    if (p.tjcs != TJCS_YCbCr && p.tjcs != TJCS_GRAY) f |= KES_JPEG_HW_COLORSPACE;
    if (p.tjsamp == TJSAMP_411 || p.tjsamp < 0) f |= KES_JPEG_HW_SUBSAMPLING;
    return f;
}

std::string hw_reasons(uint32_t f) {
    std::string s;
    auto add = [&](uint32_t bit, const char* text) {
        if (!(f & bit)) return;
        if (!s.empty()) s += ", ";
        s += text;
    };
    add(KES_JPEG_HW_PROGRESSIVE, "progressive");
    add(KES_JPEG_HW_ARITHMETIC, "arithmetic-coded");
    add(KES_JPEG_HW_LOSSLESS, "lossless");
    add(KES_JPEG_HW_PRECISION, "not 8-bit");
    add(KES_JPEG_HW_COLORSPACE, "not YUV (CMYK/YCCK/RGB)");
    add(KES_JPEG_HW_SUBSAMPLING, "4:1:1 subsampling");
    return s;
}

kes_pixel_format resolve_format(kes_pixel_format requested, int tjsamp) {
    if (requested != KES_PIXEL_UNKNOWN) return requested;
    // BOARD-RULES §JPEGD: UNKNOWN keeps the source subsampling in the VU-ordered semi-planar form.
    switch (tjsamp) {
        case TJSAMP_444: return KES_PIXEL_YVU444SP;
        case TJSAMP_422: return KES_PIXEL_YVU422SP;
        case TJSAMP_440: return KES_PIXEL_YVU440SP;
        default: return KES_PIXEL_NV21;
    }
}

void check_format(kes_pixel_format format, int tjsamp) {
    bool ok = false;
    switch (format) {
        case KES_PIXEL_NV12:
        case KES_PIXEL_NV21:
        case KES_PIXEL_RGB888:  // Kestrel extension
        case KES_PIXEL_BGR888: ok = true; break;
        case KES_PIXEL_YUV444SP:
        case KES_PIXEL_YVU444SP: ok = tjsamp == TJSAMP_444; break;
        case KES_PIXEL_YUV422SP:
        case KES_PIXEL_YVU422SP: ok = tjsamp == TJSAMP_422; break;
        case KES_PIXEL_YUV440SP:
        case KES_PIXEL_YVU440SP: ok = tjsamp == TJSAMP_440; break;
        default: break;
    }
    KES_REQUIRE(
        ok,
        "output format %s is not available from a %s JPEG (docs/BOARD-RULES.md §JPEGD: NV12/NV21 from every source, "
        "444SP/422SP/440SP only from the same subsampling; RGB888/BGR888 as an extension)",
        kes_pixel_format_name(format), css_name(tjsamp));
}

bool is_420(kes_pixel_format f) {
    return f == KES_PIXEL_NV12 || f == KES_PIXEL_NV21;
}
bool is_rgb(kes_pixel_format f) {
    return f == KES_PIXEL_RGB888 || f == KES_PIXEL_BGR888;
}

// Header, limits, format, scale and output geometry. target 0×0: no scaling.
DecodePlan plan_decode(kes_dvpp_channel* ch, const void* data, size_t size, kes_pixel_format requested,
                       uint32_t target_w, uint32_t target_h) {
    KES_REQUIRE(data != nullptr || size == 0, "data is NULL");
    if (size == 0) KES_FAIL(KES_ERR_CORRUPT_DATA, "JPEG data is empty");
    KES_REQUIRE(size <= 0xFFFFFFFFu, "JPEG data of %zu bytes exceeds 4 GiB", size);
    DecodePlan p;
    const auto* bytes = static_cast<const uint8_t*>(data);
    p.markers = scan_jpeg_markers(bytes, size);
    // libjpeg-turbo 2.1.5's TurboJPEG decodes 8-bit DCT JPEGs only: nothing to fall back to.
    if (p.markers.found_sof && p.markers.precision != 8)
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "%u-bit JPEG: only 8-bit samples can be decoded (board hardware and "
                 "libjpeg-turbo 2.1 alike)",
                 p.markers.precision);
    if (p.markers.lossless())
        KES_FAIL(KES_ERR_UNSUPPORTED, "lossless JPEG (SOF%u) cannot be decoded", unsigned(p.markers.sof_type));
    tjhandle h = decoder(ch);
    if (tjDecompressHeader3(h, bytes, static_cast<unsigned long>(size), &p.tj_width, &p.tj_height, &p.tjsamp,
                            &p.tjcs) != 0)
        KES_FAIL(KES_ERR_CORRUPT_DATA, "cannot read the JPEG header: %s", tjGetErrorStr2(h));
    // On data cut before the frame header libjpeg's source manager invents an EOI and the header
    // call "succeeds" with no frame: that is truncation, not an exotic subsampling.
    if (!p.markers.found_sof || p.tj_width < 1 || p.tj_height < 1)
        KES_FAIL(KES_ERR_CORRUPT_DATA, "no complete JPEG frame header (SOFn) in %zu bytes", size);
    if (p.tjsamp < TJSAMP_444 || p.tjsamp > TJSAMP_411)
        KES_FAIL(KES_ERR_UNSUPPORTED, "JPEG chroma sampling factors match no known subsampling (TurboJPEG %d)",
                 p.tjsamp);
    p.hw_unsupported = hw_flags(p);
    p.orientation = ch->apply_orientation ? p.markers.orientation : 1;

    const kes_board_profile& b = ch->profile;
    const uint32_t w = uint32_t(p.tj_width), hh = uint32_t(p.tj_height);
    KES_REQUIRE(w >= b.jpegd_min_dim && hh >= b.jpegd_min_dim && w <= b.jpegd_max_dim && hh <= b.jpegd_max_dim,
                "JPEG of %ux%u is outside JPEGD's %u..%u per side on the %s profile (docs/BOARD-RULES.md §JPEGD)", w,
                hh, b.jpegd_min_dim, b.jpegd_max_dim, b.name);
    check_max_pixels(ch, w, hh, "JPEG");
    p.format = resolve_format(requested, p.tjsamp);
    check_format(p.format, p.tjsamp);

    if (target_w != 0) {
        // Displayed targets → stored orientation, then the smallest factor ≤ 1 still covering them.
        const uint32_t tw = orientation_swaps(p.orientation) ? target_h : target_w;
        const uint32_t th = orientation_swaps(p.orientation) ? target_w : target_h;
        int n = 0;
        const tjscalingfactor* sf = tjGetScalingFactors(&n);
        for (int i = 0; sf && i < n; ++i) {
            if (sf[i].num > sf[i].denom) continue;
            const uint32_t sw = uint32_t(TJSCALED(p.tj_width, sf[i])), sh = uint32_t(TJSCALED(p.tj_height, sf[i]));
            const uint32_t bw = uint32_t(TJSCALED(p.tj_width, p.scale)), bh = uint32_t(TJSCALED(p.tj_height, p.scale));
            if (sw >= tw && sh >= th && uint64_t(sw) * sh < uint64_t(bw) * bh) p.scale = sf[i];
        }
    }
    p.scaled_w = uint32_t(TJSCALED(p.tj_width, p.scale));
    p.scaled_h = uint32_t(TJSCALED(p.tj_height, p.scale));
    p.out_w = orientation_swaps(p.orientation) ? p.scaled_h : p.scaled_w;
    p.out_h = orientation_swaps(p.orientation) ? p.scaled_w : p.scaled_h;
    // BOARD-RULES §JPEGD: 310P/310B round odd sizes down to even for 4:2:0 output.
    if (b.jpegd_even_420 && is_420(p.format)) {
        if (p.out_w > 1) p.out_w &= ~1u;
        if (p.out_h > 1) p.out_h &= ~1u;
    }
    check_sdk(kes_image_strides(p.format, p.out_w, p.out_h, KES_STRIDE_JPEGD, b.board, &p.ws, &p.hs),
              "JPEGD output strides");
    check_sdk(kes_image_buffer_size(p.format, p.ws, p.hs, &p.bytes), "JPEGD output size");
    return p;
}

// Semi-planar layout of a YUV output format: chroma shifts and whether V comes first.
void chroma_layout(kes_pixel_format f, uint32_t* dx, uint32_t* dy, bool* vu) {
    check_sdk(kes_pixel_format_subsampling(f, dx, dy), "output subsampling");
    *vu = f == KES_PIXEL_NV21 || f == KES_PIXEL_YVU422SP || f == KES_PIXEL_YVU444SP || f == KES_PIXEL_YVU440SP;
}

void write_chroma(const ChromaPlane& u, const ChromaPlane& v, const DecodePlan& p, kes_image* out) {
    kes_image_plane plane;
    check_sdk(kes_image_get_plane(out, 1, &plane), "output chroma plane");
    uint32_t dx = 0, dy = 0;
    bool vu = false;
    chroma_layout(p.format, &dx, &dy, &vu);
    resample_chroma(u, p.out_w, p.out_h, dx, dy, plane.data + (vu ? 1 : 0), plane.stride, 2);
    resample_chroma(v, p.out_w, p.out_h, dx, dy, plane.data + (vu ? 0 : 1), plane.stride, 2);
}

void decode_yuv_path(kes_dvpp_channel* ch, const uint8_t* data, size_t size, const DecodePlan& p, kes_image* out) {
    tjhandle h = decoder(ch);
    kes_image_plane yplane;
    check_sdk(kes_image_get_plane(out, 0, &yplane), "output luma plane");
    const bool gray = p.tjsamp == TJSAMP_GRAY;
    // TurboJPEG writes the luma plane padded to whole chroma samples (45×33 at 4:2:0 → 46×34), so
    // decoding straight into the output needs that much room inside plane 0.
    const uint32_t yw = uint32_t(tjPlaneWidth(0, int(p.scaled_w), p.tjsamp));
    const uint32_t yh = uint32_t(tjPlaneHeight(0, int(p.scaled_h), p.tjsamp));
    const bool direct = p.orientation == 1 && p.out_w == p.scaled_w && p.out_h == p.scaled_h && yplane.stride >= yw &&
                        out->height_stride >= yh;

    std::vector<uint8_t> ytmp;
    unsigned char* planes[3] = {nullptr, nullptr, nullptr};
    int strides[3] = {0, 0, 0};
    if (direct) {
        planes[0] = yplane.data;
        strides[0] = int(yplane.stride);
    } else {
        ytmp.resize(size_t(yw) * yh);
        planes[0] = ytmp.data();
        strides[0] = int(yw);
    }
    std::vector<uint8_t> ctmp[2];
    uint32_t cw = 0, chh = 0, sx = 0, sy = 0;
    if (!gray) {
        cw = uint32_t(tjPlaneWidth(1, int(p.scaled_w), p.tjsamp));
        chh = uint32_t(tjPlaneHeight(1, int(p.scaled_h), p.tjsamp));
        sx = p.tjsamp == TJSAMP_411 ? 2 : (p.tjsamp == TJSAMP_422 || p.tjsamp == TJSAMP_420) ? 1 : 0;
        sy = (p.tjsamp == TJSAMP_420 || p.tjsamp == TJSAMP_440) ? 1 : 0;
        for (int c = 0; c < 2; ++c) {
            ctmp[c].resize(size_t(cw) * chh);
            planes[c + 1] = ctmp[c].data();
            strides[c + 1] = int(cw);
        }
    }
    tj_check(tjDecompressToYUVPlanes(h, data, static_cast<unsigned long>(size), planes, int(p.scaled_w), strides,
                                     int(p.scaled_h), decode_flags(ch)),
             h, ch, "JPEG decode");

    if (!direct)
        orient_plane(ytmp.data(), p.scaled_w, p.scaled_h, yw, 1, p.orientation, yplane.data, yplane.stride, p.out_w,
                     p.out_h);
    if (gray) {
        // BOARD-RULES §JPEGD: a 4:0:0 source gives NV12/NV21 with UV filled with 0x80.
        kes_image_plane cplane;
        check_sdk(kes_image_get_plane(out, 1, &cplane), "output chroma plane");
        for (uint32_t r = 0; r < cplane.rows; ++r)
            std::memset(cplane.data + size_t(r) * cplane.stride, 0x80, cplane.row_bytes);
        return;
    }
    if (p.orientation == 1) {
        write_chroma({ctmp[0].data(), cw, sx, sy}, {ctmp[1].data(), cw, sx, sy}, p, out);
        return;
    }
    // Rotations transpose the subsampling: bring chroma to full resolution, orient, then subsample.
    std::vector<uint8_t> full(size_t(p.scaled_w) * p.scaled_h), oriented[2];
    for (int c = 0; c < 2; ++c) {
        resample_chroma({ctmp[c].data(), cw, sx, sy}, p.scaled_w, p.scaled_h, 0, 0, full.data(), p.scaled_w, 1);
        oriented[c].resize(size_t(p.out_w) * p.out_h);
        orient_plane(full.data(), p.scaled_w, p.scaled_h, p.scaled_w, 1, p.orientation, oriented[c].data(), p.out_w,
                     p.out_w, p.out_h);
    }
    write_chroma({oriented[0].data(), p.out_w, 0, 0}, {oriented[1].data(), p.out_w, 0, 0}, p, out);
}

// RGB/BGR output, and the software path for CMYK/YCCK/RGB-coded sources (BOARD-RULES §JPEGD fallback).
void decode_rgb_path(kes_dvpp_channel* ch, const uint8_t* data, size_t size, const DecodePlan& p, kes_image* out) {
    tjhandle h = decoder(ch);
    const bool cmyk = p.tjcs == TJCS_CMYK || p.tjcs == TJCS_YCCK;
    const bool bgr = p.format == KES_PIXEL_BGR888;
    const size_t npix = size_t(p.scaled_w) * p.scaled_h;
    std::vector<uint8_t> rgb(npix * 3);
    if (cmyk) {
        std::vector<uint8_t> tmp(npix * 4);
        tj_check(tjDecompress2(h, data, static_cast<unsigned long>(size), tmp.data(), int(p.scaled_w),
                               int(p.scaled_w) * 4, int(p.scaled_h), TJPF_CMYK, decode_flags(ch)),
                 h, ch, "JPEG decode");
        cmyk_to_rgb(tmp.data(), rgb.data(), npix);
        if (bgr)
            for (size_t i = 0; i < npix; ++i) std::swap(rgb[3 * i], rgb[3 * i + 2]);
    } else {
        tj_check(tjDecompress2(h, data, static_cast<unsigned long>(size), rgb.data(), int(p.scaled_w),
                               int(p.scaled_w) * 3, int(p.scaled_h), bgr ? TJPF_BGR : TJPF_RGB, decode_flags(ch)),
                 h, ch, "JPEG decode");
    }
    kes_image_plane plane0;
    check_sdk(kes_image_get_plane(out, 0, &plane0), "output plane");
    if (is_rgb(p.format)) {
        orient_plane(rgb.data(), p.scaled_w, p.scaled_h, size_t(p.scaled_w) * 3, 3, p.orientation, plane0.data,
                     plane0.stride, p.out_w, p.out_h);
        return;
    }
    std::vector<uint8_t> disp(size_t(p.out_w) * p.out_h * 3);
    orient_plane(rgb.data(), p.scaled_w, p.scaled_h, size_t(p.scaled_w) * 3, 3, p.orientation, disp.data(),
                 size_t(p.out_w) * 3, p.out_w, p.out_h);
    std::vector<uint8_t> u(size_t(p.out_w) * p.out_h), v(u.size());
    for (uint32_t r = 0; r < p.out_h; ++r)
        rgb_to_yuv_row(disp.data() + size_t(r) * p.out_w * 3, p.out_w, plane0.data + size_t(r) * plane0.stride,
                       u.data() + size_t(r) * p.out_w, v.data() + size_t(r) * p.out_w);
    write_chroma({u.data(), p.out_w, 0, 0}, {v.data(), p.out_w, 0, 0}, p, out);
}

void fill_info(const DecodePlan& p, const kes_dvpp_channel* ch, kes_jpeg_info* info) {
    const uint32_t struct_size = info->struct_size;
    std::memset(info, 0, sizeof *info);
    info->struct_size = struct_size;
    info->coded_width = uint32_t(p.tj_width);
    info->coded_height = uint32_t(p.tj_height);
    const bool swap = ch->apply_orientation && orientation_swaps(p.markers.orientation);
    info->width = swap ? info->coded_height : info->coded_width;
    info->height = swap ? info->coded_width : info->coded_height;
    info->subsampling =
        p.tjsamp >= TJSAMP_444 && p.tjsamp <= TJSAMP_411 ? kes_jpeg_subsampling(p.tjsamp) : KES_JPEG_CSS_UNKNOWN;
    info->components = p.markers.found_sof ? p.markers.components : (p.tjsamp == TJSAMP_GRAY ? 1 : 3);
    info->orientation = p.markers.orientation;
    info->precision = p.markers.found_sof ? p.markers.precision : 8;
    info->progressive = p.markers.progressive();
    info->arithmetic = p.markers.arithmetic();
    info->hw_unsupported = p.hw_unsupported;
    info->output_format = p.format;
    info->output_width = p.out_w;
    info->output_height = p.out_h;
    info->width_stride = p.ws;
    info->height_stride = p.hs;
    info->output_size = p.bytes;
}

// Why the JPEGD hardware cannot serve this planned decode ("" when it can): what it refuses (BOARD-RULES §JPEGD)
// and what Kestrel adds beyond it (RGB output, DCT-domain scaling, orientation left unapplied).
std::string hardware_refusal(const uint8_t* data, size_t size, const DecodePlan& p) {
    if (p.hw_unsupported) return hw_reasons(p.hw_unsupported) + " JPEG";
    if (is_rgb(p.format)) return std::string(kes_pixel_format_name(p.format)) + " output (a Kestrel extension)";
    if (p.scale.num != p.scale.denom) return "a scaled decode (kes_jpeg_decode_scaled)";
    if (p.orientation != p.markers.orientation) return "an EXIF orientation left unapplied (apply_orientation 0)";
    if (size < 2 || data[size - 2] != 0xFF || data[size - 1] != 0xD9) return "a JPEG without its EOI marker";
    return "";
}

// The hardware path when the channel has it and the plan suits it; false when the CPU must serve.
bool decode_on_hardware(kes_dvpp_channel* ch, const uint8_t* data, size_t size, const DecodePlan& p, kes_mem_pool* pool,
                        kes_image* out) {
    return served_by_hardware(ch, "JPEG decode", [&](AscendDvpp& hw) {
        std::string refusal = hardware_refusal(data, size, p);
        if (!refusal.empty()) return refusal;
        const JpegdJob job{p.format, p.out_w, p.out_h, p.ws, p.hs, p.bytes};
        return jpeg_decode_hw(hw, data, size, job, output_pool(ch, pool), out);
    });
}

kes_status decode_common(kes_dvpp_channel* ch, const void* data, size_t size, kes_pixel_format format,
                         uint32_t target_w, uint32_t target_h, kes_mem_pool* pool, kes_image* out) {
    const DecodePlan p = plan_decode(ch, data, size, format, target_w, target_h);
    if (ch->strict && p.hw_unsupported)
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "strict mode: JPEGD hardware does not decode this JPEG: %s (docs/BOARD-RULES.md §JPEGD)",
                 hw_reasons(p.hw_unsupported).c_str());
    if (decode_on_hardware(ch, static_cast<const uint8_t*>(data), size, p, pool, out)) return KES_OK;
    check_sdk(kes_image_alloc(out, output_pool(ch, pool), p.format, p.out_w, p.out_h, p.ws, p.hs),
              "JPEGD output allocation");
    ImageGuard guard(out);
    const auto* bytes = static_cast<const uint8_t*>(data);
    const bool yuv_source = p.tjcs == TJCS_YCbCr || p.tjcs == TJCS_GRAY;
    if (!is_rgb(p.format) && yuv_source)
        decode_yuv_path(ch, bytes, size, p, out);
    else
        decode_rgb_path(ch, bytes, size, p, out);
    guard.disarm();
    return KES_OK;
}

void begin_output(kes_dvpp_channel* ch, kes_image* out) {
    KES_REQUIRE_NOT_NULL(out);
    std::memset(out, 0, sizeof *out);
    KES_REQUIRE_NOT_NULL(ch);
}

}  // namespace
}  // namespace kes

extern "C" {

kes_status kes_jpeg_get_info(kes_dvpp_channel* channel, const void* data, size_t size, kes_pixel_format format,
                             kes_jpeg_info* out_info) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(out_info);
        kes::check_out_struct(out_info, KES_STRUCT_SIZE_THROUGH(kes_jpeg_info, output_size), "out_info",
                              "kes_jpeg_info");
        const kes::DecodePlan p = kes::plan_decode(channel, data, size, kes::format_arg(format, "format"), 0, 0);
        kes_jpeg_info info;
        info.struct_size = sizeof info;
        kes::fill_info(p, channel, &info);
        kes::write_struct(info, out_info);
        return KES_OK;
    });
}

kes_status kes_jpeg_decode(kes_dvpp_channel* channel, const void* data, size_t size, kes_pixel_format format,
                           kes_mem_pool* pool, kes_image* out_image) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "jpeg_decode");
        kes::begin_output(channel, out_image);
        return kes::decode_common(channel, data, size, kes::format_arg(format, "format"), 0, 0, pool, out_image);
    });
}

kes_status kes_jpeg_decode_file(kes_dvpp_channel* channel, const char* path, kes_pixel_format format,
                                kes_mem_pool* pool, kes_image* out_image) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "jpeg_decode_file");  // reading the file is part of the cost
        kes::begin_output(channel, out_image);
        const std::vector<uint8_t> bytes = kes::read_file(path);
        return kes::decode_common(channel, bytes.data(), bytes.size(), kes::format_arg(format, "format"), 0, 0, pool,
                                  out_image);
    });
}

kes_status kes_jpeg_decode_scaled(kes_dvpp_channel* channel, const void* data, size_t size, kes_pixel_format format,
                                  uint32_t target_width, uint32_t target_height, kes_mem_pool* pool,
                                  kes_image* out_image) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "jpeg_decode_scaled");
        kes::begin_output(channel, out_image);
        KES_REQUIRE(target_width >= 1 && target_height >= 1, "target size must be at least 1x1 (got %ux%u)",
                    target_width, target_height);
        return kes::decode_common(channel, data, size, kes::format_arg(format, "format"), target_width, target_height,
                                  pool, out_image);
    });
}

}  // extern "C"
