// Softmax, LogSoftmax, Reduce*, ArgMax/ArgMin (ops/reduce.cpp) against double references.
#include <limits>

#include "op_test_util.hpp"

namespace kes_test {
namespace {

TEST(OpsSoftmax, AxisSemanticsOfOpset13) {
    const TT x = f32({2, 3, 4}, random_floats(24, 81, -5, 5));
    for (int64_t axis : {-1, 0, 1, 2}) {
        const int64_t a = axis < 0 ? axis + 3 : axis;
        const TT y = run1("Softmax", A().i("axis", axis), {&x});
        const TT ly = run1("LogSoftmax", A().i("axis", axis), {&x});
        std::vector<double> want(24), lwant(24);
        for (int64_t i = 0; i < 24; ++i) {
            std::vector<int64_t> idx = unravel(i, x.shape);
            double sum = 0;
            for (int64_t k = 0; k < x.shape[static_cast<size_t>(a)]; ++k) {
                idx[static_cast<size_t>(a)] = k;
                sum += std::exp(double(x.f()[static_cast<size_t>(ravel(idx, x.shape))]));
            }
            want[static_cast<size_t>(i)] = std::exp(double(x.f()[static_cast<size_t>(i)])) / sum;
            lwant[static_cast<size_t>(i)] = double(x.f()[static_cast<size_t>(i)]) - std::log(sum);
        }
        expect_near_all(y.f(), want, 1e-5, "softmax");
        expect_near_all(ly.f(), lwant, 1e-5, "logsoftmax");
    }
    const TT big = f32({3}, {1000, 1001, 1002});  // no overflow
    const std::vector<float> s = run1("Softmax", A(), {&big}).f();
    EXPECT_NEAR(s[2], 0.66524, 1e-4);
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "axis", "Softmax", A().i("axis", 3), {&x});
}

// Reference reduction over `axes` (empty: all) with fold/finish in double.
std::vector<double> reduce_ref(const TT& x, std::vector<int64_t> axes, bool keepdims, double init,
                               double (*fold)(double, double), double (*finish)(double, int64_t), Shape* out_shape) {
    const int64_t r = static_cast<int64_t>(x.shape.size());
    std::vector<bool> red(static_cast<size_t>(r), axes.empty());
    for (int64_t a : axes) red[static_cast<size_t>(a < 0 ? a + r : a)] = true;
    Shape kept;
    out_shape->clear();
    int64_t group = 1;
    for (int64_t d = 0; d < r; ++d) {
        kept.push_back(red[static_cast<size_t>(d)] ? 1 : x.shape[static_cast<size_t>(d)]);
        if (red[static_cast<size_t>(d)]) group *= x.shape[static_cast<size_t>(d)];
        if (!red[static_cast<size_t>(d)] || keepdims) out_shape->push_back(kept.back());
    }
    std::vector<double> acc(static_cast<size_t>(product(kept)), init);
    for (int64_t i = 0; i < x.elements(); ++i) {
        std::vector<int64_t> idx = unravel(i, x.shape);
        for (int64_t d = 0; d < r; ++d)
            if (red[static_cast<size_t>(d)]) idx[static_cast<size_t>(d)] = 0;
        double& a = acc[static_cast<size_t>(ravel(idx, kept))];
        a = fold(a, x.f()[static_cast<size_t>(i)]);
    }
    for (double& a : acc) a = finish(a, group);
    return acc;
}

TEST(OpsReduce, AllKindsAxesKeepdims) {
    const TT x = f32({2, 3, 4}, random_floats(24, 91, 0.5f, 1.5f));
    struct K {
        const char* op;
        double init;
        double (*fold)(double, double);
        double (*finish)(double, int64_t);
    };
    auto id = [](double v, int64_t) { return v; };
    const std::vector<K> kinds = {
        {"ReduceSum", 0, [](double a, double v) { return a + v; }, id},
        {"ReduceMean", 0, [](double a, double v) { return a + v; }, [](double v, int64_t n) { return v / double(n); }},
        {"ReduceMax", -INFINITY, [](double a, double v) { return std::max(a, v); }, id},
        {"ReduceMin", INFINITY, [](double a, double v) { return std::min(a, v); }, id},
        {"ReduceProd", 1, [](double a, double v) { return a * v; }, id},
        {"ReduceL1", 0, [](double a, double v) { return a + std::fabs(v); }, id},
        {"ReduceL2", 0, [](double a, double v) { return a + v * v; }, [](double v, int64_t) { return std::sqrt(v); }},
        {"ReduceSumSquare", 0, [](double a, double v) { return a + v * v; }, id},
        {"ReduceLogSumExp", 0, [](double a, double v) { return a + std::exp(v); },
         [](double v, int64_t) { return std::log(v); }},
    };
    const std::vector<std::vector<int64_t>> axes_cases = {{1}, {0, 2}, {-1}, {}};
    for (const K& k : kinds)
        for (const auto& axes : axes_cases)
            for (int keep = 0; keep < 2; ++keep) {
                Shape s;
                const std::vector<double> want = reduce_ref(x, axes, keep, k.init, k.fold, k.finish, &s);
                // axes as the opset-18 input ...
                const TT ax = ints(axes);
                const TT y = axes.empty() ? run1(k.op, A().i("keepdims", keep), {&x})
                                          : run1(k.op, A().i("keepdims", keep), {&x, &ax});
                EXPECT_EQ(y.shape, s) << k.op;
                expect_near_all(y.f(), want, 1e-5, k.op);
                // ... and as the opset-13 attribute.
                if (!axes.empty()) {
                    const TT ya = run1(k.op, A().i("keepdims", keep).is("axes", axes), {&x});
                    EXPECT_EQ(ya.f(), y.f()) << k.op;
                }
            }
    // noop_with_empty_axes passes the input through.
    const TT empty_axes = i64({0}, {}, true);
    const TT y = run1("ReduceSum", A().i("noop_with_empty_axes", 1), {&x, &empty_axes});
    EXPECT_EQ(y.shape, x.shape);
    EXPECT_EQ(y.f(), x.f());
    const TT rt = i64({1}, {0}, false);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "constant", "ReduceMean", A(), {&x, &rt});
    const TT xi = i64({2, 2}, {1, 5, -3, 4}, false);
    const TT a1 = ints({1});
    EXPECT_EQ(run1("ReduceMax", A().i("keepdims", 0), {&xi, &a1}).values<int64_t>(), (std::vector<int64_t>{5, 4}));
    EXPECT_EQ(run1("ReduceSum", A().i("keepdims", 0), {&xi, &a1}).values<int64_t>(), (std::vector<int64_t>{6, 1}));
}

TEST(OpsReduce, ArgMaxArgMin) {
    const TT x = f32({2, 3}, {1, 5, 5, 7, 2, 7});
    EXPECT_EQ(run1("ArgMax", A().i("axis", 1), {&x}).values<int64_t>(), (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(run1("ArgMax", A().i("axis", 1).i("select_last_index", 1), {&x}).values<int64_t>(),
              (std::vector<int64_t>{2, 2}));
    const TT y = run1("ArgMin", A().i("axis", 0).i("keepdims", 0), {&x});
    EXPECT_EQ(y.shape, (Shape{3}));
    EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
}

TEST(OpsReduce, HardmaxCumSumTopK) {
    const TT x = f32({2, 3}, {1, 3, 3, -1, -2, -5});
    EXPECT_EQ(run1("Hardmax", A(), {&x}).f(), (std::vector<float>{0, 1, 0, 1, 0, 0}));  // first max wins
    EXPECT_EQ(run1("Hardmax", A().i("axis", 0), {&x}).f(), (std::vector<float>{1, 1, 1, 0, 0, 0}));
    const TT ax1 = i64({}, {1}), ax0 = i32({}, {0}, true);
    EXPECT_EQ(run1("CumSum", A(), {&x, &ax1}).f(), (std::vector<float>{1, 4, 7, -1, -3, -8}));
    EXPECT_EQ(run1("CumSum", A().i("exclusive", 1).i("reverse", 1), {&x, &ax1}).f(),
              (std::vector<float>{6, 3, 0, -7, -5, 0}));
    EXPECT_EQ(run1("CumSum", A(), {&x, &ax0}).f(), (std::vector<float>{1, 3, 3, 0, 1, -2}));
    const TT v = f32({1, 6}, {5, 1, 5, 9, -2, 0});
    const TT k = ints({3});
    std::vector<TT> r = run_op("TopK", A(), {&v, &k}, 2);
    EXPECT_EQ(r[0].f(), (std::vector<float>{9, 5, 5}));
    EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{3, 0, 2}));  // ties: lower index first
    r = run_op("TopK", A().i("largest", 0), {&v, &k}, 2);
    EXPECT_EQ(r[0].f(), (std::vector<float>{-2, 0, 1}));
    EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{4, 5, 1}));
    const TT col = f32({3, 2}, {1, 6, 3, 4, 2, 5});
    const TT k1 = ints({1});
    r = run_op("TopK", A().i("axis", 0), {&col, &k1}, 2);
    EXPECT_EQ(r[0].shape, (Shape{1, 2}));
    EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{1, 0}));
    const TT k9 = ints({9});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "K = 9", "TopK", A(), {&v, &k9}, 2);
}

}  // namespace
}  // namespace kes_test
