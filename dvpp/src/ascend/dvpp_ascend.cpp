// dvpp_ascend.cpp — a channel's DVPP hardware, DVPP memory for inputs and outputs, the fallback log
// (dvpp_ascend.hpp is the design).
#include "dvpp_ascend.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kestrel/backend.h"

namespace kes {
namespace {

// How long a DVPP call may take before the stream sync gives up, when the runtime has
// aclrtSynchronizeStreamWithTimeout. Generous: a 310 decoding large rotated JPEGs on many channels at
// once is documented to be slow (BOARD-RULES §JPEGD); a hang is what must never happen.
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

const acl::DvppApi* dvpp_hardware_for(kes_backend requested, const kes_board_profile& board, const char* what) {
    const int64_t r = enum_value(requested);
    KES_REQUIRE(r == KES_BACKEND_AUTO || r == KES_BACKEND_CPU || r == KES_BACKEND_ASCEND,
                "config->backend %lld is not KES_BACKEND_AUTO, KES_BACKEND_CPU or KES_BACKEND_ASCEND",
                static_cast<long long>(r));
    if (requested == KES_BACKEND_CPU) return nullptr;
    const acl::DvppApi* dvpp = acl::dvpp();
    if (!dvpp) {
        // Only a channel that asked for the hardware fails. KES_BACKEND=ascend is about the runtime (the
        // NPU); when its DVPP library is missing the media work stays on the CPU, said once in the log.
        if (requested == KES_BACKEND_ASCEND)
            fail(KES_ERR_UNSUPPORTED, "the DVPP hardware was required for a %s but is unavailable: %s", what,
                 acl::dvpp_reason());
        if (kes_backend_get() == KES_BACKEND_ASCEND)
            note_fallback("media (every dvpp channel and decoder)", std::string("this runtime: ") + acl::dvpp_reason());
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
            fail(KES_ERR_INVALID_ARGUMENT, "the %s's board profile %s does not match the device's SoC %s", what,
                 board.name, soc.c_str());
        note_fallback(what, std::string("the ") + board.name + " board profile on a " + soc);
        return nullptr;
    }
    return dvpp;
}

std::unique_ptr<AscendDvpp> open_hardware(kes_backend requested, const kes_board_profile& board) {
    const acl::DvppApi* dvpp = dvpp_hardware_for(requested, board, "DVPP channel");
    return dvpp ? std::make_unique<AscendDvpp>(*dvpp, board) : nullptr;
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

size_t image_bytes(const kes_image& image) {
    size_t bytes = 0;
    const kes_status st = kes_image_buffer_size(image.format, image.width_stride, image.height_stride, &bytes);
    if (st != KES_OK) fail(st, "picture size: %s", kes_last_error());
    return bytes;
}

DvppPicture::DvppPicture(const acl::DvppApi& dvpp, const kes_image& img, Alignment align, bool load)
    : desc_(dvpp), image_(img), where_(kes_image_memory(&img)) {
    const uint32_t wa = std::max(1u, align.width), ha = std::max(1u, align.height);
    const bool aligned = img.width_stride % wa == 0 && img.height_stride % ha == 0;
    if (where_ == KES_MEM_DVPP && aligned) {
        desc_.describe(img.data, image_bytes(img), img.format, img.width, img.height, img.width_stride,
                       img.height_stride);
        return;
    }
    staged_ = true;
    if (aligned) {
        bytes_ = image_bytes(img);
        staging_.allocate(bytes_);
        if (load)
            copy(staging_.data(), img.data,
                 where_ == KES_MEM_HOST ? KES_MEMCPY_HOST_TO_DEVICE : KES_MEMCPY_DEVICE_TO_DEVICE);
        desc_.describe(staging_.data(), bytes_, img.format, img.width, img.height, img.width_stride, img.height_stride);
        return;
    }
    if (kes_mem_is_host_accessible(where_) == 0)
        fail(KES_ERR_UNSUPPORTED,
             "a %ux%u picture with strides %ux%u (not multiples of %ux%u) in memory the CPU cannot read cannot be "
             "re-strided for the DVPP hardware",
             img.width, img.height, img.width_stride, img.height_stride, wa, ha);
    restride_ = true;
    staged_layout_ = img;
    staged_layout_.width_stride = (img.width_stride + wa - 1) / wa * wa;
    staged_layout_.height_stride = (img.height_stride + ha - 1) / ha * ha;
    bytes_ = image_bytes(staged_layout_);
    staging_.allocate(bytes_);
    if (load) {
        std::vector<uint8_t> host(bytes_, 0);
        copy_rows(host.data(), true);
        staging_.upload(host.data(), bytes_);
    }
    desc_.describe(staging_.data(), bytes_, img.format, img.width, img.height, staged_layout_.width_stride,
                   staged_layout_.height_stride);
}

void DvppPicture::store() {
    if (!staged_) return;
    if (!restride_) {
        copy(image_.data, staging_.data(),
             where_ == KES_MEM_HOST ? KES_MEMCPY_DEVICE_TO_HOST : KES_MEMCPY_DEVICE_TO_DEVICE);
        return;
    }
    std::vector<uint8_t> host(bytes_);
    const kes_status st = kes_mem_copy(host.data(), bytes_, staging_.data(), bytes_, KES_MEMCPY_DEVICE_TO_HOST);
    if (st != KES_OK) fail(st, "copying a picture out of DVPP memory: %s", kes_last_error());
    copy_rows(host.data(), false);
}

void DvppPicture::copy(void* dst, const void* src, kes_memcpy_kind kind) {
    const kes_status st = kes_mem_copy(dst, bytes_, src, bytes_, kind);
    if (st != KES_OK) fail(st, "staging a picture for the DVPP hardware: %s", kes_last_error());
}

void DvppPicture::copy_rows(uint8_t* host, bool into_host) {
    kes_image view = staged_layout_;
    view.data = host;
    view.size = bytes_;
    for (uint32_t p = 0; p < kes_pixel_format_planes(image_.format); ++p) {
        kes_image_plane a, b;
        if (kes_image_get_plane(&image_, p, &a) != KES_OK || kes_image_get_plane(&view, p, &b) != KES_OK)
            fail(KES_ERR_INTERNAL, "plane %u of a picture to re-stride: %s", p, kes_last_error());
        for (uint32_t r = 0; r < a.rows; ++r) {
            uint8_t* img_row = a.data + size_t(r) * a.stride;
            uint8_t* host_row = b.data + size_t(r) * b.stride;
            if (into_host)
                std::memcpy(host_row, img_row, a.row_bytes);
            else
                std::memcpy(img_row, host_row, a.row_bytes);
        }
    }
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
