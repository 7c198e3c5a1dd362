// JPEGE on the host (BOARD-RULES §JPEGE): NV12/NV21 or packed 4:2:2 (YUYV/UYVY/YVYU/VYUY) in with the board's
// input-stride rules, baseline Huffman JPEG out through TurboJPEG (4:2:0 from NV12/NV21, 4:2:2 from
// packed input: the subsampling of the input, nothing thrown away), and the board's PredictEncSize.
#include <cstring>
#include <vector>

#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"

namespace kes {
namespace {

constexpr size_t kPredictRound = size_t(2) << 20;  // BOARD-RULES §JPEGE: rounded up to 2 MiB
constexpr size_t kPredictHeader = 640 + 128;       // BOARD-RULES §JPEGE: header + 128

bool is_packed422(int64_t f) {
    return f == KES_PIXEL_YUYV422 || f == KES_PIXEL_UYVY422 || f == KES_PIXEL_YVYU422 || f == KES_PIXEL_VYUY422;
}

void check_input(const kes_dvpp_channel* ch, const kes_image* image) {
    KES_REQUIRE_NOT_NULL(image);
    check_sdk(kes_image_validate(image), "input image");
    const int64_t f = enum_value(image->format);
    KES_REQUIRE(f == KES_PIXEL_NV12 || f == KES_PIXEL_NV21 || is_packed422(f),
                "JPEGE input must be NV12, NV21 or packed YUYV/UYVY/YVYU/VYUY 4:2:2 (got %s)",
                kes_pixel_format_name(image->format));
    const kes_board_profile& b = ch->profile;
    if (is_packed422(f))
        KES_REQUIRE(image->width % 2 == 0,
                    "JPEGE packed 4:2:2 input width must be even (docs/BOARD-RULES.md §JPEGE; got %u)", image->width);
    else
        KES_REQUIRE(image->width % 2 == 0 && image->height % 2 == 0,
                    "JPEGE input width and height must be even (docs/BOARD-RULES.md §JPEGE; got %ux%u)", image->width,
                    image->height);
    KES_REQUIRE(image->width >= b.jpege_min_dim && image->height >= b.jpege_min_dim &&
                    image->width <= b.jpege_max_dim && image->height <= b.jpege_max_dim,
                "JPEGE input %ux%u is outside %u..%u per side on the %s profile (docs/BOARD-RULES.md §JPEGE)",
                image->width, image->height, b.jpege_min_dim, b.jpege_max_dim, b.name);
    // width_stride is in bytes: NV12's align16(w) and packed 4:2:2's align16(2w) are the same rule.
    KES_REQUIRE(b.jpege_width_align <= 1 || image->width_stride % b.jpege_width_align == 0,
                "JPEGE input width_stride must be a multiple of %u bytes on the %s profile "
                "(docs/BOARD-RULES.md §JPEGE: align16(w) for NV12/NV21, align16(2w) for packed 4:2:2; got %u)",
                b.jpege_width_align, b.name, image->width_stride);
    KES_REQUIRE(image->height_stride >= image->height, "JPEGE input height_stride %u < height %u", image->height_stride,
                image->height);
}

size_t predict(const kes_dvpp_channel* ch, const kes_image* image) {
    check_input(ch, image);
    size_t bytes = 0;
    check_sdk(kes_image_buffer_size(image->format, image->width_stride, image->height_stride, &bytes), "input size");
    size_t total = 0;
    KES_REQUIRE(checked_add(bytes, kPredictHeader, &total), "predicted size overflows");
    return size_t(round_up(total, kPredictRound));
}

}  // namespace
}  // namespace kes

extern "C" {

kes_status kes_jpeg_predict_encode_size(kes_dvpp_channel* channel, const kes_image* image, size_t* out_size) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(out_size);
        *out_size = 0;
        *out_size = kes::predict(channel, image);
        return KES_OK;
    });
}

kes_status kes_jpeg_encode(kes_dvpp_channel* channel, const kes_image* image, uint32_t quality, void* out,
                           size_t capacity, size_t* out_size) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "jpeg_encode");
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(out_size);
        *out_size = 0;
        KES_REQUIRE(out != nullptr || capacity == 0, "out is NULL");
        KES_REQUIRE(quality >= 1 && quality <= 100, "quality must be 1..100 (got %u)", quality);
        kes::check_input(channel, image);
        if (kes::served_by_hardware(channel, "JPEG encode", [&](kes::AscendDvpp& hw) {
                return kes::jpeg_encode_hw(hw, *image, quality, out, capacity, out_size);
            }))
            return KES_OK;
        kes::require_cpu_access(*image, "the image to encode");
        if (!channel->encoder) {
            channel->encoder.reset(tjInitCompress());
            if (!channel->encoder)
                KES_FAIL(KES_ERR_OUT_OF_MEMORY, "tjInitCompress failed: %s", tjGetErrorStr2(nullptr));
        }
        tjhandle h = channel->encoder.get();
        // TurboJPEG takes planar chroma: split the interleaved UV (or VU) rows, or the packed macropixels.
        const int64_t f = kes::enum_value(image->format);
        const bool packed = kes::is_packed422(f);
        const uint32_t cw = image->width / 2, ch = packed ? image->height : image->height / 2;
        std::vector<uint8_t> y_plane, u(size_t(cw) * ch), v(u.size());
        kes_image_plane p0;
        kes::check_sdk(kes_image_get_plane(image, 0, &p0), "input plane 0");
        const unsigned char* y_data = p0.data;
        int y_stride = int(p0.stride);
        if (packed) {
            // Byte offsets of Y0, Y1, U, V in each 4-byte macropixel.
            struct Order {
                int y, u, v;
            };
            const Order o = f == KES_PIXEL_UYVY422   ? Order{1, 0, 2}
                            : f == KES_PIXEL_YVYU422 ? Order{0, 3, 1}
                            : f == KES_PIXEL_VYUY422 ? Order{1, 2, 0}
                                                     : Order{0, 1, 3};
            y_plane.resize(size_t(image->width) * image->height);
            for (uint32_t r = 0; r < image->height; ++r) {
                const uint8_t* s = p0.data + size_t(r) * p0.stride;
                uint8_t* yr = y_plane.data() + size_t(r) * image->width;
                uint8_t* ur = u.data() + size_t(r) * cw;
                uint8_t* vr = v.data() + size_t(r) * cw;
                for (uint32_t i = 0; i < cw; ++i) {
                    yr[2 * i] = s[4 * i + o.y];
                    yr[2 * i + 1] = s[4 * i + o.y + 2];
                    ur[i] = s[4 * i + o.u];
                    vr[i] = s[4 * i + o.v];
                }
            }
            y_data = y_plane.data();
            y_stride = int(image->width);
        } else {
            kes_image_plane cp;
            kes::check_sdk(kes_image_get_plane(image, 1, &cp), "input chroma plane");
            const bool vu = f == KES_PIXEL_NV21;
            for (uint32_t r = 0; r < ch; ++r) {
                const uint8_t* s = cp.data + size_t(r) * cp.stride;
                uint8_t* ur = u.data() + size_t(r) * cw;
                uint8_t* vr = v.data() + size_t(r) * cw;
                for (uint32_t i = 0; i < cw; ++i) {
                    ur[i] = s[2 * i + (vu ? 1 : 0)];
                    vr[i] = s[2 * i + (vu ? 0 : 1)];
                }
            }
        }
        const unsigned char* planes[3] = {y_data, u.data(), v.data()};
        const int strides[3] = {y_stride, int(cw), int(cw)};
        unsigned char* jpeg = nullptr;
        unsigned long jpeg_size = 0;
        const int rc = tjCompressFromYUVPlanes(h, planes, int(image->width), strides, int(image->height),
                                               packed ? TJSAMP_422 : TJSAMP_420, &jpeg, &jpeg_size, int(quality), 0);
        kes::TjBuffer owned(jpeg);
        if (rc != 0) KES_FAIL(KES_ERR_INTERNAL, "tjCompressFromYUVPlanes failed: %s", tjGetErrorStr2(h));
        KES_REQUIRE(jpeg_size <= capacity,
                    "output buffer of %zu bytes is too small for the %lu-byte JPEG (kes_jpeg_predict_encode_size "
                    "gives a size that always fits)",
                    capacity, jpeg_size);
        std::memcpy(out, jpeg, jpeg_size);
        *out_size = jpeg_size;
        return KES_OK;
    });
}

}  // extern "C"
