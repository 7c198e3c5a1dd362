// vpc_ascend.cpp — VPC crop/resize, crop-and-paste, letterbox and batch crop on the DVPP hardware
// (acldvppVpcCropResizeAsync, acldvppVpcCropResizePasteAsync, acldvppVpcBatchCropResizeAsync; the plain V1
// calls without a resize config on a CANN that lacks them; BOARD-RULES §VPC, §AscendCL).
// The board rules were checked by the caller (vpc_resize.cpp, vpc_paste.cpp); this file moves pictures
// into DVPP memory when they are elsewhere and drives the descriptors.
#include <algorithm>
#include <cstring>
#include <vector>

#include "dvpp_ascend.hpp"
#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "vpc_internal.hpp"

namespace kes {
namespace {

// How a VPC call filters: with the resize-config calls (CANN 5+) Kestrel's value is the hardware's
// (acldvppSetResizeConfigInterpolation: 0 the SoC's default, 1 bilinear, 2 nearest); without them the
// plain V1 calls use the SoC's default filter, which is bilinear on 310B but the 310's undocumented
// high-order filter — so there only DEFAULT is served, and BILINEAR/NEAREST fall back to the CPU.
class Filter {
public:
    Filter(const AscendDvpp& hw, kes_vpc_interp interp) : dvpp_(hw.api()), interp_(uint32_t(enum_value(interp))) {
        const acl::DvppApi& d = hw.api();
        if (d.acldvppSetResizeConfigInterpolation && d.acldvppVpcCropResizeAsync && d.acldvppVpcCropResizePasteAsync &&
            d.acldvppVpcBatchCropResizeAsync) {
            config_ = d.acldvppCreateResizeConfig();
            if (!config_) fail(KES_ERR_OUT_OF_MEMORY, "acldvppCreateResizeConfig returned NULL");
            const acl::Error e = d.acldvppSetResizeConfigInterpolation(config_, interp_);
            if (e == acl::kFeatureUnsupported || e == acl::kInvalidParam)
                refusal_ = "interpolation " + std::to_string(interp_) +
                           " (acldvppSetResizeConfigInterpolation: " + std::to_string(e) + ")";
            else
                acl::check("acldvppSetResizeConfigInterpolation", e);
            return;
        }
        const bool default_is_bilinear = hw.board().board != KES_BOARD_310;
        if (interp_ == KES_VPC_INTERP_NEAREST || (interp_ == KES_VPC_INTERP_BILINEAR && !default_is_bilinear))
            refusal_ = "this interpolation without acldvppSetResizeConfigInterpolation (a CANN before 5.0)";
    }
    ~Filter() {
        if (config_) dvpp_.acldvppDestroyResizeConfig(config_);
    }
    Filter(const Filter&) = delete;
    Filter& operator=(const Filter&) = delete;

    // "" when the hardware can filter this way, else why not.
    const std::string& refusal() const noexcept { return refusal_; }
    // The resize config for the *Resize* calls, or nullptr: use the plain V1 calls.
    acl::DvppResizeConfig* config() const noexcept { return config_; }

private:
    const acl::DvppApi& dvpp_;
    uint32_t interp_;
    acl::DvppResizeConfig* config_ = nullptr;
    std::string refusal_;
};

// "" when the hardware took the call; the refusal when it answered that it lacks the feature
// (ACL_ERROR_FEATURE_UNSUPPORTED). Any other failure throws.
std::string accepted(const char* call, acl::Error e) {
    if (e == acl::kFeatureUnsupported) return std::string("what ") + call + " answers 200006 (feature unsupported)";
    acl::check(call, e);
    return "";
}

class RoiConfig {
public:
    RoiConfig(const acl::DvppApi& dvpp, const kes_vpc_roi& r)
        : dvpp_(dvpp), roi_(dvpp.acldvppCreateRoiConfig(r.left, r.right, r.top, r.bottom)) {
        if (!roi_)
            fail(KES_ERR_INVALID_ARGUMENT, "acldvppCreateRoiConfig refused (%u, %u, %u, %u)", r.left, r.right, r.top,
                 r.bottom);
    }
    ~RoiConfig() { dvpp_.acldvppDestroyRoiConfig(roi_); }
    RoiConfig(const RoiConfig&) = delete;
    RoiConfig& operator=(const RoiConfig&) = delete;
    acl::DvppRoiConfig* get() const noexcept { return roi_; }

private:
    const acl::DvppApi& dvpp_;
    acl::DvppRoiConfig* roi_;
};

// UNCONFIRMED: the VPC input stride rule is taken to be the output one of the profile (align16 × align2
// on 310, documented for inputs there; 310B's V1 input rule is unstated).
DvppPicture::Alignment vpc_align(const AscendDvpp& hw) {
    return {std::max(1u, hw.board().vpc_width_align), std::max(1u, hw.board().vpc_height_align)};
}

size_t output_bytes(kes_pixel_format format, const VpcOutput& g) {
    size_t bytes = 0;
    check_sdk(kes_image_buffer_size(format, g.width_stride, g.height_stride, &bytes), "VPC output size");
    return bytes;
}

}  // namespace

std::string vpc_crop_resize_hw(AscendDvpp& hw, const kes_image& in, const kes_vpc_roi& crop, kes_vpc_interp interp,
                               const VpcOutput& g, kes_mem_pool* pool, kes_image* out) {
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
    Filter filter(hw, interp);
    if (!filter.refusal().empty()) return filter.refusal();
    DvppPicture src(d, in, vpc_align(hw), true);
    const size_t bytes = output_bytes(in.format, g);
    OutputImage output(pool, bytes);
    PicDesc dst(d);
    dst.describe(output.device_data(), output.device_size(), in.format, g.width, g.height, g.width_stride,
                 g.height_stride);
    RoiConfig roi(d, crop);
    const char* call = filter.config() ? "acldvppVpcCropResizeAsync" : "acldvppVpcCropAsync";
    const std::string refusal = accepted(
        call, filter.config() ? d.acldvppVpcCropResizeAsync(hw.channel(), src.get(), dst.get(), roi.get(),
                                                            filter.config(), hw.stream())
                              : d.acldvppVpcCropAsync(hw.channel(), src.get(), dst.get(), roi.get(), hw.stream()));
    if (!refusal.empty()) return refusal;
    hw.sync(call);
    output.finish(out, in.format, g.width, g.height, g.width_stride, g.height_stride, bytes);
    return "";
}

namespace {

// `crop` of src resized into `paste` of dst with the filter's call, then the sync.
std::string crop_and_paste(AscendDvpp& hw, const Filter& filter, acl::DvppPicDesc* src, acl::DvppPicDesc* dst,
                           const kes_vpc_roi& crop, const kes_vpc_roi& paste) {
    const acl::DvppApi& d = hw.api();
    RoiConfig crop_roi(d, crop), paste_roi(d, paste);
    const char* call = filter.config() ? "acldvppVpcCropResizePasteAsync" : "acldvppVpcCropAndPasteAsync";
    const std::string refusal =
        accepted(call, filter.config() ? d.acldvppVpcCropResizePasteAsync(hw.channel(), src, dst, crop_roi.get(),
                                                                          paste_roi.get(), filter.config(), hw.stream())
                                       : d.acldvppVpcCropAndPasteAsync(hw.channel(), src, dst, crop_roi.get(),
                                                                       paste_roi.get(), hw.stream()));
    if (!refusal.empty()) return refusal;
    hw.sync(call);
    return "";
}

}  // namespace

std::string vpc_crop_and_paste_hw(AscendDvpp& hw, const kes_image& in, const kes_vpc_roi& crop, kes_vpc_interp interp,
                                  kes_image& canvas, const kes_vpc_roi& paste) {
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
    Filter filter(hw, interp);
    if (!filter.refusal().empty()) return filter.refusal();
    DvppPicture src(d, in, vpc_align(hw), true);
    DvppPicture dst(d, canvas, vpc_align(hw), true);
    const std::string refusal = crop_and_paste(hw, filter, src.get(), dst.get(), crop, paste);
    if (!refusal.empty()) return refusal;
    dst.store();
    return "";
}

std::string vpc_letterbox_hw(AscendDvpp& hw, const kes_image& in, const kes_vpc_roi& crop, kes_vpc_interp interp,
                             const VpcOutput& g, const uint8_t fill[3], const kes_vpc_roi& paste, kes_mem_pool* pool,
                             kes_image* out) {
    const bool cpu_fill = kes_mem_is_host_accessible(KES_MEM_DVPP) != 0;
    if (!cpu_fill && fill[1] != fill[2])
        return "a padding colour with U != V in DVPP memory the CPU cannot write (ACL_HOST run mode)";
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
    Filter filter(hw, interp);
    if (!filter.refusal().empty()) return filter.refusal();
    DvppPicture src(d, in, vpc_align(hw), true);
    const size_t bytes = output_bytes(in.format, g);
    OutputImage output(pool, bytes);
    // The padding: written by the CPU on a board, by aclrtMemset per plane on a PCIe card.
    kes_image canvas;
    std::memset(&canvas, 0, sizeof canvas);
    canvas.format = in.format;
    canvas.width = g.width;
    canvas.height = g.height;
    canvas.width_stride = g.width_stride;
    canvas.height_stride = g.height_stride;
    canvas.data = output.device_data();
    canvas.size = output.device_size();
    if (cpu_fill) {
        vpc::fill_nv(canvas, fill[0], fill[1], fill[2]);
    } else {
        kes_image_plane py;
        check_sdk(kes_image_get_plane(&canvas, 0, &py), "letterbox luma");
        const size_t luma_bytes = size_t(py.stride) * canvas.height_stride;
        const acl::Api& rt = acl::require();
        acl::check("aclrtMemset", rt.aclrtMemset(py.data, luma_bytes, fill[0], luma_bytes));
        acl::check("aclrtMemset",
                   rt.aclrtMemset(py.data + luma_bytes, bytes - luma_bytes, fill[1], bytes - luma_bytes));
    }
    PicDesc dst(d);
    dst.describe(output.device_data(), output.device_size(), in.format, g.width, g.height, g.width_stride,
                 g.height_stride);
    const std::string refusal = crop_and_paste(hw, filter, src.get(), dst.get(), crop, paste);
    if (!refusal.empty()) return refusal;
    output.finish(out, in.format, g.width, g.height, g.width_stride, g.height_stride, bytes);
    return "";
}

std::string vpc_batch_crop_hw(AscendDvpp& hw, const kes_image* images, const kes_vpc_batch_roi* rois,
                              const kes_vpc_roi* crops, const VpcOutput* g, uint32_t count, kes_vpc_interp interp,
                              kes_mem_pool* pool, kes_image* out) {
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
    Filter filter(hw, interp);
    if (!filter.refusal().empty()) return filter.refusal();
    // acldvppVpcBatchCropAsync takes the ROIs grouped by source picture, in source order (roiNums[s] of
    // them for source s): order the caller's ROIs that way, keeping their relative order.
    std::vector<uint32_t> order(count);
    for (uint32_t i = 0; i < count; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return rois[a].image_index < rois[b].image_index; });
    std::vector<uint32_t> sources;  // image indices used, ascending
    std::vector<uint32_t> roi_nums;
    for (uint32_t i : order) {
        if (sources.empty() || sources.back() != rois[i].image_index) {
            sources.push_back(rois[i].image_index);
            roi_nums.push_back(0);
        }
        ++roi_nums.back();
    }
    struct BatchDesc {
        const acl::DvppApi& d;
        acl::DvppBatchPicDesc* batch;
        ~BatchDesc() {
            if (batch) d.acldvppDestroyBatchPicDesc(batch);
        }
    };
    BatchDesc src_batch{d, d.acldvppCreateBatchPicDesc(uint32_t(sources.size()))};
    BatchDesc dst_batch{d, d.acldvppCreateBatchPicDesc(count)};
    if (!src_batch.batch || !dst_batch.batch) fail(KES_ERR_OUT_OF_MEMORY, "acldvppCreateBatchPicDesc returned NULL");

    std::vector<std::unique_ptr<DvppPicture>> inputs;  // staged copies stay alive until the sync
    for (size_t s = 0; s < sources.size(); ++s) {
        const kes_image& img = images[sources[s]];
        acl::DvppPicDesc* desc = d.acldvppGetPicDesc(src_batch.batch, uint32_t(s));
        if (kes_image_memory(&img) == KES_MEM_DVPP &&
            img.width_stride % std::max(1u, hw.board().vpc_width_align) == 0 &&
            img.height_stride % std::max(1u, hw.board().vpc_height_align) == 0) {
            PicDesc::describe_picture(d, desc, img.data, image_bytes(img), img.format, img.width, img.height,
                                      img.width_stride, img.height_stride);
            continue;
        }
        // Stage through a DvppPicture, then describe the batch slot the same way.
        inputs.push_back(std::make_unique<DvppPicture>(d, img, vpc_align(hw), true));
        acl::DvppPicDesc* staged = inputs.back()->get();
        PicDesc::describe_picture(d, desc, d.acldvppGetPicDescData(staged), d.acldvppGetPicDescSize(staged), img.format,
                                  img.width, img.height, d.acldvppGetPicDescWidthStride(staged),
                                  d.acldvppGetPicDescHeightStride(staged));
    }
    std::vector<std::unique_ptr<OutputImage>> outputs(count);
    std::vector<std::unique_ptr<RoiConfig>> roi_configs(count);
    std::vector<acl::DvppRoiConfig*> roi_ptrs(count);
    for (uint32_t k = 0; k < count; ++k) {
        const uint32_t i = order[k];
        const kes_pixel_format f = images[rois[i].image_index].format;
        outputs[i] = std::make_unique<OutputImage>(pool, output_bytes(f, g[i]));
        PicDesc::describe_picture(d, d.acldvppGetPicDesc(dst_batch.batch, k), outputs[i]->device_data(),
                                  outputs[i]->device_size(), f, g[i].width, g[i].height, g[i].width_stride,
                                  g[i].height_stride);
        roi_configs[k] = std::make_unique<RoiConfig>(d, crops[i]);
        roi_ptrs[k] = roi_configs[k]->get();
    }
    const char* call = filter.config() ? "acldvppVpcBatchCropResizeAsync" : "acldvppVpcBatchCropAsync";
    const uint32_t nsrc = uint32_t(sources.size());
    const std::string refusal = accepted(
        call, filter.config()
                  ? d.acldvppVpcBatchCropResizeAsync(hw.channel(), src_batch.batch, roi_nums.data(), nsrc,
                                                     dst_batch.batch, roi_ptrs.data(), filter.config(), hw.stream())
                  : d.acldvppVpcBatchCropAsync(hw.channel(), src_batch.batch, roi_nums.data(), nsrc, dst_batch.batch,
                                               roi_ptrs.data(), hw.stream()));
    if (!refusal.empty()) return refusal;
    hw.sync(call);
    struct Releaser {
        kes_image* images;
        uint32_t n;
        ~Releaser() {
            for (uint32_t i = 0; images && i < n; ++i) kes_image_release(&images[i]);
        }
    } releaser{out, count};
    for (uint32_t i = 0; i < count; ++i) {
        const kes_pixel_format f = images[rois[i].image_index].format;
        outputs[i]->finish(&out[i], f, g[i].width, g[i].height, g[i].width_stride, g[i].height_stride,
                           output_bytes(f, g[i]));
    }
    releaser.images = nullptr;
    return "";
}

}  // namespace kes
