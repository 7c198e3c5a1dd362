// sim_vpc.cpp — VPC (acldvppVpc*Async): resize, crop, crop-and-resize, crop-and-paste, crop-resize-and-
// paste, batch crop and batch crop-and-resize of NV12/NV21 pictures, by the simulator's own scalar code
// (BOARD-RULES §VPC). Independent of Kestrel's dvpp module on purpose: Kestrel's CPU VPC is checked against
// this, so they must not share a bug.
//
// Scaling: the 310B documents its bilinear and nearest as "identical to OpenCV-3.4.2", so each plane is
// scaled bit-exactly as cv::resize scales an 8-bit picture (checked against OpenCV 4.6 by
// tests/test_sim_vpc_opencv.cpp: 0 differences). The luma ROI is a one-channel picture; the chroma is
// the two-channel picture of the (U, V) pairs under the ROI — pair columns left/2 .. right/2 and rows
// top/2 .. bottom/2, the inclusive ROI edges halved (rounded down) — scaled onto the pairs under the
// output rectangle (out_w/2 x out_h/2 for a whole, even-sized output). That is the model of Kestrel's
// CPU VPC (kestrel/dvpp.h, kes_vpc_crop_resize). On 310 the ROI parity makes the halving exact; on 310B
// (no parity rule) an odd left/top or an even right/bottom takes the whole pair under the edge pixel.
// Per axis, with scale = 1 / (dst / src) in double precision (as cv::resize computes it):
//   - equal sizes on both axes: a copy;
//   - bilinear with both scales exactly 2: the mean of each 2x2 block, (a + b + c + d + 2) >> 2 for one
//     channel; for the two-channel chroma the sum · 0.25 rounded half to even (cv::resize routes an
//     exact 2x reduction to INTER_AREA's fast path, whose vector rounding covers 1/3/4 channels only);
//   - bilinear otherwise: half-pixel centres s = float((d + 0.5) · scale − 0.5), i = floor(s), f = s − i;
//     11-bit weights w0 = round((1 − f) · 2048), w1 = round(f · 2048) (half to even); horizontally
//     i < 0 gives (0, f = 0) and i ≥ src − 1 gives (src − 1, f = 0); each needed source row becomes an
//     integer row H = S[i]·w0 + S[i + 1]·w1; vertically the weights keep f while rows i and i + 1 are
//     clamped into the picture, and out = ((((H0 >> 4)·w0) >> 16) + (((H1 >> 4)·w1) >> 16) + 2) >> 2,
//     OpenCV's vectorised 16-bit rounding (which cv::resize 4.6 gives for every column, tail included,
//     as the comparison shows), saturated to 0..255;
//   - nearest: i = min(floor(d · scale), src − 1).
// Interpolation: 1 bilinear, 2 nearest; 0 bilinear on both SoCs (the 310's default "high-order filter"
// is not public: simulated as bilinear, UNCONFIRMED; the 310B treats 0 as 1); 3/4 on 310B the same as
// 1/2 (BOARD-RULES §VPC's table); 3/4 on 310 are TensorFlow-like filters the simulator does not have: 200006
// ACL_ERROR_FEATURE_UNSUPPORTED; 5 (310B's high-order filter) is simulated as bilinear (UNCONFIRMED).
// acldvppVpcResizeAsync, acldvppVpcCropResizeAsync, acldvppVpcCropResizePasteAsync and
// acldvppVpcBatchCropResizeAsync take the resize config's interpolation; the plain crop / crop-and-paste /
// batch-crop calls use 0. NV12 in and NV21 out swap U and V.
//
// Rules (UNCONFIRMED where the documentation has none): input NV12/NV21 (other formats the hardware takes are
// 200006 here: not simulated), output NV12/NV21 only; widths and heights rounded down to even; input
// 10x6 .. 8192 (the 310's "8K" mode above 4096), output 10x6 .. 4096x4096 (310) / 4096x8192 (310B);
// widthStride ≥ width, a multiple of 16 and ≥ 32 on 310 (≥ 10 on 310B), heightStride ≥ height, even;
// the buffer holds widthStride · heightStride · 3 / 2 bytes; ROIs inclusive and inside their picture, at
// least 10x6, on 310 with even left/top and odd right/bottom (100000 otherwise) and a paste left
// 16-aligned; on 310B any edges (see the chroma above); scale per axis within [1/32, 16] (mxVision's
// rule, UNCONFIRMED for V1); batch crop: at most 256 ROIs in all.
#include <cmath>
#include <cstring>

#include "sim_dvpp.hpp"

namespace kes_sim {
namespace {

// A region of an 8-bit plane of `cn` interleaved channels: origin, row stride in bytes, size in samples.
struct PlaneRegion {
    uint8_t* data;
    uint32_t stride, w, h;
};

// cv::resize's scale for one axis: the inverse of the destination / source ratio.
double axis_scale(uint32_t src, uint32_t dst) {
    return 1.0 / (double(dst) / double(src));
}

// Round half to even, as OpenCV's saturate_cast of a float under the default rounding mode.
int round_even(float v) {
    return int(std::lrint(v));
}

uint8_t saturate_u8(int v) {
    return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
}

void copy_plane(const PlaneRegion& s, const PlaneRegion& d, int cn) {
    for (uint32_t y = 0; y < d.h; ++y) {
        std::memcpy(d.data + uint64_t(y) * d.stride, s.data + uint64_t(y) * s.stride, size_t(d.w) * cn);
    }
}

void nearest_plane(const PlaneRegion& s, const PlaneRegion& d, int cn) {
    const double sx = axis_scale(s.w, d.w), sy = axis_scale(s.h, d.h);
    std::vector<uint32_t> xs(d.w);
    for (uint32_t x = 0; x < d.w; ++x) xs[x] = std::min(uint32_t(std::floor(x * sx)), s.w - 1);
    for (uint32_t y = 0; y < d.h; ++y) {
        const uint8_t* row = s.data + uint64_t(std::min(uint32_t(std::floor(y * sy)), s.h - 1)) * s.stride;
        uint8_t* out = d.data + uint64_t(y) * d.stride;
        for (uint32_t x = 0; x < d.w; ++x) {
            for (int c = 0; c < cn; ++c) out[x * cn + c] = row[xs[x] * cn + c];
        }
    }
}

// Both scales exactly 2: the mean of each 2x2 block.
void halve_plane(const PlaneRegion& s, const PlaneRegion& d, int cn) {
    for (uint32_t y = 0; y < d.h; ++y) {
        const uint8_t* r0 = s.data + uint64_t(2 * y) * s.stride;
        const uint8_t* r1 = r0 + s.stride;
        uint8_t* out = d.data + uint64_t(y) * d.stride;
        for (uint32_t x = 0; x < d.w; ++x) {
            for (int c = 0; c < cn; ++c) {
                const uint32_t i = 2 * x * cn + c;
                const int sum = r0[i] + r0[i + cn] + r1[i] + r1[i + cn];
                if (cn == 1) {
                    out[x * cn + c] = uint8_t((sum + 2) >> 2);
                } else {  // half to even
                    const int q = sum >> 2, r = sum & 3;
                    out[x * cn + c] = uint8_t(q + (r > 2 || (r == 2 && (q & 1))));
                }
            }
        }
    }
}

// One axis of the bilinear: the source index and the two 11-bit weights of each destination index.
struct Tap {
    int32_t i;  // may be -1 vertically (rows are clamped when read)
    int32_t w0, w1;
};

std::vector<Tap> bilinear_taps(uint32_t src, uint32_t dst, bool clamp_weights) {
    const double scale = axis_scale(src, dst);
    std::vector<Tap> taps(dst);
    for (uint32_t d = 0; d < dst; ++d) {
        float f = float((d + 0.5) * scale - 0.5);
        int32_t i = int32_t(std::floor(f));
        f -= float(i);
        if (clamp_weights && i < 0) i = 0, f = 0.f;
        if (clamp_weights && i >= int32_t(src) - 1) i = int32_t(src) - 1, f = 0.f;
        taps[d] = Tap{i, round_even((1.f - f) * 2048.f), round_even(f * 2048.f)};
    }
    return taps;
}

void bilinear_plane(const PlaneRegion& s, const PlaneRegion& d, int cn) {
    const std::vector<Tap> tx = bilinear_taps(s.w, d.w, true), ty = bilinear_taps(s.h, d.h, false);
    const size_t n = size_t(d.w) * cn;
    // The horizontal pass of the two source rows the current output row needs, cached by row index.
    std::vector<int32_t> rows[2] = {std::vector<int32_t>(n), std::vector<int32_t>(n)};
    int64_t row_of[2] = {-1, -1};
    const auto horizontal = [&](int32_t r) -> const int32_t* {
        for (int k = 0; k < 2; ++k) {
            if (row_of[k] == r) return rows[k].data();
        }
        const int k = row_of[0] < row_of[1] ? 0 : 1;  // the older (upper) row
        const uint8_t* in = s.data + uint64_t(r) * s.stride;
        int32_t* h = rows[k].data();
        for (uint32_t x = 0; x < d.w; ++x) {
            const Tap& t = tx[x];
            for (int c = 0; c < cn; ++c) {
                int32_t v = in[t.i * cn + c] * t.w0;
                if (t.i + 1 < int32_t(s.w)) v += in[(t.i + 1) * cn + c] * t.w1;
                h[x * cn + c] = v;
            }
        }
        row_of[k] = r;
        return h;
    };
    const int32_t last = int32_t(s.h) - 1;
    for (uint32_t y = 0; y < d.h; ++y) {
        const Tap& t = ty[y];
        const int32_t r0 = std::min(std::max(t.i, 0), last), r1 = std::min(std::max(t.i + 1, 0), last);
        const int32_t* h0 = horizontal(r0);
        const int32_t* h1 = horizontal(r1);
        uint8_t* out = d.data + uint64_t(y) * d.stride;
        for (size_t x = 0; x < n; ++x) {
            const int32_t v = (((h0[x] >> 4) * t.w0) >> 16) + (((h1[x] >> 4) * t.w1) >> 16);
            out[x] = saturate_u8((v + 2) >> 2);
        }
    }
}

// Scales a `cn`-channel plane region onto another; `swap` then exchanges the two channels of a chroma
// plane (NV12 <-> NV21).
void scale_plane(const PlaneRegion& s, const PlaneRegion& d, int cn, bool swap, VpcFilter filter) {
    if (s.w == d.w && s.h == d.h) {
        copy_plane(s, d, cn);
    } else if (filter == VpcFilter::kNearest) {
        nearest_plane(s, d, cn);
    } else if (axis_scale(s.w, d.w) == 2.0 && axis_scale(s.h, d.h) == 2.0) {
        halve_plane(s, d, cn);
    } else {
        bilinear_plane(s, d, cn);
    }
    if (swap) {
        for (uint32_t y = 0; y < d.h; ++y) {
            uint8_t* row = d.data + uint64_t(y) * d.stride;
            for (uint32_t x = 0; x < d.w; ++x) std::swap(row[2 * x], row[2 * x + 1]);
        }
    }
}

// The (U, V) pairs under a luma rectangle: its inclusive edges halved.
Rect pairs_under(Rect r) {
    const uint32_t left = r.x / 2, top = r.y / 2, right = (r.x + r.w - 1) / 2, bottom = (r.y + r.h - 1) / 2;
    return Rect{left, top, right - left + 1, bottom - top + 1};
}

// Validates an NV12/NV21 VPC picture and snapshots it.
aclError vpc_picture(const std::string& call, const char* role, const acldvppPicDesc* d, bool output, Yuv420* pic) {
    const SocRules& r = soc_rules();
    const std::string what = std::string(role) + " picture";
    if (!pic_alive(d)) return report(kInvalidParam, call + ": the " + what + " is not a live picture description");
    if (d->format != kNv12 && d->format != kNv21) {
        if (output && r.v100) {
            return report(kInvalidParam, call + ": VPC output on Ascend310 is NV12/NV21 only (format " +
                                             std::to_string(d->format) + ")");
        }
        return report(kFeatureUnsupported, call + ": the simulator's VPC takes NV12/NV21 only (" + what + " format " +
                                               std::to_string(d->format) + ")");
    }
    const uint32_t w = d->width & ~1u, h = d->height & ~1u;
    const uint32_t max_w = output ? r.vpc_out_max_width : r.vpc_in_max_width;
    const uint32_t max_h = output ? r.vpc_out_max_height : r.vpc_in_max_height;
    if (w < 10 || h < 6 || w > max_w || h > max_h) {
        return report(kInvalidParam, call + ": " + what + " " + std::to_string(d->width) + "x" +
                                         std::to_string(d->height) + " is outside 10x6 .. " + std::to_string(max_w) +
                                         "x" + std::to_string(max_h) + " on " + sim().config.soc);
    }
    const uint32_t ws = d->width_stride, hs = d->height_stride;
    if (ws < w || ws % r.vpc_stride_align != 0 || ws < r.vpc_min_width_stride || ws > 16384) {
        return report(kInvalidParam, call + ": " + what + " widthStride " + std::to_string(ws) + " must be >= width " +
                                         std::to_string(w) + ", >= " + std::to_string(r.vpc_min_width_stride) +
                                         " and a multiple of " + std::to_string(r.vpc_stride_align) + " on " +
                                         sim().config.soc);
    }
    if (hs < h || hs % 2 != 0 || hs < 6 || hs > 16384) {
        return report(kInvalidParam, call + ": " + what + " heightStride " + std::to_string(hs) +
                                         " must be even and >= height " + std::to_string(h));
    }
    const uint64_t bytes = uint64_t(ws) * hs * 3 / 2;
    if (d->size < bytes) {
        return report(kInvalidParam, call + ": " + what + " size " + std::to_string(d->size) + " < widthStride x " +
                                         "heightStride x 3/2 = " + std::to_string(bytes));
    }
    if (aclError e = check_buffer(call, what + " data", d->data, bytes, r.vpc_takes_device_memory)) return e;
    *pic = Yuv420{static_cast<uint8_t*>(d->data), w, h, ws, hs, d->format == kNv21};
    return kOk;
}

aclError vpc_roi(const std::string& call, const char* role, const acldvppRoiConfig* roi, const Yuv420& pic, bool paste,
                 Rect* rect) {
    if (!dvpp().rois.contains(roi))
        return report(kInvalidParam, call + ": the " + role + " ROI is not a live ROI config");
    uint32_t left = roi->left, right = roi->right, top = roi->top, bottom = roi->bottom;
    const std::string text = std::string(role) + " ROI (left " + std::to_string(left) + ", right " +
                             std::to_string(right) + ", top " + std::to_string(top) + ", bottom " +
                             std::to_string(bottom) + ")";
    if (soc_rules().roi_parity) {
        if (left % 2 || top % 2 || right % 2 == 0 || bottom % 2 == 0) {
            return report(kInvalidParam, call + ": " + text + " on Ascend310 needs even left/top and odd right/bottom");
        }
        if (paste && left % 16) {
            return report(kInvalidParam, call + ": " + text + " on Ascend310 needs a paste left aligned to 16");
        }
    }
    if (left > right || top > bottom || right >= pic.width || bottom >= pic.height) {
        return report(kInvalidParam, call + ": " + text + " is not inside the " + std::to_string(pic.width) + "x" +
                                         std::to_string(pic.height) + " picture");
    }
    *rect = Rect{left, top, right - left + 1, bottom - top + 1};
    if (rect->w < 10 || rect->h < 6) return report(kInvalidParam, call + ": " + text + " is smaller than 10x6");
    return kOk;
}

aclError check_scale(const std::string& call, Rect from, Rect to) {
    const auto inside = [](uint32_t s, uint32_t d) { return uint64_t(d) * 32 >= s && d <= uint64_t(s) * 16; };
    if (!inside(from.w, to.w) || !inside(from.h, to.h)) {
        return report(kInvalidParam, call + ": scaling " + std::to_string(from.w) + "x" + std::to_string(from.h) +
                                         " to " + std::to_string(to.w) + "x" + std::to_string(to.h) +
                                         " is outside [1/32, 16] per axis");
    }
    return kOk;
}

// The filter a resize config asks for (NULL: interpolation 0), or 200006 for the 310's TensorFlow-like ones.
aclError filter_of(const std::string& call, const acldvppResizeConfig* config, VpcFilter* filter) {
    const uint32_t interpolation = config ? config->interpolation : 0;
    if (soc_rules().v100 && (interpolation == 3 || interpolation == 4)) {
        return report(kFeatureUnsupported, call + ": interpolation " + std::to_string(interpolation) +
                                               " (the Ascend310's TensorFlow-like " +
                                               (interpolation == 3 ? "bilinear" : "nearest") + ") is not simulated");
    }
    *filter = interpolation == 2 || interpolation == 4 ? VpcFilter::kNearest : VpcFilter::kBilinear;
    return kOk;
}

struct VpcJob {
    Yuv420 src, dst;
    Rect from, to;
    VpcFilter filter = VpcFilter::kBilinear;
};

aclError queue_jobs(const std::string& call, std::vector<VpcJob> jobs, aclrtStream stream) {
    return queue_task(stream, [call, jobs] {
        for (const VpcJob& j : jobs) {
            if (!buffer_alive(j.src.data, j.src.bytes()) || !buffer_alive(j.dst.data, j.dst.bytes())) {
                return report(kRtAicpuException, call + ": a picture buffer was freed before the stream ran the work");
            }
        }
        for (const VpcJob& j : jobs) vpc_scale(j.src, j.from, j.dst, j.to, j.filter);
        return aclError{kOk};
    });
}

Rect whole(const Yuv420& p) {
    return Rect{0, 0, p.width, p.height};
}

// Crop (and resize) of one ROI of `in` onto all of `out`, or onto its `paste` ROI.
aclError crop_job(const std::string& call, acldvppPicDesc* in, acldvppPicDesc* out, acldvppRoiConfig* crop,
                  acldvppRoiConfig* paste, const acldvppResizeConfig* config, VpcJob* job) {
    if (aclError e = vpc_picture(call, "input", in, false, &job->src)) return e;
    if (aclError e = vpc_picture(call, "output", out, true, &job->dst)) return e;
    job->from = whole(job->src);
    if (crop) {
        if (aclError e = vpc_roi(call, "crop", crop, job->src, false, &job->from)) return e;
    }
    job->to = whole(job->dst);
    if (paste) {
        if (aclError e = vpc_roi(call, "paste", paste, job->dst, true, &job->to)) return e;
    }
    if (aclError e = check_scale(call, job->from, job->to)) return e;
    return filter_of(call, config, &job->filter);
}

}  // namespace

void vpc_scale(const Yuv420& src, Rect from, const Yuv420& dst, Rect to, VpcFilter filter) {
    const auto luma = [](const Yuv420& p, Rect r) {
        return PlaneRegion{p.luma() + uint64_t(r.y) * p.width_stride + r.x, p.width_stride, r.w, r.h};
    };
    const auto chroma = [](const Yuv420& p, Rect r) {
        const Rect c = pairs_under(r);
        return PlaneRegion{p.chroma() + uint64_t(c.y) * p.width_stride + 2 * c.x, p.width_stride, c.w, c.h};
    };
    scale_plane(luma(src, from), luma(dst, to), 1, false, filter);
    scale_plane(chroma(src, from), chroma(dst, to), 2, src.nv21 != dst.nv21, filter);
}

}  // namespace kes_sim

using namespace kes_sim;

DVPP_API aclError acldvppVpcResizeAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                                        acldvppPicDesc* outputDesc, acldvppResizeConfig* resizeConfig,
                                        aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (aclError e = check_channel(call, channelDesc, kModeVpc)) return e;
    if (!dvpp().resizes.contains(resizeConfig)) return report(kInvalidParam, call + ": not a live resize config");
    VpcJob job;
    if (aclError e = crop_job(call, inputDesc, outputDesc, nullptr, nullptr, resizeConfig, &job)) return e;
    return queue_jobs(call, {job}, stream);
}

DVPP_API aclError acldvppVpcCropAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                                      acldvppPicDesc* outputDesc, acldvppRoiConfig* cropArea, aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (aclError e = check_channel(call, channelDesc, kModeVpc)) return e;
    VpcJob job;
    if (!cropArea) return report(kInvalidParam, call + ": cropArea is NULL");
    if (aclError e = crop_job(call, inputDesc, outputDesc, cropArea, nullptr, nullptr, &job)) return e;
    return queue_jobs(call, {job}, stream);
}

DVPP_API aclError acldvppVpcCropResizeAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                                            acldvppPicDesc* outputDesc, acldvppRoiConfig* cropArea,
                                            acldvppResizeConfig* resizeConfig, aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (aclError e = check_channel(call, channelDesc, kModeVpc)) return e;
    if (!cropArea) return report(kInvalidParam, call + ": cropArea is NULL");
    if (!dvpp().resizes.contains(resizeConfig)) return report(kInvalidParam, call + ": not a live resize config");
    VpcJob job;
    if (aclError e = crop_job(call, inputDesc, outputDesc, cropArea, nullptr, resizeConfig, &job)) return e;
    return queue_jobs(call, {job}, stream);
}

DVPP_API aclError acldvppVpcCropAndPasteAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                                              acldvppPicDesc* outputDesc, acldvppRoiConfig* cropArea,
                                              acldvppRoiConfig* pasteArea, aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (aclError e = check_channel(call, channelDesc, kModeVpc)) return e;
    if (!cropArea || !pasteArea) return report(kInvalidParam, call + ": cropArea or pasteArea is NULL");
    VpcJob job;
    if (aclError e = crop_job(call, inputDesc, outputDesc, cropArea, pasteArea, nullptr, &job)) return e;
    return queue_jobs(call, {job}, stream);
}

DVPP_API aclError acldvppVpcCropResizePasteAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                                                 acldvppPicDesc* outputDesc, acldvppRoiConfig* cropArea,
                                                 acldvppRoiConfig* pasteArea, acldvppResizeConfig* resizeConfig,
                                                 aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (aclError e = check_channel(call, channelDesc, kModeVpc)) return e;
    if (!cropArea || !pasteArea) return report(kInvalidParam, call + ": cropArea or pasteArea is NULL");
    if (!dvpp().resizes.contains(resizeConfig)) return report(kInvalidParam, call + ": not a live resize config");
    VpcJob job;
    if (aclError e = crop_job(call, inputDesc, outputDesc, cropArea, pasteArea, resizeConfig, &job)) return e;
    return queue_jobs(call, {job}, stream);
}

namespace {

// acldvppVpcBatchCrop(Resize)Async: ROI k of the roiNums[i] of source picture i onto destination picture k.
aclError batch_crop(const std::string& call, acldvppChannelDesc* channelDesc, acldvppBatchPicDesc* srcBatchPicDescs,
                    uint32_t* roiNums, uint32_t size, acldvppBatchPicDesc* dstBatchPicDescs,
                    acldvppRoiConfig* cropAreas[], const acldvppResizeConfig* config, aclrtStream stream) {
    if (aclError e = check_channel(call, channelDesc, kModeVpc)) return e;
    Dvpp& d = dvpp();
    if (!d.batches.contains(srcBatchPicDescs) || !d.batches.contains(dstBatchPicDescs)) {
        return report(kInvalidParam, call + ": a source or destination batch is not a live batch description");
    }
    if (!roiNums || !cropAreas || size == 0 || size > srcBatchPicDescs->pics.size()) {
        return report(kInvalidParam, call + ": roiNums/cropAreas NULL, or size " + std::to_string(size) +
                                         " is 0 or more than the source batch holds");
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < size; ++i) {
        if (roiNums[i] == 0) return report(kInvalidParam, call + ": roiNums[" + std::to_string(i) + "] is 0");
        total += roiNums[i];
    }
    if (total > 256) {
        return report(kInvalidParam, call + ": " + std::to_string(total) + " ROIs in all; VPC takes at most 256");
    }
    if (total > dstBatchPicDescs->pics.size()) {
        return report(kInvalidParam, call + ": " + std::to_string(total) + " ROIs but the destination batch holds " +
                                         std::to_string(dstBatchPicDescs->pics.size()) + " pictures");
    }
    std::vector<VpcJob> jobs;
    uint32_t k = 0;
    for (uint32_t i = 0; i < size; ++i) {
        for (uint32_t j = 0; j < roiNums[i]; ++j, ++k) {
            VpcJob job;
            if (!cropAreas[k]) return report(kInvalidParam, call + ": cropAreas[" + std::to_string(k) + "] is NULL");
            if (aclError e = crop_job(call, srcBatchPicDescs->pics[i].get(), dstBatchPicDescs->pics[k].get(),
                                      cropAreas[k], nullptr, config, &job)) {
                return e;
            }
            jobs.push_back(job);
        }
    }
    return queue_jobs(call, std::move(jobs), stream);
}

}  // namespace

DVPP_API aclError acldvppVpcBatchCropAsync(acldvppChannelDesc* channelDesc, acldvppBatchPicDesc* srcBatchPicDescs,
                                           uint32_t* roiNums, uint32_t size, acldvppBatchPicDesc* dstBatchPicDescs,
                                           acldvppRoiConfig* cropAreas[], aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    return batch_crop(__func__, channelDesc, srcBatchPicDescs, roiNums, size, dstBatchPicDescs, cropAreas, nullptr,
                      stream);
}

DVPP_API aclError acldvppVpcBatchCropResizeAsync(acldvppChannelDesc* channelDesc, acldvppBatchPicDesc* srcBatchPicDescs,
                                                 uint32_t* roiNums, uint32_t size,
                                                 acldvppBatchPicDesc* dstBatchPicDescs, acldvppRoiConfig* cropAreas[],
                                                 acldvppResizeConfig* resizeConfig, aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (!dvpp().resizes.contains(resizeConfig)) return report(kInvalidParam, call + ": not a live resize config");
    return batch_crop(call, channelDesc, srcBatchPicDescs, roiNums, size, dstBatchPicDescs, cropAreas, resizeConfig,
                      stream);
}
