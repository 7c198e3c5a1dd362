// jpege_ascend.cpp — JPEG encode on the DVPP hardware (acldvppJpegEncodeAsync, BOARD-RULES §JPEGE, §AscendCL).
// jpeg_encode.cpp checked the input rules (formats, even sizes, size limits, the width-stride rule).
#include <algorithm>
#include <cstring>

#include "dvpp_ascend.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"

namespace kes {
namespace {

class JpegeConfig {
public:
    explicit JpegeConfig(const acl::DvppApi& dvpp) : dvpp_(dvpp), config_(dvpp.acldvppCreateJpegeConfig()) {
        if (!config_) fail(KES_ERR_OUT_OF_MEMORY, "acldvppCreateJpegeConfig returned NULL");
    }
    ~JpegeConfig() { dvpp_.acldvppDestroyJpegeConfig(config_); }
    JpegeConfig(const JpegeConfig&) = delete;
    JpegeConfig& operator=(const JpegeConfig&) = delete;
    acl::DvppJpegeConfig* get() const noexcept { return config_; }

private:
    const acl::DvppApi& dvpp_;
    acl::DvppJpegeConfig* config_;
};

}  // namespace

std::string jpeg_encode_hw(AscendDvpp& hw, const kes_image& image, uint32_t quality, void* out, size_t capacity,
                           size_t* out_size) {
    const int64_t f = enum_value(image.format);
    if (f != KES_PIXEL_NV12 && f != KES_PIXEL_NV21)
        return std::string(kes_pixel_format_name(image.format)) + " input (the hardware path takes NV12/NV21)";
    const acl::DvppApi& d = hw.api();
    acl::ScopedContext bind;
    // The caller checked the stride rule; the input only moves into DVPP memory if it is elsewhere.
    DvppPicture pic(d, image, {1, 1}, true);
    JpegeConfig config(d);
    // quality 1..100 is the level as is: mxVision documents [0, 100] for the same unit (UNCONFIRMED for
    // acldvpp; level 0, said to equal 100 there, is never used).
    acl::check("acldvppSetJpegeConfigLevel", d.acldvppSetJpegeConfigLevel(config.get(), quality));
    uint32_t predicted = 0;
    acl::check("acldvppJpegPredictEncSize", d.acldvppJpegPredictEncSize(pic.get(), config.get(), &predicted));
    DvppBuffer jpeg(predicted);
    uint32_t written = predicted;  // in: capacity; out (after the sync): bytes written
    acl::check("acldvppJpegEncodeAsync",
               d.acldvppJpegEncodeAsync(hw.channel(), pic.get(), jpeg.data(), &written, config.get(), hw.stream()));
    hw.sync("acldvppJpegEncodeAsync");
    KES_REQUIRE(written > 0 && written <= predicted, "JPEGE hardware reported %u bytes for a %u-byte buffer", written,
                predicted);
    KES_REQUIRE(written <= capacity,
                "output buffer of %zu bytes is too small for the %u-byte JPEG (kes_jpeg_predict_encode_size gives a "
                "size that always fits)",
                capacity, written);
    const kes_status st = kes_mem_copy(out, capacity, jpeg.data(), written, KES_MEMCPY_DEVICE_TO_HOST);
    if (st != KES_OK) fail(st, "copying the JPEG out of DVPP memory: %s", kes_last_error());
    *out_size = written;
    return "";
}

}  // namespace kes
