// struct_size (kes/struct_size.hpp, ARCHITECTURE.md "Config structs"): every public dvpp struct is
// accepted at the size of its first release and at a newer, larger size whose unknown tail is zero; a
// non-zero tail and a size below the first release are refused. Output structs get their tail zeroed.
#include <gtest/gtest.h>
#include <png.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "dvpp_test_util.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/dvpp.h"
#include "kestrel/dvpp_video.h"
#include "struct_size_check.hpp"
#include "test_deps.hpp"

using kes_test::expect_out_struct_growth;
using kes_test::expect_struct_growth;
using kes_test::SizedStruct;

namespace {

// sizeof a struct that ended at byte `end`, as the compiler pads it.
constexpr size_t padded(size_t end, size_t align) {
    return (end + align - 1) / align * align;
}

TEST(StructSize, DvppChannelConfigGrowsWithoutBreakingApps) {
    kes_dvpp_channel_config cfg;
    kes_dvpp_channel_config_init(&cfg);
    expect_struct_growth(cfg, offsetof(kes_dvpp_channel_config, max_pixels) + 8, [](kes_dvpp_channel_config* c) {
        kes_dvpp_channel* ch = nullptr;
        const kes_status st = kes_dvpp_channel_create(c, &ch);
        kes_dvpp_channel_destroy(ch);
        return st;
    });
}

TEST(StructSize, VpcLetterboxConfigGrowsWithoutBreakingApps) {
    kes_dvpp_channel* ch = nullptr;
    ASSERT_EQ(kes_dvpp_channel_create(nullptr, &ch), KES_OK) << kes_last_error();
    uint32_t ws = 0, hs = 0;
    ASSERT_EQ(kes_image_strides(KES_PIXEL_NV12, 64, 48, KES_STRIDE_VPC, kes_board_get(), &ws, &hs), KES_OK);
    kes_image in;
    ASSERT_EQ(kes_image_alloc(&in, nullptr, KES_PIXEL_NV12, 64, 48, ws, hs), KES_OK) << kes_last_error();
    std::memset(in.data, 128, in.size);
    kes_vpc_letterbox_config cfg;
    kes_vpc_letterbox_config_init(&cfg);
    expect_struct_growth(cfg, padded(offsetof(kes_vpc_letterbox_config, fill_v) + 1, alignof(kes_vpc_letterbox_config)),
                         [&](kes_vpc_letterbox_config* c) {
                             kes_image out;
                             const kes_status st =
                                 kes_vpc_letterbox(ch, &in, nullptr, 64, 64, c, nullptr, &out, nullptr);
                             kes_image_release(&out);
                             return st;
                         });
    kes_image_release(&in);
    kes_dvpp_channel_destroy(ch);
}

TEST(StructSize, VdecConfigGrowsWithoutBreakingApps) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.codec = KES_VIDEO_CODEC_H264;  // packet mode: no source needed
    expect_struct_growth(cfg, offsetof(kes_vdec_config, max_pixels) + 8, [](kes_vdec_config* c) {
        kes_vdec* v = nullptr;
        const kes_status st = kes_vdec_create(c, &v);
        kes_vdec_destroy(v);
        return st;
    });
}

TEST(StructSize, VencConfigGrowsWithoutBreakingApps) {
    const std::string path = std::string(KES_TEST_TMPDIR) + "/struct-size.h264";
    kes_venc_config cfg;
    kes_venc_config_init(&cfg);
    cfg.path = path.c_str();
    cfg.container = KES_VENC_CONTAINER_ANNEXB;
    cfg.width = 320;
    cfg.height = 240;
    expect_struct_growth(cfg, padded(offsetof(kes_venc_config, threads) + 4, alignof(kes_venc_config)),
                         [](kes_venc_config* c) {
                             kes_venc* e = nullptr;
                             const kes_status st = kes_venc_create(c, &e);
                             kes_venc_destroy(e);
                             return st;
                         });
}

TEST(StructSize, JpegInfoOfAnyReleaseIsFilledAndANewerTailZeroed) {
    const auto jpeg = kes_test::encode_jpeg(48, 32, TJSAMP_420);
    kes_dvpp_channel* ch = nullptr;
    ASSERT_EQ(kes_dvpp_channel_create(nullptr, &ch), KES_OK) << kes_last_error();
    kes_jpeg_info full;
    full.struct_size = sizeof full;
    ASSERT_EQ(kes_jpeg_get_info(ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, &full), KES_OK) << kes_last_error();
    SizedStruct<kes_jpeg_info> newer(full, sizeof(kes_jpeg_info) + 24, 0xAB);  // uninitialised tail
    ASSERT_EQ(kes_jpeg_get_info(ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, newer.get()), KES_OK) << kes_last_error();
    EXPECT_EQ(newer.get()->width, 48u);
    EXPECT_EQ(newer.get()->struct_size, sizeof(kes_jpeg_info) + 24);
    for (size_t i = sizeof(kes_jpeg_info); i < sizeof(kes_jpeg_info) + 24; ++i)
        EXPECT_EQ(newer.bytes()[i], 0) << "byte " << i << " of the fields this Kestrel does not know";
    SizedStruct<kes_jpeg_info> short_info(full, 8);
    EXPECT_EQ(kes_jpeg_get_info(ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, short_info.get()),
              KES_ERR_INVALID_ARGUMENT);
    kes_dvpp_channel_destroy(ch);
}

TEST(StructSize, ChannelStatsOfAnyReleaseAreFilled) {
    kes_dvpp_channel* ch = nullptr;
    ASSERT_EQ(kes_dvpp_channel_create(nullptr, &ch), KES_OK) << kes_last_error();
    expect_out_struct_growth<kes_dvpp_channel_stats>(
        KES_STRUCT_SIZE_THROUGH(kes_dvpp_channel_stats, fallbacks),
        [&](kes_dvpp_channel_stats* s) { return kes_dvpp_channel_get_stats(ch, s); });
    kes_dvpp_channel_destroy(ch);
}

TEST(StructSize, PngInfoOfAnyReleaseIsFilled) {
    std::vector<uint8_t> rgb(32 * 32 * 3, 200);
    png_image img;
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = 32;  // PNGD's smallest
    img.height = 32;
    img.format = PNG_FORMAT_RGB;
    png_alloc_size_t size = 0;
    ASSERT_NE(png_image_write_to_memory(&img, nullptr, &size, 0, rgb.data(), 0, nullptr), 0) << img.message;
    std::vector<uint8_t> png(size);
    ASSERT_NE(png_image_write_to_memory(&img, png.data(), &size, 0, rgb.data(), 0, nullptr), 0) << img.message;
    kes_dvpp_channel* ch = nullptr;
    ASSERT_EQ(kes_dvpp_channel_create(nullptr, &ch), KES_OK) << kes_last_error();
    expect_out_struct_growth<kes_png_info>(KES_STRUCT_SIZE_THROUGH(kes_png_info, output_size), [&](kes_png_info* i) {
        return kes_png_get_info(ch, png.data(), size, KES_PIXEL_RGB888, i);
    });
    kes_dvpp_channel_destroy(ch);
}

TEST(StructSize, VdecStreamInfoAndHealthOfAnyReleaseAreFilled) {
#ifdef KES_VIDEO_TEST_DATA
    const std::string path = std::string(KES_VIDEO_TEST_DATA) + "/camera.h264";
#else
    const std::string path;
#endif
    if (path.empty()) KES_TEST_SKIP("no test clips (ffmpeg not found at configure)");
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = path.c_str();
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    expect_out_struct_growth<kes_vdec_stream_info>(
        KES_STRUCT_SIZE_THROUGH(kes_vdec_stream_info, frame_size),
        [&](kes_vdec_stream_info* i) { return kes_vdec_get_stream_info(v, i); });
    expect_out_struct_growth<kes_vdec_health>(KES_STRUCT_SIZE_THROUGH(kes_vdec_health, last_error_text),
                                              [&](kes_vdec_health* h) { return kes_vdec_get_health(v, h); });
    kes_vdec_destroy(v);
}

}  // namespace
