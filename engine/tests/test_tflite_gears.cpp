// TFLite's SAME padding follows the dynamic image gear: the importer keeps it as auto_pad SAME_UPPER
// (TF puts the odd pixel after), each gear's kernels resolve it at load, and make_padding_explicit
// writes explicit pads for static shapes.
#include <gtest/gtest.h>

#include <cstring>

#include "convert/convert.hpp"
#include "test_kom_run.hpp"
#include "test_tflite_builder.hpp"

using namespace kes;
using namespace kes_test;

TEST(DynamicImageSize, TfliteSamePaddingFollowsTheGear) {
    // NHWC input: CONV_2D 3x3 stride 2 SAME → AVERAGE_POOL_2D 3x3 stride 2 SAME (TF counts valid pixels).
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 20, 20, 2});
    const int32_t w = tb.f32("w", {3, 3, 3, 2}, ramp(54, 0.5f, -0.2f)), b = tb.f32("b", {3}, {0.1f, 0.2f, 0.3f});
    const int32_t c = tb.tensor("c", {1, 10, 10, 3}), p = tb.tensor("p", {1, 5, 5, 3});
    tb.op(tfl::BuiltinOperator::CONV_2D, {in, w, b}, {c}, tfl::BuiltinOptions::Conv2DOptions,
          tfl::CreateConv2DOptions(tb.fb(), tfl::Padding::SAME, 2, 2, tfl::ActivationFunctionType::RELU).Union());
    tb.op(tfl::BuiltinOperator::AVERAGE_POOL_2D, {c}, {p}, tfl::BuiltinOptions::Pool2DOptions,
          tfl::CreatePool2DOptions(tb.fb(), tfl::Padding::SAME, 2, 2, 3, 3).Union());
    const std::vector<uint8_t> model = tb.finish({in}, {p});

    const std::vector<uint8_t> kom = convert_bytes(model, nullptr, "20,20;13,10");
    Loaded dynamic(kom);
    ASSERT_NE(dynamic.ctx, nullptr);
    ASSERT_EQ(kes_model_context_set_image_size(dynamic.ctx, 13, 10), KES_OK) << kes_last_error();
    kes_tensor desc;
    ASSERT_EQ(kes_model_context_output_desc(dynamic.ctx, 0, &desc), KES_OK);
    EXPECT_EQ(desc.layout, KES_LAYOUT_NHWC);
    EXPECT_EQ(desc.shape[1], 4);  // ceil(ceil(13/2)/2)
    EXPECT_EQ(desc.shape[2], 3);  // ceil(ceil(10/2)/2)

    // The static conversion at 13x10 (pads written out by make_padding_explicit) is the reference.
    const std::vector<uint8_t> fixed_kom = convert_bytes(model, "input:1,13,10,2");
    Loaded fixed(fixed_kom);
    ASSERT_NE(fixed.ctx, nullptr);
    const std::vector<float> x = sine_input(13 * 10 * 2, 1.0f, 0.0f);
    const auto got = run(dynamic.ctx, 1, x);
    const auto want = run(fixed.ctx, 1, x);
    ASSERT_EQ(got[0].size(), 4u * 3 * 3);
    ASSERT_EQ(got[0].size(), want[0].size());
    EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), got[0].size() * sizeof(float)), 0);

    // The static graph really has explicit pads, the dynamic one keeps auto_pad.
    convert::Options opt;
    opt.input_shapes = convert::parse_input_shapes("input:1,13,10,2");
    const ir::Graph g = convert::build_graph(model.data(), model.size(), opt);
    ASSERT_FALSE(g.nodes.empty());
    EXPECT_FALSE(g.nodes[0].attrs.has("auto_pad"));
    // SAME at 13 (→ 7) pads 1+1; at 10 (→ 5) 0+1: the odd pixel after (TF), as [h0, w0, h1, w1].
    EXPECT_EQ(g.nodes[0].attrs.get_ints("pads"), (std::vector<int64_t>{1, 0, 1, 1}));
}

// An FPN step: CONV stride 2 → RESIZE_BILINEAR ×2 → ADD with a full-resolution branch. The ×2 resize
// is imported as scales, so it follows every gear; each gear equals the same network authored at that
// size (a .tflite whose own shapes say so, converted statically).
std::vector<uint8_t> fpn_step(int32_t h, int32_t w) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, h, w, 2});
    const int32_t wd = tb.f32("w_down", {3, 3, 3, 2}, ramp(54, 0.4f, -0.1f));
    const int32_t wf = tb.f32("w_full", {3, 1, 1, 2}, ramp(6, 0.7f, -0.2f));
    const int32_t down = tb.tensor("down", {1, (h + 1) / 2, (w + 1) / 2, 3});
    const int32_t full = tb.tensor("full", {1, h, w, 3}),
                  up = tb.tensor("up", {1, 2 * ((h + 1) / 2), 2 * ((w + 1) / 2), 3});
    const int32_t out = tb.tensor("out", {1, h, w, 3});
    tb.op(tfl::BuiltinOperator::CONV_2D, {in, wd, -1}, {down}, tfl::BuiltinOptions::Conv2DOptions,
          tfl::CreateConv2DOptions(tb.fb(), tfl::Padding::SAME, 2, 2).Union());
    tb.op(tfl::BuiltinOperator::CONV_2D, {in, wf, -1}, {full}, tfl::BuiltinOptions::Conv2DOptions,
          tfl::CreateConv2DOptions(tb.fb(), tfl::Padding::VALID, 1, 1).Union());
    const int32_t size = tb.i32("size", {2}, {2 * ((h + 1) / 2), 2 * ((w + 1) / 2)});
    tb.op(tfl::BuiltinOperator::RESIZE_BILINEAR, {down, size}, {up}, tfl::BuiltinOptions::ResizeBilinearOptions,
          tfl::CreateResizeBilinearOptions(tb.fb(), false, true).Union());
    tb.op(tfl::BuiltinOperator::ADD, {up, full}, {out}, tfl::BuiltinOptions::AddOptions,
          tfl::CreateAddOptions(tb.fb()).Union());
    return tb.finish({in}, {out});
}

TEST(DynamicImageSize, TfliteIntegerResizeFollowsTheGear) {
    const std::vector<uint8_t> kom = convert_bytes(fpn_step(16, 16), nullptr, "16,16;8,12;12,20");
    Loaded dynamic(kom);
    ASSERT_NE(dynamic.ctx, nullptr);
    for (const auto& hw : {std::pair<int32_t, int32_t>{8, 12}, {12, 20}, {16, 16}}) {
        SCOPED_TRACE(std::to_string(hw.first) + "x" + std::to_string(hw.second));
        ASSERT_EQ(kes_model_context_set_image_size(dynamic.ctx, hw.first, hw.second), KES_OK) << kes_last_error();
        const std::vector<uint8_t> authored = convert_bytes(fpn_step(hw.first, hw.second), nullptr);
        Loaded fixed(authored);
        ASSERT_NE(fixed.ctx, nullptr);
        const std::vector<float> x = sine_input(static_cast<size_t>(hw.first * hw.second * 2), 1.0f, 0.0f);
        const auto got = run(dynamic.ctx, 1, x);
        const auto want = run(fixed.ctx, 1, x);
        ASSERT_EQ(got[0].size(), static_cast<size_t>(hw.first * hw.second * 3));
        ASSERT_EQ(got[0].size(), want[0].size());
        EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), got[0].size() * sizeof(float)), 0);
    }
}

// RESIZE to a non-integer ratio of the input (×1.5 up, ×2/3 down): the file's size is a constant, kept
// with the ratio (kes_size_ratio), so each gear resizes its own input by 3/2 (or 2/3) and equals the same
// network authored at that size; a gear whose size the ratio cannot serve is refused at conversion.
std::vector<uint8_t> resize_by(int32_t h, int32_t w, int32_t num, int32_t den, bool bilinear) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, h, w, 2});
    const int32_t wt = tb.f32("w", {3, 1, 1, 2}, ramp(6, 0.6f, -0.3f));
    const int32_t c = tb.tensor("c", {1, h, w, 3});
    const int32_t oh = h * num / den, ow = w * num / den;
    const int32_t out = tb.tensor("out", {1, oh, ow, 3});
    tb.op(tfl::BuiltinOperator::CONV_2D, {in, wt, -1}, {c}, tfl::BuiltinOptions::Conv2DOptions,
          tfl::CreateConv2DOptions(tb.fb(), tfl::Padding::VALID, 1, 1).Union());
    const int32_t size = tb.i32("size", {2}, {oh, ow});
    if (bilinear)
        tb.op(tfl::BuiltinOperator::RESIZE_BILINEAR, {c, size}, {out}, tfl::BuiltinOptions::ResizeBilinearOptions,
              tfl::CreateResizeBilinearOptions(tb.fb(), false, true).Union());
    else
        tb.op(tfl::BuiltinOperator::RESIZE_NEAREST_NEIGHBOR, {c, size}, {out},
              tfl::BuiltinOptions::ResizeNearestNeighborOptions,
              tfl::CreateResizeNearestNeighborOptions(tb.fb(), false, false).Union());
    return tb.finish({in}, {out});
}

TEST(DynamicImageSize, TfliteNonIntegerResizeFollowsTheGear) {
    struct Case {
        int32_t num, den;
        bool bilinear;
        const char* gears;
        std::vector<std::pair<int32_t, int32_t>> sizes;
    };
    const Case cases[] = {{3, 2, true, "12,16;8,10;6,12", {{8, 10}, {6, 12}, {12, 16}}},
                          {2, 3, false, "12,18;9,6;6,12", {{9, 6}, {6, 12}, {12, 18}}}};
    for (const Case& k : cases) {
        SCOPED_TRACE(std::to_string(k.num) + "/" + std::to_string(k.den));
        const std::vector<uint8_t> kom =
            convert_bytes(resize_by(12, k.num > k.den ? 16 : 18, k.num, k.den, k.bilinear), nullptr, k.gears);
        Loaded dynamic(kom);
        ASSERT_NE(dynamic.ctx, nullptr);
        for (const auto& hw : k.sizes) {
            SCOPED_TRACE(std::to_string(hw.first) + "x" + std::to_string(hw.second));
            ASSERT_EQ(kes_model_context_set_image_size(dynamic.ctx, hw.first, hw.second), KES_OK) << kes_last_error();
            kes_tensor desc;
            ASSERT_EQ(kes_model_context_output_desc(dynamic.ctx, 0, &desc), KES_OK);
            EXPECT_EQ(desc.shape[1], hw.first * k.num / k.den);
            EXPECT_EQ(desc.shape[2], hw.second * k.num / k.den);
            const std::vector<uint8_t> authored =
                convert_bytes(resize_by(hw.first, hw.second, k.num, k.den, k.bilinear), nullptr);
            Loaded fixed(authored);
            ASSERT_NE(fixed.ctx, nullptr);
            const std::vector<float> x = sine_input(static_cast<size_t>(hw.first * hw.second * 2), 1.0f, 0.0f);
            const auto got = run(dynamic.ctx, 1, x);
            const auto want = run(fixed.ctx, 1, x);
            ASSERT_EQ(got[0].size(), want[0].size());
            EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), got[0].size() * sizeof(float)), 0);
        }
    }
    // 7 rows by 3/2 is 10.5: that gear cannot be served, and the conversion says which and why.
    const std::vector<uint8_t> model = resize_by(12, 16, 3, 2, true);
    convert::Options opt;
    opt.dynamic_image_sizes = convert::parse_image_sizes("12,16;7,8");
    try {
        convert::build_graph(model.data(), model.size(), opt);
        ADD_FAILURE() << "a gear the ratio cannot serve was accepted";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_UNSUPPORTED) << e.what();
        EXPECT_NE(std::string(e.what()).find("7x8"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not a whole size"), std::string::npos) << e.what();
    }
}
