// test_ops_quant.cpp — the quantized ops (kernels/ref/quant.cpp, rules in ops/quant.hpp): ONNX's own
// examples where the spec gives one, integer references written out here for the convolutions and
// products (exact: the same f32 requantization, docs/ARCHITECTURE.md "Quantized models"), the float ops on the
// dequantized values within 1 LSB, and the errors a bad file gets. ONNX's node tests for QLinearConv,
// QLinearMatMul, ConvInteger, MatMulInteger and DynamicQuantizeLinear run in OnnxConformance.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "op_test_util.hpp"

namespace kes_test {
namespace {

template <class T>
TT q8(Shape s, const std::vector<T>& v, bool c = false) {
    return make_tensor<T>(std::is_same<T, uint8_t>::value ? KES_U8 : KES_I8, std::move(s), v, c);
}
TT scalar_scale(float s) {
    return konst(f32({}, {s}));
}

template <class T>
std::vector<T> random_q(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(std::is_same<T, uint8_t>::value ? 0 : -128,
                                         std::is_same<T, uint8_t>::value ? 255 : 127);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(d(rng));
    return v;
}

int32_t requant_ref(int64_t acc, float mult, int32_t zp, int32_t lo, int32_t hi) {
    const float v = std::nearbyint(static_cast<float>(acc) * mult);
    return static_cast<int32_t>(std::min<float>(std::max<float>(v + static_cast<float>(zp), lo), hi));
}

TEST(OpsQuant, QuantizeLinearRoundsHalfToEvenAndSaturates) {
    const TT x = f32({6}, {-1.0f, 0.25f, 0.75f, 1000.0f, -1000.0f, NAN});
    const TT z8 = q8<int8_t>({}, {1}, true);
    const TT s = scalar_scale(0.5f);
    const TT y = run1("QuantizeLinear", A(), {&x, &s, &z8});
    EXPECT_EQ(y.values<int8_t>(), (std::vector<int8_t>{-1, 1, 3, 127, -128, -128}));  // NaN → qmin, as ORT on x86
}

TEST(OpsQuant, QLinearConvMatchesAnIntegerReferencePerChannelWithBiasAndRelu) {
    const Shape xs{1, 4, 5, 6}, ws{6, 2, 3, 3};  // group 2, stride 2, pads 1, dilation 1
    const TT x = q8<uint8_t>(xs, random_q<uint8_t>(product(xs), 1));
    const TT w = q8<int8_t>(ws, random_q<int8_t>(product(ws), 2), true);
    const std::vector<float> w_scale{0.01f, 0.02f, 0.015f, 0.03f, 0.005f, 0.011f};
    const std::vector<int8_t> w_zp{0, 1, -2, 0, 3, 0};
    const std::vector<int32_t> bias{100, -200, 0, 5000, -7, 33};
    const TT sx = scalar_scale(0.05f), zx = q8<uint8_t>({}, {120}, true);
    const TT sw = konst(f32({6}, w_scale)), zw = q8<int8_t>({6}, w_zp, true);
    const TT sy = scalar_scale(0.4f), zy = q8<uint8_t>({}, {100}, true), b = konst(i32({6}, bias));
    for (bool relu : {false, true}) {
        A attrs;
        attrs.i("group", 2).is("strides", {2, 2}).is("pads", {1, 1, 1, 1});
        if (relu) attrs.s("activation", "Relu");
        const TT y = run1("QLinearConv", attrs, {&x, &sx, &zx, &w, &sw, &zw, &sy, &zy, &b});
        ASSERT_EQ(y.shape, (Shape{1, 6, 3, 3}));
        ASSERT_EQ(y.dtype, KES_U8);
        const std::vector<uint8_t> xv = x.values<uint8_t>(), got = y.values<uint8_t>();
        const std::vector<int8_t> wv = w.values<int8_t>();
        for (int64_t m = 0; m < 6; ++m)
            for (int64_t oy = 0; oy < 3; ++oy)
                for (int64_t ox = 0; ox < 3; ++ox) {
                    int64_t acc = bias[m];
                    const int64_t g = m / 3;
                    for (int64_t c = 0; c < 2; ++c)
                        for (int64_t ky = 0; ky < 3; ++ky)
                            for (int64_t kx = 0; kx < 3; ++kx) {
                                const int64_t iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
                                if (iy < 0 || iy >= 5 || ix < 0 || ix >= 6) continue;
                                acc += (xv[ravel({0, g * 2 + c, iy, ix}, xs)] - 120) *
                                       (wv[ravel({m, c, ky, kx}, ws)] - w_zp[m]);
                            }
                    const float mult = 0.05f * w_scale[m] / 0.4f;
                    EXPECT_EQ(got[ravel({0, m, oy, ox}, {1, 6, 3, 3})],
                              requant_ref(acc, mult, 100, relu ? 100 : 0, 255))
                        << "m " << m << " y " << oy << " x " << ox;
                }
    }
}

TEST(OpsQuant, QLinearConvIsWithinOneStepOfTheFloatConv) {
    const Shape xs{1, 3, 7, 7}, ws{4, 3, 3, 3};
    const TT x = q8<int8_t>(xs, random_q<int8_t>(product(xs), 3));
    const TT w = q8<int8_t>(ws, random_q<int8_t>(product(ws), 4), true);
    const TT sx = scalar_scale(0.02f), zx = q8<int8_t>({}, {-3}, true), sw = scalar_scale(0.004f);
    const TT zw = q8<int8_t>({}, {0}, true), sy = scalar_scale(0.03f), zy = q8<int8_t>({}, {5}, true);
    const TT y = run1("QLinearConv", A().is("pads", {1, 1, 1, 1}), {&x, &sx, &zx, &w, &sw, &zw, &sy, &zy});
    const TT xf = run1("DequantizeLinear", A(), {&x, &sx, &zx});
    const TT wf = run1("DequantizeLinear", A(), {&w, &sw, &zw});
    const TT yf = run1("Conv", A().is("pads", {1, 1, 1, 1}), {&xf, &wf});
    const TT expect = run1("QuantizeLinear", A(), {&yf, &sy, &zy});
    const std::vector<int8_t> a = y.values<int8_t>(), e = expect.values<int8_t>();
    ASSERT_EQ(a.size(), e.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_LE(std::abs(a[i] - e[i]), 1) << i;
}

TEST(OpsQuant, ConvIntegerReadsZeroPointsAtRunTime) {
    const TT x = q8<uint8_t>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
    const TT w = q8<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1}, true);
    const TT zx = q8<uint8_t>({}, {1});  // not constant: DynamicQuantizeLinear's output in real models
    const TT y = run1("ConvInteger", A(), {&x, &w, &zx});
    EXPECT_EQ(y.dtype, KES_I32);
    EXPECT_EQ(y.values<int32_t>(), (std::vector<int32_t>{12, 16, 24, 28}));  // ONNX's ConvInteger example
    const TT zw = q8<uint8_t>({1}, {2});
    EXPECT_EQ(run1("ConvInteger", A(), {&x, &w, &zx, &zw}).values<int32_t>(),
              (std::vector<int32_t>{-12, -16, -24, -28}));
}

TEST(OpsQuant, QLinearMatMulBroadcastsAndTakesPerColumnParametersAndABias) {
    const Shape as{2, 3, 4}, bs{4, 5};
    const TT a = q8<uint8_t>(as, random_q<uint8_t>(product(as), 5));
    const TT b = q8<int8_t>(bs, random_q<int8_t>(product(bs), 6), true);
    const std::vector<float> b_scale{0.01f, 0.02f, 0.03f, 0.04f, 0.05f};
    const std::vector<int8_t> b_zp{0, 0, 1, 0, -1};
    const std::vector<int32_t> bias{10, -10, 300, 0, 7};
    const TT sa = scalar_scale(0.1f), za = q8<uint8_t>({}, {128}, true), sb = konst(f32({5}, b_scale));
    const TT zb = q8<int8_t>({5}, b_zp, true), sy = scalar_scale(0.5f), zy = q8<int8_t>({}, {-10}, true);
    const TT bi = konst(i32({5}, bias));
    const TT y = run1("QLinearMatMul", A(), {&a, &sa, &za, &b, &sb, &zb, &sy, &zy, &bi});
    ASSERT_EQ(y.shape, (Shape{2, 3, 5}));
    ASSERT_EQ(y.dtype, KES_I8);
    const std::vector<uint8_t> av = a.values<uint8_t>();
    const std::vector<int8_t> bv = b.values<int8_t>(), got = y.values<int8_t>();
    for (int64_t i = 0; i < 6; ++i)
        for (int64_t n = 0; n < 5; ++n) {
            int64_t acc = bias[n];
            for (int64_t k = 0; k < 4; ++k) acc += (av[i * 4 + k] - 128) * (bv[k * 5 + n] - b_zp[n]);
            EXPECT_EQ(got[i * 5 + n], requant_ref(acc, 0.1f * b_scale[n] / 0.5f, -10, -128, 127)) << i << "," << n;
        }
}

TEST(OpsQuant, MatMulIntegerFollowsOnnxsExample) {
    const TT a = q8<uint8_t>({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0});
    const TT b = q8<uint8_t>({3, 2}, {1, 4, 2, 5, 3, 6}, true);
    const TT za = q8<uint8_t>({}, {12}), zb = q8<uint8_t>({}, {0});
    EXPECT_EQ(run1("MatMulInteger", A(), {&a, &b, &za, &zb}).values<int32_t>(),
              (std::vector<int32_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
}

TEST(OpsQuant, DynamicQuantizeLinearFollowsOnnxsExample) {
    const TT x = f32({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f});
    const std::vector<TT> y = run_op("DynamicQuantizeLinear", A(), {&x}, 3);
    EXPECT_EQ(y[0].values<uint8_t>(), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
    EXPECT_FLOAT_EQ(y[1].f()[0], 5.0f / 255.0f);
    EXPECT_EQ(y[2].values<uint8_t>(), (std::vector<uint8_t>{153}));
}

TEST(OpsQuant, QLinearAddAndMulAreWithinOneStepOfTheFloatOps) {
    const Shape as{2, 3, 4}, bs{3, 1};
    const TT a = q8<uint8_t>(as, random_q<uint8_t>(product(as), 7)), b = q8<uint8_t>(bs, random_q<uint8_t>(3, 8));
    const TT sa = scalar_scale(0.03f), za = q8<uint8_t>({}, {100}, true), sb = scalar_scale(0.07f);
    const TT zb = q8<uint8_t>({}, {140}, true), sc = scalar_scale(0.09f), zc = q8<uint8_t>({}, {120}, true);
    const TT af = run1("DequantizeLinear", A(), {&a, &sa, &za}), bf = run1("DequantizeLinear", A(), {&b, &sb, &zb});
    for (const char* op : {"Add", "Mul"}) {
        const TT y = run1(std::string("QLinear") + op, A(), {&a, &sa, &za, &b, &sb, &zb, &sc, &zc});
        ASSERT_EQ(y.shape, as);
        const TT yf = run1(op, A(), {&af, &bf});
        const std::vector<uint8_t> got = y.values<uint8_t>(),
                                   e = run1("QuantizeLinear", A(), {&yf, &sc, &zc}).values<uint8_t>();
        for (size_t i = 0; i < got.size(); ++i) EXPECT_LE(std::abs(got[i] - e[i]), 1) << op << " " << i;
    }
}

TEST(OpsQuant, QLinearGlobalAveragePoolInBothLayouts) {
    const TT x = q8<int8_t>({1, 2, 2, 2}, {1, 2, 3, 4, -10, -20, -30, -41});
    const TT sx = scalar_scale(1.0f), zx = q8<int8_t>({}, {0}, true), sy = scalar_scale(1.0f),
             zy = q8<int8_t>({}, {0}, true);
    const TT y = run1("QLinearGlobalAveragePool", A(), {&x, &sx, &zx, &sy, &zy});
    EXPECT_EQ(y.shape, (Shape{1, 2, 1, 1}));
    EXPECT_EQ(y.values<int8_t>(), (std::vector<int8_t>{2, -25}));  // 2.5 → 2, -25.25 → -25: half to even
    const TT xl = q8<int8_t>({1, 2, 2, 2}, {1, -10, 2, -20, 3, -30, 4, -41});  // the same, channels last
    const TT yl = run1("QLinearGlobalAveragePool", A().i("channels_last", 1), {&xl, &sx, &zx, &sy, &zy});
    EXPECT_EQ(yl.shape, (Shape{1, 1, 1, 2}));
    EXPECT_EQ(yl.values<int8_t>(), (std::vector<int8_t>{2, -25}));
}

TEST(OpsQuant, QLinearConcatCopiesOrRequantizesEachInput) {
    const TT sy = scalar_scale(0.5f), zy = q8<uint8_t>({}, {10}, true);
    const TT a = q8<uint8_t>({1, 2}, {0, 255}), b = q8<uint8_t>({1, 1}, {20});
    const TT sb = scalar_scale(1.0f), zb = q8<uint8_t>({}, {0}, true);
    const TT y = run1("QLinearConcat", A().i("axis", 1), {&sy, &zy, &a, &sy, &zy, &b, &sb, &zb});
    EXPECT_EQ(y.shape, (Shape{1, 3}));
    EXPECT_EQ(y.values<uint8_t>(), (std::vector<uint8_t>{0, 255, 50}));  // 20 · 1 / 0.5 + 10
}

TEST(OpsQuant, BadParametersAreRefusedNamingThem) {
    const TT x = q8<uint8_t>({1, 1, 3, 3}, random_q<uint8_t>(9, 9));
    const TT w = q8<uint8_t>({1, 1, 1, 1}, {1}, true), s = scalar_scale(0.1f), z = q8<uint8_t>({}, {0}, true);
    const TT runtime_scale = f32({}, {0.1f}), zero_scale = scalar_scale(0.0f), zi8 = q8<int8_t>({}, {0}, true);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "x_scale and x_zero_point must be constants", "QLinearConv", A(),
                        {&x, &runtime_scale, &z, &w, &s, &z, &s, &z});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "w_scale holds 0", "QLinearConv", A(),
                        {&x, &s, &z, &w, &zero_scale, &z, &s, &z});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "x_zero_point is i8; expected u8", "QLinearConv", A(),
                        {&x, &s, &zi8, &w, &s, &z, &s, &z});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "required input 7 is missing", "QLinearConv", A(),
                        {&x, &s, &z, &w, &s, &z, &s, nullptr});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "only a fused Relu or Clip", "QLinearConv", A().s("activation", "Sigmoid"),
                        {&x, &s, &z, &w, &s, &z, &s, &z});
    const TT f = f32({1, 1, 3, 3}, std::vector<float>(9));
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "input x", "QLinearConv", A(), {&f, &s, &z, &w, &s, &z, &s, &z});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "expected Y_scale, Y_zero_point", "QLinearConcat", A(),
                        {&s, &z, &x, &s, &z, &x});
}

}  // namespace
}  // namespace kes_test
