// JPEGE behaviour (BOARD-RULES §JPEGE): input-stride rules, PredictEncSize, quality, round trip.
#include <string>

#include "dvpp_test_util.hpp"

using namespace kes_test;

namespace {

// An NV12/NV21 image of the test gradient (from a near-lossless JPEG decoded by the module).
void make_nv(kes_dvpp_channel* ch, int w, int h, kes_pixel_format f, Image* img) {
    const auto jpeg = encode_jpeg(w, h, TJSAMP_420, 100);
    ASSERT_EQ(kes_jpeg_decode(ch, jpeg.data(), jpeg.size(), f, nullptr, img), KES_OK) << kes_last_error();
}

}  // namespace

TEST(JpegEncode, RoundTripPsnrAbove35dB) {
    Channel ch(KES_BOARD_310);
    Image src;
    make_nv(ch.get(), 128, 96, KES_PIXEL_NV12, &src);
    size_t cap = 0;
    ASSERT_EQ(kes_jpeg_predict_encode_size(ch.get(), &src, &cap), KES_OK) << kes_last_error();
    std::vector<uint8_t> out(cap);
    size_t size = 0;
    ASSERT_EQ(kes_jpeg_encode(ch.get(), &src, 90, out.data(), out.size(), &size), KES_OK) << kes_last_error();
    out.resize(size);
    const RefPlanes ref = ref_planes(out);
    ASSERT_EQ(ref.samp, TJSAMP_420);
    ASSERT_EQ(ref.w, 128);
    kes_image_plane y;
    ASSERT_EQ(kes_image_get_plane(&src, 0, &y), KES_OK);
    EXPECT_GT(psnr(y.data, y.stride, ref.y.data(), 128, 128, 96), 35.0);
    // Chroma survives too (U of the source against U of the round trip).
    std::vector<uint8_t> u(64 * 48);
    for (int r = 0; r < 48; ++r)
        for (int x = 0; x < 64; ++x) u[size_t(r) * 64 + x] = src.row(1, uint32_t(r))[2 * x];
    EXPECT_GT(psnr(u.data(), 64, ref.u.data(), 64, 64, 48), 35.0);
}

TEST(JpegEncode, Nv21ChromaOrderIsHonoured) {
    Channel ch;
    Image nv12, nv21;
    make_nv(ch.get(), 64, 48, KES_PIXEL_NV12, &nv12);
    make_nv(ch.get(), 64, 48, KES_PIXEL_NV21, &nv21);
    std::vector<uint8_t> a(1 << 21), b(1 << 21);
    size_t sa = 0, sb = 0;
    ASSERT_EQ(kes_jpeg_encode(ch.get(), &nv12, 80, a.data(), a.size(), &sa), KES_OK);
    ASSERT_EQ(kes_jpeg_encode(ch.get(), &nv21, 80, b.data(), b.size(), &sb), KES_OK);
    a.resize(sa);
    b.resize(sb);
    EXPECT_EQ(a, b);  // same pixels, so the same JPEG
}

TEST(JpegEncode, PredictEncodeSizeFollowsBoardFormula) {
    Channel ch(KES_BOARD_310);
    Image src;
    make_nv(ch.get(), 128, 96, KES_PIXEL_NV12, &src);  // strides 128 × 96
    size_t cap = 0;
    ASSERT_EQ(kes_jpeg_predict_encode_size(ch.get(), &src, &cap), KES_OK);
    EXPECT_EQ(cap, size_t(2) << 20);  // 128·96·3/2 + 640 + 128 rounded up to 2 MiB
    Image big;
    ASSERT_EQ(kes_image_alloc(&big, nullptr, KES_PIXEL_NV12, 1920, 1080, 1920, 1088), KES_OK);
    ASSERT_EQ(kes_jpeg_predict_encode_size(ch.get(), &big, &cap), KES_OK);
    EXPECT_EQ(cap, size_t(4) << 20);  // 3133440 + 768 → 4 MiB
}

TEST(JpegEncode, WidthStrideMustBeMultipleOf16OnBoards) {
    std::vector<uint8_t> buf(136 * 64 * 3 / 2, 128);
    Image img;
    ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_NV12, 128, 64, 136, 64, buf.data(), buf.size()), KES_OK)
        << kes_last_error();
    std::vector<uint8_t> out(1 << 21);
    size_t size = 0;
    Channel c310(KES_BOARD_310);
    EXPECT_EQ(kes_jpeg_encode(c310.get(), &img, 90, out.data(), out.size(), &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("multiple of 16"), std::string::npos) << kes_last_error();
    Channel host(KES_BOARD_HOST);
    EXPECT_EQ(kes_jpeg_encode(host.get(), &img, 90, out.data(), out.size(), &size), KES_OK) << kes_last_error();
    EXPECT_GT(size, 0u);
}

TEST(JpegEncode, BadArgumentsAreRefused) {
    Channel ch(KES_BOARD_310B);
    std::vector<uint8_t> out(1 << 21);
    size_t size = 0;
    std::vector<uint8_t> buf(64 * 64 * 3, 128);
    Image odd;
    ASSERT_EQ(kes_image_wrap(&odd, KES_PIXEL_NV12, 63, 48, 64, 48, buf.data(), buf.size()), KES_OK);
    EXPECT_EQ(kes_jpeg_encode(ch.get(), &odd, 90, out.data(), out.size(), &size), KES_ERR_INVALID_ARGUMENT);
    Image ok;
    ASSERT_EQ(kes_image_wrap(&ok, KES_PIXEL_NV12, 64, 48, 64, 48, buf.data(), buf.size()), KES_OK);
    EXPECT_EQ(kes_jpeg_encode(ch.get(), &ok, 0, out.data(), out.size(), &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_jpeg_encode(ch.get(), &ok, 101, out.data(), out.size(), &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_jpeg_encode(ch.get(), &ok, 90, out.data(), 10, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(size, 0u);
    Image rgb;
    ASSERT_EQ(kes_image_wrap(&rgb, KES_PIXEL_RGB888, 32, 32, 96, 32, buf.data(), buf.size()), KES_OK);
    EXPECT_EQ(kes_jpeg_encode(ch.get(), &rgb, 90, out.data(), out.size(), &size), KES_ERR_INVALID_ARGUMENT);
    Image small;
    ASSERT_EQ(kes_image_wrap(&small, KES_PIXEL_NV12, 16, 16, 16, 16, buf.data(), buf.size()), KES_OK);
    EXPECT_EQ(kes_jpeg_encode(ch.get(), &small, 90, out.data(), out.size(), &size), KES_ERR_INVALID_ARGUMENT);
}

namespace {

// A packed 4:2:2 image of `format` from planes y (w × h), u, v (w/2 × h), with JPEGE strides.
void make_packed(kes_pixel_format format, uint32_t w, uint32_t h, const std::vector<uint8_t>& y,
                 const std::vector<uint8_t>& u, const std::vector<uint8_t>& v, kes_board board, Image* img) {
    uint32_t ws = 0, hs = 0;
    ASSERT_EQ(kes_image_strides(format, w, h, KES_STRIDE_JPEGE, board, &ws, &hs), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_image_alloc(img, nullptr, format, w, h, ws, hs), KES_OK) << kes_last_error();
    kes_image_plane p;
    ASSERT_EQ(kes_image_get_plane(img, 0, &p), KES_OK);
    for (uint32_t r = 0; r < h; ++r)
        for (uint32_t i = 0; i < w / 2; ++i) {
            const uint8_t y0 = y[r * w + 2 * i], y1 = y[r * w + 2 * i + 1], cu = u[r * w / 2 + i],
                          cv = v[r * w / 2 + i];
            uint8_t* m = p.data + r * p.stride + 4 * i;
            const uint8_t yuyv[4] = {y0, cu, y1, cv}, uyvy[4] = {cu, y0, cv, y1}, yvyu[4] = {y0, cv, y1, cu},
                          vyuy[4] = {cv, y0, cu, y1};
            const uint8_t* src = format == KES_PIXEL_YUYV422   ? yuyv
                                 : format == KES_PIXEL_UYVY422 ? uyvy
                                 : format == KES_PIXEL_YVYU422 ? yvyu
                                                               : vyuy;
            std::memcpy(m, src, 4);
        }
}

}  // namespace

TEST(JpegEncode, Packed422EncodesAs422AndEveryByteOrderAgrees) {
    const uint32_t w = 96, h = 50;
    const RefPlanes src = ref_planes(encode_jpeg(int(w), int(h), TJSAMP_422, 100));  // realistic 4:2:2 planes
    ASSERT_EQ(src.cw, int(w / 2));
    Channel ch(KES_BOARD_310B);
    std::vector<uint8_t> first;
    for (kes_pixel_format f : {KES_PIXEL_YUYV422, KES_PIXEL_UYVY422, KES_PIXEL_YVYU422, KES_PIXEL_VYUY422}) {
        Image img;
        make_packed(f, w, h, src.y, src.u, src.v, KES_BOARD_310B, &img);
        EXPECT_EQ(img.width_stride % 16, 0u);
        size_t cap = 0, size = 0;
        ASSERT_EQ(kes_jpeg_predict_encode_size(ch.get(), &img, &cap), KES_OK) << kes_last_error();
        std::vector<uint8_t> out(cap);
        ASSERT_EQ(kes_jpeg_encode(ch.get(), &img, 92, out.data(), out.size(), &size), KES_OK) << kes_last_error();
        out.resize(size);
        if (first.empty()) {
            first = out;
            const RefPlanes back = ref_planes(out);
            EXPECT_EQ(back.samp, TJSAMP_422);
            EXPECT_GT(psnr(back.y.data(), w, src.y.data(), w, int(w), int(h)), 38.0);
            EXPECT_GT(psnr(back.u.data(), w / 2, src.u.data(), w / 2, int(w / 2), int(h)), 38.0);
            EXPECT_GT(psnr(back.v.data(), w / 2, src.v.data(), w / 2, int(w / 2), int(h)), 38.0);
        } else {
            EXPECT_EQ(out, first) << kes_pixel_format_name(f);  // same pixels, same JPEG
        }
    }
}

TEST(JpegEncode, Packed422StrideAndWidthRules) {
    std::vector<uint8_t> buf(200 * 64, 128);
    std::vector<uint8_t> out(1 << 21);
    size_t size = 0;
    Channel c310(KES_BOARD_310);
    Image tight;  // 2·90 = 180 bytes: not a multiple of 16 (align16(2w) = 192)
    ASSERT_EQ(kes_image_wrap(&tight, KES_PIXEL_YUYV422, 90, 64, 180, 64, buf.data(), buf.size()), KES_OK)
        << kes_last_error();
    EXPECT_EQ(kes_jpeg_encode(c310.get(), &tight, 90, out.data(), out.size(), &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("align16(2w)"), std::string::npos) << kes_last_error();
    Image aligned;
    ASSERT_EQ(kes_image_wrap(&aligned, KES_PIXEL_YUYV422, 90, 63, 192, 63, buf.data(), buf.size()), KES_OK);
    EXPECT_EQ(kes_jpeg_encode(c310.get(), &aligned, 90, out.data(), out.size(), &size), KES_OK)  // odd height is fine
        << kes_last_error();
}
