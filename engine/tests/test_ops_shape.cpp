// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Expand, Tile, DepthToSpace,
// SpaceToDepth (ops/shape.cpp) against references written here.
#include "op_test_util.hpp"

namespace kes_test {
namespace {

std::vector<float> iota_f(int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
    return v;
}

TEST(OpsReshape, ZeroMinusOneAllowZero) {
    const TT x = f32({2, 3, 4}, iota_f(24));
    const TT s1 = ints({0, -1});
    TT y = run1("Reshape", A(), {&x, &s1});
    EXPECT_EQ(y.shape, (Shape{2, 12}));
    EXPECT_EQ(y.f(), x.f());
    const TT s2 = ints({-1, 0, 2});  // 0 copies dim 1 (3)
    EXPECT_EQ(run1("Reshape", A(), {&x, &s2}).shape, (Shape{4, 3, 2}));
    const TT s3 = ints({4, 6});
    EXPECT_EQ(run1("Reshape", A().i("allowzero", 1), {&x, &s3}).shape, (Shape{4, 6}));
    const TT e = f32({0, 3}, {});
    const TT s4 = ints({3, 0});
    EXPECT_EQ(run1("Reshape", A().i("allowzero", 1), {&e, &s4}).shape, (Shape{3, 0}));
    const TT bad = ints({5, -1});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "cannot reshape", "Reshape", A(), {&x, &bad});
    const TT two = ints({-1, -1});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "more than one -1", "Reshape", A(), {&x, &two});
    const TT runtime = i64({2}, {4, 6}, false);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "constant", "Reshape", A(), {&x, &runtime});
    const TT ix = i64({2, 2}, {1, 2, 3, 4}, false);
    const TT s5 = ints({4});
    EXPECT_EQ(run1("Reshape", A(), {&ix, &s5}).values<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(OpsReshape, FlattenSqueezeUnsqueeze) {
    const TT x = f32({2, 1, 3, 1}, iota_f(6));
    EXPECT_EQ(run1("Flatten", A(), {&x}).shape, (Shape{2, 3}));
    EXPECT_EQ(run1("Flatten", A().i("axis", 0), {&x}).shape, (Shape{1, 6}));
    EXPECT_EQ(run1("Flatten", A().i("axis", -1), {&x}).shape, (Shape{6, 1}));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'axis'", "Flatten", A().i("axis", 5), {&x});
    EXPECT_EQ(run1("Squeeze", A(), {&x}).shape, (Shape{2, 3}));
    const TT ax = ints({-1});
    EXPECT_EQ(run1("Squeeze", A(), {&x, &ax}).shape, (Shape{2, 1, 3}));
    EXPECT_EQ(run1("Squeeze", A().is("axes", {1}), {&x}).shape, (Shape{2, 3, 1}));
    const TT ax0 = ints({0});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "cannot squeeze", "Squeeze", A(), {&x, &ax0});
    const TT y = f32({3, 4}, iota_f(12));
    const TT ua = ints({0, -1, 2});
    const TT u = run1("Unsqueeze", A(), {&y, &ua});
    EXPECT_EQ(u.shape, (Shape{1, 3, 1, 4, 1}));
    EXPECT_EQ(u.f(), y.f());
    EXPECT_EQ(run1("Unsqueeze", A().is("axes", {1}), {&y}).shape, (Shape{3, 1, 4}));
    const TT dup = ints({1, 1});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "repeated", "Unsqueeze", A(), {&y, &dup});
    const TT runtime = i64({1}, {0}, false);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "constant", "Unsqueeze", A(), {&y, &runtime});
}

TEST(OpsTranspose, PermutationsAndDtypes) {
    const TT x = f32({2, 3, 4, 5}, iota_f(120));
    for (const std::vector<size_t>& perm : std::vector<std::vector<size_t>>{{0, 2, 3, 1}, {3, 2, 1, 0}, {1, 0, 2, 3}}) {
        Shape s;
        const std::vector<float> want = transpose_ref(x.f(), x.shape, perm, &s);
        const TT y =
            run1("Transpose", A().is("perm", {int64_t(perm[0]), int64_t(perm[1]), int64_t(perm[2]), int64_t(perm[3])}),
                 {&x});
        EXPECT_EQ(y.shape, s);
        EXPECT_EQ(y.f(), want);
    }
    Shape s;
    EXPECT_EQ(run1("Transpose", A(), {&x}).f(), transpose_ref(x.f(), x.shape, {3, 2, 1, 0}, &s));  // default
    const TT b = make_tensor<uint8_t>(KES_U8, {2, 3}, {1, 2, 3, 4, 5, 6}, false);
    EXPECT_EQ(run1("Transpose", A(), {&b}).values<uint8_t>(), (std::vector<uint8_t>{1, 4, 2, 5, 3, 6}));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'perm'", "Transpose", A().is("perm", {0, 0, 1, 2}), {&x});
}

// Kestrel's ChannelShuffle: output channel j·g + i is input channel i·(C/g) + j, along axis 1 (NCHW) or
// any other axis; the group must divide the channels.
TEST(OpsChannelShuffle, ChannelJTimesGPlusIIsInputChannelITimesCOverGPlusJ) {
    const TT x = f32({2, 6, 3}, iota_f(36));
    const TT y = run1("ChannelShuffle", A().i("group", 2), {&x});
    EXPECT_EQ(y.shape, x.shape);
    const std::vector<float> in = x.f(), out = y.f();
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t i = 0; i < 2; ++i)
            for (int64_t j = 0; j < 3; ++j)
                for (int64_t k = 0; k < 3; ++k)
                    EXPECT_EQ(out[static_cast<size_t>((n * 6 + j * 2 + i) * 3 + k)],
                              in[static_cast<size_t>((n * 6 + i * 3 + j) * 3 + k)]);
    // The last axis (NHWC), 3 groups of 2: channels 0 2 4 1 3 5 → 0 2 4 1 3 5 read as (i·2 + j).
    const TT z = f32({1, 6}, {10, 11, 12, 13, 14, 15});
    EXPECT_EQ(run1("ChannelShuffle", A().i("axis", -1).i("group", 3), {&z}).f(),
              (std::vector<float>{10, 12, 14, 11, 13, 15}));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'group' 4", "ChannelShuffle", A().i("group", 4), {&x});
}

TEST(OpsConcatSplit, AxesAndUnevenParts) {
    const TT a = f32({2, 2, 3}, iota_f(12)), b = f32({2, 1, 3}, random_floats(6, 1));
    const TT y = run1("Concat", A().i("axis", -2), {&a, &b});
    EXPECT_EQ(y.shape, (Shape{2, 3, 3}));
    for (int64_t i = 0; i < 18; ++i) {
        const std::vector<int64_t> idx = unravel(i, y.shape);
        const float want = idx[1] < 2 ? a.f()[static_cast<size_t>(ravel(idx, a.shape))]
                                      : b.f()[static_cast<size_t>(ravel({idx[0], 0, idx[2]}, b.shape))];
        EXPECT_EQ(y.f()[static_cast<size_t>(i)], want);
    }
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "input 1", "Concat", A().i("axis", 0), {&a, &b});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'axis'", "Concat", A(), {&a, &b});
    const TT i1 = ints({1, 2}), i2 = ints({3});
    EXPECT_EQ(run1("Concat", A().i("axis", 0), {&i1, &i2}).values<int64_t>(), (std::vector<int64_t>{1, 2, 3}));

    const TT x = f32({2, 5}, iota_f(10));
    const TT sp = ints({2, 3});
    std::vector<TT> parts = run_op("Split", A().i("axis", 1), {&x, &sp}, 2);
    EXPECT_EQ(parts[0].shape, (Shape{2, 2}));
    EXPECT_EQ(parts[0].f(), (std::vector<float>{0, 1, 5, 6}));
    EXPECT_EQ(parts[1].f(), (std::vector<float>{2, 3, 4, 7, 8, 9}));
    parts = run_op("Split", A().i("axis", 1).is("split", {4, 1}), {&x}, 2);
    EXPECT_EQ(parts[1].f(), (std::vector<float>{4, 9}));
    parts = run_op("Split", A().i("axis", -1), {&x}, 3);  // ceil(5/3) = 2, 2, 1
    EXPECT_EQ(parts[2].shape, (Shape{2, 1}));
    EXPECT_EQ(parts[1].f(), (std::vector<float>{2, 3, 7, 8}));
    const TT bad = ints({2, 2});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "add up", "Split", A().i("axis", 1), {&x, &bad}, 2);
}

// Reference slice of one axis (python semantics with ONNX clamping).
std::vector<int64_t> slice_indices(int64_t dim, int64_t start, int64_t end, int64_t step) {
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    std::vector<int64_t> idx;
    if (step > 0) {
        start = std::max<int64_t>(0, std::min(start, dim));
        end = std::max<int64_t>(0, std::min(end, dim));
        for (int64_t i = start; i < end; i += step) idx.push_back(i);
    } else {
        start = std::max<int64_t>(-1, std::min(start, dim - 1));
        end = std::max<int64_t>(-1, std::min(end, dim - 1));
        for (int64_t i = start; i > end; i += step)
            if (i >= 0) idx.push_back(i);
    }
    return idx;
}

TEST(OpsSlice, StepsNegativeStepsAndClamping) {
    const TT x = f32({4, 6}, iota_f(24));
    struct C {
        int64_t s0, e0, st0, s1, e1, st1;
    };
    const int64_t big = INT64_MAX, small = INT64_MIN;
    for (const C& c : {C{0, 4, 1, 1, 5, 2}, C{-1, small, -1, big, 0, -2}, C{3, 0, -2, -2, -7, -1},
                       C{1, big, 2, -100, 100, 3}, C{2, 1, 1, 0, 6, 1}, C{-10, 10, 1, 5, -10, -3}}) {
        const TT st = ints({c.s0, c.s1}), en = ints({c.e0, c.e1}), ax = ints({0, 1}), sp = ints({c.st0, c.st1});
        const TT y = run1("Slice", A(), {&x, &st, &en, &ax, &sp});
        const std::vector<int64_t> r = slice_indices(4, c.s0, c.e0, c.st0), q = slice_indices(6, c.s1, c.e1, c.st1);
        ASSERT_EQ(y.shape, (Shape{int64_t(r.size()), int64_t(q.size())}));
        std::vector<float> want;
        for (int64_t i : r)
            for (int64_t j : q) want.push_back(static_cast<float>(i * 6 + j));
        EXPECT_EQ(y.f(), want);
    }
    const TT st = ints({1}), en = ints({-1}), ax = ints({-1});
    EXPECT_EQ(run1("Slice", A(), {&x, &st, &en, &ax}).shape, (Shape{4, 4}));
    EXPECT_EQ(run1("Slice", A(), {&x, &st, &en}).shape, (Shape{2, 6}));  // axes default 0..
    const TT zero = ints({0});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "steps", "Slice", A(), {&x, &st, &en, &ax, &zero});
    const TT rt = i64({1}, {0}, false);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "starts", "Slice", A(), {&x, &rt, &en});
}

TEST(OpsExpandTile, BroadcastCopies) {
    const TT x = f32({3, 1}, {1, 2, 3});
    const TT s = ints({2, 1, 4});
    const TT y = run1("Expand", A(), {&x, &s});
    EXPECT_EQ(y.shape, (Shape{2, 3, 4}));
    for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(y.f()[static_cast<size_t>(i)], float((i / 4) % 3 + 1));
    const TT s2 = ints({1});
    EXPECT_EQ(run1("Expand", A(), {&x, &s2}).shape, (Shape{3, 1}));
    const TT t = f32({2, 2}, {1, 2, 3, 4});
    const TT rep = ints({2, 3});
    const TT z = run1("Tile", A(), {&t, &rep});
    EXPECT_EQ(z.shape, (Shape{4, 6}));
    for (int64_t i = 0; i < 24; ++i)
        EXPECT_EQ(z.f()[static_cast<size_t>(i)], t.f()[static_cast<size_t>(((i / 6) % 2) * 2 + (i % 6) % 2)]);
}

std::vector<float> crd_values(const TT& x) {
    return run1("DepthToSpace", A().i("blocksize", 2).s("mode", "CRD"), {&x}).f();
}

TEST(OpsDepthSpace, OnnxDocExamples) {
    // DepthToSpace DCR and CRD on [1, 8, 2, 3] with blocksize 2 (ONNX operator docs).
    const TT x = f32({1, 8, 2, 3}, iota_f(48));
    const TT dcr = run1("DepthToSpace", A().i("blocksize", 2), {&x});
    EXPECT_EQ(dcr.shape, (Shape{1, 2, 4, 6}));
    const std::vector<float> dv = dcr.f(), cv = crd_values(x);
    EXPECT_EQ(std::vector<float>(dv.begin(), dv.begin() + 12),
              (std::vector<float>{0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38}));
    EXPECT_EQ(std::vector<float>(cv.begin(), cv.begin() + 12),
              (std::vector<float>{0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20}));
    // SpaceToDepth inverts DCR.
    const TT back = run1("SpaceToDepth", A().i("blocksize", 2), {&dcr});
    EXPECT_EQ(back.shape, x.shape);
    EXPECT_EQ(back.f(), x.f());
}

TEST(OpsTrilu, UpperLowerWithK) {
    const TT x = f32({2, 3, 3}, iota_f(18));
    for (int upper = 0; upper < 2; ++upper)
        for (int64_t k : {-1, 0, 2}) {
            const TT kt = i64({}, {k});
            const TT y = run1("Trilu", A().i("upper", upper), {&x, &kt});
            for (int64_t i = 0; i < 18; ++i) {
                const int64_t r = (i / 3) % 3, c = i % 3;
                const bool keep = upper ? c - r >= k : c - r <= k;
                EXPECT_EQ(y.f()[static_cast<size_t>(i)], keep ? float(i) : 0.0f) << upper << " " << k;
            }
        }
}

}  // namespace
}  // namespace kes_test
