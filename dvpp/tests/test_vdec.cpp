// VDEC tests: clips made at build time by Debian's ffmpeg (dvpp/video.cmake), frames compared with
// FFmpeg's own decode of the same clips (ffmpeg -f framemd5 -pix_fmt nv12: MD5 of each tightly packed
// NV12 frame).
#include <gtest/gtest.h>

extern "C" {
#include <libavformat/avformat.h>
#include <libavutil/log.h>
#include <libavutil/md5.h>
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dvpp_test_util.hpp"
#include "kestrel/dvpp_video.h"
#include "test_deps.hpp"

namespace vtest {

// FFmpeg logs at INFO by default (x264 prints its statistics); the tests check statuses and counters.
const int quiet_ffmpeg = (av_log_set_level(AV_LOG_ERROR), 0);

std::string data_path(const char* name) {
#ifdef KES_VIDEO_TEST_DATA
    return std::string(KES_VIDEO_TEST_DATA) + "/" + name;
#else
    (void)name;
    return {};
#endif
}

std::string tmp_path(const std::string& name) {
    return std::string(KES_TEST_TMPDIR) + "/" + name;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// The hash column of every frame line of an ffmpeg framemd5 file.
std::vector<std::string> read_framemd5(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> md5s;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        const size_t comma = line.rfind(',');
        if (comma == std::string::npos) continue;
        size_t start = comma + 1;
        while (start < line.size() && line[start] == ' ') ++start;
        md5s.push_back(line.substr(start));
    }
    return md5s;
}

// NV12 rows without padding (what framemd5 hashes); NV21 is swapped back to NV12 first.
std::vector<uint8_t> tight_nv12(const kes_image& img) {
    const uint32_t w = img.width, h = img.height, cw = (w + 1) / 2, ch = (h + 1) / 2;
    std::vector<uint8_t> out;
    out.reserve(size_t(w) * h + size_t(cw) * 2 * ch);
    const uint8_t* y = static_cast<const uint8_t*>(img.data);
    for (uint32_t r = 0; r < h; ++r)
        out.insert(out.end(), y + size_t(r) * img.width_stride, y + size_t(r) * img.width_stride + w);
    const uint8_t* uv = y + size_t(img.width_stride) * img.height_stride;
    for (uint32_t r = 0; r < ch; ++r) {
        const uint8_t* row = uv + size_t(r) * img.width_stride;
        for (uint32_t i = 0; i < cw; ++i) {
            const bool nv21 = img.format == KES_PIXEL_NV21;
            out.push_back(row[2 * i + (nv21 ? 1 : 0)]);
            out.push_back(row[2 * i + (nv21 ? 0 : 1)]);
        }
    }
    return out;
}

std::string md5_hex(const std::vector<uint8_t>& bytes) {
    uint8_t digest[16];
    av_md5_sum(digest, bytes.data(), int(bytes.size()));
    char hex[33];
    for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return std::string(hex, 32);
}

double psnr(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    if (a.size() != b.size() || a.empty()) return 0.0;
    double se = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double d = double(a[i]) - double(b[i]);
        se += d * d;
    }
    if (se == 0) return 99.0;
    return 10.0 * std::log10(255.0 * 255.0 * double(a.size()) / se);
}

struct DecodedFrame {
    std::string md5;
    std::vector<uint8_t> nv12;  // tight NV12
    int64_t pts;
    uint64_t index;
    bool keyframe, concealed;
    uint32_t width, height, width_stride, height_stride;
};

struct DecodeResult {
    kes_status status = KES_OK;  // of create, or of the first failing read
    std::vector<DecodedFrame> frames;
    kes_vdec_stats stats{};
    bool reached_end = false;
};

DecodedFrame take(kes_vdec_frame& f) {
    DecodedFrame d;
    d.nv12 = tight_nv12(f.image);
    d.md5 = md5_hex(d.nv12);
    d.pts = f.pts;
    d.index = f.frame_index;
    d.keyframe = f.keyframe != 0;
    d.concealed = f.concealed != 0;
    d.width = f.image.width;
    d.height = f.image.height;
    d.width_stride = f.image.width_stride;
    d.height_stride = f.image.height_stride;
    kes_image_release(&f.image);
    return d;
}

DecodeResult decode_source(kes_vdec_config cfg) {
    DecodeResult r;
    kes_vdec* v = nullptr;
    r.status = kes_vdec_create(&cfg, &v);
    if (r.status != KES_OK) return r;
    for (int guard = 0; guard < 10000; ++guard) {
        kes_vdec_frame f;
        const kes_status st = kes_vdec_read_frame(v, &f);
        if (st != KES_OK) {
            r.status = st;
            break;
        }
        if (f.end_of_stream) {
            r.reached_end = true;
            break;
        }
        r.frames.push_back(take(f));
    }
    kes_vdec_get_stats(v, &r.stats);
    kes_vdec_destroy(v);
    return r;
}

DecodeResult decode_file(const std::string& path, const kes_board_profile* profile = nullptr) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = path.c_str();
    cfg.board_profile = profile;
    return decode_source(cfg);
}

// Feeds `bytes` in `chunk`-byte packets through the packet API and collects every frame.
DecodeResult decode_packets(kes_video_codec codec, const std::vector<uint8_t>& bytes, size_t chunk,
                            uint32_t threads = 0) {
    DecodeResult r;
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.codec = codec;
    cfg.threads = threads;
    kes_vdec* v = nullptr;
    r.status = kes_vdec_create(&cfg, &v);
    if (r.status != KES_OK) return r;
    auto receive = [&] {
        for (;;) {
            kes_vdec_frame f;
            const kes_status st = kes_vdec_receive_frame(v, &f);
            if (st == KES_ERR_BUSY) return;
            if (st != KES_OK) {
                r.status = st;
                return;
            }
            if (f.end_of_stream) {
                r.reached_end = true;
                return;
            }
            r.frames.push_back(take(f));
        }
    };
    int64_t pts = 0;
    for (size_t off = 0; off < bytes.size(); off += chunk) {
        const size_t n = std::min(chunk, bytes.size() - off);
        EXPECT_EQ(kes_vdec_send_packet(v, bytes.data() + off, n, pts++), KES_OK) << kes_last_error();
        receive();
    }
    EXPECT_EQ(kes_vdec_send_packet(v, nullptr, 0, KES_VIDEO_NO_PTS), KES_OK) << kes_last_error();
    receive();
    kes_vdec_get_stats(v, &r.stats);
    kes_vdec_destroy(v);
    return r;
}

}  // namespace vtest

namespace {

using namespace vtest;

#define REQUIRE_CLIPS()                                                                                    \
    do {                                                                                                   \
        if (data_path("h264.mp4").empty()) KES_TEST_SKIP("no test clips (ffmpeg not found at configure)"); \
    } while (0)

void expect_matches_reference(const DecodeResult& r, const std::vector<std::string>& ref) {
    ASSERT_EQ(r.status, KES_OK) << kes_last_error();
    EXPECT_TRUE(r.reached_end);
    ASSERT_EQ(r.frames.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
        EXPECT_EQ(r.frames[i].md5, ref[i]) << "frame " << i;
        EXPECT_EQ(r.frames[i].index, i);
    }
}

TEST(Vdec, H264Mp4MatchesFfmpegDecodeWithBoardStrides) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    ASSERT_EQ(ref.size(), 30u);
    const DecodeResult r = decode_file(data_path("h264.mp4"), kes_board_get_profile(KES_BOARD_310));
    expect_matches_reference(r, ref);
    ASSERT_FALSE(r.frames.empty());
    for (size_t i = 0; i < r.frames.size(); ++i) {
        const DecodedFrame& f = r.frames[i];
        EXPECT_EQ(f.width, 328u);
        EXPECT_EQ(f.height, 240u);
        EXPECT_EQ(f.width_stride, 336u) << "VDEC stride align16(328)";
        EXPECT_EQ(f.height_stride, 240u);
        EXPECT_EQ(f.keyframe, i % 10 == 0) << "frame " << i;
        // mp4 timestamps in microseconds: frame i at i/30 s (B-frames reordered back to display order).
        EXPECT_NEAR(double(f.pts), double(i) * 1e6 / 30.0, 1.0) << "frame " << i;
    }
    EXPECT_EQ(r.stats.frames_decoded, 30u);
    EXPECT_EQ(r.stats.frames_delivered, 30u);
    EXPECT_EQ(r.stats.corrupt_packets, 0u);
    EXPECT_EQ(r.stats.concealed_frames, 0u);
}

TEST(Vdec, AnnexBAndTransportStreamGiveTheSameFrames) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    expect_matches_reference(decode_file(data_path("h264.h264")), ref);
    expect_matches_reference(decode_file(data_path("h264.ts")), ref);
}

TEST(Vdec, H265MkvAndAnnexBMatchFfmpegDecode) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h265.nv12.framemd5"));
    ASSERT_EQ(ref.size(), 30u);
    expect_matches_reference(decode_file(data_path("h265.mkv")), ref);
    expect_matches_reference(decode_file(data_path("h265.h265")), ref);
}

TEST(Vdec, StreamInfoDescribesSourceAndOutput) {
    REQUIRE_CLIPS();
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    const std::string path = data_path("h265.mkv");
    cfg.source = path.c_str();
    cfg.board_profile = kes_board_get_profile(KES_BOARD_310B);
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    kes_vdec_stream_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(kes_vdec_get_stream_info(v, &info), KES_OK) << kes_last_error();
    EXPECT_EQ(info.codec, KES_VIDEO_CODEC_H265);
    EXPECT_EQ(info.width, 328u);
    EXPECT_EQ(info.height, 240u);
    EXPECT_EQ(info.bit_depth, 8u);
    EXPECT_EQ(info.fps_num * 1u, 30u * info.fps_den);
    EXPECT_EQ(info.output_width, 328u);
    EXPECT_EQ(info.width_stride, 336u);
    EXPECT_EQ(info.height_stride, 240u);
    EXPECT_EQ(info.frame_size, size_t(336) * 240 * 3 / 2);
    kes_vdec_destroy(v);
}

TEST(Vdec, Nv21OutputHoldsVuPairs) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    const std::string path = data_path("h264.mp4");
    cfg.source = path.c_str();
    cfg.output_format = KES_PIXEL_NV21;
    const DecodeResult r = decode_source(cfg);  // tight_nv12 swaps NV21 back before hashing
    expect_matches_reference(r, ref);
}

TEST(Vdec, EveryNthFrameKeepsDisplayIndices) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    const std::string path = data_path("h264.mp4");
    cfg.source = path.c_str();
    cfg.frame_interval = 4;
    const DecodeResult r = decode_source(cfg);
    ASSERT_EQ(r.status, KES_OK) << kes_last_error();
    ASSERT_EQ(r.frames.size(), 8u);  // 0, 4, ..., 28
    for (size_t i = 0; i < r.frames.size(); ++i) {
        EXPECT_EQ(r.frames[i].index, 4 * i);
        EXPECT_EQ(r.frames[i].md5, ref[4 * i]) << "frame " << 4 * i;
    }
    EXPECT_EQ(r.stats.frames_decoded, 30u);
    EXPECT_EQ(r.stats.frames_skipped, 22u);
}

TEST(Vdec, KeyframesOnlyDecodesOnlyKeyFrames) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    for (const char* clip : {"h264.mp4", "h264.h264"}) {
        kes_vdec_config cfg;
        kes_vdec_config_init(&cfg);
        const std::string path = data_path(clip);
        cfg.source = path.c_str();
        cfg.keyframes_only = 1;
        const DecodeResult r = decode_source(cfg);
        ASSERT_EQ(r.status, KES_OK) << kes_last_error();
        ASSERT_EQ(r.frames.size(), 3u) << clip;
        for (size_t i = 0; i < 3; ++i) {
            EXPECT_EQ(r.frames[i].index, 10 * i) << clip;
            EXPECT_EQ(r.frames[i].md5, ref[10 * i]) << clip << " frame " << 10 * i;
            EXPECT_TRUE(r.frames[i].keyframe);
        }
        EXPECT_EQ(r.stats.frames_decoded, 3u) << clip << ": non-key frames must not be decoded";
    }
}

TEST(Vdec, OutputResizeMatchesFfmpegBilinearScale) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264_160x120.nv12.framemd5"));
    ASSERT_EQ(ref.size(), 30u);
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    const std::string path = data_path("h264.mp4");
    cfg.source = path.c_str();
    cfg.output_width = 160;
    cfg.output_height = 120;
    cfg.board_profile = kes_board_get_profile(KES_BOARD_310);
    const DecodeResult r = decode_source(cfg);
    expect_matches_reference(r, ref);
    ASSERT_FALSE(r.frames.empty());
    EXPECT_EQ(r.frames[0].width, 160u);
    EXPECT_EQ(r.frames[0].height, 120u);
    EXPECT_EQ(r.frames[0].width_stride, 160u);
}

TEST(Vdec, ConfigRulesAreRefused) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    kes_vdec* v = nullptr;
    // Packet mode needs a codec.
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "codec"), nullptr) << kes_last_error();
    cfg.codec = KES_VIDEO_CODEC_H264;
    cfg.output_format = KES_PIXEL_RGB888;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    cfg.output_format = KES_PIXEL_NV12;
    cfg.output_width = 161;
    cfg.output_height = 120;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "even"), nullptr) << kes_last_error();
    cfg.output_width = 8;  // below VPC's 10x6 minimum
    cfg.output_height = 8;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    cfg.output_width = 8192;  // above the 310 profile's 4096x4096 output
    cfg.output_height = 64;
    cfg.board_profile = kes_board_get_profile(KES_BOARD_310);
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    cfg.output_width = cfg.output_height = 0;
    cfg.frame_interval = 0;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    cfg.frame_interval = 1;
    cfg.struct_size = 4;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(v, nullptr);
    EXPECT_EQ(kes_vdec_create(nullptr, &v), KES_ERR_INVALID_ARGUMENT);
    kes_vdec_destroy(nullptr);
    EXPECT_EQ(kes_vdec_open_channels(), 0u);
}

TEST(Vdec, MissingFileIsNotFound) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    const std::string path = tmp_path("no-such-clip.mp4");
    std::remove(path.c_str());
    cfg.source = path.c_str();
    kes_vdec* v = nullptr;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_NOT_FOUND);
    EXPECT_NE(std::strstr(kes_last_error(), "no-such-clip.mp4"), nullptr) << kes_last_error();
    EXPECT_EQ(v, nullptr);
    EXPECT_EQ(kes_vdec_open_channels(), 0u);
}

TEST(Vdec, NonVideoBytesAreCorruptData) {
    std::vector<uint8_t> junk(4096);
    for (size_t i = 0; i < junk.size(); ++i) junk[i] = uint8_t((i * 2654435761u) >> 13);
    const std::string path = tmp_path("vdec-junk.bin");
    write_bytes(path, junk);
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = path.c_str();
    kes_vdec* v = nullptr;
    const kes_status st = kes_vdec_create(&cfg, &v);
    EXPECT_TRUE(st == KES_ERR_CORRUPT_DATA || st == KES_ERR_UNSUPPORTED)
        << kes_status_str(st) << ": " << kes_last_error();
    EXPECT_EQ(v, nullptr);
}

TEST(Vdec, StreamBelowTheBoardMinimumIsUnsupported) {
    REQUIRE_CLIPS();
    // 64x64 is under VDEC's 128x128 minimum on 310 (BOARD-RULES §VDEC); the host profile takes it.
    const DecodeResult board = decode_file(data_path("tiny_64x64.h264"), kes_board_get_profile(KES_BOARD_310));
    EXPECT_EQ(board.status, KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::strstr(kes_last_error(), "128"), nullptr) << kes_last_error();
    const DecodeResult host = decode_file(data_path("tiny_64x64.h264"), kes_board_get_profile(KES_BOARD_HOST));
    EXPECT_EQ(host.status, KES_OK) << kes_last_error();
    EXPECT_EQ(host.frames.size(), 3u);
}

// Byte offsets of every "00 00 01" start code followed by an IDR slice NAL (type 5).
std::vector<size_t> idr_offsets(const std::vector<uint8_t>& s) {
    std::vector<size_t> out;
    for (size_t i = 0; i + 3 < s.size(); ++i)
        if (s[i] == 0 && s[i + 1] == 0 && s[i + 2] == 1 && (s[i + 3] & 0x1f) == 5) out.push_back(i);
    return out;
}

// The stream with 64 bytes of garbage in the middle of its second GOP (frames 10..19).
std::string make_corrupt_clip(const char* name) {
    std::vector<uint8_t> stream = read_bytes(data_path("h264.h264"));
    const std::vector<size_t> idr = idr_offsets(stream);
    EXPECT_EQ(idr.size(), 3u) << "key frames at 0, 10, 20";
    if (idr.size() != 3) return {};
    const size_t mid = (idr[1] + idr[2]) / 2;
    for (size_t i = mid; i < mid + 64; ++i) stream[i] ^= 0xA5;
    const std::string path = tmp_path(name);
    write_bytes(path, stream);
    return path;
}

DecodeResult decode_corrupt(const std::string& path, uint32_t threads, bool packets) {
    if (!packets) {
        kes_vdec_config cfg;
        kes_vdec_config_init(&cfg);
        cfg.source = path.c_str();
        cfg.threads = threads;
        return decode_source(cfg);
    }
    return decode_packets(KES_VIDEO_CODEC_H264, read_bytes(path), 1500, threads);
}

TEST(Vdec, CorruptPacketIsReportedAndTheStreamGoesOn) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    const std::string path = make_corrupt_clip("vdec-corrupt.h264");
    ASSERT_FALSE(path.empty());
    // threads 1: FFmpeg 5.1 flags concealed frames reliably only without frame threads (dvpp_video.h).
    for (uint32_t threads : {1u, 0u}) {
        for (bool packets : {false, true}) {
            const DecodeResult r = decode_corrupt(path, threads, packets);
            SCOPED_TRACE(std::string(packets ? "packet API" : "file") + ", threads " + std::to_string(threads));
            ASSERT_EQ(r.status, KES_OK) << kes_last_error();
            EXPECT_TRUE(r.reached_end);
            if (threads == 1) {
                EXPECT_GE(r.stats.corrupt_packets + r.stats.concealed_frames, 1u) << "the damage must be reported";
            }
            size_t first_gop = 0, last_gop = 0;
            for (const DecodedFrame& f : r.frames) {
                ASSERT_LT(f.index, 30u);
                if (f.index < 10 && f.md5 == ref[f.index]) ++first_gop;
                if (f.index >= 20 && f.md5 == ref[f.index]) ++last_gop;
            }
            EXPECT_EQ(first_gop, 10u);
            EXPECT_EQ(last_gop, 10u) << "decoding must recover at the next key frame";
        }
    }
}

TEST(Vdec, DropConcealedDeliversOnlyCleanFrames) {
    REQUIRE_CLIPS();
    const std::string path = make_corrupt_clip("vdec-corrupt-drop.h264");
    ASSERT_FALSE(path.empty());
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = path.c_str();
    cfg.threads = 1;
    cfg.drop_concealed = 1;
    const DecodeResult r = decode_source(cfg);
    ASSERT_EQ(r.status, KES_OK) << kes_last_error();
    for (const DecodedFrame& f : r.frames) EXPECT_FALSE(f.concealed) << "frame " << f.index;
    EXPECT_GE(r.stats.concealed_frames, 1u);
    EXPECT_EQ(r.stats.frames_skipped, r.stats.concealed_frames);
    EXPECT_EQ(r.stats.frames_delivered + r.stats.frames_skipped, r.stats.frames_decoded);
    EXPECT_EQ(r.frames.size(), 30u - r.stats.concealed_frames);
}

TEST(Vdec, TruncatedAnnexBDecodesWhatIsThere) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    std::vector<uint8_t> stream = read_bytes(data_path("h264.h264"));
    const std::vector<size_t> idr = idr_offsets(stream);
    ASSERT_EQ(idr.size(), 3u);
    stream.resize(idr[2] + 100);  // cut inside the third GOP's key frame
    const std::string path = tmp_path("vdec-truncated.h264");
    write_bytes(path, stream);
    const DecodeResult r = decode_file(path);
    ASSERT_EQ(r.status, KES_OK) << kes_last_error();
    EXPECT_TRUE(r.reached_end);
    ASSERT_GE(r.frames.size(), 20u);
    EXPECT_LE(r.frames.size(), 21u);
    for (size_t i = 0; i < 20; ++i) EXPECT_EQ(r.frames[i].md5, ref[i]) << "frame " << i;
}

TEST(Vdec, TruncatedMp4WithoutIndexIsCorruptData) {
    REQUIRE_CLIPS();
    std::vector<uint8_t> mp4 = read_bytes(data_path("h264.mp4"));
    mp4.resize(mp4.size() * 6 / 10);  // the moov index is at the end
    const std::string path = tmp_path("vdec-truncated.mp4");
    write_bytes(path, mp4);
    const DecodeResult r = decode_file(path);
    EXPECT_EQ(r.status, KES_ERR_CORRUPT_DATA) << kes_last_error();
}

TEST(Vdec, PacketApiMatchesFfmpegDecodeForAnyChunking) {
    REQUIRE_CLIPS();
    const auto ref264 = read_framemd5(data_path("h264.nv12.framemd5"));
    const auto ref265 = read_framemd5(data_path("h265.nv12.framemd5"));
    const std::vector<uint8_t> s264 = read_bytes(data_path("h264.h264"));
    const std::vector<uint8_t> s265 = read_bytes(data_path("h265.h265"));
    for (size_t chunk : {size_t(997), size_t(1) << 20}) {
        expect_matches_reference(decode_packets(KES_VIDEO_CODEC_H264, s264, chunk), ref264);
        expect_matches_reference(decode_packets(KES_VIDEO_CODEC_H265, s265, chunk), ref265);
    }
}

TEST(Vdec, PacketApiSignalsBusyThenEndOfStream) {
    REQUIRE_CLIPS();
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.codec = KES_VIDEO_CODEC_H264;
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    kes_vdec_frame f;
    EXPECT_EQ(kes_vdec_receive_frame(v, &f), KES_ERR_BUSY);
    kes_vdec_stream_info info;
    info.struct_size = sizeof info;
    EXPECT_EQ(kes_vdec_get_stream_info(v, &info), KES_ERR_BUSY);
    EXPECT_EQ(kes_vdec_read_frame(v, &f), KES_ERR_INVALID_ARGUMENT);
    const std::vector<uint8_t> s = read_bytes(data_path("camera.h264"));
    ASSERT_EQ(kes_vdec_send_packet(v, s.data(), s.size(), 0), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_vdec_send_packet(v, nullptr, 0, 0), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_vdec_send_packet(v, s.data(), s.size(), 0), KES_ERR_INVALID_ARGUMENT);
    size_t frames = 0;
    for (;;) {
        ASSERT_EQ(kes_vdec_receive_frame(v, &f), KES_OK) << kes_last_error();
        if (f.end_of_stream) break;
        EXPECT_EQ(f.frame_index, frames);
        ++frames;
        kes_image_release(&f.image);
    }
    EXPECT_EQ(frames, 90u);
    EXPECT_EQ(f.image.data, nullptr);
    ASSERT_EQ(kes_vdec_receive_frame(v, &f), KES_OK);
    EXPECT_EQ(f.end_of_stream, 1u) << "end of stream is sticky";
    ASSERT_EQ(kes_vdec_get_stream_info(v, &info), KES_OK) << kes_last_error();
    EXPECT_EQ(info.width, 328u);
    kes_vdec_destroy(v);
}

TEST(Vdec, EveryCallRecordsATraceSpan) {
    REQUIRE_CLIPS();
    const std::string path = data_path("camera.h264");
    const std::string trace = kes_test::traced("vdec", [&] {
        for (bool packets : {false, true}) {
            kes_vdec_config cfg;
            kes_vdec_config_init(&cfg);
            if (packets)
                cfg.codec = KES_VIDEO_CODEC_H264;
            else
                cfg.source = path.c_str();
            kes_vdec* v = nullptr;
            ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
            if (packets) {
                const std::vector<uint8_t> s = read_bytes(path);
                EXPECT_EQ(kes_vdec_send_packet(v, s.data(), s.size(), 0), KES_OK) << kes_last_error();
                EXPECT_EQ(kes_vdec_send_packet(v, nullptr, 0, KES_VIDEO_NO_PTS), KES_OK) << kes_last_error();
            }
            kes_vdec_frame f;
            EXPECT_EQ(packets ? kes_vdec_receive_frame(v, &f) : kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
            kes_image_release(&f.image);
            kes_vdec_destroy(v);
        }
    });
    for (const char* span : {"vdec_create", "vdec_read_frame", "vdec_send_packet", "vdec_receive_frame"})
        EXPECT_TRUE(kes_test::has_dvpp_span(trace, span)) << span << "\n" << trace;
}

TEST(Vdec, PacketApiCarriesPtsThroughReordering) {
    REQUIRE_CLIPS();
    // The transport stream holds Annex-B access units with their 90 kHz pts in decode order (the clip
    // has B-frames): what an app that demuxes by itself sends, one frame per call as on the board.
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    const std::string ts = data_path("h264.ts");
    AVFormatContext* fmt = nullptr;
    ASSERT_EQ(avformat_open_input(&fmt, ts.c_str(), nullptr, nullptr), 0);
    ASSERT_GE(avformat_find_stream_info(fmt, nullptr), 0);
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.codec = KES_VIDEO_CODEC_H264;
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    std::vector<int64_t> sent, received;
    std::vector<std::string> md5s;
    auto receive = [&] {
        for (;;) {
            kes_vdec_frame f;
            const kes_status st = kes_vdec_receive_frame(v, &f);
            if (st == KES_ERR_BUSY || (st == KES_OK && f.end_of_stream)) return;
            ASSERT_EQ(st, KES_OK) << kes_last_error();
            received.push_back(f.pts);
            md5s.push_back(take(f).md5);
        }
    };
    AVPacket* pkt = av_packet_alloc();
    while (av_read_frame(fmt, pkt) >= 0) {
        sent.push_back(pkt->pts);
        EXPECT_EQ(kes_vdec_send_packet(v, pkt->data, size_t(pkt->size), pkt->pts), KES_OK) << kes_last_error();
        av_packet_unref(pkt);
        receive();
    }
    av_packet_free(&pkt);
    avformat_close_input(&fmt);
    ASSERT_EQ(kes_vdec_send_packet(v, nullptr, 0, KES_VIDEO_NO_PTS), KES_OK);
    receive();
    kes_vdec_destroy(v);
    ASSERT_EQ(sent.size(), 30u);
    std::vector<int64_t> display = sent;
    std::sort(display.begin(), display.end());
    EXPECT_NE(display, sent) << "the clip must have B-frames for this test to mean something";
    EXPECT_EQ(received, display) << "each frame keeps the pts of its packet, in display order";
    EXPECT_EQ(md5s, ref);
}

TEST(Vdec, HighBitDepthIsConvertedTo8BitOrRefused) {
    REQUIRE_CLIPS();
    const std::vector<uint8_t> ref = read_bytes(data_path("h265_10bit.nv12"));
    const size_t frame_bytes = size_t(328) * 240 * 3 / 2;
    ASSERT_EQ(ref.size(), 8 * frame_bytes);
    const DecodeResult r = decode_file(data_path("h265_10bit.h265"));
    ASSERT_EQ(r.status, KES_OK) << kes_last_error();
    ASSERT_EQ(r.frames.size(), 8u);
    for (size_t i = 0; i < 8; ++i) {
        const std::vector<uint8_t> want(ref.begin() + long(i * frame_bytes), ref.begin() + long((i + 1) * frame_bytes));
        EXPECT_GT(psnr(r.frames[i].nv12, want), 40.0) << "frame " << i;
    }
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    const std::string path = data_path("h265_10bit.h265");
    cfg.source = path.c_str();
    cfg.refuse_high_bit_depth = 1;
    kes_vdec* v = nullptr;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::strstr(kes_last_error(), "10-bit"), nullptr) << kes_last_error();
}

TEST(Vdec, ThirtyTwoChannelsAtOnceAndNoMore) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    const kes_board_profile* p310 = kes_board_get_profile(KES_BOARD_310);
    ASSERT_EQ(p310->vdec_max_channels, 32u);
    const std::string path = data_path("h264.h264");
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = path.c_str();
    cfg.board_profile = p310;
    cfg.threads = 1;
    std::vector<kes_vdec*> channels(32, nullptr);
    for (auto& ch : channels) ASSERT_EQ(kes_vdec_create(&cfg, &ch), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_vdec_open_channels(), 32u);
    kes_vdec* extra = nullptr;
    EXPECT_EQ(kes_vdec_create(&cfg, &extra), KES_ERR_BUSY);
    EXPECT_NE(std::strstr(kes_last_error(), "32"), nullptr) << kes_last_error();
    // Round-robin: every channel keeps its own state.
    std::vector<size_t> counts(32, 0);
    std::vector<bool> done(32, false);
    size_t finished = 0;
    while (finished < 32) {
        for (size_t c = 0; c < 32; ++c) {
            if (done[c]) continue;
            kes_vdec_frame f;
            ASSERT_EQ(kes_vdec_read_frame(channels[c], &f), KES_OK) << kes_last_error();
            if (f.end_of_stream) {
                done[c] = true;
                ++finished;
                continue;
            }
            const DecodedFrame d = take(f);
            ASSERT_LT(counts[c], ref.size());
            EXPECT_EQ(d.md5, ref[counts[c]]) << "channel " << c << " frame " << counts[c];
            ++counts[c];
        }
    }
    for (size_t c = 0; c < 32; ++c) EXPECT_EQ(counts[c], 30u) << "channel " << c;
    kes_vdec_destroy(channels[5]);
    channels[5] = nullptr;
    EXPECT_EQ(kes_vdec_create(&cfg, &channels[5]), KES_OK) << "a closed channel frees its slot";
    for (kes_vdec* ch : channels) kes_vdec_destroy(ch);
    EXPECT_EQ(kes_vdec_open_channels(), 0u);
}

TEST(Vdec, FullPoolKeepsTheFrameForTheNextCall) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h264.nv12.framemd5"));
    kes_mem_pool_config pc;
    kes_mem_pool_config_init(&pc);
    pc.initial_bytes = 200 * 1024;  // one 336x240 NV12 frame (120960 bytes), not two
    pc.name = "vdec-one-frame";
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&pc, &pool), KES_OK);
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    const std::string path = data_path("h264.mp4");
    cfg.source = path.c_str();
    cfg.pool = pool;
    cfg.board_profile = kes_board_get_profile(KES_BOARD_310);
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    kes_vdec_frame first, second;
    ASSERT_EQ(kes_vdec_read_frame(v, &first), KES_OK) << kes_last_error();
    EXPECT_EQ(first.image.pool, pool);
    EXPECT_EQ(kes_vdec_read_frame(v, &second), KES_ERR_OUT_OF_MEMORY);
    kes_image_release(&first.image);
    ASSERT_EQ(kes_vdec_read_frame(v, &second), KES_OK) << kes_last_error();
    EXPECT_EQ(second.frame_index, 1u);
    EXPECT_EQ(md5_hex(tight_nv12(second.image)), ref[1]);
    kes_image_release(&second.image);
    kes_vdec_destroy(v);
    kes_mem_pool_destroy(pool);
}

TEST(Vdec, ThreadCountDoesNotChangeTheFrames) {
    REQUIRE_CLIPS();
    const auto ref = read_framemd5(data_path("h265.nv12.framemd5"));
    for (uint32_t threads : {1u, 3u}) {
        kes_vdec_config cfg;
        kes_vdec_config_init(&cfg);
        const std::string path = data_path("h265.h265");
        cfg.source = path.c_str();
        cfg.threads = threads;
        expect_matches_reference(decode_source(cfg), ref);
    }
}

}  // namespace
