// video_ffmpeg.hpp — RAII for FFmpeg objects and FFmpeg error → kes_status mapping (VDEC/VENC; not installed).
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <string>

#include "kes/error.hpp"
#include "kestrel/dvpp_video.h"

namespace kes {

struct AvFrameDeleter {
    void operator()(AVFrame* f) const noexcept { av_frame_free(&f); }
};
using AvFramePtr = std::unique_ptr<AVFrame, AvFrameDeleter>;

struct AvPacketDeleter {
    void operator()(AVPacket* p) const noexcept { av_packet_free(&p); }
};
using AvPacketPtr = std::unique_ptr<AVPacket, AvPacketDeleter>;

struct AvCodecContextDeleter {
    void operator()(AVCodecContext* c) const noexcept { avcodec_free_context(&c); }
};
using AvCodecContextPtr = std::unique_ptr<AVCodecContext, AvCodecContextDeleter>;

struct AvParserDeleter {
    void operator()(AVCodecParserContext* p) const noexcept { av_parser_close(p); }
};
using AvParserPtr = std::unique_ptr<AVCodecParserContext, AvParserDeleter>;

struct AvBsfDeleter {
    void operator()(AVBSFContext* b) const noexcept { av_bsf_free(&b); }
};
using AvBsfPtr = std::unique_ptr<AVBSFContext, AvBsfDeleter>;

struct SwsDeleter {
    void operator()(SwsContext* s) const noexcept { sws_freeContext(s); }
};
using SwsPtr = std::unique_ptr<SwsContext, SwsDeleter>;

struct AvDictDeleter {
    void operator()(AVDictionary* d) const noexcept { av_dict_free(&d); }
};

// FFmpeg's text for an AVERROR code.
std::string av_error_text(int err);

// The kes_status kind of an FFmpeg error (ENOENT → NOT_FOUND, INVALIDDATA → CORRUPT_DATA, ...).
kes_status av_error_status(int err);

// Allocation results of FFmpeg calls that return NULL on failure.
template <class T>
T* av_check_alloc(T* p, const char* what) {
    if (!p) ::kes::fail(KES_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    return p;
}

// Routes FFmpeg's av_log (libx264's included) through Kestrel's logger, module "ffmpeg"; once per
// process, at the first VDEC or VENC channel (kestrel/dvpp_video.h).
void route_ffmpeg_log();

AVCodecID codec_id_of(kes_video_codec codec);
kes_video_codec codec_of(AVCodecID id);
const char* codec_name(kes_video_codec codec);

}  // namespace kes
