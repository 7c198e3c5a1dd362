// VDEC on the simulated DVPP hardware (board/ascend-sim's aclvdec*, FFmpeg's libavcodec inside), on both
// SoCs and in both run modes: every decode on the hardware is compared with the same decode on the CPU
// (kes_vdec_config.backend = KES_BACKEND_CPU) in the same process — both are libavcodec and the same
// strides, so frames must be bit-exact, with the same count, pts, frame indices and key frames. The
// automatic fallbacks are checked with their logged causes, and every fault ends in a clear status with
// nothing leaked (the simulator's aclFinalize, run by kes_backend_shutdown, fails on any descriptor,
// VDEC channel or DVPP buffer left behind) and nothing hung.
//
// Clips are made in the test by FFmpeg's encoders (libx264/libx265 through libavcodec, so they also
// run under qemu), each once per build tree: 328x240 (not a multiple of 16: the VDEC stride is 336).
#include <gtest/gtest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ascend_test_env.hpp"
#include "kestrel/dvpp_video.h"
#include "kestrel/log.h"
#include "kestrel/memory.h"
#include "rtsp_test_server.hpp"
#include "test_deps.hpp"

#if defined(__SANITIZE_ADDRESS__)
// libx265 3.5 keeps two small blocks from encoder set-up after x265_encoder_close (as test_venc.cpp says:
// not Kestrel's, the clips' encoder is freed); LeakSanitizer reads this hook at exit.
extern "C" __attribute__((visibility("default"), used)) const char* __lsan_default_suppressions() {
    return "leak:libx265.so\n";
}
#endif

namespace {

const int quiet_ffmpeg = (av_log_set_level(AV_LOG_ERROR), 0);

// ---- clips ------------------------------------------------------------------------------------------

struct ClipSpec {
    const char* encoder;  // libx264 / libx265
    AVPixelFormat pix_fmt;
    const char* format;  // muxer: mp4, matroska, h264, hevc
    int frames, gop, bframes;
};

// Encodes a moving pattern into `path`. "" on success, else why not.
std::string encode_clip(const std::string& path, const ClipSpec& c) {
    const int w = 328, h = 240;
    const AVCodec* enc = avcodec_find_encoder_by_name(c.encoder);
    if (!enc) return std::string("this FFmpeg has no ") + c.encoder;
    AVFormatContext* oc = nullptr;
    if (avformat_alloc_output_context2(&oc, nullptr, c.format, path.c_str()) < 0 || !oc)
        return std::string("no muxer ") + c.format;
    std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> oc_guard(oc, [](AVFormatContext* f) {
        if (f->pb) avio_closep(&f->pb);
        avformat_free_context(f);
    });
    AVCodecContext* ctx = avcodec_alloc_context3(enc);
    std::unique_ptr<AVCodecContext, void (*)(AVCodecContext*)> ctx_guard(
        ctx, [](AVCodecContext* p) { avcodec_free_context(&p); });
    ctx->width = w;
    ctx->height = h;
    ctx->pix_fmt = c.pix_fmt;
    ctx->time_base = AVRational{1, 30};
    ctx->framerate = AVRational{30, 1};
    ctx->gop_size = c.gop;
    ctx->max_b_frames = c.bframes;
    ctx->thread_count = 1;
    if (oc->oformat->flags & AVFMT_GLOBALHEADER) ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    const std::string gop = std::to_string(c.gop), bf = std::to_string(c.bframes);
    if (std::strcmp(c.encoder, "libx265") == 0) {
        const std::string p = "log-level=error:bframes=" + bf + ":keyint=" + gop + ":min-keyint=" + gop + ":scenecut=0";
        av_opt_set(ctx->priv_data, "x265-params", p.c_str(), 0);
    } else {
        const std::string p = "bframes=" + bf + ":keyint=" + gop + ":min-keyint=" + gop + ":scenecut=0";
        av_opt_set(ctx->priv_data, "x264-params", p.c_str(), 0);
    }
    if (avcodec_open2(ctx, enc, nullptr) < 0) return std::string("cannot open ") + c.encoder;
    AVStream* st = avformat_new_stream(oc, nullptr);
    avcodec_parameters_from_context(st->codecpar, ctx);
    st->time_base = ctx->time_base;
    if (avio_open(&oc->pb, path.c_str(), AVIO_FLAG_WRITE) < 0) return "cannot write " + path;
    if (avformat_write_header(oc, nullptr) < 0) return "cannot write the header of " + path;
    AVFrame* frame = av_frame_alloc();
    AVPacket* pkt = av_packet_alloc();
    std::unique_ptr<AVFrame, void (*)(AVFrame*)> f_guard(frame, [](AVFrame* f) { av_frame_free(&f); });
    std::unique_ptr<AVPacket, void (*)(AVPacket*)> p_guard(pkt, [](AVPacket* p) { av_packet_free(&p); });
    frame->width = w;
    frame->height = h;
    frame->format = c.pix_fmt;
    if (av_frame_get_buffer(frame, 0) < 0) return "no frame buffer";
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(c.pix_fmt);
    auto drain = [&](AVFrame* in) -> bool {
        if (avcodec_send_frame(ctx, in) < 0) return false;
        while (avcodec_receive_packet(ctx, pkt) == 0) {
            av_packet_rescale_ts(pkt, ctx->time_base, st->time_base);
            pkt->stream_index = st->index;
            if (av_interleaved_write_frame(oc, pkt) < 0) return false;
        }
        return true;
    };
    for (int i = 0; i < c.frames; ++i) {
        av_frame_make_writable(frame);
        for (int p = 0; p < 3; ++p) {
            const int pw = p ? AV_CEIL_RSHIFT(w, d->log2_chroma_w) : w;
            const int ph = p ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
            for (int y = 0; y < ph; ++y)
                for (int x = 0; x < pw; ++x) {
                    // Moving diagonal bands and a square: motion the encoder predicts.
                    int v =
                        p == 0 ? ((x + 2 * y + 5 * i) & 255) : (128 + ((x * (p == 1 ? 1 : -1) + y + 3 * i) & 63) - 32);
                    if (p == 0 && x / 40 == (i % 8) && y / 40 == 2) v = 235;
                    if (d->comp[0].depth > 8)
                        reinterpret_cast<uint16_t*>(frame->data[p] + y * frame->linesize[p])[x] = uint16_t(v << 2);
                    else
                        frame->data[p][y * frame->linesize[p] + x] = uint8_t(v);
                }
        }
        frame->pts = i;
        if (!drain(frame)) return "encoding failed";
    }
    if (!drain(nullptr)) return "flushing the encoder failed";
    if (av_write_trailer(oc) < 0) return "cannot finish " + path;
    return "";
}

// The clip `name` (made once per build tree; concurrent test processes each write their own copy and
// rename it into place).
std::string clip(const std::string& name, const ClipSpec& spec, std::string* why) {
    const std::string path = std::string(KES_TEST_TMPDIR) + "/vdec_hw_" + name;
    if (std::ifstream(path).good()) return path;
    const std::string tmp = path + ".part" + std::to_string(getpid()) + "." + name.substr(name.rfind('.') + 1);
    *why = encode_clip(tmp, spec);
    if (!why->empty()) {
        std::remove(tmp.c_str());
        return "";
    }
    std::rename(tmp.c_str(), path.c_str());
    return path;
}

const ClipSpec kH264Mp4{"libx264", AV_PIX_FMT_YUV420P, "mp4", 18, 6, 0};
const ClipSpec kH264AnnexB{"libx264", AV_PIX_FMT_YUV420P, "h264", 18, 6, 0};
const ClipSpec kH265Mkv{"libx265", AV_PIX_FMT_YUV420P, "matroska", 12, 6, 0};
const ClipSpec kH265AnnexB{"libx265", AV_PIX_FMT_YUV420P, "hevc", 12, 6, 0};
const ClipSpec kH264BFrames{"libx264", AV_PIX_FMT_YUV420P, "mp4", 12, 6, 2};
const ClipSpec kH265TenBit{"libx265", AV_PIX_FMT_YUV420P10LE, "hevc", 6, 6, 0};
const ClipSpec kH264Yuv422{"libx264", AV_PIX_FMT_YUV422P, "h264", 6, 6, 0};

#define NEED_CLIP(var, name, spec)                                 \
    std::string var;                                               \
    {                                                              \
        std::string why_;                                          \
        var = clip(name, spec, &why_);                             \
        if (var.empty()) KES_TEST_SKIP("clip " name ": " << why_); \
    }

std::vector<uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// ---- decoding ---------------------------------------------------------------------------------------

struct Frame {
    int64_t pts;
    uint64_t index;
    uint32_t keyframe;
    uint32_t width, height, width_stride, height_stride;
    kes_mem_backend memory;
    std::vector<uint8_t> visible;  // the visible rows of both planes, read back to the host
};

struct Decoded {
    kes_status status = KES_OK;
    std::string error;
    std::vector<Frame> frames;
    kes_vdec_stats stats{};
    kes_backend backend = KES_BACKEND_AUTO;  // kes_vdec_stream_info.backend
};

Frame take(const kes_vdec_frame& f) {
    const kes_image& img = f.image;
    Frame out{f.pts,      f.frame_index,    f.keyframe,        img.width,
              img.height, img.width_stride, img.height_stride, kes_image_memory(&img),
              {}};
    size_t bytes = 0;
    EXPECT_EQ(kes_image_buffer_size(img.format, img.width_stride, img.height_stride, &bytes), KES_OK);
    std::vector<uint8_t> all(bytes);
    const kes_memcpy_kind kind = out.memory == KES_MEM_HOST ? KES_MEMCPY_HOST_TO_HOST : KES_MEMCPY_DEVICE_TO_HOST;
    EXPECT_EQ(kes_mem_copy(all.data(), bytes, img.data, bytes, kind), KES_OK) << kes_last_error();
    const size_t luma = size_t(img.width_stride) * img.height_stride;
    for (uint32_t r = 0; r < img.height; ++r)
        out.visible.insert(out.visible.end(), &all[r * size_t(img.width_stride)],
                           &all[r * size_t(img.width_stride)] + img.width);
    for (uint32_t r = 0; r < (img.height + 1) / 2; ++r)
        out.visible.insert(out.visible.end(), &all[luma + r * size_t(img.width_stride)],
                           &all[luma + r * size_t(img.width_stride)] + img.width);
    return out;
}

void finish(kes_vdec* v, Decoded* d) {
    EXPECT_EQ(kes_vdec_get_stats(v, &d->stats), KES_OK);
    kes_vdec_stream_info info{};
    info.struct_size = sizeof info;
    if (kes_vdec_get_stream_info(v, &info) == KES_OK) d->backend = info.backend;
}

kes_vdec_config config_for(kes_backend backend, const char* source) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.backend = backend;
    cfg.source = source;
    return cfg;
}

// Source mode: every frame of `cfg.source`.
Decoded decode_file(kes_vdec_config cfg) {
    Decoded d;
    kes_vdec* v = nullptr;
    d.status = kes_vdec_create(&cfg, &v);
    if (d.status != KES_OK) {
        d.error = kes_last_error();
        return d;
    }
    for (int guard = 0; guard < 10000; ++guard) {
        kes_vdec_frame f;
        const kes_status st = kes_vdec_read_frame(v, &f);
        if (st != KES_OK) {
            d.status = st;
            d.error = kes_last_error();
            break;
        }
        if (f.end_of_stream) break;
        d.frames.push_back(take(f));
        kes_image_release(&f.image);
    }
    finish(v, &d);
    kes_vdec_destroy(v);
    return d;
}

// Packet mode: the Annex-B bytes of `path` in chunks of `chunk` bytes (any split: the parser joins
// them), pts = 1000 × the chunk's number, receiving as frames come.
Decoded decode_packets(kes_vdec_config cfg, const std::string& path, kes_video_codec codec, size_t chunk) {
    Decoded d;
    cfg.source = nullptr;
    cfg.codec = codec;
    kes_vdec* v = nullptr;
    d.status = kes_vdec_create(&cfg, &v);
    if (d.status != KES_OK) {
        d.error = kes_last_error();
        return d;
    }
    const std::vector<uint8_t> bytes = read_bytes(path);
    auto receive = [&]() {
        for (;;) {
            kes_vdec_frame f;
            const kes_status st = kes_vdec_receive_frame(v, &f);
            if (st == KES_ERR_BUSY) return true;
            if (st != KES_OK) {
                d.status = st;
                d.error = kes_last_error();
                return false;
            }
            if (f.end_of_stream) return false;
            d.frames.push_back(take(f));
            kes_image_release(&f.image);
        }
    };
    bool go = true;
    for (size_t off = 0, n = 0; off < bytes.size() && go; off += chunk, ++n) {
        const kes_status st =
            kes_vdec_send_packet(v, bytes.data() + off, std::min(chunk, bytes.size() - off), int64_t(n) * 1000);
        if (st != KES_OK) {
            d.status = st;
            d.error = kes_last_error();
            go = false;
            break;
        }
        go = receive();
    }
    if (go) {
        const kes_status st = kes_vdec_send_packet(v, nullptr, 0, KES_VIDEO_NO_PTS);
        if (st != KES_OK) {
            d.status = st;
            d.error = kes_last_error();
        } else {
            receive();
        }
    }
    finish(v, &d);
    kes_vdec_destroy(v);
    return d;
}

void expect_same_frames(const Decoded& hw, const Decoded& cpu, const std::string& what) {
    ASSERT_EQ(hw.status, KES_OK) << what << ": " << hw.error;
    ASSERT_EQ(cpu.status, KES_OK) << what << ": " << cpu.error;
    ASSERT_FALSE(cpu.frames.empty()) << what;
    EXPECT_EQ(hw.backend, KES_BACKEND_ASCEND) << what;
    EXPECT_EQ(cpu.backend, KES_BACKEND_CPU) << what;
    ASSERT_EQ(hw.frames.size(), cpu.frames.size()) << what;
    for (size_t i = 0; i < hw.frames.size(); ++i) {
        const Frame &a = hw.frames[i], &b = cpu.frames[i];
        EXPECT_EQ(a.memory, KES_MEM_DVPP) << what << " frame " << i;
        EXPECT_EQ(b.memory, KES_MEM_HOST) << what << " frame " << i;
        EXPECT_EQ(a.pts, b.pts) << what << " frame " << i;
        EXPECT_EQ(a.index, b.index) << what << " frame " << i;
        EXPECT_EQ(a.keyframe, b.keyframe) << what << " frame " << i;
        EXPECT_EQ(a.width, b.width) << what << " frame " << i;
        EXPECT_EQ(a.height, b.height) << what << " frame " << i;
        EXPECT_EQ(a.width_stride, b.width_stride) << what << " frame " << i;
        EXPECT_EQ(a.height_stride, b.height_stride) << what << " frame " << i;
        EXPECT_TRUE(a.visible == b.visible) << what << ": pixels of frame " << i << " differ";
    }
    EXPECT_EQ(hw.stats.frames_decoded, cpu.stats.frames_decoded) << what;
    EXPECT_EQ(hw.stats.frames_delivered, cpu.stats.frames_delivered) << what;
    EXPECT_EQ(hw.stats.frames_skipped, cpu.stats.frames_skipped) << what;
    EXPECT_EQ(hw.stats.corrupt_packets, 0u) << what;
}

// Collects what Kestrel logs (note_fallback logs at INFO).
struct LogCapture {
    std::mutex mutex;
    std::string text;
    LogCapture() {
        kes_log_set_level(KES_LOG_INFO);
        kes_log_set_callback(
            [](kes_log_level, const char* module, const char* message, void* user) {
                auto* self = static_cast<LogCapture*>(user);
                std::lock_guard<std::mutex> lock(self->mutex);
                self->text += std::string(module) + ": " + message + "\n";
            },
            this);
    }
    ~LogCapture() {
        kes_log_set_callback(nullptr, nullptr);
        kes_log_set_level(KES_LOG_WARN);
    }
    bool has(const std::string& s) {
        std::lock_guard<std::mutex> lock(mutex);
        return text.find(s) != std::string::npos;
    }
};

class VdecHardware : public kes_test::AscendBoardTest {
protected:
    void ExpectCleanShutdown() {
        EXPECT_EQ(kes_vdec_open_channels(), 0u);
        EXPECT_EQ(kes_backend_shutdown(), KES_OK) << "leak or release failure: " << kes_last_error();
    }
};

INSTANTIATE_TEST_SUITE_P(Sim, VdecHardware, testing::ValuesIn(kes_test::kSimBoards), kes_test::sim_board_name);

TEST_P(VdecHardware, FilesDecodeOnTheHardwareAsOnTheCpu) {
    NEED_CLIP(h264_mp4, "h264.mp4", kH264Mp4);
    NEED_CLIP(h264_raw, "h264.h264", kH264AnnexB);
    NEED_CLIP(h265_mkv, "h265.mkv", kH265Mkv);
    NEED_CLIP(h265_raw, "h265.h265", kH265AnnexB);
    for (const std::string& path : {h264_mp4, h264_raw, h265_mkv, h265_raw}) {
        const Decoded hw = decode_file(config_for(KES_BACKEND_AUTO, path.c_str()));
        const Decoded cpu = decode_file(config_for(KES_BACKEND_CPU, path.c_str()));
        expect_same_frames(hw, cpu, path);
        EXPECT_EQ(hw.frames.size(), path.find("h264") != std::string::npos ? 18u : 12u) << path;
        if (!hw.frames.empty()) {
            EXPECT_EQ(hw.frames[0].width_stride, 336u);  // align16(328), the simulator's and the documented rule
            EXPECT_EQ(hw.frames[0].height_stride, 240u);
            EXPECT_EQ(hw.frames[0].keyframe, 1u);
            EXPECT_EQ(hw.frames[6].keyframe, 1u);
            EXPECT_EQ(hw.frames[1].keyframe, 0u);
        }
    }
    ExpectCleanShutdown();
}

TEST_P(VdecHardware, FrameIntervalAndKeyframesOnlyAsOnTheCpu) {
    NEED_CLIP(h264_mp4, "h264.mp4", kH264Mp4);
    NEED_CLIP(h265_raw, "h265.h265", kH265AnnexB);
    for (const std::string& path : {h264_mp4, h265_raw}) {
        kes_vdec_config hw_cfg = config_for(KES_BACKEND_AUTO, path.c_str());
        kes_vdec_config cpu_cfg = config_for(KES_BACKEND_CPU, path.c_str());
        hw_cfg.frame_interval = cpu_cfg.frame_interval = 4;
        const Decoded hw = decode_file(hw_cfg), cpu = decode_file(cpu_cfg);
        expect_same_frames(hw, cpu, path + " frame_interval 4");
        ASSERT_GE(hw.frames.size(), 3u);
        EXPECT_EQ(hw.frames[1].index, 4u);
        EXPECT_EQ(hw.frames[2].index, 8u);
        EXPECT_EQ(hw.stats.frames_skipped, hw.stats.frames_decoded - hw.frames.size());

        hw_cfg.frame_interval = cpu_cfg.frame_interval = 1;
        hw_cfg.keyframes_only = cpu_cfg.keyframes_only = 1;
        const Decoded hk = decode_file(hw_cfg), ck = decode_file(cpu_cfg);
        expect_same_frames(hk, ck, path + " keyframes_only");
        EXPECT_EQ(hk.frames.size(), (hw.stats.frames_decoded + 5) / 6);  // a key frame every 6
        for (const Frame& f : hk.frames) EXPECT_EQ(f.keyframe, 1u);
    }
    ExpectCleanShutdown();
}

TEST_P(VdecHardware, AnnexBPacketsDecodeOnTheHardwareAsOnTheCpu) {
    NEED_CLIP(h264_raw, "h264.h264", kH264AnnexB);
    NEED_CLIP(h265_raw, "h265.h265", kH265AnnexB);
    for (size_t chunk : {size_t(997), size_t(1) << 20}) {
        const Decoded hw = decode_packets(config_for(KES_BACKEND_AUTO, nullptr), h264_raw, KES_VIDEO_CODEC_H264, chunk);
        const Decoded cpu = decode_packets(config_for(KES_BACKEND_CPU, nullptr), h264_raw, KES_VIDEO_CODEC_H264, chunk);
        expect_same_frames(hw, cpu, "H.264 packets of " + std::to_string(chunk));
        EXPECT_EQ(hw.frames.size(), 18u);
        const Decoded hw5 =
            decode_packets(config_for(KES_BACKEND_AUTO, nullptr), h265_raw, KES_VIDEO_CODEC_H265, chunk);
        const Decoded cpu5 =
            decode_packets(config_for(KES_BACKEND_CPU, nullptr), h265_raw, KES_VIDEO_CODEC_H265, chunk);
        expect_same_frames(hw5, cpu5, "H.265 packets of " + std::to_string(chunk));
        EXPECT_EQ(hw5.frames.size(), 12u);
    }
    ExpectCleanShutdown();
}

TEST_P(VdecHardware, FramesLandInADvppPool) {
    NEED_CLIP(h264_raw, "h264.h264", kH264AnnexB);
    kes_mem_pool_config pc;
    kes_mem_pool_config_init(&pc);
    pc.backend = KES_MEM_DVPP;
    pc.initial_bytes = 4 << 20;
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&pc, &pool), KES_OK) << kes_last_error();
    {
        kes_vdec_config cfg = config_for(KES_BACKEND_AUTO, h264_raw.c_str());
        cfg.pool = pool;
        cfg.output_format = KES_PIXEL_NV21;
        kes_vdec* v = nullptr;
        ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
        kes_vdec_frame f;
        ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
        EXPECT_EQ(f.image.pool, pool);
        EXPECT_EQ(f.image.format, KES_PIXEL_NV21);
        EXPECT_EQ(kes_mem_pool_contains(pool, f.image.data), 1);
        kes_image_release(&f.image);
        kes_vdec_destroy(v);
    }
    kes_mem_pool_destroy(pool);
    ExpectCleanShutdown();
}

// ---- fallbacks: the CPU decodes by itself, the cause logged ----------------------------------------------

TEST_P(VdecHardware, TenBitStreamFallsBackToTheCpu) {
    NEED_CLIP(ten_bit, "h265_10bit.h265", kH265TenBit);
    LogCapture log;
    const Decoded hw = decode_file(config_for(KES_BACKEND_AUTO, ten_bit.c_str()));
    const Decoded cpu = decode_file(config_for(KES_BACKEND_CPU, ten_bit.c_str()));
    ASSERT_EQ(hw.status, KES_OK) << hw.error;
    EXPECT_EQ(hw.backend, KES_BACKEND_CPU);
    ASSERT_EQ(hw.frames.size(), cpu.frames.size());
    ASSERT_EQ(hw.frames.size(), 6u);
    for (size_t i = 0; i < hw.frames.size(); ++i) {
        EXPECT_EQ(hw.frames[i].memory, KES_MEM_HOST);
        EXPECT_TRUE(hw.frames[i].visible == cpu.frames[i].visible);
    }
    EXPECT_TRUE(log.has("10-bit stream")) << log.text;
    // Packet mode decides on the first access unit.
    const Decoded packets =
        decode_packets(config_for(KES_BACKEND_AUTO, nullptr), ten_bit, KES_VIDEO_CODEC_H265, size_t(1) << 20);
    ASSERT_EQ(packets.status, KES_OK) << packets.error;
    EXPECT_EQ(packets.backend, KES_BACKEND_CPU);
    EXPECT_EQ(packets.frames.size(), 6u);
    ExpectCleanShutdown();
}

TEST_P(VdecHardware, Yuv422StreamIsRefusedAsOnTheCpu) {
    NEED_CLIP(yuv422, "h264_422.h264", kH264Yuv422);
    LogCapture log;
    const Decoded hw = decode_file(config_for(KES_BACKEND_AUTO, yuv422.c_str()));
    const Decoded cpu = decode_file(config_for(KES_BACKEND_CPU, yuv422.c_str()));
    // The board decodes 4:2:0 only: the hardware does not take it, and the CPU path refuses it by the
    // same rule (dvpp_video.h).
    EXPECT_EQ(hw.status, KES_ERR_UNSUPPORTED) << hw.error;
    EXPECT_EQ(cpu.status, KES_ERR_UNSUPPORTED) << cpu.error;
    EXPECT_EQ(hw.error, cpu.error);
    EXPECT_TRUE(log.has("chroma is not 4:2:0")) << log.text;
    ExpectCleanShutdown();
}

TEST_P(VdecHardware, OutputResizeAndBFramesFallBackToTheCpu) {
    NEED_CLIP(h264_mp4, "h264.mp4", kH264Mp4);
    NEED_CLIP(bframes, "h264_bframes.mp4", kH264BFrames);
    LogCapture log;
    kes_vdec_config cfg = config_for(KES_BACKEND_AUTO, h264_mp4.c_str());
    cfg.output_width = 160;
    cfg.output_height = 120;
    const Decoded resized = decode_file(cfg);
    ASSERT_EQ(resized.status, KES_OK) << resized.error;
    EXPECT_EQ(resized.backend, KES_BACKEND_CPU);
    ASSERT_EQ(resized.frames.size(), 18u);
    EXPECT_EQ(resized.frames[0].width, 160u);
    EXPECT_EQ(resized.frames[0].memory, KES_MEM_HOST);
    EXPECT_TRUE(log.has("output resize")) << log.text;
    // An output size equal to the stream's is no resize: the hardware serves.
    cfg.output_width = 328;
    cfg.output_height = 240;
    const Decoded same = decode_file(cfg);
    ASSERT_EQ(same.status, KES_OK) << same.error;
    EXPECT_EQ(same.backend, KES_BACKEND_ASCEND);

    const Decoded hw = decode_file(config_for(KES_BACKEND_AUTO, bframes.c_str()));
    const Decoded cpu = decode_file(config_for(KES_BACKEND_CPU, bframes.c_str()));
    ASSERT_EQ(hw.status, KES_OK) << hw.error;
    EXPECT_EQ(hw.backend, KES_BACKEND_CPU);
    ASSERT_EQ(hw.frames.size(), cpu.frames.size());
    for (size_t i = 0; i < hw.frames.size(); ++i) EXPECT_EQ(hw.frames[i].pts, cpu.frames[i].pts);
    EXPECT_TRUE(log.has("B-frames")) << log.text;
    ExpectCleanShutdown();
}

// ---- RTSP: a camera that restarts while the hardware decodes ---------------------------------------------

#if defined(KES_RTSP_TEST_SERVER)
kes_backend backend_of(kes_vdec* v) {
    kes_vdec_stream_info info{};
    info.struct_size = sizeof info;
    EXPECT_EQ(kes_vdec_get_stream_info(v, &info), KES_OK) << kes_last_error();
    return info.backend;
}

// The camera server of test_vdec_rtsp.cpp (camera.mp4: 90 frames, a key frame every 15, no B-frames),
// killed mid-stream and started again on its port; the channel stays on the hardware, which gets the new
// session's parameter sets ahead of its first key frame. Every frame, before the loss and after, must be
// the CPU's decode of the clip at its place in the session (each session serves the clip from its first
// frame), bit for bit. Run on every simulated board, not one: the reconnect feeds the same VDEC channel
// on, and the channel's memory (device or host run mode) and strides (310, 310B) are per board; a run
// takes about 6 s (mostly the outage: timeout_ms of refused attempts, then a second), affordable 4 times.
TEST_P(VdecHardware, RtspReconnectsOnTheHardware) {
    const std::string clip = std::string(KES_VIDEO_TEST_DATA) + "/camera.mp4";
    if (!std::ifstream(clip).good()) KES_TEST_SKIP("no test clip " << clip);
    const Decoded ref = decode_file(config_for(KES_BACKEND_CPU, clip.c_str()));
    ASSERT_EQ(ref.status, KES_OK) << ref.error;
    ASSERT_EQ(ref.frames.size(), 90u);
    auto server = std::make_unique<kes_test::RtspServer>(clip);
    if (server->port() == 0) KES_TEST_SKIP("the GStreamer RTSP server did not start (plugins missing?)");
    const int port = server->port();
    const std::string url = "rtsp://127.0.0.1:" + std::to_string(port) + "/cam";
    kes_vdec_config cfg = config_for(KES_BACKEND_AUTO, url.c_str());
    cfg.rtsp_transport = KES_RTSP_TCP;  // lossless: pixels are compared
    cfg.timeout_ms = 3000;              // generous for a loaded 2-core machine (a frame every 33 ms)
    cfg.reconnect_delay_ms = 100;
    cfg.reconnect_max_delay_ms = 400;
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    std::unique_ptr<kes_vdec, void (*)(kes_vdec*)> channel(v, kes_vdec_destroy);
    EXPECT_EQ(backend_of(v), KES_BACKEND_ASCEND);

    int64_t last_pts = KES_VIDEO_NO_PTS;
    uint64_t last_index = 0;
    size_t delivered = 0;
    // A frame of the session that is `at` frames in: on the hardware, the CPU's pixels, after the last one.
    auto check = [&](const kes_vdec_frame& f, size_t at, const char* when) {
        const Frame got = take(f);
        EXPECT_EQ(got.memory, KES_MEM_DVPP) << when << " frame " << at;
        EXPECT_EQ(got.width_stride, ref.frames[0].width_stride) << when << " frame " << at;
        EXPECT_TRUE(at < ref.frames.size() && got.visible == ref.frames[at].visible)
            << when << ": pixels of frame " << at << " differ from the CPU's";
        EXPECT_NE(f.pts, KES_VIDEO_NO_PTS) << when << " frame " << at;
        if (delivered > 0) {
            EXPECT_GT(f.pts, last_pts) << when << " frame " << at;
            EXPECT_GT(f.frame_index, last_index) << when << " frame " << at;
        }
        last_pts = f.pts;
        last_index = f.frame_index;
        ++delivered;
    };

    size_t before = 0;
    ASSERT_NO_FATAL_FAILURE(
        kes_test::read_frames(v, 10, [&](const kes_vdec_frame& f) { check(f, before++, "before the loss"); }));
    server->stop();
    // The frames still in flight on the hardware come back first; then a read gives up after timeout_ms.
    const kes_status st =
        kes_test::read_until_error(v, [&](const kes_vdec_frame& f) { check(f, before++, "held at the loss"); });
    ASSERT_EQ(st, KES_ERR_TIMEOUT) << kes_last_error();
    EXPECT_NE(std::strstr(kes_last_error(), "reconnecting"), nullptr) << kes_last_error();
    kes_vdec_health h = kes_test::vdec_health(v);
    EXPECT_EQ(h.state, KES_VDEC_STATE_RECONNECTING);
    EXPECT_GE(h.failed_attempts, 1u);
    EXPECT_EQ(h.reconnects, 0u);

    std::this_thread::sleep_for(std::chrono::seconds(1));
    server = kes_test::restart_on(clip, port);
    ASSERT_TRUE(server) << "the server did not come back on port " << port;
    size_t seen = 0;
    const size_t after =
        kes_test::read_through_outage(v, 20, [&](const kes_vdec_frame& f) { check(f, seen++, "after the reconnect"); });
    EXPECT_EQ(after, 20u);
    EXPECT_EQ(backend_of(v), KES_BACKEND_ASCEND) << "the channel stayed on the hardware";
    h = kes_test::vdec_health(v);
    EXPECT_EQ(h.state, KES_VDEC_STATE_RUNNING);
    EXPECT_GE(h.reconnects, 1u);
    EXPECT_EQ(h.failed_attempts, 0u);
    EXPECT_EQ(h.frames_delivered, before + after);
    kes_vdec_stats stats{};
    ASSERT_EQ(kes_vdec_get_stats(v, &stats), KES_OK);
    EXPECT_EQ(stats.corrupt_packets, 0u) << "every unit after the reconnect had its parameter sets";
    channel.reset();
    server.reset();
    ExpectCleanShutdown();
}
#elif defined(KES_RTSP_TEST_SERVER_MISSING)
TEST_P(VdecHardware, RtspReconnectsOnTheHardware) {
    KES_TEST_SKIP(KES_RTSP_TEST_SERVER_MISSING);
}
#endif  // neither: a cross-compiled build, which has no RTSP server by design (board/ascend-sim/CMakeLists.txt)

// ---- faults: a clear status, nothing leaked, nothing hung ------------------------------------------------

class VdecHardwareFaults : public kes_test::AscendTest {
protected:
    void ExpectCleanShutdown() {
        EXPECT_EQ(kes_vdec_open_channels(), 0u);
        EXPECT_EQ(kes_backend_shutdown(), KES_OK) << "leak or release failure: " << kes_last_error();
    }
};

TEST_F(VdecHardwareFaults, FailedSendIsReportedNotRetriedAndLeaksNothing) {
    NEED_CLIP(h264_raw, "h264.h264", kH264AnnexB);
    setenv("KES_SIM_FAIL", "aclvdecSendFrame:3:500002", 1);
    kes_vdec_config cfg = config_for(KES_BACKEND_AUTO, h264_raw.c_str());
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    std::vector<kes_status> statuses;
    std::string message;
    size_t frames = 0;
    for (int i = 0; i < 100; ++i) {
        kes_vdec_frame f;
        const kes_status st = kes_vdec_read_frame(v, &f);
        statuses.push_back(st);
        if (st != KES_OK) {
            message = kes_last_error();
            continue;
        }
        if (f.end_of_stream) break;
        ++frames;
        kes_image_release(&f.image);
    }
    ASSERT_LT(statuses.size(), 100u) << "the stream never ended";
    size_t failures = 0;
    for (kes_status st : statuses) failures += st != KES_OK;
    EXPECT_EQ(failures, 1u);  // the one failed send, reported once, never retried
    EXPECT_NE(message.find("aclvdecSendFrame"), std::string::npos) << message;
    EXPECT_NE(message.find("500002"), std::string::npos) << message;
    EXPECT_GE(frames, 2u);  // the frames before it came back; later ones may fail without their reference
    kes_vdec_stats stats{};
    ASSERT_EQ(kes_vdec_get_stats(v, &stats), KES_OK);
    EXPECT_EQ(stats.packets, 18u);
    kes_vdec_destroy(v);
    ExpectCleanShutdown();
}

TEST_F(VdecHardwareFaults, DvppOutOfMemoryKeepsTheFrameForTheNextCall) {
    NEED_CLIP(h264_raw, "h264.h264", kH264AnnexB);
    // Read at aclInit, which the first decoder (even a CPU one: the board profile comes from the SoC) runs.
    setenv("KES_SIM_FAIL", "acldvppMalloc:4:207018", 1);  // the second frame's output buffer
    const Decoded cpu = decode_file(config_for(KES_BACKEND_CPU, h264_raw.c_str()));
    ASSERT_EQ(cpu.status, KES_OK) << cpu.error;
    kes_vdec_config cfg = config_for(KES_BACKEND_AUTO, h264_raw.c_str());
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    std::vector<Frame> frames;
    size_t oom = 0;
    std::string message;
    for (int i = 0; i < 100; ++i) {
        kes_vdec_frame f;
        const kes_status st = kes_vdec_read_frame(v, &f);
        if (st == KES_ERR_OUT_OF_MEMORY) {
            ++oom;
            message = kes_last_error();
            continue;
        }
        ASSERT_EQ(st, KES_OK) << kes_last_error();
        if (f.end_of_stream) break;
        frames.push_back(take(f));
        kes_image_release(&f.image);
    }
    EXPECT_EQ(oom, 1u);
    EXPECT_NE(message.find("acldvppMalloc"), std::string::npos) << message;
    ASSERT_EQ(frames.size(), cpu.frames.size());  // nothing lost: the access unit was sent again
    for (size_t i = 0; i < frames.size(); ++i) {
        EXPECT_EQ(frames[i].pts, cpu.frames[i].pts);
        EXPECT_TRUE(frames[i].visible == cpu.frames[i].visible) << "frame " << i;
    }
    kes_vdec_destroy(v);
    ExpectCleanShutdown();
}

TEST_F(VdecHardwareFaults, DvppOutOfMemoryInPacketModeKeepsEveryUnit) {
    NEED_CLIP(h264_raw, "h264.h264", kH264AnnexB);
    setenv("KES_SIM_FAIL", "acldvppMalloc:6:207018", 1);  // the third frame's output buffer
    const Decoded cpu = decode_packets(config_for(KES_BACKEND_CPU, nullptr), h264_raw, KES_VIDEO_CODEC_H264, 1 << 20);
    ASSERT_EQ(cpu.status, KES_OK) << cpu.error;
    kes_vdec_config cfg = config_for(KES_BACKEND_AUTO, nullptr);
    cfg.codec = KES_VIDEO_CODEC_H264;
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    const std::vector<uint8_t> bytes = read_bytes(h264_raw);
    // The whole stream in one call: the units after the one without memory are kept behind it.
    EXPECT_EQ(kes_vdec_send_packet(v, bytes.data(), bytes.size(), 0), KES_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(kes_last_error()).find("acldvppMalloc"), std::string::npos) << kes_last_error();
    ASSERT_EQ(kes_vdec_send_packet(v, nullptr, 0, KES_VIDEO_NO_PTS), KES_OK) << kes_last_error();
    size_t frames = 0;
    for (int i = 0; i < 100; ++i) {
        kes_vdec_frame f;
        ASSERT_EQ(kes_vdec_receive_frame(v, &f), KES_OK) << kes_last_error();
        if (f.end_of_stream) break;
        EXPECT_TRUE(take(f).visible == cpu.frames.at(frames).visible) << "frame " << frames;
        ++frames;
        kes_image_release(&f.image);
    }
    EXPECT_EQ(frames, cpu.frames.size());
    kes_vdec_destroy(v);
    ExpectCleanShutdown();
}

TEST_F(VdecHardwareFaults, ThirtyThreeDecodersAreBusyNamingTheLimit) {
    std::vector<kes_vdec*> decoders;
    kes_vdec_config cfg = config_for(KES_BACKEND_AUTO, nullptr);
    cfg.codec = KES_VIDEO_CODEC_H264;
    for (int i = 0; i < 32; ++i) {
        kes_vdec* v = nullptr;
        ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << i << ": " << kes_last_error();
        decoders.push_back(v);
    }
    EXPECT_EQ(kes_vdec_open_channels(), 32u);
    kes_vdec* extra = nullptr;
    EXPECT_EQ(kes_vdec_create(&cfg, &extra), KES_ERR_BUSY);
    EXPECT_NE(std::string(kes_last_error()).find("32"), std::string::npos) << kes_last_error();
    EXPECT_EQ(extra, nullptr);
    kes_vdec_destroy(decoders.back());
    decoders.pop_back();
    ASSERT_EQ(kes_vdec_create(&cfg, &extra), KES_OK) << kes_last_error();  // the id is free again
    decoders.push_back(extra);
    for (kes_vdec* v : decoders) kes_vdec_destroy(v);
    ExpectCleanShutdown();
}

TEST_F(VdecHardwareFaults, DestroyMidStreamLeaksNothing) {
    NEED_CLIP(h265_mkv, "h265.mkv", kH265Mkv);
    NEED_CLIP(h264_raw, "h264.h264", kH264AnnexB);
    kes_image kept{};
    {
        kes_vdec_config cfg = config_for(KES_BACKEND_AUTO, h265_mkv.c_str());
        kes_vdec* v = nullptr;
        ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
        kes_vdec_frame f;
        for (int i = 0; i < 3; ++i) {
            ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
            ASSERT_EQ(f.end_of_stream, 0u);
            if (i == 0)
                kept = f.image;  // outlives its decoder
            else
                kes_image_release(&f.image);
        }
        kes_vdec_destroy(v);  // frames still in flight and waiting
    }
    {
        // Packet mode: units sent, nothing received.
        kes_vdec_config cfg = config_for(KES_BACKEND_AUTO, nullptr);
        cfg.codec = KES_VIDEO_CODEC_H264;
        kes_vdec* v = nullptr;
        ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
        const std::vector<uint8_t> bytes = read_bytes(h264_raw);
        ASSERT_EQ(kes_vdec_send_packet(v, bytes.data(), bytes.size() / 2, 0), KES_OK) << kes_last_error();
        kes_vdec_destroy(v);
    }
    EXPECT_EQ(kes_image_memory(&kept), KES_MEM_DVPP);
    kes_image_release(&kept);
    ExpectCleanShutdown();
}

TEST_F(VdecHardwareFaults, CpuBackendNeverTouchesTheHardware) {
    NEED_CLIP(h264_raw, "h264.h264", kH264AnnexB);
    setenv("KES_BACKEND", "cpu", 1);
    const Decoded d = decode_file(config_for(KES_BACKEND_AUTO, h264_raw.c_str()));
    ASSERT_EQ(d.status, KES_OK) << d.error;
    EXPECT_EQ(d.backend, KES_BACKEND_CPU);
    ASSERT_FALSE(d.frames.empty());
    EXPECT_EQ(d.frames[0].memory, KES_MEM_HOST);
}

}  // namespace
