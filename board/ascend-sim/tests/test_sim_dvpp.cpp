// The simulator's libacl_dvpp.so through a kes::acl::DvppApi bound here the way Kestrel binds it (the
// sdk's loader is not wired yet): JPEGD against TurboJPEG's own decode, VPC against tiny hand-made
// expectations, JPEGE by a round trip, VDEC against FFmpeg's decode of the same clip through the report
// thread, and the boards' rules: DVPP memory only, strides, parity, channel limits, refusals, results
// only after the sync, the ledger at aclFinalize, fault injection — on each simulated SoC and run mode.
#include <functional>

#include "sim_dvpp_fixture.hpp"

// ---- JPEGD -------------------------------------------------------------------------------------------

TEST_P(SimDvpp, JpegdEqualsTurboJpegAtTheSocStridesOnlyAfterTheSync) {
    start();
    const std::vector<uint8_t> jpeg = read_file(data_path("odd_333x251.jpg"));
    ASSERT_FALSE(jpeg.empty());
    uint32_t w = 0, h = 0;
    int32_t components = 0, css = -1;
    ASSERT_EQ(api.acldvppJpegGetImageInfoV2(jpeg.data(), uint32_t(jpeg.size()), &w, &h, &components, &css), 0);
    EXPECT_EQ(w, 333u);
    EXPECT_EQ(h, 251u);
    EXPECT_EQ(components, 3);
    EXPECT_EQ(css, acl::kJpegCss420);
    // 310 keeps the odd size and aligns the width to 128; 310B rounds down to even and aligns to 64.
    const uint32_t ow = v100() ? 333 : 332, oh = v100() ? 251 : 250;
    const uint32_t ws = align(ow, v100() ? 128 : 64), hs = align(oh, 16);
    uint32_t predicted = 0;
    ASSERT_EQ(api.acldvppJpegPredictDecSize(jpeg.data(), uint32_t(jpeg.size()), acl::kDvppNv12, &predicted), 0);
    EXPECT_EQ(predicted, ws * hs * 3 / 2);
    const TjPlanes want = tj_decode(jpeg);
    Channel ch(api);
    ASSERT_EQ(ch.created, 0) << recent();
    for (int32_t format : {acl::kDvppNv12, acl::kDvppNv21}) {
        Buffer in(api, rt, jpeg.size());
        in.upload(jpeg);
        Buffer out(api, rt, predicted);
        Pic pic(api, out.p, predicted, format, 0, 0, 0, 0);
        ASSERT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, uint32_t(jpeg.size()), pic.d, stream), 0) << recent();
        EXPECT_EQ(out.download(), std::vector<uint8_t>(predicted, 0));  // nothing before the sync
        EXPECT_EQ(api.acldvppGetPicDescWidth(pic.d), 0u);
        ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
        EXPECT_EQ(api.acldvppGetPicDescWidth(pic.d), ow);
        EXPECT_EQ(api.acldvppGetPicDescHeight(pic.d), oh);
        EXPECT_EQ(api.acldvppGetPicDescWidthStride(pic.d), ws);
        EXPECT_EQ(api.acldvppGetPicDescHeightStride(pic.d), hs);
        EXPECT_EQ(api.acldvppGetPicDescFormat(pic.d), format);
        const std::vector<uint8_t> got = out.download();
        size_t luma_diff = 0, chroma_diff = 0;
        for (uint32_t y = 0; y < oh; ++y) {
            for (uint32_t x = 0; x < ow; ++x) luma_diff += got[y * ws + x] != want.planes[0][y * want.strides[0] + x];
        }
        const bool nv21 = format == acl::kDvppNv21;
        for (uint32_t y = 0; y < (oh + 1) / 2; ++y) {
            for (uint32_t x = 0; x < (ow + 1) / 2; ++x) {
                const uint8_t* uv = &got[size_t(ws) * hs + y * ws + 2 * x];
                chroma_diff += uv[nv21 ? 1 : 0] != want.planes[1][y * want.strides[1] + x];
                chroma_diff += uv[nv21 ? 0 : 1] != want.planes[2][y * want.strides[2] + x];
            }
        }
        EXPECT_EQ(luma_diff, 0u);
        EXPECT_EQ(chroma_diff, 0u);
    }
}

TEST_P(SimDvpp, JpegdGivesGreyJpegsNeutralChroma) {
    start();
    const std::vector<uint8_t> jpeg = read_file(data_path("grey.jpg"));
    ASSERT_FALSE(jpeg.empty());
    int32_t components = 0, css = -1;
    ASSERT_EQ(api.acldvppJpegGetImageInfoV2(jpeg.data(), uint32_t(jpeg.size()), nullptr, nullptr, &components, &css),
              0);
    EXPECT_EQ(components, 1);
    EXPECT_EQ(css, acl::kJpegCssGray);
    uint32_t size = 0;
    ASSERT_EQ(api.acldvppJpegPredictDecSize(jpeg.data(), uint32_t(jpeg.size()), acl::kDvppNv12, &size), 0);
    Channel ch(api);
    Buffer in(api, rt, jpeg.size());
    in.upload(jpeg);
    Buffer out(api, rt, size);
    Pic pic(api, out.p, size, acl::kDvppNv12, 0, 0, 0, 0);
    ASSERT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, uint32_t(jpeg.size()), pic.d, stream), 0) << recent();
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    const uint32_t ws = api.acldvppGetPicDescWidthStride(pic.d), hs = api.acldvppGetPicDescHeightStride(pic.d);
    const std::vector<uint8_t> got = out.download();
    const TjPlanes want = tj_decode(jpeg);
    EXPECT_EQ(got[10 * ws + 20], want.planes[0][10 * want.strides[0] + 20]);
    EXPECT_EQ(got[size_t(ws) * hs + 5 * ws + 8], 0x80);
    EXPECT_EQ(got[size_t(ws) * hs + 5 * ws + 9], 0x80);
}

namespace {

// `jpeg` with an APP1 Exif segment right after SOI whose IFD0 holds a Make tag, then Orientation.
std::vector<uint8_t> with_exif(const std::vector<uint8_t>& jpeg, int orientation, bool big_endian) {
    std::vector<uint8_t> tiff;
    const auto u16 = [&](uint32_t v) {
        const uint8_t b[2] = {uint8_t(v), uint8_t(v >> 8)};
        tiff.push_back(big_endian ? b[1] : b[0]);
        tiff.push_back(big_endian ? b[0] : b[1]);
    };
    const auto u32 = [&](uint32_t v) {
        if (big_endian) {
            u16(v >> 16), u16(v & 0xFFFF);
        } else {
            u16(v & 0xFFFF), u16(v >> 16);
        }
    };
    tiff.push_back(big_endian ? 'M' : 'I');
    tiff.push_back(big_endian ? 'M' : 'I');
    u16(42), u32(8);                                                           // IFD0 at 8
    u16(2);                                                                    // two entries
    u16(0x010F), u16(2), u32(4), tiff.insert(tiff.end(), {'K', 'e', 's', 0});  // Make, ASCII, inline
    u16(0x0112), u16(3), u32(1), u16(uint32_t(orientation)), u16(0);           // Orientation, SHORT
    u32(0);                                                                    // no IFD1
    std::vector<uint8_t> app1 = {0xFF, 0xE1, 0, 0, 'E', 'x', 'i', 'f', 0, 0};
    app1.insert(app1.end(), tiff.begin(), tiff.end());
    app1[2] = uint8_t((app1.size() - 2) >> 8), app1[3] = uint8_t(app1.size() - 2);
    std::vector<uint8_t> out(jpeg.begin(), jpeg.begin() + 2);
    out.insert(out.end(), app1.begin(), app1.end());
    out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
    return out;
}

// A plane (w x h, tight) as EXIF orientation `o` shows it: the straightforward mirror / rotation.
std::vector<uint8_t> oriented(const uint8_t* p, int stride, int w, int h, int o, int* ow, int* oh) {
    const bool t = o >= 5;
    *ow = t ? h : w, *oh = t ? w : h;
    std::vector<uint8_t> out(size_t(*ow) * *oh);
    for (int y = 0; y < *oh; ++y) {
        for (int x = 0; x < *ow; ++x) {
            // The source pixel shown at (x, y).
            int sx = x, sy = y;
            if (o == 2) sx = w - 1 - x;
            if (o == 3) sx = w - 1 - x, sy = h - 1 - y;
            if (o == 4) sy = h - 1 - y;
            if (o == 5) sx = y, sy = x;
            if (o == 6) sx = y, sy = h - 1 - x;
            if (o == 7) sx = w - 1 - y, sy = h - 1 - x;
            if (o == 8) sx = w - 1 - y, sy = x;
            out[size_t(y) * *ow + x] = p[size_t(sy) * stride + sx];
        }
    }
    return out;
}

// TurboJPEG's planes of `jpeg`, oriented: each plane tight, with its size.
struct Oriented {
    int w[3] = {}, h[3] = {};
    std::vector<uint8_t> planes[3];
};
Oriented tj_oriented(const std::vector<uint8_t>& jpeg, int o) {
    const TjPlanes t = tj_decode(jpeg);
    Oriented r;
    for (int i = 0; i < (t.subsamp == TJSAMP_GRAY ? 1 : 3); ++i) {
        r.planes[i] = oriented(t.planes[i].data(), t.strides[i], t.strides[i], int(t.planes[i].size()) / t.strides[i],
                               o, &r.w[i], &r.h[i]);
    }
    return r;
}

// A w x h JPEG of smooth colours at `subsamp`, made by TurboJPEG.
std::vector<uint8_t> make_jpeg(int w, int h, int subsamp) {
    std::vector<uint8_t> rgb(size_t(w) * h * 3);
    for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
            uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
            p[0] = uint8_t(x * 255 / w), p[1] = uint8_t(y * 255 / h), p[2] = uint8_t((x * 7 + y * 3) & 0xFF);
        }
    }
    tjhandle h_ = tjInitCompress();
    unsigned char* jpeg = nullptr;
    unsigned long size = 0;
    EXPECT_EQ(tjCompress2(h_, rgb.data(), w, 0, h, TJPF_RGB, &jpeg, &size, subsamp, 95, 0), 0);
    std::vector<uint8_t> out(jpeg, jpeg + size);
    tjFree(jpeg);
    tjDestroy(h_);
    return out;
}

}  // namespace

namespace {

// The NV12 picture JPEGD gives for `jpeg` under EXIF orientation `o`, cut to ow x oh (the 310B's even
// rounding comes after the orientation): the VISIBLE coded picture oriented (TurboJPEG pads its luma plane
// to whole chroma samples; that padding is not the picture), and chroma by the rule Kestrel's CPU JPEGD
// documents: brought to full resolution (replicated), oriented, then each NV12 sample the rounded mean of
// the full-resolution samples under its 2x2 luma samples (clipped to ow x oh).
struct Nv12Ref {
    std::vector<uint8_t> y, u, v;  // tight: ow x oh, and ceil(ow/2) x ceil(oh/2)
};
Nv12Ref oriented_nv12(const std::vector<uint8_t>& jpeg, int o, uint32_t ow, uint32_t oh) {
    const TjPlanes t = tj_decode(jpeg);
    const int w = t.width, h = t.height;
    Nv12Ref r;
    int fw = 0, fh = 0;
    const std::vector<uint8_t> luma = oriented(t.planes[0].data(), t.strides[0], w, h, o, &fw, &fh);
    for (uint32_t y = 0; y < oh; ++y) r.y.insert(r.y.end(), &luma[y * fw], &luma[y * fw] + ow);
    const uint32_t cw = (ow + 1) / 2, ch = (oh + 1) / 2;
    const int sx = tjMCUWidth[t.subsamp] / 8, sy = tjMCUHeight[t.subsamp] / 8;
    for (int k = 0; k < 2; ++k) {
        std::vector<uint8_t>& dst = k == 0 ? r.u : r.v;
        if (t.subsamp == TJSAMP_GRAY) {
            dst.assign(size_t(cw) * ch, 0x80);
            continue;
        }
        std::vector<uint8_t> full(size_t(w) * h);
        for (int y = 0; y < h; ++y) {
            for (int x = 0; x < w; ++x) full[size_t(y) * w + x] = t.planes[1 + k][(y / sy) * t.strides[1] + x / sx];
        }
        const std::vector<uint8_t> f = oriented(full.data(), w, w, h, o, &fw, &fh);
        for (uint32_t cy = 0; cy < ch; ++cy) {
            for (uint32_t cx = 0; cx < cw; ++cx) {
                uint32_t sum = 0, n = 0;
                for (uint32_t y = 2 * cy; y < std::min(2 * cy + 2, oh); ++y) {
                    for (uint32_t x = 2 * cx; x < std::min(2 * cx + 2, ow); ++x, ++n) sum += f[y * fw + x];
                }
                dst.push_back(uint8_t((sum + n / 2) / n));
            }
        }
    }
    return r;
}

}  // namespace

// JPEGD applies the EXIF orientation (all 8, either TIFF byte order) before the 310B's even rounding:
// the output has the oriented size, PredictDecSize counts it, the pixels are the visible picture mirrored
// or rotated — odd sizes included, where TurboJPEG's padded luma plane must not be rotated whole (its
// padding column / row would come into view, shifting the picture by one pixel) — and the chroma is
// oriented at full resolution, then subsampled (the rule Kestrel's CPU JPEGD documents; UNCONFIRMED for
// odd-sized rotated pictures against a board).
TEST_P(SimDvpp, JpegdAppliesTheExifOrientation) {
    start();
    Channel ch(api);
    const std::vector<uint8_t> odd420 = read_file(data_path("odd_333x251.jpg"));
    ASSERT_FALSE(odd420.empty());
    const struct Source {
        const char* name;
        std::vector<uint8_t> jpeg;
        uint32_t w, h;
    } sources[] = {{"4:2:0 333x251", odd420, 333, 251},
                   {"4:2:2 331x213", make_jpeg(331, 213, TJSAMP_422), 331, 213},
                   {"4:4:4 331x213", make_jpeg(331, 213, TJSAMP_444), 331, 213}};
    for (const Source& src : sources) {
        for (int o = 1; o <= 8; ++o) {
            for (bool big_endian : {false, true}) {
                const std::vector<uint8_t> jpeg = with_exif(src.jpeg, o, big_endian);
                const std::string what =
                    std::string(src.name) + " orientation " + std::to_string(o) + (big_endian ? " MM" : " II");
                uint32_t w = 0, h = 0;
                ASSERT_EQ(api.acldvppJpegGetImageInfoV2(jpeg.data(), uint32_t(jpeg.size()), &w, &h, nullptr, nullptr),
                          0);
                EXPECT_EQ(w, src.w)
                    << what;  // the coded size (UNCONFIRMED: the documentation says only PredictDecSize swaps)
                const bool t = o >= 5;
                const uint32_t cw = t ? src.h : src.w, chh = t ? src.w : src.h;
                const uint32_t ow = v100() ? cw : cw & ~1u, oh = v100() ? chh : chh & ~1u;
                const uint32_t ws = align(ow, v100() ? 128 : 64), hs = align(oh, 16);
                uint32_t predicted = 0;
                ASSERT_EQ(api.acldvppJpegPredictDecSize(jpeg.data(), uint32_t(jpeg.size()), acl::kDvppNv12, &predicted),
                          0);
                EXPECT_EQ(predicted, ws * hs * 3 / 2) << what;
                Buffer in(api, rt, jpeg.size());
                in.upload(jpeg);
                Buffer out(api, rt, predicted);
                Pic pic(api, out.p, predicted, acl::kDvppNv12, 0, 0, 0, 0);
                ASSERT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, uint32_t(jpeg.size()), pic.d, stream), 0) << recent();
                ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
                EXPECT_EQ(api.acldvppGetPicDescWidth(pic.d), ow) << what;
                EXPECT_EQ(api.acldvppGetPicDescHeight(pic.d), oh) << what;
                EXPECT_EQ(api.acldvppGetPicDescWidthStride(pic.d), ws) << what;
                const Nv12Ref want = oriented_nv12(src.jpeg, o, ow, oh);
                const std::vector<uint8_t> got = out.download();
                size_t luma_diffs = 0, chroma_diffs = 0;
                for (uint32_t y = 0; y < oh; ++y) {
                    for (uint32_t x = 0; x < ow; ++x) luma_diffs += got[y * ws + x] != want.y[y * ow + x];
                }
                const uint32_t cw2 = (ow + 1) / 2;
                for (uint32_t y = 0; y < (oh + 1) / 2; ++y) {
                    for (uint32_t x = 0; x < cw2; ++x) {
                        chroma_diffs += got[size_t(ws) * hs + y * ws + 2 * x] != want.u[y * cw2 + x];
                        chroma_diffs += got[size_t(ws) * hs + y * ws + 2 * x + 1] != want.v[y * cw2 + x];
                    }
                }
                EXPECT_EQ(luma_diffs, 0u) << what;
                EXPECT_EQ(chroma_diffs, 0u) << what;
            }
        }
    }
}

// A rotated 4:2:2 JPEG is 4:4:0 once oriented: NV12's chroma is then the rounded mean of the two
// horizontally adjacent oriented samples (and of the two vertical ones when not rotated).
TEST_P(SimDvpp, JpegdRotates422ChromaBeforeSubsampling) {
    start();
    Channel ch(api);
    const std::vector<uint8_t> plain = make_jpeg(96, 64, TJSAMP_422);
    for (int o : {1, 6, 7}) {
        const std::vector<uint8_t> jpeg = with_exif(plain, o, o == 7);
        uint32_t size = 0;
        ASSERT_EQ(api.acldvppJpegPredictDecSize(jpeg.data(), uint32_t(jpeg.size()), acl::kDvppNv21, &size), 0);
        Buffer in(api, rt, jpeg.size());
        in.upload(jpeg);
        Buffer out(api, rt, size);
        Pic pic(api, out.p, size, acl::kDvppNv21, 0, 0, 0, 0);
        ASSERT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, uint32_t(jpeg.size()), pic.d, stream), 0) << recent();
        ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
        const uint32_t ow = o >= 5 ? 64 : 96, oh = o >= 5 ? 96 : 64;
        ASSERT_EQ(api.acldvppGetPicDescWidth(pic.d), ow);
        const uint32_t ws = api.acldvppGetPicDescWidthStride(pic.d), hs = api.acldvppGetPicDescHeightStride(pic.d);
        const Oriented want = tj_oriented(plain, o);
        const int sx = o >= 5 ? 1 : 2, sy = o >= 5 ? 2 : 1;  // the oriented chroma subsampling
        const std::vector<uint8_t> got = out.download();
        size_t diffs = 0;
        for (uint32_t y = 0; y < oh; ++y) {
            for (uint32_t x = 0; x < ow; ++x) diffs += got[y * ws + x] != want.planes[0][y * want.w[0] + x];
        }
        for (uint32_t y = 0; y < oh / 2; ++y) {
            for (uint32_t x = 0; x < ow / 2; ++x) {
                for (int k = 0; k < 2; ++k) {
                    const std::vector<uint8_t>& p = want.planes[1 + k];
                    int sum = 0, n = 0;
                    for (uint32_t j = 2 * y / sy; j <= (2 * y + 1) / sy; ++j) {
                        for (uint32_t i = 2 * x / sx; i <= (2 * x + 1) / sx; ++i, ++n) sum += p[j * want.w[1] + i];
                    }
                    // NV21: V first.
                    diffs += got[size_t(ws) * hs + y * ws + 2 * x + (k == 0 ? 1 : 0)] != uint8_t((sum + n / 2) / n);
                }
            }
        }
        EXPECT_EQ(diffs, 0u) << "orientation " << o;
    }
}

// The semi-planar outputs of each subsampling: 4:4:4 -> YUV/YVU444SP, 4:2:2 -> YUV/YVU422SP, 4:4:0 ->
// YUV/YVU440SP (and PIXEL_FORMAT_UNKNOWN -> the YVU form), holding TurboJPEG's planes unchanged at the
// JPEGD strides (odd sizes kept on both SoCs); NV12 from them is the rounded mean of the covering
// samples; a semi-planar form of another subsampling is refused.
TEST_P(SimDvpp, JpegdWritesTheSemiPlanarFormOfEachSubsampling) {
    start();
    Channel ch(api);
    struct Kind {
        int subsamp;
        int32_t yuv, yvu;
        uint32_t ox, oy, bytes_per_plane_x2;  // buffer = ws·hs·bytes_per_plane_x2 / 2
    };
    const Kind kinds[] = {{TJSAMP_444, acl::kDvppYuv444Sp, acl::kDvppYvu444Sp, 1, 1, 6},
                          {TJSAMP_422, acl::kDvppYuv422Sp, acl::kDvppYvu422Sp, 2, 1, 4},
                          {TJSAMP_440, acl::kDvppYuv440Sp, acl::kDvppYvu440Sp, 1, 2, 4}};
    const int w = 97, h = 65;
    for (const Kind& k : kinds) {
        const std::vector<uint8_t> jpeg = make_jpeg(w, h, k.subsamp);
        const TjPlanes want = tj_decode(jpeg);
        const uint32_t ws = align(w, v100() ? 128 : 64), hs = align(h, 16);
        for (int32_t requested : {k.yuv, k.yvu, int32_t(acl::kDvppUnknown), int32_t(acl::kDvppNv12)}) {
            const std::string what =
                "subsampling " + std::to_string(k.subsamp) + " format " + std::to_string(requested);
            uint32_t size = 0;
            ASSERT_EQ(api.acldvppJpegPredictDecSize(jpeg.data(), uint32_t(jpeg.size()), requested, &size), 0) << what;
            const bool nv12 = requested == acl::kDvppNv12;
            const uint32_t ow = nv12 && !v100() ? w & ~1 : w, oh = nv12 && !v100() ? h & ~1 : h;
            const uint32_t hs_out = align(oh, 16), ws_out = align(ow, v100() ? 128 : 64);
            EXPECT_EQ(size, nv12 ? ws_out * hs_out * 3 / 2 : ws * hs * k.bytes_per_plane_x2 / 2) << what;
            Buffer in(api, rt, jpeg.size());
            in.upload(jpeg);
            Buffer out(api, rt, size);
            Pic pic(api, out.p, size, requested, 0, 0, 0, 0);
            ASSERT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, uint32_t(jpeg.size()), pic.d, stream), 0) << recent();
            ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
            EXPECT_EQ(api.acldvppGetPicDescFormat(pic.d), requested == acl::kDvppUnknown ? k.yvu : requested) << what;
            EXPECT_EQ(api.acldvppGetPicDescWidth(pic.d), ow) << what;
            EXPECT_EQ(api.acldvppGetPicDescHeight(pic.d), oh) << what;
            EXPECT_EQ(api.acldvppGetPicDescWidthStride(pic.d), ws_out) << what;
            EXPECT_EQ(api.acldvppGetPicDescHeightStride(pic.d), hs_out) << what;
            const std::vector<uint8_t> got = out.download();
            size_t diffs = 0;
            for (uint32_t y = 0; y < oh; ++y) {
                for (uint32_t x = 0; x < ow; ++x)
                    diffs += got[y * ws_out + x] != want.planes[0][y * want.strides[0] + x];
            }
            const uint8_t* uv = got.data() + size_t(ws_out) * hs_out;
            if (nv12) {  // the rounded mean of the k.ox x k.oy ... covering samples
                const uint32_t sx = 2 / k.ox, sy = 2 / k.oy;  // source samples per output sample, per axis
                for (uint32_t y = 0; y < oh / 2; ++y) {
                    for (uint32_t x = 0; x < ow / 2; ++x) {
                        for (int c = 0; c < 2; ++c) {
                            const std::vector<uint8_t>& p = want.planes[1 + c];
                            int sum = 0, n = 0;
                            for (uint32_t j = y * sy; j < y * sy + sy; ++j) {
                                for (uint32_t i = x * sx; i < x * sx + sx; ++i, ++n) sum += p[j * want.strides[1] + i];
                            }
                            diffs += uv[y * ws_out + 2 * x + c] != uint8_t((sum + n / 2) / n);
                        }
                    }
                }
            } else {  // TurboJPEG's planes, interleaved, V first for the YVU forms
                const bool vu = requested != k.yuv;
                const uint32_t stride = ws_out * 2 / k.ox;
                for (uint32_t y = 0; y < uint32_t(want.planes[1].size()) / want.strides[1]; ++y) {
                    for (uint32_t x = 0; x < uint32_t(want.strides[1]); ++x) {
                        diffs += uv[y * stride + 2 * x + (vu ? 1 : 0)] != want.planes[1][y * want.strides[1] + x];
                        diffs += uv[y * stride + 2 * x + (vu ? 0 : 1)] != want.planes[2][y * want.strides[2] + x];
                    }
                }
            }
            EXPECT_EQ(diffs, 0u) << what;
        }
    }
    // Another subsampling's semi-planar form is refused, at the prediction and at the decode.
    const std::vector<uint8_t> jpeg420 = make_jpeg(w, h, TJSAMP_420), jpeg444 = make_jpeg(w, h, TJSAMP_444);
    uint32_t size = 0;
    EXPECT_EQ(api.acldvppJpegPredictDecSize(jpeg420.data(), uint32_t(jpeg420.size()), acl::kDvppYuv422Sp, &size),
              acl::kInvalidParam);
    Buffer in(api, rt, jpeg444.size());
    in.upload(jpeg444);
    Buffer out(api, rt, 1 << 16);
    for (int32_t format : {acl::kDvppYuv422Sp, acl::kDvppYvu440Sp, acl::kDvppRgb888}) {
        Pic pic(api, out.p, 1 << 16, format, 0, 0, 0, 0);
        EXPECT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, uint32_t(jpeg444.size()), pic.d, stream), acl::kInvalidParam)
            << format;
    }
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
}

TEST_P(SimDvpp, JpegdRefusesProgressiveArithmeticAndTruncatedJpegs) {
    start();
    Channel ch(api);
    uint32_t size = 0;
    const std::vector<uint8_t> good = read_file(data_path("odd_333x251.jpg"));
    ASSERT_EQ(api.acldvppJpegPredictDecSize(good.data(), uint32_t(good.size()), acl::kDvppNv12, &size), 0);
    Buffer out(api, rt, size);
    Pic pic(api, out.p, size, acl::kDvppNv12, 0, 0, 0, 0);
    std::vector<uint8_t> truncated(good.begin(), good.end() - 100);
    const std::vector<uint8_t> progressive = read_file(data_path("progressive.jpg"));
    const std::vector<uint8_t> arithmetic = read_file(data_path("arithmetic.jpg"));
    ASSERT_FALSE(progressive.empty());
    ASSERT_FALSE(arithmetic.empty());
    for (const auto& [name, bytes] :
         {std::make_pair("progressive", progressive), std::make_pair("arithmetic", arithmetic),
          std::make_pair("truncated", truncated)}) {
        Buffer in(api, rt, bytes.size());
        in.upload(bytes);
        EXPECT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, uint32_t(bytes.size()), pic.d, stream), acl::kUnsupportedJpeg)
            << name;
        EXPECT_NE(recent().find(name), std::string::npos) << name;
    }
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0);
    EXPECT_EQ(out.download(), std::vector<uint8_t>(size, 0));  // nothing was queued
}

TEST_P(SimDvpp, JpegdTakesOnlyAlignedDvppMemoryLargeEnough) {
    start();
    Channel ch(api);
    const std::vector<uint8_t> jpeg = read_file(data_path("odd_333x251.jpg"));
    ASSERT_FALSE(jpeg.empty());
    const uint32_t n = uint32_t(jpeg.size());
    uint32_t size = 0;
    ASSERT_EQ(api.acldvppJpegPredictDecSize(jpeg.data(), n, acl::kDvppNv12, &size), 0);
    Buffer in(api, rt, jpeg.size() + 128);
    in.upload(jpeg);
    Buffer out(api, rt, size);
    Pic pic(api, out.p, size, acl::kDvppNv12, 0, 0, 0, 0);
    // Input on the host, in aclrtMalloc memory, or not 128-byte aligned.
    EXPECT_EQ(api.acldvppJpegDecodeAsync(ch.d, jpeg.data(), n, pic.d, stream), acl::kInvalidParam);
    EXPECT_NE(recent().find("not DVPP memory"), std::string::npos);
    void* device = nullptr;
    ASSERT_EQ(rt.aclrtMalloc(&device, jpeg.size(), acl::kMallocHugeFirst), 0);
    EXPECT_EQ(api.acldvppJpegDecodeAsync(ch.d, device, n, pic.d, stream), acl::kInvalidParam);
    EXPECT_NE(recent().find("acldvppMalloc"), std::string::npos);
    EXPECT_EQ(rt.aclrtFree(device), 0);
    EXPECT_EQ(rt.aclrtFree(in.p), 207002);  // DVPP memory is acldvppFree's
    Buffer shifted(api, rt, jpeg.size() + 64);
    shifted.upload(jpeg, 64);
    EXPECT_EQ(api.acldvppJpegDecodeAsync(ch.d, static_cast<uint8_t*>(shifted.p) + 64, n, pic.d, stream),
              acl::kInvalidParam);
    EXPECT_NE(recent().find("128-byte aligned"), std::string::npos);
    // Input size past the end of its buffer.
    EXPECT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, n + 4096, pic.d, stream), acl::kInvalidParam);
    // Output on the host, or smaller than the decode writes.
    std::vector<uint8_t> host(size);
    Pic on_host(api, host.data(), size, acl::kDvppNv12, 0, 0, 0, 0);
    EXPECT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, n, on_host.d, stream), acl::kInvalidParam);
    Pic small(api, out.p, size - 1, acl::kDvppNv12, 0, 0, 0, 0);
    EXPECT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, n, small.d, stream), acl::kInvalidParam);
    // Every refusal queued nothing; the proper call works.
    ASSERT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, n, pic.d, stream), 0) << recent();
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    EXPECT_EQ(api.acldvppGetPicDescWidth(pic.d), v100() ? 333u : 332u);
}

// ---- VPC ---------------------------------------------------------------------------------------------

TEST_P(SimDvpp, VpcResizeHalvesAsTheMeanOfEachQuad) {
    start();
    Channel ch(api);
    const uint32_t w = 64, h = 32, ow = 32, oh = 16;
    const std::vector<uint8_t> src = pattern_nv12(w, h, w);
    Buffer in(api, rt, src.size());
    in.upload(src);
    Buffer out(api, rt, ow * oh * 3 / 2);
    Pic pin(api, in.p, uint32_t(src.size()), acl::kDvppNv12, w, h, w, h);
    Pic pout(api, out.p, ow * oh * 3 / 2, acl::kDvppNv21, ow, oh, ow, oh);
    acl::DvppResizeConfig* config = api.acldvppCreateResizeConfig();
    ASSERT_EQ(api.acldvppVpcResizeAsync(ch.d, pin.d, pout.d, config, stream), 0) << recent();
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    EXPECT_EQ(api.acldvppDestroyResizeConfig(config), 0);
    const std::vector<uint8_t> got = out.download();
    // An exact 2x reduction is the mean of each 2x2 quad (cv::resize's INTER_AREA fast path): rounded
    // half up on the one-channel luma, half to even on the two-channel chroma.
    const auto mean = [](int a, int b, int c, int d) { return uint8_t((a + b + c + d + 2) / 4); };
    const auto mean_even = [](int a, int b, int c, int d) {
        const int sum = a + b + c + d, q = sum / 4, r = sum % 4;
        return uint8_t(q + (r > 2 || (r == 2 && q % 2)));
    };
    size_t wrong = 0;
    for (uint32_t y = 0; y < oh; ++y) {
        for (uint32_t x = 0; x < ow; ++x) {
            const uint8_t* s = &src[2 * y * w + 2 * x];
            wrong += got[y * ow + x] != mean(s[0], s[1], s[w], s[w + 1]);
        }
    }
    for (uint32_t y = 0; y < oh / 2; ++y) {
        for (uint32_t x = 0; x < ow / 2; ++x) {
            for (int c = 0; c < 2; ++c) {
                const uint8_t* s = &src[size_t(w) * h + 2 * y * w + 4 * x + c];
                // NV12 in, NV21 out: U and V change places.
                wrong += got[ow * oh + y * ow + 2 * x + (1 - c)] != mean_even(s[0], s[2], s[w], s[w + 2]);
            }
        }
    }
    EXPECT_EQ(wrong, 0u);
}

TEST_P(SimDvpp, VpcEnforcesTheSocStrideRules) {
    start();
    Channel ch(api);
    Buffer in(api, rt, 64 * 32 * 3 / 2);
    Buffer out(api, rt, 48 * 32 * 3 / 2);
    Pic pin(api, in.p, 64 * 32 * 3 / 2, acl::kDvppNv12, 64, 32, 64, 32);
    acl::DvppResizeConfig* config = api.acldvppCreateResizeConfig();
    // widthStride 40 >= width 40: fine on 310B, not a multiple of 16 on 310.
    Pic pout(api, out.p, 40 * 32 * 3 / 2, acl::kDvppNv12, 40, 32, 40, 32);
    EXPECT_EQ(api.acldvppVpcResizeAsync(ch.d, pin.d, pout.d, config, stream), v100() ? acl::kInvalidParam : 0)
        << recent();
    // A width stride below the width, an odd height stride, RGB out: refused everywhere.
    Pic narrow(api, out.p, 48 * 32 * 3 / 2, acl::kDvppNv12, 48, 32, 32, 32);
    EXPECT_EQ(api.acldvppVpcResizeAsync(ch.d, pin.d, narrow.d, config, stream), acl::kInvalidParam);
    Pic odd(api, out.p, 48 * 32 * 3 / 2, acl::kDvppNv12, 48, 30, 48, 31);
    EXPECT_EQ(api.acldvppVpcResizeAsync(ch.d, pin.d, odd.d, config, stream), acl::kInvalidParam);
    Pic rgb(api, out.p, 48 * 32 * 3 / 2, acl::kDvppRgb888, 16, 16, 48, 16);
    EXPECT_NE(api.acldvppVpcResizeAsync(ch.d, pin.d, rgb.d, config, stream), 0);
    // Smaller than 10x6, or a buffer too small for widthStride x heightStride x 3/2.
    Pic tiny(api, out.p, 48 * 32 * 3 / 2, acl::kDvppNv12, 8, 4, 48, 4);
    EXPECT_EQ(api.acldvppVpcResizeAsync(ch.d, pin.d, tiny.d, config, stream), acl::kInvalidParam);
    Pic short_buffer(api, out.p, 48 * 32, acl::kDvppNv12, 48, 32, 48, 32);
    EXPECT_EQ(api.acldvppVpcResizeAsync(ch.d, pin.d, short_buffer.d, config, stream), acl::kInvalidParam);
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    EXPECT_EQ(api.acldvppDestroyResizeConfig(config), 0);
}

TEST_P(SimDvpp, VpcCropNeedsEvenLeftTopOddRightBottomOn310) {
    start();
    Channel ch(api);
    const uint32_t w = 64, h = 32;
    const std::vector<uint8_t> src = pattern_nv12(w, h, w);
    Buffer in(api, rt, src.size());
    in.upload(src);
    Buffer out(api, rt, 32 * 12 * 3 / 2);
    Pic pin(api, in.p, uint32_t(src.size()), acl::kDvppNv12, w, h, w, h);
    Pic pout(api, out.p, 32 * 12 * 3 / 2, acl::kDvppNv12, 20, 12, 32, 12);
    for (const auto& roi : {std::vector<uint32_t>{1, 20, 0, 11}, {2, 21, 1, 12}, {2, 20, 2, 13}, {2, 21, 2, 12}}) {
        Roi bad(api, roi[0], roi[1], roi[2], roi[3]);
        const acl::Error e = api.acldvppVpcCropAsync(ch.d, pin.d, pout.d, bad.r, stream);
        if (v100()) {
            EXPECT_EQ(e, acl::kInvalidParam) << roi[0] << "," << roi[1] << "," << roi[2] << "," << roi[3];
            EXPECT_NE(recent().find("even left/top and odd right/bottom"), std::string::npos);
        } else {
            EXPECT_EQ(e, 0) << recent();  // no parity rule on 310B
        }
    }
    Roi outside(api, 50, 69, 0, 11);
    EXPECT_EQ(api.acldvppVpcCropAsync(ch.d, pin.d, pout.d, outside.r, stream), acl::kInvalidParam);
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    // A 20x12 crop onto a 20x12 picture copies the region exactly.
    Roi good(api, 4, 23, 6, 17);
    ASSERT_EQ(api.acldvppVpcCropAsync(ch.d, pin.d, pout.d, good.r, stream), 0) << recent();
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    const std::vector<uint8_t> got = out.download();
    size_t wrong = 0;
    for (uint32_t y = 0; y < 12; ++y) {
        for (uint32_t x = 0; x < 20; ++x) wrong += got[y * 32 + x] != src[(y + 6) * w + x + 4];
    }
    for (uint32_t y = 0; y < 6; ++y) {
        for (uint32_t x = 0; x < 20; ++x) wrong += got[32 * 12 + y * 32 + x] != src[w * h + (y + 3) * w + x + 4];
    }
    EXPECT_EQ(wrong, 0u);
}

TEST_P(SimDvpp, VpcCropAndPasteKeepsTheRestOfTheOutput) {
    start();
    Channel ch(api);
    const uint32_t w = 64, h = 32;
    const std::vector<uint8_t> src = pattern_nv12(w, h, w);
    Buffer in(api, rt, src.size());
    in.upload(src);
    Buffer out(api, rt, src.size(), 0x11);
    Pic pin(api, in.p, uint32_t(src.size()), acl::kDvppNv12, w, h, w, h);
    Pic pout(api, out.p, uint32_t(src.size()), acl::kDvppNv12, w, h, w, h);
    Roi crop(api, 0, 15, 0, 7);
    Roi paste(api, 16, 31, 8, 15);
    if (v100()) {
        Roi unaligned(api, 18, 33, 8, 15);
        EXPECT_EQ(api.acldvppVpcCropAndPasteAsync(ch.d, pin.d, pout.d, crop.r, unaligned.r, stream),
                  acl::kInvalidParam);
        EXPECT_NE(recent().find("aligned to 16"), std::string::npos);
    }
    ASSERT_EQ(api.acldvppVpcCropAndPasteAsync(ch.d, pin.d, pout.d, crop.r, paste.r, stream), 0) << recent();
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    const std::vector<uint8_t> got = out.download();
    size_t wrong_in = 0, wrong_out = 0;
    for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
            const bool pasted = x >= 16 && x < 32 && y >= 8 && y < 16;
            if (pasted) {
                wrong_in += got[y * w + x] != src[(y - 8) * w + x - 16];
            } else {
                wrong_out += got[y * w + x] != 0x11;
            }
        }
    }
    for (uint32_t y = 0; y < h / 2; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
            const bool pasted = x >= 16 && x < 32 && y >= 4 && y < 8;
            const uint8_t v = got[w * h + y * w + x];
            if (pasted) {
                wrong_in += v != src[w * h + (y - 4) * w + x - 16];
            } else {
                wrong_out += v != 0x11;
            }
        }
    }
    EXPECT_EQ(wrong_in, 0u);
    EXPECT_EQ(wrong_out, 0u);
}

TEST_P(SimDvpp, VpcBatchCropCutsEveryRoiAndAtMost256) {
    start();
    Channel ch(api);
    const uint32_t w = 64, h = 32;
    const std::vector<uint8_t> src = pattern_nv12(w, h, w);
    Buffer in(api, rt, src.size());
    in.upload(src);
    acl::DvppBatchPicDesc* srcs = api.acldvppCreateBatchPicDesc(1);
    acl::DvppBatchPicDesc* dsts = api.acldvppCreateBatchPicDesc(3);
    Pic::set(api, api.acldvppGetPicDesc(srcs, 0), in.p, uint32_t(src.size()), acl::kDvppNv12, w, h, w, h);
    std::vector<std::unique_ptr<Buffer>> outs;
    for (uint32_t i = 0; i < 3; ++i) {
        outs.push_back(std::make_unique<Buffer>(api, rt, 32 * 8 * 3 / 2));
        Pic::set(api, api.acldvppGetPicDesc(dsts, i), outs.back()->p, 32 * 8 * 3 / 2, acl::kDvppNv12, 16, 8, 32, 8);
    }
    Roi a(api, 0, 15, 0, 7), b(api, 16, 31, 8, 15), c(api, 48, 63, 24, 31);
    acl::DvppRoiConfig* rois[] = {a.r, b.r, c.r};
    const uint32_t left[] = {0, 16, 48}, top[] = {0, 8, 24};
    uint32_t count = 3;
    ASSERT_EQ(api.acldvppVpcBatchCropAsync(ch.d, srcs, &count, 1, dsts, rois, stream), 0) << recent();
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    for (uint32_t i = 0; i < 3; ++i) {
        const std::vector<uint8_t> got = outs[i]->download();
        size_t wrong = 0;
        for (uint32_t y = 0; y < 8; ++y) {
            for (uint32_t x = 0; x < 16; ++x) wrong += got[y * 32 + x] != src[(y + top[i]) * w + x + left[i]];
        }
        EXPECT_EQ(wrong, 0u) << "ROI " << i;
    }
    uint32_t too_many = 257;
    std::vector<acl::DvppRoiConfig*> many(257, a.r);
    EXPECT_EQ(api.acldvppVpcBatchCropAsync(ch.d, srcs, &too_many, 1, dsts, many.data(), stream), acl::kInvalidParam);
    EXPECT_NE(recent().find("256"), std::string::npos);
    EXPECT_EQ(api.acldvppDestroyBatchPicDesc(srcs), 0);
    EXPECT_EQ(api.acldvppDestroyBatchPicDesc(dsts), 0);
}

// Every resize-config call honours acldvppSetResizeConfigInterpolation and gives the pixels of
// acldvppVpcCropResizeAsync (itself checked against cv::resize in test_sim_vpc_opencv.cpp); the plain
// crop / crop-and-paste / batch-crop calls use interpolation 0, bilinear.
TEST_P(SimDvpp, VpcResizeConfigVariantsHonourTheInterpolation) {
    start();
    Channel ch(api);
    const uint32_t w = 64, h = 32, ow = 26, oh = 14, ows = 32;
    std::vector<uint8_t> src(size_t(w) * h * 3 / 2);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t((i * 2654435761u) >> 13);  // no two neighbours alike
    Buffer in(api, rt, src.size());
    in.upload(src);
    Pic pin(api, in.p, uint32_t(src.size()), acl::kDvppNv12, w, h, w, h);
    const uint32_t out_bytes = ows * oh * 3 / 2;
    Roi roi(api, 2, 41, 2, 25), whole_in(api, 0, w - 1, 0, h - 1), paste(api, 0, ow - 1, 0, oh - 1);
    acl::DvppResizeConfig* config = api.acldvppCreateResizeConfig();
    // Runs `call` onto a fresh output picture and returns its bytes.
    const auto output = [&](const std::function<acl::Error(acl::DvppPicDesc*)>& call) {
        Buffer out(api, rt, out_bytes, 0x77);
        Pic pout(api, out.p, out_bytes, acl::kDvppNv12, ow, oh, ows, oh);
        EXPECT_EQ(call(pout.d), 0) << recent();
        EXPECT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
        return out.download();
    };
    std::vector<uint8_t> by_filter[3];
    for (uint32_t interpolation : {1u, 2u}) {
        ASSERT_EQ(vpc.acldvppSetResizeConfigInterpolation(config, interpolation), 0);
        const std::vector<uint8_t> want = output(
            [&](acl::DvppPicDesc* o) { return vpc.acldvppVpcCropResizeAsync(ch.d, pin.d, o, roi.r, config, stream); });
        by_filter[interpolation] = want;
        EXPECT_EQ(output([&](acl::DvppPicDesc* o) {
                      return vpc.acldvppVpcCropResizePasteAsync(ch.d, pin.d, o, roi.r, paste.r, config, stream);
                  }),
                  want)
            << "crop-resize-paste, interpolation " << interpolation;
        // Batch: one source, two ROIs.
        acl::DvppBatchPicDesc* srcs = api.acldvppCreateBatchPicDesc(1);
        acl::DvppBatchPicDesc* dsts = api.acldvppCreateBatchPicDesc(2);
        Pic::set(api, api.acldvppGetPicDesc(srcs, 0), in.p, uint32_t(src.size()), acl::kDvppNv12, w, h, w, h);
        Buffer out0(api, rt, out_bytes, 0x77), out1(api, rt, out_bytes, 0x77);
        Pic::set(api, api.acldvppGetPicDesc(dsts, 0), out0.p, out_bytes, acl::kDvppNv12, ow, oh, ows, oh);
        Pic::set(api, api.acldvppGetPicDesc(dsts, 1), out1.p, out_bytes, acl::kDvppNv12, ow, oh, ows, oh);
        acl::DvppRoiConfig* rois[] = {roi.r, roi.r};
        uint32_t count = 2;
        ASSERT_EQ(vpc.acldvppVpcBatchCropResizeAsync(ch.d, srcs, &count, 1, dsts, rois, config, stream), 0) << recent();
        ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
        EXPECT_EQ(out0.download(), want) << "batch crop-resize, interpolation " << interpolation;
        EXPECT_EQ(out1.download(), want) << "batch crop-resize, interpolation " << interpolation;
        EXPECT_EQ(api.acldvppDestroyBatchPicDesc(srcs), 0);
        EXPECT_EQ(api.acldvppDestroyBatchPicDesc(dsts), 0);
        // Resize of the whole picture = crop-resize of the whole picture.
        EXPECT_EQ(
            output([&](acl::DvppPicDesc* o) { return api.acldvppVpcResizeAsync(ch.d, pin.d, o, config, stream); }),
            output([&](acl::DvppPicDesc* o) {
                return vpc.acldvppVpcCropResizeAsync(ch.d, pin.d, o, whole_in.r, config, stream);
            }))
            << "resize, interpolation " << interpolation;
    }
    EXPECT_NE(by_filter[1], by_filter[2]);
    // The calls without a resize config: interpolation 0, bilinear.
    EXPECT_EQ(output([&](acl::DvppPicDesc* o) { return api.acldvppVpcCropAsync(ch.d, pin.d, o, roi.r, stream); }),
              by_filter[1]);
    EXPECT_EQ(output([&](acl::DvppPicDesc* o) {
                  return api.acldvppVpcCropAndPasteAsync(ch.d, pin.d, o, roi.r, paste.r, stream);
              }),
              by_filter[1]);
    // A NULL or dead resize config is refused by every variant.
    Buffer out(api, rt, out_bytes);
    Pic pout(api, out.p, out_bytes, acl::kDvppNv12, ow, oh, ows, oh);
    EXPECT_EQ(vpc.acldvppVpcCropResizePasteAsync(ch.d, pin.d, pout.d, roi.r, paste.r, nullptr, stream),
              acl::kInvalidParam);
    EXPECT_EQ(api.acldvppDestroyResizeConfig(config), 0);
    EXPECT_EQ(vpc.acldvppVpcCropResizeAsync(ch.d, pin.d, pout.d, roi.r, config, stream), acl::kInvalidParam);
}

// ---- JPEGE -------------------------------------------------------------------------------------------

TEST_P(SimDvpp, JpegeOutputDecodesBackToTheInput) {
    start();
    Channel ch(api);
    const uint32_t w = 64, h = 48, ws = 64;
    std::vector<uint8_t> src(size_t(ws) * h * 3 / 2, 128);
    for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) src[y * ws + x] = uint8_t(40 + 2 * x + y);  // smooth: JPEG keeps it
    }
    Buffer in(api, rt, src.size());
    in.upload(src);
    Pic pin(api, in.p, uint32_t(src.size()), acl::kDvppNv12, w, h, ws, h);
    acl::DvppJpegeConfig* config = api.acldvppCreateJpegeConfig();
    ASSERT_EQ(api.acldvppSetJpegeConfigLevel(config, 100), 0);
    EXPECT_EQ(api.acldvppSetJpegeConfigLevel(config, 101), acl::kInvalidParam);
    uint32_t capacity = 0;
    ASSERT_EQ(api.acldvppJpegPredictEncSize(pin.d, config, &capacity), 0);
    EXPECT_EQ(capacity, 2u << 20);  // ws·hs·3/2 + 768 rounded up to 2 MiB
    Buffer out(api, rt, capacity);
    uint32_t size = capacity;
    ASSERT_EQ(api.acldvppJpegEncodeAsync(ch.d, pin.d, out.p, &size, config, stream), 0) << recent();
    EXPECT_EQ(size, capacity);  // set at the sync
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    ASSERT_GT(size, 100u);
    ASSERT_LT(size, capacity);
    std::vector<uint8_t> jpeg = out.download();
    jpeg.resize(size);
    const TjPlanes back = tj_decode(jpeg);
    ASSERT_EQ(back.width, int(w));
    ASSERT_EQ(back.height, int(h));
    EXPECT_EQ(back.subsamp, TJSAMP_420);
    int worst = 0;
    for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
            worst = std::max(worst, std::abs(int(back.planes[0][y * back.strides[0] + x]) - int(src[y * ws + x])));
        }
    }
    EXPECT_LE(worst, 3);
    // An odd width is refused; a capacity too small fails the sync.
    Pic odd(api, in.p, uint32_t(src.size()), acl::kDvppNv12, w - 1, h, ws, h);
    EXPECT_EQ(api.acldvppJpegEncodeAsync(ch.d, odd.d, out.p, &size, config, stream), acl::kInvalidParam);
    uint32_t tiny = 64;
    ASSERT_EQ(api.acldvppJpegEncodeAsync(ch.d, pin.d, out.p, &tiny, config, stream), 0) << recent();
    EXPECT_EQ(rt.aclrtSynchronizeStream(stream), 507018);
    EXPECT_EQ(tiny, 64u);
    EXPECT_EQ(api.acldvppDestroyJpegeConfig(config), 0);
}

// ---- VDEC --------------------------------------------------------------------------------------------

namespace {

// Splits an Annex-B stream into access units: the parameter sets and SEI before a picture's slice go
// with it (one slice per picture in the test clips).
std::vector<std::vector<uint8_t>> access_units(const std::vector<uint8_t>& s, bool h265) {
    std::vector<size_t> starts;
    for (size_t i = 0; i + 3 <= s.size(); ++i) {
        if (s[i] == 0 && s[i + 1] == 0 && s[i + 2] == 1) {
            starts.push_back(i > 0 && s[i - 1] == 0 ? i - 1 : i);
            i += 2;
        }
    }
    std::vector<std::vector<uint8_t>> units;
    std::vector<uint8_t> unit;
    for (size_t k = 0; k < starts.size(); ++k) {
        const size_t begin = starts[k], end = k + 1 < starts.size() ? starts[k + 1] : s.size();
        const size_t header = begin + (s[begin + 2] == 1 ? 3 : 4);
        const int type = h265 ? (s[header] >> 1) & 0x3F : s[header] & 0x1F;
        unit.insert(unit.end(), s.begin() + long(begin), s.begin() + long(end));
        if (h265 ? type < 32 : (type >= 1 && type <= 5)) {
            units.push_back(unit);
            unit.clear();
        }
    }
    return units;
}

struct Delivered {
    uint32_t index, ret, width, height, width_stride, height_stride;
    std::vector<uint8_t> nv12;
    std::thread::id thread;
};

struct Collector {
    const acl::DvppApi* api;
    const Runtime* rt;
    std::mutex mutex;
    std::vector<Delivered> frames;
};

// A frame's user data.
struct FrameTag {
    uint32_t index;
    Collector* collector;
};

void on_frame(acl::DvppStreamDesc* input, acl::DvppPicDesc* output, void* user_data) {
    (void)input;
    const auto* tag = static_cast<const FrameTag*>(user_data);
    Collector* c = tag->collector;
    Delivered d{tag->index,
                c->api->acldvppGetPicDescRetCode(output),
                c->api->acldvppGetPicDescWidth(output),
                c->api->acldvppGetPicDescHeight(output),
                c->api->acldvppGetPicDescWidthStride(output),
                c->api->acldvppGetPicDescHeightStride(output),
                {},
                std::this_thread::get_id()};
    if (d.ret == 0) {
        d.nv12.resize(size_t(d.width_stride) * d.height_stride * 3 / 2);
        c->rt->aclrtMemcpy(d.nv12.data(), d.nv12.size(), c->api->acldvppGetPicDescData(output), d.nv12.size(),
                           acl::kMemcpyD2H);
    }
    std::lock_guard<std::mutex> lock(c->mutex);
    c->frames.push_back(std::move(d));
}

// The thread that runs VDEC callbacks: loops on aclrtProcessReport with the test's context current.
struct ReportThread {
    const acl::DvppApi& api;
    const Runtime& rt;
    std::atomic<bool> stop{false};
    std::thread thread;
    ReportThread(const acl::DvppApi& a, const Runtime& r) : api(a), rt(r) {
        acl::Context ctx = nullptr;
        EXPECT_EQ(rt.aclrtGetCurrentContext(&ctx), 0);
        thread = std::thread([this, ctx] {
            rt.aclrtSetCurrentContext(ctx);
            while (!stop) api.aclrtProcessReport(20);
        });
    }
    uint64_t id() { return static_cast<uint64_t>(thread.native_handle()); }
    ~ReportThread() {
        stop = true;
        thread.join();
    }
};

}  // namespace

class SimVdec : public SimDvpp {
protected:
    // Decodes `clip` frame by frame on a channel whose callbacks run on a report thread, then checks each
    // picture against FFmpeg's decode (`reference`, NV12 without padding).
    void decode_and_compare(const char* clip, const char* reference, bool h265) {
        start();
        const std::vector<uint8_t> stream_bytes = read_file(data_path(clip));
        const std::vector<uint8_t> want = read_file(data_path(reference));
        ASSERT_FALSE(stream_bytes.empty());
        const std::vector<std::vector<uint8_t>> units = access_units(stream_bytes, h265);
        const uint32_t w = 328, h = 240, ws = 336, hs = 240;  // align16(328)
        const size_t frame_bytes = size_t(w) * h * 3 / 2;
        ASSERT_EQ(units.size(), want.size() / frame_bytes);
        ReportThread reporter(api, rt);
        // The report thread loops before the channel exists: a subscription keeps it waiting, not failing.
        ASSERT_EQ(api.aclrtSubscribeReport(reporter.id(), stream), 0) << recent();
        Collector collector{&api, &rt, {}, {}};
        acl::VdecChannelDesc* ch = api.aclvdecCreateChannelDesc();
        ASSERT_EQ(api.aclvdecSetChannelDescChannelId(ch, 3), 0);
        ASSERT_EQ(api.aclvdecSetChannelDescThreadId(ch, reporter.id()), 0);
        ASSERT_EQ(api.aclvdecSetChannelDescCallback(ch, &on_frame), 0);
        ASSERT_EQ(api.aclvdecSetChannelDescEnType(ch, h265 ? acl::kH265Main : acl::kH264High), 0);
        ASSERT_EQ(api.aclvdecSetChannelDescOutPicFormat(ch, acl::kDvppNv12), 0);
        ASSERT_EQ(api.aclvdecCreateChannel(ch), 0) << recent();
        acl::VdecFrameConfig* config = api.aclvdecCreateFrameConfig();
        // Per frame: its bytes, its output, its descriptions, and the user data {index, collector}.
        struct Frame {
            std::unique_ptr<Buffer> in, out;
            acl::DvppStreamDesc* desc;
            std::unique_ptr<Pic> pic;
            FrameTag tag;
        };
        std::vector<Frame> frames(units.size());
        for (size_t i = 0; i < units.size(); ++i) {
            Frame& f = frames[i];
            f.in = std::make_unique<Buffer>(api, rt, units[i].size());
            f.in->upload(units[i]);
            f.out = std::make_unique<Buffer>(api, rt, size_t(ws) * hs * 3 / 2);
            f.desc = api.acldvppCreateStreamDesc();
            EXPECT_EQ(api.acldvppSetStreamDescData(f.desc, f.in->p), 0);
            EXPECT_EQ(api.acldvppSetStreamDescSize(f.desc, uint32_t(units[i].size())), 0);
            EXPECT_EQ(api.acldvppSetStreamDescTimestamp(f.desc, i), 0);
            f.pic = std::make_unique<Pic>(api);
            EXPECT_EQ(api.acldvppSetPicDescData(f.pic->d, f.out->p), 0);
            EXPECT_EQ(api.acldvppSetPicDescSize(f.pic->d, uint32_t(f.out->size)), 0);
            EXPECT_EQ(api.acldvppSetPicDescFormat(f.pic->d, acl::kDvppNv12), 0);
            f.tag = FrameTag{uint32_t(i), &collector};
            ASSERT_EQ(api.aclvdecSendFrame(ch, f.desc, f.pic->d, config, &f.tag), 0) << recent();
        }
        acl::DvppStreamDesc* eos = api.acldvppCreateStreamDesc();
        ASSERT_EQ(api.acldvppSetStreamDescEos(eos, 1), 0);
        ASSERT_EQ(api.aclvdecSendFrame(ch, eos, nullptr, config, nullptr), 0)
            << recent();  // returns when all came back
        {
            std::lock_guard<std::mutex> lock(collector.mutex);
            ASSERT_EQ(collector.frames.size(), units.size());
            for (size_t i = 0; i < units.size(); ++i) {
                const Delivered& d = collector.frames[i];
                EXPECT_EQ(d.index, i);
                EXPECT_EQ(d.thread, reporter.thread.get_id());
                ASSERT_EQ(d.ret, 0u) << "frame " << i;
                ASSERT_EQ(d.width, w);
                ASSERT_EQ(d.height, h);
                ASSERT_EQ(d.width_stride, ws);
                ASSERT_EQ(d.height_stride, hs);
                const uint8_t* ref = &want[i * frame_bytes];
                size_t wrong = 0;
                for (uint32_t y = 0; y < h * 3 / 2; ++y) wrong += std::memcmp(&d.nv12[y * ws], &ref[y * w], w) != 0;
                EXPECT_EQ(wrong, 0u) << "rows differ in frame " << i;
            }
        }
        EXPECT_EQ(api.aclvdecDestroyChannel(ch), 0) << recent();
        EXPECT_EQ(api.aclvdecDestroyChannelDesc(ch), 0);
        EXPECT_EQ(api.aclvdecDestroyFrameConfig(config), 0);
        EXPECT_EQ(api.acldvppDestroyStreamDesc(eos), 0);
        for (Frame& f : frames) {
            EXPECT_EQ(api.acldvppDestroyStreamDesc(f.desc), 0);
        }
        frames.clear();
        EXPECT_EQ(api.aclrtUnSubscribeReport(reporter.id(), stream), 0) << recent();
    }
};

TEST_P(SimVdec, H264FramesComeBackThroughTheReportThreadAsFfmpegDecodesThem) {
    decode_and_compare("camera.h264", "camera.h264.nv12", false);
}

TEST_P(SimVdec, H265FramesComeBackThroughTheReportThreadAsFfmpegDecodesThem) {
    decode_and_compare("camera.h265", "camera.h265.nv12", true);
}

TEST_P(SimDvpp, ProcessReportTimesOutAndNeedsASubscription) {
    start();
    const uint64_t me = static_cast<uint64_t>(pthread_self());
    EXPECT_EQ(api.aclrtProcessReport(5), 100035);  // ACL_ERROR_THREAD_NOT_SUBSCRIBE
    ASSERT_EQ(api.aclrtSubscribeReport(me, stream), 0) << recent();
    EXPECT_EQ(api.aclrtSubscribeReport(me, stream), 100033);  // ACL_ERROR_REPEAT_SUBSCRIBE
    EXPECT_EQ(api.aclrtProcessReport(5), 507012);             // ACL_ERROR_RT_REPORT_TIMEOUT
    EXPECT_EQ(api.aclrtUnSubscribeReport(me, stream), 0) << recent();
    EXPECT_EQ(api.aclrtUnSubscribeReport(me, stream), 100034);  // ACL_ERROR_STREAM_NOT_SUBSCRIBE
}

// ---- channels, ledger, faults, memory ----------------------------------------------------------------

TEST_P(SimDvpp, DvppChannelsRunOutWithResourceAllocFail) {
    start();
    std::vector<acl::DvppChannelDesc*> descs;
    acl::Error e = 0;
    while (e == 0 && descs.size() < 1000) {
        descs.push_back(api.acldvppCreateChannelDesc());
        e = api.acldvppCreateChannel(descs.back());
    }
    EXPECT_EQ(e, acl::kRtResourceAllocFail);
    EXPECT_EQ(descs.size() - 1, v100() ? 64u : 128u);
    EXPECT_EQ(api.acldvppDestroyChannelDesc(descs[0]), 148051);  // its channel lives
    for (size_t i = 0; i < descs.size(); ++i) {
        if (i + 1 < descs.size()) {
            EXPECT_EQ(api.acldvppDestroyChannel(descs[i]), 0);
        }
        EXPECT_EQ(api.acldvppDestroyChannelDesc(descs[i]), 0);
    }
}

TEST_P(SimDvpp, VdecChannelIdsRunOutWithResourceAllocFail) {
    start();
    std::vector<acl::VdecChannelDesc*> descs;
    for (uint32_t id = 0; id <= 32; ++id) {
        acl::VdecChannelDesc* d = api.aclvdecCreateChannelDesc();
        descs.push_back(d);
        EXPECT_EQ(api.aclvdecSetChannelDescChannelId(d, id == 32 ? 0 : id), 0);
        EXPECT_EQ(api.aclvdecSetChannelDescThreadId(d, static_cast<uint64_t>(pthread_self())), 0);
        EXPECT_EQ(api.aclvdecSetChannelDescCallback(d, &on_frame), 0);
        EXPECT_EQ(api.aclvdecSetChannelDescEnType(d, acl::kH264Main), 0);
        EXPECT_EQ(api.aclvdecCreateChannel(d), id == 32 ? acl::kRtResourceAllocFail : 0) << id << ": " << recent();
    }
    EXPECT_EQ(api.aclvdecSetChannelDescChannelId(descs.back(), 32), 0);
    EXPECT_EQ(api.aclvdecCreateChannel(descs.back()), acl::kInvalidParam);  // ids are 0..31
    for (size_t i = 0; i < descs.size(); ++i) {
        if (i + 1 < descs.size()) {
            EXPECT_EQ(api.aclvdecDestroyChannel(descs[i]), 0) << recent();
        }
        EXPECT_EQ(api.aclvdecDestroyChannelDesc(descs[i]), 0);
    }
}

TEST_P(SimDvpp, ChannelModesAreRefusedOn310AndHonouredOn310B) {
    start();
    acl::DvppChannelDesc* d = api.acldvppCreateChannelDesc();
    if (v100()) {
        EXPECT_EQ(api.acldvppSetChannelDescMode(d, acl::kDvppModeJpegd), acl::kFeatureUnsupported);
    } else {
        ASSERT_EQ(api.acldvppSetChannelDescMode(d, acl::kDvppModeJpegd), 0);
        ASSERT_EQ(api.acldvppCreateChannel(d), 0);
        Buffer in(api, rt, 64 * 32 * 3 / 2);
        Pic pin(api, in.p, 64 * 32 * 3 / 2, acl::kDvppNv12, 64, 32, 64, 32);
        Roi roi(api, 0, 15, 0, 7);
        EXPECT_EQ(api.acldvppVpcCropAsync(d, pin.d, pin.d, roi.r, stream), acl::kInvalidParam);  // a JPEGD channel
        EXPECT_EQ(api.acldvppDestroyChannel(d), 0);
    }
    EXPECT_EQ(api.acldvppDestroyChannelDesc(d), 0);
}

TEST_P(SimDvpp, LeakedDvppObjectsFailAclFinalize) {
    start();
    void* p = nullptr;
    ASSERT_EQ(api.acldvppMalloc(&p, 1000), 0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 128, 0u);
    api.acldvppCreatePicDesc();
    api.acldvppCreateRoiConfig(0, 15, 0, 7);
    acl::DvppChannelDesc* ch = api.acldvppCreateChannelDesc();
    ASSERT_EQ(api.acldvppCreateChannel(ch), 0);
    api.acldvppCreateStreamDesc();
    api.aclvdecCreateFrameConfig();
    ASSERT_EQ(rt.aclrtDestroyStream(stream), 0);
    stream = nullptr;
    ASSERT_EQ(rt.aclrtResetDevice(0), 0);
    running = false;
    EXPECT_EQ(rt.aclFinalize(), 148051);
    const std::string why = recent();
    for (const char* leak : {"DVPP memory", "acldvppMalloc", "picture description", "ROI config", "DVPP channel of",
                             "stream description", "VDEC frame config"}) {
        EXPECT_NE(why.find(leak), std::string::npos) << leak << " in: " << why;
    }
    // The ledger was cleared: the next run starts clean.
    start();
}

TEST_P(SimDvpp, InjectedFaultsReachTheCaller) {
    setenv("KES_SIM_FAIL",
           "acldvppMalloc:2:207018,acldvppJpegDecodeAsync:1:507018,aclvdecSendFrame:1:507018,"
           "aclrtSynchronizeStream:1:507046",
           1);
    start();
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_EQ(api.acldvppMalloc(&a, 4096), 0);
    EXPECT_EQ(api.acldvppMalloc(&b, 4096), 207018);  // DVPP memory exhausted, the 2nd time
    EXPECT_EQ(b, nullptr);
    const std::vector<uint8_t> jpeg = read_file(data_path("odd_333x251.jpg"));
    ASSERT_FALSE(jpeg.empty());
    {
        Channel ch(api);
        uint32_t size = 0;
        ASSERT_EQ(api.acldvppJpegPredictDecSize(jpeg.data(), uint32_t(jpeg.size()), acl::kDvppNv12, &size), 0);
        Buffer in(api, rt, jpeg.size());
        in.upload(jpeg);
        Buffer out(api, rt, size);
        Pic pic(api, out.p, size, acl::kDvppNv12, 0, 0, 0, 0);
        const uint32_t n = uint32_t(jpeg.size());
        EXPECT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, n, pic.d, stream), 507018);
        EXPECT_NE(recent().find("KES_SIM_FAIL"), std::string::npos);
        ASSERT_EQ(api.acldvppJpegDecodeAsync(ch.d, in.p, n, pic.d, stream), 0) << recent();
        EXPECT_EQ(rt.aclrtSynchronizeStream(stream), 507046);  // sync timeout: the work stays queued
        EXPECT_EQ(api.acldvppGetPicDescWidth(pic.d), 0u);
        ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
        EXPECT_NE(api.acldvppGetPicDescWidth(pic.d), 0u);
    }
    acl::VdecChannelDesc* vd = api.aclvdecCreateChannelDesc();
    ASSERT_EQ(api.aclvdecSetChannelDescThreadId(vd, static_cast<uint64_t>(pthread_self())), 0);
    ASSERT_EQ(api.aclvdecSetChannelDescCallback(vd, &on_frame), 0);
    ASSERT_EQ(api.aclvdecSetChannelDescEnType(vd, acl::kH264Main), 0);
    ASSERT_EQ(api.aclvdecCreateChannel(vd), 0) << recent();
    acl::DvppStreamDesc* sd = api.acldvppCreateStreamDesc();
    EXPECT_EQ(api.aclvdecSendFrame(vd, sd, nullptr, nullptr, nullptr), 507018);
    EXPECT_EQ(api.aclvdecDestroyChannel(vd), 0) << recent();
    EXPECT_EQ(api.aclvdecDestroyChannelDesc(vd), 0);
    EXPECT_EQ(api.acldvppDestroyStreamDesc(sd), 0);
    EXPECT_EQ(api.acldvppFree(a), 0);
}

TEST_P(SimDvpp, CpuTouchOfDvppMemoryCrashesOnlyInHostRunMode) {
    start();
    Buffer buf(api, rt, 256);
    if (host_mode()) {
        // A PCIe card's DVPP memory is not the CPU's: the simulator makes the mistake a crash.
        EXPECT_DEATH({ static_cast<volatile char*>(buf.p)[0] = 1; }, "");
    } else {
        static_cast<volatile char*>(buf.p)[0] = 42;
        char back = 0;
        ASSERT_EQ(rt.aclrtMemcpy(&back, 1, buf.p, 1, acl::kMemcpyD2H), 0);
        EXPECT_EQ(back, 42);
    }
}

INSTANTIATE_TEST_SUITE_P(Sim, SimDvpp, testing::ValuesIn(kes_test::kSimBoards), kes_test::sim_board_name);
INSTANTIATE_TEST_SUITE_P(Sim, SimVdec, testing::ValuesIn(kes_test::kSimBoards), kes_test::sim_board_name);
