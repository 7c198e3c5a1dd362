// jpegd_ascend.cpp — JPEG decode on the DVPP hardware (acldvppJpegDecodeAsync, BOARD-RULES §JPEGD, §AscendCL).
// The board rules were applied by jpeg_decode.cpp's plan; this file only moves bytes and descriptors.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "dvpp_ascend.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"

namespace kes {

PicDesc::PicDesc(const acl::DvppApi& dvpp) : dvpp_(dvpp), desc_(dvpp.acldvppCreatePicDesc()) {
    if (!desc_) fail(KES_ERR_OUT_OF_MEMORY, "acldvppCreatePicDesc returned NULL");
}

PicDesc::~PicDesc() {
    dvpp_.acldvppDestroyPicDesc(desc_);
}

void PicDesc::describe_picture(const acl::DvppApi& dvpp, acl::DvppPicDesc* desc, void* data, size_t size,
                               kes_pixel_format format, uint32_t width, uint32_t height, uint32_t width_stride,
                               uint32_t height_stride) {
    KES_REQUIRE(size <= 0xFFFFFFFFu, "a %zu-byte picture exceeds DVPP's 32-bit sizes", size);
    acl::check("acldvppSetPicDescData", dvpp.acldvppSetPicDescData(desc, data));
    acl::check("acldvppSetPicDescSize", dvpp.acldvppSetPicDescSize(desc, static_cast<uint32_t>(size)));
    acl::check("acldvppSetPicDescFormat", dvpp.acldvppSetPicDescFormat(desc, dvpp_format(format)));
    acl::check("acldvppSetPicDescWidth", dvpp.acldvppSetPicDescWidth(desc, width));
    acl::check("acldvppSetPicDescHeight", dvpp.acldvppSetPicDescHeight(desc, height));
    acl::check("acldvppSetPicDescWidthStride", dvpp.acldvppSetPicDescWidthStride(desc, width_stride));
    acl::check("acldvppSetPicDescHeightStride", dvpp.acldvppSetPicDescHeightStride(desc, height_stride));
}

namespace {

std::string refused(const char* call, acl::Error code) {
    return std::string("this JPEG (") + call + ": " + std::to_string(code) + " " + acl::error_name(code) + ")";
}

}  // namespace

std::string jpeg_decode_hw(AscendDvpp& hw, const uint8_t* data, size_t size, const JpegdJob& job, kes_mem_pool* pool,
                           kes_image* out) {
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
    const uint32_t size32 = static_cast<uint32_t>(size);  // plan_decode refused more than 4 GiB

    // The hardware's own size rule (align128 × align16 × 3/2 for 4:2:0, BOARD-RULES §JPEGD) can exceed the board
    // stride the plan used (64 on 310B): give it whichever is larger.
    uint32_t predicted = 0;
    acl::Error e = d.acldvppJpegPredictDecSize(data, size32, dvpp_format(job.format), &predicted);
    if (e == acl::kUnsupportedJpeg) return refused("acldvppJpegPredictDecSize", e);
    acl::check("acldvppJpegPredictDecSize", e);

    DvppBuffer input(size);
    input.upload(data, size);
    OutputImage output(pool, std::max<size_t>(predicted, job.bytes));
    PicDesc pic(d);
    pic.describe(output.device_data(), output.device_size(), job.format, job.width, job.height, job.width_stride,
                 job.height_stride);
    e = d.acldvppJpegDecodeAsync(hw.channel(), input.data(), size32, pic.get(), hw.stream());
    if (e == acl::kUnsupportedJpeg) return refused("acldvppJpegDecodeAsync", e);
    acl::check("acldvppJpegDecodeAsync", e);
    hw.sync("acldvppJpegDecodeAsync");
    const uint32_t ret = d.acldvppGetPicDescRetCode(pic.get());
    if (ret == static_cast<uint32_t>(acl::kUnsupportedJpeg)) return refused("JPEGD ret code", acl::kUnsupportedJpeg);
    if (ret != 0)
        fail(KES_ERR_CORRUPT_DATA, "JPEGD hardware failed on this JPEG: ret code %u in the output picture", ret);

    // The decoder reports what it wrote (310B rounds odd 4:2:0 sizes down): trust it, and say so once
    // when it differs from the documented rule the plan followed — a fact to settle on a real board.
    const uint32_t w = d.acldvppGetPicDescWidth(pic.get()), h = d.acldvppGetPicDescHeight(pic.get());
    const uint32_t ws = d.acldvppGetPicDescWidthStride(pic.get()), hs = d.acldvppGetPicDescHeightStride(pic.get());
    size_t bytes = job.bytes;
    if (w != job.width || h != job.height || ws != job.width_stride || hs != job.height_stride) {
        const kes_status st = kes_image_buffer_size(job.format, ws, hs, &bytes);
        KES_REQUIRE(st == KES_OK && bytes <= output.device_size() && w <= ws && h <= hs && w > 0 && h > 0,
                    "JPEGD hardware reported a %ux%u picture with strides %ux%u that does not fit its %zu-byte "
                    "buffer",
                    w, h, ws, hs, output.device_size());
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true))
            KES_LOGW("dvpp",
                     "JPEGD hardware wrote %ux%u (strides %ux%u) where the documented rules give %ux%u (%ux%u); "
                     "using the hardware's geometry",
                     w, h, ws, hs, job.width, job.height, job.width_stride, job.height_stride);
    }
    output.finish(out, job.format, w, h, ws, hs, bytes);
    return "";
}

}  // namespace kes
