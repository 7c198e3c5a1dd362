// Elementwise ops (ops/elementwise.cpp) against double-precision references written here.
#include <functional>
#include <limits>

#include "op_test_util.hpp"

namespace kes_test {
namespace {

using Fn = std::function<double(double)>;

void check_unary(const char* op, const Fn& ref, const A& attrs = A(), float lo = -3.0f, float hi = 3.0f,
                 double tol = 1e-5) {
    const TT x = f32({2, 3, 5}, random_floats(30, 7, lo, hi));
    const TT y = run1(op, attrs, {&x});
    EXPECT_EQ(y.shape, x.shape) << op;
    EXPECT_EQ(y.dtype, KES_F32) << op;
    std::vector<double> want;
    for (float v : x.f()) want.push_back(ref(v));
    expect_near_all(y.f(), want, tol, op);
}

TEST(OpsUnary, MatchDoubleReferences) {
    check_unary("Relu", [](double v) { return v > 0 ? v : 0; });
    check_unary("Abs", [](double v) { return std::fabs(v); });
    check_unary("Neg", [](double v) { return -v; });
    check_unary(
        "Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, A(), -20, 20);
    check_unary("Tanh", [](double v) { return std::tanh(v); });
    check_unary(
        "Sqrt", [](double v) { return std::sqrt(v); }, A(), 0, 9);
    check_unary("Exp", [](double v) { return std::exp(v); });
    check_unary(
        "Log", [](double v) { return std::log(v); }, A(), 0.01f, 9);
    check_unary("Floor", [](double v) { return std::floor(v); });
    check_unary("Ceil", [](double v) { return std::ceil(v); });
    check_unary(
        "Reciprocal", [](double v) { return 1 / v; }, A(), 0.1f, 4);
    check_unary("Erf", [](double v) { return std::erf(v); });
    check_unary(
        "HardSwish", [](double v) { return v * std::min(1.0, std::max(0.0, v / 6 + 0.5)); }, A(), -5, 5);
    check_unary(
        "HardSigmoid", [](double v) { return std::min(1.0, std::max(0.0, 0.2 * v + 0.5)); }, A(), -5, 5);
    check_unary(
        "HardSigmoid", [](double v) { return std::min(1.0, std::max(0.0, 0.5 * v + 0.25)); },
        A().f("alpha", 0.5f).f("beta", 0.25f));
    check_unary("LeakyRelu", [](double v) { return v >= 0 ? v : 0.01 * v; });
    check_unary(
        "LeakyRelu", [](double v) { return v >= 0 ? v : 0.3 * v; }, A().f("alpha", 0.3f));
    check_unary(
        "Elu", [](double v) { return v >= 0 ? v : 0.7 * (std::exp(v) - 1); }, A().f("alpha", 0.7f));
    check_unary(
        "Softplus", [](double v) { return std::log1p(std::exp(v)); }, A(), -30, 30);
    check_unary("Sign", [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); });
}

TEST(OpsUnary, TrigShrinkIsNanIsInf) {
    check_unary(
        "Tan", [](double v) { return std::tan(v); }, A(), -1.2f, 1.2f, 1e-4);
    check_unary("Sinh", [](double v) { return std::sinh(v); });
    check_unary("Cosh", [](double v) { return std::cosh(v); });
    check_unary(
        "Asin", [](double v) { return std::asin(v); }, A(), -0.9f, 0.9f);
    check_unary(
        "Acos", [](double v) { return std::acos(v); }, A(), -0.9f, 0.9f);
    check_unary("Atan", [](double v) { return std::atan(v); });
    check_unary("Asinh", [](double v) { return std::asinh(v); });
    check_unary(
        "Acosh", [](double v) { return std::acosh(v); }, A(), 1.1f, 4.0f);
    check_unary(
        "Atanh", [](double v) { return std::atanh(v); }, A(), -0.9f, 0.9f);
    check_unary(
        "Shrink", [](double v) { return v < -1.5 ? v + 0.5 : (v > 1.5 ? v - 0.5 : 0.0); },
        A().f("lambd", 1.5f).f("bias", 0.5f));
    const TT x = f32({4}, {1.0f, NAN, INFINITY, -INFINITY});
    EXPECT_EQ(run1("IsNaN", A(), {&x}).values<uint8_t>(), (std::vector<uint8_t>{0, 1, 0, 0}));
    EXPECT_EQ(run1("IsInf", A(), {&x}).values<uint8_t>(), (std::vector<uint8_t>{0, 0, 1, 1}));
    EXPECT_EQ(run1("IsInf", A().i("detect_negative", 0), {&x}).values<uint8_t>(), (std::vector<uint8_t>{0, 0, 1, 0}));
}

TEST(OpsUnary, RoundIsHalfToEven) {
    const TT x = f32({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f});
    EXPECT_EQ(run1("Round", A(), {&x}).f(), (std::vector<float>{0, 2, 2, -0.0f, -2, 2}));
}

TEST(OpsUnary, IntegerAbsNegRelu) {
    const TT x = i32({4}, {-3, 0, 5, std::numeric_limits<int32_t>::min()});
    EXPECT_EQ(run1("Abs", A(), {&x}).values<int32_t>(),
              (std::vector<int32_t>{3, 0, 5, std::numeric_limits<int32_t>::min()}));  // wraps, no UB
    EXPECT_EQ(run1("Neg", A(), {&x}).values<int32_t>()[0], 3);
    EXPECT_EQ(run1("Relu", A(), {&x}).values<int32_t>(), (std::vector<int32_t>{0, 0, 5, 0}));
    const TT b = boolean({2}, {1, 0});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "bool", "Sqrt", A(), {&b});
}

TEST(OpsUnary, IdentityDropoutNot) {
    const TT x = i64({3}, {1, -2, 3}, false);
    const TT y = run1("Identity", A(), {&x});
    EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
    EXPECT_EQ(y.dtype, KES_I64);
    const TT xf = f32({2}, {1.5f, -2.0f});
    const std::vector<TT> d = run_op("Dropout", A(), {&xf}, 2);
    EXPECT_EQ(d[0].f(), xf.f());
    EXPECT_EQ(d[1].values<uint8_t>(), (std::vector<uint8_t>{1, 1}));
    const TT ratio = konst(f32({}, {0.5f}));
    const TT training = boolean({}, {1}, true);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "training_mode", "Dropout", A(), {&xf, &ratio, &training});
    const TT b = boolean({3}, {1, 0, 1});
    EXPECT_EQ(run1("Not", A(), {&b}).values<uint8_t>(), (std::vector<uint8_t>{0, 1, 0}));
}

TEST(OpsClip, ConstantRuntimeAndAbsentBounds) {
    const TT x = f32({5}, {-3, -1, 0, 2, 9});
    const TT lo = konst(f32({}, {-1.5f})), hi = f32({}, {4.0f});  // hi is a runtime tensor
    EXPECT_EQ(run1("Clip", A(), {&x, &lo, &hi}).f(), (std::vector<float>{-1.5f, -1, 0, 2, 4}));
    EXPECT_EQ(run1("Clip", A(), {&x, nullptr, &hi}).f(), (std::vector<float>{-3, -1, 0, 2, 4}));
    EXPECT_EQ(run1("Clip", A(), {&x}).f(), x.f());
    const TT xi = i64({3}, {-5, 3, 7}, false), li = i64({}, {0}), hi2 = i64({}, {5});
    EXPECT_EQ(run1("Clip", A(), {&xi, &li, &hi2}).values<int64_t>(), (std::vector<int64_t>{0, 3, 5}));
    const TT bad = f32({2}, {0, 1});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "scalar", "Clip", A(), {&x, &bad});
}

// ---- binary ---------------------------------------------------------------------------------------------

void check_binary(const char* op, const Shape& sa, const Shape& sb, const std::function<double(double, double)>& ref,
                  const A& attrs = A(), const Fn& post = nullptr) {
    const TT a = f32(sa, random_floats(static_cast<size_t>(product(sa)), 11, 0.5f, 2.0f));
    const TT b = f32(sb, random_floats(static_cast<size_t>(product(sb)), 12, -2.0f, 2.0f));
    const TT y = run1(op, attrs, {&a, &b});
    const Shape out = kes::broadcast_shapes(sa, sb);
    ASSERT_EQ(y.shape, out) << op;
    std::vector<double> want(static_cast<size_t>(product(out)));
    for (int64_t i = 0; i < product(out); ++i) {
        const std::vector<int64_t> idx = unravel(i, out);
        double v = ref(a.f()[static_cast<size_t>(broadcast_offset(idx, sa))],
                       b.f()[static_cast<size_t>(broadcast_offset(idx, sb))]);
        want[static_cast<size_t>(i)] = post ? post(v) : v;
    }
    expect_near_all(y.f(), want, 1e-5, op);
}

TEST(OpsBinary, BroadcastingArithmetic) {
    const std::vector<std::pair<Shape, Shape>> cases = {
        {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}},       {{2, 1, 4}, {3, 1}},       {{1}, {2, 3}},
        {{}, {3, 2}},           {{3, 1, 5}, {1, 4, 1}}, {{2, 3, 4, 5}, {3, 1, 1}}, {{0, 3}, {3}}};
    for (const auto& c : cases) {
        check_binary("Add", c.first, c.second, [](double p, double q) { return p + q; });
        check_binary("Sub", c.first, c.second, [](double p, double q) { return p - q; });
        check_binary("Mul", c.first, c.second, [](double p, double q) { return p * q; });
        check_binary("Div", c.first, c.second, [](double p, double q) { return p / q; });
    }
    check_binary("Pow", {2, 3}, {3}, [](double p, double q) { return std::pow(p, q); });
    check_binary("PRelu", {2, 3, 4}, {3, 1}, [](double p, double q) { return p < 0 ? p * q : p; });
    check_binary("Max", {2, 3}, {3}, [](double p, double q) { return std::max(p, q); });
}

TEST(OpsBinary, FusedActivation) {
    check_binary(
        "Sub", {2, 3}, {3}, [](double p, double q) { return p - q; }, A().s("activation", "Relu"),
        [](double v) { return std::max(v, 0.0); });
    check_binary(
        "Mul", {4}, {4}, [](double p, double q) { return p * q; },
        A().s("activation", "Clip").f("activation_min", -0.5f).f("activation_max", 0.5f),
        [](double v) { return std::min(0.5, std::max(-0.5, v)); });
    check_binary(
        "Add", {2, 3}, {3}, [](double p, double q) { return p + q; }, A().s("activation", "Swish"),
        [](double v) { return v / (1.0 + std::exp(-v)); });
    const TT a = f32({1}, {1});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "Mish", "Add", A().s("activation", "Mish"), {&a, &a});
}

TEST(OpsBinary, IntegerArithmetic) {
    const TT a = i64({2, 2}, {7, -7, 100, 5}, false);
    const TT b = i64({2}, {2, -3}, false);
    EXPECT_EQ(run1("Add", A(), {&a, &b}).values<int64_t>(), (std::vector<int64_t>{9, -10, 102, 2}));
    EXPECT_EQ(run1("Sub", A(), {&a, &b}).values<int64_t>(), (std::vector<int64_t>{5, -4, 98, 8}));
    EXPECT_EQ(run1("Mul", A(), {&a, &b}).values<int64_t>(), (std::vector<int64_t>{14, 21, 200, -15}));
    EXPECT_EQ(run1("Div", A(), {&a, &b}).values<int64_t>(), (std::vector<int64_t>{3, 2, 50, -1}));  // truncates
    const TT c = i32({2}, {6, 9}), d = i32({1}, {4});
    EXPECT_EQ(run1("Div", A(), {&c, &d}).values<int32_t>(), (std::vector<int32_t>{1, 2}));
    const TT z = i32({1}, {0});
    EXPECT_THROW(run1("Div", A(), {&c, &z}), kes::Error);
}

TEST(OpsBinary, ModPowAndMoreIntegerTypes) {
    const TT a = i32({4}, {7, -7, 7, -7}), b = i32({4}, {3, 3, -3, -3});
    EXPECT_EQ(run1("Mod", A(), {&a, &b}).values<int32_t>(), (std::vector<int32_t>{1, 2, -2, -1}));  // Python
    EXPECT_EQ(run1("Mod", A().i("fmod", 1), {&a, &b}).values<int32_t>(), (std::vector<int32_t>{1, -1, 1, -1}));
    const TT fa = f32({2}, {7.5f, -7.5f}), fb = f32({2}, {2.0f, 2.0f});
    EXPECT_EQ(run1("Mod", A().i("fmod", 1), {&fa, &fb}).f(), (std::vector<float>{1.5f, -1.5f}));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'fmod'", "Mod", A(), {&fa, &fb});
    const TT base = i64({3}, {2, 3, -2}, false), e = i64({3}, {10, 3, 3}, false);
    EXPECT_EQ(run1("Pow", A(), {&base, &e}).values<int64_t>(), (std::vector<int64_t>{1024, 27, -8}));
    const TT fe = f32({1}, {0.5f});
    const TT fbase = f32({2}, {4.0f, 9.0f});
    const TT ue = make_tensor<uint32_t>(KES_U32, {1}, {2}, false);
    EXPECT_EQ(run1("Pow", A(), {&fbase, &ue}).f(), (std::vector<float>{16.0f, 81.0f}));
    EXPECT_EQ(run1("Pow", A(), {&fbase, &fe}).f(), (std::vector<float>{2.0f, 3.0f}));
    const TT u = make_tensor<uint16_t>(KES_U16, {2}, {65535, 300}, false);
    EXPECT_EQ(run1("Mul", A(), {&u, &u}).values<uint16_t>(),
              (std::vector<uint16_t>{1, static_cast<uint16_t>(90000 % 65536)}));  // wraps, no UB
    const TT d = make_tensor<double>(KES_F64, {3}, {1.0, -2.0, 3.0}, false);
    const TT d2 = make_tensor<double>(KES_F64, {1}, {0.5}, false);
    EXPECT_EQ(run1("Max", A(), {&d, &d2}).values<double>(), (std::vector<double>{1.0, 0.5, 3.0}));
    const TT s8 = make_tensor<int8_t>(KES_I8, {3}, {-5, 0, 5}, false),
             s8b = make_tensor<int8_t>(KES_I8, {1}, {1}, false);
    EXPECT_EQ(run1("Min", A(), {&s8, &s8b}).values<int8_t>(), (std::vector<int8_t>{-5, 0, 1}));
}

TEST(OpsBinary, HalfPrecision) {
    auto half = [](std::vector<float> v) {
        std::vector<uint16_t> h;
        for (float f : v) h.push_back(kes_fp16_from_float(f));
        return make_tensor<uint16_t>(KES_F16, {static_cast<int64_t>(v.size())}, h, false);
    };
    const TT a = half({1.5f, -2.0f, 1000.0f}), b = half({0.25f, 3.0f, 0.1f});
    const TT y = run1("Mul", A(), {&a, &b});
    EXPECT_EQ(y.dtype, KES_F16);
    for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(y.values<uint16_t>()[i], kes_fp16_from_float(kes_fp16_to_float(a.values<uint16_t>()[i]) *
                                                               kes_fp16_to_float(b.values<uint16_t>()[i])));
    const TT mx = run1("Max", A(), {&a, &b});
    EXPECT_EQ(kes_fp16_to_float(mx.values<uint16_t>()[1]), 3.0f);
    EXPECT_EQ(kes_fp16_to_float(run1("Mean", A(), {&a, &b}).values<uint16_t>()[0]), 0.875f);
}

TEST(OpsBinary, BitShift) {
    const TT a = make_tensor<uint8_t>(KES_U8, {3}, {1, 16, 255}, false);
    const TT b = make_tensor<uint8_t>(KES_U8, {3}, {3, 2, 9}, false);
    EXPECT_EQ(run1("BitShift", A().s("direction", "LEFT"), {&a, &b}).values<uint8_t>(),
              (std::vector<uint8_t>{8, 64, 0}));
    EXPECT_EQ(run1("BitShift", A().s("direction", "RIGHT"), {&a, &b}).values<uint8_t>(),
              (std::vector<uint8_t>{0, 4, 0}));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'direction'", "BitShift", A(), {&a, &b});
}

TEST(OpsBinary, ComparisonsAndLogic) {
    const TT a = f32({4}, {1, 2, 3, 4}), b = f32({1}, {2.5f});
    EXPECT_EQ(run1("Greater", A(), {&a, &b}).values<uint8_t>(), (std::vector<uint8_t>{0, 0, 1, 1}));
    EXPECT_EQ(run1("Less", A(), {&a, &b}).values<uint8_t>(), (std::vector<uint8_t>{1, 1, 0, 0}));
    const TT ia = i64({3}, {1, 2, 3}, false), ib = i64({3}, {1, 0, 3}, false);
    const TT eq = run1("Equal", A(), {&ia, &ib});
    EXPECT_EQ(eq.dtype, KES_BOOL);
    EXPECT_EQ(eq.values<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
    const TT p = boolean({2, 1}, {1, 0}), q = boolean({2}, {1, 0});
    EXPECT_EQ(run1("And", A(), {&p, &q}).values<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 0}));
    EXPECT_EQ(run1("Or", A(), {&p, &q}).values<uint8_t>(), (std::vector<uint8_t>{1, 1, 1, 0}));
}

TEST(OpsBinary, Errors) {
    const TT a = f32({2, 3}, random_floats(6, 1)), b = f32({4}, random_floats(4, 2));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "do not broadcast", "Add", A(), {&a, &b});
    const TT i = i64({3}, {1, 2, 3}, false);
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "different dtypes", "Add", A(), {&a, &i});
    const TT bo = boolean({3}, {0, 1, 0});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "bool", "Mul", A(), {&bo, &bo});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "inputs", "Add", A(), {&a});  // count
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "attribute 'activation' is int", "Add", A().i("activation", 1),
                        {&a, &a});
}

TEST(OpsVariadic, MaxMinSumMeanBroadcast) {
    const TT a = f32({2, 3}, random_floats(6, 3)), b = f32({3}, random_floats(3, 4)),
             c = f32({2, 1}, random_floats(2, 5));
    std::vector<double> mx, mn, sum, mean;
    for (int64_t i = 0; i < 6; ++i) {
        const double va = a.f()[static_cast<size_t>(i)], vb = b.f()[static_cast<size_t>(i % 3)],
                     vc = c.f()[static_cast<size_t>(i / 3)];
        mx.push_back(std::max({va, vb, vc}));
        mn.push_back(std::min({va, vb, vc}));
        sum.push_back(va + vb + vc);
        mean.push_back((va + vb + vc) / 3);
    }
    expect_near_all(run1("Max", A(), {&a, &b, &c}).f(), mx, 1e-6);
    expect_near_all(run1("Min", A(), {&a, &b, &c}).f(), mn, 1e-6);
    expect_near_all(run1("Sum", A(), {&a, &b, &c}).f(), sum, 1e-6);
    expect_near_all(run1("Mean", A(), {&a, &b, &c}).f(), mean, 1e-6);
    EXPECT_EQ(run1("Max", A(), {&a}).f(), a.f());
    const TT n = f32({1}, {NAN});
    EXPECT_TRUE(std::isnan(run1("Max", A(), {&a, &n}).f()[0]));
}

TEST(OpsWhere, BroadcastSelect) {
    const TT c = boolean({2, 1}, {1, 0});
    const TT x = i64({3}, {1, 2, 3}, false), y = i64({2, 3}, {10, 20, 30, 40, 50, 60}, false);
    EXPECT_EQ(run1("Where", A(), {&c, &x, &y}).values<int64_t>(), (std::vector<int64_t>{1, 2, 3, 40, 50, 60}));
}

}  // namespace
}  // namespace kes_test
