// VDEC: libavformat demuxes, and either libavcodec decodes on the host (frames become NV12/NV21
// kes_images with the board's VDEC strides in the caller's pool) or the DVPP hardware does through
// aclvdec* (ascend/vdec_ascend.cpp: access units in Annex-B, pictures back in DVPP memory). The hardware
// is chosen at create when the Ascend backend is active and the stream is one it takes; otherwise, and
// for every stream outside the VDEC rules, the host decodes, logged once per cause (dvpp_video.h,
// BOARD-RULES §VDEC).
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdarg>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "video_ffmpeg.hpp"
#include "vpc_internal.hpp"

namespace kes {

namespace {

kes_log_level level_of_av(int av_level) {
    if (av_level <= AV_LOG_ERROR) return KES_LOG_ERROR;
    if (av_level <= AV_LOG_WARNING) return KES_LOG_WARN;
    if (av_level <= AV_LOG_INFO) return KES_LOG_INFO;
    if (av_level <= AV_LOG_VERBOSE) return KES_LOG_DEBUG;
    return KES_LOG_TRACE;
}

// FFmpeg's default callback prints to stderr whatever Kestrel's level: libx264 alone wrote about 16
// lines per encoded video with KES_LOG_LEVEL=off. FFmpeg calls this from its own threads too, and builds
// some lines in several calls: each thread keeps its unfinished line until the newline.
void on_av_log(void* avcl, int av_level, const char* fmt, va_list args) {
    if (av_level < 0 || av_level > av_log_get_level()) return;  // AV_LOG_QUIET, or below FFmpeg's own level
    const kes_log_level level = level_of_av(av_level);
    if (!log_enabled(level)) return;
    thread_local std::string pending;
    thread_local int print_prefix = 1;
    char piece[1024];
    av_log_format_line2(avcl, av_level, fmt, args, piece, sizeof piece, &print_prefix);
    pending += piece;
    if (pending.empty() || pending.back() != '\n') return;
    pending.pop_back();
    log_message(level, "ffmpeg", "%s", pending.c_str());
    pending.clear();
}

}  // namespace

void route_ffmpeg_log() {
    static std::once_flag once;
    std::call_once(once, [] { av_log_set_callback(on_av_log); });
}

std::string av_error_text(int err) {
    char buf[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(err, buf, sizeof buf);
    return buf;
}

kes_status av_error_status(int err) {
    switch (err) {
        case AVERROR(ENOENT): return KES_ERR_NOT_FOUND;
        case AVERROR(ENOMEM): return KES_ERR_OUT_OF_MEMORY;
        case AVERROR(ETIMEDOUT):
        case AVERROR_EXIT: return KES_ERR_TIMEOUT;
        case AVERROR_INVALIDDATA: return KES_ERR_CORRUPT_DATA;
        case AVERROR_DECODER_NOT_FOUND:
        case AVERROR_DEMUXER_NOT_FOUND:
        case AVERROR_ENCODER_NOT_FOUND:
        case AVERROR_MUXER_NOT_FOUND:
        case AVERROR_PROTOCOL_NOT_FOUND:
        case AVERROR_PATCHWELCOME:
        case AVERROR(ENOSYS): return KES_ERR_UNSUPPORTED;
        case AVERROR(EINVAL): return KES_ERR_INVALID_ARGUMENT;
        default: return KES_ERR_IO;
    }
}

AVCodecID codec_id_of(kes_video_codec codec) {
    switch (codec) {
        case KES_VIDEO_CODEC_H264: return AV_CODEC_ID_H264;
        case KES_VIDEO_CODEC_H265: return AV_CODEC_ID_HEVC;
        default: return AV_CODEC_ID_NONE;
    }
}

kes_video_codec codec_of(AVCodecID id) {
    switch (id) {
        case AV_CODEC_ID_H264: return KES_VIDEO_CODEC_H264;
        case AV_CODEC_ID_HEVC: return KES_VIDEO_CODEC_H265;
        default: return KES_VIDEO_CODEC_UNKNOWN;
    }
}

const char* codec_name(kes_video_codec codec) {
    switch (codec) {
        case KES_VIDEO_CODEC_H264: return "H.264";
        case KES_VIDEO_CODEC_H265: return "H.265";
        default: return "unknown";
    }
}

namespace {

// Process-wide count of open decoder channels (board: channel IDs 0..31, BOARD-RULES §VDEC).
std::atomic<uint32_t> g_open_channels{0};

bool reserve_channel(uint32_t limit) {
    uint32_t n = g_open_channels.load();
    do {
        if (n >= limit) return false;
    } while (!g_open_channels.compare_exchange_weak(n, n + 1));
    return true;
}

int64_t steady_now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// FFmpeg's interrupt callback: network waits end when the armed deadline passes.
struct Deadline {
    int64_t at_ns = 0;  // 0: not armed
    bool expired = false;
    void arm(uint32_t timeout_ms) {
        at_ns = steady_now_ns() + int64_t(timeout_ms) * 1000000;
        expired = false;
    }
    void disarm() { at_ns = 0; }
    // Whether the call ran out of time: the callback saw the deadline pass, or it has passed by now. The
    // RTSP socket timeout (the same timeout_ms, started a moment later) can end a wait before the
    // callback is polled again; FFmpeg then reports a probe failure ("Invalid data found"), not a
    // timeout (seen under qemu on a loaded machine).
    bool passed() const { return expired || (at_ns != 0 && steady_now_ns() >= at_ns); }
};

int interrupt_callback(void* opaque) {
    auto* d = static_cast<Deadline*>(opaque);
    if (d->at_ns != 0 && steady_now_ns() > d->at_ns) {
        d->expired = true;
        return 1;
    }
    return 0;
}

struct FormatCloser {
    void operator()(AVFormatContext* f) const noexcept { avformat_close_input(&f); }
};

struct ReadyFrame {
    AvFramePtr frame;
    uint64_t index;
    bool concealed;
};

bool is_network(const std::string& source) {
    return source.find("://") != std::string::npos && source.rfind("file:", 0) != 0;
}

bool is_rtsp(const std::string& source) {
    std::string scheme = source.substr(0, source.find("://"));
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return scheme == "rtsp" || scheme == "rtsps";
}

constexpr uint32_t kDefaultTimeoutMs = 5000;
// Reconnect defaults (dvpp_video.h "Reconnect"): a camera that reboots is back within tens of seconds;
// 10 s between attempts at most keeps a dead one from costing anything.
constexpr uint32_t kDefaultReconnectDelayMs = 500;
constexpr uint32_t kDefaultReconnectMaxDelayMs = 10000;
// After a flush the decoder must reach EOF; a decoder that keeps failing is given up on after this many.
constexpr int kMaxDrainErrors = 1000;
constexpr int kMaxErrorsPerDrain = 64;
// The hardware path: frames in flight before the next send waits for the oldest; how long a frame (or
// the end of the stream) may take to come back before the call fails with KES_ERR_TIMEOUT; how long
// kes_vdec_receive_frame waits for a frame in flight before saying KES_ERR_BUSY.
constexpr size_t kHwMaxInFlight = 8;
constexpr uint32_t kHwFrameTimeoutMs = 10000;
constexpr uint32_t kHwReceiveWaitMs = 50;

}  // namespace
}  // namespace kes

struct kes_vdec {
    kes_board_profile profile{};
    kes_vdec_config cfg{};
    std::string source;
    kes_pixel_format out_format = KES_PIXEL_NV12;
    bool packet_mode = true;
    bool network = false;
    bool channel_reserved = false;

    std::unique_ptr<AVFormatContext, kes::FormatCloser> fmt;
    int stream_index = -1;
    AVRational time_base{1, 1000000};
    kes::AvCodecContextPtr dec;
    kes::AvParserPtr parser;
    kes::AvPacketPtr pkt;
    std::vector<uint8_t> padded;  // packet-mode input with FFmpeg's read-ahead padding
    std::deque<kes::ReadyFrame> ready;
    kes::SwsPtr sws;
    kes::Deadline deadline;

    bool input_done = false;       // the flush was sent
    bool flush_sent = false;       // the decoder took the flush
    bool decoder_drained = false;  // the decoder returned EOF (or gave up)
    int drain_errors = 0;
    uint64_t packet_ordinal = 0;
    uint64_t display_index = 0;
    kes_vdec_stats stats{};
    bool have_info = false;
    kes_vdec_stream_info info{};

    // The DVPP hardware path (ascend/vdec_ascend.cpp), when it decodes this stream.
    const kes::acl::DvppApi* hw_api = nullptr;  // the table, when the hardware may serve the decoder
    std::unique_ptr<kes::VdecHardware> hw;
    bool hw_decided = false;               // packet mode: the first access unit confirmed the hardware, or not
    kes::AvBsfPtr bsf;                     // source mode: length-prefixed (MP4/MKV) access units to Annex-B
    kes::AvPacketPtr hw_pkt;               // the bitstream filter's output
    kes::AvCodecContextPtr hw_parse_ctx;   // source mode: what hw_parser writes into (never opened)
    kes::AvParserPtr hw_parser;            // source mode: each access unit's size and display position
    std::vector<uint8_t> hw_prefix;        // Annex-B parameter sets of the container, sent before the first unit
    std::vector<uint8_t> hw_scratch;       // a unit with the prefix, or a copy padded for the parser
    uint32_t hw_width = 0, hw_height = 0;  // the stream's size as last parsed
    int hw_last_poc = INT_MIN;             // display position of the last unit sent (reordering check)
    struct HwUnit {
        std::vector<uint8_t> bytes;
        kes::VdecFrameMeta meta;
    };
    std::deque<HwUnit> hw_backlog;  // units not sent for want of DVPP memory: the next call sends them first
    std::string hw_oom;             // why (the allocation's message)
    bool hw_finished = false;       // the end of the stream was sent and every frame came back
    struct HwReady {
        kes::VdecPicture picture;
        uint64_t index;
    };
    std::deque<HwReady> hw_ready;  // pictures to deliver (DVPP memory), in order

    // Reconnect (network sources, dvpp_video.h "Reconnect"). The channel's timeline (time_base, pts) is
    // the first connection's; later connections' packets are rescaled and shifted onto it.
    bool reconnect = false;  // the policy, resolved at create
    bool link_down = false;  // lost: reconnect_step runs before the next read
    bool stopped = false;    // lost for good: every read fails with stop_text
    std::string stop_text;
    std::string loss_cause;             // why the link went down
    bool session_proved = true;         // the current connection gave a packet (resets the backoff)
    uint32_t failed_attempts = 0;       // in a row
    uint32_t delay_ms = 0;              // the wait before the next attempt
    int64_t next_attempt_ns = 0;        // steady clock
    bool wait_keyframe = false;         // packets before the next key frame are passed over
    uint64_t session_packets = 0;       // video packets of the current connection
    AVRational session_tb{1, 1000000};  // the current connection's time base
    bool pts_rebase = false;            // the next packet with a timestamp sets pts_offset
    int64_t pts_offset = 0;             // added to the current connection's timestamps (channel time base)
    int64_t last_pts = AV_NOPTS_VALUE;  // the largest timestamp fed so far (channel time base)
    int64_t last_packet_ns = 0;         // when it came (steady clock)
    uint64_t frames_dropped = 0;        // kes_vdec_health.frames_dropped without the corrupt packets
    uint64_t reconnects = 0, reconnect_attempts = 0;
    kes_vdec_state state = KES_VDEC_STATE_RUNNING;
    kes_status last_error = KES_OK;
    std::string last_error_text;

    // What kes_vdec_get_health reads from any thread: published by the reading thread (publish_health).
    mutable std::mutex health_mu;
    kes_vdec_health health{};
    int64_t health_next_attempt_ns = 0;

    ~kes_vdec() {
        if (channel_reserved) kes::g_open_channels.fetch_sub(1);
    }
};

namespace kes {
namespace {

// Board rules on a decoded frame: 4:2:0 YUV, bit depth policy, size limits. Throws (deliver_next then
// drops the frame).
void check_frame(const kes_vdec* v, const AVFrame* f) {
    const auto* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(f->format));
    if (!desc || desc->nb_components != 3 || desc->log2_chroma_w != 1 || desc->log2_chroma_h != 1 ||
        (desc->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL))) {
        fail(KES_ERR_UNSUPPORTED, "frame pixel format %s is not 4:2:0 YUV: VDEC decodes YUV420 streams only",
             desc ? desc->name : "?");
    }
    if (desc->comp[0].depth > 8 && v->cfg.refuse_high_bit_depth)
        fail(KES_ERR_UNSUPPORTED, "%d-bit stream (%s) refused: refuse_high_bit_depth is set", desc->comp[0].depth,
             desc->name);
    const uint32_t lo = v->profile.vdec_min_dim, hi = v->profile.vdec_max_dim;
    if (f->width < 1 || f->height < 1 || uint32_t(f->width) < lo || uint32_t(f->height) < lo ||
        uint32_t(f->width) > hi || uint32_t(f->height) > hi)
        fail(KES_ERR_UNSUPPORTED, "stream size %dx%d is outside VDEC's %u..%u per side on the %s profile", f->width,
             f->height, lo, hi, v->profile.name);
}

// The delivered size for a stream of w × h (dvpp_video.h: even on the boards unless resized).
void output_size(const kes_vdec* v, uint32_t w, uint32_t h, uint32_t* ow, uint32_t* oh) {
    if (v->cfg.output_width) {
        *ow = v->cfg.output_width;
        *oh = v->cfg.output_height;
        return;
    }
    const bool board = v->profile.vdec_height_align > 1;
    *ow = board ? std::max(w & ~1u, 2u) : w;
    *oh = board ? std::max(h & ~1u, 2u) : h;
}

void update_info(kes_vdec* v, uint32_t w, uint32_t h, uint32_t bit_depth) {
    kes_vdec_stream_info& in = v->info;
    in.width = w;
    in.height = h;
    if (bit_depth) in.bit_depth = bit_depth;
    output_size(v, w, h, &in.output_width, &in.output_height);
    check_sdk(kes_image_strides(v->out_format, in.output_width, in.output_height, KES_STRIDE_VDEC, v->profile.board,
                                &in.width_stride, &in.height_stride),
              "VDEC output strides");
    check_sdk(kes_image_buffer_size(v->out_format, in.width_stride, in.height_stride, &in.frame_size),
              "VDEC frame size");
    in.backend = v->hw ? KES_BACKEND_ASCEND : KES_BACKEND_CPU;
    v->have_info = true;
}

// Pulls every frame the decoder has ready into v->ready, deciding now which ones will be delivered.
void drain(kes_vdec* v) {
    int errors_here = 0;
    for (;;) {
        AvFramePtr f(av_check_alloc(av_frame_alloc(), "VDEC frame"));
        const int ret = avcodec_receive_frame(v->dec.get(), f.get());
        if (ret == AVERROR(EAGAIN)) {
            // Once flushed a decoder never asks for input again; if it does, it has nothing left.
            if (v->flush_sent) v->decoder_drained = true;
            return;
        }
        if (ret == AVERROR_EOF) {
            v->decoder_drained = true;
            return;
        }
        if (ret < 0) {
            // Frame threads report a packet's decode error when its frame is due.
            ++v->stats.corrupt_packets;
            KES_LOGW("dvpp", "VDEC %s: decode error, frame skipped: %s", v->source.c_str(), av_error_text(ret).c_str());
            if (v->flush_sent && ++v->drain_errors > kMaxDrainErrors) v->decoder_drained = true;
            if (++errors_here > kMaxErrorsPerDrain) return;
            continue;  // frames behind the broken one may be ready
        }
        ++v->stats.frames_decoded;
        const bool concealed = (f->flags & AV_FRAME_FLAG_CORRUPT) || f->decode_error_flags != 0;
        if (concealed) ++v->stats.concealed_frames;
        uint64_t index;
        if (v->cfg.keyframes_only) {
            index = f->pkt_pos >= 0 ? uint64_t(f->pkt_pos) : v->display_index;
            ++v->display_index;
        } else {
            index = v->display_index++;
        }
        const bool interval_ok = v->cfg.keyframes_only || index % v->cfg.frame_interval == 0;
        if (!interval_ok || (concealed && v->cfg.drop_concealed)) {
            ++v->stats.frames_skipped;
            if (interval_ok) ++v->frames_dropped;  // drop_concealed: a drop; frame_interval: asked for
            continue;
        }
        v->ready.push_back({std::move(f), index, concealed});
    }
}

// Sends one packet (NULL: flush) and collects what the decoder produced.
void send(kes_vdec* v, AVPacket* pkt) {
    if (pkt) ++v->stats.packets;
    for (;;) {
        const int ret = avcodec_send_packet(v->dec.get(), pkt);
        if (ret == AVERROR(EAGAIN)) {
            const size_t before = v->ready.size();
            const uint64_t decoded = v->stats.frames_decoded, errors = v->stats.corrupt_packets;
            drain(v);
            // send_packet's contract: EAGAIN means output is waiting; if none came, do not spin.
            if (v->ready.size() == before && v->stats.frames_decoded == decoded && v->stats.corrupt_packets == errors) {
                if (pkt) {
                    ++v->stats.corrupt_packets;
                    KES_LOGW("dvpp", "VDEC %s: decoder accepts no input and gives no output; packet dropped",
                             v->source.c_str());
                } else {
                    v->decoder_drained = true;
                }
                break;
            }
            continue;
        }
        if (!pkt && (ret >= 0 || ret == AVERROR_EOF)) v->flush_sent = true;
        if (ret < 0 && ret != AVERROR_EOF) {
            if (pkt) {
                ++v->stats.corrupt_packets;
                KES_LOGW("dvpp", "VDEC %s: packet %lld (%d bytes) rejected by the decoder and skipped: %s",
                         v->source.c_str(), static_cast<long long>(pkt->pos), pkt->size, av_error_text(ret).c_str());
            } else {
                v->decoder_drained = true;
            }
        }
        break;
    }
    drain(v);
}

void open_decoder(kes_vdec* v, AVCodecID id, const AVCodecParameters* par) {
    const AVCodec* codec = avcodec_find_decoder(id);
    if (!codec) fail(KES_ERR_UNSUPPORTED, "this FFmpeg has no %s decoder", avcodec_get_name(id));
    v->dec.reset(av_check_alloc(avcodec_alloc_context3(codec), "decoder context"));
    AVCodecContext* c = v->dec.get();
    if (par) {
        const int ret = avcodec_parameters_to_context(c, par);
        if (ret < 0) fail(av_error_status(ret), "decoder parameters: %s", av_error_text(ret).c_str());
    }
    c->thread_count = int(std::min<uint32_t>(v->cfg.threads, 64));
    c->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    // Frames beyond the board's largest are refused before the decoder allocates them.
    int64_t max_pixels = int64_t(v->profile.vdec_max_dim) * v->profile.vdec_max_dim;
    if (v->cfg.max_pixels)
        max_pixels = std::min<int64_t>(max_pixels, int64_t(std::min<uint64_t>(v->cfg.max_pixels, INT64_MAX)));
    c->max_pixels = max_pixels;
    c->pkt_timebase = v->time_base;
    if (v->cfg.keyframes_only) c->skip_frame = AVDISCARD_NONKEY;
    const int ret = avcodec_open2(c, codec, nullptr);
    if (ret < 0) fail(av_error_status(ret), "cannot open the %s decoder: %s", codec->name, av_error_text(ret).c_str());
}

// ---- the DVPP hardware path (ascend/vdec_ascend.cpp does the aclvdec* work) ---------------------------

// What is known of a stream before it is decoded, for the hardware's rules.
struct StreamForm {
    int width = 0, height = 0;  // 0: unknown
    int pix_fmt = -1;           // AVPixelFormat; -1: unknown
    int field_order = AV_FIELD_UNKNOWN;
    int level = FF_LEVEL_UNKNOWN;
    int reorder = 0;  // frames of reordering (B-frames)
};

// Why the hardware cannot decode this stream for this decoder, or "" (BOARD-RULES §VDEC). Causes are phrased
// without sizes, so that each is logged once per process.
std::string hw_refusal(const kes_vdec* v, const StreamForm& s) {
    const bool h265 = v->info.codec == KES_VIDEO_CODEC_H265;
    if (v->cfg.output_width && (int64_t(v->cfg.output_width) != s.width || int64_t(v->cfg.output_height) != s.height))
        return "an output resize (config.output_width x output_height other than the stream's size)";
    if (const auto* d = s.pix_fmt >= 0 ? av_pix_fmt_desc_get(static_cast<AVPixelFormat>(s.pix_fmt)) : nullptr) {
        if (d->nb_components != 3 || d->log2_chroma_w != 1 || d->log2_chroma_h != 1 ||
            (d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL)))
            return std::string("a stream whose chroma is not 4:2:0 (") + d->name + ")";
        if (d->comp[0].depth > 8)
            return format("a %d-bit stream (VDEC would write 10-bit pictures, formats Kestrel does not offer)",
                          d->comp[0].depth);
    }
    if (s.reorder > 0) return "a stream with B-frames (VDEC's send-frame mode returns pictures in decode order)";
    if (h265 && s.field_order != AV_FIELD_UNKNOWN && s.field_order != AV_FIELD_PROGRESSIVE)
        return "an interlaced H.265 stream (VDEC decodes interlaced H.264 only)";
    if (s.level > (h265 ? 153 : 51)) return "a stream above level 5.1";
    if (s.width > 0 && s.height > 0) {
        const uint32_t w = uint32_t(s.width), h = uint32_t(s.height);
        if (w < v->profile.vdec_min_dim || h < v->profile.vdec_min_dim || w > v->profile.vdec_max_dim ||
            h > v->profile.vdec_max_dim)
            return "a stream outside VDEC's size limits";
        if (h265 && v->profile.vdec_h265_max_width && w > v->profile.vdec_h265_max_width)
            return "an H.265 stream wider than the profile's vdec_h265_max_width";
        if (v->cfg.max_pixels && uint64_t(w) * h > v->cfg.max_pixels) return "a stream above config.max_pixels";
    }
    return "";
}

int32_t hw_stream_format(kes_video_codec codec, int profile) {
    if (codec == KES_VIDEO_CODEC_H265) return acl::kH265Main;
    // UNCONFIRMED whether VDEC treats the three H.264 types differently; the stream's profile is given.
    if (profile == FF_PROFILE_H264_BASELINE || profile == FF_PROFILE_H264_CONSTRAINED_BASELINE)
        return acl::kH264Baseline;
    if (profile == FF_PROFILE_H264_MAIN) return acl::kH264Main;
    return acl::kH264High;
}

// Source mode: whether the hardware decodes this stream (the cause is logged when it does not).
bool choose_source_hardware(kes_vdec* v, const AVCodecParameters* par) {
    if (!v->hw_api) return false;
    StreamForm f;
    f.width = par->width;
    f.height = par->height;
    f.pix_fmt = par->format;
    f.field_order = par->field_order;
    f.level = par->level;
    f.reorder = par->video_delay;
    const std::string why = hw_refusal(v, f);
    if (why.empty()) return true;
    note_fallback("kes_vdec", why);
    return false;
}

bool starts_annexb(const uint8_t* p, int n) {
    return (n >= 3 && p[0] == 0 && p[1] == 0 && p[2] == 1) ||
           (n >= 4 && p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 1);
}

void open_source_hardware(kes_vdec* v, const AVStream* st) {
    const AVCodecParameters* par = st->codecpar;
    v->hw = std::make_unique<VdecHardware>(*v->hw_api, v->profile, hw_stream_format(v->info.codec, par->profile),
                                           v->out_format, v->cfg.pool);
    v->hw_pkt.reset(av_check_alloc(av_packet_alloc(), "packet"));
    if (starts_annexb(par->extradata, par->extradata_size)) {
        // Parameter sets only out of band (RTSP's sprop-parameter-sets): VDEC needs them in the stream.
        v->hw_prefix.assign(par->extradata, par->extradata + par->extradata_size);
    } else if (par->extradata_size > 0) {
        // MP4/MKV: length-prefixed NAL units and avcC/hvcC; VDEC takes Annex-B only.
        const char* name = v->info.codec == KES_VIDEO_CODEC_H265 ? "hevc_mp4toannexb" : "h264_mp4toannexb";
        const AVBitStreamFilter* filter = av_bsf_get_by_name(name);
        if (!filter) fail(KES_ERR_UNSUPPORTED, "this FFmpeg has no %s bitstream filter (VDEC takes Annex-B)", name);
        AVBSFContext* b = nullptr;
        int ret = av_bsf_alloc(filter, &b);
        if (ret < 0) fail(av_error_status(ret), "%s: %s", name, av_error_text(ret).c_str());
        v->bsf.reset(b);
        ret = avcodec_parameters_copy(b->par_in, par);
        if (ret >= 0) {
            b->time_base_in = st->time_base;
            ret = av_bsf_init(b);
        }
        if (ret < 0)
            fail(KES_ERR_CORRUPT_DATA, "'%s': %s refused the stream's parameters: %s", v->source.c_str(), name,
                 av_error_text(ret).c_str());
    }
    v->hw_parser.reset(av_parser_init(par->codec_id));
    if (!v->hw_parser) fail(KES_ERR_UNSUPPORTED, "this FFmpeg has no %s parser", avcodec_get_name(par->codec_id));
    v->hw_parser->flags |= PARSER_FLAG_COMPLETE_FRAMES;  // one access unit per call: parsed, not buffered
    v->hw_parse_ctx.reset(av_check_alloc(avcodec_alloc_context3(nullptr), "parser context"));
    v->hw_parse_ctx->codec_id = par->codec_id;
    v->hw_width = uint32_t(std::max(par->width, 0));
    v->hw_height = uint32_t(std::max(par->height, 0));
}

// Packet mode: the first access unit says what the stream is; the hardware channel opened at create
// is given up for the CPU when the stream is not one VDEC takes.
void decide_packet_hardware(kes_vdec* v) {
    v->hw_decided = true;
    const AVCodecParserContext* p = v->parser.get();
    StreamForm f;
    f.width = p->width;
    f.height = p->height;
    f.pix_fmt = p->format;
    f.field_order = p->field_order;
    f.level = v->dec->level;
    const std::string why = hw_refusal(v, f);
    if (why.empty()) return;
    note_fallback("kes_vdec", why);
    v->hw.reset();
}

void hw_collect(kes_vdec* v, uint32_t wait_ms);

// Sends one unit now, once there is room among the frames in flight (a bounded wait). Throws kes::Error.
void hw_send_now(kes_vdec* v, const uint8_t* data, size_t size, const VdecFrameMeta& meta) {
    if (v->hw->pending() >= kHwMaxInFlight) {
        hw_collect(v, kHwFrameTimeoutMs);
        if (v->hw->pending() >= kHwMaxInFlight)
            fail(KES_ERR_TIMEOUT, "VDEC %s: the hardware gave no frame back within %u ms", v->source.c_str(),
                 kHwFrameTimeoutMs);
    }
    try {
        v->hw->send(data, size, meta.width, meta.height, meta);
    } catch (const Error& e) {
        if (e.status() != KES_ERR_OUT_OF_MEMORY) ++v->stats.packets;  // sent and failed: dropped, never retried
        throw;
    }
    ++v->stats.packets;
}

// Sends the units kept for want of DVPP memory, oldest first. Throws: KES_ERR_OUT_OF_MEMORY with the
// rest still kept; any other failure drops the unit it was for.
void hw_send_backlog(kes_vdec* v) {
    while (!v->hw_backlog.empty()) {
        const kes_vdec::HwUnit& u = v->hw_backlog.front();
        try {
            hw_send_now(v, u.bytes.data(), u.bytes.size(), u.meta);
        } catch (const Error& e) {
            if (e.status() != KES_ERR_OUT_OF_MEMORY) v->hw_backlog.pop_front();
            throw;
        }
        v->hw_backlog.pop_front();
    }
}

// Sends a unit, or keeps it (behind the ones already kept, so the order holds) when there is no DVPP
// memory for it: the call then ends with KES_ERR_OUT_OF_MEMORY (hw_report_backlog) and nothing is lost.
void hw_send_unit(kes_vdec* v, const uint8_t* data, size_t size, const VdecFrameMeta& meta) {
    if (v->hw_backlog.empty()) {
        try {
            hw_send_now(v, data, size, meta);
            return;
        } catch (const Error& e) {
            if (e.status() != KES_ERR_OUT_OF_MEMORY) throw;
            v->hw_oom = e.what();
        }
    }
    v->hw_backlog.push_back(kes_vdec::HwUnit{std::vector<uint8_t>(data, data + size), meta});
}

// Ends a call that gave units to the hardware: units kept for want of memory make it KES_ERR_OUT_OF_MEMORY.
void hw_report_backlog(const kes_vdec* v) {
    if (!v->hw_backlog.empty())
        fail(KES_ERR_OUT_OF_MEMORY, "%s (%zu access unit(s) kept: the next call sends them first)", v->hw_oom.c_str(),
             v->hw_backlog.size());
}

// Moves the pictures the hardware gave back (in send order) into hw_ready, deciding now which ones will
// be delivered, as drain() does for the CPU. Waits at most wait_ms for the oldest frame in flight.
void hw_collect(kes_vdec* v, uint32_t wait_ms) {
    VdecPicture pic;
    while (v->hw->take(wait_ms, &pic)) {
        wait_ms = 0;
        const VdecFrameMeta& m = pic.meta();
        if (const uint32_t ret = pic.ret_code()) {
            // The board flags a bad frame as a decode failure and goes on (BOARD-RULES §VDEC), as the CPU path.
            ++v->stats.corrupt_packets;
            KES_LOGW("dvpp", "VDEC %s: the hardware gave no picture for access unit %llu (ret code %u); skipped",
                     v->source.c_str(), static_cast<unsigned long long>(m.ordinal), ret);
            continue;
        }
        ++v->stats.frames_decoded;
        const uint64_t index = v->cfg.keyframes_only ? m.ordinal : v->display_index;
        ++v->display_index;
        if (!v->cfg.keyframes_only && index % v->cfg.frame_interval != 0) {
            ++v->stats.frames_skipped;
            continue;
        }
        v->hw_ready.push_back({std::move(pic), index});
    }
}

// Sends one Annex-B access unit (the bytes stay the caller's) to the hardware.
void hw_submit(kes_vdec* v, const uint8_t* data, size_t size, VdecFrameMeta meta) {
    if (!v->hw_prefix.empty()) {
        v->hw_scratch.assign(v->hw_prefix.begin(), v->hw_prefix.end());
        v->hw_scratch.insert(v->hw_scratch.end(), data, data + size);
        size = v->hw_scratch.size();
        v->hw_scratch.resize(size + AV_INPUT_BUFFER_PADDING_SIZE, 0);
        data = v->hw_scratch.data();
        v->hw_prefix.clear();
    }
    AVCodecParserContext* p = v->packet_mode ? v->parser.get() : v->hw_parser.get();
    if (!v->packet_mode) {
        // Demuxed and filtered packets carry FFmpeg's padding, which the parser may read.
        uint8_t* out = nullptr;
        int out_size = 0;
        av_parser_parse2(p, v->hw_parse_ctx.get(), &out, &out_size, data, int(size), AV_NOPTS_VALUE, AV_NOPTS_VALUE, 0);
    }
    if (p->width > 0 && p->height > 0) {
        v->hw_width = uint32_t(p->width);
        v->hw_height = uint32_t(p->height);
    }
    // VDEC returns pictures in decode order: a picture shown before the one sent ahead of it (B-frames,
    // open-GOP leading pictures) would come back out of order. Refused, never delivered wrong.
    if (p->key_frame == 1 || meta.keyframe) v->hw_last_poc = INT_MIN;
    if (!v->cfg.keyframes_only) {
        if (p->output_picture_number < v->hw_last_poc)
            fail(KES_ERR_UNSUPPORTED,
                 "VDEC %s: access unit %llu is shown before the one sent ahead of it (B-frames): the DVPP "
                 "hardware returns pictures in decode order; create the decoder with backend KES_BACKEND_CPU",
                 v->source.c_str(), static_cast<unsigned long long>(meta.ordinal));
        v->hw_last_poc = p->output_picture_number;
    }
    meta.width = v->hw_width;
    meta.height = v->hw_height;
    if (meta.width == 0 || meta.height == 0) {
        ++v->stats.corrupt_packets;
        KES_LOGW("dvpp", "VDEC %s: access unit %llu comes before any parameter set (size unknown); skipped",
                 v->source.c_str(), static_cast<unsigned long long>(meta.ordinal));
        return;
    }
    const int64_t max_pixels = v->dec ? v->dec->max_pixels : int64_t(v->profile.vdec_max_dim) * v->profile.vdec_max_dim;
    if ((v->cfg.max_pixels && uint64_t(meta.width) * meta.height > v->cfg.max_pixels) ||
        int64_t(meta.width) * meta.height > max_pixels) {
        ++v->stats.corrupt_packets;  // as the CPU decoder refuses such a frame
        KES_LOGW("dvpp", "VDEC %s: access unit %llu is %ux%u, above the decoder's pixel limit; skipped",
                 v->source.c_str(), static_cast<unsigned long long>(meta.ordinal), meta.width, meta.height);
        return;
    }
    hw_send_unit(v, data, size, meta);
}

// Source mode: one demuxed packet to the hardware, through the Annex-B filter when the container needs it.
void hw_feed(kes_vdec* v, AVPacket* pkt) {
    auto meta_of = [](const AVPacket* p) {
        VdecFrameMeta m;
        m.pts = p->pts != AV_NOPTS_VALUE ? p->pts : p->dts;
        m.ordinal = uint64_t(p->pos);
        m.keyframe = (p->flags & AV_PKT_FLAG_KEY) != 0;
        return m;
    };
    if (!v->bsf) {
        hw_submit(v, pkt->data, size_t(pkt->size), meta_of(pkt));
        return;
    }
    const VdecFrameMeta in_meta = meta_of(pkt);
    int ret = av_bsf_send_packet(v->bsf.get(), pkt);
    if (ret < 0) {
        ++v->stats.corrupt_packets;
        KES_LOGW("dvpp", "VDEC %s: packet %llu refused by the Annex-B filter and skipped: %s", v->source.c_str(),
                 static_cast<unsigned long long>(in_meta.ordinal), av_error_text(ret).c_str());
        return;
    }
    for (;;) {
        AVPacket* out = v->hw_pkt.get();
        ret = av_bsf_receive_packet(v->bsf.get(), out);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return;
        if (ret < 0) {
            ++v->stats.corrupt_packets;
            KES_LOGW("dvpp", "VDEC %s: packet %llu refused by the Annex-B filter and skipped: %s", v->source.c_str(),
                     static_cast<unsigned long long>(in_meta.ordinal), av_error_text(ret).c_str());
            return;
        }
        std::unique_ptr<AVPacket, void (*)(AVPacket*)> unref(out, av_packet_unref);
        VdecFrameMeta m = meta_of(out);
        m.ordinal = in_meta.ordinal;  // one packet in, one access unit out
        hw_submit(v, out->data, size_t(out->size), m);
    }
}

// End of stream on the hardware: the kept unit, then EOS; every frame is back when it returns.
void hw_end(kes_vdec* v) {
    hw_send_backlog(v);
    v->hw->finish(kHwFrameTimeoutMs);
    v->hw_finished = true;
    hw_collect(v, 0);
}

// Delivers the oldest picture the hardware gave back. A full pool fails with the picture kept.
bool deliver_hw(kes_vdec* v, kes_vdec_frame* out) {
    if (v->hw_ready.empty()) return false;
    kes_vdec::HwReady& r = v->hw_ready.front();
    const VdecFrameMeta m = r.picture.meta();
    update_info(v, m.width, m.height, 8);
    r.picture.to_image(&out->image);
    out->pts = m.pts == AV_NOPTS_VALUE ? KES_VIDEO_NO_PTS
               : v->packet_mode        ? m.pts
                                       : av_rescale_q(m.pts, v->time_base, AVRational{1, 1000000});
    out->frame_index = r.index;
    out->keyframe = m.keyframe ? 1 : 0;
    out->concealed = 0;  // VDEC reports no concealment: a damaged frame is a failed frame
    ++v->stats.frames_delivered;
    v->hw_ready.pop_front();
    return true;
}

using FormatPtr = std::unique_ptr<AVFormatContext, FormatCloser>;

// Opens v->source and finds its video stream (H.264/H.265, and config.codec's if set); returns the
// stream's index. Network waits are bounded by timeout_ms. Throws kes::Error.
int open_input(kes_vdec* v, FormatPtr* out) {
    const char* src = v->source.c_str();
    if (!v->network) {
        struct stat st;
        if (stat(src, &st) != 0) {
            const int e = errno;
            fail(e == ENOENT || e == ENOTDIR ? KES_ERR_NOT_FOUND : KES_ERR_IO, "cannot open '%s': %s", src,
                 std::strerror(e));
        }
        if (S_ISDIR(st.st_mode)) fail(KES_ERR_IO, "'%s' is a directory", src);
    }
    AVFormatContext* raw = av_check_alloc(avformat_alloc_context(), "format context");
    raw->interrupt_callback.callback = interrupt_callback;
    raw->interrupt_callback.opaque = &v->deadline;
    AVDictionary* opts = nullptr;
    std::unique_ptr<AVDictionary*, void (*)(AVDictionary**)> opts_guard(&opts, av_dict_free);
    if (v->network) {
        av_dict_set(&opts, "rtsp_transport", v->cfg.rtsp_transport == KES_RTSP_UDP ? "udp" : "tcp", 0);
        av_dict_set_int(&opts, "timeout", int64_t(v->cfg.timeout_ms) * 1000, 0);  // rtsp: socket I/O, µs
        av_dict_set_int(&opts, "rw_timeout", int64_t(v->cfg.timeout_ms) * 1000, 0);
        // Live sources: a second of analysis is plenty for H.264/H.265 with parameter sets in band.
        raw->max_analyze_duration = 1000000;
        v->deadline.arm(v->cfg.timeout_ms);
    }
    int ret = avformat_open_input(&raw, src, nullptr, &opts);  // frees raw on failure
    if (ret < 0) {
        const bool late = v->deadline.passed();
        const kes_status st = late ? KES_ERR_TIMEOUT : av_error_status(ret);
        fail(st == KES_ERR_INVALID_ARGUMENT ? KES_ERR_CORRUPT_DATA : st, "cannot open '%s': %s%s", src,
             av_error_text(ret).c_str(), late ? " (timeout_ms passed)" : "");
    }
    out->reset(raw);
    if (v->network) v->deadline.arm(v->cfg.timeout_ms);
    ret = avformat_find_stream_info(raw, nullptr);
    if (ret < 0) {
        const kes_status st = v->deadline.passed() ? KES_ERR_TIMEOUT : KES_ERR_CORRUPT_DATA;
        fail(st, "'%s': cannot read the stream parameters: %s", src, av_error_text(ret).c_str());
    }
    v->deadline.disarm();
    const int idx = av_find_best_stream(raw, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (idx < 0) fail(KES_ERR_UNSUPPORTED, "'%s' has no video stream", src);
    const AVCodecParameters* par = raw->streams[idx]->codecpar;
    const kes_video_codec codec = codec_of(par->codec_id);
    if (codec == KES_VIDEO_CODEC_UNKNOWN)
        fail(KES_ERR_UNSUPPORTED, "'%s': video codec %s is not H.264 or H.265 (what VDEC decodes)", src,
             avcodec_get_name(par->codec_id));
    if (v->cfg.codec != KES_VIDEO_CODEC_UNKNOWN && v->cfg.codec != codec)
        fail(KES_ERR_UNSUPPORTED, "'%s' is %s, config.codec asks for %s", src, codec_name(codec),
             codec_name(v->cfg.codec));
    for (unsigned i = 0; i < raw->nb_streams; ++i)
        if (int(i) != idx) raw->streams[i]->discard = AVDISCARD_ALL;
    return idx;
}

void open_source(kes_vdec* v) {
    const int idx = open_input(v, &v->fmt);
    AVFormatContext* raw = v->fmt.get();
    const AVStream* st = raw->streams[idx];
    const AVCodecParameters* par = st->codecpar;
    const kes_video_codec codec = codec_of(par->codec_id);
    v->stream_index = idx;
    v->time_base = st->time_base;
    v->session_tb = st->time_base;

    v->info.codec = codec;
    const AVRational fps = st->avg_frame_rate.num > 0 ? st->avg_frame_rate : st->r_frame_rate;
    if (fps.num > 0 && fps.den > 0) {
        v->info.fps_num = uint32_t(fps.num);
        v->info.fps_den = uint32_t(fps.den);
    }
    if (raw->duration > 0) v->info.duration_us = raw->duration;
    const bool hardware = choose_source_hardware(v, par);
    // Refuse what the board refuses now, if the parameters already say so; frames are checked again.
    if (par->width > 0 && par->height > 0) {
        AvFramePtr probe(av_check_alloc(av_frame_alloc(), "probe frame"));
        probe->width = par->width;
        probe->height = par->height;
        probe->format = par->format >= 0 ? par->format : AV_PIX_FMT_YUV420P;
        check_frame(v, probe.get());
        const auto* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(probe->format));
        update_info(v, uint32_t(par->width), uint32_t(par->height), desc ? desc->comp[0].depth : 8);
    }
    if (hardware) {
        open_source_hardware(v, st);
        v->info.backend = KES_BACKEND_ASCEND;
    } else
        open_decoder(v, par->codec_id, par);
}

// Converts `f` into a new pool image of the channel's output format and size.
void convert(kes_vdec* v, const AVFrame* f, uint32_t ow, uint32_t oh, kes_image* out) {
    uint32_t ws = 0, hs = 0;
    check_sdk(kes_image_strides(v->out_format, ow, oh, KES_STRIDE_VDEC, v->profile.board, &ws, &hs),
              "VDEC output strides");
    check_sdk(kes_image_alloc(out, v->cfg.pool, v->out_format, ow, oh, ws, hs), "VDEC frame allocation");
    ImageGuard guard(out);
    uint8_t* y = static_cast<uint8_t*>(out->data);
    uint8_t* uv = y + size_t(ws) * hs;
    const bool nv21 = v->out_format == KES_PIXEL_NV21;
    AVPixelFormat src_fmt = static_cast<AVPixelFormat>(f->format);
    // The bytes go through unchanged: VDEC does not convert range (full-range JPEG-style YUV stays so).
    if (src_fmt == AV_PIX_FMT_YUVJ420P) src_fmt = AV_PIX_FMT_YUV420P;
    const bool resize = v->cfg.output_width != 0 && (ow != uint32_t(f->width) || oh != uint32_t(f->height));
    if (!resize && src_fmt == AV_PIX_FMT_YUV420P) {
        for (uint32_t r = 0; r < oh; ++r) std::memcpy(y + size_t(r) * ws, f->data[0] + size_t(r) * f->linesize[0], ow);
        const uint32_t cw = (ow + 1) / 2, ch = (oh + 1) / 2;
        const uint8_t* first = f->data[nv21 ? 2 : 1];
        const uint8_t* second = f->data[nv21 ? 1 : 2];
        const int ls_first = f->linesize[nv21 ? 2 : 1], ls_second = f->linesize[nv21 ? 1 : 2];
        for (uint32_t r = 0; r < ch; ++r)
            vpc::interleave_row(first + size_t(r) * ls_first, second + size_t(r) * ls_second, uv + size_t(r) * ws, cw);
    } else {
        // Resize (bilinear) and high-bit-depth conversion. Without a resize only the delivered area
        // (the even-rounded size on the boards) is read.
        const int sw = resize ? f->width : int(ow), sh = resize ? f->height : int(oh);
        v->sws.reset(sws_getCachedContext(v->sws.release(), sw, sh, src_fmt, int(ow), int(oh),
                                          nv21 ? AV_PIX_FMT_NV21 : AV_PIX_FMT_NV12, SWS_BILINEAR, nullptr, nullptr,
                                          nullptr));
        if (!v->sws)
            fail(KES_ERR_UNSUPPORTED, "no conversion from %s %dx%d to %ux%u", av_get_pix_fmt_name(src_fmt), sw, sh, ow,
                 oh);
        uint8_t* dst[4] = {y, uv, nullptr, nullptr};
        const int dst_ls[4] = {int(ws), int(ws), 0, 0};
        sws_scale(v->sws.get(), f->data, f->linesize, 0, sh, dst, dst_ls);
    }
    guard.disarm();
}

// Delivers the oldest ready frame, if any. A frame the board would refuse is dropped and the call
// fails; a full pool fails with the frame kept for the next call.
bool deliver_next(kes_vdec* v, kes_vdec_frame* out) {
    if (v->hw) return deliver_hw(v, out);
    if (v->ready.empty()) return false;
    ReadyFrame& rf = v->ready.front();
    const AVFrame* f = rf.frame.get();
    try {
        check_frame(v, f);
        if (v->cfg.output_width) {
            // VDEC resizes through VPC: VPC's scale limits apply (BOARD-RULES §VPC, §VDEC).
            const uint64_t ow = v->cfg.output_width, oh = v->cfg.output_height;
            const uint64_t den = v->profile.vpc_scale_min_den, mx = v->profile.vpc_scale_max;
            KES_REQUIRE(ow * den >= uint64_t(f->width) && oh * den >= uint64_t(f->height) &&
                            ow <= uint64_t(f->width) * mx && oh <= uint64_t(f->height) * mx,
                        "output %llux%llu from a %dx%d stream is outside VPC's scale range 1/%llu..%llu",
                        static_cast<unsigned long long>(ow), static_cast<unsigned long long>(oh), f->width, f->height,
                        static_cast<unsigned long long>(den), static_cast<unsigned long long>(mx));
        }
    } catch (...) {
        v->ready.pop_front();
        ++v->stats.frames_skipped;
        ++v->frames_dropped;
        throw;
    }
    const auto* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(f->format));
    update_info(v, uint32_t(f->width), uint32_t(f->height), desc ? desc->comp[0].depth : 8);
    convert(v, f, v->info.output_width, v->info.output_height, &out->image);
    const int64_t ts = f->best_effort_timestamp;
    out->pts = ts == AV_NOPTS_VALUE ? KES_VIDEO_NO_PTS
               : v->packet_mode     ? ts
                                    : av_rescale_q(ts, v->time_base, AVRational{1, 1000000});
    out->frame_index = rf.index;
    out->keyframe = f->key_frame ? 1 : 0;
    out->concealed = rf.concealed ? 1 : 0;
    ++v->stats.frames_delivered;
    v->ready.pop_front();
    return true;
}

// ---- health and reconnect (dvpp_video.h "Reconnect") ------------------------------------------------

// Copies the reading thread's view into the snapshot kes_vdec_get_health reads from any thread.
void publish_health(kes_vdec* v) noexcept {
    kes_vdec_health h{};
    h.struct_size = sizeof h;
    h.state = v->state;
    h.frames_decoded = v->stats.frames_decoded;
    h.frames_delivered = v->stats.frames_delivered;
    h.frames_dropped = v->stats.corrupt_packets + v->frames_dropped;
    h.reconnects = v->reconnects;
    h.reconnect_attempts = v->reconnect_attempts;
    h.failed_attempts = v->failed_attempts;
    h.last_error = v->last_error;
    const size_t n = std::min(v->last_error_text.size(), sizeof h.last_error_text - 1);
    std::memcpy(h.last_error_text, v->last_error_text.data(), n);
    h.last_error_text[n] = '\0';
    std::lock_guard<std::mutex> lock(v->health_mu);
    v->health = h;
    v->health_next_attempt_ns = v->state == KES_VDEC_STATE_RECONNECTING ? v->next_attempt_ns : 0;
}

void note_error(kes_vdec* v, kes_status status, const std::string& text) {
    v->last_error = status;
    v->last_error_text = text;
}

// Ends the channel for good: this read and every later one fail with KES_ERR_IO and `text`.
[[noreturn]] void stop_channel(kes_vdec* v, const std::string& text) {
    v->stopped = true;
    v->stop_text = text;
    v->state = KES_VDEC_STATE_STOPPED;
    note_error(v, KES_ERR_IO, text);
    publish_health(v);
    fail(KES_ERR_IO, "%s", text.c_str());
}

// The next attempt waits delay_ms from now; the one after waits twice as long, up to the maximum.
void schedule_next_attempt(kes_vdec* v) {
    v->next_attempt_ns = steady_now_ns() + int64_t(v->delay_ms) * 1000000;
    v->delay_ms = uint32_t(std::min<uint64_t>(uint64_t(v->delay_ms) * 2, v->cfg.reconnect_max_delay_ms));
}

// A failed attempt (or a connection that dropped before it gave a packet): the next one waits longer,
// or the channel gives up.
void attempt_failed(kes_vdec* v, kes_status status, const std::string& why) {
    ++v->failed_attempts;
    note_error(v, status, why);
    KES_LOGW("dvpp", "VDEC %s: reconnect attempt %u failed: %s", v->source.c_str(), v->failed_attempts, why.c_str());
    if (v->cfg.reconnect_max_attempts && v->failed_attempts >= v->cfg.reconnect_max_attempts)
        stop_channel(v, format("'%s': gave up after %u reconnect attempts (lost: %s; last attempt: %s)",
                               v->source.c_str(), v->failed_attempts, v->loss_cause.c_str(), why.c_str()));
    schedule_next_attempt(v);
    publish_health(v);
}

// The connection is gone (`status`, `cause`): what the decoder holds is kept for delivery, the input is
// closed and the first attempt is scheduled.
void lose_connection(kes_vdec* v, kes_status status, const std::string& cause) {
    const std::string text = format("'%s': %s", v->source.c_str(), cause.c_str());
    KES_LOGW("dvpp", "VDEC %s: connection lost (%s); reconnecting", v->source.c_str(), cause.c_str());
    v->deadline.arm(v->cfg.timeout_ms);  // closing sends TEARDOWN: never wait on a dead peer for long
    v->fmt.reset();
    v->deadline.disarm();
    if (!v->hw && v->dec) {
        // The frames in flight are the last of this connection: deliver them; a new decoder starts afresh.
        send(v, nullptr);
        v->dec.reset();
        v->flush_sent = v->decoder_drained = false;
        v->drain_errors = 0;
    }
    v->link_down = true;
    v->state = KES_VDEC_STATE_RECONNECTING;
    if (v->session_proved) {
        v->loss_cause = cause;
        v->failed_attempts = 0;
        v->delay_ms = v->cfg.reconnect_delay_ms;
        schedule_next_attempt(v);
        note_error(v, status, text);
        publish_health(v);
    } else {
        attempt_failed(v, status, "connected, then lost before any packet: " + cause);
    }
}

// Opens the source again; throws kes::Error (the attempt failed).
void reopen(kes_vdec* v) {
    FormatPtr fmt;
    const int idx = open_input(v, &fmt);
    const AVStream* st = fmt->streams[idx];
    const AVCodecParameters* par = st->codecpar;
    const kes_video_codec codec = codec_of(par->codec_id);
    if (codec != v->info.codec)
        fail(KES_ERR_UNSUPPORTED, "'%s' came back as %s, was %s", v->source.c_str(), codec_name(codec),
             codec_name(v->info.codec));
    if (v->hw) {
        // The hardware decodes on: the new parameter sets go ahead of the next unit, a key frame.
        if (starts_annexb(par->extradata, par->extradata_size))
            v->hw_prefix.assign(par->extradata, par->extradata + par->extradata_size);
        if (v->bsf) av_bsf_flush(v->bsf.get());
        v->hw_last_poc = INT_MIN;
    } else {
        open_decoder(v, par->codec_id, par);
    }
    v->fmt = std::move(fmt);
    v->stream_index = idx;
    v->session_tb = st->time_base;
}

// One step of reconnecting: waits for the next attempt (not past the call's deadline: then
// KES_ERR_TIMEOUT) and makes it. Returns with the link up, or down with the next attempt scheduled.
void reconnect_step(kes_vdec* v, int64_t call_deadline_ns) {
    const int64_t now = steady_now_ns();
    if (v->next_attempt_ns > now) {
        if (v->next_attempt_ns > call_deadline_ns) {
            if (call_deadline_ns > now) std::this_thread::sleep_for(std::chrono::nanoseconds(call_deadline_ns - now));
            fail(KES_ERR_TIMEOUT,
                 "'%s': no frame within timeout_ms = %u: reconnecting (lost: %s; %u attempt(s) failed so far%s%s)",
                 v->source.c_str(), v->cfg.timeout_ms, v->loss_cause.c_str(), v->failed_attempts,
                 v->failed_attempts ? ", last: " : "", v->failed_attempts ? v->last_error_text.c_str() : "");
        }
        std::this_thread::sleep_for(std::chrono::nanoseconds(v->next_attempt_ns - now));
    }
    ++v->reconnect_attempts;
    publish_health(v);
    try {
        reopen(v);
    } catch (const Error& e) {
        attempt_failed(v, e.status(), e.what());
        return;
    }
    KES_LOGI("dvpp", "VDEC %s: reconnected after %u failed attempt(s)", v->source.c_str(), v->failed_attempts);
    ++v->reconnects;
    v->link_down = false;
    v->session_proved = false;  // until the new connection gives a packet
    v->session_packets = 0;
    v->wait_keyframe = true;
    v->pts_rebase = true;
    v->state = KES_VDEC_STATE_RUNNING;
    publish_health(v);
}

// A network packet of the video stream: the first frame's missing timestamp, the wait for a key frame
// after a reconnect, and the move onto the channel's timeline. False: pass it over.
bool accept_network_packet(kes_vdec* v, AVPacket* pkt) {
    // RTP packets have no byte position (pos -1), and FFmpeg's demuxer-side parser then never takes
    // the timestamp of the first access unit it assembles (av_parser_parse2 starts its offsets at
    // pos, so the first frame's descriptor is never matched): the first RTSP frame came out as
    // KES_VIDEO_NO_PTS although the depacketizer had stamped it. rtpdec counts the session's
    // timestamps from its first RTP packet, which is this frame's: that is 0. Each connection is a
    // new session.
    if (v->session_packets++ == 0 && pkt->pts == AV_NOPTS_VALUE && pkt->dts == AV_NOPTS_VALUE) pkt->pts = pkt->dts = 0;
    const int64_t now = steady_now_ns();
    if (!v->session_proved) {
        v->session_proved = true;  // the camera is really back: the next loss starts the backoff afresh
        v->failed_attempts = 0;
    }
    if (v->wait_keyframe) {
        if (!(pkt->flags & AV_PKT_FLAG_KEY)) {
            ++v->frames_dropped;
            return false;
        }
        v->wait_keyframe = false;
    }
    if (av_cmp_q(v->session_tb, v->time_base) != 0) av_packet_rescale_ts(pkt, v->session_tb, v->time_base);
    if (v->pts_rebase) {
        const int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
        if (ts != AV_NOPTS_VALUE) {
            v->pts_rebase = false;
            const int64_t gap = std::max<int64_t>(
                av_rescale_q(std::max<int64_t>(now - v->last_packet_ns, 0), AVRational{1, 1000000000}, v->time_base),
                1);
            v->pts_offset = (v->last_pts != AV_NOPTS_VALUE ? v->last_pts + gap : 0) - ts;
        }
    }
    if (pkt->pts != AV_NOPTS_VALUE) pkt->pts += v->pts_offset;
    if (pkt->dts != AV_NOPTS_VALUE) pkt->dts += v->pts_offset;
    const int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
    if (ts != AV_NOPTS_VALUE && (v->last_pts == AV_NOPTS_VALUE || ts > v->last_pts)) v->last_pts = ts;
    v->last_packet_ns = now;
    return true;
}

// Source mode: reads one packet of the video stream and sends it; at the end of input, the flush.
void feed_from_source(kes_vdec* v) {
    AVPacket* pkt = v->pkt.get();
    if (v->network) v->deadline.arm(v->cfg.timeout_ms);
    const int ret = av_read_frame(v->fmt.get(), pkt);
    v->deadline.disarm();
    if (ret == AVERROR(EAGAIN)) return;
    if (ret < 0) {
        if (v->network) {
            const bool timed_out = v->deadline.expired || ret == AVERROR(ETIMEDOUT);
            const std::string cause = timed_out            ? format("no data within timeout_ms = %u", v->cfg.timeout_ms)
                                      : ret == AVERROR_EOF ? std::string("the server ended the stream")
                                                           : "read failed: " + av_error_text(ret);
            if (v->reconnect) {
                // A live source never ends: the end of the stream is a loss too.
                lose_connection(v, timed_out ? KES_ERR_TIMEOUT : KES_ERR_IO, cause);
                return;
            }
            if (timed_out) {
                note_error(v, KES_ERR_TIMEOUT, format("'%s': %s", v->source.c_str(), cause.c_str()));
                fail(KES_ERR_TIMEOUT, "%s", v->last_error_text.c_str());
            }
            if (ret != AVERROR_EOF) stop_channel(v, format("'%s': %s", v->source.c_str(), cause.c_str()));
        }
        // A file ends at EOF, or where it is truncated or unreadable: decode what was read.
        if (ret != AVERROR_EOF)
            KES_LOGW("dvpp", "VDEC %s: input ends early: %s", v->source.c_str(), av_error_text(ret).c_str());
        v->input_done = true;
        if (v->hw)
            hw_end(v);
        else
            send(v, nullptr);
        return;
    }
    std::unique_ptr<AVPacket, void (*)(AVPacket*)> unref(pkt, av_packet_unref);
    if (pkt->stream_index != v->stream_index) return;
    if (v->network && !accept_network_packet(v, pkt)) return;
    const uint64_t ordinal = v->packet_ordinal++;
    if (v->cfg.keyframes_only && !(pkt->flags & AV_PKT_FLAG_KEY)) return;
    pkt->pos = int64_t(ordinal);
    if (v->hw)
        hw_feed(v, pkt);
    else
        send(v, pkt);
}

void submit_parsed(kes_vdec* v, uint8_t* data, int size) {
    const uint64_t ordinal = v->packet_ordinal++;
    if (v->cfg.keyframes_only && !v->parser->key_frame) return;
    if (v->hw && !v->hw_decided) decide_packet_hardware(v);
    if (v->hw) {
        VdecFrameMeta m;
        m.pts = v->parser->pts != AV_NOPTS_VALUE ? v->parser->pts : v->parser->dts;
        m.ordinal = ordinal;
        m.keyframe = v->parser->key_frame == 1;
        hw_submit(v, data, size_t(size), m);
        return;
    }
    AVPacket* pkt = v->pkt.get();
    av_packet_unref(pkt);
    pkt->data = data;  // not reference-counted: avcodec_send_packet copies it
    pkt->size = size;
    pkt->pts = v->parser->pts;
    pkt->dts = v->parser->dts;
    pkt->pos = int64_t(ordinal);
    if (v->parser->key_frame == 1) pkt->flags |= AV_PKT_FLAG_KEY;
    send(v, pkt);
    pkt->data = nullptr;
    pkt->size = 0;
}

void parse(kes_vdec* v, const uint8_t* data, size_t size, int64_t pts) {
    const int64_t ts = pts == KES_VIDEO_NO_PTS ? AV_NOPTS_VALUE : pts;
    if (size == 0) {  // the parser's last frame
        uint8_t* out = nullptr;
        int out_size = 0;
        av_parser_parse2(v->parser.get(), v->dec.get(), &out, &out_size, nullptr, 0, ts, ts, 0);
        if (out_size > 0) submit_parsed(v, out, out_size);
        return;
    }
    while (size > 0) {
        const int chunk = int(std::min<size_t>(size, INT_MAX / 2));
        uint8_t* out = nullptr;
        int out_size = 0;
        const int used = av_parser_parse2(v->parser.get(), v->dec.get(), &out, &out_size, data, chunk, ts, ts, 0);
        if (used < 0) {
            ++v->stats.corrupt_packets;
            KES_LOGW("dvpp", "VDEC: parser rejected %d bytes: %s", chunk, av_error_text(used).c_str());
            return;
        }
        data += used;
        size -= size_t(used);
        if (out_size > 0) submit_parsed(v, out, out_size);
        if (used == 0 && out_size == 0) break;  // never spin on a parser that takes nothing
    }
}

void zero_frame(kes_vdec_frame* f) {
    std::memset(f, 0, sizeof *f);
    f->pts = KES_VIDEO_NO_PTS;
}

}  // namespace
}  // namespace kes

extern "C" {

void kes_vdec_config_init(kes_vdec_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->output_format = KES_PIXEL_NV12;
    config->frame_interval = 1;
    config->rtsp_transport = KES_RTSP_TCP;
    config->timeout_ms = kes::kDefaultTimeoutMs;
}

kes_status kes_vdec_create(const kes_vdec_config* config, kes_vdec** out_vdec) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vdec_create");
        kes::route_ffmpeg_log();
        KES_REQUIRE_NOT_NULL(out_vdec);
        *out_vdec = nullptr;
        KES_REQUIRE_NOT_NULL(config);
        auto v = std::make_unique<kes_vdec>();
        kes_vdec_config_init(&v->cfg);
        kes::read_struct(config, KES_STRUCT_SIZE_THROUGH(kes_vdec_config, max_pixels), "config", "kes_vdec_config",
                         &v->cfg);
        const kes_vdec_config full = v->cfg;  // the caller's struct may be shorter: read this from here on
        config = &full;
        const kes_board_profile* profile = config->board_profile ? config->board_profile : kes_board_active_profile();
        KES_REQUIRE(profile != nullptr, "no board profile");
        v->profile = *profile;
        v->cfg.board_profile = nullptr;

        const int64_t fmt = kes::enum_value(config->output_format);
        KES_REQUIRE(fmt == KES_PIXEL_NV12 || fmt == KES_PIXEL_NV21,
                    "output_format %lld: VDEC writes NV12 (1) or NV21 (2) only", static_cast<long long>(fmt));
        v->out_format = static_cast<kes_pixel_format>(fmt);
        const int64_t codec = kes::enum_value(config->codec);
        KES_REQUIRE(codec >= KES_VIDEO_CODEC_UNKNOWN && codec <= KES_VIDEO_CODEC_H265,
                    "codec %lld is not a kes_video_codec", static_cast<long long>(codec));
        v->cfg.codec = static_cast<kes_video_codec>(codec);
        const int64_t transport = kes::enum_value(config->rtsp_transport);
        KES_REQUIRE(transport == KES_RTSP_TCP || transport == KES_RTSP_UDP,
                    "rtsp_transport %lld is not a kes_rtsp_transport", static_cast<long long>(transport));
        v->cfg.rtsp_transport = static_cast<kes_rtsp_transport>(transport);
        KES_REQUIRE(config->frame_interval >= 1, "frame_interval must be >= 1 (got 0)");
        KES_REQUIRE(!(config->keyframes_only && config->frame_interval > 1),
                    "keyframes_only and frame_interval %u > 1 cannot be combined", config->frame_interval);
        KES_REQUIRE((config->output_width == 0) == (config->output_height == 0),
                    "output_width and output_height must both be 0 or both set (got %ux%u)", config->output_width,
                    config->output_height);
        if (config->output_width) {
            const kes_board_profile& p = v->profile;
            KES_REQUIRE(config->output_width % 2 == 0 && config->output_height % 2 == 0,
                        "output size %ux%u must be even (VDEC writes 4:2:0)", config->output_width,
                        config->output_height);
            KES_REQUIRE(config->output_width >= p.vpc_min_width && config->output_height >= p.vpc_min_height &&
                            config->output_width <= p.vpc_max_output_width &&
                            config->output_height <= p.vpc_max_output_height,
                        "output size %ux%u is outside %ux%u..%ux%u (VDEC resizes through VPC, %s profile)",
                        config->output_width, config->output_height, p.vpc_min_width, p.vpc_min_height,
                        p.vpc_max_output_width, p.vpc_max_output_height, p.name);
        }
        if (v->cfg.timeout_ms == 0) v->cfg.timeout_ms = kes::kDefaultTimeoutMs;

        v->packet_mode = config->source == nullptr;
        if (v->packet_mode) {
            KES_REQUIRE(v->cfg.codec != KES_VIDEO_CODEC_UNKNOWN, "packet mode (source NULL) needs config.codec");
            v->source = "<packets>";
        } else {
            KES_REQUIRE(config->source[0] != '\0', "config.source is empty");
            v->source = config->source;
            v->network = kes::is_network(v->source);
        }
        v->cfg.source = nullptr;
        const int64_t reconnect = kes::enum_value(config->reconnect);
        KES_REQUIRE(reconnect >= KES_VDEC_RECONNECT_AUTO && reconnect <= KES_VDEC_RECONNECT_ON,
                    "reconnect %lld is not a kes_vdec_reconnect", static_cast<long long>(reconnect));
        KES_REQUIRE(reconnect != KES_VDEC_RECONNECT_ON || v->network,
                    "reconnect ON needs a network source ('%s' is not one)", v->source.c_str());
        v->cfg.reconnect = static_cast<kes_vdec_reconnect>(reconnect);
        v->reconnect =
            reconnect == KES_VDEC_RECONNECT_ON || (reconnect == KES_VDEC_RECONNECT_AUTO && kes::is_rtsp(v->source));
        if (v->cfg.reconnect_delay_ms == 0) v->cfg.reconnect_delay_ms = kes::kDefaultReconnectDelayMs;
        if (v->cfg.reconnect_max_delay_ms == 0)
            v->cfg.reconnect_max_delay_ms = std::max(kes::kDefaultReconnectMaxDelayMs, v->cfg.reconnect_delay_ms);
        KES_REQUIRE(v->cfg.reconnect_max_delay_ms >= v->cfg.reconnect_delay_ms,
                    "reconnect_max_delay_ms %u is below reconnect_delay_ms %u", v->cfg.reconnect_max_delay_ms,
                    v->cfg.reconnect_delay_ms);

        v->hw_api = kes::vdec_hardware_api(config->backend, v->profile);

        if (!kes::reserve_channel(v->profile.vdec_max_channels))
            KES_FAIL(KES_ERR_BUSY, "all %u VDEC channels of the %s profile are in use", v->profile.vdec_max_channels,
                     v->profile.name);
        v->channel_reserved = true;
        v->pkt.reset(kes::av_check_alloc(av_packet_alloc(), "packet"));
        v->info.struct_size = sizeof v->info;

        if (v->packet_mode) {
            const AVCodecID id = kes::codec_id_of(v->cfg.codec);
            v->info.codec = v->cfg.codec;
            v->parser.reset(av_parser_init(id));
            if (!v->parser) KES_FAIL(KES_ERR_UNSUPPORTED, "this FFmpeg has no %s parser", avcodec_get_name(id));
            kes::open_decoder(v.get(), id, nullptr);
            if (v->hw_api)
                v->hw = std::make_unique<kes::VdecHardware>(*v->hw_api, v->profile,
                                                            kes::hw_stream_format(v->cfg.codec, FF_PROFILE_UNKNOWN),
                                                            v->out_format, v->cfg.pool);
        } else {
            kes::open_source(v.get());
        }
        kes::publish_health(v.get());
        *out_vdec = v.release();
        return KES_OK;
    });
}

void kes_vdec_destroy(kes_vdec* vdec) {
    delete vdec;
}

kes_status kes_vdec_read_frame(kes_vdec* vdec, kes_vdec_frame* out_frame) {
    const kes_status st = kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vdec_read_frame");
        KES_REQUIRE_NOT_NULL(vdec);
        KES_REQUIRE_NOT_NULL(out_frame);
        kes::zero_frame(out_frame);
        KES_REQUIRE(!vdec->packet_mode, "the channel is in packet mode: use kes_vdec_receive_frame");
        if (vdec->stopped) KES_FAIL(KES_ERR_IO, "%s", vdec->stop_text.c_str());
        // While reconnecting a call waits at most timeout_ms for a frame (dvpp_video.h "Reconnect").
        const int64_t call_deadline = kes::steady_now_ns() + int64_t(vdec->cfg.timeout_ms) * 1000000;
        while (vdec->hw) {
            kes::hw_send_backlog(vdec);
            kes::hw_collect(vdec, 0);
            if (kes::deliver_next(vdec, out_frame)) return KES_OK;
            if (vdec->hw_finished && vdec->hw->pending() == 0) {
                out_frame->end_of_stream = 1;
                vdec->state = KES_VDEC_STATE_ENDED;
                return KES_OK;
            }
            if (vdec->input_done) {
                kes::hw_end(vdec);
            } else if (vdec->link_down) {
                // Frames still in flight come back before the wait.
                if (vdec->hw->pending() && vdec->hw_ready.empty()) {
                    kes::hw_collect(vdec, kes::kHwFrameTimeoutMs);
                    if (!vdec->hw_ready.empty()) continue;
                }
                kes::reconnect_step(vdec, call_deadline);
            } else {
                kes::feed_from_source(vdec);
                kes::hw_report_backlog(vdec);
            }
        }
        for (;;) {
            if (kes::deliver_next(vdec, out_frame)) return KES_OK;
            if (vdec->decoder_drained) {
                out_frame->end_of_stream = 1;
                vdec->state = KES_VDEC_STATE_ENDED;
                return KES_OK;
            }
            if (vdec->input_done)
                kes::drain(vdec);
            else if (vdec->link_down)
                kes::reconnect_step(vdec, call_deadline);
            else
                kes::feed_from_source(vdec);
        }
    });
    if (vdec) kes::publish_health(vdec);
    return st;
}

kes_status kes_vdec_send_packet(kes_vdec* vdec, const void* data, size_t size, int64_t pts) {
    const kes_status st = kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vdec_send_packet");
        KES_REQUIRE_NOT_NULL(vdec);
        KES_REQUIRE(vdec->packet_mode, "the channel reads '%s' itself: use kes_vdec_read_frame", vdec->source.c_str());
        KES_REQUIRE(!vdec->input_done, "the end of the stream was already sent");
        if (!data || size == 0) {
            kes::parse(vdec, nullptr, 0, pts);
            vdec->input_done = true;
            if (vdec->hw)
                kes::hw_end(vdec);
            else
                kes::send(vdec, nullptr);
            return KES_OK;
        }
        if (vdec->hw) {
            // Units kept for want of memory go first; if there is still none, the new ones join them.
            try {
                kes::hw_send_backlog(vdec);
            } catch (const kes::Error& e) {
                if (e.status() != KES_ERR_OUT_OF_MEMORY) throw;
                vdec->hw_oom = e.what();
            }
        }
        // FFmpeg's parsers may read a little past the end of their input.
        vdec->padded.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
        vdec->padded.resize(size + AV_INPUT_BUFFER_PADDING_SIZE, 0);
        kes::parse(vdec, vdec->padded.data(), size, pts);
        if (vdec->hw) kes::hw_report_backlog(vdec);
        return KES_OK;
    });
    if (vdec) kes::publish_health(vdec);
    return st;
}

kes_status kes_vdec_receive_frame(kes_vdec* vdec, kes_vdec_frame* out_frame) {
    const kes_status st = kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vdec_receive_frame");
        KES_REQUIRE_NOT_NULL(vdec);
        KES_REQUIRE_NOT_NULL(out_frame);
        kes::zero_frame(out_frame);
        KES_REQUIRE(vdec->packet_mode, "the channel reads '%s' itself: use kes_vdec_read_frame", vdec->source.c_str());
        while (vdec->hw) {
            kes::hw_send_backlog(vdec);
            kes::hw_collect(vdec, vdec->hw->pending() ? kes::kHwReceiveWaitMs : 0);
            if (kes::deliver_next(vdec, out_frame)) return KES_OK;
            if (vdec->hw_finished && vdec->hw->pending() == 0) {
                out_frame->end_of_stream = 1;
                vdec->state = KES_VDEC_STATE_ENDED;
                return KES_OK;
            }
            if (!vdec->input_done)
                return kes::set_error(KES_ERR_BUSY, "kes_vdec_receive_frame: no frame ready yet: send more packets");
            kes::hw_end(vdec);
        }
        for (;;) {
            if (kes::deliver_next(vdec, out_frame)) return KES_OK;
            if (vdec->decoder_drained) {
                out_frame->end_of_stream = 1;
                vdec->state = KES_VDEC_STATE_ENDED;
                return KES_OK;
            }
            if (!vdec->input_done)
                return kes::set_error(KES_ERR_BUSY, "kes_vdec_receive_frame: no frame ready yet: send more packets");
            kes::drain(vdec);
        }
    });
    if (vdec) kes::publish_health(vdec);
    return st;
}

kes_status kes_vdec_get_stream_info(kes_vdec* vdec, kes_vdec_stream_info* out_info) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(vdec);
        KES_REQUIRE_NOT_NULL(out_info);
        kes::check_out_struct(out_info, KES_STRUCT_SIZE_THROUGH(kes_vdec_stream_info, frame_size), "out_info",
                              "kes_vdec_stream_info");
        if (!vdec->have_info)
            return kes::set_error(KES_ERR_BUSY, "kes_vdec_get_stream_info: no frame decoded yet (packet mode)");
        kes::write_struct(vdec->info, out_info);
        return KES_OK;
    });
}

kes_status kes_vdec_get_stats(const kes_vdec* vdec, kes_vdec_stats* out_stats) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(vdec);
        KES_REQUIRE_NOT_NULL(out_stats);
        *out_stats = vdec->stats;
        return KES_OK;
    });
}

kes_status kes_vdec_get_health(const kes_vdec* vdec, kes_vdec_health* out_health) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(vdec);
        kes::check_out_struct(out_health, KES_STRUCT_SIZE_THROUGH(kes_vdec_health, last_error_text), "out_health",
                              "kes_vdec_health");
        kes_vdec_health h;
        int64_t next_attempt_ns;
        {
            std::lock_guard<std::mutex> lock(vdec->health_mu);
            h = vdec->health;
            next_attempt_ns = vdec->health_next_attempt_ns;
        }
        if (next_attempt_ns) {
            const int64_t left = next_attempt_ns - kes::steady_now_ns();
            h.next_attempt_ms = left > 0 ? uint32_t(std::min<int64_t>((left + 999999) / 1000000, UINT32_MAX)) : 0;
        }
        kes::write_struct(h, out_health);
        return KES_OK;
    });
}

uint32_t kes_vdec_open_channels(void) {
    return kes::g_open_channels.load();
}

}  // extern "C"
