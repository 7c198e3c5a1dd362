// JPEGD behaviour (BOARD-RULES §JPEGD): formats per source, board strides, orientation, strict mode, errors.
#include <cstdio>
#include <string>
#include <thread>

#include "dvpp_test_util.hpp"
#include "kestrel/trace.h"

using namespace kes_test;

namespace {

// Expects out's Y and chroma to equal TurboJPEG's own planes for an equal-subsampling output.
void expect_planes_equal(const Image& img, const RefPlanes& ref, bool vu) {
    for (uint32_t y = 0; y < img.height; ++y)
        ASSERT_EQ(0, std::memcmp(img.row(0, y), &ref.y[size_t(y) * ref.w], img.width)) << "luma row " << y;
    for (int y = 0; y < ref.ch; ++y) {
        const uint8_t* c = img.row(1, uint32_t(y));
        for (int x = 0; x < ref.cw; ++x) {
            ASSERT_EQ(c[2 * x + (vu ? 1 : 0)], ref.u[size_t(y) * ref.cw + x]) << "U at " << x << "," << y;
            ASSERT_EQ(c[2 * x + (vu ? 0 : 1)], ref.v[size_t(y) * ref.cw + x]) << "V at " << x << "," << y;
        }
    }
}

// Stored (x, y) shown at displayed (xo, yo) for EXIF orientation o, stored size w × h.
void source_of(int o, int w, int h, int xo, int yo, int* x, int* y) {
    switch (o) {
        case 2:
            *x = w - 1 - xo;
            *y = yo;
            break;
        case 3:
            *x = w - 1 - xo;
            *y = h - 1 - yo;
            break;
        case 4:
            *x = xo;
            *y = h - 1 - yo;
            break;
        case 5:
            *x = yo;
            *y = xo;
            break;
        case 6:
            *x = yo;
            *y = h - 1 - xo;
            break;
        case 7:
            *x = w - 1 - yo;
            *y = h - 1 - xo;
            break;
        case 8:
            *x = w - 1 - yo;
            *y = xo;
            break;
        default:
            *x = xo;
            *y = yo;
            break;
    }
}

}  // namespace

TEST(JpegDecode, Nv12From420MatchesTurboJpeg) {
    const auto jpeg = encode_jpeg(64, 48, TJSAMP_420);
    Channel ch;
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK)
        << kes_last_error();
    EXPECT_EQ(img.format, KES_PIXEL_NV12);
    EXPECT_EQ(img.width, 64u);
    EXPECT_EQ(img.height, 48u);
    expect_planes_equal(img, ref_planes(jpeg), false);
}

TEST(JpegDecode, Nv21SwapsChromaOrder) {
    const auto jpeg = encode_jpeg(64, 48, TJSAMP_420);
    Channel ch;
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV21, nullptr, &img), KES_OK);
    expect_planes_equal(img, ref_planes(jpeg), true);
}

TEST(JpegDecode, StridesFollowBoardProfile) {
    const auto jpeg = encode_jpeg(40, 40, TJSAMP_420);
    struct Case {
        kes_board board;
        uint32_t ws, hs;
    } cases[] = {{KES_BOARD_310, 128, 48}, {KES_BOARD_310B, 64, 48}, {KES_BOARD_HOST, 40, 40}};
    for (const Case& c : cases) {
        Channel ch(c.board);
        Image img;
        ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
        EXPECT_EQ(img.width_stride, c.ws) << kes_board_name(c.board);
        EXPECT_EQ(img.height_stride, c.hs) << kes_board_name(c.board);
        uint32_t ws = 0, hs = 0;
        ASSERT_EQ(kes_image_strides(KES_PIXEL_NV12, 40, 40, KES_STRIDE_JPEGD, c.board, &ws, &hs), KES_OK);
        EXPECT_EQ(img.width_stride, ws);
        EXPECT_EQ(img.height_stride, hs);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(img.data) % KES_MEM_ALIGNMENT, 0u);
        expect_planes_equal(img, ref_planes(jpeg), false);
    }
}

TEST(JpegDecode, GrayscaleFillsChromaWith0x80) {
    const auto jpeg = encode_jpeg(48, 40, TJSAMP_GRAY);
    Channel ch(KES_BOARD_310);
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK)
        << kes_last_error();
    const RefPlanes ref = ref_planes(jpeg);
    for (uint32_t y = 0; y < 40; ++y) ASSERT_EQ(0, std::memcmp(img.row(0, y), &ref.y[y * 48], 48));
    for (uint32_t y = 0; y < 20; ++y)
        for (uint32_t x = 0; x < 48; ++x) ASSERT_EQ(img.row(1, y)[x], 0x80) << x << "," << y;
}

TEST(JpegDecode, Yuv444spFrom444MatchesTurboJpeg) {
    const auto jpeg = encode_jpeg(40, 36, TJSAMP_444);
    Channel ch;
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_YUV444SP, nullptr, &img), KES_OK)
        << kes_last_error();
    expect_planes_equal(img, ref_planes(jpeg), false);
}

TEST(JpegDecode, Nv12From444AveragesChroma) {
    const auto jpeg = encode_jpeg(40, 36, TJSAMP_444);
    Channel ch;
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
    const RefPlanes ref = ref_planes(jpeg);
    for (int y = 0; y < 18; ++y)
        for (int x = 0; x < 20; ++x) {
            auto avg = [&](const std::vector<uint8_t>& p) {
                const int s = p[(2 * y) * 40 + 2 * x] + p[(2 * y) * 40 + 2 * x + 1] + p[(2 * y + 1) * 40 + 2 * x] +
                              p[(2 * y + 1) * 40 + 2 * x + 1];
                return (s + 2) / 4;
            };
            ASSERT_EQ(img.row(1, uint32_t(y))[2 * x], avg(ref.u));
            ASSERT_EQ(img.row(1, uint32_t(y))[2 * x + 1], avg(ref.v));
        }
}

TEST(JpegDecode, Yvu422spAndUnknownKeepSourceSubsampling) {
    const auto jpeg = encode_jpeg(48, 32, TJSAMP_422);
    Channel ch;
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_UNKNOWN, nullptr, &img), KES_OK);
    EXPECT_EQ(img.format, KES_PIXEL_YVU422SP);
    expect_planes_equal(img, ref_planes(jpeg), true);
    const auto j440 = encode_jpeg(48, 32, TJSAMP_440);
    Image img440;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), j440.data(), j440.size(), KES_PIXEL_YUV440SP, nullptr, &img440), KES_OK)
        << kes_last_error();
    expect_planes_equal(img440, ref_planes(j440), false);
}

TEST(JpegDecode, FormatTheSourceCannotGiveIsRefused) {
    const auto jpeg = encode_jpeg(48, 32, TJSAMP_420);
    Channel ch;
    Image img;
    EXPECT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_YUV444SP, nullptr, &img),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("4:2:0"), std::string::npos) << kes_last_error();
    EXPECT_EQ(img.data, nullptr);
    EXPECT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), static_cast<kes_pixel_format>(12345), nullptr, &img),
              KES_ERR_INVALID_ARGUMENT);
}

TEST(JpegDecode, OddSizeRoundedDownToEvenOn310BOnly) {
    const auto jpeg = encode_jpeg(45, 33, TJSAMP_420);
    {
        Channel ch(KES_BOARD_310B);
        Image img;
        ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
        EXPECT_EQ(img.width, 44u);
        EXPECT_EQ(img.height, 32u);
        const RefPlanes ref = ref_planes(jpeg);
        for (uint32_t y = 0; y < 32; ++y) ASSERT_EQ(0, std::memcmp(img.row(0, y), &ref.y[y * 45], 44));
        for (uint32_t y = 0; y < 16; ++y)
            for (uint32_t x = 0; x < 22; ++x) ASSERT_EQ(img.row(1, y)[2 * x], ref.u[y * ref.cw + x]);
    }
    {
        Channel ch(KES_BOARD_310);
        Image img;
        ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
        EXPECT_EQ(img.width, 45u);
        EXPECT_EQ(img.height, 33u);
        expect_planes_equal(img, ref_planes(jpeg), false);
    }
}

TEST(JpegDecode, ProgressiveRefusedInStrictMode) {
    const auto jpeg = encode_jpeg(48, 32, TJSAMP_420, 90, TJFLAG_PROGRESSIVE);
    Channel strict(KES_BOARD_310B, 1);
    Image img;
    EXPECT_EQ(kes_jpeg_decode(strict.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img),
              KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(kes_last_error()).find("progressive"), std::string::npos) << kes_last_error();
}

TEST(JpegDecode, ProgressiveDecodesInDefaultMode) {
    const auto jpeg = encode_jpeg(48, 32, TJSAMP_420, 90, TJFLAG_PROGRESSIVE);
    Channel ch(KES_BOARD_310B);
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK)
        << kes_last_error();
    expect_planes_equal(img, ref_planes(jpeg), false);
    kes_jpeg_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(kes_jpeg_get_info(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, &info), KES_OK);
    EXPECT_EQ(info.progressive, 1u);
    EXPECT_EQ(info.hw_unsupported, KES_JPEG_HW_PROGRESSIVE);
}

TEST(JpegDecode, CmykRefusedInStrictModeDecodedInDefaultMode) {
    const auto jpeg = encode_jpeg(32, 32, TJSAMP_444, 90, 0, TJPF_CMYK);
    Image img;
    {
        Channel strict(KES_BOARD_310B, 1);
        EXPECT_EQ(kes_jpeg_decode(strict.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img),
                  KES_ERR_UNSUPPORTED);
        EXPECT_NE(std::string(kes_last_error()).find("CMYK"), std::string::npos) << kes_last_error();
    }
    Channel ch(KES_BOARD_310B);
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK)
        << kes_last_error();
    EXPECT_EQ(img.width, 32u);
    Image rgb;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_RGB888, nullptr, &rgb), KES_OK);
    // K = 200 everywhere: R ≈ C·200/255 of the gradient (lossy, so loosely).
    EXPECT_NEAR(rgb.row(0, 0)[3 * 31], 255 * 200 / 255, 12);
}

TEST(JpegDecode, ArithmeticAndTwelveBitRefused) {
    auto jpeg = encode_jpeg(32, 32, TJSAMP_420);
    size_t sof = 0;
    for (size_t i = 2; i + 1 < jpeg.size(); ++i)
        if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {
            sof = i;
            break;
        }
    ASSERT_NE(sof, 0u);
    auto arith = jpeg;
    arith[sof + 1] = 0xC9;  // SOF9: arithmetic sequential
    Channel strict(KES_BOARD_310, 1);
    Image img;
    EXPECT_EQ(kes_jpeg_decode(strict.get(), arith.data(), arith.size(), KES_PIXEL_NV12, nullptr, &img),
              KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(kes_last_error()).find("arithmetic"), std::string::npos) << kes_last_error();
    Channel lax(KES_BOARD_310);
    EXPECT_NE(kes_jpeg_decode(lax.get(), arith.data(), arith.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
    auto twelve = jpeg;
    twelve[sof + 4] = 12;  // sample precision
    EXPECT_EQ(kes_jpeg_decode(lax.get(), twelve.data(), twelve.size(), KES_PIXEL_NV12, nullptr, &img),
              KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(kes_last_error()).find("12-bit"), std::string::npos) << kes_last_error();
}

TEST(JpegDecode, TruncatedDataIsCorruptNotCrash) {
    const auto jpeg = encode_jpeg(64, 48, TJSAMP_420);
    Channel ch(KES_BOARD_310B);
    for (size_t len = 0; len < jpeg.size() - 2; len += 13) {
        Image img;
        const kes_status st = kes_jpeg_decode(ch.get(), jpeg.data(), len, KES_PIXEL_NV12, nullptr, &img);
        EXPECT_EQ(st, KES_ERR_CORRUPT_DATA) << "length " << len << ": " << kes_last_error();
        EXPECT_EQ(img.data, nullptr);
    }
    // Garbage inside the entropy-coded data: an error or a decode, never a crash.
    auto bad = jpeg;
    for (size_t i = bad.size() / 2; i < bad.size() / 2 + 40; ++i) bad[i] = uint8_t(i * 37);
    Image img;
    const kes_status st = kes_jpeg_decode(ch.get(), bad.data(), bad.size(), KES_PIXEL_NV12, nullptr, &img);
    EXPECT_TRUE(st == KES_OK || st == KES_ERR_CORRUPT_DATA) << kes_status_str(st);
}

TEST(JpegDecode, AcceptWarningsDecodesTruncatedScan) {
    const auto jpeg = encode_jpeg(64, 48, TJSAMP_420);
    kes_dvpp_channel_config cfg;
    kes_dvpp_channel_config_init(&cfg);
    cfg.board_profile = kes_board_get_profile(KES_BOARD_HOST);
    cfg.accept_warnings = 1;
    Channel ch(cfg);
    Image img;
    EXPECT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size() - 100, KES_PIXEL_NV12, nullptr, &img), KES_OK)
        << kes_last_error();
}

TEST(JpegDecode, ExifOrientationIsApplied) {
    const int w = 48, h = 32;
    const auto plain = encode_jpeg(w, h, TJSAMP_420);
    const RefPlanes ref = ref_planes(plain);
    for (int o = 1; o <= 8; ++o) {
        const auto jpeg = with_exif(plain, uint16_t(o), o % 2 == 0);
        Channel ch;
        kes_jpeg_info info;
        info.struct_size = sizeof info;
        ASSERT_EQ(kes_jpeg_get_info(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, &info), KES_OK);
        EXPECT_EQ(info.orientation, uint32_t(o));
        Image img;
        ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK)
            << kes_last_error();
        const bool swap = o >= 5;
        ASSERT_EQ(img.width, uint32_t(swap ? h : w)) << "orientation " << o;
        ASSERT_EQ(img.height, uint32_t(swap ? w : h)) << "orientation " << o;
        EXPECT_EQ(info.output_width, img.width);
        for (uint32_t yo = 0; yo < img.height; ++yo)
            for (uint32_t xo = 0; xo < img.width; ++xo) {
                int x, y;
                source_of(o, w, h, int(xo), int(yo), &x, &y);
                ASSERT_EQ(img.row(0, yo)[xo], ref.y[size_t(y) * w + x])
                    << "orientation " << o << " at " << xo << "," << yo;
            }
        // Chroma of the displayed top-left 2×2 block comes from the stored block it shows.
        int x, y;
        source_of(o, w, h, 0, 0, &x, &y);
        EXPECT_NEAR(img.row(1, 0)[0], ref.u[size_t(y / 2) * ref.cw + x / 2], 1) << "orientation " << o;
    }
    // Orientation 6 = rotate 90° clockwise: the displayed top-left is the stored bottom-left.
    const auto rot = with_exif(plain, 6);
    Channel ch;
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), rot.data(), rot.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
    EXPECT_EQ(img.row(0, 0)[0], ref.y[size_t(h - 1) * w]);
}

TEST(JpegDecode, OrientationIgnoredWhenChannelSaysSo) {
    const auto jpeg = with_exif(encode_jpeg(48, 32, TJSAMP_420), 6);
    kes_dvpp_channel_config cfg;
    kes_dvpp_channel_config_init(&cfg);
    cfg.apply_orientation = 0;
    Channel ch(cfg);
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
    EXPECT_EQ(img.width, 48u);
}

TEST(JpegDecode, RgbOutputMatchesTjDecompress2) {
    const auto jpeg = encode_jpeg(40, 32, TJSAMP_420);
    Channel ch(KES_BOARD_310);
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_BGR888, nullptr, &img), KES_OK)
        << kes_last_error();
    EXPECT_EQ(img.width_stride, 128u * 3);
    std::vector<uint8_t> ref(40 * 32 * 3);
    tjhandle d = tjInitDecompress();
    ASSERT_EQ(tjDecompress2(d, jpeg.data(), jpeg.size(), ref.data(), 40, 0, 32, TJPF_BGR, 0), 0);
    tjDestroy(d);
    for (uint32_t y = 0; y < 32; ++y) ASSERT_EQ(0, std::memcmp(img.row(0, y), &ref[y * 120], 120));
}

TEST(JpegDecode, DecodeScaledPicksSmallestFactorCoveringTarget) {
    const auto jpeg = encode_jpeg(256, 192, TJSAMP_420);
    Channel ch;
    Image img;
    // 1/4 would give 64×48 (< 60 high); 3/8 gives 96×72.
    ASSERT_EQ(kes_jpeg_decode_scaled(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, 60, 60, nullptr, &img), KES_OK)
        << kes_last_error();
    EXPECT_EQ(img.width, 96u);
    EXPECT_EQ(img.height, 72u);
    expect_planes_equal(img, ref_planes(jpeg, 96, 72), false);
    Image full;
    ASSERT_EQ(kes_jpeg_decode_scaled(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, 1000, 1000, nullptr, &full),
              KES_OK);
    EXPECT_EQ(full.width, 256u);
    Image tiny;
    ASSERT_EQ(kes_jpeg_decode_scaled(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, 1, 1, nullptr, &tiny), KES_OK);
    EXPECT_EQ(tiny.width, 32u);
    EXPECT_EQ(tiny.height, 24u);
}

TEST(JpegDecode, SizeOutsideBoardLimitsIsRefused) {
    const auto jpeg = encode_jpeg(16, 16, TJSAMP_420);
    Channel ch(KES_BOARD_310);
    Image img;
    EXPECT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("32..8192"), std::string::npos) << kes_last_error();
    Channel host(KES_BOARD_HOST);
    EXPECT_EQ(kes_jpeg_decode(host.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
}

TEST(JpegDecode, GetInfoPredictsTheDecodeBuffer) {
    const auto jpeg = encode_jpeg(100, 60, TJSAMP_422);
    Channel ch(KES_BOARD_310);
    kes_jpeg_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(kes_jpeg_get_info(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, &info), KES_OK);
    EXPECT_EQ(info.subsampling, KES_JPEG_CSS_422);
    EXPECT_EQ(info.components, 3u);
    EXPECT_EQ(info.width, 100u);
    EXPECT_EQ(info.width_stride, 128u);
    EXPECT_EQ(info.height_stride, 64u);
    EXPECT_EQ(info.output_size, size_t(128) * 64 * 3 / 2);  // BOARD-RULES §JPEGD PredictDecSize
    EXPECT_EQ(info.hw_unsupported, 0u);
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
    EXPECT_EQ(img.size, info.output_size);
}

TEST(JpegDecode, OutputComesFromTheGivenPool) {
    kes_mem_pool_config pc;
    kes_mem_pool_config_init(&pc);
    pc.initial_bytes = 1 << 20;
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&pc, &pool), KES_OK);
    const auto jpeg = encode_jpeg(64, 48, TJSAMP_420);
    {
        Channel ch(KES_BOARD_310B, 0, pool);
        Image img;
        ASSERT_EQ(kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
        EXPECT_EQ(kes_mem_pool_contains(pool, img.data), 1);
        Channel plain;
        Image img2;
        ASSERT_EQ(kes_jpeg_decode(plain.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, pool, &img2), KES_OK);
        EXPECT_EQ(kes_mem_pool_contains(pool, img2.data), 1);
    }
    kes_mem_pool_stats stats;
    ASSERT_EQ(kes_mem_pool_get_stats(pool, &stats), KES_OK);
    EXPECT_EQ(stats.live_blocks, 0u);
    kes_mem_pool_destroy(pool);
}

TEST(JpegDecode, FileDecodeAndMissingFile) {
    const auto jpeg = encode_jpeg(48, 32, TJSAMP_420);
    const std::string path = std::string(KES_TEST_TMPDIR) + "/dvpp_decode_file.jpg";
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(jpeg.data(), 1, jpeg.size(), f), jpeg.size());
    std::fclose(f);
    Channel ch;
    Image img;
    ASSERT_EQ(kes_jpeg_decode_file(ch.get(), path.c_str(), KES_PIXEL_NV12, nullptr, &img), KES_OK) << kes_last_error();
    EXPECT_EQ(img.width, 48u);
    std::remove(path.c_str());
    Image none;
    EXPECT_EQ(kes_jpeg_decode_file(ch.get(), path.c_str(), KES_PIXEL_NV12, nullptr, &none), KES_ERR_NOT_FOUND);
}

TEST(JpegDecode, DecodeFileRecordsATraceSpan) {
    const auto jpeg = encode_jpeg(48, 32, TJSAMP_420);
    const std::string path = std::string(KES_TEST_TMPDIR) + "/dvpp_decode_file_traced.jpg";
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(jpeg.data(), 1, jpeg.size(), f), jpeg.size());
    std::fclose(f);
    Channel ch;
    Image img;
    const std::string trace = traced("jpeg_decode_file", [&] {
        EXPECT_EQ(kes_jpeg_decode_file(ch.get(), path.c_str(), KES_PIXEL_NV12, nullptr, &img), KES_OK)
            << kes_last_error();
    });
    EXPECT_TRUE(has_dvpp_span(trace, "jpeg_decode_file")) << trace;
}

TEST(JpegDecode, ChannelsDecodeConcurrentlyFromTheirOwnThreads) {
    const auto jpeg = encode_jpeg(64, 48, TJSAMP_420);
    const RefPlanes ref = ref_planes(jpeg);
    std::vector<std::thread> threads;
    std::vector<int> ok(2, 0);
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&, t] {
            kes_dvpp_channel* ch = nullptr;
            if (kes_dvpp_channel_create(nullptr, &ch) != KES_OK) return;
            for (int i = 0; i < 10; ++i) {
                kes_image img;
                if (kes_jpeg_decode(ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img) != KES_OK) break;
                kes_image_plane y;
                kes_image_get_plane(&img, 0, &y);
                ok[t] += std::memcmp(y.data, ref.y.data(), 64) == 0;
                kes_image_release(&img);
            }
            kes_dvpp_channel_destroy(ch);
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(ok[0], 10);
    EXPECT_EQ(ok[1], 10);
}

TEST(DvppChannel, ConfigIsCheckedAndProfileCaptured) {
    kes_dvpp_channel_config cfg;
    kes_dvpp_channel_config_init(&cfg);
    cfg.struct_size = 3;
    kes_dvpp_channel* ch = nullptr;
    EXPECT_EQ(kes_dvpp_channel_create(&cfg, &ch), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(ch, nullptr);
    Channel c310(KES_BOARD_310);
    EXPECT_EQ(kes_dvpp_channel_profile(c310.get())->board, KES_BOARD_310);
    EXPECT_EQ(kes_dvpp_channel_profile(c310.get())->jpegd_width_align, 128u);
    kes_dvpp_channel_destroy(nullptr);
}

TEST(JpegDecode, SeedCorpusDecodesAsLabelled) {
    const std::string dir = std::string(KES_SOURCE_DIR) + "/dvpp/fuzz/seeds/jpeg/";
    Channel lax;
    kes_dvpp_channel_config cfg;
    kes_dvpp_channel_config_init(&cfg);
    cfg.board_profile = kes_board_get_profile(KES_BOARD_HOST);
    cfg.strict = 1;
    Channel strict(cfg);
    struct Seed {
        const char* name;
        kes_status strict_status;
    } seeds[] = {{"baseline_420.jpg", KES_OK},
                 {"baseline_444.jpg", KES_OK},
                 {"baseline_440.jpg", KES_OK},
                 {"restart_422.jpg", KES_OK},
                 {"grey.jpg", KES_OK},
                 {"exif_orientation6_le.jpg", KES_OK},
                 {"exif_orientation8_be.jpg", KES_OK},
                 {"progressive_420.jpg", KES_ERR_UNSUPPORTED},
                 {"arithmetic_420.jpg", KES_ERR_UNSUPPORTED},
                 {"rgb_colorspace.jpg", KES_ERR_UNSUPPORTED}};
    for (const Seed& s : seeds) {
        Image img;
        EXPECT_EQ(kes_jpeg_decode_file(lax.get(), (dir + s.name).c_str(), KES_PIXEL_NV12, nullptr, &img), KES_OK)
            << s.name << ": " << kes_last_error();
        Image img2;
        EXPECT_EQ(kes_jpeg_decode_file(strict.get(), (dir + s.name).c_str(), KES_PIXEL_NV12, nullptr, &img2),
                  s.strict_status)
            << s.name << ": " << kes_last_error();
    }
    Image rot;
    ASSERT_EQ(
        kes_jpeg_decode_file(lax.get(), (dir + "exif_orientation6_le.jpg").c_str(), KES_PIXEL_NV12, nullptr, &rot),
        KES_OK);
    EXPECT_EQ(rot.width, 16u);
    EXPECT_EQ(rot.height, 24u);
    Image cut;
    EXPECT_EQ(kes_jpeg_decode_file(lax.get(), (dir + "truncated_420.jpg").c_str(), KES_PIXEL_NV12, nullptr, &cut),
              KES_ERR_CORRUPT_DATA);
}

TEST(JpegDecode, MaxPixelsGuardsUntrustedInput) {
    const auto jpeg = encode_jpeg(64, 48, TJSAMP_420, 90, TJFLAG_PROGRESSIVE);
    kes_dvpp_channel_config cfg;
    kes_dvpp_channel_config_init(&cfg);
    cfg.max_pixels = 64 * 48 - 1;
    Channel ch(cfg);
    Image img;
    EXPECT_EQ(kes_jpeg_decode_scaled(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, 8, 8, nullptr, &img),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("max_pixels"), std::string::npos) << kes_last_error();
}

TEST(JpegDecode, RecordsATraceSpanWhenTracing) {
    const auto jpeg = encode_jpeg(48, 32, TJSAMP_420);
    const std::string path = std::string(KES_TEST_TMPDIR) + "/dvpp_trace.json";
    ASSERT_EQ(kes_trace_start(path.c_str()), KES_OK) << kes_last_error();
    Channel ch;
    Image img;
    const kes_status st = kes_jpeg_decode(ch.get(), jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img);
    ASSERT_EQ(kes_trace_stop(), KES_OK) << kes_last_error();
    ASSERT_EQ(st, KES_OK);
    FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    std::string text(4096, '\0');
    text.resize(std::fread(&text[0], 1, text.size(), f));
    std::fclose(f);
    EXPECT_NE(text.find("\"name\":\"jpeg_decode\",\"cat\":\"dvpp\""), std::string::npos) << text;
}
