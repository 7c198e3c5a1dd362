// VENC tests: frames decoded from a real clip are encoded with kes_venc, decoded back with kes_vdec
// and compared (PSNR), in MP4 and Annex-B, H.264 and H.265.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
#include <libavutil/log.h>
}

#include "dvpp_test_util.hpp"
#include "kestrel/dvpp_video.h"
#include "kestrel/log.h"
#include "test_deps.hpp"

#if defined(__SANITIZE_ADDRESS__)
// libx265 3.5 keeps two small blocks from encoder set-up after x265_encoder_close (not Kestrel's: the
// context is freed with avcodec_free_context); LeakSanitizer reads this hook at exit.
extern "C" __attribute__((visibility("default"), used)) const char* __lsan_default_suppressions() {
    return "leak:libx265.so\n";
}
#endif

namespace vtest {  // test_vdec.cpp
std::string data_path(const char* name);
std::string tmp_path(const std::string& name);
std::vector<uint8_t> read_bytes(const std::string& path);
double psnr(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b);
std::vector<uint8_t> tight_nv12(const kes_image& img);
}  // namespace vtest

namespace {

using namespace vtest;

struct Frames {
    std::vector<kes_image> images;
    ~Frames() {
        for (kes_image& i : images) kes_image_release(&i);
    }
};

// Decodes `clip` with the 310B profile: NV12 with VDEC strides, what a board app would encode.
void load_frames(const char* clip, Frames* out, kes_pixel_format format = KES_PIXEL_NV12) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.output_format = format;
    const std::string path = data_path(clip);
    cfg.source = path.c_str();
    cfg.board_profile = kes_board_get_profile(KES_BOARD_310B);
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    for (;;) {
        kes_vdec_frame f;
        ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
        if (f.end_of_stream) break;
        out->images.push_back(f.image);
    }
    kes_vdec_destroy(v);
}

struct Decoded {
    std::vector<std::vector<uint8_t>> frames;
    std::vector<uint64_t> keyframes;
};

void decode_back(const std::string& path, Decoded* out) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = path.c_str();
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    for (;;) {
        kes_vdec_frame f;
        ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
        if (f.end_of_stream) break;
        if (f.keyframe) out->keyframes.push_back(f.frame_index);
        out->frames.push_back(tight_nv12(f.image));
        kes_image_release(&f.image);
    }
    kes_vdec_destroy(v);
}

void encode(const Frames& in, kes_venc_config cfg, uint64_t* out_bytes = nullptr) {
    kes_venc* e = nullptr;
    ASSERT_EQ(kes_venc_create(&cfg, &e), KES_OK) << kes_last_error();
    for (const kes_image& img : in.images) ASSERT_EQ(kes_venc_encode_frame(e, &img), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_venc_finish(e), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_venc_finish(e), KES_OK) << "finish twice is a no-op";
    uint64_t frames = 0, bytes = 0;
    ASSERT_EQ(kes_venc_get_counts(e, &frames, &bytes), KES_OK);
    EXPECT_EQ(frames, in.images.size());
    EXPECT_GT(bytes, 0u);
    if (out_bytes) *out_bytes = bytes;
    EXPECT_EQ(kes_venc_encode_frame(e, &in.images[0]), KES_ERR_INVALID_ARGUMENT) << "encode after finish";
    kes_venc_destroy(e);
}

kes_venc_config base_config(const std::string& path, kes_video_codec codec, kes_venc_container container) {
    kes_venc_config cfg;
    kes_venc_config_init(&cfg);
    cfg.path = path.c_str();
    cfg.codec = codec;
    cfg.container = container;
    cfg.width = 328;
    cfg.height = 240;
    cfg.board_profile = kes_board_get_profile(KES_BOARD_310B);
    return cfg;
}

#define REQUIRE_CLIPS()                                                                                    \
    do {                                                                                                   \
        if (data_path("h264.mp4").empty()) KES_TEST_SKIP("no test clips (ffmpeg not found at configure)"); \
    } while (0)

// Keeps the first `n` frames (x265 is slow on the emulated board).
void keep_first(Frames* f, size_t n) {
    while (f->images.size() > n) {
        kes_image_release(&f->images.back());
        f->images.pop_back();
    }
}

void round_trip(kes_video_codec codec, kes_venc_container container, const char* name, size_t frames) {
    Frames in;
    ASSERT_NO_FATAL_FAILURE(load_frames("h264.mp4", &in));
    ASSERT_EQ(in.images.size(), 30u);
    keep_first(&in, frames);
    const std::string path = tmp_path(name);
    std::remove(path.c_str());
    ASSERT_NO_FATAL_FAILURE(encode(in, base_config(path, codec, container)));
    if (container == KES_VENC_CONTAINER_ANNEXB) {
        const std::vector<uint8_t> bytes = read_bytes(path);
        ASSERT_GE(bytes.size(), 4u);
        EXPECT_EQ(std::memcmp(bytes.data(), "\0\0\0\1", 4), 0) << "Annex-B starts with a start code";
    }
    Decoded out;
    ASSERT_NO_FATAL_FAILURE(decode_back(path, &out));
    ASSERT_EQ(out.frames.size(), frames);
    for (size_t i = 0; i < frames; ++i)
        EXPECT_GT(psnr(out.frames[i], tight_nv12(in.images[i])), 35.0) << name << " frame " << i;
    EXPECT_EQ(out.keyframes, (std::vector<uint64_t>{0}))  // default GOP 30
        << name;
}

TEST(Venc, H264Mp4RoundTripAbove35dB) {
    REQUIRE_CLIPS();
    round_trip(KES_VIDEO_CODEC_H264, KES_VENC_CONTAINER_MP4, "venc-h264.mp4", 30);
}

TEST(Venc, H265AnnexBRoundTripAbove35dB) {
    REQUIRE_CLIPS();
    round_trip(KES_VIDEO_CODEC_H265, KES_VENC_CONTAINER_ANNEXB, "venc-h265.h265", 12);
}

// MP4 keeps a frame's duration in its sample table: a packet written without one made the last frame
// last 0 ticks, and readers (FFmpeg, kes_vdec, players) dropped it — 25 frames at 25 fps read back as 24.
// Annex-B has no durations, so only MP4 is checked; the counts and rates are the ones the bug showed at.
void mp4_keeps_every_frame(kes_video_codec codec, uint32_t fps, size_t count) {
    Frames clip;
    ASSERT_NO_FATAL_FAILURE(load_frames("h264.mp4", &clip));
    ASSERT_FALSE(clip.images.empty());
    Frames in;  // borrows clip's images, cycling through them for counts above the clip's 30
    for (size_t i = 0; i < count; ++i) {
        kes_image img = clip.images[i % clip.images.size()];
        ASSERT_EQ(kes_image_wrap(&in.images.emplace_back(), img.format, img.width, img.height, img.width_stride,
                                 img.height_stride, img.data, img.size),
                  KES_OK)
            << kes_last_error();
    }
    const std::string path = tmp_path("venc-count-" + std::to_string(int(codec)) + "-" + std::to_string(count) + "at" +
                                      std::to_string(fps) + ".mp4");
    std::remove(path.c_str());
    kes_venc_config cfg = base_config(path, codec, KES_VENC_CONTAINER_MP4);
    cfg.fps_num = fps;
    cfg.fps_den = 1;
    ASSERT_NO_FATAL_FAILURE(encode(in, cfg));

    kes_vdec_config dcfg;
    kes_vdec_config_init(&dcfg);
    dcfg.source = path.c_str();
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&dcfg, &v), KES_OK) << kes_last_error();
    std::vector<int64_t> pts;
    for (;;) {
        kes_vdec_frame f;
        ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
        if (f.end_of_stream) break;
        pts.push_back(f.pts);
        kes_image_release(&f.image);
    }
    kes_vdec_stream_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(kes_vdec_get_stream_info(v, &info), KES_OK) << kes_last_error();
    kes_vdec_destroy(v);
    ASSERT_EQ(pts.size(), count) << path;
    for (size_t i = 0; i < count; ++i)
        EXPECT_EQ(pts[i], (int64_t(i) * 1000000 + fps / 2) / fps) << path << " frame " << i;  // µs, 1/fps steps
    EXPECT_EQ(info.fps_num, fps) << path;
    EXPECT_EQ(info.fps_den, 1u) << path;
    // The container says the stream lasts count/fps seconds: the last frame has its full duration
    // (to MP4's movie header timescale, 1 ms).
    EXPECT_NEAR(double(info.duration_us), double(count) * 1e6 / fps, 1000.0) << path;
}

TEST(Venc, Mp4Keeps25FramesAt25Fps) {
    REQUIRE_CLIPS();
    mp4_keeps_every_frame(KES_VIDEO_CODEC_H264, 25, 25);
    mp4_keeps_every_frame(KES_VIDEO_CODEC_H265, 25, 25);
}

TEST(Venc, Mp4Keeps50FramesAt25Fps) {
    REQUIRE_CLIPS();
    mp4_keeps_every_frame(KES_VIDEO_CODEC_H264, 25, 50);
    mp4_keeps_every_frame(KES_VIDEO_CODEC_H265, 25, 50);
}

TEST(Venc, Mp4Keeps10FramesAt30Fps) {
    REQUIRE_CLIPS();
    mp4_keeps_every_frame(KES_VIDEO_CODEC_H264, 30, 10);
    mp4_keeps_every_frame(KES_VIDEO_CODEC_H265, 30, 10);
}

TEST(Venc, EveryCallRecordsATraceSpan) {
    REQUIRE_CLIPS();
    Frames in;
    ASSERT_NO_FATAL_FAILURE(load_frames("h264.mp4", &in));
    keep_first(&in, 2);
    const std::string path = tmp_path("venc-traced.h264");
    const kes_venc_config cfg = base_config(path, KES_VIDEO_CODEC_H264, KES_VENC_CONTAINER_ANNEXB);
    const std::string trace = kes_test::traced("venc", [&] { encode(in, cfg); });
    for (const char* span : {"venc_create", "venc_encode_frame", "venc_finish"})
        EXPECT_TRUE(kes_test::has_dvpp_span(trace, span)) << span << "\n" << trace;
}

// FFmpeg's log, libx264's included, goes through Kestrel's logger (module "ffmpeg"): libx264 wrote about
// 16 lines of settings and statistics to stderr per video, even with KES_LOG_LEVEL=off.
TEST(Venc, FfmpegLogGoesThroughKestrelsLogger) {
    REQUIRE_CLIPS();
    av_log_set_level(AV_LOG_INFO);  // FFmpeg's default (test_vdec.cpp quiets it for the other tests)
    Frames in;
    ASSERT_NO_FATAL_FAILURE(load_frames("h264.mp4", &in));
    keep_first(&in, 3);
    static std::mutex mutex;
    static std::vector<std::string> lines;
    kes_log_set_callback(
        [](kes_log_level, const char* module, const char* message, void*) {
            std::lock_guard<std::mutex> lock(mutex);
            if (std::strcmp(module, "ffmpeg") == 0) lines.push_back(message);
        },
        nullptr);
    ASSERT_EQ(kes_log_set_level(KES_LOG_INFO), KES_OK);
    testing::internal::CaptureStderr();
    encode(in, base_config(tmp_path("venc-log-info.mp4"), KES_VIDEO_CODEC_H264, KES_VENC_CONTAINER_MP4));
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.find("libx264"), std::string::npos) << err;
    size_t x264 = 0;
    for (const std::string& l : lines) x264 += l.find("[libx264 @") != std::string::npos;
    EXPECT_GT(x264, 0u) << "no libx264 line reached the callback";
    for (const std::string& l : lines) EXPECT_TRUE(l.empty() || l.back() != '\n') << l;  // one line each

    // KES_LOG_LEVEL=off with the default sink: nothing on stderr at all.
    kes_log_set_callback(nullptr, nullptr);
    ASSERT_EQ(kes_log_set_level(KES_LOG_OFF), KES_OK);
    testing::internal::CaptureStderr();
    encode(in, base_config(tmp_path("venc-log-off.mp4"), KES_VIDEO_CODEC_H264, KES_VENC_CONTAINER_MP4));
    err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err, "");
    kes_log_set_level(KES_LOG_WARN);
}

TEST(Venc, GopSetsTheKeyFrameInterval) {
    REQUIRE_CLIPS();
    Frames in;
    ASSERT_NO_FATAL_FAILURE(load_frames("h264.mp4", &in));
    keep_first(&in, 17);
    for (kes_video_codec codec : {KES_VIDEO_CODEC_H264, KES_VIDEO_CODEC_H265}) {
        const std::string path = tmp_path(codec == KES_VIDEO_CODEC_H264 ? "venc-gop.h264" : "venc-gop.h265");
        kes_venc_config cfg = base_config(path, codec, KES_VENC_CONTAINER_ANNEXB);
        cfg.gop = 8;
        ASSERT_NO_FATAL_FAILURE(encode(in, cfg));
        Decoded out;
        ASSERT_NO_FATAL_FAILURE(decode_back(path, &out));
        EXPECT_EQ(out.keyframes, (std::vector<uint64_t>{0, 8, 16})) << path;
        EXPECT_EQ(out.frames.size(), 17u);
    }
}

TEST(Venc, BitrateControlsTheSize) {
    REQUIRE_CLIPS();
    Frames in;
    ASSERT_NO_FATAL_FAILURE(load_frames("h264.mp4", &in));
    uint64_t low = 0, high = 0;
    kes_venc_config cfg = base_config(tmp_path("venc-low.h264"), KES_VIDEO_CODEC_H264, KES_VENC_CONTAINER_ANNEXB);
    const std::string low_path = tmp_path("venc-low.h264"), high_path = tmp_path("venc-high.h264");
    cfg.path = low_path.c_str();
    cfg.bitrate_kbps = 100;
    ASSERT_NO_FATAL_FAILURE(encode(in, cfg, &low));
    cfg.path = high_path.c_str();
    cfg.bitrate_kbps = 3000;
    ASSERT_NO_FATAL_FAILURE(encode(in, cfg, &high));
    EXPECT_LT(low * 3, high) << "100 kbit/s vs 3000 kbit/s";
    // One second at 100 kbit/s is about 12.5 kB; rate control may overshoot on the first key frame.
    EXPECT_LT(low, 40000u);
}

// NV21 frames decoded from the same clip must give the very same bitstream as NV12 ones.
TEST(Venc, Nv21InputEncodesLikeNv12) {
    REQUIRE_CLIPS();
    Frames nv12, nv21;
    ASSERT_NO_FATAL_FAILURE(load_frames("h264.mp4", &nv12));
    ASSERT_NO_FATAL_FAILURE(load_frames("h264.mp4", &nv21, KES_PIXEL_NV21));
    keep_first(&nv12, 10);
    keep_first(&nv21, 10);
    ASSERT_EQ(nv21.images[0].format, KES_PIXEL_NV21);
    const std::string a = tmp_path("venc-from-nv12.h264"), b = tmp_path("venc-from-nv21.h264");
    kes_venc_config cfg = base_config(a, KES_VIDEO_CODEC_H264, KES_VENC_CONTAINER_ANNEXB);
    cfg.threads = 1;  // x264 is deterministic for a fixed thread count
    ASSERT_NO_FATAL_FAILURE(encode(nv12, cfg));
    cfg.path = b.c_str();
    ASSERT_NO_FATAL_FAILURE(encode(nv21, cfg));
    const std::vector<uint8_t> bytes_a = read_bytes(a), bytes_b = read_bytes(b);
    ASSERT_FALSE(bytes_a.empty());
    EXPECT_TRUE(bytes_a == bytes_b);
}

TEST(Venc, BoardInputRulesAreEnforced) {
    REQUIRE_CLIPS();
    const std::string path = tmp_path("venc-rules.mp4");
    kes_venc_config cfg = base_config(path, KES_VIDEO_CODEC_H264, KES_VENC_CONTAINER_MP4);
    kes_venc* e = nullptr;
    cfg.width = 327;
    EXPECT_EQ(kes_venc_create(&cfg, &e), KES_ERR_INVALID_ARGUMENT);
    cfg.width = 100;  // below 310B's 114
    EXPECT_EQ(kes_venc_create(&cfg, &e), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "114"), nullptr) << kes_last_error();
    cfg.width = 328;
    cfg.codec = KES_VIDEO_CODEC_UNKNOWN;
    EXPECT_EQ(kes_venc_create(&cfg, &e), KES_ERR_INVALID_ARGUMENT);
    cfg.codec = KES_VIDEO_CODEC_H264;
    cfg.fps_num = 0;
    EXPECT_EQ(kes_venc_create(&cfg, &e), KES_ERR_INVALID_ARGUMENT);
    cfg.fps_num = 30;
    ASSERT_EQ(kes_venc_create(&cfg, &e), KES_OK) << kes_last_error();
    // A tightly packed 328-wide frame breaks the board's align16 stride rule.
    std::vector<uint8_t> pixels(328 * 240 * 3 / 2, 128);
    kes_image tight;
    ASSERT_EQ(kes_image_wrap(&tight, KES_PIXEL_NV12, 328, 240, 328, 240, pixels.data(), pixels.size()), KES_OK);
    EXPECT_EQ(kes_venc_encode_frame(e, &tight), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "multiple of 16"), nullptr) << kes_last_error();
    std::vector<uint8_t> small(160 * 120 * 3 / 2, 128);
    kes_image wrong_size;
    ASSERT_EQ(kes_image_wrap(&wrong_size, KES_PIXEL_NV12, 160, 120, 160, 120, small.data(), small.size()), KES_OK);
    EXPECT_EQ(kes_venc_encode_frame(e, &wrong_size), KES_ERR_INVALID_ARGUMENT);
    std::vector<uint8_t> rgb(336 * 240 * 3, 0);
    kes_image rgb_img;
    ASSERT_EQ(kes_image_wrap(&rgb_img, KES_PIXEL_RGB888, 328, 240, 336 * 3, 240, rgb.data(), rgb.size()), KES_OK);
    EXPECT_EQ(kes_venc_encode_frame(e, &rgb_img), KES_ERR_INVALID_ARGUMENT);
    kes_venc_destroy(e);  // finishes the (empty) file
    kes_venc_destroy(nullptr);
}

TEST(Venc, UnwritablePathIsAnError) {
    kes_venc_config cfg;
    kes_venc_config_init(&cfg);
    const std::string path = tmp_path("no-such-dir/out.mp4");
    cfg.path = path.c_str();
    cfg.width = 320;
    cfg.height = 240;
    kes_venc* e = nullptr;
    const kes_status st = kes_venc_create(&cfg, &e);
    EXPECT_TRUE(st == KES_ERR_IO || st == KES_ERR_NOT_FOUND) << kes_status_str(st);
    EXPECT_EQ(e, nullptr);
}

}  // namespace
