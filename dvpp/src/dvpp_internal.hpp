// dvpp_internal.hpp — the channel object and helpers shared by the dvpp sources (not installed).
#pragma once

#include <turbojpeg.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ascend/dvpp_ascend.hpp"
#include "kestrel/dvpp.h"
#include "kestrel/trace.h"

namespace kes {

struct TjDeleter {
    void operator()(void* handle) const noexcept {
        if (handle) tjDestroy(handle);
    }
};
using TjHandle = std::unique_ptr<void, TjDeleter>;

// Frees a buffer TurboJPEG allocated (tjCompress* output).
struct TjFreeDeleter {
    void operator()(unsigned char* p) const noexcept { tjFree(p); }
};
using TjBuffer = std::unique_ptr<unsigned char, TjFreeDeleter>;

// Releases an image unless disarmed: outputs are zeroed on every failure path.
class ImageGuard {
public:
    explicit ImageGuard(kes_image* image) noexcept : image_(image) {}
    ~ImageGuard() {
        if (image_) kes_image_release(image_);
    }
    void disarm() noexcept { image_ = nullptr; }
    ImageGuard(const ImageGuard&) = delete;
    ImageGuard& operator=(const ImageGuard&) = delete;

private:
    kes_image* image_;
};

}  // namespace kes

struct kes_dvpp_channel {
    kes_board_profile profile;  // captured at creation (board.h: objects keep their profile)
    kes_mem_pool* pool = nullptr;
    bool strict = false;
    bool accept_warnings = false;
    bool apply_orientation = true;
    uint64_t max_pixels = 0;  // 0: board limits only
    kes::TjHandle decoder;    // created lazily: a PNG-only channel never needs them
    kes::TjHandle encoder;
    std::unique_ptr<kes::AscendDvpp> hardware;                  // the DVPP hardware serving this channel, or null (CPU)
    uint64_t hardware_calls = 0, cpu_calls = 0, fallbacks = 0;  // kes_dvpp_channel_get_stats
};

namespace kes {

// Refuses width × height beyond the channel's max_pixels (dvpp.h).
void check_max_pixels(const kes_dvpp_channel* ch, uint32_t w, uint32_t h, const char* what);

// The channel's pool unless the call passed one.
inline kes_mem_pool* output_pool(const kes_dvpp_channel* ch, kes_mem_pool* pool) noexcept {
    return pool ? pool : ch->pool;
}

// A pixel-format argument read without loading the enum (kes::enum_value: C lets any int through,
// and an out-of-range enum load is UB in C++); refuses values outside kes_pixel_format.
kes_pixel_format format_arg(const kes_pixel_format& format, const char* name);

// Throws the status of a failed sdk call with its last-error text appended to `what`.
void check_sdk(kes_status st, const char* what);

// The hardware seam of every call (ascend/dvpp_ascend.hpp): runs hw_call(AscendDvpp&) -> std::string when
// the channel owns the DVPP hardware and counts the outcome. Returns true when the hardware served; false
// when the CPU must (no hardware, or hw_call returned why the hardware refused: logged once per cause).
template <class HwCall>
bool served_by_hardware(kes_dvpp_channel* ch, const char* what, HwCall&& hw_call) {
    if (ch->hardware) {
        const std::string refusal = hw_call(*ch->hardware);
        if (refusal.empty()) {
            ++ch->hardware_calls;
            return true;
        }
        note_fallback(what, refusal);
        ++ch->fallbacks;
    }
    ++ch->cpu_calls;
    return false;
}

// Refuses (KES_ERR_UNSUPPORTED) an image the CPU path cannot read: DVPP or device memory of a PCIe card
// (ACL_HOST run mode), e.g. a hardware decode's output given to a call the hardware then refused.
void require_cpu_access(const kes_image& image, const char* what);

}  // namespace kes
