// sim_jpeg.cpp — JPEGD and JPEGE of libacl_dvpp.so through libjpeg-turbo's TurboJPEG API (spec =
// ascend-semantics.md §2.4–2.5).
//
// JPEGD (acldvppJpegDecodeAsync):
//   - input in DVPP memory, 128-byte aligned, `size` the file's bytes; refused with 148052
//     ACL_ERROR_UNSUPPORTED_JPEG, as the hardware refuses them: progressive (SOF2/6/10/14),
//     arithmetic-coded (SOF9-11/13-15 or a DAC marker), lossless or hierarchical, not 8-bit, no EOI
//     (the last two bytes are not FF D9), 4:1:1 or CMYK/YCCK, sizes outside 32 .. 8192 (310) /
//     16384 (310B). The check runs when the work is queued, so the code comes from the *Async call
//     (UNCONFIRMED: a board may report it at aclrtSynchronizeStream instead; handle both);
//   - output NV12 or NV21 (PIXEL_FORMAT_UNKNOWN: NV21 for 4:2:0 and grey sources; the simulator does not
//     write the 4:2:2/4:4:4/4:4:0 semi-planar outputs, 200006), widthStride = align(w, 128) on 310,
//     align(w, 64) on 310B, heightStride = align(h, 16); on 310B an odd width/height is rounded down to
//     even. At the stream sync the decoder writes the picture and sets the output description's width,
//     height, widthStride, heightStride and format (read them back, spec §2.4); the buffer's size stays.
//     Grey sources get chroma 0x80; 4:2:2/4:4:0/4:4:4 chroma is averaged down to 4:2:0 (UNCONFIRMED
//     filter). EXIF orientation is NOT applied (the boards do: not simulated yet).
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

// The decoded picture's geometry on the simulated SoC.
struct DecodedGeometry {
    uint32_t width, height, width_stride, height_stride;
};
DecodedGeometry geometry(const JpegInfo& info) {
    const SocRules& r = soc_rules();
    DecodedGeometry g;
    g.width = r.v100 ? uint32_t(info.width) : uint32_t(info.width) & ~1u;
    g.height = r.v100 ? uint32_t(info.height) : uint32_t(info.height) & ~1u;
    g.width_stride = align_up(g.width, r.jpegd_width_align);
    g.height_stride = align_up(g.height, 16);
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

// Writes the 4:2:0 semi-planar picture from TurboJPEG's planes at their native subsampling.
void write_yuv420sp(const std::vector<std::vector<uint8_t>>& planes, const int* strides, const JpegInfo& info,
                    const DecodedGeometry& g, bool nv21, uint8_t* out) {
    for (uint32_t y = 0; y < g.height; ++y) {
        std::memcpy(out + uint64_t(y) * g.width_stride, planes[0].data() + uint64_t(y) * strides[0], g.width);
    }
    uint8_t* uv = out + uint64_t(g.width_stride) * g.height_stride;
    const uint32_t cw = (g.width + 1) / 2, ch = (g.height + 1) / 2;
    const int w = info.width, h = info.height;
    for (uint32_t cy = 0; cy < ch; ++cy) {
        uint8_t* row = uv + uint64_t(cy) * g.width_stride;
        for (uint32_t cx = 0; cx < cw; ++cx) {
            uint8_t c[2] = {0x80, 0x80};
            for (int k = 0; k < 2 && info.subsamp != TJSAMP_GRAY; ++k) {
                const uint8_t* p = planes[1 + k].data();
                const int s = strides[1 + k];
                const int x0 = int(cx), y0 = int(cy);
                const auto at = [&](int x, int y) { return int(p[int64_t(y) * s + x]); };
                switch (info.subsamp) {
                    case TJSAMP_420: c[k] = uint8_t(at(x0, y0)); break;
                    case TJSAMP_422:  // chroma w/2 x h: average the two rows
                        c[k] = uint8_t((at(x0, 2 * y0) + at(x0, std::min(2 * y0 + 1, h - 1)) + 1) >> 1);
                        break;
                    case TJSAMP_440:  // chroma w x h/2: average the two columns
                        c[k] = uint8_t((at(2 * x0, y0) + at(std::min(2 * x0 + 1, w - 1), y0) + 1) >> 1);
                        break;
                    default: {  // 4:4:4
                        const int x1 = std::min(2 * x0 + 1, w - 1), y1 = std::min(2 * y0 + 1, h - 1);
                        c[k] = uint8_t((at(2 * x0, 2 * y0) + at(x1, 2 * y0) + at(2 * x0, y1) + at(x1, y1) + 2) >> 2);
                    }
                }
            }
            row[2 * cx] = nv21 ? c[1] : c[0];
            row[2 * cx + 1] = nv21 ? c[0] : c[1];
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
    const DecodedGeometry g = geometry(info);
    const uint64_t plane = uint64_t(g.width_stride) * g.height_stride;
    uint64_t bytes = 0;
    switch (outputPixelFormat) {
        case kNv12:
        case kNv21: bytes = plane * 3 / 2; break;
        case kYuv422Sp:
        case kYvu422Sp:
        case kYuv440Sp:
        case kYvu440Sp: bytes = plane * 2; break;
        case kYuv444Sp:
        case kYvu444Sp: bytes = plane * 3; break;
        case kPixelUnknown:
            bytes = info.subsamp == TJSAMP_444                                   ? plane * 3
                    : (info.subsamp == TJSAMP_422 || info.subsamp == TJSAMP_440) ? plane * 2
                                                                                 : plane * 3 / 2;
            break;
        default:
            return report(kInvalidParam, call + ": JPEGD has no output format " + std::to_string(outputPixelFormat));
    }
    *decSize = uint32_t(bytes);
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
    {
        DeviceWork work;  // the bytes are in device memory
        refused = refusal(static_cast<const uint8_t*>(data), size);
        if (refused.empty()) {
            if (aclError e = read_info(call, data, size, &info)) return e;
        }
    }
    if (!refused.empty()) return report(kUnsupportedJpeg, call + ": JPEGD refuses this JPEG: " + refused);
    if (aclError e = check_decodable(call, info)) return e;
    int32_t format = outputDesc->format;
    if (format == kPixelUnknown && (info.subsamp == TJSAMP_420 || info.subsamp == TJSAMP_GRAY)) format = kNv21;
    if (format != kNv12 && format != kNv21) {
        const bool semi_planar = format == kPixelUnknown || (format >= kYuv422Sp && format <= kYvu444Sp) ||
                                 format == kYuv440Sp || format == kYvu440Sp;
        return report(semi_planar ? aclError{kFeatureUnsupported} : aclError{kInvalidParam},
                      call + ": output format " + std::to_string(outputDesc->format) +
                          (semi_planar ? ": the simulator's JPEGD writes NV12/NV21 only" : " is not a JPEGD output"));
    }
    const DecodedGeometry g = geometry(info);
    const uint64_t bytes = uint64_t(g.width_stride) * g.height_stride * 3 / 2;
    if (outputDesc->size < bytes) {
        return report(kInvalidParam, call + ": the output picture's size " + std::to_string(outputDesc->size) +
                                         " < the " + std::to_string(bytes) + " bytes the decode writes (" +
                                         std::to_string(g.width_stride) + "x" + std::to_string(g.height_stride) +
                                         " x 3/2)");
    }
    if (aclError e = check_buffer(call, "output picture data", outputDesc->data, bytes)) return e;
    uint8_t* out = static_cast<uint8_t*>(outputDesc->data);
    return queue_task(stream, [call, data, size, outputDesc, out, bytes, info, g, format] {
        if (!buffer_alive(data, size) || !buffer_alive(out, bytes) || !pic_alive(outputDesc)) {
            return report(kRtAicpuException, call +
                                                 ": the JPEG, the output buffer or its description was released "
                                                 "before the stream ran the decode");
        }
        TjHandle h(tjInitDecompress());
        std::vector<std::vector<uint8_t>> planes(3);
        unsigned char* ptrs[3] = {};
        int strides[3] = {};
        const int count = info.subsamp == TJSAMP_GRAY ? 1 : 3;
        for (int i = 0; i < count; ++i) {
            strides[i] = tjPlaneWidth(i, info.width, info.subsamp);
            planes[i].resize(size_t(strides[i]) * tjPlaneHeight(i, info.height, info.subsamp));
            ptrs[i] = planes[i].data();
        }
        if (tjDecompressToYUVPlanes(h.get(), static_cast<const unsigned char*>(data), size, ptrs, info.width, strides,
                                    info.height, 0) != 0) {
            return report(kRtAicpuException, call + ": the decode failed: " + std::string(tjGetErrorStr2(h.get())));
        }
        write_yuv420sp(planes, strides, info, g, format == kNv21, out);
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
    *size = uint32_t((ws * hs * 3 / 2 + 640 + 128 + mib2 - 1) / mib2 * mib2);  // spec §2.5
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
