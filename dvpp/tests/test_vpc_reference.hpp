// A plain per-pixel statement of OpenCV 4.6 cv::resize (8-bit, INTER_LINEAR / INTER_NEAREST) for the
// VPC tests: the module's table-driven, vectorised resize must match it everywhere (also on the
// emulated board, where OpenCV is absent), and on the host it is itself checked against cv::resize.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kes_test {

struct RefPlane {
    uint32_t w = 0, h = 0, cn = 1;
    std::vector<uint8_t> px;  // tight rows of w·cn bytes
    uint8_t at(uint32_t x, uint32_t y, uint32_t c) const { return px[(size_t(y) * w + x) * cn + c]; }
};

inline RefPlane random_plane(uint32_t w, uint32_t h, uint32_t cn, uint32_t seed) {
    RefPlane p{w, h, cn, std::vector<uint8_t>(size_t(w) * h * cn)};
    std::mt19937 rng(seed);
    // Mix of noise and smooth ramps: noise exercises every rounding, ramps the edge clamping.
    for (size_t i = 0; i < p.px.size(); ++i) p.px[i] = uint8_t(i % 7 == 0 ? (i * 3) & 255 : rng() & 255);
    return p;
}

inline RefPlane ref_resize_nearest(const RefPlane& s, uint32_t dw, uint32_t dh) {
    RefPlane d{dw, dh, s.cn, std::vector<uint8_t>(size_t(dw) * dh * s.cn)};
    const double ifx = 1.0 / (double(dw) / s.w), ify = 1.0 / (double(dh) / s.h);
    for (uint32_t y = 0; y < dh; ++y)
        for (uint32_t x = 0; x < dw; ++x) {
            const uint32_t sx = std::min(uint32_t(std::floor(x * ifx)), s.w - 1);
            const uint32_t sy = std::min(uint32_t(std::floor(y * ify)), s.h - 1);
            for (uint32_t c = 0; c < s.cn; ++c) d.px[(size_t(y) * dw + x) * s.cn + c] = s.at(sx, sy, c);
        }
    return d;
}

inline RefPlane ref_resize_linear(const RefPlane& s, uint32_t dw, uint32_t dh) {
    RefPlane d{dw, dh, s.cn, std::vector<uint8_t>(size_t(dw) * dh * s.cn)};
    const uint32_t cn = s.cn;
    if (dw == s.w && dh == s.h) return s;
    if (s.w == 2 * dw && s.h == 2 * dh) {  // INTER_AREA fast path
        for (uint32_t y = 0; y < dh; ++y)
            for (uint32_t x = 0; x < dw; ++x)
                for (uint32_t c = 0; c < cn; ++c) {
                    const int sum = s.at(2 * x, 2 * y, c) + s.at(2 * x + 1, 2 * y, c) + s.at(2 * x, 2 * y + 1, c) +
                                    s.at(2 * x + 1, 2 * y + 1, c);
                    d.px[(size_t(y) * dw + x) * cn + c] =
                        uint8_t(cn == 2 ? int(std::nearbyint(sum * 0.25f)) : (sum + 2) >> 2);
                }
        return d;
    }
    struct W {
        int i;
        int w0, w1;
    };
    auto coord = [](uint32_t dd, uint32_t sn, uint32_t dn) {
        const double scale = 1.0 / (double(dn) / double(sn));
        float f = float((dd + 0.5) * scale - 0.5);
        const int i = int(std::floor(f));
        f -= float(i);
        return W{i, int(std::lrint((1.f - f) * 2048)), int(std::lrint(f * 2048))};
    };
    const size_t row = size_t(dw) * cn;
    for (uint32_t y = 0; y < dh; ++y) {
        const W wy = coord(y, s.h, dh);
        const uint32_t r0 = uint32_t(std::clamp(wy.i, 0, int(s.h) - 1));
        const uint32_t r1 = uint32_t(std::clamp(wy.i + 1, 0, int(s.h) - 1));
        for (uint32_t x = 0; x < dw; ++x) {
            W wx = coord(x, s.w, dw);
            if (wx.i < 0) wx = {0, 2048, 0};
            if (wx.i >= int(s.w) - 1) wx = {int(s.w) - 1, 2048, 0};
            const uint32_t x0 = uint32_t(wx.i), x1 = std::min(x0 + 1, s.w - 1);
            for (uint32_t c = 0; c < cn; ++c) {
                const int h0 = s.at(x0, r0, c) * wx.w0 + s.at(x1, r0, c) * wx.w1;
                const int h1 = s.at(x0, r1, c) * wx.w0 + s.at(x1, r1, c) * wx.w1;
                // OpenCV's vectorised vertical step (it covers the whole row, tails included).
                const int v = ((((h0 >> 4) * wy.w0) >> 16) + (((h1 >> 4) * wy.w1) >> 16) + 2) >> 2;
                d.px[size_t(y) * row + size_t(x) * cn + c] = uint8_t(std::clamp(v, 0, 255));
            }
        }
    }
    return d;
}

}  // namespace kes_test
