// sim_jpeg.cpp — JPEGD and JPEGE of libacl_dvpp.so through libjpeg-turbo's TurboJPEG API
// (BOARD-RULES §JPEGD, §JPEGE).
//
// JPEGD (acldvppJpegDecodeAsync):
//   - input in DVPP memory, 128-byte aligned, `size` the file's bytes; refused with 148052
//     ACL_ERROR_UNSUPPORTED_JPEG, as the hardware refuses them: progressive (SOF2/6/10/14),
//     arithmetic-coded (SOF9-11/13-15 or a DAC marker), lossless or hierarchical, not 8-bit, no EOI
//     (the last two bytes are not FF D9), 4:1:1 or CMYK/YCCK, sizes outside 32 .. 8192 (310) /
//     16384 (310B). The check runs when the work is queued, so the code comes from the *Async call
//     (UNCONFIRMED: a board may report it at aclrtSynchronizeStream instead; handle both);
//   - EXIF orientation (BOARD-RULES §JPEGD: applied automatically): tag 0x0112 of IFD0 in the first APP1 Exif
//     segment, little- or big-endian TIFF, values 1..8 (anything else: 1). The visible coded picture
//     (not TurboJPEG's luma plane, padded to whole chroma samples) is mirrored / rotated, so a rotation
//     by 90/270 swaps the output's width and height and transposes its chroma subsampling (4:2:2 becomes
//     4:4:0); chroma is oriented at full resolution and subsampled after (write_semi_planar). The
//     orientation is applied before the 310B's even rounding and the strides (the rounding drops the
//     oriented picture's last column / row); acldvppJpegPredictDecSize counts the oriented size (the
//     documentation: it swaps w/h); acldvppJpegGetImageInfo(V2) reports the coded size (UNCONFIRMED: the documentation
//     says nothing of it);
//   - output formats (BOARD-RULES §JPEGD's table): NV12/NV21 from every source; YUV/YVU444SP (5, 6) from 4:4:4,
//     YUV/YVU422SP (3, 4) from 4:2:2, YUV/YVU440SP (1000, 1001) from 4:4:0, anything else 100000;
//     PIXEL_FORMAT_UNKNOWN (10000) resolves to the VU-ordered form of the coded subsampling (NV21 for
//     4:2:0 and grey), even when a rotation transposes the picture (its chroma is then resampled as
//     below). widthStride = align(w, 128) on 310, align(w, 64) on 310B, heightStride = align(h, 16);
//     the luma plane is widthStride x heightStride, the interleaved chroma plane follows it with rows of
//     widthStride · 2 / ox bytes and heightStride / oy rows (ox x oy luma samples per pair): the buffer
//     holds ws·hs·3/2 (NV12/NV21), ws·hs·2 (4:2:2 and 4:4:0 SP: for 4:4:0 the chroma rows are 2·ws
//     bytes, hs/2 of them), ws·hs·3 (4:4:4 SP). On 310B an odd width/height is rounded down to even for
//     the 4:2:0 output only (documented "for 420 output"); the other outputs keep odd sizes (their chroma then
//     holds ceil(w/ox) x ceil(h/oy) pairs). At the stream sync the decoder writes the picture and sets
//     the output description's width, height, widthStride, heightStride and format (read them back,
//     BOARD-RULES §JPEGD); the buffer's size stays. Unoriented, the semi-planar form of the source's own
//     subsampling holds TurboJPEG's chroma planes unchanged; grey sources get chroma 0x80; a coarser
//     output's chroma is the rounded mean of the source samples covering each output sample; an
//     oriented picture's chroma is brought to full resolution (replicated), oriented, then subsampled by
//     the rounded mean of the covering samples (write_semi_planar: the rule Kestrel's CPU JPEGD
//     documents; UNCONFIRMED against a board, odd-sized rotated pictures above all).
// JPEGE (acldvppJpegEncodeAsync): NV12/NV21 input, even width/height 32 .. 8192 (310) / 16384 (310B),
//   widthStride a multiple of 16 >= width, heightStride even >= height; output in DVPP memory, *size =
//   its capacity; at the sync the baseline Huffman 4:2:0 JPEG is written and *size set to its bytes (a
//   JPEG larger than the capacity fails the sync with 507018). Level 0..100, 0 taken as 100 (UNCONFIRMED).
#include <turbojpeg.h>

#include <cstring>
#include <memory>

#include "sim_dvpp.hpp"

namespace kes_sim {
namespace {

struct TjDeleter {
    void operator()(void* h) const { tjDestroy(h); }
};
using TjHandle = std::unique_ptr<void, TjDeleter>;

struct JpegInfo {
    int width = 0, height = 0, subsamp = -1, colorspace = -1;
};

// The hardware's refusals, from the bytes: "" when JPEGD takes the stream.
std::string refusal(const uint8_t* d, uint32_t size) {
    if (size < 4 || d[0] != 0xFF || d[1] != 0xD8) return "no SOI marker: not a JPEG";
    if (d[size - 2] != 0xFF || d[size - 1] != 0xD9) return "no EOI marker (FF D9) at the end: truncated";
    uint32_t pos = 2;
    int sof = -1;
    while (pos + 4 <= size) {
        if (d[pos] != 0xFF) return "a marker was expected at byte " + std::to_string(pos);
        uint8_t m = d[pos + 1];
        if (m == 0xFF) {  // fill byte
            ++pos;
            continue;
        }
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
            pos += 2;
            continue;
        }
        if (m == 0xDA || m == 0xD9) break;  // the first scan: every frame header has been seen
        const uint32_t length = uint32_t(d[pos + 2]) << 8 | d[pos + 3];
        if (m == 0xCC) return "arithmetic coding (DAC marker)";
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8) {
            sof = m;
            if (pos + 4 < size && d[pos + 4] != 8)
                return "sample precision " + std::to_string(d[pos + 4]) + " (8 only)";
        }
        pos += 2 + length;
    }
    if (sof < 0) return "no frame header (SOF) before the first scan";
    const int n = sof - 0xC0;
    if (n == 2 || n == 6 || n == 10 || n == 14) return "progressive coding (SOF" + std::to_string(n) + ")";
    if (n >= 9) return "arithmetic coding (SOF" + std::to_string(n) + ")";
    if (n == 3 || n == 7) return "lossless coding (SOF" + std::to_string(n) + ")";
    if (n == 5) return "hierarchical coding (SOF5)";
    return "";
}

aclError read_info(const std::string& call, const void* data, uint32_t size, JpegInfo* info) {
    if (!data || size == 0) return report(kInvalidParam, call + ": data is NULL or size is 0");
    TjHandle h(tjInitDecompress());
    if (tjDecompressHeader3(h.get(), static_cast<const unsigned char*>(data), size, &info->width, &info->height,
                            &info->subsamp, &info->colorspace) != 0) {
        return report(kInvalidParam, call + ": not a readable JPEG header: " + tjGetErrorStr2(h.get()));
    }
    return kOk;
}

int32_t css_of(int subsamp) {
    switch (subsamp) {
        case TJSAMP_444: return kCss444;
        case TJSAMP_422: return kCss422;
        case TJSAMP_420: return kCss420;
        case TJSAMP_GRAY: return kCssGray;
        case TJSAMP_440: return kCss440;
        case TJSAMP_411: return kCss411;
        default: return 1000;  // ACL_JPEG_CSS_UNKNOWN
    }
}

// The EXIF orientation (1..8) of a JPEG: tag 0x0112 of IFD0 in the first APP1 "Exif" segment, in either
// TIFF byte order; 1 when there is none or it is unreadable or out of range.
int exif_orientation(const uint8_t* d, uint32_t size) {
    uint32_t pos = 2;
    while (pos + 4 <= size && d[pos] == 0xFF) {
        const uint8_t m = d[pos + 1];
        if (m == 0xFF) {  // fill byte
            ++pos;
            continue;
        }
        if (m == 0xDA || m == 0xD9) break;  // the first scan: no more headers
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
            pos += 2;
            continue;
        }
        const uint32_t length = uint32_t(d[pos + 2]) << 8 | d[pos + 3];
        if (length < 2 || pos + 2 + length > size) break;
        if (m == 0xE1 && length >= 2 + 6 + 8 && std::memcmp(d + pos + 4, "Exif\0\0", 6) == 0) {
            const uint8_t* t = d + pos + 10;  // the TIFF header
            const uint32_t n = length - 8;
            const bool little = t[0] == 'I' && t[1] == 'I';
            if (!little && !(t[0] == 'M' && t[1] == 'M')) return 1;
            const auto u16 = [&](uint32_t at) {
                return little ? uint32_t(t[at]) | uint32_t(t[at + 1]) << 8 : uint32_t(t[at]) << 8 | t[at + 1];
            };
            const auto u32 = [&](uint32_t at) {
                return little ? u16(at) | u16(at + 2) << 16 : u16(at) << 16 | u16(at + 2);
            };
            if (u16(2) != 42) return 1;
            const uint32_t ifd = u32(4);
            if (ifd > n || n - ifd < 2) return 1;
            const uint32_t count = u16(ifd);
            for (uint32_t i = 0; i < count; ++i) {
                const uint32_t e = ifd + 2 + 12 * i;
                if (e + 12 > n) break;
                if (u16(e) != 0x0112) continue;
                const uint32_t value = u16(e + 8);  // SHORT, count 1: the value field's first two bytes
                return u16(e + 2) == 3 && u32(e + 4) >= 1 && value >= 1 && value <= 8 ? int(value) : 1;
            }
            return 1;  // only the first Exif segment counts
        }
        pos += 2 + length;
    }
    return 1;
}

bool transposes(int orientation) {
    return orientation >= 5;
}

// An output's chroma layout: one (U, V) pair per ox x oy luma samples, V first for the YVU forms.
struct Layout {
    uint32_t ox, oy;
    bool vu;
};
bool layout_of(int32_t format, Layout* l) {
    switch (format) {
        case kNv12: *l = {2, 2, false}; return true;
        case kNv21: *l = {2, 2, true}; return true;
        case kYuv422Sp: *l = {2, 1, false}; return true;
        case kYvu422Sp: *l = {2, 1, true}; return true;
        case kYuv444Sp: *l = {1, 1, false}; return true;
        case kYvu444Sp: *l = {1, 1, true}; return true;
        case kYuv440Sp: *l = {1, 2, false}; return true;
        case kYvu440Sp: *l = {1, 2, true}; return true;
        default: return false;
    }
}

// PIXEL_FORMAT_UNKNOWN: the VU-ordered semi-planar form of the source (coded) subsampling.
int32_t resolve_format(int32_t format, int subsamp) {
    if (format != kPixelUnknown) return format;
    switch (subsamp) {
        case TJSAMP_444: return kYvu444Sp;
        case TJSAMP_422: return kYvu422Sp;
        case TJSAMP_440: return kYvu440Sp;
        default: return kNv21;  // 4:2:0, grey
    }
}

// Can JPEGD give `format` (resolved) from a JPEG of `subsamp` (BOARD-RULES §JPEGD's table)? NV12/NV21 from every
// source; each 4:4:4 / 4:2:2 / 4:4:0 semi-planar form only from its own subsampling.
bool output_allowed(int32_t format, int subsamp) {
    switch (format) {
        case kNv12:
        case kNv21: return true;
        case kYuv444Sp:
        case kYvu444Sp: return subsamp == TJSAMP_444;
        case kYuv422Sp:
        case kYvu422Sp: return subsamp == TJSAMP_422;
        case kYuv440Sp:
        case kYvu440Sp: return subsamp == TJSAMP_440;
        default: return false;
    }
}

const char* subsampling_name(int subsamp) {
    switch (subsamp) {
        case TJSAMP_444: return "4:4:4";
        case TJSAMP_422: return "4:2:2";
        case TJSAMP_420: return "4:2:0";
        case TJSAMP_GRAY: return "4:0:0";
        case TJSAMP_440: return "4:4:0";
        default: return "other";
    }
}

// Checks the output format a decode of `info` asks for; resolves PIXEL_FORMAT_UNKNOWN.
aclError check_output_format(const std::string& call, int32_t requested, const JpegInfo& info, int32_t* format) {
    *format = resolve_format(requested, info.subsamp);
    Layout layout;
    if (!layout_of(*format, &layout)) {
        return report(kInvalidParam, call + ": output format " + std::to_string(requested) + " is not a JPEGD output");
    }
    if (!output_allowed(*format, info.subsamp)) {
        return report(kInvalidParam, call + ": JPEGD cannot write format " + std::to_string(requested) + " from a " +
                                         subsampling_name(info.subsamp) +
                                         " JPEG (NV12/NV21, or the semi-planar form of its own subsampling)");
    }
    return kOk;
}

// The decoded picture's geometry on the simulated SoC for an output format: the oriented size (w/h
// swapped by a rotation of 90 or 270 degrees), on 310B rounded down to even for 4:2:0 output, then the
// JPEGD strides; `bytes` is what the output buffer must hold.
struct DecodedGeometry {
    uint32_t width, height, width_stride, height_stride;
    Layout layout;
    uint64_t bytes;
};
DecodedGeometry geometry(const JpegInfo& info, int orientation, int32_t format) {
    const SocRules& r = soc_rules();
    DecodedGeometry g;
    layout_of(format, &g.layout);
    g.width = uint32_t(transposes(orientation) ? info.height : info.width);
    g.height = uint32_t(transposes(orientation) ? info.width : info.height);
    if (!r.v100 && g.layout.ox == 2 && g.layout.oy == 2) {
        g.width &= ~1u;
        g.height &= ~1u;
    }
    g.width_stride = align_up(g.width, r.jpegd_width_align);
    g.height_stride = align_up(g.height, 16);
    const uint64_t plane = uint64_t(g.width_stride) * g.height_stride;
    g.bytes = plane + plane * 2 / (g.layout.ox * g.layout.oy);
    return g;
}

aclError check_decodable(const std::string& call, const JpegInfo& info) {
    const uint32_t max = soc_rules().jpeg_max;
    if (info.width < 32 || info.height < 32 || uint32_t(info.width) > max || uint32_t(info.height) > max) {
        return report(kUnsupportedJpeg, call + ": " + std::to_string(info.width) + "x" + std::to_string(info.height) +
                                            " is outside JPEGD's 32x32 .. " + std::to_string(max) + "x" +
                                            std::to_string(max) + " on " + sim().config.soc);
    }
    if (info.subsamp == TJSAMP_411 || info.colorspace == TJCS_CMYK || info.colorspace == TJCS_YCCK ||
        info.subsamp < 0) {
        return report(kUnsupportedJpeg, call + ": JPEGD decodes YUV 4:4:4/4:2:2/4:2:0/4:4:0/4:0:0 only");
    }
    return kOk;
}

// The decoded picture: TurboJPEG's planes at the JPEG's subsampling, as TurboJPEG writes them. A chroma
// sample covers sx x sy luma samples; each plane is stored tightly (row stride = its width). TurboJPEG pads
// the luma plane to whole chroma samples (tjPlaneWidth/Height: 331x213 at 4:2:0 is 332x214): only the
// visible width x height of it is the picture.
struct Planes {
    uint32_t width = 0, height = 0;
    uint32_t sx = 1, sy = 1;
    bool grey = false;
    std::vector<uint8_t> plane[3];
    uint32_t pw[3] = {}, ph[3] = {};
};

std::string decode_planes(const uint8_t* data, uint32_t size, const JpegInfo& info, Planes* p) {
    TjHandle h(tjInitDecompress());
    unsigned char* ptrs[3] = {};
    int strides[3] = {};
    p->width = uint32_t(info.width);
    p->height = uint32_t(info.height);
    p->grey = info.subsamp == TJSAMP_GRAY;
    p->sx = info.subsamp == TJSAMP_422 || info.subsamp == TJSAMP_420 ? 2 : 1;
    p->sy = info.subsamp == TJSAMP_440 || info.subsamp == TJSAMP_420 ? 2 : 1;
    for (int i = 0; i < (p->grey ? 1 : 3); ++i) {
        p->pw[i] = uint32_t(tjPlaneWidth(i, info.width, info.subsamp));
        p->ph[i] = uint32_t(tjPlaneHeight(i, info.height, info.subsamp));
        p->plane[i].resize(size_t(p->pw[i]) * p->ph[i]);
        strides[i] = int(p->pw[i]);
        ptrs[i] = p->plane[i].data();
    }
    if (tjDecompressToYUVPlanes(h.get(), data, size, ptrs, info.width, strides, info.height, 0) != 0) {
        return tjGetErrorStr2(h.get());
    }
    return "";
}

// Where the pixel shown at (x, y) of the oriented picture is stored in the coded w x h picture (EXIF tag
// 0x0112). w and h are the VISIBLE size, never TurboJPEG's padded plane size: mirroring or rotating the
// padded plane would bring its padding column / row into view and shift the picture by one pixel.
struct Stored {
    uint32_t x, y;
};
Stored stored_at(int orientation, uint32_t w, uint32_t h, uint32_t x, uint32_t y) {
    switch (orientation) {
        case 2: return {w - 1 - x, y};          // mirrored left-right
        case 3: return {w - 1 - x, h - 1 - y};  // rotated 180
        case 4: return {x, h - 1 - y};          // mirrored top-bottom
        case 5: return {y, x};                  // transposed
        case 6: return {y, h - 1 - x};          // rotated 90 clockwise
        case 7: return {w - 1 - y, h - 1 - x};  // transversed
        case 8: return {w - 1 - y, x};          // rotated 270 clockwise
        default: return {x, y};
    }
}

// Writes the semi-planar picture of geometry `g`: the coded picture oriented, then its top-left g.width x
// g.height (the orientation comes before the 310B's even rounding, so the rounding drops the last column /
// row of the ORIENTED picture).
//   - Luma: the visible part of TurboJPEG's luma plane, oriented.
//   - Chroma: each output sample covers ox x oy luma samples of the output (clipped to it); its value is the
//     rounded mean, (sum + n/2) / n, over those n luma positions of the source chroma sample covering each
//     one's stored position. That is the chroma brought to full resolution (each sample replicated over the
//     luma it covers), oriented, then subsampled by the rounded mean of the covering samples — the rule
//     Kestrel's CPU JPEGD documents (kestrel/dvpp.h, "Choices where the boards' documentation is silent"; dvpp's
//     decode_yuv_path), implemented here on its own so both give the same bytes. Unrotated, it is the
//     rounded mean of the source samples covering the output sample (4:2:0 to NV12 copies TurboJPEG's
//     chroma; 4:2:2 / 4:4:0 / 4:4:4 to NV12 averages two or four). For an odd-sized picture that is
//     mirrored or rotated, an output sample can straddle two source samples (the partial last source
//     sample lands on the first output column / row): it is then their mean. UNCONFIRMED against a
//     board: JPEGD's chroma filter, and where it places chroma when it orients an odd-sized picture, are
//     not documented. Grey sources get chroma 0x80.
void write_semi_planar(const Planes& p, int orientation, const DecodedGeometry& g, uint8_t* out) {
    const uint8_t* luma = p.plane[0].data();
    for (uint32_t y = 0; y < g.height; ++y) {
        uint8_t* row = out + uint64_t(y) * g.width_stride;
        if (orientation <= 1 || orientation > 8) {
            std::memcpy(row, luma + uint64_t(y) * p.pw[0], g.width);
            continue;
        }
        for (uint32_t x = 0; x < g.width; ++x) {
            const Stored s = stored_at(orientation, p.width, p.height, x, y);
            row[x] = luma[uint64_t(s.y) * p.pw[0] + s.x];
        }
    }
    const Layout& l = g.layout;
    uint8_t* uv = out + uint64_t(g.width_stride) * g.height_stride;
    const uint64_t stride = uint64_t(g.width_stride) * 2 / l.ox;
    const uint32_t cw = (g.width + l.ox - 1) / l.ox, ch = (g.height + l.oy - 1) / l.oy;
    for (uint32_t cy = 0; cy < ch; ++cy) {
        uint8_t* row = uv + cy * stride;
        const uint32_t y0 = cy * l.oy, y1 = std::min(y0 + l.oy, g.height);
        for (uint32_t cx = 0; cx < cw; ++cx) {
            uint8_t c[2] = {0x80, 0x80};
            if (!p.grey) {
                const uint32_t x0 = cx * l.ox, x1 = std::min(x0 + l.ox, g.width);
                uint32_t sum[2] = {0, 0}, n = 0;
                for (uint32_t y = y0; y < y1; ++y) {
                    for (uint32_t x = x0; x < x1; ++x, ++n) {
                        const Stored s = stored_at(orientation, p.width, p.height, x, y);
                        const size_t at = size_t(s.y / p.sy) * p.pw[1] + s.x / p.sx;
                        sum[0] += p.plane[1][at];
                        sum[1] += p.plane[2][at];
                    }
                }
                for (int k = 0; k < 2; ++k) c[k] = uint8_t((sum[k] + n / 2) / n);
            }
            row[2 * cx] = l.vu ? c[1] : c[0];
            row[2 * cx + 1] = l.vu ? c[0] : c[1];
        }
    }
}

}  // namespace
}  // namespace kes_sim

using namespace kes_sim;

DVPP_API aclError acldvppJpegGetImageInfoV2(const void* data, uint32_t size, uint32_t* width, uint32_t* height,
                                            int32_t* components, int32_t* format) {
    DVPP_ENTER(kNeedInit);
    JpegInfo info;
    if (aclError e = read_info(__func__, data, size, &info)) return e;
    if (width) *width = uint32_t(info.width);
    if (height) *height = uint32_t(info.height);
    if (components) {
        *components = info.colorspace == TJCS_GRAY                                     ? 1
                      : (info.colorspace == TJCS_CMYK || info.colorspace == TJCS_YCCK) ? 4
                                                                                       : 3;
    }
    if (format) *format = css_of(info.subsamp);
    return kOk;
}

DVPP_API aclError acldvppJpegGetImageInfo(const void* data, uint32_t size, uint32_t* width, uint32_t* height,
                                          int32_t* components) {
    return acldvppJpegGetImageInfoV2(data, size, width, height, components, nullptr);
}

DVPP_API aclError acldvppJpegPredictDecSize(const void* data, uint32_t dataSize, int32_t outputPixelFormat,
                                            uint32_t* decSize) {
    DVPP_ENTER(kNeedInit);
    const std::string call = __func__;
    if (!decSize) return report(kInvalidParam, call + ": decSize is NULL");
    JpegInfo info;
    if (aclError e = read_info(call, data, dataSize, &info)) return e;
    if (aclError e = check_decodable(call, info)) return e;
    int32_t format = 0;
    if (aclError e = check_output_format(call, outputPixelFormat, info, &format)) return e;
    const int orientation = exif_orientation(static_cast<const uint8_t*>(data), dataSize);
    *decSize = uint32_t(geometry(info, orientation, format).bytes);
    return kOk;
}

DVPP_API aclError acldvppJpegDecodeAsync(acldvppChannelDesc* channelDesc, const void* data, uint32_t size,
                                         acldvppPicDesc* outputDesc, aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (aclError e = check_channel(call, channelDesc, kModeJpegd)) return e;
    if (aclError e = check_buffer(call, "JPEG data", data, size)) return e;
    if (size == 0) return report(kInvalidParam, call + ": size is 0");
    if (!pic_alive(outputDesc)) return report(kInvalidParam, call + ": the output is not a live picture description");
    JpegInfo info;
    std::string refused;
    int orientation = 1;
    {
        DeviceWork work;  // the bytes are in device memory
        refused = refusal(static_cast<const uint8_t*>(data), size);
        if (refused.empty()) {
            if (aclError e = read_info(call, data, size, &info)) return e;
            orientation = exif_orientation(static_cast<const uint8_t*>(data), size);
        }
    }
    if (!refused.empty()) return report(kUnsupportedJpeg, call + ": JPEGD refuses this JPEG: " + refused);
    if (aclError e = check_decodable(call, info)) return e;
    int32_t format = 0;
    if (aclError e = check_output_format(call, outputDesc->format, info, &format)) return e;
    const DecodedGeometry g = geometry(info, orientation, format);
    if (outputDesc->size < g.bytes) {
        return report(kInvalidParam, call + ": the output picture's size " + std::to_string(outputDesc->size) +
                                         " < the " + std::to_string(g.bytes) + " bytes the decode writes (" +
                                         std::to_string(g.width_stride) + "x" + std::to_string(g.height_stride) +
                                         " strides)");
    }
    if (aclError e = check_buffer(call, "output picture data", outputDesc->data, g.bytes)) return e;
    uint8_t* out = static_cast<uint8_t*>(outputDesc->data);
    return queue_task(stream, [call, data, size, outputDesc, out, info, orientation, g, format] {
        if (!buffer_alive(data, size) || !buffer_alive(out, g.bytes) || !pic_alive(outputDesc)) {
            return report(kRtAicpuException, call +
                                                 ": the JPEG, the output buffer or its description was released "
                                                 "before the stream ran the decode");
        }
        Planes planes;
        const std::string failed = decode_planes(static_cast<const uint8_t*>(data), size, info, &planes);
        if (!failed.empty()) return report(kRtAicpuException, call + ": the decode failed: " + failed);
        write_semi_planar(planes, orientation, g, out);
        outputDesc->width = g.width;
        outputDesc->height = g.height;
        outputDesc->width_stride = g.width_stride;
        outputDesc->height_stride = g.height_stride;
        outputDesc->format = format;
        outputDesc->ret_code = 0;
        return aclError{kOk};
    });
}

// ---- JPEGE -------------------------------------------------------------------------------------------

namespace {

aclError jpege_input(const std::string& call, const acldvppPicDesc* in, Yuv420* pic) {
    if (!pic_alive(in)) return report(kInvalidParam, call + ": the input is not a live picture description");
    if (in->format != kNv12 && in->format != kNv21) {
        return report(kFeatureUnsupported, call + ": the simulator's JPEGE takes NV12/NV21 only (format " +
                                               std::to_string(in->format) + ")");
    }
    const uint32_t max = soc_rules().jpeg_max;
    if (in->width % 2 || in->height % 2 || in->width < 32 || in->height < 32 || in->width > max || in->height > max) {
        return report(kInvalidParam, call + ": input " + std::to_string(in->width) + "x" + std::to_string(in->height) +
                                         " must be even and within 32x32 .. " + std::to_string(max) + "x" +
                                         std::to_string(max));
    }
    if (in->width_stride < in->width || in->width_stride % 16 || in->height_stride < in->height ||
        in->height_stride % 2) {
        return report(kInvalidParam, call + ": input widthStride " + std::to_string(in->width_stride) +
                                         " must be a multiple of 16 >= width and heightStride " +
                                         std::to_string(in->height_stride) + " even >= height");
    }
    *pic = Yuv420{static_cast<uint8_t*>(in->data),
                  in->width,
                  in->height,
                  in->width_stride,
                  in->height_stride,
                  in->format == kNv21};
    if (in->size < pic->bytes()) {
        return report(kInvalidParam, call + ": input size " + std::to_string(in->size) + " < widthStride x " +
                                         "heightStride x 3/2 = " + std::to_string(pic->bytes()));
    }
    return check_buffer(call, "input picture data", in->data, pic->bytes());
}

}  // namespace

DVPP_API aclError acldvppJpegPredictEncSize(const acldvppPicDesc* inputDesc, const acldvppJpegeConfig* config,
                                            uint32_t* size) {
    DVPP_ENTER(kNeedInit);
    const std::string call = __func__;
    if (!size) return report(kInvalidParam, call + ": size is NULL");
    if (!pic_alive(inputDesc) || !dvpp().jpeges.contains(config)) {
        return report(kInvalidParam, call + ": not a live picture description or JPEGE config");
    }
    const uint64_t ws = inputDesc->width_stride ? inputDesc->width_stride : align_up(inputDesc->width, 16);
    const uint64_t hs = inputDesc->height_stride ? inputDesc->height_stride : inputDesc->height;
    const uint64_t mib2 = 2u << 20;
    *size = uint32_t((ws * hs * 3 / 2 + 640 + 128 + mib2 - 1) / mib2 * mib2);  // BOARD-RULES §JPEGE
    return kOk;
}

DVPP_API aclError acldvppJpegEncodeAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc, const void* data,
                                         uint32_t* size, acldvppJpegeConfig* config, aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (aclError e = check_channel(call, channelDesc, kModeJpege)) return e;
    if (!dvpp().jpeges.contains(config)) return report(kInvalidParam, call + ": not a live JPEGE config");
    if (!size || *size == 0) return report(kInvalidParam, call + ": size is NULL or *size (the capacity) is 0");
    Yuv420 pic;
    if (aclError e = jpege_input(call, inputDesc, &pic)) return e;
    if (aclError e = check_buffer(call, "output JPEG data", data, *size)) return e;
    uint8_t* out = static_cast<uint8_t*>(const_cast<void*>(data));
    const uint32_t capacity = *size;
    const int quality = config->level == 0 ? 100 : int(config->level);
    return queue_task(stream, [call, pic, out, size, capacity, quality] {
        if (!buffer_alive(pic.data, pic.bytes()) || !buffer_alive(out, capacity)) {
            return report(kRtAicpuException, call + ": a buffer was freed before the stream ran the encode");
        }
        const uint32_t cw = pic.width / 2, ch = pic.height / 2;
        std::vector<uint8_t> u(size_t(cw) * ch), v(u.size());
        for (uint32_t y = 0; y < ch; ++y) {
            const uint8_t* row = pic.chroma() + uint64_t(y) * pic.width_stride;
            for (uint32_t x = 0; x < cw; ++x) {
                u[y * cw + x] = row[2 * x + (pic.nv21 ? 1 : 0)];
                v[y * cw + x] = row[2 * x + (pic.nv21 ? 0 : 1)];
            }
        }
        const unsigned char* planes[3] = {pic.luma(), u.data(), v.data()};
        const int strides[3] = {int(pic.width_stride), int(cw), int(cw)};
        TjHandle h(tjInitCompress());
        unsigned char* jpeg = nullptr;
        unsigned long bytes = 0;
        if (tjCompressFromYUVPlanes(h.get(), planes, int(pic.width), strides, int(pic.height), TJSAMP_420, &jpeg,
                                    &bytes, quality, 0) != 0) {
            return report(kRtAicpuException, call + ": the encode failed: " + std::string(tjGetErrorStr2(h.get())));
        }
        std::unique_ptr<unsigned char, void (*)(unsigned char*)> owned(jpeg, tjFree);
        if (bytes > capacity) {
            return report(kRtAicpuException, call + ": the JPEG needs " + std::to_string(bytes) +
                                                 " bytes, more than the output's " + std::to_string(capacity) +
                                                 " (acldvppJpegPredictEncSize)");
        }
        std::memcpy(out, jpeg, bytes);
        *size = uint32_t(bytes);
        return aclError{kOk};
    });
}
