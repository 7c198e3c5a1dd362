// VPC crop + resize on NV12/NV21 (spec §2.3). The 310B doc promises results identical to OpenCV 3.4.2
// cv::resize INTER_LINEAR / INTER_NEAREST; this is OpenCV's scalar fixed-point algorithm written out
// (11-bit weights, half-pixel centres, edge clamping, and the 2× downscale that OpenCV turns into
// INTER_AREA), applied to the luma plane and to the interleaved chroma plane as a 2-channel image.
#include <cmath>
#include <cstring>
#include <vector>

#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"

namespace kes {
namespace {

constexpr int kCoefBits = 11;  // OpenCV INTER_RESIZE_COEF_BITS
constexpr int kCoefScale = 1 << kCoefBits;

struct PlaneView {
    const uint8_t* data;
    size_t stride;
    uint32_t w, h;  // in pixels (a chroma "pixel" is a U/V pair)
};

// OpenCV's per-axis tables: first source index and the two weights (sum kCoefScale).
void linear_table(uint32_t src, uint32_t dst, std::vector<int>* index, std::vector<int16_t>* weight) {
    const double scale = 1.0 / (double(dst) / double(src));  // as OpenCV: 1/inv_scale (may differ by 1 ulp)
    index->resize(dst);
    weight->resize(size_t(dst) * 2);
    for (uint32_t d = 0; d < dst; ++d) {
        float f = float((d + 0.5) * scale - 0.5);
        int s = int(std::floor(f));
        f -= float(s);
        if (s < 0) {
            f = 0;
            s = 0;
        }
        if (s >= int(src) - 1) {
            f = 0;
            s = int(src) - 1;
        }
        (*index)[d] = s;
        // saturate_cast<short>(x * 2048) rounds to nearest, as cvRound does.
        const int16_t w1 = int16_t(std::lrint(f * kCoefScale));
        const int16_t w0 = int16_t(std::lrint((1.f - f) * kCoefScale));
        (*weight)[2 * d] = w0;
        (*weight)[2 * d + 1] = w1;
    }
}

void resize_bilinear(const PlaneView& src, uint32_t cn, uint8_t* dst, size_t dst_stride, uint32_t dw, uint32_t dh) {
    if (src.w == dw * 2 && src.h == dh * 2) {
        // OpenCV: INTER_LINEAR with an exact 2×2 downscale runs INTER_AREA's fast path.
        for (uint32_t y = 0; y < dh; ++y) {
            const uint8_t* s0 = src.data + size_t(2 * y) * src.stride;
            const uint8_t* s1 = s0 + src.stride;
            uint8_t* d = dst + size_t(y) * dst_stride;
            for (uint32_t x = 0; x < dw; ++x)
                for (uint32_t c = 0; c < cn; ++c) {
                    const size_t a = size_t(2 * x) * cn + c, b = a + cn;
                    const uint32_t sum = s0[a] + s0[b] + s1[a] + s1[b];
                    uint32_t v = (sum + 2) >> 2;
                    // OpenCV's fast 2× area path covers 1, 3 and 4 channels; 2-channel images take the
                    // generic one, saturate_cast(sum · 0.25) = round half to even (UNCONFIRMED: not
                    // compared against a real OpenCV 3.4.2 build).
                    if (cn == 2 && (sum & 3) == 2 && ((sum >> 2) & 1) == 0) v = sum >> 2;
                    d[size_t(x) * cn + c] = uint8_t(v);
                }
        }
        return;
    }
    std::vector<int> xi, yi;
    std::vector<int16_t> xw, yw;
    linear_table(src.w, dw, &xi, &xw);
    linear_table(src.h, dh, &yi, &yw);
    const size_t row_len = size_t(dw) * cn;
    std::vector<int> r0(row_len), r1(row_len);
    auto hresize = [&](uint32_t sy, int* out) {
        const uint8_t* s = src.data + size_t(sy) * src.stride;
        for (uint32_t x = 0; x < dw; ++x) {
            const int sx = xi[x];
            const int sx1 = sx + 1 < int(src.w) ? sx + 1 : sx;
            for (uint32_t c = 0; c < cn; ++c)
                out[size_t(x) * cn + c] = s[size_t(sx) * cn + c] * xw[2 * x] + s[size_t(sx1) * cn + c] * xw[2 * x + 1];
        }
    };
    for (uint32_t y = 0; y < dh; ++y) {
        const uint32_t sy = uint32_t(yi[y]);
        const uint32_t sy1 = sy + 1 < src.h ? sy + 1 : sy;
        hresize(sy, r0.data());
        hresize(sy1, r1.data());
        const int b0 = yw[2 * y], b1 = yw[2 * y + 1];
        uint8_t* d = dst + size_t(y) * dst_stride;
        for (size_t i = 0; i < row_len; ++i) {
            // FixedPtCast<int, uchar, 22>: round, shift, saturate.
            const int v = (r0[i] * b0 + r1[i] * b1 + (1 << (2 * kCoefBits - 1))) >> (2 * kCoefBits);
            d[i] = uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}

void resize_nearest(const PlaneView& src, uint32_t cn, uint8_t* dst, size_t dst_stride, uint32_t dw, uint32_t dh) {
    const double fx = 1.0 / (double(dw) / src.w), fy = 1.0 / (double(dh) / src.h);  // OpenCV's ifx, ify
    std::vector<uint32_t> xs(dw);
    for (uint32_t x = 0; x < dw; ++x) {
        const uint32_t sx = uint32_t(std::floor(x * fx));
        xs[x] = sx < src.w - 1 ? sx : src.w - 1;
    }
    for (uint32_t y = 0; y < dh; ++y) {
        uint32_t sy = uint32_t(std::floor(y * fy));
        if (sy > src.h - 1) sy = src.h - 1;
        const uint8_t* s = src.data + size_t(sy) * src.stride;
        uint8_t* d = dst + size_t(y) * dst_stride;
        for (uint32_t x = 0; x < dw; ++x) std::memcpy(d + size_t(x) * cn, s + size_t(xs[x]) * cn, cn);
    }
}

void check_scale(uint32_t in, uint32_t out, const kes_board_profile& b, const char* axis) {
    // out/in within [1/den, max] ⇔ out·den ≥ in and out ≤ in·max (exact in integers).
    KES_REQUIRE(uint64_t(out) * b.vpc_scale_min_den >= in && uint64_t(out) <= uint64_t(in) * b.vpc_scale_max,
                "VPC %s scale %u -> %u is outside [1/%u, %u] on the %s profile (spec §2.3)", axis, in, out,
                b.vpc_scale_min_den, b.vpc_scale_max, b.name);
}

}  // namespace
}  // namespace kes

extern "C" kes_status kes_vpc_crop_resize(kes_dvpp_channel* channel, const kes_image* in, const kes_vpc_roi* roi,
                                          uint32_t out_width, uint32_t out_height, kes_vpc_interp interp,
                                          kes_mem_pool* pool, kes_image* out_image) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "vpc_crop_resize");
        KES_REQUIRE_NOT_NULL(out_image);
        std::memset(out_image, 0, sizeof *out_image);
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(in);
        kes::check_sdk(kes_image_validate(in), "input image");
        const kes_board_profile& b = channel->profile;
        const int64_t mode = kes::enum_value(interp);
        if (mode == 3 || mode == 4)
            KES_FAIL(KES_ERR_UNSUPPORTED, "TensorFlow-like interpolation (%lld) is not implemented",
                     static_cast<long long>(mode));
        KES_REQUIRE(mode >= 0 && mode <= 2, "interpolation must be 0 (default), 1 (bilinear) or 2 (nearest) (got %lld)",
                    static_cast<long long>(mode));
        const int64_t fmt = kes::enum_value(in->format);
        if (fmt != KES_PIXEL_NV12 && fmt != KES_PIXEL_NV21)
            KES_FAIL(KES_ERR_UNSUPPORTED, "VPC input %s: only NV12/NV21 in this release",
                     kes_pixel_format_name(in->format));
        // spec §2.3: VPC silently rounds odd input sizes down to even.
        const uint32_t iw = in->width & ~1u, ih = in->height & ~1u;
        KES_REQUIRE(iw >= b.vpc_min_width && ih >= b.vpc_min_height && iw <= b.vpc_max_input_dim_nv12 &&
                        ih <= b.vpc_max_input_dim_nv12,
                    "VPC input %ux%u is outside %ux%u..%u per side on the %s profile (spec §2.3)", iw, ih,
                    b.vpc_min_width, b.vpc_min_height, b.vpc_max_input_dim_nv12, b.name);
        kes_vpc_roi r = {0, 0, iw - 1, ih - 1};
        if (roi) r = *roi;
        KES_REQUIRE(r.left <= r.right && r.top <= r.bottom && r.right < iw && r.bottom < ih,
                    "crop ROI (left %u, top %u, right %u, bottom %u; inclusive) must lie inside the %ux%u image",
                    r.left, r.top, r.right, r.bottom, iw, ih);
        if (b.vpc_roi_parity) {
            KES_REQUIRE(r.left % 2 == 0 && r.top % 2 == 0,
                        "crop ROI left=%u top=%u must be even on the %s profile (spec §2.3)", r.left, r.top, b.name);
            KES_REQUIRE(r.right % 2 == 1 && r.bottom % 2 == 1,
                        "crop ROI right=%u bottom=%u must be odd on the %s profile (spec §2.3)", r.right, r.bottom,
                        b.name);
        }
        const uint32_t cw = r.right - r.left + 1, chh = r.bottom - r.top + 1;
        KES_REQUIRE(out_width % 2 == 0 && out_height % 2 == 0, "VPC %s output size must be even (got %ux%u, spec §2.3)",
                    kes_pixel_format_name(in->format), out_width, out_height);
        KES_REQUIRE(out_width >= b.vpc_min_width && out_height >= b.vpc_min_height &&
                        out_width <= b.vpc_max_output_width && out_height <= b.vpc_max_output_height,
                    "VPC output %ux%u is outside %ux%u..%ux%u on the %s profile (spec §2.3)", out_width, out_height,
                    b.vpc_min_width, b.vpc_min_height, b.vpc_max_output_width, b.vpc_max_output_height, b.name);
        kes::check_scale(cw, out_width, b, "width");
        kes::check_scale(chh, out_height, b, "height");

        uint32_t ws = 0, hs = 0;
        kes::check_sdk(kes_image_strides(in->format, out_width, out_height, KES_STRIDE_VPC, b.board, &ws, &hs),
                       "VPC output strides");
        kes::check_sdk(
            kes_image_alloc(out_image, kes::output_pool(channel, pool), in->format, out_width, out_height, ws, hs),
            "VPC output allocation");
        kes::ImageGuard guard(out_image);
        kes_image_plane iy, ic, oy, oc;
        kes::check_sdk(kes_image_get_plane(in, 0, &iy), "input luma");
        kes::check_sdk(kes_image_get_plane(in, 1, &ic), "input chroma");
        kes::check_sdk(kes_image_get_plane(out_image, 0, &oy), "output luma");
        kes::check_sdk(kes_image_get_plane(out_image, 1, &oc), "output chroma");
        // Chroma ROI: the pairs under the luma ROI (exact when the 310 parity holds).
        const uint32_t cl = r.left / 2, ct = r.top / 2, cr = r.right / 2, cb = r.bottom / 2;
        const kes::PlaneView ysrc{iy.data + size_t(r.top) * iy.stride + r.left, iy.stride, cw, chh};
        const kes::PlaneView csrc{ic.data + size_t(ct) * ic.stride + size_t(cl) * 2, ic.stride, cr - cl + 1,
                                  cb - ct + 1};
        auto run = mode == KES_VPC_INTERP_NEAREST ? kes::resize_nearest : kes::resize_bilinear;
        run(ysrc, 1, oy.data, oy.stride, out_width, out_height);
        run(csrc, 2, oc.data, oc.stride, out_width / 2, out_height / 2);
        guard.disarm();
        return KES_OK;
    });
}
