// VENC on the host: NV12/NV21 frames → libx264/libx265 through libavcodec → MP4 or Annex-B through
// libavformat (dvpp_video.h, BOARD-RULES §VENC).
#include <cstring>
#include <string>

extern "C" {
#include <libavutil/opt.h>
}

#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "video_ffmpeg.hpp"

namespace kes {
namespace {

struct OutputCloser {
    void operator()(AVFormatContext* f) const noexcept {
        if (!f) return;
        if (f->pb && !(f->oformat->flags & AVFMT_NOFILE)) avio_closep(&f->pb);
        avformat_free_context(f);
    }
};

constexpr uint32_t kDefaultGop = 30;

}  // namespace
}  // namespace kes

struct kes_venc {
    kes_board_profile profile{};
    kes_venc_config cfg{};
    std::string path;
    std::unique_ptr<AVFormatContext, kes::OutputCloser> fmt;
    AVStream* stream = nullptr;
    kes::AvCodecContextPtr enc;
    kes::AvFramePtr frame;
    kes::AvPacketPtr pkt;
    int64_t next_pts = 0;
    bool finished = false;
    uint64_t frames = 0, bytes = 0;
};

namespace kes {
namespace {

// Writes every packet the encoder has ready.
void write_packets(kes_venc* v) {
    for (;;) {
        const int ret = avcodec_receive_packet(v->enc.get(), v->pkt.get());
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return;
        if (ret < 0) fail(KES_ERR_INTERNAL, "encoder failed: %s", av_error_text(ret).c_str());
        // The encoder's time base is one frame, and libx264/libx265 leave the duration at 0. MP4 keeps
        // durations in its sample table, so a 0 there made the last frame last nothing: readers
        // (FFmpeg, kes_vdec, players) dropped it and the stream was one frame short.
        if (v->pkt->duration <= 0) v->pkt->duration = 1;
        av_packet_rescale_ts(v->pkt.get(), v->enc->time_base, v->stream->time_base);
        v->pkt->stream_index = v->stream->index;
        v->bytes += uint64_t(v->pkt->size);
        const int wret = av_interleaved_write_frame(v->fmt.get(), v->pkt.get());  // takes the packet
        if (wret < 0) fail(KES_ERR_IO, "cannot write '%s': %s", v->path.c_str(), av_error_text(wret).c_str());
    }
}

void finish(kes_venc* v) {
    if (v->finished) return;
    v->finished = true;
    const int ret = avcodec_send_frame(v->enc.get(), nullptr);
    if (ret < 0 && ret != AVERROR_EOF) fail(KES_ERR_INTERNAL, "encoder flush failed: %s", av_error_text(ret).c_str());
    write_packets(v);
    const int tret = av_write_trailer(v->fmt.get());
    if (tret < 0) fail(KES_ERR_IO, "cannot finish '%s': %s", v->path.c_str(), av_error_text(tret).c_str());
    if (v->fmt->pb) {
        const int cret = avio_closep(&v->fmt->pb);
        if (cret < 0) fail(KES_ERR_IO, "cannot close '%s': %s", v->path.c_str(), av_error_text(cret).c_str());
    }
}

}  // namespace
}  // namespace kes

extern "C" {

void kes_venc_config_init(kes_venc_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->container = KES_VENC_CONTAINER_MP4;
    config->codec = KES_VIDEO_CODEC_H264;
    config->fps_num = 30;
    config->fps_den = 1;
    config->gop = kes::kDefaultGop;
}

kes_status kes_venc_create(const kes_venc_config* config, kes_venc** out_venc) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "venc_create");
        kes::route_ffmpeg_log();
        KES_REQUIRE_NOT_NULL(out_venc);
        *out_venc = nullptr;
        KES_REQUIRE_NOT_NULL(config);
        auto v = std::make_unique<kes_venc>();
        kes_venc_config_init(&v->cfg);
        kes::read_struct(config, KES_STRUCT_SIZE_THROUGH(kes_venc_config, threads), "config", "kes_venc_config",
                         &v->cfg);
        config = &v->cfg;  // the full struct from here on
        const kes_board_profile* profile = config->board_profile ? config->board_profile : kes_board_active_profile();
        KES_REQUIRE(profile != nullptr, "no board profile");
        v->profile = *profile;
        KES_REQUIRE(config->path != nullptr && config->path[0] != '\0', "config.path is NULL or empty");
        v->path = config->path;
        const int64_t codec = kes::enum_value(config->codec);
        KES_REQUIRE(codec == KES_VIDEO_CODEC_H264 || codec == KES_VIDEO_CODEC_H265,
                    "codec %lld: VENC writes H.264 (1) or H.265 (2)", static_cast<long long>(codec));
        const int64_t container = kes::enum_value(config->container);
        KES_REQUIRE(container == KES_VENC_CONTAINER_MP4 || container == KES_VENC_CONTAINER_ANNEXB,
                    "container %lld is not a kes_venc_container", static_cast<long long>(container));
        const uint32_t w = config->width, h = config->height;
        KES_REQUIRE(w % 2 == 0 && h % 2 == 0 && w > 0 && h > 0, "frame size %ux%u must be even and non-zero", w, h);
        KES_REQUIRE(w >= profile->venc_min_dim && h >= profile->venc_min_dim && w <= profile->venc_max_dim &&
                        h <= profile->venc_max_dim,
                    "frame size %ux%u is outside VENC's %u..%u per side on the %s profile", w, h, profile->venc_min_dim,
                    profile->venc_max_dim, profile->name);
        KES_REQUIRE(
            config->fps_num > 0 && config->fps_den > 0 && config->fps_num <= 1000000 && config->fps_den <= 1000000,
            "frame rate %u/%u must have both terms in 1..1000000", config->fps_num, config->fps_den);
        KES_REQUIRE(config->gop >= 1, "gop must be >= 1 (got 0)");
        KES_REQUIRE(config->bitrate_kbps <= 1000000, "bitrate_kbps %u is above 1000000", config->bitrate_kbps);

        const bool h265 = codec == KES_VIDEO_CODEC_H265;
        const char* encoder_name = h265 ? "libx265" : "libx264";
        const AVCodec* enc = avcodec_find_encoder_by_name(encoder_name);
        if (!enc) KES_FAIL(KES_ERR_UNSUPPORTED, "this FFmpeg has no %s encoder", encoder_name);

        AVFormatContext* raw = nullptr;
        const char* muxer = container == KES_VENC_CONTAINER_MP4 ? "mp4" : (h265 ? "hevc" : "h264");
        int ret = avformat_alloc_output_context2(&raw, nullptr, muxer, v->path.c_str());
        if (ret < 0 || !raw) KES_FAIL(KES_ERR_UNSUPPORTED, "no %s muxer: %s", muxer, kes::av_error_text(ret).c_str());
        v->fmt.reset(raw);

        v->enc.reset(kes::av_check_alloc(avcodec_alloc_context3(enc), "encoder context"));
        AVCodecContext* c = v->enc.get();
        c->width = int(w);
        c->height = int(h);
        c->pix_fmt = AV_PIX_FMT_YUV420P;  // libx265 takes no NV12; the chroma is split on the way in
        c->time_base = AVRational{int(config->fps_den), int(config->fps_num)};
        c->framerate = AVRational{int(config->fps_num), int(config->fps_den)};
        c->gop_size = int(config->gop);
        c->max_b_frames = 0;  // the boards' VENC writes no B-frames
        c->thread_count = int(std::min<uint32_t>(config->threads, 64));
        if (config->bitrate_kbps) {
            c->bit_rate = int64_t(config->bitrate_kbps) * 1000;
        } else {
            av_opt_set(c->priv_data, "crf", h265 ? "28" : "23", 0);
        }
        if (h265) {
            // x265 logs to stderr on its own; keep it to errors. keyint/bframes repeat the settings above
            // because libx265 reads only some of them from the context.
            const std::string params =
                "log-level=error:bframes=0:keyint=" + std::to_string(config->gop) + ":min-keyint=1";
            av_opt_set(c->priv_data, "x265-params", params.c_str(), 0);
        }
        if (raw->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
        ret = avcodec_open2(c, enc, nullptr);
        if (ret < 0) KES_FAIL(KES_ERR_UNSUPPORTED, "cannot open %s: %s", encoder_name, kes::av_error_text(ret).c_str());

        v->stream = kes::av_check_alloc(avformat_new_stream(raw, nullptr), "output stream");
        ret = avcodec_parameters_from_context(v->stream->codecpar, c);
        if (ret < 0) KES_FAIL(KES_ERR_INTERNAL, "stream parameters: %s", kes::av_error_text(ret).c_str());
        v->stream->time_base = c->time_base;
        ret = avio_open(&raw->pb, v->path.c_str(), AVIO_FLAG_WRITE);
        if (ret < 0)
            KES_FAIL(ret == AVERROR(ENOENT) ? KES_ERR_NOT_FOUND : KES_ERR_IO, "cannot create '%s': %s", v->path.c_str(),
                     kes::av_error_text(ret).c_str());
        ret = avformat_write_header(raw, nullptr);
        if (ret < 0) KES_FAIL(KES_ERR_IO, "cannot write '%s': %s", v->path.c_str(), kes::av_error_text(ret).c_str());

        v->frame.reset(kes::av_check_alloc(av_frame_alloc(), "encoder frame"));
        v->frame->format = AV_PIX_FMT_YUV420P;
        v->frame->width = int(w);
        v->frame->height = int(h);
        ret = av_frame_get_buffer(v->frame.get(), 0);
        if (ret < 0) KES_FAIL(KES_ERR_OUT_OF_MEMORY, "encoder frame buffer: %s", kes::av_error_text(ret).c_str());
        v->pkt.reset(kes::av_check_alloc(av_packet_alloc(), "packet"));
        *out_venc = v.release();
        return KES_OK;
    });
}

kes_status kes_venc_encode_frame(kes_venc* venc, const kes_image* frame) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "venc_encode_frame");
        KES_REQUIRE_NOT_NULL(venc);
        KES_REQUIRE_NOT_NULL(frame);
        KES_REQUIRE(!venc->finished, "the stream was already finished");
        kes::check_sdk(kes_image_validate(frame), "frame");
        const int64_t fmt = kes::enum_value(frame->format);
        KES_REQUIRE(fmt == KES_PIXEL_NV12 || fmt == KES_PIXEL_NV21, "frame format %lld: VENC takes NV12 or NV21",
                    static_cast<long long>(fmt));
        KES_REQUIRE(frame->width == venc->cfg.width && frame->height == venc->cfg.height,
                    "frame is %ux%u, the encoder was configured for %ux%u", frame->width, frame->height,
                    venc->cfg.width, venc->cfg.height);
        const uint32_t align = venc->profile.venc_width_stride_align;
        KES_REQUIRE(
            align <= 1 || frame->width_stride % align == 0,
            "width_stride %u must be a multiple of %u on the %s profile (VENC input rule, docs/BOARD-RULES.md §VENC)",
            frame->width_stride, align, venc->profile.name);
        AVFrame* f = venc->frame.get();
        int ret = av_frame_make_writable(f);  // the encoder may still hold the previous buffer
        if (ret < 0) KES_FAIL(KES_ERR_OUT_OF_MEMORY, "encoder frame buffer: %s", kes::av_error_text(ret).c_str());
        const uint32_t w = frame->width, h = frame->height, ws = frame->width_stride;
        const uint8_t* y = static_cast<const uint8_t*>(frame->data);
        const uint8_t* uv = y + size_t(ws) * frame->height_stride;
        for (uint32_t r = 0; r < h; ++r) std::memcpy(f->data[0] + size_t(r) * f->linesize[0], y + size_t(r) * ws, w);
        const bool nv21 = fmt == KES_PIXEL_NV21;
        uint8_t* u_plane = f->data[nv21 ? 2 : 1];
        uint8_t* v_plane = f->data[nv21 ? 1 : 2];
        for (uint32_t r = 0; r < h / 2; ++r) {
            const uint8_t* s = uv + size_t(r) * ws;
            uint8_t* a = u_plane + size_t(r) * f->linesize[nv21 ? 2 : 1];
            uint8_t* b = v_plane + size_t(r) * f->linesize[nv21 ? 1 : 2];
            for (uint32_t i = 0; i < w / 2; ++i) {
                a[i] = s[2 * i];
                b[i] = s[2 * i + 1];
            }
        }
        f->pts = venc->next_pts++;
        ret = avcodec_send_frame(venc->enc.get(), f);
        if (ret < 0) KES_FAIL(KES_ERR_INTERNAL, "encoder refused the frame: %s", kes::av_error_text(ret).c_str());
        ++venc->frames;
        kes::write_packets(venc);
        return KES_OK;
    });
}

kes_status kes_venc_finish(kes_venc* venc) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "venc_finish");
        KES_REQUIRE_NOT_NULL(venc);
        kes::finish(venc);
        return KES_OK;
    });
}

kes_status kes_venc_get_counts(const kes_venc* venc, uint64_t* out_frames, uint64_t* out_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(venc);
        if (out_frames) *out_frames = venc->frames;
        if (out_bytes) *out_bytes = venc->bytes;
        return KES_OK;
    });
}

void kes_venc_destroy(kes_venc* venc) {
    if (!venc) return;
    if (!venc->finished) {
        if (kes_venc_finish(venc) != KES_OK)
            KES_LOGE("dvpp", "kes_venc_destroy: finishing '%s' failed: %s", venc->path.c_str(), kes_last_error());
    }
    delete venc;
}

}  // extern "C"
