// PNGD behaviour (BOARD-RULES §PNGD): outputs, strides, conversions of every PNG kind, bad CRCs.
#include <png.h>

#include <string>

#include "dvpp_test_util.hpp"

using namespace kes_test;

namespace {

// Writes a PNG with libpng's simplified API (format: PNG_FORMAT_*).
std::vector<uint8_t> write_png(int w, int h, uint32_t format, const void* pixels, const void* colormap = nullptr,
                               int colormap_entries = 0) {
    png_image img;
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = uint32_t(w);
    img.height = uint32_t(h);
    img.format = format;
    img.colormap_entries = uint32_t(colormap_entries);
    png_alloc_size_t size = 0;
    EXPECT_NE(png_image_write_to_memory(&img, nullptr, &size, 0, pixels, 0, colormap), 0) << img.message;
    std::vector<uint8_t> out(size);
    EXPECT_NE(png_image_write_to_memory(&img, out.data(), &size, 0, pixels, 0, colormap), 0) << img.message;
    out.resize(size);
    return out;
}

// Byte offset of the first byte of the data of chunk `type`.
size_t chunk_data(const std::vector<uint8_t>& png, const char* type) {
    size_t pos = 8;
    while (pos + 8 <= png.size()) {
        const size_t len =
            (size_t(png[pos]) << 24) | (size_t(png[pos + 1]) << 16) | (size_t(png[pos + 2]) << 8) | png[pos + 3];
        if (std::memcmp(&png[pos + 4], type, 4) == 0) return pos + 8;
        pos += 12 + len;
    }
    return 0;
}

}  // namespace

TEST(PngDecode, Rgb8DecodesExactlyWithBoardStrides) {
    const auto rgb = make_rgb(40, 36);
    const auto png = write_png(40, 36, PNG_FORMAT_RGB, rgb.data());
    Channel ch(KES_BOARD_310);
    Image img;
    ASSERT_EQ(kes_png_decode(ch.get(), png.data(), png.size(), KES_PIXEL_RGB888, nullptr, &img), KES_OK)
        << kes_last_error();
    uint32_t ws = 0, hs = 0;
    ASSERT_EQ(kes_image_strides(KES_PIXEL_RGB888, 40, 36, KES_STRIDE_PNGD, KES_BOARD_310, &ws, &hs), KES_OK);
    EXPECT_EQ(img.width_stride, ws);
    EXPECT_EQ(img.height_stride, hs);
    EXPECT_EQ(img.width_stride, 128u * 3);
    for (uint32_t y = 0; y < 36; ++y) ASSERT_EQ(0, std::memcmp(img.row(0, y), &rgb[y * 120], 120)) << y;
}

TEST(PngDecode, DecodeFileRecordsATraceSpan) {
    const auto rgb = make_rgb(40, 36);
    const auto png = write_png(40, 36, PNG_FORMAT_RGB, rgb.data());
    const std::string path = std::string(KES_TEST_TMPDIR) + "/dvpp_decode_file_traced.png";
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(png.data(), 1, png.size(), f), png.size());
    std::fclose(f);
    Channel ch(KES_BOARD_310);
    Image img;
    const std::string trace = traced("png_decode_file", [&] {
        EXPECT_EQ(kes_png_decode_file(ch.get(), path.c_str(), KES_PIXEL_RGB888, nullptr, &img), KES_OK)
            << kes_last_error();
    });
    EXPECT_TRUE(has_dvpp_span(trace, "png_decode_file")) << trace;
}

TEST(PngDecode, RgbaOutputAddsOpaqueAlphaAndUnknownMeansRgba) {
    const auto rgb = make_rgb(32, 32);
    const auto png = write_png(32, 32, PNG_FORMAT_RGB, rgb.data());
    Channel ch(KES_BOARD_310B);
    Image img;
    ASSERT_EQ(kes_png_decode(ch.get(), png.data(), png.size(), KES_PIXEL_UNKNOWN, nullptr, &img), KES_OK)
        << kes_last_error();
    EXPECT_EQ(img.format, KES_PIXEL_RGBA8888);
    for (uint32_t y = 0; y < 32; ++y)
        for (uint32_t x = 0; x < 32; ++x) {
            ASSERT_EQ(img.row(0, y)[4 * x], rgb[(y * 32 + x) * 3]);
            ASSERT_EQ(img.row(0, y)[4 * x + 3], 255);
        }
}

TEST(PngDecode, AlphaKeptForRgbaDroppedForRgb) {
    std::vector<uint8_t> rgba(32 * 32 * 4);
    for (size_t i = 0; i < rgba.size(); ++i) rgba[i] = uint8_t(i * 7);
    const auto png = write_png(32, 32, PNG_FORMAT_RGBA, rgba.data());
    Channel ch;
    Image a, b;
    ASSERT_EQ(kes_png_decode(ch.get(), png.data(), png.size(), KES_PIXEL_RGBA8888, nullptr, &a), KES_OK);
    ASSERT_EQ(kes_png_decode(ch.get(), png.data(), png.size(), KES_PIXEL_RGB888, nullptr, &b), KES_OK);
    for (uint32_t y = 0; y < 32; ++y) {
        ASSERT_EQ(0, std::memcmp(a.row(0, y), &rgba[y * 128], 128));
        for (uint32_t x = 0; x < 32; ++x) ASSERT_EQ(0, std::memcmp(b.row(0, y) + 3 * x, &rgba[y * 128 + 4 * x], 3));
    }
}

TEST(PngDecode, PaletteIsExpanded) {
    uint8_t colormap[4 * 3] = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
    std::vector<uint8_t> idx(32 * 32);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = uint8_t(i % 4);
    const auto png = write_png(32, 32, PNG_FORMAT_RGB_COLORMAP, idx.data(), colormap, 4);
    Channel ch;
    kes_png_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(kes_png_get_info(ch.get(), png.data(), png.size(), KES_PIXEL_RGB888, &info), KES_OK) << kes_last_error();
    EXPECT_EQ(info.color_type, 3u);
    Image img;
    ASSERT_EQ(kes_png_decode(ch.get(), png.data(), png.size(), KES_PIXEL_RGB888, nullptr, &img), KES_OK)
        << kes_last_error();
    for (uint32_t y = 0; y < 32; ++y)
        for (uint32_t x = 0; x < 32; ++x)
            ASSERT_EQ(0, std::memcmp(img.row(0, y) + 3 * x, &colormap[3 * ((y * 32 + x) % 4)], 3));
}

TEST(PngDecode, SixteenBitIsScaledTo8) {
    std::vector<uint16_t> px(32 * 32 * 3);
    for (size_t i = 0; i < px.size(); ++i) px[i] = uint16_t(i * 131);
    const auto png = write_png(32, 32, PNG_FORMAT_LINEAR_RGB, px.data());
    Channel ch;
    kes_png_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(kes_png_get_info(ch.get(), png.data(), png.size(), KES_PIXEL_RGB888, &info), KES_OK);
    EXPECT_EQ(info.bit_depth, 16u);
    Image img;
    ASSERT_EQ(kes_png_decode(ch.get(), png.data(), png.size(), KES_PIXEL_RGB888, nullptr, &img), KES_OK)
        << kes_last_error();
    for (uint32_t y = 0; y < 32; ++y)
        for (uint32_t x = 0; x < 96; ++x) ASSERT_NEAR(img.row(0, y)[x], px[y * 96 + x] / 257.0, 1.0) << x << "," << y;
}

TEST(PngDecode, GreyIsExpandedToRgb) {
    std::vector<uint8_t> g(40 * 32);
    for (size_t i = 0; i < g.size(); ++i) g[i] = uint8_t(i);
    const auto png = write_png(40, 32, PNG_FORMAT_GRAY, g.data());
    Channel ch;
    Image img;
    ASSERT_EQ(kes_png_decode(ch.get(), png.data(), png.size(), KES_PIXEL_RGB888, nullptr, &img), KES_OK);
    for (uint32_t y = 0; y < 32; ++y)
        for (uint32_t x = 0; x < 40; ++x)
            for (int c = 0; c < 3; ++c) ASSERT_EQ(img.row(0, y)[3 * x + c], g[y * 40 + x]);
}

TEST(PngDecode, BadCrcIsCorruptData) {
    const auto rgb = make_rgb(32, 32);
    const auto png = write_png(32, 32, PNG_FORMAT_RGB, rgb.data());
    const size_t idat = chunk_data(png, "IDAT");
    ASSERT_NE(idat, 0u);
    const size_t idat_len =
        (size_t(png[idat - 8]) << 24) | (size_t(png[idat - 7]) << 16) | (size_t(png[idat - 6]) << 8) | png[idat - 5];
    auto bad = png;
    bad[idat + idat_len + 3] ^= 0x01;  // IDAT's CRC (a flipped data byte would trip zlib first)
    Channel ch;
    Image img;
    EXPECT_EQ(kes_png_decode(ch.get(), bad.data(), bad.size(), KES_PIXEL_RGB888, nullptr, &img), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find("CRC"), std::string::npos) << kes_last_error();
    EXPECT_EQ(img.data, nullptr);
    auto bad_ihdr = png;
    bad_ihdr[8 + 8 + 13] ^= 0x01;  // IHDR's CRC itself
    EXPECT_EQ(kes_png_decode(ch.get(), bad_ihdr.data(), bad_ihdr.size(), KES_PIXEL_RGB888, nullptr, &img),
              KES_ERR_CORRUPT_DATA);
}

TEST(PngDecode, TruncatedAndTinyInputsAreCorrupt) {
    const auto rgb = make_rgb(32, 32);
    const auto png = write_png(32, 32, PNG_FORMAT_RGB, rgb.data());
    Channel ch;
    for (size_t len = 0; len < png.size(); len += 97) {
        Image img;
        EXPECT_EQ(kes_png_decode(ch.get(), png.data(), len, KES_PIXEL_RGB888, nullptr, &img), KES_ERR_CORRUPT_DATA)
            << len;
        EXPECT_EQ(img.data, nullptr);
    }
    Image img;
    EXPECT_EQ(kes_png_decode(ch.get(), png.data(), 29, KES_PIXEL_RGB888, nullptr, &img), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find("29"), std::string::npos) << kes_last_error();
}

TEST(PngDecode, BoardLimitsAndFormatsAreEnforced) {
    std::vector<uint8_t> g(16 * 16, 7);
    const auto png = write_png(16, 16, PNG_FORMAT_GRAY, g.data());
    Channel c310(KES_BOARD_310);
    Image img;
    EXPECT_EQ(kes_png_decode(c310.get(), png.data(), png.size(), KES_PIXEL_RGB888, nullptr, &img),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("32..4096"), std::string::npos) << kes_last_error();
    Channel host;
    EXPECT_EQ(kes_png_decode(host.get(), png.data(), png.size(), KES_PIXEL_NV12, nullptr, &img),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_png_decode(host.get(), png.data(), png.size(), KES_PIXEL_RGB888, nullptr, &img), KES_OK);
}

TEST(PngDecode, SeedCorpusDecodesAsLabelled) {
    const std::string dir = std::string(KES_SOURCE_DIR) + "/dvpp/fuzz/seeds/png/";
    Channel ch;
    const char* good[] = {"rgb8.png", "rgba8.png", "grey16.png", "palette2_trns.png", "grey_alpha8_interlaced_1x1.png"};
    for (const char* name : good) {
        Image img;
        EXPECT_EQ(kes_png_decode_file(ch.get(), (dir + name).c_str(), KES_PIXEL_RGBA8888, nullptr, &img), KES_OK)
            << name << ": " << kes_last_error();
    }
    Image pal;
    ASSERT_EQ(kes_png_decode_file(ch.get(), (dir + "palette2_trns.png").c_str(), KES_PIXEL_RGBA8888, nullptr, &pal),
              KES_OK);
    // Row 0 holds indices 0,1,2,3,3,2,1,0; tRNS gives index 1 alpha 128, others opaque.
    EXPECT_EQ(pal.row(0, 0)[4 * 1 + 1], 255);
    EXPECT_EQ(pal.row(0, 0)[4 * 1 + 3], 128);
    EXPECT_EQ(pal.row(0, 0)[4 * 3 + 3], 255);
    Image one;
    ASSERT_EQ(kes_png_decode_file(ch.get(), (dir + "grey_alpha8_interlaced_1x1.png").c_str(), KES_PIXEL_RGBA8888,
                                  nullptr, &one),
              KES_OK);
    const uint8_t expect[4] = {77, 77, 77, 200};
    EXPECT_EQ(0, std::memcmp(one.row(0, 0), expect, 4));
    for (const char* name : {"bad_crc.png", "truncated.png"}) {
        Image img;
        EXPECT_EQ(kes_png_decode_file(ch.get(), (dir + name).c_str(), KES_PIXEL_RGB888, nullptr, &img),
                  KES_ERR_CORRUPT_DATA)
            << name;
    }
}
