// sim_vpc.cpp — VPC (acldvppVpc*Async): resize, crop, crop-and-resize, crop-and-paste and batch crop of
// NV12/NV21 pictures, by the simulator's own scalar code (spec = ascend-semantics.md §2.3). Independent of
// Kestrel's dvpp module on purpose: Kestrel's CPU VPC is checked against this, so they must not share a bug.
//
// Scaling (both SoCs): OpenCV's INTER_LINEAR convention, which the 310B documents as its own ("identical
// to OpenCV 3.4.2") and Kestrel's CPU VPC follows — per axis the source coordinate of destination index
// d is s = (d + 0.5) · (src / dst) − 0.5; i = floor(s), f = s − i; i < 0 gives (0, weight 0) and
// i ≥ src − 1 gives (src − 1, weight 0); the value is the bilinear blend in double precision, rounded
// half up. It differs from OpenCV's 11-bit fixed point by at most 1, the tolerance a comparison needs.
// Nearest (interpolation 2 and 4): i = min(floor(d · src / dst), src − 1). The 310's default filter (0) is
// a proprietary high-order filter: the simulator uses bilinear for it (UNCONFIRMED, not public).
// The chroma plane scales as a two-channel picture of half the size; NV12 in and NV21 out swap U and V.
//
// Rules (UNCONFIRMED where the spec has none): input NV12/NV21 (other formats the hardware takes are
// 200006 here: not simulated), output NV12/NV21 only; widths and heights rounded down to even; input
// 10x6 .. 8192 (the 310's "8K" mode above 4096), output 10x6 .. 4096x4096 (310) / 4096x8192 (310B);
// widthStride ≥ width, a multiple of 16 and ≥ 32 on 310 (≥ 10 on 310B), heightStride ≥ height, even;
// the buffer holds widthStride · heightStride · 3 / 2 bytes; ROIs inclusive and inside their picture, at
// least 10x6, on 310 with even left/top and odd right/bottom (100000 otherwise) and a paste left
// 16-aligned; on 310B a ROI's edges are widened to that parity (no parity rule there, spec §2.3, but a
// 4:2:0 picture has none finer); scale per axis within [1/32, 16] (mxVision's rule, UNCONFIRMED for V1);
// batch crop: at most 256 ROIs in all.
#include <cmath>
#include <cstring>

#include "sim_dvpp.hpp"

namespace kes_sim {
namespace {

struct Tap {
    uint32_t i0, i1;
    double f;  // weight of i1
};

std::vector<Tap> taps(uint32_t src, uint32_t dst, bool nearest) {
    std::vector<Tap> t(dst);
    const double scale = double(src) / dst;
    for (uint32_t d = 0; d < dst; ++d) {
        if (nearest) {
            const uint32_t i = std::min(uint32_t(std::floor(d * scale)), src - 1);
            t[d] = {i, i, 0.0};
            continue;
        }
        const double s = (d + 0.5) * scale - 0.5;
        const double fl = std::floor(s);
        if (fl < 0) {
            t[d] = {0, 0, 0.0};
        } else if (fl >= src - 1) {
            t[d] = {src - 1, src - 1, 0.0};
        } else {
            t[d] = {uint32_t(fl), uint32_t(fl) + 1, s - fl};
        }
    }
    return t;
}

// Scales a `cn`-channel plane region (origin pointers) of sw x sh onto dw x dh; `swap` exchanges the two
// channels of a chroma plane.
void scale_plane(const uint8_t* src, uint32_t src_stride, uint32_t sw, uint32_t sh, uint8_t* dst, uint32_t dst_stride,
                 uint32_t dw, uint32_t dh, int cn, bool swap, bool nearest) {
    const std::vector<Tap> tx = taps(sw, dw, nearest), ty = taps(sh, dh, nearest);
    for (uint32_t y = 0; y < dh; ++y) {
        const uint8_t* r0 = src + uint64_t(ty[y].i0) * src_stride;
        const uint8_t* r1 = src + uint64_t(ty[y].i1) * src_stride;
        const double fy = ty[y].f;
        uint8_t* out = dst + uint64_t(y) * dst_stride;
        for (uint32_t x = 0; x < dw; ++x) {
            const Tap& t = tx[x];
            for (int c = 0; c < cn; ++c) {
                const int from = swap ? 1 - c : c;
                const double top = r0[t.i0 * cn + from] * (1 - t.f) + r0[t.i1 * cn + from] * t.f;
                const double bottom = r1[t.i0 * cn + from] * (1 - t.f) + r1[t.i1 * cn + from] * t.f;
                out[x * cn + c] = uint8_t(std::floor(top * (1 - fy) + bottom * fy + 0.5));
            }
        }
    }
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
    } else {
        left &= ~1u;
        top &= ~1u;
        right |= 1u;
        bottom |= 1u;
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

bool nearest_of(const acldvppResizeConfig* config) {
    return config && (config->interpolation == 2 || config->interpolation == 4);
}

struct VpcJob {
    Yuv420 src, dst;
    Rect from, to;
    bool nearest = false;
};

aclError queue_jobs(const std::string& call, std::vector<VpcJob> jobs, aclrtStream stream) {
    return queue_task(stream, [call, jobs] {
        for (const VpcJob& j : jobs) {
            if (!buffer_alive(j.src.data, j.src.bytes()) || !buffer_alive(j.dst.data, j.dst.bytes())) {
                return report(kRtAicpuException, call + ": a picture buffer was freed before the stream ran the work");
            }
        }
        for (const VpcJob& j : jobs) vpc_scale(j.src, j.from, j.dst, j.to, j.nearest);
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
    job->nearest = nearest_of(config);
    return check_scale(call, job->from, job->to);
}

}  // namespace

void vpc_scale(const Yuv420& src, Rect from, const Yuv420& dst, Rect to, bool nearest) {
    scale_plane(src.luma() + uint64_t(from.y) * src.width_stride + from.x, src.width_stride, from.w, from.h,
                dst.luma() + uint64_t(to.y) * dst.width_stride + to.x, dst.width_stride, to.w, to.h, 1, false, nearest);
    // Chroma: rect edges are even, so the half-size rectangle is exact.
    scale_plane(src.chroma() + uint64_t(from.y / 2) * src.width_stride + from.x, src.width_stride, from.w / 2,
                from.h / 2, dst.chroma() + uint64_t(to.y / 2) * dst.width_stride + to.x, dst.width_stride, to.w / 2,
                to.h / 2, 2, src.nv21 != dst.nv21, nearest);
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

DVPP_API aclError acldvppVpcBatchCropAsync(acldvppChannelDesc* channelDesc, acldvppBatchPicDesc* srcBatchPicDescs,
                                           uint32_t* roiNums, uint32_t size, acldvppBatchPicDesc* dstBatchPicDescs,
                                           acldvppRoiConfig* cropAreas[], aclrtStream stream) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
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
                                      cropAreas[k], nullptr, nullptr, &job)) {
                return e;
            }
            jobs.push_back(job);
        }
    }
    return queue_jobs(call, std::move(jobs), stream);
}
