// dvpp_ascend.cpp — a channel's DVPP hardware, DVPP memory for inputs and outputs, the fallback log
// (dvpp_ascend.hpp is the design).
#include "dvpp_ascend.hpp"

#include <cstring>
#include <mutex>
#include <set>

#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kestrel/backend.h"

namespace kes {
namespace {

// How long a DVPP call may take before the stream sync gives up, when the runtime has
// aclrtSynchronizeStreamWithTimeout. Generous: a 310 decoding large rotated JPEGs on many channels at
// once is documented to be slow (ascend-semantics.md §2.4); a hang is what must never happen.
constexpr int32_t kSyncTimeoutMs = 30000;

}  // namespace

AscendDvpp::AscendDvpp(const acl::DvppApi& dvpp, const kes_board_profile& board) : dvpp_(dvpp), board_(board) {
    const acl::Api& rt = acl::require();
    acl::ScopedContext bind;
    acl::check("aclrtCreateStream", rt.aclrtCreateStream(&stream_));
    channel_ = dvpp_.acldvppCreateChannelDesc();
    if (!channel_) {
        rt.aclrtDestroyStream(stream_);
        fail(KES_ERR_OUT_OF_MEMORY, "acldvppCreateChannelDesc returned NULL");
    }
    const acl::Error e = dvpp_.acldvppCreateChannel(channel_);
    if (e != acl::kSuccess) {
        dvpp_.acldvppDestroyChannelDesc(channel_);
        rt.aclrtDestroyStream(stream_);
        if (e == acl::kRtResourceAllocFail) {
            const std::string soc = acl::runtime_info().soc_name;
            fail(KES_ERR_BUSY,
                 "every DVPP channel of the %s is in use (acldvppCreateChannel: %d "
                 "ACL_ERROR_RT_RESOURCE_ALLOC_FAIL): destroy a kes_dvpp_channel, or create this one with "
                 "backend KES_BACKEND_CPU",
                 soc.empty() ? "device" : soc.c_str(), static_cast<int>(e));
        }
        acl::fail_call("acldvppCreateChannel", e);
    }
}

AscendDvpp::~AscendDvpp() {
    try {
        const acl::Api* rt = acl::api();
        if (!rt) return;  // the runtime was shut down under us: nothing left to release through it
        acl::ScopedContext bind;
        // Nothing may still write into buffers about to be freed, and a stream with work pending cannot be
        // destroyed: after a timed-out call, wait again (bounded: a device that never finishes is reported).
        acl::Error e = acl::kSuccess;
        for (int attempt = 0; attempt < 3; ++attempt) {
            e = rt->aclrtSynchronizeStream(stream_);
            if (e == acl::kSuccess) break;
        }
        if (e != acl::kSuccess) KES_LOGE("dvpp", "%s", acl::describe("aclrtSynchronizeStream", e).c_str());
        e = dvpp_.acldvppDestroyChannel(channel_);
        if (e != acl::kSuccess) KES_LOGE("dvpp", "%s", acl::describe("acldvppDestroyChannel", e).c_str());
        dvpp_.acldvppDestroyChannelDesc(channel_);
        e = rt->aclrtDestroyStream(stream_);
        if (e != acl::kSuccess) KES_LOGE("dvpp", "%s", acl::describe("aclrtDestroyStream", e).c_str());
    } catch (const std::exception& ex) {
        KES_LOGE("dvpp", "releasing the hardware DVPP channel: %s", ex.what());
    }
}

void AscendDvpp::sync(const char* what) const {
    const acl::Api& rt = acl::require();
    const acl::Error e = rt.aclrtSynchronizeStreamWithTimeout
                             ? rt.aclrtSynchronizeStreamWithTimeout(stream_, kSyncTimeoutMs)
                             : rt.aclrtSynchronizeStream(stream_);
    if (e != acl::kSuccess) {
        const std::string call = std::string(what) + " (stream sync)";
        acl::fail_call(call.c_str(), e);
    }
}

std::unique_ptr<AscendDvpp> open_hardware(kes_backend requested, const kes_board_profile& board) {
    const int64_t r = enum_value(requested);
    KES_REQUIRE(r == KES_BACKEND_AUTO || r == KES_BACKEND_CPU || r == KES_BACKEND_ASCEND,
                "config->backend %lld is not KES_BACKEND_AUTO, KES_BACKEND_CPU or KES_BACKEND_ASCEND",
                static_cast<long long>(r));
    if (requested == KES_BACKEND_CPU) return nullptr;
    const acl::DvppApi* dvpp = acl::dvpp();
    if (!dvpp) {
        // The process asked for Ascend or nothing (KES_BACKEND=ascend), or this channel did.
        if (requested == KES_BACKEND_ASCEND || kes_backend_get() == KES_BACKEND_ASCEND)
            fail(KES_ERR_UNSUPPORTED, "the DVPP hardware was required but is unavailable: %s", acl::dvpp_reason());
        return nullptr;
    }
    // The hardware follows its SoC's rules; a channel planning by another board's would see its calls
    // refused, so it stays on the CPU (a test profile on a board, say).
    const std::string& soc = acl::runtime_info().soc_name;
    const int soc_board = soc == "Ascend310"                      ? KES_BOARD_310
                          : soc.compare(0, 10, "Ascend310B") == 0 ? KES_BOARD_310B
                                                                  : -1;
    if (soc_board >= 0 && soc_board != static_cast<int>(board.board)) {
        if (requested == KES_BACKEND_ASCEND)
            fail(KES_ERR_INVALID_ARGUMENT, "the channel's board profile %s does not match the device's SoC %s",
                 board.name, soc.c_str());
        KES_LOGW("dvpp", "a channel with the %s board profile stays on the CPU: the device is a %s", board.name,
                 soc.c_str());
        return nullptr;
    }
    return std::make_unique<AscendDvpp>(*dvpp, board);
}

void note_fallback(const char* what, const std::string& cause) {
    static std::mutex mutex;
    static std::set<std::string> seen;
    std::lock_guard<std::mutex> lock(mutex);
    try {
        if (!seen.insert(std::string(what) + ": " + cause).second) return;
    } catch (...) {
        return;  // out of memory while logging: say nothing rather than fail the call
    }
    KES_LOGI("dvpp", "%s runs on the CPU: the DVPP hardware does not take %s (logged once per cause)", what,
             cause.c_str());
}

void DvppBuffer::allocate(size_t size) {
    KES_REQUIRE(data_ == nullptr, "internal: DvppBuffer allocated twice");
    size_ = size;
    void* p = nullptr;
    const kes_status st = kes_mem_alloc(KES_MEM_DVPP, size, &p);
    if (st != KES_OK) fail(st, "DVPP memory for %zu bytes: %s", size, kes_last_error());
    data_ = p;
}

DvppBuffer::~DvppBuffer() {
    if (data_) kes_mem_free(data_);
}

void* DvppBuffer::release() noexcept {
    void* p = data_;
    data_ = nullptr;
    return p;
}

void DvppBuffer::upload(const void* src, size_t count) {
    const kes_status st = kes_mem_copy(data_, size_, src, count, KES_MEMCPY_HOST_TO_DEVICE);
    if (st != KES_OK) fail(st, "copying %zu bytes into DVPP memory: %s", count, kes_last_error());
}

OutputImage::OutputImage(kes_mem_pool* pool, size_t bytes) : pool_(pool) {
    if (pool && kes_mem_pool_backend(pool) == KES_MEM_DVPP) {
        const kes_status st = kes_mem_pool_alloc(pool, bytes, &device_);
        if (st != KES_OK) fail(st, "output image of %zu bytes: %s", bytes, kes_last_error());
        direct_ = true;
        device_size_ = bytes;
        return;
    }
    staging_.allocate(bytes);
    device_ = staging_.data();
    device_size_ = bytes;
}

OutputImage::~OutputImage() {
    if (direct_ && device_) kes_mem_pool_free(pool_, device_);
}

void OutputImage::finish(kes_image* out, kes_pixel_format format, uint32_t width, uint32_t height,
                         uint32_t width_stride, uint32_t height_stride, size_t image_bytes) {
    KES_REQUIRE(image_bytes <= device_size_, "internal: a %zu-byte image in a %zu-byte DVPP buffer", image_bytes,
                device_size_);
    kes_image img;
    std::memset(&img, 0, sizeof img);
    img.format = format;
    img.width = width;
    img.height = height;
    img.width_stride = width_stride;
    img.height_stride = height_stride;
    img.owns_data = 1;
    if (direct_) {
        img.data = device_;
        img.size = device_size_;
        img.pool = pool_;
        device_ = nullptr;  // the image owns it now
    } else if (!pool_) {
        img.size = staging_.size();
        img.data = staging_.release();
    } else {
        void* dst = nullptr;
        kes_status st = kes_mem_pool_alloc(pool_, image_bytes, &dst);
        if (st != KES_OK) fail(st, "output image of %zu bytes: %s", image_bytes, kes_last_error());
        const kes_memcpy_kind kind =
            kes_mem_pool_backend(pool_) == KES_MEM_HOST ? KES_MEMCPY_DEVICE_TO_HOST : KES_MEMCPY_DEVICE_TO_DEVICE;
        st = kes_mem_copy(dst, image_bytes, staging_.data(), image_bytes, kind);
        if (st != KES_OK) {
            const std::string why = kes_last_error();
            kes_mem_pool_free(pool_, dst);
            fail(st, "copying the output image out of DVPP memory: %s", why.c_str());
        }
        img.data = dst;
        img.size = image_bytes;
        img.pool = pool_;
    }
    *out = img;
}

int32_t dvpp_format(kes_pixel_format format) noexcept {
    // Kestrel's values are acldvppPixelFormat's for every format both have (image.h).
    switch (format) {
        case KES_PIXEL_YUV400:
        case KES_PIXEL_NV12:
        case KES_PIXEL_NV21:
        case KES_PIXEL_YUV422SP:
        case KES_PIXEL_YVU422SP:
        case KES_PIXEL_YUV444SP:
        case KES_PIXEL_YVU444SP:
        case KES_PIXEL_RGB888:
        case KES_PIXEL_BGR888:
        case KES_PIXEL_YUV440SP:
        case KES_PIXEL_YVU440SP: return static_cast<int32_t>(format);
        default: return acl::kDvppUnknown;
    }
}

}  // namespace kes
