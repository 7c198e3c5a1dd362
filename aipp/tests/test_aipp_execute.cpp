// Tests of AIPP execution (BOARD-RULES §AIPP-order, §AIPP-CSC): every standard CSC table and the DTC against a
// double-precision reference written here from the formulas, fast path == scalar path, padding,
// batching, board_exact precision and dynamic AIPP.
#include <gtest/gtest.h>
#include <algorithm>
#include <cstddef>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.hpp"
#include "dispatch_expect.hpp"
#include "kestrel/aipp.h"
#include "struct_size_check.hpp"

using kes_test::expect_struct_growth;
using kes_test::SizedStruct;

namespace {

// ---- images and tensors -------------------------------------------------------------------------

struct Image {
    kes_image im{};
    Image(kes_pixel_format f, uint32_t w, uint32_t h, uint32_t ws = 0, uint32_t hs = 0, uint32_t seed = 1) {
        EXPECT_EQ(kes_image_alloc(&im, nullptr, f, w, h, ws, hs), KES_OK) << kes_last_error();
        uint32_t s = seed * 2654435761u + 12345u;
        auto* p = static_cast<uint8_t*>(im.data);
        for (size_t i = 0; i < im.size; ++i) {
            s = s * 1664525u + 1013904223u;
            p[i] = static_cast<uint8_t>(s >> 24);
        }
    }
    ~Image() { kes_image_release(&im); }
    Image(const Image&) = delete;
    Image& operator=(const Image&) = delete;
};

struct Tensor {
    kes_tensor t{};
    Tensor(kes_dtype dt, kes_layout layout, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
        const int64_t nchw[4] = {n, c, h, w}, nhwc[4] = {n, h, w, c};
        EXPECT_EQ(kes_tensor_alloc(&t, nullptr, dt, layout, 4, layout == KES_LAYOUT_NCHW ? nchw : nhwc), KES_OK);
        std::memset(t.data, 0xA5, t.size);
    }
    ~Tensor() { kes_tensor_release(&t); }
    Tensor(const Tensor&) = delete;
    Tensor& operator=(const Tensor&) = delete;
    int64_t offset(uint32_t n, uint32_t c, uint32_t y, uint32_t x) const {
        if (t.layout == KES_LAYOUT_NCHW)
            return n * t.strides[0] + c * t.strides[1] + y * t.strides[2] + x * t.strides[3];
        return n * t.strides[0] + y * t.strides[1] + x * t.strides[2] + c * t.strides[3];
    }
    double at(uint32_t n, uint32_t c, uint32_t y, uint32_t x) const {
        const int64_t o = offset(n, c, y, x);
        switch (t.dtype) {
            case KES_F32: return static_cast<const float*>(t.data)[o];
            case KES_F16: return kes_fp16_to_float(static_cast<const uint16_t*>(t.data)[o]);
            case KES_I8: return static_cast<const int8_t*>(t.data)[o];
            default: return static_cast<const uint8_t*>(t.data)[o];
        }
    }
    uint16_t bits16(uint32_t n, uint32_t c, uint32_t y, uint32_t x) const {
        return static_cast<const uint16_t*>(t.data)[offset(n, c, y, x)];
    }
};

kes_aipp_params static_params(kes_aipp_input_format f) {
    kes_aipp_params p;
    kes_aipp_params_init(&p);
    p.aipp_mode = KES_AIPP_MODE_STATIC;
    p.input_format = f;
    return p;
}

kes_aipp_exec_config exec(kes_aipp_kernel k, kes_aipp_precision prec = KES_AIPP_PRECISION_FLOAT) {
    kes_aipp_exec_config c;
    kes_aipp_exec_config_init(&c);
    c.kernel = k;
    c.precision = prec;
    return c;
}

// ---- the reference, written from BOARD-RULES §AIPP-order independently of the library --------------------------

void ref_input(const kes_image& im, const kes_aipp_params& p, uint32_t sx, uint32_t sy, int in[3]) {
    const auto* b = static_cast<const uint8_t*>(im.data);
    const size_t ws = im.width_stride;
    switch (p.input_format) {
        case KES_AIPP_YUV420SP_U8: {
            const uint8_t* uv = b + ws * im.height_stride + (sy / 2) * ws + (sx / 2) * 2;
            in[0] = b[sy * ws + sx];
            in[1] = uv[p.rbuv_swap_switch ? 1 : 0];
            in[2] = uv[p.rbuv_swap_switch ? 0 : 1];
            return;
        }
        case KES_AIPP_YUV400_U8:
            in[0] = b[sy * ws + sx];
            in[1] = in[2] = 0;
            return;
        default: {
            const uint32_t bpp = p.input_format == KES_AIPP_RGB888_U8 ? 3 : 4;
            const uint8_t* px = b + sy * ws + sx * bpp + (bpp == 4 && !p.ax_swap_switch ? 1 : 0);
            in[0] = px[p.rbuv_swap_switch ? 2 : 0];
            in[1] = px[1];
            in[2] = px[p.rbuv_swap_switch ? 0 : 2];
            return;
        }
    }
}

// Pixel value before DTC at output (x, y): padding value, or the CSC output (floor division by 256).
double ref_pixel(const kes_image& im, const kes_aipp_params& p, uint32_t c, uint32_t x, uint32_t y, uint32_t crop_w,
                 uint32_t crop_h) {
    const uint32_t l = p.padding ? p.left_padding_size : 0, t = p.padding ? p.top_padding_size : 0;
    if (x < l || y < t || x >= l + crop_w || y >= t + crop_h) return p.padding_value;
    const uint32_t sx = (p.crop ? p.load_start_pos_w : 0) + x - l, sy = (p.crop ? p.load_start_pos_h : 0) + y - t;
    int in[3];
    ref_input(im, p, sx, sy, in);
    if (!p.csc_switch) return in[c];
    double s = 0;
    for (int j = 0; j < 3; ++j) s += static_cast<double>(p.matrix[c][j]) * (in[j] - p.input_bias[j]);
    const double v = std::floor(s / 256.0) + p.output_bias[c];
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

double ref_dtc(const kes_aipp_params& p, uint32_t c, double x) {
    return (x - p.mean_chn[c] - static_cast<double>(p.min_chn[c])) * static_cast<double>(p.var_reci_chn[c]);
}

// Checks out[n] against the reference: f32 within 1e-5 relative, f16 within 1 ulp, ints within 1.
void expect_matches_reference(const Tensor& out, uint32_t n, const kes_image& im, const kes_aipp_params& p,
                              uint32_t crop_w, uint32_t crop_h, const std::string& what) {
    const bool nchw = out.t.layout == KES_LAYOUT_NCHW;
    const uint32_t C = static_cast<uint32_t>(out.t.shape[nchw ? 1 : 3]);
    const uint32_t H = static_cast<uint32_t>(out.t.shape[nchw ? 2 : 1]);
    const uint32_t W = static_cast<uint32_t>(out.t.shape[nchw ? 3 : 2]);
    int failures = 0;
    for (uint32_t c = 0; c < C; ++c) {
        for (uint32_t y = 0; y < H; ++y) {
            for (uint32_t x = 0; x < W && failures < 5; ++x) {
                const double ref = ref_dtc(p, c, ref_pixel(im, p, c, x, y, crop_w, crop_h));
                const double got = out.at(n, c, y, x);
                bool ok;
                if (out.t.dtype == KES_F32) {
                    ok = std::fabs(got - ref) <= 1e-5 * std::fmax(1.0, std::fabs(ref));
                } else if (out.t.dtype == KES_F16) {
                    const int a = out.bits16(n, c, y, x), b = kes_fp16_from_float(static_cast<float>(ref));
                    ok = std::abs(a - b) <= 1 || (((a | b) & 0x7fff) == 0);
                } else {
                    const double lo = out.t.dtype == KES_I8 ? -128 : 0, hi = out.t.dtype == KES_I8 ? 127 : 255;
                    ok = std::fabs(got - std::fmin(hi, std::fmax(lo, ref))) <= 1.0;
                }
                if (!ok) {
                    ++failures;
                    ADD_FAILURE() << what << ": n" << n << " c" << c << " y" << y << " x" << x << " got " << got
                                  << " want " << ref;
                }
            }
        }
    }
}

// The tables of BOARD-RULES §AIPP-CSC, typed here from that table (not taken from the library).
struct SpecTable {
    kes_aipp_csc id;
    int m[3][3];
    int ib[3], ob[3];
    bool from_yuv;
};
const SpecTable kSpecTables[] = {
    {KES_AIPP_CSC_YUV2RGB_BT601_WIDE, {{256, 0, 359}, {256, -88, -183}, {256, 454, 0}}, {0, 128, 128}, {0, 0, 0}, true},
    {KES_AIPP_CSC_YUV2RGB_BT601_NARROW,
     {{298, 0, 409}, {298, -100, -208}, {298, 516, 0}},
     {16, 128, 128},
     {0, 0, 0},
     true},
    {KES_AIPP_CSC_YUV2RGB_BT709_NARROW,
     {{298, 0, 459}, {298, -55, -136}, {298, 541, 0}},
     {16, 128, 128},
     {0, 0, 0},
     true},
    {KES_AIPP_CSC_YUV2RGB_BT709_WIDE, {{256, 0, 403}, {256, -48, -120}, {256, 475, 0}}, {0, 128, 128}, {0, 0, 0}, true},
    {KES_AIPP_CSC_YUV2BGR_BT601_WIDE, {{256, 454, 0}, {256, -88, -183}, {256, 0, 359}}, {0, 128, 128}, {0, 0, 0}, true},
    {KES_AIPP_CSC_YUV2BGR_BT601_NARROW,
     {{298, 516, 0}, {298, -100, -208}, {298, 0, 409}},
     {16, 128, 128},
     {0, 0, 0},
     true},
    {KES_AIPP_CSC_YUV2BGR_BT709_NARROW,
     {{298, 541, 0}, {298, -55, -136}, {298, 0, 459}},
     {16, 128, 128},
     {0, 0, 0},
     true},
    {KES_AIPP_CSC_YUV2BGR_BT709_WIDE, {{256, 475, 0}, {256, -48, -120}, {256, 0, 403}}, {0, 128, 128}, {0, 0, 0}, true},
    {KES_AIPP_CSC_YUV2GRAY, {{256, 0, 0}, {0, 0, 0}, {0, 0, 0}}, {0, 0, 0}, {0, 0, 0}, true},
    {KES_AIPP_CSC_RGB2YUV_BT601_WIDE,
     {{77, 150, 29}, {-43, -85, 128}, {128, -107, -21}},
     {0, 0, 0},
     {0, 128, 128},
     false},
    {KES_AIPP_CSC_RGB2YUV_BT601_NARROW,
     {{66, 129, 25}, {-38, -74, 112}, {112, -94, -18}},
     {0, 0, 0},
     {16, 128, 128},
     false},
    {KES_AIPP_CSC_RGB2YUV_BT709_NARROW,
     {{47, 157, 16}, {-26, -87, 112}, {112, -102, -10}},
     {0, 0, 0},
     {16, 128, 128},
     false},
    {KES_AIPP_CSC_RGB2YUV_BT709_WIDE,
     {{55, 183, 19}, {-29, -99, 128}, {128, -116, -12}},
     {0, 0, 0},
     {0, 128, 128},
     false},
};

}  // namespace

TEST(AippCsc, EveryStandardTableMatchesTheSpecAndTheDoubleReference) {
    for (const SpecTable& st : kSpecTables) {
        kes_aipp_params p = static_params(st.from_yuv ? KES_AIPP_YUV420SP_U8 : KES_AIPP_RGB888_U8);
        ASSERT_EQ(kes_aipp_params_set_csc(&p, st.id), KES_OK);
        EXPECT_EQ(std::memcmp(p.matrix, st.m, sizeof(st.m)), 0) << "table " << st.id;
        EXPECT_EQ(std::memcmp(p.input_bias, st.ib, sizeof(st.ib)), 0) << "table " << st.id;
        EXPECT_EQ(std::memcmp(p.output_bias, st.ob, sizeof(st.ob)), 0) << "table " << st.id;
        Image img(st.from_yuv ? KES_PIXEL_NV12 : KES_PIXEL_RGB888, 24, 10, 0, 0, 7u + st.id);
        for (kes_aipp_kernel k : {KES_AIPP_KERNEL_SCALAR, KES_AIPP_KERNEL_AUTO}) {
            Tensor out(KES_F32, KES_LAYOUT_NCHW, 1, 3, 10, 24);
            const kes_aipp_exec_config cfg = exec(k);
            ASSERT_EQ(kes_aipp_execute(&p, &cfg, &img.im, 1, &out.t), KES_OK) << kes_last_error();
            expect_matches_reference(out, 0, img.im, p, 24, 10, "table " + std::to_string(st.id));
        }
    }
}

TEST(AippCsc, ShiftIsArithmeticThenClampAsDocumented) {
    // BT.601 narrow white: 298 × (235 − 16) = 65262, >> 8 = 254 (truncation, BOARD-RULES §AIPP-order UNCONFIRMED
    // choice).
    Image img(KES_PIXEL_NV12, 2, 2);
    auto* b = static_cast<uint8_t*>(img.im.data);
    std::memset(b, 235, 4);
    std::memset(b + img.im.width_stride * img.im.height_stride, 128, 2);
    kes_aipp_params p = static_params(KES_AIPP_YUV420SP_U8);
    ASSERT_EQ(kes_aipp_params_set_csc(&p, KES_AIPP_CSC_YUV2RGB_BT601_NARROW), KES_OK);
    Tensor out(KES_U8, KES_LAYOUT_NHWC, 1, 3, 2, 2);
    ASSERT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &out.t), KES_OK) << kes_last_error();
    EXPECT_EQ(out.at(0, 0, 0, 0), 254);
    // Y = 0 gives 298 × −16 = −4768, >> 8 = −19 (not −18): clamped to 0.
    std::memset(b, 0, 4);
    ASSERT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &out.t), KES_OK);
    EXPECT_EQ(out.at(0, 1, 1, 1), 0);
}

TEST(AippExecute, ActiveTableIsTheFastestThisCpuAllows) {
    const std::string want =
        kes_test::expected_table({{KES_CPU_AVX2 | KES_CPU_F16C, "avx2"}, {KES_CPU_NEON, "neon"}}, "scalar");
    kes_test::record_table("aipp", want);
    EXPECT_EQ(kes_aipp_kernels_name(), want);
}

TEST(AippExecute, FastPathEqualsScalarPathForEveryFormatDtypeLayoutAndPrecision) {
    struct Case {
        kes_pixel_format px;
        kes_aipp_input_format f;
        int swap, ax, csc;
    };
    const Case cases[] = {
        {KES_PIXEL_NV12, KES_AIPP_YUV420SP_U8, 0, 0, 1},     {KES_PIXEL_NV21, KES_AIPP_YUV420SP_U8, 1, 0, 1},
        {KES_PIXEL_NV12, KES_AIPP_YUV420SP_U8, 0, 0, 0},     {KES_PIXEL_YUV400, KES_AIPP_YUV400_U8, 0, 0, 0},
        {KES_PIXEL_RGB888, KES_AIPP_RGB888_U8, 0, 0, 0},     {KES_PIXEL_BGR888, KES_AIPP_RGB888_U8, 1, 0, 1},
        {KES_PIXEL_ARGB8888, KES_AIPP_XRGB8888_U8, 0, 0, 1}, {KES_PIXEL_RGBA8888, KES_AIPP_XRGB8888_U8, 1, 1, 0},
    };
    int index = 0;
    for (const Case& cs : cases) {
        ++index;
        // VPC-like strides: visible 22×14 inside a wider, taller buffer.
        const uint32_t bpp = cs.f == KES_AIPP_RGB888_U8 ? 3 : cs.f == KES_AIPP_XRGB8888_U8 ? 4 : 1;
        Image img(cs.px, 22, 14, 32 * bpp, 16, static_cast<uint32_t>(index));
        kes_aipp_params p = static_params(cs.f);
        p.rbuv_swap_switch = cs.swap;
        p.ax_swap_switch = cs.ax;
        if (cs.csc) {
            ASSERT_EQ(kes_aipp_params_set_csc(&p, cs.f == KES_AIPP_YUV420SP_U8 ? KES_AIPP_CSC_YUV2RGB_BT709_NARROW
                                                                               : KES_AIPP_CSC_RGB2YUV_BT601_WIDE),
                      KES_OK);
        }
        p.crop = 1;
        p.load_start_pos_w = 2;
        p.load_start_pos_h = 2;
        p.crop_size_w = 17;
        p.crop_size_h = 9;
        p.padding = 1;
        p.left_padding_size = 1;
        p.right_padding_size = 2;
        p.top_padding_size = 3;
        p.padding_value = 114.0f;
        const int32_t mean[3] = {10, 128, -3};
        const float mn[3] = {0.3f, 0.1f, 0.0f}, var[3] = {0.05f, 0.7f, 0.0039215686f};
        for (int c = 0; c < 3; ++c) {
            p.mean_chn[c] = mean[c];
            p.min_chn[c] = mn[c];
            p.var_reci_chn[c] = var[c];
        }
        const uint32_t C = cs.f == KES_AIPP_YUV400_U8 ? 1 : 3;
        for (kes_dtype dt : {KES_F32, KES_F16, KES_I8, KES_U8}) {
            for (kes_layout layout : {KES_LAYOUT_NCHW, KES_LAYOUT_NHWC}) {
                for (kes_aipp_precision prec : {KES_AIPP_PRECISION_FLOAT, KES_AIPP_PRECISION_BOARD_EXACT}) {
                    const std::string what = "case " + std::to_string(index) + " " + kes_dtype_name(dt) + " " +
                                             kes_layout_name(layout) + (prec ? " exact" : " float");
                    Tensor ref(dt, layout, 1, C, 12, 20), fast(dt, layout, 1, C, 12, 20);
                    const kes_aipp_exec_config cs_ref = exec(KES_AIPP_KERNEL_SCALAR, prec);
                    const kes_aipp_exec_config cs_fast = exec(KES_AIPP_KERNEL_AUTO, prec);
                    ASSERT_EQ(kes_aipp_execute(&p, &cs_ref, &img.im, 1, &ref.t), KES_OK) << what << kes_last_error();
                    ASSERT_EQ(kes_aipp_execute(&p, &cs_fast, &img.im, 1, &fast.t), KES_OK) << what;
                    EXPECT_EQ(std::memcmp(ref.t.data, fast.t.data, ref.t.size), 0) << what;
                    if (prec == KES_AIPP_PRECISION_FLOAT) expect_matches_reference(ref, 0, img.im, p, 17, 9, what);
                }
            }
        }
    }
}

TEST(AippExecute, ResnetSampleConfigMatchesReference) {
    const char* text =
        "aipp_op {\n aipp_mode: static\n input_format: YUV420SP_U8\n src_image_size_w: 224\n"
        " src_image_size_h: 224\n csc_switch: true\n min_chn_0: 123\n min_chn_1: 117\n min_chn_2: 104\n}\n";
    kes_aipp_config* cfg = nullptr;
    ASSERT_EQ(kes_aipp_config_parse(text, std::strlen(text), "resnet.cfg", &cfg), KES_OK) << kes_last_error();
    kes_aipp_params p;
    p.struct_size = sizeof(p);
    ASSERT_EQ(kes_aipp_config_get(cfg, 0, &p), KES_OK);
    kes_aipp_config_destroy(cfg);
    Image img(KES_PIXEL_NV12, 224, 224);
    Tensor out(KES_F32, KES_LAYOUT_NCHW, 1, 3, 224, 224);
    ASSERT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &out.t), KES_OK) << kes_last_error();
    expect_matches_reference(out, 0, img.im, p, 224, 224, "resnet");
}

TEST(AippExecute, PaddingPixelsPassThroughDtc) {
    Image img(KES_PIXEL_RGB888, 4, 4);
    kes_aipp_params p = static_params(KES_AIPP_RGB888_U8);
    p.padding = 1;
    p.left_padding_size = p.right_padding_size = p.top_padding_size = p.bottom_padding_size = 2;
    p.padding_value = 0.0f;
    for (int c = 0; c < 3; ++c) {
        p.mean_chn[c] = 128;
        p.var_reci_chn[c] = 0.5f;
    }
    Tensor out(KES_F32, KES_LAYOUT_NCHW, 1, 3, 8, 8);
    ASSERT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &out.t), KES_OK) << kes_last_error();
    EXPECT_EQ(out.at(0, 0, 0, 0), -64.0);
    EXPECT_EQ(out.at(0, 2, 7, 7), -64.0);
    const uint8_t first = static_cast<const uint8_t*>(img.im.data)[0];
    EXPECT_EQ(out.at(0, 0, 2, 2), (first - 128) * 0.5);
}

TEST(AippExecute, OmittedCropSizeIsOutputMinusPadding) {
    Image img(KES_PIXEL_NV12, 16, 12);
    kes_aipp_params p = static_params(KES_AIPP_YUV420SP_U8);
    p.crop = 1;
    p.load_start_pos_w = 2;
    p.load_start_pos_h = 4;
    p.padding = 1;
    p.left_padding_size = p.right_padding_size = 1;
    Tensor out(KES_F32, KES_LAYOUT_NHWC, 1, 3, 6, 8);
    ASSERT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &out.t), KES_OK) << kes_last_error();
    expect_matches_reference(out, 0, img.im, p, 6, 6, "default crop");
    uint32_t w = 0, h = 0, c = 0;
    EXPECT_EQ(kes_aipp_predict_output(&p, 16, 12, &w, &h, &c), KES_ERR_INVALID_ARGUMENT);
    p.crop_size_w = 6;
    p.crop_size_h = 6;
    ASSERT_EQ(kes_aipp_predict_output(&p, 16, 12, &w, &h, &c), KES_OK);
    EXPECT_EQ(w, 8u);
    EXPECT_EQ(h, 6u);
    EXPECT_EQ(c, 3u);
}

TEST(AippExecute, BatchFillsEverySliceOnAnyPool) {
    kes_thread_pool_config pc;
    kes_thread_pool_config_init(&pc);
    pc.threads = 3;
    kes_thread_pool* pool = nullptr;
    ASSERT_EQ(kes_thread_pool_create(&pc, &pool), KES_OK);
    // 37 images: more than one round of plans (16), with a partial last round.
    constexpr uint32_t kBatch = 37;
    std::vector<Image*> imgs;
    std::vector<kes_image> batch;
    for (uint32_t i = 0; i < kBatch; ++i) {
        imgs.push_back(new Image(KES_PIXEL_NV12, 20, 18, 0, 0, 100 + i));  // test-local ownership
        batch.push_back(imgs.back()->im);
    }
    kes_aipp_params p = static_params(KES_AIPP_YUV420SP_U8);
    ASSERT_EQ(kes_aipp_params_set_csc(&p, KES_AIPP_CSC_YUV2BGR_BT601_WIDE), KES_OK);
    kes_aipp_exec_config cfg = exec(KES_AIPP_KERNEL_AUTO);
    cfg.pool = pool;
    Tensor out(KES_F16, KES_LAYOUT_NCHW, kBatch, 3, 18, 20);
    ASSERT_EQ(kes_aipp_execute(&p, &cfg, batch.data(), kBatch, &out.t), KES_OK) << kes_last_error();
    for (uint32_t i = 0; i < kBatch; ++i) expect_matches_reference(out, i, batch[i], p, 20, 18, "batch");

    // Static AIPP allocates nothing on any thread (plans on the stack, row scratch on the stack).
    kes_test::start_counting_all_threads();
    const kes_status st = kes_aipp_execute(&p, &cfg, batch.data(), kBatch, &out.t);
    const uint64_t allocations = kes_test::stop_counting_all_threads();
    EXPECT_EQ(st, KES_OK) << kes_last_error();
    EXPECT_EQ(allocations, 0u);
    for (Image* im : imgs) delete im;
    kes_thread_pool_destroy(pool);
}

TEST(AippExecute, BoardExactRoundsMinAndVarReciToFp16) {
    Image img(KES_PIXEL_YUV400, 8, 2);
    kes_aipp_params p = static_params(KES_AIPP_YUV400_U8);
    p.mean_chn[0] = 3;
    p.min_chn[0] = 0.1f;       // not representable in fp16
    p.var_reci_chn[0] = 0.1f;  // neither
    Tensor f(KES_F32, KES_LAYOUT_NCHW, 1, 1, 2, 8), e(KES_F32, KES_LAYOUT_NCHW, 1, 1, 2, 8);
    const kes_aipp_exec_config cf = exec(KES_AIPP_KERNEL_AUTO, KES_AIPP_PRECISION_FLOAT);
    const kes_aipp_exec_config ce = exec(KES_AIPP_KERNEL_AUTO, KES_AIPP_PRECISION_BOARD_EXACT);
    ASSERT_EQ(kes_aipp_execute(&p, &cf, &img.im, 1, &f.t), KES_OK);
    ASSERT_EQ(kes_aipp_execute(&p, &ce, &img.im, 1, &e.t), KES_OK);
    const auto h = [](float v) { return kes_fp16_to_float(kes_fp16_from_float(v)); };
    int differ = 0;
    for (uint32_t x = 0; x < 8; ++x) {
        const float px = static_cast<const uint8_t*>(img.im.data)[x];
        EXPECT_FLOAT_EQ(static_cast<float>(f.at(0, 0, 0, x)), ((px - 3.0f) - 0.1f) * 0.1f);
        const float want = h(h((px - 3.0f) - h(0.1f)) * h(0.1f));
        EXPECT_EQ(static_cast<float>(e.at(0, 0, 0, x)), want);
        differ += f.at(0, 0, 0, x) != e.at(0, 0, 0, x);
    }
    EXPECT_GT(differ, 0);
}

TEST(AippExecute, SrcImageSizeMayReachIntoTheStrideButNotBeyond) {
    Image img(KES_PIXEL_NV12, 30, 10, 32, 10);
    kes_aipp_params p = static_params(KES_AIPP_YUV420SP_U8);
    p.src_image_size_w = 32;
    p.src_image_size_h = 10;
    Tensor out(KES_U8, KES_LAYOUT_NCHW, 1, 3, 10, 32);
    ASSERT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &out.t), KES_OK) << kes_last_error();
    expect_matches_reference(out, 0, img.im, p, 32, 10, "stride");
    p.src_image_size_w = 34;
    Tensor wide(KES_U8, KES_LAYOUT_NCHW, 1, 3, 10, 34);
    EXPECT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &wide.t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("exceeds the image strides"), std::string::npos) << kes_last_error();
}

TEST(AippExecute, MismatchedImagesAndTensorsAreRefusedWithReasons) {
    Image img(KES_PIXEL_NV12, 16, 8);
    kes_aipp_params p = static_params(KES_AIPP_YUV420SP_U8);
    Tensor wrong_w(KES_F32, KES_LAYOUT_NCHW, 1, 3, 8, 15);
    EXPECT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &wrong_w.t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("output tensor is 15x8 (WxH) but AIPP produces 16x8"),
              std::string::npos)
        << kes_last_error();
    Tensor ok(KES_F32, KES_LAYOUT_NCHW, 1, 3, 8, 16), two(KES_F32, KES_LAYOUT_NCHW, 2, 3, 8, 16);
    EXPECT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &two.t), KES_ERR_INVALID_ARGUMENT);
    Tensor i32(KES_I32, KES_LAYOUT_NCHW, 1, 3, 8, 16);
    EXPECT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &i32.t), KES_ERR_INVALID_ARGUMENT);
    Tensor four(KES_F32, KES_LAYOUT_NCHW, 1, 4, 8, 16);
    EXPECT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &four.t), KES_ERR_INVALID_ARGUMENT);
    p.input_format = KES_AIPP_RGB888_U8;
    EXPECT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &ok.t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("images[0] is NV12, which input_format RGB888_U8 cannot read"),
              std::string::npos)
        << kes_last_error();
    p.input_format = KES_AIPP_YUV420SP_U8;
    p.crop = 1;
    p.load_start_pos_w = 4;
    p.crop_size_w = 14;
    p.crop_size_h = 8;
    Tensor crop(KES_F32, KES_LAYOUT_NCHW, 1, 3, 8, 14);
    EXPECT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &crop.t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("lies outside the source 16x8"), std::string::npos)
        << kes_last_error();
    p.load_start_pos_w = 3;  // odd: validation names the rule
    EXPECT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &crop.t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("params->load_start_pos_w must be even"), std::string::npos);
    EXPECT_EQ(kes_aipp_execute(nullptr, nullptr, &img.im, 1, &ok.t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_aipp_execute(&p, nullptr, nullptr, 1, &ok.t), KES_ERR_INVALID_ARGUMENT);
}

TEST(AippDynamic, PerBatchParamsApplyAndBoardLimitsHold) {
    kes_aipp_params base;
    kes_aipp_params_init(&base);
    base.aipp_mode = KES_AIPP_MODE_DYNAMIC;
    base.max_src_image_size = 1000;
    kes_aipp_dynamic* d = nullptr;
    ASSERT_EQ(kes_aipp_dynamic_create(&base, 2, &d), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_aipp_dynamic_set_input_format(d, KES_AIPP_YUV420SP_U8), KES_OK);
    ASSERT_EQ(kes_aipp_dynamic_set_csc_params(d, 1, 256, 0, 359, 256, -88, -183, 256, 454, 0, 0, 0, 0, 0, 128, 128),
              KES_OK);
    ASSERT_EQ(kes_aipp_dynamic_set_crop_params(d, 1, 0, 0, 8, 8, 0), KES_OK);
    ASSERT_EQ(kes_aipp_dynamic_set_crop_params(d, 1, 4, 6, 6, 6, 1), KES_OK);
    ASSERT_EQ(kes_aipp_dynamic_set_padding_params(d, 1, 1, 1, 1, 1, 1), KES_OK);
    ASSERT_EQ(kes_aipp_dynamic_set_dtc_pixel_mean(d, 100, 50, 0, 0, 1), KES_OK);
    ASSERT_EQ(kes_aipp_dynamic_set_pixel_var_reci(d, 0.5f, 0.25f, 2.0f, 1.0f, 1), KES_OK);
    Image a(KES_PIXEL_NV12, 16, 16, 0, 0, 3), b(KES_PIXEL_NV12, 16, 16, 0, 0, 4);
    const kes_image imgs[2] = {a.im, b.im};
    Tensor out(KES_F32, KES_LAYOUT_NCHW, 2, 3, 8, 8);
    ASSERT_EQ(kes_aipp_dynamic_execute(d, nullptr, imgs, 2, &out.t), KES_OK) << kes_last_error();
    for (uint32_t i = 0; i < 2; ++i) {
        kes_aipp_params p;
        p.struct_size = sizeof(p);
        ASSERT_EQ(kes_aipp_dynamic_get_params(d, i, &p), KES_OK);
        expect_matches_reference(out, i, imgs[i], p, i ? 6 : 8, i ? 6 : 8, "dynamic");
    }
    // Dynamic AIPP on YUV420SP needs even crop sizes (BOARD-RULES §AIPP-order).
    ASSERT_EQ(kes_aipp_dynamic_set_crop_params(d, 1, 4, 6, 7, 6, 1), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_execute(d, nullptr, imgs, 2, &out.t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("batch 1: crop_size_w must be even"), std::string::npos)
        << kes_last_error();
    kes_aipp_dynamic_destroy(d);

    // max_src_image_size and the 1080-wide output limit.
    base.max_src_image_size = 300;
    ASSERT_EQ(kes_aipp_dynamic_create(&base, 1, &d), KES_OK);
    ASSERT_EQ(kes_aipp_dynamic_set_input_format(d, KES_AIPP_YUV400_U8), KES_OK);
    Image big(KES_PIXEL_YUV400, 20, 20);
    Tensor o1(KES_F32, KES_LAYOUT_NCHW, 1, 1, 20, 20);
    EXPECT_EQ(kes_aipp_dynamic_execute(d, nullptr, &big.im, 1, &o1.t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("400 bytes exceed max_src_image_size 300"), std::string::npos)
        << kes_last_error();
    kes_aipp_dynamic_destroy(d);
    base.max_src_image_size = 100000;
    ASSERT_EQ(kes_aipp_dynamic_create(&base, 1, &d), KES_OK);
    ASSERT_EQ(kes_aipp_dynamic_set_input_format(d, KES_AIPP_YUV400_U8), KES_OK);
    Image wide(KES_PIXEL_YUV400, 1100, 2);
    Tensor o2(KES_U8, KES_LAYOUT_NCHW, 1, 1, 2, 1100);
    EXPECT_EQ(kes_aipp_dynamic_execute(d, nullptr, &wide.im, 1, &o2.t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("output width 1100 exceeds 1080"), std::string::npos)
        << kes_last_error();
    kes_aipp_dynamic_destroy(d);
}

TEST(AippRecipe, RgbCenteredAndImageNetMatchTheirFormulas) {
    Image img(KES_PIXEL_RGB888, 16, 4);
    const auto* px = static_cast<const uint8_t*>(img.im.data);
    kes_aipp_params p;
    kes_aipp_params_init(&p);
    ASSERT_EQ(kes_aipp_params_apply_recipe(&p, KES_AIPP_RECIPE_RGB_CENTERED, KES_AIPP_RGB888_U8,
                                           KES_AIPP_CSC_YUV2RGB_BT601_WIDE),
              KES_OK);
    Tensor out(KES_F32, KES_LAYOUT_NCHW, 1, 3, 4, 16);
    ASSERT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &out.t), KES_OK) << kes_last_error();
    for (uint32_t x = 0; x < 16; ++x) {
        for (uint32_t c = 0; c < 3; ++c) EXPECT_NEAR(out.at(0, c, 0, x), (px[x * 3 + c] - 127.5) / 128.0, 1e-6);
    }
    ASSERT_EQ(
        kes_aipp_params_apply_recipe(&p, KES_AIPP_RECIPE_IMAGENET, KES_AIPP_RGB888_U8, KES_AIPP_CSC_YUV2RGB_BT601_WIDE),
        KES_OK);
    ASSERT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &out.t), KES_OK);
    const double mean[3] = {0.485, 0.456, 0.406}, sd[3] = {0.229, 0.224, 0.225};
    for (uint32_t x = 0; x < 16; ++x) {
        for (uint32_t c = 0; c < 3; ++c) {
            const double want = (px[x * 3 + c] / 255.0 - mean[c]) / sd[c];
            EXPECT_NEAR(out.at(0, c, 0, x), want, 1e-5 * std::fmax(1.0, std::fabs(want)));
        }
    }
}

TEST(AippExecute, CscSwitchWithoutMatrixUsesTheAtcDefaultTable) {
    Image img(KES_PIXEL_NV12, 16, 4);
    kes_aipp_params dflt = static_params(KES_AIPP_YUV420SP_U8);
    dflt.csc_switch = 1;  // no matrix: BOARD-RULES §AIPP-CSC default
    kes_aipp_params expl = static_params(KES_AIPP_YUV420SP_U8);
    ASSERT_EQ(kes_aipp_params_set_csc(&expl, KES_AIPP_CSC_YUV2BGR_BT601_NARROW), KES_OK);
    Tensor a(KES_U8, KES_LAYOUT_NHWC, 1, 3, 4, 16), b(KES_U8, KES_LAYOUT_NHWC, 1, 3, 4, 16);
    ASSERT_EQ(kes_aipp_execute(&dflt, nullptr, &img.im, 1, &a.t), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_aipp_execute(&expl, nullptr, &img.im, 1, &b.t), KES_OK);
    EXPECT_EQ(std::memcmp(a.t.data, b.t.data, a.t.size), 0);
}

TEST(AippExecute, ConcurrentCallsOnOneParamsGiveIdenticalResults) {
    // Thread-safety contract of aipp.h: params are read-only, calls may run at once.
    Image img(KES_PIXEL_NV12, 32, 16);
    kes_aipp_params p;
    kes_aipp_params_init(&p);
    ASSERT_EQ(kes_aipp_params_apply_recipe(&p, KES_AIPP_RECIPE_IMAGENET, KES_AIPP_YUV420SP_U8,
                                           KES_AIPP_CSC_YUV2RGB_BT709_NARROW),
              KES_OK);
    Tensor want(KES_F16, KES_LAYOUT_NCHW, 1, 3, 16, 32);
    ASSERT_EQ(kes_aipp_execute(&p, nullptr, &img.im, 1, &want.t), KES_OK);
    std::vector<int> same(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            Tensor out(KES_F16, KES_LAYOUT_NCHW, 1, 3, 16, 32);
            int ok = 1;
            for (int i = 0; i < 20 && ok; ++i) {
                ok = kes_aipp_execute(&p, nullptr, &img.im, 1, &out.t) == KES_OK &&
                     std::memcmp(out.t.data, want.t.data, want.t.size) == 0;
            }
            same[t] = ok;
        });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(same[t], 1) << "thread " << t;
}

// struct_size (kes/struct_size.hpp): params and exec config are accepted from their first release up
// and, newer, only with a zero tail.
TEST(AippParams, GrowWithoutBreakingApps) {
    kes_aipp_params params;
    kes_aipp_params_init(&params);
    ASSERT_EQ(kes_aipp_params_apply_recipe(&params, KES_AIPP_RECIPE_IMAGENET, KES_AIPP_YUV420SP_U8,
                                           KES_AIPP_CSC_YUV2RGB_BT601_WIDE),
              KES_OK)
        << kes_last_error();
    expect_struct_growth(params, offsetof(kes_aipp_params, aipp_mode) + sizeof(kes_aipp_mode), [](kes_aipp_params* p) {
        // The first release's 8 bytes leave input_format at its default (none), which
        // validation then asks for: the struct itself was accepted.
        const kes_status st = kes_aipp_params_validate(p);
        if (p->struct_size <= 8 && std::strstr(kes_last_error(), "input_format is required")) return KES_OK;
        return st;
    });
}

TEST(AippExecute, ExecConfigGrowsWithoutBreakingApps) {
    kes_aipp_params params;
    kes_aipp_params_init(&params);
    ASSERT_EQ(kes_aipp_params_apply_recipe(&params, KES_AIPP_RECIPE_IMAGENET, KES_AIPP_YUV420SP_U8,
                                           KES_AIPP_CSC_YUV2RGB_BT601_WIDE),
              KES_OK)
        << kes_last_error();
    Image img(KES_PIXEL_NV12, 64, 64);
    Tensor out(KES_F32, KES_LAYOUT_NCHW, 1, 3, 64, 64);
    kes_aipp_exec_config cfg;
    kes_aipp_exec_config_init(&cfg);
    expect_struct_growth(cfg, 2 * sizeof(uint32_t),
                         [&](kes_aipp_exec_config* c) { return kes_aipp_execute(&params, c, &img.im, 1, &out.t); });
}
