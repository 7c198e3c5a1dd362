// align.cpp — kes_detect_align_similarity / kes_detect_align_face: a face's keypoints onto ArcFace's
// 112×112 template, and the warp that makes the embedder's input (moved here from samples/face-search,
// so that an app need not copy it: the same arithmetic, so face-search's cosines are unchanged).
#include <cmath>
#include <cstring>

#include "detect.hpp"
#include "kes/error.hpp"

namespace kes {
namespace detect {
namespace {

// insightface's arcface_dst for BlazeFace's keypoints 0..3 (the two mouth corners as their mean).
constexpr float kTemplate[4][2] = {{38.2946f, 51.6963f},   // eye on the image's left (BlazeFace keypoint 0)
                                   {73.5318f, 51.5014f},   // eye on the image's right (keypoint 1)
                                   {56.0252f, 71.7366f},   // nose tip
                                   {56.1396f, 92.2848f}};  // mouth centre

// Least squares over q ≈ [a −b; b a]·p + t (Umeyama's closed form without reflection or scale split).
kes_detect_similarity fit(const kes_detection& f) {
    KES_REQUIRE(f.num_keypoints >= 4,
                "the face has %u keypoints; alignment needs 4 (eyes, nose, mouth: BlazeFace's 0..3)", f.num_keypoints);
    for (int i = 0; i < 4; ++i)
        KES_REQUIRE(std::isfinite(f.keypoints[i][0]) && std::isfinite(f.keypoints[i][1]), "keypoint %d is not finite",
                    i);
    float pm[2] = {0, 0}, qm[2] = {0, 0};
    for (int i = 0; i < 4; ++i)
        for (int c = 0; c < 2; ++c) pm[c] += f.keypoints[i][c] / 4, qm[c] += kTemplate[i][c] / 4;
    float num_a = 0, num_b = 0, den = 0;
    for (int i = 0; i < 4; ++i) {
        const float px = f.keypoints[i][0] - pm[0], py = f.keypoints[i][1] - pm[1];
        const float qx = kTemplate[i][0] - qm[0], qy = kTemplate[i][1] - qm[1];
        num_a += px * qx + py * qy;
        num_b += px * qy - py * qx;
        den += px * px + py * py;
    }
    KES_REQUIRE(den >= 1e-3f, "the face's keypoints 0..3 lie within %g px of one point: no face to align",
                static_cast<double>(std::sqrt(den)));
    const float a = num_a / den, b = num_b / den;
    KES_REQUIRE(a * a + b * b >= 1e-8f, "the face's keypoints give a degenerate (zero-scale) transform");
    return {a, b, qm[0] - (a * pm[0] - b * pm[1]), qm[1] - (b * pm[0] + a * pm[1])};
}

// Bilinear sample of channel `channel` of `step`-byte pixels, the coordinate clamped to the plane.
float sample(const uint8_t* plane, uint32_t stride, uint32_t w, uint32_t h, float x, float y, int step, int channel) {
    if (x < 0) x = 0;
    if (y < 0) y = 0;
    if (x > static_cast<float>(w - 1)) x = static_cast<float>(w - 1);
    if (y > static_cast<float>(h - 1)) y = static_cast<float>(h - 1);
    const uint32_t x0 = static_cast<uint32_t>(x), y0 = static_cast<uint32_t>(y);
    const uint32_t x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
    const float fx = x - static_cast<float>(x0), fy = y - static_cast<float>(y0);
    const uint8_t* r0 = plane + static_cast<size_t>(y0) * stride;
    const uint8_t* r1 = plane + static_cast<size_t>(y1) * stride;
    const float top = r0[x0 * step + channel] * (1 - fx) + r0[x1 * step + channel] * fx;
    const float bottom = r1[x0 * step + channel] * (1 - fx) + r1[x1 * step + channel] * fx;
    return top * (1 - fy) + bottom * fy;
}

void warp(const kes_detect_similarity& t, const kes_image& src, kes_image& out) {
    const float a = t.a, b = t.b, tx = t.tx, ty = t.ty, norm = a * a + b * b;
    const uint8_t* y_src = static_cast<const uint8_t*>(src.data);
    const uint8_t* uv_src = y_src + static_cast<size_t>(src.width_stride) * src.height_stride;
    uint8_t* y_dst = static_cast<uint8_t*>(out.data);
    uint8_t* uv_dst = y_dst + static_cast<size_t>(out.width_stride) * out.height_stride;
    const uint32_t ws = out.width_stride;
    // Inverse map: p = A⁻¹(q − t), A⁻¹ = [a b; −b a] / (a² + b²).
    for (uint32_t v = 0; v < KES_DETECT_ALIGN_SIZE; ++v)
        for (uint32_t u = 0; u < KES_DETECT_ALIGN_SIZE; ++u) {
            const float qx = static_cast<float>(u) - tx, qy = static_cast<float>(v) - ty;
            const float x = (a * qx + b * qy) / norm, y = (-b * qx + a * qy) / norm;
            y_dst[static_cast<size_t>(v) * ws + u] =
                static_cast<uint8_t>(sample(y_src, src.width_stride, src.width, src.height, x, y, 1, 0) + 0.5f);
            if ((u & 1) == 0 && (v & 1) == 0) {
                // Chroma sits at even luma positions (MPEG-2 siting): sample at half the luma coordinate.
                for (int c = 0; c < 2; ++c)
                    uv_dst[static_cast<size_t>(v / 2) * ws + u + c] =
                        static_cast<uint8_t>(sample(uv_src, src.width_stride, (src.width + 1) / 2, (src.height + 1) / 2,
                                                    x / 2, y / 2, 2, c) +
                                             0.5f);
            }
        }
}

}  // namespace
}  // namespace detect
}  // namespace kes

extern "C" {

kes_status kes_detect_align_similarity(const kes_detection* face, kes_detect_similarity* out_transform) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(face);
        KES_REQUIRE_NOT_NULL(out_transform);
        *out_transform = kes::detect::fit(*face);
        return KES_OK;
    });
}

kes_status kes_detect_align_face(const kes_detection* face, const kes_image* source, kes_mem_pool* pool,
                                 kes_image* out_face) {
    if (out_face) std::memset(out_face, 0, sizeof *out_face);
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(face);
        KES_REQUIRE_NOT_NULL(source);
        KES_REQUIRE_NOT_NULL(out_face);
        const kes_detect_similarity t = kes::detect::fit(*face);
        if (kes_image_validate(source) != KES_OK) KES_FAIL(KES_ERR_INVALID_ARGUMENT, "source: %s", kes_last_error());
        const int32_t format = kes::detect::enum_bits(source->format);
        if (format != KES_PIXEL_NV12 && format != KES_PIXEL_NV21)
            KES_FAIL(KES_ERR_UNSUPPORTED, "source is %s; alignment takes NV12 or NV21 (what JPEGD, VDEC and VPC give)",
                     kes_pixel_format_name(source->format));
        const kes_mem_backend where = kes_image_memory(source);
        if (kes_mem_is_host_accessible(where) == 0)
            KES_FAIL(KES_ERR_UNSUPPORTED,
                     "source lives in %s memory the CPU cannot read (a PCIe card, ACL_HOST run mode), and alignment "
                     "runs on the CPU (VPC has no affine warp): decode into a host pool (kes_dvpp_channel_config.pool)",
                     where == KES_MEM_DVPP ? "DVPP" : "device");
        uint32_t ws = 0, hs = 0;
        kes_image out;
        if (kes_image_strides(source->format, KES_DETECT_ALIGN_SIZE, KES_DETECT_ALIGN_SIZE, KES_STRIDE_VPC,
                              kes_board_get(), &ws, &hs) != KES_OK ||
            kes_image_alloc(&out, pool, source->format, KES_DETECT_ALIGN_SIZE, KES_DETECT_ALIGN_SIZE, ws, hs) != KES_OK)
            KES_FAIL(kes_last_status(), "the aligned face's image: %s", kes_last_error());
        kes::detect::warp(t, *source, out);
        *out_face = out;
        return KES_OK;
    });
}

}  // extern "C"
