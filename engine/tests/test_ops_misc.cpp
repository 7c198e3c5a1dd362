// Resize, Pad, Cast, Gather, Shape, Size, ConstantOfShape, Range (ops/misc.cpp). Resize against small
// cases from the ONNX operator docs (expected values hand-checked against the formulas).
#include <limits>

#include "op_test_util.hpp"

namespace kes_test {
namespace {

std::vector<float> iota1(int64_t n) {  // 1..n
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
    return v;
}

TT resize(const A& attrs, const TT& x, const std::vector<float>& scales, const std::vector<int64_t>& sizes,
          const std::vector<float>& roi = {}) {
    const TT r = konst(f32({static_cast<int64_t>(roi.size())}, roi));
    const TT s = konst(f32({static_cast<int64_t>(scales.size())}, scales));
    const TT z = ints(sizes);
    if (sizes.empty()) return run1("Resize", attrs, {&x, roi.empty() ? nullptr : &r, &s});
    return run1("Resize", attrs, {&x, roi.empty() ? nullptr : &r, scales.empty() ? &s : nullptr, &z});
}

TEST(OpsResize, NearestModesFromOnnxDocs) {
    const TT x = f32({1, 1, 2, 2}, iota1(4));
    TT y = resize(A().s("mode", "nearest"), x, {1, 1, 2, 3}, {});
    EXPECT_EQ(y.shape, (Shape{1, 1, 4, 6}));
    EXPECT_EQ(y.f(), (std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
    const TT x24 = f32({1, 1, 2, 4}, iota1(8));
    y = resize(A().s("mode", "nearest"), x24, {1, 1, 0.6f, 0.6f}, {});
    EXPECT_EQ(y.shape, (Shape{1, 1, 1, 2}));
    EXPECT_EQ(y.f(), (std::vector<float>{1, 3}));

    const TT x4 = f32({1, 1, 4, 4}, iota1(16));
    auto row0 = [](const TT& t) {
        const std::vector<float> v = t.f();
        return std::vector<float>(v.begin(), v.begin() + 8);
    };
    y = resize(A().s("mode", "nearest").s("nearest_mode", "ceil"), x4, {}, {1, 1, 8, 8});
    EXPECT_EQ(row0(y), (std::vector<float>{1, 2, 2, 3, 3, 4, 4, 4}));
    y = resize(A().s("mode", "nearest").s("nearest_mode", "floor").s("coordinate_transformation_mode", "align_corners"),
               x4, {}, {1, 1, 8, 8});
    EXPECT_EQ(row0(y), (std::vector<float>{1, 1, 1, 2, 2, 3, 3, 4}));
    y = resize(A().s("mode", "nearest")
                   .s("nearest_mode", "round_prefer_ceil")
                   .s("coordinate_transformation_mode", "asymmetric"),
               x4, {}, {1, 1, 8, 8});
    EXPECT_EQ(row0(y), (std::vector<float>{1, 2, 2, 3, 3, 4, 4, 4}));
    y = resize(A().s("mode", "nearest").s("coordinate_transformation_mode", "asymmetric"), x4, {}, {1, 1, 8, 8});
    EXPECT_EQ(row0(y), (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));  // round_prefer_floor at .5
}

TEST(OpsResize, LinearCoordinateModesFromOnnxDocs) {
    const TT x = f32({1, 1, 2, 2}, iota1(4));
    TT y = resize(A().s("mode", "linear"), x, {1, 1, 2, 2}, {});
    expect_near_all(
        y.f(),
        std::vector<float>{1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4},
        1e-6, "half_pixel");
    y = resize(A().s("mode", "linear").s("coordinate_transformation_mode", "align_corners"), x, {1, 1, 2, 2}, {});
    const double t = 1.0 / 3.0;
    expect_near_all(y.f(),
                    std::vector<double>{1, 1 + t, 1 + 2 * t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t, 2 + t, 2 + 2 * t, 3,
                                        3 + t, 3, 3 + t, 3 + 2 * t, 4},
                    1e-6, "align_corners");
    const TT x24 = f32({1, 1, 2, 4}, iota1(8));
    y = resize(A().s("mode", "linear"), x24, {1, 1, 0.6f, 0.6f}, {});
    expect_near_all(y.f(), std::vector<float>{2.6666665f, 4.3333331f}, 1e-6, "downsample");
    y = resize(A().s("mode", "linear").s("coordinate_transformation_mode", "pytorch_half_pixel"), x24, {},
               {1, 1, 1, 2});
    EXPECT_EQ(y.shape, (Shape{1, 1, 1, 2}));
    expect_near_all(y.f(), std::vector<float>{1.5f, 3.5f}, 1e-6, "pytorch_half_pixel");  // length-1 axis maps to 0
    y = resize(A().s("mode", "linear").s("coordinate_transformation_mode", "asymmetric"), x, {1, 1, 2, 2}, {});
    const std::vector<float> yv = y.f();
    expect_near_all(std::vector<float>(yv.begin(), yv.begin() + 4), std::vector<float>{1, 1.5f, 2, 2}, 1e-6,
                    "asymmetric");
}

TEST(OpsResize, CubicAndCropAndResizeFromOnnxDocs) {
    const TT x4 = f32({1, 1, 4, 4}, iota1(16));
    TT y = resize(A().s("mode", "cubic"), x4, {1, 1, 2, 2}, {});
    const std::vector<float> v = y.f();
    expect_near_all(std::vector<float>(v.begin(), v.begin() + 8),
                    std::vector<float>{0.47265625f, 0.76953125f, 1.24609375f, 1.875f, 2.28125f, 2.91015625f,
                                       3.38671875f, 3.68359375f},
                    1e-5, "cubic");
    y = resize(A().s("mode", "linear").s("coordinate_transformation_mode", "tf_crop_and_resize"), x4, {}, {1, 1, 3, 3},
               {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f});
    expect_near_all(y.f(), std::vector<float>{7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10.0f, 10.3f, 10.6f}, 1e-5, "crop");
    y = resize(A().s("mode", "linear")
                   .s("coordinate_transformation_mode", "tf_crop_and_resize")
                   .f("extrapolation_value", 10.0f),
               x4, {}, {1, 1, 3, 3}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f});
    expect_near_all(y.f(), std::vector<float>{7.6f, 10, 10, 12.4f, 10, 10, 10, 10, 10}, 1e-5, "extrapolation");
}

TEST(OpsResize, NhwcAxesAndErrors) {
    // Interpolation over dims 1 and 2 of an NHWC tensor equals the NCHW result transposed.
    const TT x = f32({1, 2, 3, 3}, random_floats(18, 5));
    Shape xs, ys;
    const TT xh = f32({1, 3, 3, 2}, transpose_ref(x.f(), x.shape, {0, 2, 3, 1}, &xs));
    const TT y = resize(A().s("mode", "linear"), x, {1, 1, 1.5f, 2}, {});
    const TT yh = resize(A().s("mode", "linear"), xh, {1, 1.5f, 2, 1}, {});
    expect_near_all(yh.f(), transpose_ref(y.f(), y.shape, {0, 2, 3, 1}, &ys), 1e-6, "nhwc");
    const TT ya = resize(A().s("mode", "linear").is("axes", {2, 3}), x, {1.5f, 2}, {});
    EXPECT_EQ(ya.f(), y.f());
    // keep_aspect_ratio_policy: one scale for both axes (ONNX resize_upsample_sizes_nearest_not_larger).
    const TT x22 = f32({1, 1, 2, 2}, iota1(4));
    EXPECT_EQ(resize(A().s("keep_aspect_ratio_policy", "not_larger").is("axes", {2, 3}), x22, {}, {7, 8}).shape,
              (Shape{1, 1, 7, 7}));
    EXPECT_EQ(resize(A().s("keep_aspect_ratio_policy", "not_smaller").is("axes", {2, 3}), x22, {}, {7, 8}).shape,
              (Shape{1, 1, 8, 8}));
    const TT s = konst(f32({4}, {1, 1, 2, 2}));
    const TT z = ints({1, 2, 6, 6});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "exactly one", "Resize", A(), {&x, nullptr, &s, &z});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'mode'", "Resize", A().s("mode", "area"), {&x, nullptr, &s});
    const TT rs = f32({4}, {1, 1, 2, 2});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "scales", "Resize", A(), {&x, nullptr, &rs});
}

// ---- Pad ------------------------------------------------------------------------------------------------

int64_t pad_source(int64_t i, int64_t dim, const std::string& mode) {  // -1: constant
    if (i >= 0 && i < dim) return i;
    if (mode == "constant") return -1;
    if (mode == "edge") return i < 0 ? 0 : dim - 1;
    if (mode == "wrap") {
        while (i < 0) i += dim;
        return i % dim;
    }
    if (dim == 1) return 0;
    while (i < 0 || i >= dim) i = i < 0 ? -i : 2 * (dim - 1) - i;  // bounce off the ends
    return i;
}

TEST(OpsPad, ModesAgainstReference) {
    const TT x = f32({2, 3, 4}, iota1(24));
    const std::vector<int64_t> pads = {1, 0, 2, 0, 2, 3};  // begins then ends
    for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
        const TT p = ints(pads), cv = konst(f32({}, {-7.5f}));
        const TT y = run1("Pad", A().s("mode", mode), {&x, &p, &cv});
        const Shape out{2 + 1 + 0, 3 + 0 + 2, 4 + 2 + 3};
        ASSERT_EQ(y.shape, out) << mode;
        std::vector<float> want;
        for (int64_t i = 0; i < product(out); ++i) {
            const std::vector<int64_t> o = unravel(i, out);
            std::vector<int64_t> src(3);
            bool constant = false;
            for (size_t d = 0; d < 3; ++d) {
                src[d] = pad_source(o[d] - pads[d], x.shape[d], mode);
                constant |= src[d] < 0;
            }
            want.push_back(constant ? -7.5f : x.f()[static_cast<size_t>(ravel(src, x.shape))]);
        }
        EXPECT_EQ(y.f(), want) << mode;
    }
    // ONNX doc example (reflect) and negative pads (crop), opset-18 axes.
    const TT d = f32({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
    const TT p2 = ints({0, 2, 0, 0});
    EXPECT_EQ(run1("Pad", A().s("mode", "reflect"), {&d, &p2}).f(),
              (std::vector<float>{1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}));
    const TT crop = ints({-1, 0, 0, 1});
    const TT yc = run1("Pad", A(), {&d, &crop});
    EXPECT_EQ(yc.shape, (Shape{2, 3}));
    EXPECT_EQ(yc.f(), (std::vector<float>{2.3f, 3.4f, 0, 4.5f, 5.7f, 0}));
    const TT p1 = ints({1, 1}), ax = ints({-1});
    EXPECT_EQ(run1("Pad", A().s("mode", "edge"), {&d, &p1, nullptr, &ax}).shape, (Shape{3, 4}));
    const TT ii = i64({2}, {5, 6}, false), cvi = i64({}, {9});
    EXPECT_EQ(run1("Pad", A(), {&ii, &p1, &cvi}).values<int64_t>(), (std::vector<int64_t>{9, 5, 6, 9}));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'mode'", "Pad", A().s("mode", "symmetric"), {&d, &p2});
    const TT bad = ints({1, 1});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "pads", "Pad", A(), {&d, &bad});
}

// ---- Cast -----------------------------------------------------------------------------------------------

TEST(OpsCast, ConversionsAndEdgeCases) {
    const TT x = f32({6}, {1.7f, -2.9f, NAN, 1e20f, -1e20f, 0.0f});
    EXPECT_EQ(run1("Cast", A().i("to", 6), {&x}).values<int32_t>(),
              (std::vector<int32_t>{1, -2, 0, INT32_MAX, INT32_MIN, 0}));
    EXPECT_EQ(run1("Cast", A().i("to", 2), {&x}).values<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 255, 0, 0}));
    EXPECT_EQ(run1("Cast", A().i("to", 9), {&x}).values<uint8_t>(), (std::vector<uint8_t>{1, 1, 1, 1, 1, 0}));
    const TT h = run1("Cast", A().i("to", 10), {&x});
    EXPECT_EQ(h.dtype, KES_F16);
    EXPECT_EQ(h.values<uint16_t>()[0], kes_fp16_from_float(1.7f));
    EXPECT_EQ(h.values<uint16_t>()[3], 0x7C00);  // +inf
    const TT back = run1("Cast", A().i("to", 1), {&h});
    EXPECT_EQ(back.f()[0], kes_fp16_to_float(kes_fp16_from_float(1.7f)));
    const TT d = run1("Cast", A().i("to", 11), {&x});
    EXPECT_EQ(d.values<double>()[1], double(-2.9f));
    const TT big = i64({2}, {int64_t(1) << 40, -5}, false);
    EXPECT_EQ(run1("Cast", A().i("to", 6), {&big}).values<int32_t>(), (std::vector<int32_t>{INT32_MAX, -5}));
    EXPECT_EQ(run1("Cast", A().i("to", 1), {&big}).f(), (std::vector<float>{1099511627776.0f, -5.0f}));
    const TT b = boolean({3}, {1, 0, 1});
    EXPECT_EQ(run1("Cast", A().i("to", 1), {&b}).f(), (std::vector<float>{1, 0, 1}));
    EXPECT_EQ(run1("Cast", A().i("to", 7), {&b}).values<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "ONNX data type 8", "Cast", A().i("to", 8), {&x});  // string
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'to'", "Cast", A(), {&x});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'to' is string", "Cast", A().s("to", "float"), {&x});
}

// ---- shape helpers --------------------------------------------------------------------------------------

TEST(OpsShapeHelpers, ShapeSizeConstantOfShapeRange) {
    const TT x = f32({2, 3, 4, 5}, std::vector<float>(120));
    EXPECT_EQ(run1("Shape", A(), {&x}).values<int64_t>(), (std::vector<int64_t>{2, 3, 4, 5}));
    EXPECT_EQ(run1("Shape", A().i("start", 1).i("end", -1), {&x}).values<int64_t>(), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(run1("Shape", A().i("start", -10).i("end", 10), {&x}).values<int64_t>().size(), 4u);
    const TT sz = run1("Size", A(), {&x});
    EXPECT_EQ(sz.shape, Shape{});
    EXPECT_EQ(sz.values<int64_t>(), (std::vector<int64_t>{120}));
    const TT s = ints({2, 3});
    const TT c = run1("ConstantOfShape", A().f("value", 1.5f), {&s});
    EXPECT_EQ(c.shape, (Shape{2, 3}));
    EXPECT_EQ(c.f(), std::vector<float>(6, 1.5f));
    const TT ci = run1("ConstantOfShape", A().i("value", -3).i("dtype", 7), {&s});
    EXPECT_EQ(ci.values<int64_t>(), std::vector<int64_t>(6, -3));
    EXPECT_EQ(run1("ConstantOfShape", A(), {&s}).f(), std::vector<float>(6, 0.0f));
    const TT rt = i64({2}, {2, 3}, false);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "constant", "ConstantOfShape", A(), {&rt});

    const TT a = konst(f32({}, {1.0f})), l = konst(f32({}, {2.0f})), dl = konst(f32({}, {0.25f}));
    EXPECT_EQ(run1("Range", A(), {&a, &l, &dl}).f(), (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
    const TT ia = i64({}, {10}), il = i64({}, {4}), id = i64({}, {-3});
    EXPECT_EQ(run1("Range", A(), {&ia, &il, &id}).values<int64_t>(), (std::vector<int64_t>{10, 7}));
    const TT e = i64({}, {5}), e2 = i64({}, {1});
    EXPECT_EQ(run1("Range", A(), {&e, &il, &e2}).shape, (Shape{0}));
}

TEST(OpsGather, AxesNegativeIndicesAndRuntimeRangeCheck) {
    const TT x = f32({3, 4}, iota1(12));
    const TT idx = i64({2, 2}, {0, -1, 2, 1}, false);
    TT y = run1("Gather", A(), {&x, &idx});
    EXPECT_EQ(y.shape, (Shape{2, 2, 4}));
    std::vector<float> want;
    for (int64_t r : {0, 2, 2, 1})
        for (int64_t c = 0; c < 4; ++c) want.push_back(float(r * 4 + c + 1));
    EXPECT_EQ(y.f(), want);
    const TT i1 = i32({2}, {-4, 3});
    y = run1("Gather", A().i("axis", 1), {&x, &i1});
    EXPECT_EQ(y.shape, (Shape{3, 2}));
    EXPECT_EQ(y.f(), (std::vector<float>{1, 4, 5, 8, 9, 12}));
    const TT scalar = i64({}, {1}, false);
    y = run1("Gather", A(), {&x, &scalar});
    EXPECT_EQ(y.shape, (Shape{4}));
    const TT shp = i64({4}, {2, 3, 4, 5}, false), k = i64({}, {0}, false);
    EXPECT_EQ(run1("Gather", A(), {&shp, &k}).values<int64_t>(), (std::vector<int64_t>{2}));
    // Out of range at run time → INVALID_ARGUMENT, and nothing outside the tensors is touched.
    const TT bad = i64({1}, {3}, false);
    try {
        run1("Gather", A(), {&x, &bad});
        ADD_FAILURE() << "no error";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos);
    }
    const TT fidx = f32({1}, {0});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "indices", "Gather", A(), {&x, &fidx});
}

TEST(OpsGatherElements, AxesAndRangeCheck) {
    const TT x = f32({2, 3}, iota1(6));
    const TT idx = i64({2, 2}, {0, 2, -1, 0}, false);
    EXPECT_EQ(run1("GatherElements", A().i("axis", 1), {&x, &idx}).f(), (std::vector<float>{1, 3, 6, 4}));
    const TT idx0 = i32({1, 3}, {1, 0, 1});
    EXPECT_EQ(run1("GatherElements", A(), {&x, &idx0}).f(), (std::vector<float>{4, 2, 6}));
    const TT bad = i64({1, 1}, {2}, false);
    EXPECT_THROW(run1("GatherElements", A(), {&x, &bad}), kes::Error);
}

TEST(OpsQuantize, DequantizeQuantizePerTensorAndPerAxis) {
    const TT q = make_tensor<uint8_t>(KES_U8, {2, 3}, {0, 128, 255, 10, 20, 30}, false);
    const TT scale = konst(f32({}, {0.5f}));
    const TT zp = make_tensor<uint8_t>(KES_U8, {}, {128}, true);
    EXPECT_EQ(run1("DequantizeLinear", A(), {&q, &scale, &zp}).f(), (std::vector<float>{-64, 0, 63.5f, -59, -54, -49}));
    const TT s3 = konst(f32({3}, {1.0f, 2.0f, 4.0f}));
    EXPECT_EQ(run1("DequantizeLinear", A().i("axis", 1), {&q, &s3}).f(),
              (std::vector<float>{0, 256, 1020, 10, 40, 120}));
    const TT x = f32({4}, {-1.0f, 0.25f, 0.75f, 1000.0f});
    const TT qs = konst(f32({}, {0.5f}));
    const TT z8 = make_tensor<int8_t>(KES_I8, {}, {1}, true);
    const TT y = run1("QuantizeLinear", A(), {&x, &qs, &z8});
    EXPECT_EQ(y.dtype, KES_I8);
    EXPECT_EQ(y.values<int8_t>(), (std::vector<int8_t>{-1, 1, 3, 127}));  // 0.5 → 0 and 1.5 → 2: half to even
    EXPECT_EQ(run1("QuantizeLinear", A(), {&x, &qs}).values<uint8_t>(), (std::vector<uint8_t>{0, 0, 2, 255}));
}

TEST(OpsShapeHelpers, EyeLikeCastLike) {
    const TT x = f32({2, 3}, std::vector<float>(6));
    EXPECT_EQ(run1("EyeLike", A().i("k", 1), {&x}).f(), (std::vector<float>{0, 1, 0, 0, 0, 1}));
    EXPECT_EQ(run1("EyeLike", A().i("dtype", 7), {&x}).values<int64_t>(), (std::vector<int64_t>{1, 0, 0, 0, 1, 0}));
    const TT v = f32({2}, {2.7f, -1.2f});
    const TT like = i32({0}, {});
    const TT y = run1("CastLike", A(), {&v, &like});
    EXPECT_EQ(y.dtype, KES_I32);
    EXPECT_EQ(y.values<int32_t>(), (std::vector<int32_t>{2, -1}));
}

TEST(OpsOneHotScatter, OneHotAndScatterElements) {
    const TT idx = i64({3}, {0, -1, 7}, false);
    const TT depth = i64({}, {3});
    const TT vals = f32({2}, {-1.0f, 5.0f});
    const TT y = run1("OneHot", A(), {&idx, &depth, &vals});
    EXPECT_EQ(y.shape, (Shape{3, 3}));
    EXPECT_EQ(y.f(), (std::vector<float>{5, -1, -1, -1, -1, 5, -1, -1, -1}));
    const TT y0 = run1("OneHot", A().i("axis", 0), {&idx, &depth, &vals});
    EXPECT_EQ(y0.f(), (std::vector<float>{5, -1, -1, -1, -1, -1, -1, 5, -1}));
    const TT rt = i64({}, {3}, false);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "depth", "OneHot", A(), {&idx, &rt, &vals});

    const TT data = f32({3, 3}, std::vector<float>(9, 1.0f));
    const TT si = i64({2, 3}, {1, 0, 2, 0, 2, -1}, false);
    const TT up = f32({2, 3}, {1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f});
    EXPECT_EQ(run1("ScatterElements", A(), {&data, &si, &up}).f(),
              (std::vector<float>{4.5f, 2.5f, 1, 1.5f, 1, 1, 1, 5.5f, 6.5f}));
    EXPECT_EQ(run1("ScatterElements", A().s("reduction", "add").i("axis", 1), {&data, &si, &up}).f(),
              (std::vector<float>{3.5f, 2.5f, 4.5f, 5.5f, 1, 13, 1, 1, 1}));
    const TT bad = i64({1, 1}, {3}, false), u1 = f32({1, 1}, {0});
    EXPECT_THROW(run1("ScatterElements", A(), {&data, &bad, &u1}), kes::Error);
}

TEST(OpsGatherScatterNd, OnnxDocExamples) {
    // gathernd_example_int32 / float32 and batch_dims = 1 (ONNX operator docs).
    const TT d = i32({2, 2}, {0, 1, 2, 3});
    const TT i1 = i64({2, 2}, {0, 0, 1, 1}, false);
    EXPECT_EQ(run1("GatherND", A(), {&d, &i1}).values<int32_t>(), (std::vector<int32_t>{0, 3}));
    const TT i2 = i64({2, 1}, {1, 0}, false);
    EXPECT_EQ(run1("GatherND", A(), {&d, &i2}).values<int32_t>(), (std::vector<int32_t>{2, 3, 0, 1}));
    const TT d3 = f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    const TT ib = i64({2, 1}, {1, 0}, false);
    const TT yb = run1("GatherND", A().i("batch_dims", 1), {&d3, &ib});
    EXPECT_EQ(yb.shape, (Shape{2, 2}));
    EXPECT_EQ(yb.f(), (std::vector<float>{2, 3, 4, 5}));
    const TT bad = i64({1, 2}, {0, 2}, false);
    EXPECT_THROW(run1("GatherND", A(), {&d, &bad}), kes::Error);

    const TT data = f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
    const TT si = i64({4, 1}, {4, 3, 1, 7}, false);
    const TT up = f32({4}, {9, 10, 11, 12});
    EXPECT_EQ(run1("ScatterND", A(), {&data, &si, &up}).f(), (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
    const TT si2 = i64({2, 1}, {0, 0}, false), up2 = f32({2}, {5, 6});
    EXPECT_EQ(run1("ScatterND", A().s("reduction", "add"), {&data, &si2, &up2}).f()[0], 12.0f);
    EXPECT_EQ(run1("ScatterND", A().s("reduction", "mul"), {&data, &si2, &up2}).f()[0], 30.0f);
}

// Values a hostile .kom could carry: rejected with a status or handled, never undefined behaviour
// (this binary runs under UBSan in CI).
TEST(OpsHostile, ExtremeAttributesAndInputs) {
    const TT x = f32({1, 1, 4, 4}, iota1(16));
    const TT w = konst(f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f)));
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "'pads'", "Conv", A().is("pads", {INT64_MAX, 0, 0, 0}), {&x, &w});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "'dilations'", "MaxPool",
                        A().is("kernel_shape", {2, 2}).is("dilations", {INT64_MAX, 1}), {&x});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "'strides'", "ConvTranspose", A().is("strides", {INT64_MAX, 1}), {&x, &w});
    const TT p = ints({0, 0, INT64_MAX / 2, 0, 0, 0, 0, 0});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "pad", "Pad", A(), {&x, &p});
    const TT st = ints({INT64_MIN}), en = ints({INT64_MAX}), ax = ints({3}), step = ints({INT64_MIN});
    EXPECT_EQ(run1("Slice", A(), {&x, &en, &st, &ax, &step}).shape, (Shape{1, 1, 4, 1}));  // one element
    const TT step_max = ints({INT64_MAX});
    EXPECT_EQ(run1("Slice", A(), {&x, &st, &en, &ax, &step_max}).f(), (std::vector<float>{1, 5, 9, 13}));
    const TT big_scales = konst(f32({4}, {1, 1, 1e30f, 1}));
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "Resize output", "Resize", A(), {&x, nullptr, &big_scales});
    const TT nan_roi = konst(f32({8}, {0, 0, NAN, 0, 1, 1, 1, 1}));
    const TT sizes = ints({1, 1, 2, 2});
    const TT y = run1("Resize", A().s("mode", "linear").s("coordinate_transformation_mode", "tf_crop_and_resize"),
                      {&x, &nan_roi, nullptr, &sizes});
    EXPECT_EQ(y.f(), (std::vector<float>{0, 0, 0, 0}));  // NaN coordinates → extrapolation_value
    const TT nan = konst(f32({}, {NAN})), one = konst(f32({}, {1.0f}));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "finite", "Range", A(), {&nan, &one, &one});
    const TT huge = konst(f32({}, {-1e38f}));
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "2^26", "Range", A(), {&huge, &one, &one});
    const TT idx = i64({1}, {0}, false), depth = konst(f32({}, {1e30f})), vals = f32({2}, {0, 1});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "depth", "OneHot", A(), {&idx, &depth, &vals});
    const TT empty = f32({0, 3}, {});
    const TT pz = ints({0, 1000000, 0, 0});
    EXPECT_EQ(run1("Pad", A(), {&empty, &pz}).shape, (Shape{0, 1000003}));
}

TEST(OpsRegistry, AllFamiliesRegisteredAndCounterCounts) {
    for (const char* op : {"Conv", "Add", "Reshape", "Softmax", "Resize", "ReduceMean", "Cast", "Gather"})
        EXPECT_NE(kes::find_op(op), nullptr) << op;
    EXPECT_EQ(kes::find_op("NoSuchOp"), nullptr);
    // The allocation counter used by run_op does see allocations.
    start_counting();
    std::vector<int>* p = new std::vector<int>(3);
    delete p;
    EXPECT_GT(stop_counting(), 0u);
}

}  // namespace
}  // namespace kes_test
