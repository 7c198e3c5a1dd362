// A model converted with --insert-op-conf (ATC's AIPP insertion) consumes an NV12 image: the app reads
// the model's aipp_op text, runs AIPP with it and executes. Its output must equal the un-AIPP'd model
// fed the same tensor made with the app's own AIPP parameters (bit for bit), and agree with a model fed
// a tensor computed here in double precision from the NV12 pixels (the AIPP semantics themselves).
// kes_model_execute_images, where the model consumes the image itself as on a board, gives the same bits.
// Public APIs only: convert.h, engine.h, aipp.h, image.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "kestrel/kestrel.h"

namespace {

constexpr uint32_t kSize = 16;
const std::string kModel = std::string(KES_SOURCE_DIR) + "/tests/integration/data/tiny_rgb_net.onnx";

std::vector<uint8_t> convert(const char* aipp_cfg_path) {
    kes_convert_options opt;
    EXPECT_EQ(kes_convert_options_init(&opt), KES_OK);
    opt.insert_op_conf = aipp_cfg_path;
    void* kom = nullptr;
    size_t size = 0;
    std::ifstream f(kModel, std::ios::binary);
    std::vector<char> onnx((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_FALSE(onnx.empty()) << kModel;
    EXPECT_EQ(kes_convert_memory(onnx.data(), onnx.size(), &opt, &kom, &size, nullptr), KES_OK) << kes_last_error();
    std::vector<uint8_t> bytes(static_cast<uint8_t*>(kom), static_cast<uint8_t*>(kom) + size);
    kes_convert_free(kom);
    return bytes;
}

struct LoadedModel {
    kes_model* model = nullptr;
    kes_model_context* ctx = nullptr;
    explicit LoadedModel(const std::vector<uint8_t>& kom) {
        EXPECT_EQ(kes_model_load_from_memory(kom.data(), kom.size(), &model), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK) << kes_last_error();
    }
    ~LoadedModel() {
        kes_model_context_destroy(ctx);
        kes_model_unload(model);
    }
    std::vector<float> execute(kes_tensor& in) {
        std::vector<float> y(4);
        const int64_t shape[4] = {1, 4, 1, 1};
        kes_tensor out;
        EXPECT_EQ(kes_tensor_wrap(&out, KES_F32, KES_LAYOUT_NCHW, 4, shape, y.data(), 16), KES_OK);
        in.layout = KES_LAYOUT_NCHW;
        EXPECT_EQ(kes_model_execute(ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();
        return y;
    }
};

// A 16×16 NV12 image with smooth colour gradients.
kes_image make_nv12() {
    kes_image img;
    EXPECT_EQ(kes_image_alloc(&img, nullptr, KES_PIXEL_NV12, kSize, kSize, kSize, kSize), KES_OK) << kes_last_error();
    auto* y = static_cast<uint8_t*>(img.data);
    uint8_t* uv = y + kSize * kSize;
    for (uint32_t r = 0; r < kSize; ++r)
        for (uint32_t c = 0; c < kSize; ++c) y[r * kSize + c] = static_cast<uint8_t>(30 + 12 * c + 3 * r);
    for (uint32_t r = 0; r < kSize / 2; ++r)
        for (uint32_t c = 0; c < kSize / 2; ++c) {
            uv[r * kSize + 2 * c] = static_cast<uint8_t>(90 + 10 * c);
            uv[r * kSize + 2 * c + 1] = static_cast<uint8_t>(170 - 9 * r);
        }
    return img;
}

kes_tensor alloc_input(std::vector<float>& storage) {
    storage.assign(3 * kSize * kSize, 0.0f);
    const int64_t shape[4] = {1, 3, kSize, kSize};
    kes_tensor t;
    EXPECT_EQ(kes_tensor_wrap(&t, KES_F32, KES_LAYOUT_NCHW, 4, shape, storage.data(), storage.size() * 4), KES_OK);
    return t;
}

}  // namespace

TEST(AippModel, AippModelOnNv12EqualsPlainModelOnTheSameTensor) {
    // The app's AIPP: NV12 (JPEG full-range BT.601) → RGB, (x − 127.5)/128, written as an ATC cfg.
    kes_aipp_params params;
    kes_aipp_params_init(&params);
    ASSERT_EQ(kes_aipp_params_apply_recipe(&params, KES_AIPP_RECIPE_RGB_CENTERED, KES_AIPP_YUV420SP_U8,
                                           KES_AIPP_CSC_YUV2RGB_BT601_WIDE),
              KES_OK)
        << kes_last_error();
    size_t needed = 0;
    kes_aipp_params_serialize(&params, 1, nullptr, 0, &needed);  // size query: "too small", needed set
    ASSERT_GT(needed, 0u) << kes_last_error();
    std::string cfg(needed + 1, '\0');
    ASSERT_EQ(kes_aipp_params_serialize(&params, 1, &cfg[0], cfg.size(), &needed), KES_OK) << kes_last_error();
    cfg.resize(std::strlen(cfg.c_str()));
    const std::string cfg_path = std::string(KES_TEST_TMPDIR) + "/tiny_rgb_net_aipp.cfg";
    std::ofstream(cfg_path) << cfg;

    const std::vector<uint8_t> plain_kom = convert(nullptr), aipp_kom = convert(cfg_path.c_str());
    LoadedModel plain(plain_kom), with_aipp(aipp_kom);

    // The model carries the cfg; the app parses it back into AIPP parameters.
    const char* text = nullptr;
    ASSERT_EQ(kes_model_input_aipp(with_aipp.model, 0, &text), KES_OK);
    ASSERT_NE(text, nullptr) << "the converted model lost its AIPP config";
    kes_aipp_config* parsed = nullptr;
    ASSERT_EQ(kes_aipp_config_parse(text, std::strlen(text), "model", &parsed), KES_OK) << kes_last_error();
    kes_aipp_params from_model;
    kes_aipp_params_init(&from_model);  // sets struct_size, which find_input checks
    ASSERT_EQ(kes_aipp_config_find_input(parsed, 0, &from_model), KES_OK) << kes_last_error();
    kes_aipp_config_destroy(parsed);
    const char* none = nullptr;
    ASSERT_EQ(kes_model_input_aipp(plain.model, 0, &none), KES_OK);
    EXPECT_EQ(none, nullptr);

    kes_image img = make_nv12();
    std::vector<float> a_buf, b_buf;
    kes_tensor a = alloc_input(a_buf), b = alloc_input(b_buf);
    ASSERT_EQ(kes_aipp_execute(&from_model, nullptr, &img, 1, &a), KES_OK) << kes_last_error();  // model's AIPP
    ASSERT_EQ(kes_aipp_execute(&params, nullptr, &img, 1, &b), KES_OK) << kes_last_error();      // app's own
    const std::vector<float> y_aipp = with_aipp.execute(a), y_plain = plain.execute(b);
    EXPECT_EQ(y_aipp, y_plain);
    double magnitude = 0;
    for (float v : y_aipp) magnitude += std::fabs(v);
    EXPECT_GT(magnitude, 0.05) << "the net's outputs are all ~0: the comparison would prove nothing";

    // The equivalent tensor from first principles: JFIF YUV → RGB, then (x − 127.5)/128.
    std::vector<float> ref_buf;
    kes_tensor ref = alloc_input(ref_buf);
    const auto* yp = static_cast<const uint8_t*>(img.data);
    const uint8_t* uvp = yp + kSize * kSize;
    for (uint32_t r = 0; r < kSize; ++r)
        for (uint32_t c = 0; c < kSize; ++c) {
            const double Y = yp[r * kSize + c], U = uvp[(r / 2) * kSize + (c / 2) * 2] - 128.0,
                         V = uvp[(r / 2) * kSize + (c / 2) * 2 + 1] - 128.0;
            const double rgb[3] = {Y + 1.402 * V, Y - 0.344136 * U - 0.714136 * V, Y + 1.772 * U};
            for (int ch = 0; ch < 3; ++ch) {
                const double v = std::fmin(255.0, std::fmax(0.0, rgb[ch]));
                ref_buf[(ch * kSize + r) * kSize + c] = static_cast<float>((v - 127.5) / 128.0);
            }
        }
    const std::vector<float> y_ref = plain.execute(ref);
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y_aipp[i], y_ref[i], 0.02) << "output " << i;

    // As on a board, the AIPP model consumes the NV12 image itself: the same bits as the app's path.
    std::vector<float> y_images(4, NAN);
    const int64_t out_shape[4] = {1, 4, 1, 1};
    kes_tensor out;
    ASSERT_EQ(kes_tensor_wrap(&out, KES_F32, KES_LAYOUT_NCHW, 4, out_shape, y_images.data(), 16), KES_OK);
    kes_model_input image_input = {nullptr, &img, 1};
    ASSERT_EQ(kes_model_execute_images(with_aipp.ctx, &image_input, 1, &out, 1), KES_OK) << kes_last_error();
    EXPECT_EQ(y_images, y_aipp);
    kes_test::start_counting_all_threads();  // AIPP on the pool's workers included
    const kes_status again = kes_model_execute_images(with_aipp.ctx, &image_input, 1, &out, 1);
    EXPECT_EQ(kes_test::stop_counting_all_threads(), 0u) << "kes_model_execute_images allocated";
    EXPECT_EQ(again, KES_OK) << kes_last_error();

    // The same on the context's queue: several images in flight, each result as the synchronous one.
    std::vector<std::vector<float>> queued(3, std::vector<float>(4, NAN));
    std::vector<kes_tensor> queued_out(3);
    for (size_t k = 0; k < queued.size(); ++k) {
        ASSERT_EQ(kes_tensor_wrap(&queued_out[k], KES_F32, KES_LAYOUT_NCHW, 4, out_shape, queued[k].data(), 16),
                  KES_OK);
        ASSERT_EQ(kes_model_execute_images_async(with_aipp.ctx, &image_input, 1, &queued_out[k], 1, nullptr, nullptr),
                  KES_OK)
            << kes_last_error();
    }
    ASSERT_EQ(kes_model_context_wait(with_aipp.ctx), KES_OK) << kes_last_error();
    for (const std::vector<float>& y : queued) EXPECT_EQ(y, y_aipp);
    // Argument errors found by the worker reach kes_model_context_wait.
    kes_model_input no_images = {nullptr, nullptr, 0};
    ASSERT_EQ(kes_model_execute_images_async(with_aipp.ctx, &no_images, 1, &out, 1, nullptr, nullptr), KES_OK);
    EXPECT_EQ(kes_model_context_wait(with_aipp.ctx), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("carries AIPP"), std::string::npos) << kes_last_error();

    // Each input gets what it takes, named when it does not.
    kes_model_input tensor_input = {&b, nullptr, 0};
    EXPECT_EQ(kes_model_execute_images(with_aipp.ctx, &tensor_input, 1, &out, 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("carries AIPP"), std::string::npos) << kes_last_error();
    kes_image two[2] = {img, img};
    kes_model_input two_images = {nullptr, two, 2};
    EXPECT_EQ(kes_model_execute_images(with_aipp.ctx, &two_images, 1, &out, 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("2 images for a batch of 1"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_model_execute_images(plain.ctx, &image_input, 1, &out, 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("has no AIPP"), std::string::npos) << kes_last_error();
    // A plain model through the same call takes its tensor as kes_model_execute does.
    std::fill(y_images.begin(), y_images.end(), NAN);
    EXPECT_EQ(kes_model_execute_images(plain.ctx, &tensor_input, 1, &out, 1), KES_OK) << kes_last_error();
    EXPECT_EQ(y_images, y_plain);
    // An image AIPP refuses (wrong size for src_image_size / the model input) is named, not run.
    kes_image small;
    ASSERT_EQ(kes_image_alloc(&small, nullptr, KES_PIXEL_NV12, 8, 8, 8, 8), KES_OK) << kes_last_error();
    kes_model_input small_input = {nullptr, &small, 1};
    EXPECT_NE(kes_model_execute_images(with_aipp.ctx, &small_input, 1, &out, 1), KES_OK);
    EXPECT_NE(std::string(kes_last_error()).find("AIPP"), std::string::npos) << kes_last_error();
    kes_image_release(&small);
    kes_image_release(&img);
}
