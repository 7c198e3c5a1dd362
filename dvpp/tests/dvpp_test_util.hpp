// Helpers for the dvpp tests: synthetic images, JPEGs made with TurboJPEG, EXIF segments, RAII.
#pragma once

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kestrel/dvpp.h"
#include "kestrel/trace.h"

namespace kes_test {

// Smooth RGB gradient with a little structure, so subsampling and orientation errors show.
inline std::vector<uint8_t> make_rgb(int w, int h) {
    std::vector<uint8_t> rgb(size_t(w) * h * 3);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
            p[0] = uint8_t(x * 255 / (w > 1 ? w - 1 : 1));
            p[1] = uint8_t(y * 255 / (h > 1 ? h - 1 : 1));
            p[2] = uint8_t(128 + 100 * std::sin(x * 0.2) * std::cos(y * 0.15));
        }
    return rgb;
}

inline std::vector<uint8_t> encode_jpeg(int w, int h, int tjsamp, int quality = 90, int flags = 0,
                                        int pixel_format = TJPF_RGB) {
    std::vector<uint8_t> src;
    if (pixel_format == TJPF_CMYK) {
        const std::vector<uint8_t> rgb = make_rgb(w, h);
        src.resize(size_t(w) * h * 4);
        for (size_t i = 0; i < size_t(w) * h; ++i) {
            for (int c = 0; c < 3; ++c) src[4 * i + c] = rgb[3 * i + c];
            src[4 * i + 3] = 200;
        }
    } else {
        src = make_rgb(w, h);
    }
    tjhandle h_ = tjInitCompress();
    unsigned char* out = nullptr;
    unsigned long size = 0;
    const int rc = tjCompress2(h_, src.data(), w, 0, h, pixel_format, &out, &size, tjsamp, quality, flags);
    EXPECT_EQ(rc, 0) << tjGetErrorStr2(h_);
    std::vector<uint8_t> jpeg(out, out + size);
    tjFree(out);
    tjDestroy(h_);
    return jpeg;
}

// An APP1 Exif segment with one IFD0 entry: Orientation (0x0112, SHORT, 1) = orientation.
inline std::vector<uint8_t> exif_segment(uint16_t orientation, bool big_endian) {
    std::vector<uint8_t> tiff;
    auto u16 = [&](uint16_t v) {
        if (big_endian) {
            tiff.push_back(uint8_t(v >> 8));
            tiff.push_back(uint8_t(v));
        } else {
            tiff.push_back(uint8_t(v));
            tiff.push_back(uint8_t(v >> 8));
        }
    };
    auto u32 = [&](uint32_t v) {
        if (big_endian) {
            u16(uint16_t(v >> 16));
            u16(uint16_t(v));
        } else {
            u16(uint16_t(v));
            u16(uint16_t(v >> 16));
        }
    };
    tiff.push_back(big_endian ? 'M' : 'I');
    tiff.push_back(big_endian ? 'M' : 'I');
    u16(42);
    u32(8);  // IFD0 right after the header
    u16(1);  // one entry
    u16(0x0112);
    u16(3);
    u32(1);
    u16(orientation);
    u16(0);
    u32(0);  // no next IFD
    // push_back rather than insert: GCC 12 raises a false -Warray-bounds on vector::insert here.
    std::vector<uint8_t> seg;
    seg.reserve(10 + tiff.size());
    static const uint8_t kHead[10] = {0xFF, 0xE1, 0, 0, 'E', 'x', 'i', 'f', 0, 0};
    for (uint8_t b : kHead) seg.push_back(b);
    for (uint8_t b : tiff) seg.push_back(b);
    const size_t len = seg.size() - 2;
    seg[2] = uint8_t(len >> 8);
    seg[3] = uint8_t(len);
    return seg;
}

inline std::vector<uint8_t> with_exif(const std::vector<uint8_t>& jpeg, uint16_t orientation, bool big_endian = false) {
    std::vector<uint8_t> out(jpeg.begin(), jpeg.begin() + 2);
    const std::vector<uint8_t> seg = exif_segment(orientation, big_endian);
    out.insert(out.end(), seg.begin(), seg.end());
    out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
    return out;
}

// Reference planes from TurboJPEG itself (tight strides).
struct RefPlanes {
    int w = 0, h = 0, cw = 0, ch = 0, samp = 0;
    std::vector<uint8_t> y, u, v;
};
inline RefPlanes ref_planes(const std::vector<uint8_t>& jpeg, int w = 0, int h = 0) {
    RefPlanes r;
    tjhandle d = tjInitDecompress();
    int jw, jh, samp, cs;
    EXPECT_EQ(tjDecompressHeader3(d, jpeg.data(), jpeg.size(), &jw, &jh, &samp, &cs), 0);
    r.w = w ? w : jw;
    r.h = h ? h : jh;
    r.samp = samp;
    // TurboJPEG pads the luma plane to whole chroma samples (tjPlaneWidth(0, ...)): decode padded,
    // keep w × h.
    const int yw = tjPlaneWidth(0, r.w, samp), yh = tjPlaneHeight(0, r.h, samp);
    std::vector<uint8_t> ypad(size_t(yw) * yh);
    unsigned char* planes[3] = {ypad.data(), nullptr, nullptr};
    int strides[3] = {yw, 0, 0};
    if (samp != TJSAMP_GRAY) {
        r.cw = tjPlaneWidth(1, r.w, samp);
        r.ch = tjPlaneHeight(1, r.h, samp);
        r.u.resize(size_t(r.cw) * r.ch);
        r.v.resize(r.u.size());
        planes[1] = r.u.data();
        planes[2] = r.v.data();
        strides[1] = strides[2] = r.cw;
    }
    EXPECT_EQ(tjDecompressToYUVPlanes(d, jpeg.data(), jpeg.size(), planes, r.w, strides, r.h, 0), 0)
        << tjGetErrorStr2(d);
    tjDestroy(d);
    r.y.resize(size_t(r.w) * r.h);
    for (int y = 0; y < r.h; ++y) std::memcpy(&r.y[size_t(y) * r.w], &ypad[size_t(y) * yw], size_t(r.w));
    return r;
}

class Channel {
public:
    explicit Channel(kes_board board = KES_BOARD_HOST, uint32_t strict = 0, kes_mem_pool* pool = nullptr) {
        kes_dvpp_channel_config cfg;
        kes_dvpp_channel_config_init(&cfg);
        cfg.board_profile = kes_board_get_profile(board);
        cfg.strict = strict;
        cfg.pool = pool;
        EXPECT_EQ(kes_dvpp_channel_create(&cfg, &ch_), KES_OK) << kes_last_error();
    }
    explicit Channel(const kes_dvpp_channel_config& cfg) {
        EXPECT_EQ(kes_dvpp_channel_create(&cfg, &ch_), KES_OK) << kes_last_error();
    }
    ~Channel() { kes_dvpp_channel_destroy(ch_); }
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;
    kes_dvpp_channel* get() const { return ch_; }

private:
    kes_dvpp_channel* ch_ = nullptr;
};

struct Image : kes_image {
    Image() { std::memset(static_cast<kes_image*>(this), 0, sizeof(kes_image)); }
    ~Image() { kes_image_release(this); }
    Image(const Image&) = delete;
    Image& operator=(const Image&) = delete;
    const uint8_t* row(uint32_t plane, uint32_t r) const {
        kes_image_plane p;
        EXPECT_EQ(kes_image_get_plane(this, plane, &p), KES_OK);
        return p.data + size_t(r) * p.stride;
    }
};

inline double psnr(const uint8_t* a, size_t a_stride, const uint8_t* b, size_t b_stride, int w, int h) {
    double se = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double d = double(a[y * a_stride + x]) - double(b[y * b_stride + x]);
            se += d * d;
        }
    const double mse = se / (double(w) * h);
    return mse == 0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
}

// Runs `body` while tracing to a file and returns the file's text (empty if tracing failed).
template <class Body>
std::string traced(const std::string& name, Body&& body) {
    const std::string path = std::string(KES_TEST_TMPDIR) + "/" + name + ".trace.json";
    std::remove(path.c_str());
    EXPECT_EQ(kes_trace_start(path.c_str()), KES_OK) << kes_last_error();
    body();
    EXPECT_EQ(kes_trace_stop(), KES_OK) << kes_last_error();
    std::string text;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
        char buf[4096];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
        std::fclose(f);
    }
    return text;
}

// Whether a trace's text holds a dvpp span called `name`.
inline bool has_dvpp_span(const std::string& trace, const char* name) {
    return trace.find(std::string("\"name\":\"") + name + "\",\"cat\":\"dvpp\"") != std::string::npos;
}

}  // namespace kes_test
