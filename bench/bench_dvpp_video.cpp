// bench_dvpp_video.cpp — P5 (issue 3): H.264 1080p decode.
//
// Cases (names "<case>:<impl>", see bench_main.cpp); one iteration decodes the whole 60-frame clip
// (open, probe, decode, close), items = frames:
//   vdec_h264_1080p_t<N>   one channel with N decoder threads. kestrel: kes_vdec (310B profile) writing
//                          every frame as NV12 with VDEC strides into a kes_mem_pool image; ffmpeg: a
//                          plain libavformat/libavcodec loop with the same thread count that leaves the
//                          frames in FFmpeg's own YUV420P buffers (the peer); ffmpeg_nv12: the
//                          same loop plus sws_scale to NV12, what an FFmpeg app needs for the same output.
//   vdec_h264_1080p_x<C>ch C channels at once, each on its own thread with 1 decoder thread (the board's
//                          multi-channel case); peers as above, C loops on C threads.
// Wall time is the measure (several threads), so a burst of load on a shared machine lands on whichever
// side runs at the time: the t<N> cases run 5 repetitions interleaved in random order with their peers'
// (bench_main.cpp) and their ratio is of the medians (issue 15 §7: one loaded run said 0.80x at 2 threads).
#include <benchmark/benchmark.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/log.h>
#include <libswscale/swscale.h>
}

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "kestrel/dvpp_video.h"

namespace {

#ifdef KES_BENCH_VIDEO_CLIP
const char* const kClip = KES_BENCH_VIDEO_CLIP;
#else
const char* const kClip = nullptr;
#endif

kes_mem_pool* frame_pool() {
    static kes_mem_pool* pool = [] {
        kes_mem_pool_config pc;
        kes_mem_pool_config_init(&pc);
        pc.initial_bytes = 64u << 20;  // a few 1080p NV12 frames per channel
        pc.name = "bench-vdec";
        kes_mem_pool* p = nullptr;
        kes_mem_pool_create(&pc, &p);
        return p;
    }();
    return pool;
}

// Frames decoded, or -1 on error.
long decode_kestrel(uint32_t threads) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = kClip;
    cfg.threads = threads;
    cfg.pool = frame_pool();
    cfg.board_profile = kes_board_get_profile(KES_BOARD_310B);
    kes_vdec* v = nullptr;
    if (kes_vdec_create(&cfg, &v) != KES_OK) return -1;
    long frames = 0;
    for (;;) {
        kes_vdec_frame f;
        if (kes_vdec_read_frame(v, &f) != KES_OK) {
            frames = -1;
            break;
        }
        if (f.end_of_stream) break;
        benchmark::DoNotOptimize(static_cast<uint8_t*>(f.image.data)[0]);
        kes_image_release(&f.image);
        ++frames;
    }
    kes_vdec_destroy(v);
    return frames;
}

// The peer: FFmpeg's decode loop as its examples write it; with to_nv12, sws_scale into one buffer.
long decode_ffmpeg(int threads, bool to_nv12) {
    AVFormatContext* fmt = nullptr;
    if (avformat_open_input(&fmt, kClip, nullptr, nullptr) < 0) return -1;
    long frames = -1;
    AVCodecContext* ctx = nullptr;
    AVPacket* pkt = av_packet_alloc();
    AVFrame* frame = av_frame_alloc();
    SwsContext* sws = nullptr;
    std::vector<uint8_t> nv12;
    int idx = -1;
    const AVCodec* codec = nullptr;
    if (avformat_find_stream_info(fmt, nullptr) >= 0 &&
        (idx = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)) >= 0) {
        ctx = avcodec_alloc_context3(codec);
        avcodec_parameters_to_context(ctx, fmt->streams[idx]->codecpar);
        ctx->thread_count = threads;
        ctx->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
        if (avcodec_open2(ctx, codec, nullptr) >= 0) {
            frames = 0;
            auto receive = [&] {
                while (avcodec_receive_frame(ctx, frame) == 0) {
                    if (to_nv12) {
                        sws = sws_getCachedContext(sws, frame->width, frame->height, AVPixelFormat(frame->format),
                                                   frame->width, frame->height, AV_PIX_FMT_NV12, SWS_BILINEAR, nullptr,
                                                   nullptr, nullptr);
                        nv12.resize(size_t(frame->width) * frame->height * 3 / 2);
                        uint8_t* dst[4] = {nv12.data(), nv12.data() + size_t(frame->width) * frame->height, nullptr,
                                           nullptr};
                        const int ls[4] = {frame->width, frame->width, 0, 0};
                        sws_scale(sws, frame->data, frame->linesize, 0, frame->height, dst, ls);
                    }
                    benchmark::DoNotOptimize(frame->data[0][0]);
                    av_frame_unref(frame);
                    ++frames;
                }
            };
            while (av_read_frame(fmt, pkt) >= 0) {
                if (pkt->stream_index == idx) {
                    avcodec_send_packet(ctx, pkt);
                    receive();
                }
                av_packet_unref(pkt);
            }
            avcodec_send_packet(ctx, nullptr);
            receive();
        }
    }
    sws_freeContext(sws);
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avcodec_free_context(&ctx);
    avformat_close_input(&fmt);
    return frames;
}

enum class Impl { kKestrel, kFfmpeg, kFfmpegNv12 };

long decode_one(Impl impl, int threads) {
    switch (impl) {
        case Impl::kKestrel: return decode_kestrel(uint32_t(threads));
        case Impl::kFfmpeg: return decode_ffmpeg(threads, false);
        case Impl::kFfmpegNv12: return decode_ffmpeg(threads, true);
    }
    return -1;
}

void bm_decode(benchmark::State& state, Impl impl, int threads, int channels) {
    if (!kClip) {
        state.SkipWithError("no clip: kes-bench was built without ffmpeg");
        return;
    }
    av_log_set_level(AV_LOG_ERROR);
    long total = 0;
    for (auto _ : state) {
        std::atomic<long> frames{0};
        std::atomic<bool> failed{false};
        auto run = [&] {
            const long n = decode_one(impl, threads);
            if (n < 0) failed = true;
            frames += n;
        };
        if (channels == 1) {
            run();
        } else {
            std::vector<std::thread> workers;
            for (int c = 0; c < channels; ++c) workers.emplace_back(run);
            for (auto& w : workers) w.join();
        }
        if (failed) {
            state.SkipWithError("decode failed");
            return;
        }
        total += frames;
    }
    state.SetItemsProcessed(total);
}

const bool registered = [] {
    const std::pair<Impl, const char*> impls[] = {
        {Impl::kKestrel, "kestrel"}, {Impl::kFfmpeg, "ffmpeg"}, {Impl::kFfmpegNv12, "ffmpeg_nv12"}};
    for (int threads : {1, 2}) {
        for (const auto& [impl, name] : impls) {
            const std::string n = "vdec_h264_1080p_t" + std::to_string(threads) + ":" + name;
            benchmark::RegisterBenchmark(n.c_str(), bm_decode, impl, threads, 1)
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime()
                ->Repetitions(5)
                ->ReportAggregatesOnly(true);
        }
    }
    for (int channels : {1, 2, 3, 4}) {
        for (const auto& [impl, name] : impls) {
            const std::string n = "vdec_h264_1080p_x" + std::to_string(channels) + "ch:" + name;
            benchmark::RegisterBenchmark(n.c_str(), bm_decode, impl, 1, channels)
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
        }
    }
    return true;
}();

}  // namespace
