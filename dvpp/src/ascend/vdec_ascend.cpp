// vdec_ascend.cpp — H.264/H.265 decode on the DVPP hardware (aclvdec*, BOARD-RULES §VDEC, §AscendCL): one aclvdec
// channel, its report thread, and the per-frame objects (dvpp_ascend.hpp, "VDEC on the hardware", is the
// design). video_decode.cpp demuxes, chooses the path and keeps the stream's bookkeeping; this file only
// moves access units, pictures and descriptors.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include "dvpp_ascend.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kestrel/backend.h"

namespace kes {

struct VdecJob {
    VdecJob(const acl::DvppApi& d, VdecHardware* o, kes_pixel_format f, kes_mem_pool* pool, size_t in_bytes,
            size_t out_bytes)
        : dvpp(d), owner(o), format(f), input(in_bytes), output(pool, out_bytes), pic(d) {}
    ~VdecJob() {
        if (stream) dvpp.acldvppDestroyStreamDesc(stream);
    }
    VdecJob(const VdecJob&) = delete;
    VdecJob& operator=(const VdecJob&) = delete;

    const acl::DvppApi& dvpp;
    VdecHardware* const owner;
    const kes_pixel_format format;
    VdecFrameMeta meta;
    uint32_t plan_width_stride = 0, plan_height_stride = 0;  // kes_image_strides KES_STRIDE_VDEC
    DvppBuffer input;
    OutputImage output;
    PicDesc pic;
    acl::DvppStreamDesc* stream = nullptr;
    // Written by the callback, under the owner's mutex.
    bool done = false;
    uint32_t stream_ret = 0, pic_ret = 0;
    uint32_t width = 0, height = 0, width_stride = 0, height_stride = 0;
};

namespace {

// aclrtProcessReport's wait: short, so that stopping the thread at destroy costs at most this.
constexpr int32_t kReportTimeoutMs = 50;
// A report loop that fails (not subscribed yet or any more, a runtime error) sleeps before trying again.
constexpr auto kReportRetryDelay = std::chrono::milliseconds(10);
constexpr acl::Error kRtReportTimeout = 507012;     // ACL_ERROR_RT_REPORT_TIMEOUT: no report in time
constexpr acl::Error kThreadNotSubscribe = 100035;  // ACL_ERROR_THREAD_NOT_SUBSCRIBE
// VDEC V1 channel ids 0..31 on 310 and 310B (BOARD-RULES §VDEC, V100_CHANNEL_ID_CEILING = 31).
constexpr uint32_t kVdecChannelIds = 32;

// The process's VDEC channel ids: bit i set while a Kestrel decoder holds id i.
std::mutex g_id_mutex;
uint32_t g_ids_in_use = 0;

bool reserve_id(uint32_t id) {
    std::lock_guard<std::mutex> lock(g_id_mutex);
    if (g_ids_in_use & (1u << id)) return false;
    g_ids_in_use |= 1u << id;
    return true;
}

void release_id(uint32_t id) {
    std::lock_guard<std::mutex> lock(g_id_mutex);
    g_ids_in_use &= ~(1u << id);
}

void vdec_callback(acl::DvppStreamDesc* input, acl::DvppPicDesc* output, void* user_data) {
    // The EOS frame has no user data (and, on CANN, no callback); every other frame's job outlives its
    // callback (dvpp_ascend.hpp).
    if (!user_data) return;
    VdecJob* job = static_cast<VdecJob*>(user_data);
    job->owner->complete(job, input, output);
}

}  // namespace

// ---- pictures ---------------------------------------------------------------------------------------

VdecPicture::VdecPicture() noexcept = default;
VdecPicture::VdecPicture(std::unique_ptr<VdecJob> job) noexcept : job_(std::move(job)) {}
VdecPicture::VdecPicture(VdecPicture&&) noexcept = default;

VdecPicture& VdecPicture::operator=(VdecPicture&& other) noexcept {
    if (this != &other) {
        VdecPicture old(std::move(*this));
        job_ = std::move(other.job_);
    }
    return *this;
}

VdecPicture::~VdecPicture() {
    if (!job_) return;
    if (!acl::api()) {
        job_.release();  // the runtime is gone: its functions may be unloaded (a leak, never a crash)
        return;
    }
    // Descriptors are destroyed with Kestrel's context current (the app's thread may have none).
    try {
        acl::ScopedContext bind;
        job_.reset();
    } catch (const std::exception& e) {
        KES_LOGE("dvpp", "VDEC: releasing a picture: %s", e.what());
        job_.reset();
    }
}

const VdecFrameMeta& VdecPicture::meta() const noexcept {
    return job_->meta;
}

uint32_t VdecPicture::ret_code() const noexcept {
    return job_->pic_ret ? job_->pic_ret : job_->stream_ret;
}

uint32_t VdecPicture::width() const noexcept {
    return job_->width;
}

uint32_t VdecPicture::height() const noexcept {
    return job_->height;
}

void VdecPicture::to_image(kes_image* out) {
    VdecJob& j = *job_;
    const uint32_t w = j.width, h = j.height, ws = j.width_stride, hs = j.height_stride;
    size_t bytes = 0;
    const kes_status st = kes_image_buffer_size(j.format, ws, hs, &bytes);
    KES_REQUIRE(st == KES_OK && w > 0 && h > 0 && w <= ws && h <= hs && bytes <= j.output.device_size(),
                "VDEC hardware reported a %ux%u picture with strides %ux%u that does not fit its %zu-byte buffer", w, h,
                ws, hs, j.output.device_size());
    if (ws != j.plan_width_stride || hs != j.plan_height_stride) {
        // The documented rule (align16 × align2, BOARD-RULES §VDEC) is what kes_image_strides says; the hardware's
        // own report wins, said once: a fact to settle on a real board.
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true))
            KES_LOGW("dvpp",
                     "VDEC hardware wrote a %ux%u picture with strides %ux%u where KES_STRIDE_VDEC gives %ux%u; "
                     "using the hardware's strides",
                     w, h, ws, hs, j.plan_width_stride, j.plan_height_stride);
    }
    acl::ScopedContext bind;
    j.output.finish(out, j.format, w, h, ws, hs, bytes);
}

// ---- the channel -------------------------------------------------------------------------------------

VdecHardware::VdecHardware(const acl::DvppApi& dvpp, const kes_board_profile& board, int32_t stream_format,
                           kes_pixel_format format, kes_mem_pool* pool)
    : dvpp_(dvpp), board_(board), format_(format), pool_(pool) {
    try {
        acl::ScopedContext bind;
        frame_config_ = dvpp_.aclvdecCreateFrameConfig();
        if (!frame_config_) fail(KES_ERR_OUT_OF_MEMORY, "aclvdecCreateFrameConfig returned NULL");
        desc_ = dvpp_.aclvdecCreateChannelDesc();
        if (!desc_) fail(KES_ERR_OUT_OF_MEMORY, "aclvdecCreateChannelDesc returned NULL");
        // The report thread exists first (the channel takes its id) and waits until the channel does: a
        // loop started earlier would only get 100035 (subscribed to nothing).
        reporter_ = std::thread([this] { run_reports(); });
        const uint64_t thread_id = static_cast<uint64_t>(reporter_.native_handle());  // its pthread_self()
        acl::check("aclvdecSetChannelDescThreadId", dvpp_.aclvdecSetChannelDescThreadId(desc_, thread_id));
        acl::check("aclvdecSetChannelDescCallback", dvpp_.aclvdecSetChannelDescCallback(desc_, &vdec_callback));
        acl::check("aclvdecSetChannelDescEnType", dvpp_.aclvdecSetChannelDescEnType(desc_, stream_format));
        acl::check("aclvdecSetChannelDescOutPicFormat",
                   dvpp_.aclvdecSetChannelDescOutPicFormat(desc_, dvpp_format(format)));
        acl::Error refused = acl::kSuccess;  // what the runtime said about the last id tried
        uint32_t ours = 0;                   // ids this process's decoders hold
        for (uint32_t id = 0; id < kVdecChannelIds && !created_; ++id) {
            if (!reserve_id(id)) {
                ++ours;
                continue;
            }
            id_ = id;
            id_reserved_ = true;
            acl::check("aclvdecSetChannelDescChannelId", dvpp_.aclvdecSetChannelDescChannelId(desc_, id));
            const acl::Error e = dvpp_.aclvdecCreateChannel(desc_);
            if (e == acl::kSuccess) {
                created_ = true;
                break;
            }
            release_id(id);
            id_reserved_ = false;
            // Taken outside Kestrel (another library in this process): try the next id.
            if (e == acl::kRtResourceAllocFail) {
                refused = e;
                continue;
            }
            acl::fail_call("aclvdecCreateChannel", e);
        }
        if (!created_) {
            const std::string soc = acl::runtime_info().soc_name;
            fail(KES_ERR_BUSY,
                 "every VDEC channel id 0..%u of the %s is in use (%u by this process's kes_vdec channels%s): "
                 "destroy a kes_vdec, or create this one with backend KES_BACKEND_CPU",
                 kVdecChannelIds - 1, soc.empty() ? "device" : soc.c_str(), ours,
                 refused ? ", the others refused by aclvdecCreateChannel with 207005 ACL_ERROR_RT_RESOURCE_ALLOC_FAIL"
                         : "");
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            reports_ = Reports::kRunning;
        }
        cv_.notify_all();
    } catch (...) {
        release();
        throw;
    }
}

VdecHardware::~VdecHardware() {
    release();
}

void VdecHardware::release() noexcept {
    const acl::Api* rt = acl::api();
    if (!rt) {
        // The runtime is gone (its functions may be unloaded): nothing can be released through it, and no
        // callback can come any more. Only the thread is ours to end.
        for (auto& job : jobs_) job.release();
        for (auto& job : parked_) job.release();
        jobs_.clear();
        parked_.clear();
        created_ = false;
        desc_ = nullptr;
        frame_config_ = nullptr;
    }
    std::unique_ptr<acl::ScopedContext> bind;
    if (rt) {
        try {
            bind = std::make_unique<acl::ScopedContext>();
        } catch (const std::exception& e) {
            KES_LOGE("dvpp", "VDEC channel %u: %s", id_, e.what());
        }
    }
    // aclvdecDestroyChannel flushes the channel and returns once every callback ran: the report thread
    // keeps looping until then.
    bool callbacks_over = true;
    if (created_) {
        const acl::Error e = rt ? dvpp_.aclvdecDestroyChannel(desc_) : acl::kUninitialize;
        if (e != acl::kSuccess) {
            callbacks_over = false;
            KES_LOGE("dvpp", "VDEC channel %u: %s", id_, acl::describe("aclvdecDestroyChannel", e).c_str());
        }
        created_ = false;
    }
    if (reporter_.joinable()) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            reports_ = Reports::kStopping;
        }
        cv_.notify_all();
        reporter_.join();
    }
    // A frame whose callback may still come (the channel could not be destroyed) is left allocated:
    // a leak the runtime's ledger reports, never a callback writing into freed memory.
    size_t abandoned = 0;
    auto drop = [&](std::unique_ptr<VdecJob>& job) {
        if (!job) return;
        if (callbacks_over || job->done) {
            job.reset();
        } else {
            job.release();
            ++abandoned;
        }
    };
    try {
        for (auto& job : jobs_) drop(job);
        for (auto& job : parked_) drop(job);
    } catch (...) {
    }
    jobs_.clear();
    parked_.clear();
    if (abandoned)
        KES_LOGE("dvpp", "VDEC channel %u: %zu frames left allocated: the channel could not be destroyed", id_,
                 abandoned);
    if (rt && callbacks_over && desc_) dvpp_.aclvdecDestroyChannelDesc(desc_);
    desc_ = nullptr;
    if (rt && frame_config_) dvpp_.aclvdecDestroyFrameConfig(frame_config_);
    frame_config_ = nullptr;
    if (id_reserved_) release_id(id_);
    id_reserved_ = false;
}

void VdecHardware::run_reports() noexcept {
    std::unique_ptr<acl::ScopedContext> bind;
    try {
        bind = std::make_unique<acl::ScopedContext>();
    } catch (const std::exception& e) {
        KES_LOGE("dvpp", "VDEC report thread: %s", e.what());
    }
    {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return reports_ != Reports::kWaiting; });
    }
    bool logged = false;
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (reports_ == Reports::kStopping) return;
        }
        const acl::Error e = dvpp_.aclrtProcessReport(kReportTimeoutMs);
        if (e == acl::kSuccess || e == kRtReportTimeout) continue;
        // 100035 after aclvdecDestroyChannel unsubscribed the thread, or a failing runtime: never spin.
        if (e != kThreadNotSubscribe && !logged) {
            logged = true;
            KES_LOGE("dvpp", "VDEC channel report thread: %s", acl::describe("aclrtProcessReport", e).c_str());
        }
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait_for(lock, kReportRetryDelay, [this] { return reports_ == Reports::kStopping; });
    }
}

void VdecHardware::complete(VdecJob* job, acl::DvppStreamDesc* input, acl::DvppPicDesc* output) noexcept {
    const uint32_t stream_ret = input ? dvpp_.acldvppGetStreamDescRetCode(input) : 0;
    uint32_t pic_ret = 0, w = 0, h = 0, ws = 0, hs = 0;
    if (output) {
        pic_ret = dvpp_.acldvppGetPicDescRetCode(output);
        w = dvpp_.acldvppGetPicDescWidth(output);
        h = dvpp_.acldvppGetPicDescHeight(output);
        ws = dvpp_.acldvppGetPicDescWidthStride(output);
        hs = dvpp_.acldvppGetPicDescHeightStride(output);
    } else if (!stream_ret) {
        pic_ret = 1;  // no picture description back: no picture
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job->stream_ret = stream_ret;
        job->pic_ret = pic_ret;
        job->width = w;
        job->height = h;
        job->width_stride = ws;
        job->height_stride = hs;
        job->done = true;
    }
    cv_.notify_all();
}

void VdecHardware::send(const uint8_t* data, size_t size, uint32_t width, uint32_t height, const VdecFrameMeta& meta) {
    KES_REQUIRE(size > 0 && size <= 0xFFFFFFFFu, "a %zu-byte access unit is outside VDEC's 32-bit sizes", size);
    KES_REQUIRE(created_, "internal: the VDEC channel is not open");
    // VDEC writes even sizes (BOARD-RULES §VDEC); the buffer is planned for the stream as parsed.
    const uint32_t ow = std::max(width & ~1u, 2u), oh = std::max(height & ~1u, 2u);
    uint32_t ws = 0, hs = 0;
    size_t bytes = 0;
    kes_status st = kes_image_strides(format_, ow, oh, KES_STRIDE_VDEC, board_.board, &ws, &hs);
    if (st == KES_OK) st = kes_image_buffer_size(format_, ws, hs, &bytes);
    if (st != KES_OK) fail(st, "VDEC output of a %ux%u stream: %s", width, height, kes_last_error());

    acl::ScopedContext bind;
    auto job = std::make_unique<VdecJob>(dvpp_, this, format_, pool_, size, bytes);  // throws: nothing sent
    job->meta = meta;
    job->plan_width_stride = ws;
    job->plan_height_stride = hs;
    job->input.upload(data, size);
    job->stream = dvpp_.acldvppCreateStreamDesc();
    if (!job->stream) fail(KES_ERR_OUT_OF_MEMORY, "acldvppCreateStreamDesc returned NULL");
    acl::check("acldvppSetStreamDescData", dvpp_.acldvppSetStreamDescData(job->stream, job->input.data()));
    acl::check("acldvppSetStreamDescSize", dvpp_.acldvppSetStreamDescSize(job->stream, static_cast<uint32_t>(size)));
    acl::check("acldvppSetStreamDescTimestamp", dvpp_.acldvppSetStreamDescTimestamp(job->stream, meta.ordinal));
    // The output description carries the buffer and the format; VDEC fills in the geometry (CANN samples).
    PicDesc& pic = job->pic;
    acl::check("acldvppSetPicDescData", dvpp_.acldvppSetPicDescData(pic.get(), job->output.device_data()));
    acl::check("acldvppSetPicDescSize",
               dvpp_.acldvppSetPicDescSize(pic.get(), static_cast<uint32_t>(job->output.device_size())));
    acl::check("acldvppSetPicDescFormat", dvpp_.acldvppSetPicDescFormat(pic.get(), dvpp_format(format_)));

    // Room first: once sent, the job must outlive its callback whatever happens.
    parked_.reserve(parked_.size() + 1);
    jobs_.push_back(std::move(job));
    VdecJob* sent = jobs_.back().get();
    const acl::Error e = dvpp_.aclvdecSendFrame(desc_, sent->stream, sent->pic.get(), frame_config_, sent);
    if (e != acl::kSuccess) {
        // Never retried (a send retried forever is the field failure this avoids). Kept until the
        // channel is destroyed, in case the runtime still calls back for it.
        parked_.push_back(std::move(jobs_.back()));
        jobs_.pop_back();
        acl::fail_call("aclvdecSendFrame", e);
    }
}

void VdecHardware::finish(uint32_t timeout_ms) {
    KES_REQUIRE(created_, "internal: the VDEC channel is not open");
    acl::ScopedContext bind;
    struct StreamDescGuard {
        const acl::DvppApi& d;
        acl::DvppStreamDesc* p;
        ~StreamDescGuard() {
            if (p) d.acldvppDestroyStreamDesc(p);
        }
    } eos{dvpp_, dvpp_.acldvppCreateStreamDesc()};
    if (!eos.p) fail(KES_ERR_OUT_OF_MEMORY, "acldvppCreateStreamDesc returned NULL");
    acl::check("acldvppSetStreamDescEos", dvpp_.acldvppSetStreamDescEos(eos.p, 1));
    // Returns once the hardware has given back every frame sent (their callbacks included).
    acl::check("aclvdecSendFrame (end of stream)",
               dvpp_.aclvdecSendFrame(desc_, eos.p, nullptr, frame_config_, nullptr));
    std::unique_lock<std::mutex> lock(mutex_);
    const bool all = cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] {
        for (const auto& job : jobs_)
            if (!job->done) return false;
        return true;
    });
    if (!all)
        fail(KES_ERR_TIMEOUT, "VDEC channel %u: frames sent were not given back within %u ms of the end of the stream",
             id_, timeout_ms);
}

bool VdecHardware::take(uint32_t timeout_ms, VdecPicture* out) {
    if (jobs_.empty()) return false;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        VdecJob* oldest = jobs_.front().get();
        if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [oldest] { return oldest->done; })) return false;
    }
    *out = VdecPicture(std::move(jobs_.front()));
    jobs_.pop_front();
    return true;
}

// ---- choosing the hardware ---------------------------------------------------------------------------

const acl::DvppApi* vdec_hardware_api(kes_backend requested, const kes_board_profile& board) {
    return dvpp_hardware_for(requested, board, "decoder");
}

}  // namespace kes
