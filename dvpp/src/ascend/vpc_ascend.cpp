// vpc_ascend.cpp — VPC crop/resize, crop-and-paste, letterbox and batch crop on the DVPP hardware
// (acldvppVpcCropAsync, acldvppVpcCropAndPasteAsync, acldvppVpcBatchCropAsync; spec §2.3, backend §4).
// The board rules were checked by the caller (vpc_resize.cpp, vpc_paste.cpp); this file moves pictures
// into DVPP memory when they are elsewhere and drives the descriptors.
#include <algorithm>
#include <cstring>
#include <vector>

#include "dvpp_ascend.hpp"
#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"

namespace kes {
namespace {

// The V1 crop calls resize with the hardware's default filter (bilinear on 310B, the 310's high-order
// filter — Kestrel's CPU path gives both bilinear, UNCONFIRMED); nearest needs the resize-config variants.
std::string interp_refusal(kes_vpc_interp interp) {
    if (enum_value(interp) == KES_VPC_INTERP_NEAREST)
        return "nearest-neighbour interpolation (the V1 crop calls use the hardware's default filter)";
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
    std::string refusal = interp_refusal(interp);
    if (!refusal.empty()) return refusal;
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
    DvppPicture src(d, in, vpc_align(hw), true);
    const size_t bytes = output_bytes(in.format, g);
    OutputImage output(pool, bytes);
    PicDesc dst(d);
    dst.describe(output.device_data(), output.device_size(), in.format, g.width, g.height, g.width_stride,
                 g.height_stride);
    RoiConfig roi(d, crop);
    acl::check("acldvppVpcCropAsync",
               d.acldvppVpcCropAsync(hw.channel(), src.get(), dst.get(), roi.get(), hw.stream()));
    hw.sync("acldvppVpcCropAsync");
    output.finish(out, in.format, g.width, g.height, g.width_stride, g.height_stride, bytes);
    return "";
}

std::string vpc_crop_and_paste_hw(AscendDvpp& hw, const kes_image& in, const kes_vpc_roi& crop, kes_vpc_interp interp,
                                  kes_image& canvas, const kes_vpc_roi& paste) {
    std::string refusal = interp_refusal(interp);
    if (!refusal.empty()) return refusal;
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
    DvppPicture src(d, in, vpc_align(hw), true);
    DvppPicture dst(d, canvas, vpc_align(hw), true);
    RoiConfig crop_roi(d, crop), paste_roi(d, paste);
    acl::check("acldvppVpcCropAndPasteAsync",
               d.acldvppVpcCropAndPasteAsync(hw.channel(), src.get(), dst.get(), crop_roi.get(), paste_roi.get(),
                                             hw.stream()));
    hw.sync("acldvppVpcCropAndPasteAsync");
    dst.store();
    return "";
}

std::string vpc_letterbox_hw(AscendDvpp& hw, const kes_image& in, const kes_vpc_roi& crop, kes_vpc_interp interp,
                             const VpcOutput& g, const uint8_t fill[3], const kes_vpc_roi& paste, kes_mem_pool* pool,
                             kes_image* out) {
    std::string refusal = interp_refusal(interp);
    if (!refusal.empty()) return refusal;
    const bool cpu_fill = kes_mem_is_host_accessible(KES_MEM_DVPP) != 0;
    if (!cpu_fill && fill[1] != fill[2])
        return "a padding colour with U != V in DVPP memory the CPU cannot write (ACL_HOST run mode)";
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
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
    kes_image_plane py, pc;
    check_sdk(kes_image_get_plane(&canvas, 0, &py), "letterbox luma");
    check_sdk(kes_image_get_plane(&canvas, 1, &pc), "letterbox chroma");
    const size_t luma_bytes = size_t(py.stride) * canvas.height_stride;
    if (cpu_fill) {
        std::memset(py.data, fill[0], luma_bytes);
        const bool vu = enum_value(in.format) == KES_PIXEL_NV21;
        uint8_t* c = py.data + luma_bytes;
        for (size_t i = 0; i + 1 < bytes - luma_bytes; i += 2) {
            c[i] = vu ? fill[2] : fill[1];
            c[i + 1] = vu ? fill[1] : fill[2];
        }
    } else {
        const acl::Api& rt = acl::require();
        acl::check("aclrtMemset", rt.aclrtMemset(py.data, luma_bytes, fill[0], luma_bytes));
        acl::check("aclrtMemset",
                   rt.aclrtMemset(py.data + luma_bytes, bytes - luma_bytes, fill[1], bytes - luma_bytes));
    }
    PicDesc dst(d);
    dst.describe(output.device_data(), output.device_size(), in.format, g.width, g.height, g.width_stride,
                 g.height_stride);
    RoiConfig crop_roi(d, crop), paste_roi(d, paste);
    acl::check("acldvppVpcCropAndPasteAsync",
               d.acldvppVpcCropAndPasteAsync(hw.channel(), src.get(), dst.get(), crop_roi.get(), paste_roi.get(),
                                             hw.stream()));
    hw.sync("acldvppVpcCropAndPasteAsync");
    output.finish(out, in.format, g.width, g.height, g.width_stride, g.height_stride, bytes);
    return "";
}

std::string vpc_batch_crop_hw(AscendDvpp& hw, const kes_image* images, const kes_vpc_batch_roi* rois,
                              const kes_vpc_roi* crops, const VpcOutput* g, uint32_t count, kes_vpc_interp interp,
                              kes_mem_pool* pool, kes_image* out) {
    std::string refusal = interp_refusal(interp);
    if (!refusal.empty()) return refusal;
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
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
    acl::check("acldvppVpcBatchCropAsync",
               d.acldvppVpcBatchCropAsync(hw.channel(), src_batch.batch, roi_nums.data(), uint32_t(sources.size()),
                                          dst_batch.batch, roi_ptrs.data(), hw.stream()));
    hw.sync("acldvppVpcBatchCropAsync");
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
