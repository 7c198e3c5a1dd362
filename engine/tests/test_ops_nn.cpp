// Conv, ConvTranspose, Gemm, MatMul, pools, BatchNormalization (ops/nn.cpp) against double references.
#include <limits>

#include "op_test_util.hpp"

namespace kes_test {
namespace {

struct ConvCase {
    int64_t n, c, h, w, m, kh, kw, group, sh, sw, dh, dw, pt, pl, pb, pr;
};

// Direct NCHW convolution in double; weight [M, C/group, KH, KW].
std::vector<double> conv_ref(const ConvCase& p, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>* bias, Shape* out_shape) {
    const int64_t oh = (p.h + p.pt + p.pb - ((p.kh - 1) * p.dh + 1)) / p.sh + 1;
    const int64_t ow = (p.w + p.pl + p.pr - ((p.kw - 1) * p.dw + 1)) / p.sw + 1;
    *out_shape = {p.n, p.m, oh, ow};
    const int64_t cg = p.c / p.group, mg = p.m / p.group;
    std::vector<double> y(static_cast<size_t>(p.n * p.m * oh * ow));
    for (int64_t n = 0; n < p.n; ++n)
        for (int64_t m = 0; m < p.m; ++m)
            for (int64_t i = 0; i < oh; ++i)
                for (int64_t j = 0; j < ow; ++j) {
                    double acc = bias ? (*bias)[static_cast<size_t>(m)] : 0.0;
                    for (int64_t ci = 0; ci < cg; ++ci)
                        for (int64_t a = 0; a < p.kh; ++a)
                            for (int64_t b = 0; b < p.kw; ++b) {
                                const int64_t yy = i * p.sh - p.pt + a * p.dh, xx = j * p.sw - p.pl + b * p.dw;
                                if (yy < 0 || yy >= p.h || xx < 0 || xx >= p.w) continue;
                                const int64_t c = (m / mg) * cg + ci;
                                acc += double(x[static_cast<size_t>(((n * p.c + c) * p.h + yy) * p.w + xx)]) *
                                       w[static_cast<size_t>(((m * cg + ci) * p.kh + a) * p.kw + b)];
                            }
                    y[static_cast<size_t>(((n * p.m + m) * oh + i) * ow + j)] = acc;
                }
    return y;
}

A conv_attrs(const ConvCase& p) {
    return A()
        .is("strides", {p.sh, p.sw})
        .is("dilations", {p.dh, p.dw})
        .is("pads", {p.pt, p.pl, p.pb, p.pr})
        .i("group", p.group);
}

TEST(OpsConv, NchwMatchesReference) {
    const std::vector<ConvCase> cases = {
        {1, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // plain 3x3 same
        {2, 4, 8, 7, 6, 3, 2, 2, 2, 1, 1, 1, 0, 1, 2, 0},  // groups, strides, asymmetric pads
        {1, 3, 9, 9, 3, 3, 3, 3, 1, 2, 2, 2, 2, 1, 0, 3},  // depthwise + dilation
        {1, 2, 5, 5, 4, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},  // 1x1
        {1, 4, 6, 6, 8, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1},  // depthwise multiplier 2
    };
    for (const ConvCase& p : cases) {
        const TT x = f32({p.n, p.c, p.h, p.w}, random_floats(static_cast<size_t>(p.n * p.c * p.h * p.w), 1));
        const TT w = konst(f32({p.m, p.c / p.group, p.kh, p.kw},
                               random_floats(static_cast<size_t>(p.m * p.c / p.group * p.kh * p.kw), 2)));
        const TT b = konst(f32({p.m}, random_floats(static_cast<size_t>(p.m), 3)));
        Shape want_shape;
        const std::vector<float> bias = b.f();
        const std::vector<double> want = conv_ref(p, x.f(), w.f(), &bias, &want_shape);
        const TT y = run1("Conv", conv_attrs(p), {&x, &w, &b});
        ASSERT_EQ(y.shape, want_shape);
        expect_near_all(y.f(), want, 1e-5, "conv");
        const TT y_nobias = run1("Conv", conv_attrs(p), {&x, &w});
        const std::vector<double> want_nb = conv_ref(p, x.f(), w.f(), nullptr, &want_shape);
        expect_near_all(y_nobias.f(), want_nb, 1e-5, "conv without bias");
    }
}

TEST(OpsConv, NhwcGivesTheSameValuesAsNchw) {
    const std::vector<ConvCase> cases = {{2, 4, 6, 5, 6, 3, 3, 2, 2, 1, 1, 2, 1, 0, 1, 2},
                                         {1, 3, 7, 7, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}};
    for (const ConvCase& p : cases) {
        const TT x = f32({p.n, p.c, p.h, p.w}, random_floats(static_cast<size_t>(p.n * p.c * p.h * p.w), 4));
        const TT w = konst(f32({p.m, p.c / p.group, p.kh, p.kw},
                               random_floats(static_cast<size_t>(p.m * p.c / p.group * p.kh * p.kw), 5)));
        const TT y = run1("Conv", conv_attrs(p), {&x, &w});
        Shape xs, ws, ys;
        TT xn, wn;
        const std::vector<float> xt = transpose_ref(x.f(), x.shape, {0, 2, 3, 1}, &xs);
        const std::vector<float> wt = transpose_ref(w.f(), w.shape, {0, 2, 3, 1}, &ws);  // OIHW -> OHWI
        xn = f32(xs, xt);
        wn = konst(f32(ws, wt));
        const TT yn = run1("Conv", A(conv_attrs(p)).s("data_layout", "NHWC"), {&xn, &wn});
        const std::vector<float> want = transpose_ref(y.f(), y.shape, {0, 2, 3, 1}, &ys);
        ASSERT_EQ(yn.shape, ys);
        expect_near_all(yn.f(), want, 1e-6, "nhwc");
    }
}

TEST(OpsConv, AutoPadFusedActivationAnd1d) {
    const TT x = f32({1, 2, 5, 5}, random_floats(50, 6));
    const TT w = konst(f32({3, 2, 3, 3}, random_floats(54, 7)));
    // SAME_UPPER with stride 2 on 5: out 3, total pad 2 -> 1/1. SAME_LOWER on 6 x k2: total 1 -> begin 1.
    const TT y = run1("Conv", A().s("auto_pad", "SAME_UPPER").is("strides", {2, 2}), {&x, &w});
    ConvCase p{1, 2, 5, 5, 3, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1};
    Shape s;
    expect_near_all(y.f(), conv_ref(p, x.f(), w.f(), nullptr, &s), 1e-5, "same_upper");
    EXPECT_EQ(y.shape, s);
    const TT x6 = f32({1, 1, 6, 6}, random_floats(36, 8));
    const TT w2 = konst(f32({1, 1, 2, 2}, random_floats(4, 9)));
    const TT yl = run1("Conv", A().s("auto_pad", "SAME_LOWER"), {&x6, &w2});
    ConvCase pl{1, 1, 6, 6, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0};
    expect_near_all(yl.f(), conv_ref(pl, x6.f(), w2.f(), nullptr, &s), 1e-5, "same_lower");
    const TT yv = run1("Conv", A().s("auto_pad", "VALID"), {&x6, &w2});
    EXPECT_EQ(yv.shape, (Shape{1, 1, 5, 5}));

    const TT yr = run1("Conv", A().s("activation", "Relu"), {&x, &w});
    ConvCase p0{1, 2, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0};
    std::vector<double> want = conv_ref(p0, x.f(), w.f(), nullptr, &s);
    for (double& v : want) v = std::max(v, 0.0);
    expect_near_all(yr.f(), want, 1e-5, "fused relu");

    // 1-D: [N, C, W] with weight [M, C, K] equals the 2-D conv with H = 1.
    const TT x1 = f32({1, 2, 7}, random_floats(14, 10));
    const TT w1 = konst(f32({2, 2, 3}, random_floats(12, 11)));
    const TT y1 = run1("Conv", A().is("pads", {1, 0}).is("strides", {2}), {&x1, &w1});
    ConvCase p1{1, 2, 1, 7, 2, 1, 3, 1, 1, 2, 1, 1, 0, 1, 0, 0};
    expect_near_all(y1.f(), conv_ref(p1, x1.f(), w1.f(), nullptr, &s), 1e-5, "conv1d");
    EXPECT_EQ(y1.shape, (Shape{1, 2, 3}));
}

TEST(OpsConv, Errors) {
    const TT x = f32({1, 4, 5, 5}, random_floats(100, 1));
    const TT w = konst(f32({2, 3, 3, 3}, random_floats(54, 2)));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "input channels per group", "Conv", A(), {&x, &w});
    const TT w4 = konst(f32({2, 4, 3, 3}, random_floats(72, 2)));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'group'", "Conv", A().i("group", 3), {&x, &w4});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'data_layout'", "Conv", A().s("data_layout", "NCWH"), {&x, &w4});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'auto_pad'", "Conv", A().s("auto_pad", "SAME"), {&x, &w4});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'strides'", "Conv", A().is("strides", {1}), {&x, &w4});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'strides' is float", "Conv", A().f("strides", 1.0f), {&x, &w4});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "kernel_shape", "Conv", A().is("kernel_shape", {2, 2}), {&x, &w4});
    const TT x6 = f32({1, 4, 2, 2, 2, 2}, random_floats(64, 1));
    const TT w6 = konst(f32({2, 4, 1, 1, 1, 1}, random_floats(8, 2)));
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "rank 6", "Conv", A(), {&x6, &w6});
    const TT x5 = f32({1, 4, 2, 2, 2}, random_floats(32, 1));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "input rank 5", "Conv", A(), {&x5, &w4});
}

// ---- ConvTranspose --------------------------------------------------------------------------------------

// Scatter reference: weight [C, M/group, KH, KW]; output size from pads and output_padding.
std::vector<double> conv_transpose_ref(const TT& x, const TT& w, int64_t group, int64_t s, int64_t d, int64_t pb,
                                       int64_t pe, int64_t op, Shape* out_shape) {
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    const int64_t MG = w.shape[1], K = w.shape[2], M = MG * group, CG = C / group;
    const int64_t OH = s * (H - 1) + op + (K - 1) * d + 1 - pb - pe, OW = OH + (W - H) * s;
    *out_shape = {N, M, OH, OW};
    std::vector<double> y(static_cast<size_t>(N * M * OH * OW), 0.0);
    const std::vector<float> xv = x.f(), wv = w.f();
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t i = 0; i < H; ++i)
                for (int64_t j = 0; j < W; ++j)
                    for (int64_t mo = 0; mo < MG; ++mo)
                        for (int64_t a = 0; a < K; ++a)
                            for (int64_t b = 0; b < K; ++b) {
                                const int64_t oy = i * s - pb + a * d, ox = j * s - pb + b * d;
                                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                                const int64_t m = (c / CG) * MG + mo;
                                y[static_cast<size_t>(((n * M + m) * OH + oy) * OW + ox)] +=
                                    double(xv[static_cast<size_t>(((n * C + c) * H + i) * W + j)]) *
                                    wv[static_cast<size_t>(((c * MG + mo) * K + a) * K + b)];
                            }
    return y;
}

TEST(OpsConvTranspose, MatchesScatterReference) {
    struct P {
        int64_t c, m, group, k, s, d, pad, op;
    };
    for (const P& p :
         {P{2, 3, 1, 3, 2, 1, 1, 1}, P{4, 4, 2, 2, 2, 1, 0, 0}, P{2, 2, 1, 3, 1, 2, 1, 0}, P{3, 3, 3, 3, 2, 1, 1, 0}}) {
        const TT x = f32({1, p.c, 4, 5}, random_floats(static_cast<size_t>(p.c * 20), 21));
        const TT w = konst(f32({p.c, p.m / p.group, p.k, p.k},
                               random_floats(static_cast<size_t>(p.c * p.m / p.group * p.k * p.k), 22)));
        const TT b = konst(f32({p.m}, random_floats(static_cast<size_t>(p.m), 23)));
        Shape s;
        std::vector<double> want = conv_transpose_ref(x, w, p.group, p.s, p.d, p.pad, p.pad, p.op, &s);
        const A attrs = A().is("strides", {p.s, p.s})
                            .is("dilations", {p.d, p.d})
                            .is("pads", {p.pad, p.pad, p.pad, p.pad})
                            .is("output_padding", {p.op, p.op})
                            .i("group", p.group);
        const TT y = run1("ConvTranspose", attrs, {&x, &w, &b});
        ASSERT_EQ(y.shape, s);
        for (size_t i = 0; i < want.size(); ++i)
            want[i] += b.f()[static_cast<size_t>((int64_t(i) / (s[2] * s[3])) % s[1])];
        expect_near_all(y.f(), want, 1e-5, "conv_transpose");

        // NHWC: input transposed, weight [C, M/g, K, K] -> [M, K, K, C/g].
        Shape xs, ys;
        const std::vector<float> xt = transpose_ref(x.f(), x.shape, {0, 2, 3, 1}, &xs);
        const int64_t cg = p.c / p.group, mg = p.m / p.group;
        std::vector<float> wt(w.f().size());
        for (int64_t c = 0; c < p.c; ++c)
            for (int64_t mo = 0; mo < mg; ++mo)
                for (int64_t a = 0; a < p.k; ++a)
                    for (int64_t bb = 0; bb < p.k; ++bb) {
                        const int64_t m = (c / cg) * mg + mo, ci = c % cg;
                        wt[static_cast<size_t>(((m * p.k + a) * p.k + bb) * cg + ci)] =
                            w.f()[static_cast<size_t>(((c * mg + mo) * p.k + a) * p.k + bb)];
                    }
        const TT xnhwc = f32(xs, xt), wnhwc = konst(f32({p.m, p.k, p.k, cg}, wt));
        const TT yn = run1("ConvTranspose", A(attrs).s("data_layout", "NHWC"), {&xnhwc, &wnhwc, &b});
        expect_near_all(yn.f(), transpose_ref(y.f(), y.shape, {0, 2, 3, 1}, &ys), 1e-6, "conv_transpose nhwc");
    }
}

TEST(OpsConvTranspose, OutputShapeAndSamePadding) {
    // ONNX convtranspose_output_shape: strides 3x2, output_shape 10x8. The full transposed size is 9x7,
    // so the output is extended at the end, exactly like output_padding 1x1.
    const TT x = f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
    const TT w = konst(f32({1, 2, 3, 3}, std::vector<float>(18, 1.0f)));
    const TT y = run1("ConvTranspose", A().is("strides", {3, 2}).is("output_shape", {10, 8}), {&x, &w});
    EXPECT_EQ(y.shape, (Shape{1, 2, 10, 8}));
    const TT y2 = run1("ConvTranspose", A().is("strides", {3, 2}).is("output_padding", {1, 1}), {&x, &w});
    EXPECT_EQ(y2.shape, (Shape{1, 2, 10, 8}));
    EXPECT_EQ(y.f(), y2.f());
    const TT ys = run1("ConvTranspose", A().is("strides", {2, 2}).s("auto_pad", "SAME_UPPER"), {&x, &w});
    EXPECT_EQ(ys.shape, (Shape{1, 2, 6, 6}));
}

// ---- Gemm / MatMul --------------------------------------------------------------------------------------

TEST(OpsGemm, TransposesAlphaBetaAndBroadcastC) {
    const int64_t M = 3, K = 4, N = 5;
    for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb)
            for (const Shape& cs : {Shape{M, N}, Shape{N}, Shape{M, 1}, Shape{1}, Shape{}}) {
                const TT a = f32(ta ? Shape{K, M} : Shape{M, K}, random_floats(12, 31));
                const TT b = f32(tb ? Shape{N, K} : Shape{K, N}, random_floats(20, 32));
                const TT c = f32(cs, random_floats(static_cast<size_t>(product(cs)), 33));
                const TT y =
                    run1("Gemm", A().i("transA", ta).i("transB", tb).f("alpha", 0.5f).f("beta", 2.0f), {&a, &b, &c});
                ASSERT_EQ(y.shape, (Shape{M, N}));
                std::vector<double> want;
                for (int64_t m = 0; m < M; ++m)
                    for (int64_t n = 0; n < N; ++n) {
                        double acc = 0;
                        for (int64_t k = 0; k < K; ++k)
                            acc += double(a.f()[static_cast<size_t>(ta ? k * M + m : m * K + k)]) *
                                   b.f()[static_cast<size_t>(tb ? n * K + k : k * N + n)];
                        want.push_back(0.5 * acc + 2.0 * c.f()[static_cast<size_t>(broadcast_offset({m, n}, cs))]);
                    }
                expect_near_all(y.f(), want, 1e-5, "gemm");
            }
    const TT a = f32({2, 3}, random_floats(6, 1)), b = f32({2, 3}, random_floats(6, 2));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "inner dimensions", "Gemm", A(), {&a, &b});
    const TT y = run1("Gemm", A().i("transB", 1).s("activation", "Relu"), {&a, &b});
    for (float v : y.f()) EXPECT_GE(v, 0.0f);
}

TEST(OpsMatMul, BatchedBroadcastingAndVectors) {
    const std::vector<std::pair<Shape, Shape>> cases = {
        {{3, 4}, {4, 5}}, {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}}, {{4}, {4, 5}}, {{2, 3, 4}, {4}}, {{4}, {4}}};
    for (const auto& c : cases) {
        const TT a = f32(c.first, random_floats(static_cast<size_t>(product(c.first)), 41));
        const TT b = f32(c.second, random_floats(static_cast<size_t>(product(c.second)), 42));
        const TT y = run1("MatMul", A(), {&a, &b});
        // numpy: promote vectors, broadcast batch, then drop the promoted dims.
        Shape sa = c.first, sb = c.second;
        if (sa.size() == 1) sa.insert(sa.begin(), 1);
        if (sb.size() == 1) sb.push_back(1);
        const int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
        const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
        const Shape batch = kes::broadcast_shapes(ba, bb);
        std::vector<double> want;
        for (int64_t bi = 0; bi < product(batch); ++bi) {
            const std::vector<int64_t> idx = unravel(bi, batch);
            const int64_t oa = broadcast_offset(idx, ba), ob = broadcast_offset(idx, bb);
            for (int64_t m = 0; m < M; ++m)
                for (int64_t n = 0; n < N; ++n) {
                    double acc = 0;
                    for (int64_t k = 0; k < K; ++k)
                        acc += double(a.f()[static_cast<size_t>(oa * M * K + m * K + k)]) *
                               b.f()[static_cast<size_t>(ob * K * N + k * N + n)];
                    want.push_back(acc);
                }
        }
        Shape out = batch;
        if (c.first.size() > 1) out.push_back(M);
        if (c.second.size() > 1) out.push_back(N);
        EXPECT_EQ(y.shape, out);
        expect_near_all(y.f(), want, 1e-5, "matmul");
    }
    const TT a = f32({2, 3}, random_floats(6, 1)), b = f32({4, 2}, random_floats(8, 2));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "inner dimensions", "MatMul", A(), {&a, &b});
}

// ---- pools ----------------------------------------------------------------------------------------------

struct PoolCase {
    int64_t h, w, k, s, d, pb, pe, ceil, include_pad;
};

// Reference pooling of one 2-D plane, square kernel; output size computed independently.
std::vector<double> pool_ref(const std::vector<float>& x, const PoolCase& p, bool is_max, int64_t* oh, int64_t* ow) {
    auto out_size = [&](int64_t in) {
        const double v = double(in + p.pb + p.pe - ((p.k - 1) * p.d + 1)) / double(p.s) + 1.0;
        int64_t o = p.ceil ? static_cast<int64_t>(std::ceil(v - 1.0)) + 1 : static_cast<int64_t>(std::floor(v));
        if (p.ceil && (o - 1) * p.s >= in + p.pb) --o;
        return o;
    };
    *oh = out_size(p.h);
    *ow = out_size(p.w);
    std::vector<double> y;
    for (int64_t i = 0; i < *oh; ++i)
        for (int64_t j = 0; j < *ow; ++j) {
            double acc = is_max ? -INFINITY : 0.0;
            int64_t cnt = 0;
            for (int64_t a = 0; a < p.k; ++a)
                for (int64_t b = 0; b < p.k; ++b) {
                    const int64_t yy = i * p.s - p.pb + a * p.d, xx = j * p.s - p.pb + b * p.d;
                    const bool inside = yy >= 0 && yy < p.h && xx >= 0 && xx < p.w;
                    const bool padded = yy >= -p.pb && yy < p.h + p.pe && xx >= -p.pb && xx < p.w + p.pe;
                    if (inside) {
                        const double v = x[static_cast<size_t>(yy * p.w + xx)];
                        acc = is_max ? std::max(acc, v) : acc + v;
                        ++cnt;
                    } else if (padded && p.include_pad) {
                        ++cnt;
                    }
                }
            y.push_back(is_max ? acc : acc / double(cnt));
        }
    return y;
}

TEST(OpsPool, MaxAndAverageWithPadsCeilDilation) {
    const std::vector<PoolCase> cases = {{6, 6, 2, 2, 1, 0, 0, 0, 0}, {5, 5, 3, 2, 1, 1, 1, 0, 0},
                                         {5, 5, 3, 2, 1, 1, 1, 0, 1}, {6, 6, 3, 2, 1, 0, 0, 1, 0},
                                         {6, 6, 3, 2, 1, 0, 0, 1, 1}, {7, 7, 3, 2, 1, 1, 0, 1, 1},
                                         {7, 7, 2, 1, 2, 0, 0, 0, 0}, {4, 4, 3, 3, 1, 1, 1, 1, 1}};
    for (const PoolCase& p : cases) {
        const TT x = f32({1, 2, p.h, p.w}, random_floats(static_cast<size_t>(2 * p.h * p.w), 51));
        const A attrs = A().is("kernel_shape", {p.k, p.k})
                            .is("strides", {p.s, p.s})
                            .is("dilations", {p.d, p.d})
                            .is("pads", {p.pb, p.pb, p.pe, p.pe})
                            .i("ceil_mode", p.ceil);
        for (bool is_max : {true, false}) {
            if (!is_max && p.d != 1) continue;
            const TT y = run1(is_max ? "MaxPool" : "AveragePool",
                              A(attrs).i("count_include_pad", p.include_pad).is("dilations", {p.d, p.d}), {&x});
            std::vector<double> want;
            int64_t oh = 0, ow = 0;
            const std::vector<float> xv = x.f();
            for (int64_t c = 0; c < 2; ++c) {
                const std::vector<float> plane(xv.begin() + c * p.h * p.w, xv.begin() + (c + 1) * p.h * p.w);
                const std::vector<double> r = pool_ref(plane, p, is_max, &oh, &ow);
                want.insert(want.end(), r.begin(), r.end());
            }
            ASSERT_EQ(y.shape, (Shape{1, 2, oh, ow})) << (is_max ? "max" : "avg") << " h=" << p.h << " k=" << p.k;
            expect_near_all(y.f(), want, 1e-5, is_max ? "maxpool" : "avgpool");
        }
    }
}

TEST(OpsPool, OnnxDocExamples) {
    // maxpool_2d_ceil: 4x4 1..16, k3 s2 ceil -> [[11,12],[15,16]].
    std::vector<float> v(16);
    for (int i = 0; i < 16; ++i) v[static_cast<size_t>(i)] = float(i + 1);
    const TT x = f32({1, 1, 4, 4}, v);
    const TT y = run1("MaxPool", A().is("kernel_shape", {3, 3}).is("strides", {2, 2}).i("ceil_mode", 1), {&x});
    EXPECT_EQ(y.f(), (std::vector<float>{11, 12, 15, 16}));
    // averagepool_2d_pads_count_include_pad (5x5, k3, pads 2): corner = (1+2+3+6+7+8+11+12+13... ) use 1st row.
    std::vector<float> v25(25);
    for (int i = 0; i < 25; ++i) v25[static_cast<size_t>(i)] = float(i + 1);
    const TT x5 = f32({1, 1, 5, 5}, v25);
    const TT a =
        run1("AveragePool", A().is("kernel_shape", {3, 3}).is("pads", {2, 2, 2, 2}).i("count_include_pad", 1), {&x5});
    EXPECT_EQ(a.shape, (Shape{1, 1, 7, 7}));
    EXPECT_NEAR(a.f()[0], 1.0f / 9.0f, 1e-6);  // only the 1 at (0,0) is inside the window
    const TT an = run1("AveragePool", A().is("kernel_shape", {3, 3}).is("pads", {2, 2, 2, 2}), {&x5});
    EXPECT_NEAR(an.f()[0], 1.0f, 1e-6);
    // Indices output: flat NCHW index of the max.
    const std::vector<TT> mi = run_op("MaxPool", A().is("kernel_shape", {2, 2}).is("strides", {2, 2}), {&x}, 2);
    EXPECT_EQ(mi[1].values<int64_t>(), (std::vector<int64_t>{5, 7, 13, 15}));
    const std::vector<TT> mc =
        run_op("MaxPool", A().is("kernel_shape", {2, 2}).is("strides", {2, 2}).i("storage_order", 1), {&x}, 2);
    EXPECT_EQ(mc[1].values<int64_t>(), (std::vector<int64_t>{5, 13, 7, 15}));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "kernel_shape", "MaxPool", A(), {&x});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'ceil_mode'", "MaxPool",
                        A().is("kernel_shape", {2, 2}).i("ceil_mode", 2), {&x});
}

TEST(OpsPool, NhwcMatchesNchwAndGlobalPools) {
    const TT x = f32({2, 3, 7, 6}, random_floats(252, 61));
    Shape xs, ys;
    const TT xh = f32(Shape{2, 7, 6, 3}, transpose_ref(x.f(), x.shape, {0, 2, 3, 1}, &xs));
    for (const char* op : {"MaxPool", "AveragePool"}) {
        const A attrs = A().is("kernel_shape", {3, 2}).is("strides", {2, 1}).is("pads", {1, 0, 1, 1}).i("ceil_mode", 1);
        const TT y = run1(op, attrs, {&x});
        const TT yh = run1(op, A(attrs).s("data_layout", "NHWC"), {&xh});
        expect_near_all(yh.f(), transpose_ref(y.f(), y.shape, {0, 2, 3, 1}, &ys), 1e-6, op);
        EXPECT_EQ(yh.shape, ys);
    }
    const TT ga = run1("GlobalAveragePool", A(), {&x});
    const TT gm = run1("GlobalMaxPool", A(), {&x});
    EXPECT_EQ(ga.shape, (Shape{2, 3, 1, 1}));
    const TT gah = run1("GlobalAveragePool", A().s("data_layout", "NHWC"), {&xh});
    EXPECT_EQ(gah.shape, (Shape{2, 1, 1, 3}));
    for (int64_t nc = 0; nc < 6; ++nc) {
        double sum = 0, mx = -INFINITY;
        for (int64_t i = 0; i < 42; ++i) {
            const double v = x.f()[static_cast<size_t>(nc * 42 + i)];
            sum += v;
            mx = std::max(mx, v);
        }
        EXPECT_NEAR(ga.f()[static_cast<size_t>(nc)], sum / 42, 1e-5);
        EXPECT_NEAR(gah.f()[static_cast<size_t>(nc)], sum / 42, 1e-5);
        EXPECT_EQ(gm.f()[static_cast<size_t>(nc)], static_cast<float>(mx));
    }
}

// ---- 3-D spatial (rank 5) -------------------------------------------------------------------------------

// Per-axis window geometry: strides, dilations and the pads at the begin and the end of each axis.
struct NdWin {
    Shape s, d, pb, pe;
};

A nd_attrs(const NdWin& g) {
    Shape pads = g.pb;
    pads.insert(pads.end(), g.pe.begin(), g.pe.end());
    return A().is("strides", g.s).is("dilations", g.d).is("pads", pads);
}

Shape spatial_dims(const Shape& s) {
    return Shape(s.begin() + 2, s.end());
}

const std::vector<size_t> kToChannelsLast = {0, 2, 3, 4, 1};

TT channels_last(const TT& t) {
    Shape s;
    const std::vector<float> v = transpose_ref(t.f(), t.shape, kToChannelsLast, &s);
    TT r = f32(s, v);
    r.is_const = t.is_const;
    return r;
}

// Direct N-d convolution in double: X [N, C, S...], weight [M, C/group, K...].
std::vector<double> conv_nd_ref(const TT& x, const TT& w, const std::vector<float>* bias, int64_t group, const NdWin& g,
                                Shape* out_shape) {
    const Shape in = spatial_dims(x.shape), k = spatial_dims(w.shape);
    const size_t ns = in.size();
    const int64_t M = w.shape[0], CG = w.shape[1], MG = M / group;
    Shape ys{x.shape[0], M};
    for (size_t a = 0; a < ns; ++a) ys.push_back((in[a] + g.pb[a] + g.pe[a] - ((k[a] - 1) * g.d[a] + 1)) / g.s[a] + 1);
    *out_shape = ys;
    const std::vector<float> xv = x.f(), wv = w.f();
    std::vector<double> y(static_cast<size_t>(product(ys)));
    for (int64_t yi = 0; yi < product(ys); ++yi) {
        const std::vector<int64_t> o = unravel(yi, ys);
        double acc = bias ? (*bias)[static_cast<size_t>(o[1])] : 0.0;
        for (int64_t ci = 0; ci < CG; ++ci)
            for (int64_t ki = 0; ki < product(k); ++ki) {
                const std::vector<int64_t> kk = unravel(ki, k);
                std::vector<int64_t> xi{o[0], (o[1] / MG) * CG + ci}, wi{o[1], ci};
                bool inside = true;
                for (size_t a = 0; a < ns; ++a) {
                    const int64_t p = o[2 + a] * g.s[a] - g.pb[a] + kk[a] * g.d[a];
                    inside = inside && p >= 0 && p < in[a];
                    xi.push_back(p);
                    wi.push_back(kk[a]);
                }
                if (inside)
                    acc += double(xv[static_cast<size_t>(ravel(xi, x.shape))]) *
                           wv[static_cast<size_t>(ravel(wi, w.shape))];
            }
        y[static_cast<size_t>(yi)] = acc;
    }
    return y;
}

TEST(Ops3d, ConvMatchesReferenceInNcdhwAndNdhwc) {
    struct P {
        Shape x;
        int64_t m, group;
        Shape k;
        NdWin g;
    };
    const std::vector<P> cases = {
        {{1, 3, 5, 6, 7}, 4, 1, {3, 3, 3}, {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}},  // plain 3x3x3 same
        {{2, 4, 6, 5, 7}, 6, 2, {3, 2, 3}, {{2, 1, 2}, {1, 1, 1}, {0, 1, 2}, {1, 0, 0}}},  // groups, asymmetric pads
        {{1, 3, 7, 7, 6}, 3, 3, {3, 3, 2}, {{1, 2, 1}, {2, 1, 2}, {2, 1, 0}, {1, 3, 1}}},  // depthwise + dilation
        {{1, 4, 5, 5, 5}, 8, 4, {2, 3, 3}, {{2, 2, 1}, {1, 1, 1}, {1, 1, 0}, {0, 1, 1}}},  // depthwise multiplier 2
        {{1, 2, 3, 4, 5}, 4, 1, {1, 1, 1}, {{1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}}},  // 1x1x1
    };
    uint32_t seed = 200;
    for (const P& p : cases) {
        const TT x = f32(p.x, random_floats(static_cast<size_t>(product(p.x)), ++seed));
        Shape ws{p.m, p.x[1] / p.group};
        ws.insert(ws.end(), p.k.begin(), p.k.end());
        const TT w = konst(f32(ws, random_floats(static_cast<size_t>(product(ws)), ++seed)));
        const TT b = konst(f32({p.m}, random_floats(static_cast<size_t>(p.m), ++seed)));
        const A attrs = A(nd_attrs(p.g)).i("group", p.group);
        const std::vector<float> bias = b.f();
        Shape want_shape;
        const std::vector<double> want = conv_nd_ref(x, w, &bias, p.group, p.g, &want_shape);
        const TT y = run1("Conv", attrs, {&x, &w, &b});
        ASSERT_EQ(y.shape, want_shape);
        expect_near_all(y.f(), want, 1e-5, "conv3d");
        const TT y_nobias = run1("Conv", attrs, {&x, &w});
        expect_near_all(y_nobias.f(), conv_nd_ref(x, w, nullptr, p.group, p.g, &want_shape), 1e-5, "conv3d no bias");

        // NDHWC: input channels last, filter OIDHW -> ODHWI.
        const TT xc = channels_last(x), wc = channels_last(w);
        const TT yc = run1("Conv", A(attrs).s("data_layout", "NHWC"), {&xc, &wc, &b});
        Shape ys;
        const std::vector<float> want_c = transpose_ref(y.f(), y.shape, kToChannelsLast, &ys);
        ASSERT_EQ(yc.shape, ys);
        expect_near_all(yc.f(), want_c, 1e-6, "conv3d ndhwc");

        // Fused LeakyRelu.
        const TT ya = run1("Conv", A(attrs).s("activation", "LeakyRelu").f("activation_alpha", 0.1f), {&x, &w, &b});
        std::vector<double> want_a = want;
        for (double& v : want_a) v = v < 0 ? 0.1 * v : v;
        expect_near_all(ya.f(), want_a, 1e-5, "conv3d fused leaky relu");
    }
}

TEST(Ops3d, ConvAutoPadSameUpper) {
    const TT x = f32({1, 2, 5, 6, 7}, random_floats(420, 211));
    const TT w = konst(f32({3, 2, 3, 3, 3}, random_floats(162, 212)));
    const TT y = run1("Conv", A().s("auto_pad", "SAME_UPPER").is("strides", {2, 2, 2}), {&x, &w});
    // Out = ceil(in / 2) = 3, 3, 4; total pads (out-1)*2 + 3 - in = 2, 1, 2, the odd one at the end.
    Shape s;
    const std::vector<double> want = conv_nd_ref(x, w, nullptr, 1, {{2, 2, 2}, {1, 1, 1}, {1, 0, 1}, {1, 1, 1}}, &s);
    EXPECT_EQ(y.shape, (Shape{1, 3, 3, 3, 4}));
    EXPECT_EQ(y.shape, s);
    expect_near_all(y.f(), want, 1e-5, "conv3d same_upper");
    const TT yv = run1("Conv", A().s("auto_pad", "VALID"), {&x, &w});
    EXPECT_EQ(yv.shape, (Shape{1, 3, 3, 4, 5}));
}

// Scatter reference: X [N, C, S...], weight [C, M/group, K...]; out = s (in - 1) + out_pad + extent - pb - pe.
std::vector<double> conv_transpose_nd_ref(const TT& x, const TT& w, const std::vector<float>* bias, int64_t group,
                                          const NdWin& g, const Shape& out_pad, Shape* out_shape) {
    const Shape in = spatial_dims(x.shape), k = spatial_dims(w.shape);
    const size_t ns = in.size();
    const int64_t C = x.shape[1], MG = w.shape[1], M = MG * group, CG = C / group;
    Shape ys{x.shape[0], M};
    for (size_t a = 0; a < ns; ++a)
        ys.push_back(g.s[a] * (in[a] - 1) + out_pad[a] + (k[a] - 1) * g.d[a] + 1 - g.pb[a] - g.pe[a]);
    *out_shape = ys;
    std::vector<double> y(static_cast<size_t>(product(ys)));
    for (int64_t i = 0; i < product(ys); ++i)
        y[static_cast<size_t>(i)] = bias ? (*bias)[static_cast<size_t>(unravel(i, ys)[1])] : 0.0;
    const std::vector<float> xv = x.f(), wv = w.f();
    for (int64_t xi = 0; xi < product(x.shape); ++xi) {
        const std::vector<int64_t> idx = unravel(xi, x.shape);
        const int64_t c = idx[1];
        for (int64_t mo = 0; mo < MG; ++mo)
            for (int64_t ki = 0; ki < product(k); ++ki) {
                const std::vector<int64_t> kk = unravel(ki, k);
                std::vector<int64_t> oi{idx[0], (c / CG) * MG + mo}, wi{c, mo};
                bool inside = true;
                for (size_t a = 0; a < ns; ++a) {
                    const int64_t p = idx[2 + a] * g.s[a] - g.pb[a] + kk[a] * g.d[a];
                    inside = inside && p >= 0 && p < ys[2 + a];
                    oi.push_back(p);
                    wi.push_back(kk[a]);
                }
                if (inside)
                    y[static_cast<size_t>(ravel(oi, ys))] +=
                        double(xv[static_cast<size_t>(xi)]) * wv[static_cast<size_t>(ravel(wi, w.shape))];
            }
    }
    return y;
}

TEST(Ops3d, ConvTransposeMatchesScatterReference) {
    struct P {
        Shape x;
        int64_t m, group;
        Shape k;
        NdWin g;
        Shape out_pad;
    };
    const std::vector<P> cases = {
        {{1, 2, 3, 4, 3}, 3, 1, {3, 3, 3}, {{2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, {1, 1, 1}},
        {{2, 4, 3, 3, 2}, 4, 2, {2, 3, 2}, {{2, 1, 3}, {1, 1, 1}, {0, 1, 0}, {1, 0, 1}}, {1, 0, 2}},  // asym. pads
        {{1, 2, 4, 3, 3}, 2, 1, {3, 2, 3}, {{1, 2, 1}, {2, 1, 2}, {1, 0, 2}, {2, 1, 0}}, {0, 1, 1}},  // dilation
        {{1, 3, 3, 3, 3}, 3, 3, {3, 3, 3}, {{2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, {0, 0, 0}},  // depthwise
    };
    uint32_t seed = 220;
    for (const P& p : cases) {
        const int64_t c = p.x[1], cg = c / p.group, mg = p.m / p.group;
        const TT x = f32(p.x, random_floats(static_cast<size_t>(product(p.x)), ++seed));
        Shape ws{c, mg};
        ws.insert(ws.end(), p.k.begin(), p.k.end());
        const TT w = konst(f32(ws, random_floats(static_cast<size_t>(product(ws)), ++seed)));
        const TT b = konst(f32({p.m}, random_floats(static_cast<size_t>(p.m), ++seed)));
        const A attrs = A(nd_attrs(p.g)).is("output_padding", p.out_pad).i("group", p.group);
        const std::vector<float> bias = b.f();
        Shape want_shape;
        const std::vector<double> want = conv_transpose_nd_ref(x, w, &bias, p.group, p.g, p.out_pad, &want_shape);
        const TT y = run1("ConvTranspose", attrs, {&x, &w, &b});
        ASSERT_EQ(y.shape, want_shape);
        expect_near_all(y.f(), want, 1e-5, "conv_transpose3d");

        // NDHWC: weight [C, M/g, K...] -> [M, K..., C/g].
        Shape wcs{p.m};
        wcs.insert(wcs.end(), p.k.begin(), p.k.end());
        wcs.push_back(cg);
        std::vector<float> wcv(static_cast<size_t>(product(ws)));
        for (int64_t i = 0; i < product(ws); ++i) {
            const std::vector<int64_t> idx = unravel(i, ws);
            std::vector<int64_t> to{(idx[0] / cg) * mg + idx[1]};
            to.insert(to.end(), idx.begin() + 2, idx.end());
            to.push_back(idx[0] % cg);
            wcv[static_cast<size_t>(ravel(to, wcs))] = w.f()[static_cast<size_t>(i)];
        }
        const TT xc = channels_last(x), wc = konst(f32(wcs, wcv));
        const TT yc = run1("ConvTranspose", A(attrs).s("data_layout", "NHWC"), {&xc, &wc, &b});
        Shape ys;
        const std::vector<float> want_c = transpose_ref(y.f(), y.shape, kToChannelsLast, &ys);
        ASSERT_EQ(yc.shape, ys);
        expect_near_all(yc.f(), want_c, 1e-6, "conv_transpose3d ndhwc");

        const TT yr = run1("ConvTranspose", A(attrs).s("activation", "Relu"), {&x, &w, &b});
        std::vector<double> want_r = want;
        for (double& v : want_r) v = std::max(v, 0.0);
        expect_near_all(yr.f(), want_r, 1e-5, "conv_transpose3d fused relu");
    }
}

TEST(Ops3d, ConvTransposeSamePaddingAndOutputShape) {
    const TT x = f32({1, 1, 2, 3, 2}, random_floats(12, 231));
    const TT w = konst(f32({1, 2, 3, 3, 3}, random_floats(54, 232)));
    // SAME_UPPER: out = in * stride; the full sizes 5, 7, 5 lose one element at the end.
    const TT ys = run1("ConvTranspose", A().is("strides", {2, 2, 2}).s("auto_pad", "SAME_UPPER"), {&x, &w});
    Shape s;
    const NdWin same{{2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}};
    EXPECT_EQ(ys.shape, (Shape{1, 2, 4, 6, 4}));
    expect_near_all(ys.f(), conv_transpose_nd_ref(x, w, nullptr, 1, same, {0, 0, 0}, &s), 1e-5, "same_upper");
    EXPECT_EQ(ys.shape, s);
    // output_shape 5x8x5 past the full 5x7x5 extends the second axis with bias-only values.
    const TT yo = run1("ConvTranspose", A().is("strides", {2, 2, 2}).is("output_shape", {5, 8, 5}), {&x, &w});
    const NdWin extend{{2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, -1, 0}};
    EXPECT_EQ(yo.shape, (Shape{1, 2, 5, 8, 5}));
    expect_near_all(yo.f(), conv_transpose_nd_ref(x, w, nullptr, 1, extend, {0, 0, 0}, &s), 1e-5, "output_shape");
}

struct Pool3dCase {
    Shape x, k;
    NdWin g;
    int64_t ceil, include_pad;
};

// Reference N-d pooling over X [N, C, S...]; output size computed independently. For max, `argmax`
// receives the spatial position of the first maximum of each window.
std::vector<double> pool_nd_ref(const TT& x, const Pool3dCase& p, bool is_max, Shape* out_shape,
                                std::vector<std::vector<int64_t>>* argmax) {
    const Shape in = spatial_dims(x.shape);
    const size_t ns = in.size();
    Shape ys{x.shape[0], x.shape[1]};
    for (size_t a = 0; a < ns; ++a) {
        const double v = double(in[a] + p.g.pb[a] + p.g.pe[a] - ((p.k[a] - 1) * p.g.d[a] + 1)) / double(p.g.s[a]) + 1.0;
        int64_t o = p.ceil ? static_cast<int64_t>(std::ceil(v - 1.0)) + 1 : static_cast<int64_t>(std::floor(v));
        if (p.ceil && (o - 1) * p.g.s[a] >= in[a] + p.g.pb[a]) --o;
        ys.push_back(o);
    }
    *out_shape = ys;
    const std::vector<float> xv = x.f();
    std::vector<double> y;
    if (argmax) argmax->clear();
    for (int64_t yi = 0; yi < product(ys); ++yi) {
        const std::vector<int64_t> o = unravel(yi, ys);
        double acc = is_max ? -INFINITY : 0.0;
        int64_t cnt = 0;
        std::vector<int64_t> best;
        for (int64_t ki = 0; ki < product(p.k); ++ki) {
            const std::vector<int64_t> kk = unravel(ki, p.k);
            std::vector<int64_t> xi{o[0], o[1]};
            bool inside = true, padded = true;
            for (size_t a = 0; a < ns; ++a) {
                const int64_t q = o[2 + a] * p.g.s[a] - p.g.pb[a] + kk[a] * p.g.d[a];
                inside = inside && q >= 0 && q < in[a];
                padded = padded && q >= -p.g.pb[a] && q < in[a] + p.g.pe[a];
                xi.push_back(q);
            }
            if (inside) {
                const double v = xv[static_cast<size_t>(ravel(xi, x.shape))];
                if (is_max && v > acc) acc = v, best.assign(xi.begin() + 2, xi.end());
                if (!is_max) acc += v;
                ++cnt;
            } else if (padded && p.include_pad) {
                ++cnt;
            }
        }
        y.push_back(is_max ? acc : acc / double(cnt));
        if (argmax) argmax->push_back(best);
    }
    return y;
}

const std::vector<Pool3dCase> kPool3dCases = {
    {{1, 2, 4, 4, 4}, {2, 2, 2}, {{2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}}, 0, 0},
    {{1, 2, 5, 6, 5}, {3, 3, 2}, {{2, 2, 1}, {1, 1, 1}, {1, 0, 1}, {1, 1, 0}}, 0, 0},  // asymmetric pads
    {{1, 2, 5, 6, 5}, {3, 3, 2}, {{2, 2, 1}, {1, 1, 1}, {1, 0, 1}, {1, 1, 0}}, 0, 1},  // + count_include_pad
    {{2, 2, 6, 5, 6}, {3, 2, 3}, {{2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}}, 1, 0},  // ceil_mode
    {{1, 3, 7, 6, 5}, {3, 3, 3}, {{2, 2, 2}, {1, 1, 1}, {1, 1, 0}, {0, 1, 1}}, 1, 1},  // ceil + include_pad
    {{1, 2, 7, 7, 6}, {2, 2, 3}, {{1, 2, 1}, {2, 1, 2}, {0, 1, 1}, {1, 0, 1}}, 0, 0},  // dilation
    {{1, 1, 4, 5, 4}, {3, 3, 3}, {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, 1, 1},  // ceil drops a window
};

TEST(Ops3d, MaxAndAveragePoolMatchReference) {
    uint32_t seed = 240;
    for (const Pool3dCase& p : kPool3dCases) {
        const TT x = f32(p.x, random_floats(static_cast<size_t>(product(p.x)), ++seed));
        const A attrs = A(nd_attrs(p.g)).is("kernel_shape", p.k).i("ceil_mode", p.ceil);
        const Shape in = spatial_dims(p.x);
        const int64_t volume = product(in);

        Shape want_shape;
        std::vector<std::vector<int64_t>> argmax;
        const std::vector<double> want_max = pool_nd_ref(x, p, true, &want_shape, &argmax);
        for (int64_t order : {0, 1}) {
            const std::vector<TT> ym = run_op("MaxPool", A(attrs).i("storage_order", order), {&x}, 2);
            ASSERT_EQ(ym[0].shape, want_shape);
            expect_near_all(ym[0].f(), want_max, 0.0, "maxpool3d");
            // Indices: flat into X, row-major (order 0) or first spatial axis fastest (order 1).
            std::vector<int64_t> want_idx;
            for (int64_t i = 0; i < product(want_shape); ++i) {
                const std::vector<int64_t> o = unravel(i, want_shape), q = argmax[static_cast<size_t>(i)];
                const int64_t flat = order ? q[0] + in[0] * (q[1] + in[1] * q[2]) : ravel(q, in);
                want_idx.push_back((o[0] * p.x[1] + o[1]) * volume + flat);
            }
            EXPECT_EQ(ym[1].values<int64_t>(), want_idx) << "storage_order " << order;
        }

        const A avg_attrs = A(attrs).i("count_include_pad", p.include_pad);
        const TT ya = run1("AveragePool", avg_attrs, {&x});
        ASSERT_EQ(ya.shape, want_shape);
        expect_near_all(ya.f(), pool_nd_ref(x, p, false, &want_shape, nullptr), 1e-6, "avgpool3d");

        // NDHWC gives the NCDHW values, channels last.
        const TT xc = channels_last(x);
        Shape ys;
        const TT yac = run1("AveragePool", A(avg_attrs).s("data_layout", "NHWC"), {&xc});
        const std::vector<float> want_ac = transpose_ref(ya.f(), ya.shape, kToChannelsLast, &ys);
        EXPECT_EQ(yac.shape, ys);
        EXPECT_EQ(yac.f(), want_ac);
        const TT ymc = run1("MaxPool", A(attrs).s("data_layout", "NHWC"), {&xc});
        const std::vector<float> want_mc =
            transpose_ref(run1("MaxPool", attrs, {&x}).f(), want_shape, kToChannelsLast, &ys);
        EXPECT_EQ(ymc.shape, ys);
        EXPECT_EQ(ymc.f(), want_mc);
    }
}

TEST(Ops3d, MaxPoolBytesAndGlobalPools) {
    const Shape xs{1, 2, 3, 4, 5};
    std::vector<uint8_t> bytes(static_cast<size_t>(product(xs)));
    std::vector<float> as_float;
    for (size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<uint8_t>((i * 37 + 11) % 251);
        as_float.push_back(bytes[i]);
    }
    const TT xb = make_tensor<uint8_t>(KES_U8, xs, bytes, false);
    const Pool3dCase p{xs, {2, 2, 3}, {{1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {1, 0, 1}}, 0, 0};
    const TT yb = run1("MaxPool", A(nd_attrs(p.g)).is("kernel_shape", p.k), {&xb});
    Shape s;
    const std::vector<double> want = pool_nd_ref(f32(xs, as_float), p, true, &s, nullptr);
    ASSERT_EQ(yb.shape, s);
    EXPECT_EQ(yb.dtype, KES_U8);
    const std::vector<uint8_t> got = yb.values<uint8_t>();
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(double(got[i]), want[i]) << i;

    const TT x = f32({2, 3, 3, 4, 5}, random_floats(360, 251));
    const TT xc = channels_last(x);
    const TT ga = run1("GlobalAveragePool", A(), {&x}), gm = run1("GlobalMaxPool", A(), {&x});
    const TT gac = run1("GlobalAveragePool", A().s("data_layout", "NHWC"), {&xc});
    const TT gmc = run1("GlobalMaxPool", A().s("data_layout", "NHWC"), {&xc});
    EXPECT_EQ(ga.shape, (Shape{2, 3, 1, 1, 1}));
    EXPECT_EQ(gm.shape, (Shape{2, 3, 1, 1, 1}));
    EXPECT_EQ(gac.shape, (Shape{2, 1, 1, 1, 3}));
    for (int64_t nc = 0; nc < 6; ++nc) {
        double sum = 0, mx = -INFINITY;
        for (int64_t i = 0; i < 60; ++i) {
            const double v = x.f()[static_cast<size_t>(nc * 60 + i)];
            sum += v;
            mx = std::max(mx, v);
        }
        EXPECT_NEAR(ga.f()[static_cast<size_t>(nc)], sum / 60, 1e-5);
        EXPECT_NEAR(gac.f()[static_cast<size_t>(nc)], sum / 60, 1e-5);
        EXPECT_EQ(gm.f()[static_cast<size_t>(nc)], static_cast<float>(mx));
        EXPECT_EQ(gmc.f()[static_cast<size_t>(nc)], static_cast<float>(mx));
    }
}

// A rank-5 input of depth 1 runs the 3-D kernels; they must give the 2-D kernels' results bit for bit
// (the same taps summed in the same order).
TEST(Ops3d, UnitDepthGivesTheRank4ResultsExactly) {
    const TT x4 = f32({1, 4, 6, 7}, random_floats(168, 261));
    const TT x5 = f32({1, 4, 1, 6, 7}, x4.f());
    const TT w4 = konst(f32({6, 2, 3, 3}, random_floats(108, 262)));
    const TT w5 = konst(f32({6, 2, 1, 3, 3}, w4.f()));
    const TT b = konst(f32({6}, random_floats(6, 263)));
    const A conv2 = A().is("strides", {2, 1}).is("pads", {1, 0, 0, 1}).is("dilations", {1, 2}).i("group", 2);
    const A conv3 =
        A().is("strides", {1, 2, 1}).is("pads", {0, 1, 0, 0, 0, 1}).is("dilations", {1, 1, 2}).i("group", 2);
    EXPECT_EQ(run1("Conv", conv3, {&x5, &w5, &b}).f(), run1("Conv", conv2, {&x4, &w4, &b}).f());

    const TT wt4 = konst(f32({4, 3, 3, 2}, random_floats(72, 264)));
    const TT wt5 = konst(f32({4, 3, 1, 3, 2}, wt4.f()));
    const TT bt = konst(f32({3}, random_floats(3, 265)));
    const A ct2 = A().is("strides", {2, 2}).is("pads", {1, 0, 0, 1}).is("output_padding", {1, 0});
    const A ct3 = A().is("strides", {1, 2, 2}).is("pads", {0, 1, 0, 0, 0, 1}).is("output_padding", {0, 1, 0});
    EXPECT_EQ(run1("ConvTranspose", ct3, {&x5, &wt5, &bt}).f(), run1("ConvTranspose", ct2, {&x4, &wt4, &bt}).f());

    const A pool2 = A().is("kernel_shape", {3, 2}).is("strides", {2, 1}).is("pads", {1, 0, 1, 1}).i("ceil_mode", 1);
    const A pool3 =
        A().is("kernel_shape", {1, 3, 2}).is("strides", {1, 2, 1}).is("pads", {0, 1, 0, 0, 1, 1}).i("ceil_mode", 1);
    for (const char* op : {"MaxPool", "AveragePool"})
        for (int64_t include_pad : {0, 1})
            EXPECT_EQ(run1(op, A(pool3).i("count_include_pad", include_pad), {&x5}).f(),
                      run1(op, A(pool2).i("count_include_pad", include_pad), {&x4}).f())
                << op;
}

TEST(Ops3d, Errors) {
    const TT x = f32({1, 2, 3, 3, 3}, random_floats(54, 271));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "kernel_shape", "MaxPool", A().is("kernel_shape", {2, 2}), {&x});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "'strides'", "AveragePool",
                        A().is("kernel_shape", {2, 2, 2}).is("strides", {1, 1}), {&x});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "Indices", "MaxPool",
                        A().is("kernel_shape", {2, 2, 2}).s("data_layout", "NHWC"), {&x}, 2);
    const TT x6 = f32({1, 1, 2, 2, 2, 2}, random_floats(16, 272));
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "rank 6", "AveragePool", A().is("kernel_shape", {1, 1, 1, 1}), {&x6});
    const TT w = konst(f32({2, 2, 3, 3}, random_floats(36, 273)));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "input rank 5", "ConvTranspose", A(), {&x, &w});
}

TEST(OpsBatchNorm, InferenceNchwAndNhwc) {
    const TT x = f32({2, 3, 2, 2}, random_floats(24, 71));
    const TT scale = konst(f32({3}, {1.0f, 2.0f, -0.5f})), bias = konst(f32({3}, {0.1f, 0.2f, 0.3f}));
    const TT mean = konst(f32({3}, {0.0f, 0.5f, -1.0f})), var = konst(f32({3}, {1.0f, 0.25f, 4.0f}));
    const TT y = run1("BatchNormalization", A().f("epsilon", 1e-3f), {&x, &scale, &bias, &mean, &var});
    std::vector<double> want;
    for (int64_t i = 0; i < 24; ++i) {
        const size_t c = static_cast<size_t>((i / 4) % 3);
        want.push_back((x.f()[static_cast<size_t>(i)] - mean.f()[c]) / std::sqrt(var.f()[c] + 1e-3) * scale.f()[c] +
                       bias.f()[c]);
    }
    expect_near_all(y.f(), want, 1e-5, "batchnorm");
    Shape xs, ys;
    const TT xh = f32(Shape{2, 2, 2, 3}, transpose_ref(x.f(), x.shape, {0, 2, 3, 1}, &xs));
    const TT yh =
        run1("BatchNormalization", A().f("epsilon", 1e-3f).s("data_layout", "NHWC"), {&xh, &scale, &bias, &mean, &var});
    expect_near_all(yh.f(), transpose_ref(y.f(), y.shape, {0, 2, 3, 1}, &ys), 1e-6, "batchnorm nhwc");
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "training_mode", "BatchNormalization", A().i("training_mode", 1),
                        {&x, &scale, &bias, &mean, &var});
}

TEST(OpsNorm, LayerInstanceLrn) {
    const TT x = f32({2, 3, 4}, random_floats(24, 101, -2, 2));
    const TT sc = konst(f32({4}, random_floats(4, 102))), b = konst(f32({4}, random_floats(4, 103)));
    const std::vector<TT> ln = run_op("LayerNormalization", A().f("epsilon", 1e-3f), {&x, &sc, &b}, 3);
    std::vector<double> want, means, invs;
    for (int64_t r = 0; r < 6; ++r) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < 4; ++i) m += x.f()[static_cast<size_t>(r * 4 + i)];
        m /= 4;
        for (int64_t i = 0; i < 4; ++i) v += std::pow(x.f()[static_cast<size_t>(r * 4 + i)] - m, 2);
        v /= 4;
        means.push_back(m);
        invs.push_back(1 / std::sqrt(v + 1e-3));
        for (int64_t i = 0; i < 4; ++i)
            want.push_back((x.f()[static_cast<size_t>(r * 4 + i)] - m) / std::sqrt(v + 1e-3) *
                               sc.f()[static_cast<size_t>(i)] +
                           b.f()[static_cast<size_t>(i)]);
    }
    expect_near_all(ln[0].f(), want, 1e-5, "layernorm");
    EXPECT_EQ(ln[1].shape, (Shape{2, 3, 1}));
    expect_near_all(ln[1].f(), means, 1e-5, "mean");
    expect_near_all(ln[2].f(), invs, 1e-5, "invstddev");
    // axis 1 normalises the last two dims; the scale broadcasts over them.
    const TT sc2 = konst(f32({1, 4}, random_floats(4, 104)));
    const TT ln2 = run1("LayerNormalization", A().i("axis", 1), {&x, &sc2});
    double m = 0;
    for (int64_t i = 0; i < 12; ++i) m += x.f()[static_cast<size_t>(i)];
    m /= 12;
    double v = 0;
    for (int64_t i = 0; i < 12; ++i) v += std::pow(x.f()[static_cast<size_t>(i)] - m, 2);
    v /= 12;
    EXPECT_NEAR(ln2.f()[5], (x.f()[5] - m) / std::sqrt(v + 1e-5) * sc2.f()[1], 1e-5);

    const TT xi = f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, 0, 1, 6});
    const TT s2 = konst(f32({2}, {1.0f, 2.0f})), b2 = konst(f32({2}, {0.0f, 1.0f}));
    const TT in = run1("InstanceNormalization", A().f("epsilon", 0.0f), {&xi, &s2, &b2});
    const double sd0 = std::sqrt(1.25);  // channel 0: 1..4, mean 2.5; channel 1: mean 1.5
    EXPECT_NEAR(in.f()[0], (1 - 2.5) / sd0, 1e-5);
    EXPECT_NEAR(in.f()[7], 2 * (6 - 1.5) / std::sqrt(((1 - 1.5) * 0 + 6.25 + 2.25 + 0.25 + 20.25) / 4) + 1, 1e-5);

    const TT xl = f32({1, 5, 1, 2}, random_floats(10, 105));
    const TT l = run1("LRN", A().i("size", 3).f("alpha", 0.1f).f("beta", 0.75f).f("bias", 2.0f), {&xl});
    for (int64_t c = 0; c < 5; ++c)
        for (int64_t s = 0; s < 2; ++s) {
            double sum = 0;
            for (int64_t k = std::max<int64_t>(0, c - 1); k <= std::min<int64_t>(4, c + 1); ++k)
                sum += std::pow(xl.f()[static_cast<size_t>(k * 2 + s)], 2);
            EXPECT_NEAR(l.f()[static_cast<size_t>(c * 2 + s)],
                        xl.f()[static_cast<size_t>(c * 2 + s)] / std::pow(2.0 + 0.1 / 3 * sum, 0.75), 1e-5);
        }
}

TEST(OpsPool, MaxPoolBytes) {
    const TT x = make_tensor<uint8_t>(KES_U8, {1, 1, 2, 2}, {3, 250, 7, 1}, false);
    const TT y = run1("MaxPool", A().is("kernel_shape", {2, 2}), {&x});
    EXPECT_EQ(y.dtype, KES_U8);
    EXPECT_EQ(y.values<uint8_t>(), (std::vector<uint8_t>{250}));
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "u8", "AveragePool", A().is("kernel_shape", {2, 2}), {&x});
}

}  // namespace
}  // namespace kes_test
