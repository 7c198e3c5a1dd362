// VPC crop-and-paste, letterbox and batch crop (BOARD-RULES §VPC: acldvppVpcCropAndPasteAsync,
// acldvppVpcBatchCropAsync) on NV12/NV21, built on the OpenCV-exact plane resize.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "vpc_internal.hpp"

namespace kes {
namespace vpc {
namespace {

// The paste area's rules: inside the canvas, the 310 parity, the board's left alignment, and 4:2:0
// (left/top even, width/height even) on every profile.
void check_paste_area(const kes_board_profile& b, const kes_vpc_roi& a, const kes_image& canvas) {
    check_roi(b, a, canvas.width, canvas.height, "paste");
    KES_REQUIRE(a.left % 2 == 0 && a.top % 2 == 0 && roi_width(a) % 2 == 0 && roi_height(a) % 2 == 0,
                "paste ROI (left %u, top %u, %ux%u) must have even left, top, width and height for 4:2:0 output",
                a.left, a.top, roi_width(a), roi_height(a));
    const uint32_t align = std::max(1u, b.vpc_paste_left_align);
    KES_REQUIRE(a.left % align == 0,
                "paste ROI left=%u must be a multiple of %u on the %s profile (docs/BOARD-RULES.md §VPC)", a.left,
                align, b.name);
}

void check_canvas(const kes_board_profile& b, const kes_image& canvas, const kes_image& in) {
    check_sdk(kes_image_validate(&canvas), "output image");
    KES_REQUIRE(enum_value(canvas.format) == enum_value(in.format),
                "output image format %s must equal the input's %s (VPC paste keeps the format)",
                kes_pixel_format_name(canvas.format), kes_pixel_format_name(in.format));
    check_output_size(b, canvas.width, canvas.height);
    const uint32_t wa = std::max(1u, b.vpc_width_align), ha = std::max(1u, b.vpc_height_align);
    KES_REQUIRE(canvas.width_stride % wa == 0 && canvas.height_stride % ha == 0,
                "output strides %ux%u must be multiples of %ux%u on the %s profile (VPC output stride rule, "
                "docs/BOARD-RULES.md §VPC)",
                canvas.width_stride, canvas.height_stride, wa, ha, b.name);
}

// The largest even-sized area of the crop's aspect ratio inside out_w × out_h, placed per `align`.
kes_vpc_roi letterbox_area(const kes_board_profile& b, uint32_t cw, uint32_t ch, uint32_t out_w, uint32_t out_h,
                           kes_vpc_letterbox_align align) {
    uint64_t pw = out_w, ph = out_h;
    if (uint64_t(cw) * out_h <= uint64_t(ch) * out_w)
        pw = (uint64_t(cw) * out_h + ch / 2) / ch;  // height-bound: full height, width rounded
    else
        ph = (uint64_t(ch) * out_w + cw / 2) / cw;
    pw = std::max<uint64_t>(2, std::min<uint64_t>(pw, out_w) & ~uint64_t(1));
    ph = std::max<uint64_t>(2, std::min<uint64_t>(ph, out_h) & ~uint64_t(1));
    uint32_t left = 0, top = 0;
    if (align == KES_VPC_LETTERBOX_CENTER) {
        const uint32_t step = std::max(2u, b.vpc_paste_left_align);
        left = uint32_t((out_w - pw) / 2) / step * step;
        top = uint32_t((out_h - ph) / 2) & ~1u;
    }
    return {left, top, left + uint32_t(pw) - 1, top + uint32_t(ph) - 1};
}

}  // namespace

void fill_nv(const kes_image& img, uint8_t y, uint8_t u, uint8_t v) {
    kes_image_plane py, pc;
    check_sdk(kes_image_get_plane(&img, 0, &py), "output luma");
    check_sdk(kes_image_get_plane(&img, 1, &pc), "output chroma");
    for (uint32_t r = 0; r < py.rows; ++r) std::memset(py.data + size_t(r) * py.stride, y, py.row_bytes);
    const bool vu = enum_value(img.format) == KES_PIXEL_NV21;
    const uint8_t first = vu ? v : u, second = vu ? u : v;
    for (uint32_t r = 0; r < pc.rows; ++r) {
        uint8_t* d = pc.data + size_t(r) * pc.stride;
        for (uint32_t i = 0; i + 1 < pc.row_bytes; i += 2) {
            d[i] = first;
            d[i + 1] = second;
        }
    }
}

}  // namespace vpc
}  // namespace kes

extern "C" {

kes_status kes_vpc_crop_and_paste(kes_dvpp_channel* channel, const kes_image* in, const kes_vpc_roi* crop,
                                  kes_image* canvas, const kes_vpc_roi* paste, kes_vpc_interp interp) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vpc_crop_and_paste");
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(in);
        KES_REQUIRE_NOT_NULL(canvas);
        KES_REQUIRE_NOT_NULL(paste);
        const kes_board_profile& b = channel->profile;
        const kes::vpc::Filter filter = kes::vpc::filter_arg(interp);
        const kes_vpc_roi r = kes::vpc::check_nv_crop(b, *in, crop, "input");
        kes::vpc::check_canvas(b, *canvas, *in);
        kes::vpc::check_paste_area(b, *paste, *canvas);
        kes::vpc::check_nv_resize(b, r, kes::vpc::roi_width(*paste), kes::vpc::roi_height(*paste), "paste area");
        if (kes::served_by_hardware(channel, "VPC crop-and-paste", [&](kes::AscendDvpp& hw) {
                return kes::vpc_crop_and_paste_hw(hw, *in, r, interp, *canvas, *paste);
            }))
            return KES_OK;
        kes::require_cpu_access(*in, "the input image");
        kes::require_cpu_access(*canvas, "the canvas");
        kes::vpc::resize_nv_region(*in, r, *canvas, *paste, filter);
        return KES_OK;
    });
}

void kes_vpc_letterbox_config_init(kes_vpc_letterbox_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->interp = KES_VPC_INTERP_BILINEAR;
    config->align = KES_VPC_LETTERBOX_CENTER;
    config->fill_y = 0;
    config->fill_u = 128;
    config->fill_v = 128;
}

kes_status kes_vpc_letterbox(kes_dvpp_channel* channel, const kes_image* in, const kes_vpc_roi* crop,
                             uint32_t out_width, uint32_t out_height, const kes_vpc_letterbox_config* config,
                             kes_mem_pool* pool, kes_image* out_image, kes_vpc_roi* out_paste_area) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vpc_letterbox");
        KES_REQUIRE_NOT_NULL(out_image);
        std::memset(out_image, 0, sizeof *out_image);
        if (out_paste_area) *out_paste_area = kes_vpc_roi{0, 0, 0, 0};
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(in);
        kes_vpc_letterbox_config cfg;
        kes_vpc_letterbox_config_init(&cfg);
        if (config)
            kes::read_struct(config, KES_STRUCT_SIZE_THROUGH(kes_vpc_letterbox_config, fill_v), "config",
                             "kes_vpc_letterbox_config", &cfg);
        const int64_t align = kes::enum_value(cfg.align);
        KES_REQUIRE(align == KES_VPC_LETTERBOX_CENTER || align == KES_VPC_LETTERBOX_TOP_LEFT,
                    "align must be KES_VPC_LETTERBOX_CENTER or _TOP_LEFT (got %lld)", static_cast<long long>(align));
        const kes_board_profile& b = channel->profile;
        const kes::vpc::Filter filter = kes::vpc::filter_arg(cfg.interp);
        const kes_vpc_roi r = kes::vpc::check_nv_crop(b, *in, crop, "input");
        KES_REQUIRE(out_width % 2 == 0 && out_height % 2 == 0, "letterbox output size must be even (got %ux%u)",
                    out_width, out_height);
        kes::vpc::check_output_size(b, out_width, out_height);
        const kes_vpc_roi area = kes::vpc::letterbox_area(b, kes::vpc::roi_width(r), kes::vpc::roi_height(r), out_width,
                                                          out_height, static_cast<kes_vpc_letterbox_align>(align));
        kes::vpc::check_nv_resize(b, r, kes::vpc::roi_width(area), kes::vpc::roi_height(area), "letterbox area");

        uint32_t ws = 0, hs = 0;
        kes::check_sdk(kes_image_strides(in->format, out_width, out_height, KES_STRIDE_VPC, b.board, &ws, &hs),
                       "VPC output strides");
        const uint8_t fill[3] = {cfg.fill_y, cfg.fill_u, cfg.fill_v};
        if (kes::served_by_hardware(channel, "VPC letterbox", [&](kes::AscendDvpp& hw) {
                return kes::vpc_letterbox_hw(hw, *in, r, cfg.interp, {out_width, out_height, ws, hs}, fill, area,
                                             kes::output_pool(channel, pool), out_image);
            })) {
            if (out_paste_area) *out_paste_area = area;
            return KES_OK;
        }
        kes::require_cpu_access(*in, "the input image");
        kes::check_sdk(
            kes_image_alloc(out_image, kes::output_pool(channel, pool), in->format, out_width, out_height, ws, hs),
            "VPC output allocation");
        kes::ImageGuard guard(out_image);
        kes::vpc::fill_nv(*out_image, cfg.fill_y, cfg.fill_u, cfg.fill_v);
        kes::vpc::resize_nv_region(*in, r, *out_image, area, filter);
        guard.disarm();
        if (out_paste_area) *out_paste_area = area;
        return KES_OK;
    });
}

kes_status kes_vpc_batch_crop(kes_dvpp_channel* channel, const kes_image* images, uint32_t image_count,
                              const kes_vpc_batch_roi* rois, uint32_t roi_count, kes_vpc_interp interp,
                              kes_mem_pool* pool, kes_image* out_images) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vpc_batch_crop");
        KES_REQUIRE(out_images != nullptr || roi_count == 0, "out_images is NULL");
        if (out_images) std::memset(out_images, 0, sizeof(kes_image) * roi_count);
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE(images != nullptr && image_count > 0, "images is NULL or image_count is 0");
        KES_REQUIRE(rois != nullptr && roi_count > 0, "rois is NULL or roi_count is 0");
        const kes_board_profile& b = channel->profile;
        KES_REQUIRE(roi_count <= b.vpc_max_batch_rois,
                    "%u ROIs in one batch exceed the %s profile's %u (BATCH_ROI_MAX_SIZE, docs/BOARD-RULES.md §VPC)",
                    roi_count, b.name, b.vpc_max_batch_rois);
        const kes::vpc::Filter filter = kes::vpc::filter_arg(interp);
        // Every rule is checked before anything is allocated: a batch succeeds or fails as a whole.
        std::vector<kes_vpc_roi> crops(roi_count);
        for (uint32_t i = 0; i < roi_count; ++i) {
            const kes_vpc_batch_roi& q = rois[i];
            KES_REQUIRE(q.image_index < image_count, "rois[%u].image_index %u is not below image_count %u", i,
                        q.image_index, image_count);
            const std::string what = kes::format("rois[%u]", i);
            crops[i] = kes::vpc::check_nv_crop(b, images[q.image_index], &q.roi, what.c_str());
            kes::vpc::check_nv_resize(b, crops[i], q.out_width, q.out_height, what.c_str());
        }
        std::vector<kes::VpcOutput> geometry(roi_count);
        for (uint32_t i = 0; i < roi_count; ++i) {
            const kes_vpc_batch_roi& q = rois[i];
            kes::VpcOutput& g = geometry[i];
            g.width = q.out_width;
            g.height = q.out_height;
            kes::check_sdk(kes_image_strides(images[q.image_index].format, q.out_width, q.out_height, KES_STRIDE_VPC,
                                             b.board, &g.width_stride, &g.height_stride),
                           "VPC output strides");
        }
        if (kes::served_by_hardware(channel, "VPC batch crop", [&](kes::AscendDvpp& hw) {
                return kes::vpc_batch_crop_hw(hw, images, rois, crops.data(), geometry.data(), roi_count, interp,
                                              kes::output_pool(channel, pool), out_images);
            }))
            return KES_OK;
        for (uint32_t i = 0; i < roi_count; ++i) kes::require_cpu_access(images[rois[i].image_index], "an input image");
        struct Releaser {
            kes_image* images;
            uint32_t n;
            ~Releaser() {
                for (uint32_t i = 0; images && i < n; ++i) kes_image_release(&images[i]);
            }
        } releaser{out_images, roi_count};
        for (uint32_t i = 0; i < roi_count; ++i) {
            const kes_vpc_batch_roi& q = rois[i];
            const kes_image& in = images[q.image_index];
            kes::check_sdk(kes_image_alloc(&out_images[i], kes::output_pool(channel, pool), in.format, q.out_width,
                                           q.out_height, geometry[i].width_stride, geometry[i].height_stride),
                           "VPC output allocation");
            kes::vpc::resize_nv_region(in, crops[i], out_images[i],
                                       kes_vpc_roi{0, 0, q.out_width - 1, q.out_height - 1}, filter);
        }
        releaser.images = nullptr;
        return KES_OK;
    });
}

}  // extern "C"
