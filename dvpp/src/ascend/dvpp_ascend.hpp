// dvpp_ascend.hpp — the DVPP hardware path (DVPP V1 through kes/acl_dvpp.hpp), the second
// implementation behind dvpp's calls beside the CPU one (not installed).
//
// The split: each dvpp call first applies the board's rules (its plan_* step: limits, formats, output
// geometry — shared by both paths), then asks hardware_for(channel) whether a hardware channel serves
// it. If so, and the input is one the hardware takes, the call's *_hw function runs it there; if the
// hardware refuses the input (a known refusal, or ACL_ERROR_UNSUPPORTED_JPEG at run time) the CPU path
// runs instead and note_fallback() logs the cause once per process. Any other hardware failure is the
// call's error: a board that fails is reported, never hidden by a silent CPU retry.
//
// Memory: the hardware reads and writes DVPP memory only (acldvppMalloc). Inputs are copied in
// (DvppBuffer); outputs land in the caller's pool when it is a KES_MEM_DVPP pool, else in a
// KES_MEM_DVPP buffer the image owns, else (another pool) in a DVPP staging buffer copied out after the
// stream sync. Every descriptor is held by a guard, so no error path leaks one.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kes/acl_dvpp.hpp"
#include "kestrel/dvpp.h"

namespace kes {

// A channel's hardware: an acldvpp channel and the stream its async calls run on.
class AscendDvpp {
public:
    // Creates the hardware channel. Throws kes::Error (KES_ERR_BUSY when the SoC's channels are taken).
    AscendDvpp(const acl::DvppApi& dvpp, const kes_board_profile& board);
    ~AscendDvpp();
    AscendDvpp(const AscendDvpp&) = delete;
    AscendDvpp& operator=(const AscendDvpp&) = delete;

    const acl::DvppApi& api() const noexcept { return dvpp_; }
    const kes_board_profile& board() const noexcept { return board_; }
    acl::DvppChannelDesc* channel() const noexcept { return channel_; }
    acl::Stream stream() const noexcept { return stream_; }

    // Waits for the stream; throws the mapped error (a timeout included) naming `what`.
    void sync(const char* what) const;

private:
    const acl::DvppApi& dvpp_;
    const kes_board_profile board_;  // the kes channel's (its stride and ROI rules)
    acl::DvppChannelDesc* channel_ = nullptr;
    acl::Stream stream_ = nullptr;
};

// The hardware for a channel being created with `requested` (kes_dvpp_channel_config.backend): a new
// AscendDvpp, or nullptr when the CPU serves it. Throws kes::Error when ASCEND was required and is
// unavailable, or when the hardware channel cannot be created.
std::unique_ptr<AscendDvpp> open_hardware(kes_backend requested, const kes_board_profile& board);

// The DVPP table when a `what` ("DVPP channel", "decoder") created with `requested` and planning by
// `board` gets the hardware, else nullptr (the CPU serves it). Throws kes::Error for a bad value, or when
// ASCEND was required and the hardware is unavailable or of another SoC. Shared by channels and VDEC.
const acl::DvppApi* dvpp_hardware_for(kes_backend requested, const kes_board_profile& board, const char* what);

// Logs, once per process for each distinct `cause`, that `what` ran on the CPU because of it.
void note_fallback(const char* what, const std::string& cause);

// A DVPP buffer (KES_MEM_DVPP) released on scope exit unless kept.
class DvppBuffer {
public:
    DvppBuffer() = default;
    explicit DvppBuffer(size_t size) { allocate(size); }
    ~DvppBuffer();
    DvppBuffer(const DvppBuffer&) = delete;
    DvppBuffer& operator=(const DvppBuffer&) = delete;

    // Allocates `size` bytes of DVPP memory (the buffer must be empty). Throws kes::Error.
    void allocate(size_t size);

    void* data() const noexcept { return data_; }
    size_t size() const noexcept { return size_; }
    // Gives up ownership (the buffer now belongs to an image).
    void* release() noexcept;

    // Copies host bytes in (kes_mem_copy: aclrtMemcpy host → device).
    void upload(const void* src, size_t count);

private:
    void* data_ = nullptr;
    size_t size_ = 0;
};

// Where a hardware call's output image goes (see the file comment).
class OutputImage {
public:
    // Prepares `bytes` of DVPP memory for an image to be written by the hardware.
    OutputImage(kes_mem_pool* pool, size_t bytes);  // throws kes::Error
    ~OutputImage();
    OutputImage(const OutputImage&) = delete;
    OutputImage& operator=(const OutputImage&) = delete;

    void* device_data() const noexcept { return device_; }
    size_t device_size() const noexcept { return device_size_; }

    // After the stream sync: fills *out (format, geometry, owned buffer), copying out of the staging
    // buffer when the pool is not DVPP memory. Throws kes::Error.
    void finish(kes_image* out, kes_pixel_format format, uint32_t width, uint32_t height, uint32_t width_stride,
                uint32_t height_stride, size_t image_bytes);

private:
    kes_mem_pool* pool_ = nullptr;  // the destination pool, or nullptr
    bool direct_ = false;           // the hardware writes into the destination itself
    void* device_ = nullptr;        // what the hardware writes
    size_t device_size_ = 0;
    DvppBuffer staging_;  // a DVPP buffer when the destination is not DVPP memory (or no pool)
};

// DVPP V1's pixel format for a Kestrel one, or acl::kDvppUnknown.
int32_t dvpp_format(kes_pixel_format format) noexcept;

// An acldvppPicDesc destroyed on scope exit.
class PicDesc {
public:
    explicit PicDesc(const acl::DvppApi& dvpp);  // throws kes::Error
    ~PicDesc();
    PicDesc(const PicDesc&) = delete;
    PicDesc& operator=(const PicDesc&) = delete;

    acl::DvppPicDesc* get() const noexcept { return desc_; }
    void describe(void* data, size_t size, kes_pixel_format format, uint32_t width, uint32_t height,
                  uint32_t width_stride, uint32_t height_stride) {
        describe_picture(dvpp_, desc_, data, size, format, width, height, width_stride, height_stride);
    }

    // Sets every field of a picture descriptor (also one inside a batch); throws the mapped error of the
    // setter that refused.
    static void describe_picture(const acl::DvppApi& dvpp, acl::DvppPicDesc* desc, void* data, size_t size,
                                 kes_pixel_format format, uint32_t width, uint32_t height, uint32_t width_stride,
                                 uint32_t height_stride);

private:
    const acl::DvppApi& dvpp_;
    acl::DvppPicDesc* desc_ = nullptr;
};

// A picture the hardware reads (and, for a canvas, writes back): the image itself when it is DVPP memory
// with strides the unit takes, else a DVPP copy (re-strided row by row through host memory when its
// strides are not multiples of the unit's alignment).
class DvppPicture {
public:
    struct Alignment {
        uint32_t width, height;  // stride multiples the unit takes (1: any)
    };
    // load: copy the pixels in (false for a picture the hardware only writes). Throws kes::Error.
    DvppPicture(const acl::DvppApi& dvpp, const kes_image& image, Alignment align, bool load);
    DvppPicture(const DvppPicture&) = delete;
    DvppPicture& operator=(const DvppPicture&) = delete;

    acl::DvppPicDesc* get() const noexcept { return desc_.get(); }
    // After the sync: staged pixels go back into the image (for a canvas).
    void store();

private:
    void copy(void* dst, const void* src, kes_memcpy_kind kind);
    void copy_rows(uint8_t* host, bool into_host);  // visible rows between the image and `host`

    PicDesc desc_;
    kes_image image_;
    kes_image staged_layout_{};  // the staging copy's geometry when re-strided
    kes_mem_backend where_;
    bool staged_ = false, restride_ = false;
    size_t bytes_ = 0;
    DvppBuffer staging_;
};

// kes_image_buffer_size of an image's strides; throws kes::Error.
size_t image_bytes(const kes_image& image);

// A JPEG decode the board rules have planned (jpeg_decode.cpp): the output the hardware must write.
struct JpegdJob {
    kes_pixel_format format;
    uint32_t width, height, width_stride, height_stride;
    size_t bytes;  // kes_image_buffer_size of the strides
};

// VPC on the hardware (vpc_ascend.cpp). The caller has checked every board rule; each returns "" on
// success or why the hardware cannot serve the call (the caller then runs the CPU path), and throws
// kes::Error for any other failure. Inputs in other memory than DVPP are staged into DVPP memory.
struct VpcOutput {
    uint32_t width, height, width_stride, height_stride;
};
// `crop` of `in` resized to out (allocated from pool, or DVPP memory).
std::string vpc_crop_resize_hw(AscendDvpp& hw, const kes_image& in, const kes_vpc_roi& crop, kes_vpc_interp interp,
                               const VpcOutput& geometry, kes_mem_pool* pool, kes_image* out);
// `crop` of `in` resized into `paste` of `canvas`; the canvas's other pixels are kept.
std::string vpc_crop_and_paste_hw(AscendDvpp& hw, const kes_image& in, const kes_vpc_roi& crop, kes_vpc_interp interp,
                                  kes_image& canvas, const kes_vpc_roi& paste);
// A new out image filled with (y, u, v), then `crop` of `in` resized into `paste` of it.
std::string vpc_letterbox_hw(AscendDvpp& hw, const kes_image& in, const kes_vpc_roi& crop, kes_vpc_interp interp,
                             const VpcOutput& geometry, const uint8_t fill[3], const kes_vpc_roi& paste,
                             kes_mem_pool* pool, kes_image* out);
// rois[i] (crop[i] checked) of images[rois[i].image_index] into out[i] with geometry[i], in one
// acldvppVpcBatchCropAsync. On failure no output is left allocated.
std::string vpc_batch_crop_hw(AscendDvpp& hw, const kes_image* images, const kes_vpc_batch_roi* rois,
                              const kes_vpc_roi* crops, const VpcOutput* geometry, uint32_t count,
                              kes_vpc_interp interp, kes_mem_pool* pool, kes_image* out);

// Encodes an NV12/NV21 image (checked by the caller) with JPEGE into out[0, capacity): "" and *out_size
// on success, or why the hardware refused. Throws kes::Error.
std::string jpeg_encode_hw(AscendDvpp& hw, const kes_image& image, uint32_t quality, void* out, size_t capacity,
                           size_t* out_size);

// Decodes on the hardware into *out. Returns "" on success, or why the hardware refused this JPEG (the
// caller then decodes on the CPU). Throws kes::Error for any other failure.
std::string jpeg_decode_hw(AscendDvpp& hw, const uint8_t* data, size_t size, const JpegdJob& job, kes_mem_pool* pool,
                           kes_image* out);

// ---- VDEC on the hardware (vdec_ascend.cpp; used by video_decode.cpp) ---------------------------------
//
// One VdecHardware is one aclvdec channel with its own report thread. Threads and ownership:
//   - the app's thread (the kes_vdec's caller) sends access units, takes finished pictures and frees
//     them; it owns every per-frame object (VdecPicture: input buffer, stream and picture descriptions,
//     output buffer);
//   - the report thread (started before aclvdecCreateChannel, which needs its id, and released into its
//     aclrtProcessReport loop only once the channel exists) runs the callbacks: a callback only reads
//     its frame's ret codes and geometry and marks the frame done under the channel's mutex. A frame is
//     freed only after its callback ran, or after aclvdecDestroyChannel returned (then none can come).
//   - destroy: aclvdecDestroyChannel (which flushes and waits for the callbacks, so the report thread
//     still runs), then the report thread is stopped and joined, then everything is freed.
// Channel ids: a process-wide table of the 32 ids (0..31, BOARD-RULES §VDEC V100_CHANNEL_ID_CEILING); an id
// the runtime says is taken (207005, by code outside Kestrel) is skipped; none left is KES_ERR_BUSY.
// Sends are never retried (the modelbox hang): a failed aclvdecSendFrame fails the call with the
// mapped error and the access unit is dropped; its objects are kept until the channel is destroyed in
// case the runtime still calls back for it.

// What the app attaches to an access unit and gets back with its picture.
struct VdecFrameMeta {
    int64_t pts = 0;       // the container's or the app's timestamp (AV_NOPTS_VALUE: none)
    uint64_t ordinal = 0;  // the access unit's position in the stream (sent or not)
    bool keyframe = false;
    uint32_t width = 0, height = 0;  // the stream's size as parsed (before VDEC's even rounding)
};

// One access unit sent to the hardware: what it owns until freed (defined in vdec_ascend.cpp).
struct VdecJob;

// A picture back from the hardware (its callback ran). Owns its DVPP output until to_image().
class VdecPicture {
public:
    VdecPicture() noexcept;
    explicit VdecPicture(std::unique_ptr<VdecJob> job) noexcept;
    ~VdecPicture();
    VdecPicture(VdecPicture&&) noexcept;
    VdecPicture& operator=(VdecPicture&&) noexcept;

    const VdecFrameMeta& meta() const noexcept;
    // 0: a picture. Else the picture description's ret code, or the stream description's when only it
    // is non-zero (decode failed / no picture / output unusable / stream outside the limits).
    uint32_t ret_code() const noexcept;
    uint32_t width() const noexcept;
    uint32_t height() const noexcept;
    // Moves the picture into *out (format, geometry as the hardware reported it, checked against the
    // buffer). Throws kes::Error (a full pool: the picture stays here and the call can be repeated).
    void to_image(kes_image* out);

private:
    std::unique_ptr<VdecJob> job_;
};

class VdecHardware {
public:
    // stream_format: acl::kH264* / kH265Main. The output is `format` (NV12/NV21) in DVPP memory, in
    // `pool` when it is a KES_MEM_DVPP pool (else staged and copied into it). Throws kes::Error:
    // KES_ERR_BUSY when every VDEC channel id is taken, else the mapped AscendCL error.
    VdecHardware(const acl::DvppApi& dvpp, const kes_board_profile& board, int32_t stream_format,
                 kes_pixel_format format, kes_mem_pool* pool);
    ~VdecHardware();
    VdecHardware(const VdecHardware&) = delete;
    VdecHardware& operator=(const VdecHardware&) = delete;

    uint32_t channel_id() const noexcept { return id_; }

    // Copies one Annex-B access unit (host bytes) into DVPP memory and sends it with an output picture
    // sized for a width × height stream. Throws kes::Error: a failed allocation (nothing is sent: the
    // call can be repeated) or a failed send (not retried; the access unit is dropped).
    void send(const uint8_t* data, size_t size, uint32_t width, uint32_t height, const VdecFrameMeta& meta);
    // End of stream: sends EOS (which returns once the hardware has given back every frame) and waits,
    // at most timeout_ms, for every callback. Throws kes::Error (KES_ERR_TIMEOUT on the bound).
    void finish(uint32_t timeout_ms);
    // Frames sent whose picture has not been taken.
    size_t pending() const noexcept { return jobs_.size(); }
    // The oldest frame sent, once its callback ran: waits at most timeout_ms for it. False when none
    // is pending or it is still being decoded.
    bool take(uint32_t timeout_ms, VdecPicture* out);

    // The report thread's loop (internal).
    void run_reports() noexcept;
    // The callback's work (internal): marks `job` done with the descriptions' results.
    void complete(VdecJob* job, acl::DvppStreamDesc* input, acl::DvppPicDesc* output) noexcept;

private:
    void release() noexcept;

    const acl::DvppApi& dvpp_;
    const kes_board_profile board_;
    const kes_pixel_format format_;
    kes_mem_pool* const pool_;
    uint32_t id_ = 0;
    bool id_reserved_ = false;
    acl::VdecChannelDesc* desc_ = nullptr;
    acl::VdecFrameConfig* frame_config_ = nullptr;
    bool created_ = false;                          // aclvdecCreateChannel succeeded and destroy has not run
    std::deque<std::unique_ptr<VdecJob>> jobs_;     // sent, in send order (the app thread's)
    std::vector<std::unique_ptr<VdecJob>> parked_;  // failed sends, kept until the channel is destroyed
    std::mutex mutex_;                              // guards VdecJob::done and the report thread's state
    std::condition_variable cv_;
    enum class Reports { kWaiting, kRunning, kStopping } reports_ = Reports::kWaiting;
    std::thread reporter_;
};

// The DVPP table for a VDEC channel with backend `requested` on `board`, or nullptr when the CPU
// decodes (CPU asked, no DVPP with AUTO, a board profile that is not the device's). Throws kes::Error
// when KES_BACKEND_ASCEND was asked and cannot be had.
const acl::DvppApi* vdec_hardware_api(kes_backend requested, const kes_board_profile& board);

}  // namespace kes
