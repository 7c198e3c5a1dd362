// test_kernels_quant.cpp — the fast int8 kernels against the reference kernels, the oracle: the same
// bytes. QLinearConv (qconv_nchw.cpp over the tables' qgemm and qdwconv_row) on random shapes (dense,
// grouped, depthwise; strides, dilations, pads; u8 and i8 inputs, weights and outputs; per-tensor and
// per-channel weights; bias; fused Relu/Clip) and at the types' extremes; QLinearMatMul (qgemm.cpp);
// QLinearAdd, QuantizeLinear and Clip on bytes (qelementwise.cpp); MaxPool on bytes (qpool_nchw.cpp). Every microkernel
// table this CPU has (under qemu, the NEON table), on 1 thread and on 3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "fast_kernel_test_util.hpp"
#include "kernels/common/microkernels.hpp"
#include "kernels/select.hpp"
#include "op_test_util.hpp"

namespace {

using kes_test::A;
using kes_test::TT;

// n random bytes of a u8 (0..255) or i8 (-128..127) tensor; `extreme` draws only the two ends.
TT random_q(std::mt19937& rng, kes_dtype dtype, kes::Shape shape, bool is_const, bool extreme = false) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (uint8_t& b : v)
        b = extreme ? (rng() % 2 ? 0x7F : 0x80) + (dtype == KES_U8 ? 0x80 : 0) : static_cast<uint8_t>(rng());
    return kes_test::make_tensor<uint8_t>(dtype, std::move(shape), v, is_const);
}

TT zero_point(kes_dtype dtype, kes::Shape shape, const std::vector<int>& values) {
    std::vector<uint8_t> v;
    for (int z : values) v.push_back(static_cast<uint8_t>(z));
    return kes_test::make_tensor<uint8_t>(dtype, std::move(shape), v, true);
}

// Runs the reference kernel and every table's fast kernel for the node; all must give the same bytes.
// Returns the reference output.
TT expect_fast_equals_reference(const std::string& op, const kes::Attrs& attrs, const std::vector<const TT*>& in,
                                const std::string& what) {
    SCOPED_TRACE(op + " " + what);
    const std::vector<TT> ref = kes_test::run_op(op, attrs, in, 1);
    if (ref[0].bytes.empty()) return ref[0];
    kes_test::TestNode t(op, attrs, in);
    kes_test::ThreePool pool;
    for (const kes::kernels::Microkernels* table : kes::kernels::microkernels_available()) {
        SCOPED_TRACE(table->name);
        std::unique_ptr<kes::Kernel> fast = kes::select_kernel(*t.node, t.outs, *table);
        EXPECT_NE(fast, nullptr) << "no fast kernel took the node";
        if (!fast) return ref[0];
        kes_test::AlignedBuffer packed(fast->packed_bytes());
        fast->pack(packed.data());
        fast->bind_packed(packed.data());
        kes_test::AlignedBuffer scratch(fast->scratch_bytes(kes::kMaxThreads));
        EXPECT_EQ((fast->scratch_bytes(2) - fast->scratch_bytes(1)) % 128, 0u) << fast->impl();
        std::vector<uint8_t> y1(ref[0].bytes.size(), 0xCD), y3(y1.size(), 0x5A);
        void* o1[] = {y1.data()};
        void* o3[] = {y3.data()};
        kes::RunContext serial;
        serial.scratch = scratch.data();
        kes::RunContext threaded{pool.pool, 3, scratch.data(), fast->scratch_bytes(kes::kMaxThreads)};
        kes_test::start_counting();
        fast->run(serial, t.data.data(), o1);
        fast->run(threaded, t.data.data(), o3);
        EXPECT_EQ(kes_test::stop_counting(), 0u) << "run() allocated";
        EXPECT_EQ(y1, y3) << "1 and 3 threads differ (" << fast->impl() << ")";
        for (size_t i = 0; i < y1.size(); ++i)
            if (y1[i] != ref[0].bytes[i]) {
                ADD_FAILURE() << "byte " << i << " of " << y1.size() << ": reference " << int{ref[0].bytes[i]} << ", "
                              << fast->impl() << " " << int{y1[i]};
                break;
            }
    }
    return ref[0];
}

const kes_dtype kTypes[] = {KES_U8, KES_I8};

int random_zero_point(std::mt19937& rng, kes_dtype dtype) {
    const int z = static_cast<int>(rng() % 256);
    return dtype == KES_U8 ? z : z - 128;
}

// One end of the type's range, at random.
int end_of(std::mt19937& rng, kes_dtype dtype) {
    const int lo = dtype == KES_U8 ? 0 : -128;
    return rng() % 2 ? lo : lo + 255;
}

struct QConvCase {
    int64_t n, c, m, group, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

// One QLinearConv with random data and quantization over the given geometry; `extreme` puts every
// input, weight and zero point at an end of its type's range (|x - zx|, |w - zw| are 0 or 255: the
// products a saturating 16-bit pair sum would clip).
// Counts of output bytes: all, and those strictly inside the type's range (not saturated).
struct Spread {
    size_t outputs = 0, inside = 0;
};

void check_qconv(std::mt19937& rng, const QConvCase& g, bool extreme, Spread& spread) {
    const kes_dtype xt = kTypes[rng() % 2], wt = kTypes[rng() % 2], yt = kTypes[rng() % 2];
    const TT x = random_q(rng, xt, {g.n, g.c, g.h, g.w}, false, extreme);
    const TT w = random_q(rng, wt, {g.m, g.c / g.group, g.kh, g.kw}, true, extreme);
    const bool per_channel = rng() % 2 == 0;
    std::uniform_real_distribution<float> scale(0.001f, 0.05f);
    std::vector<float> w_scale;
    std::vector<int> w_zp;
    for (int64_t i = 0; i < (per_channel ? g.m : 1); ++i) {
        w_scale.push_back(scale(rng));
        w_zp.push_back(extreme ? end_of(rng, wt) : random_zero_point(rng, wt));
    }
    const kes::Shape ws = per_channel ? kes::Shape{g.m} : kes::Shape{};
    const TT sx = kes_test::konst(kes_test::f32({}, {scale(rng)})), sw = kes_test::konst(kes_test::f32(ws, w_scale));
    const TT zx = zero_point(xt, {}, {extreme ? end_of(rng, xt) : random_zero_point(rng, xt)});
    const TT zw = zero_point(wt, ws, w_zp);
    // The output scale near the sums' spread, so outputs span the range instead of all saturating.
    // (At the extremes a product is 255² instead of about 255²/6 on average, and the signs agree more.)
    const float spread_factor = extreme ? 3000.0f : 40.0f;
    const float sum_scale = scale(rng) * w_scale[0] * static_cast<float>(g.c / g.group * g.kh * g.kw) * spread_factor;
    const TT sy = kes_test::konst(kes_test::f32({}, {sum_scale}));
    const TT zy = zero_point(yt, {}, {random_zero_point(rng, yt)});
    std::vector<int32_t> bias(static_cast<size_t>(g.m));
    for (int32_t& v : bias) v = static_cast<int32_t>(rng() % 200001) - 100000;
    const TT b = kes_test::konst(kes_test::i32({g.m}, bias));
    A attrs;
    attrs.i("group", g.group).is("strides", {g.sh, g.sw}).is("dilations", {g.dh, g.dw});
    attrs.is("pads", {g.pt, g.pl, g.pb, g.pr});
    const int act = static_cast<int>(rng() % 3);
    if (act == 1) attrs.s("activation", "Relu");
    if (act == 2) attrs.s("activation", "Clip").f("activation_min", -0.5f).f("activation_max", 3.0f);
    std::vector<const TT*> in{&x, &sx, &zx, &w, &sw, &zw, &sy, &zy};
    if (rng() % 4 != 0) in.push_back(&b);
    const std::string what =
        "x[" + std::to_string(g.n) + "," + std::to_string(g.c) + "," + std::to_string(g.h) + "," + std::to_string(g.w) +
        "] w[" + std::to_string(g.m) + "," + std::to_string(g.kh) + "," + std::to_string(g.kw) + "] s" +
        std::to_string(g.sh) + std::to_string(g.sw) + " d" + std::to_string(g.dh) + std::to_string(g.dw) + " p" +
        std::to_string(g.pt) + std::to_string(g.pl) + std::to_string(g.pb) + std::to_string(g.pr) + " g" +
        std::to_string(g.group) + " types " + kes_dtype_name(xt) + "/" + kes_dtype_name(wt) + "/" + kes_dtype_name(yt) +
        (per_channel ? " per-channel" : "") + (extreme ? " extreme" : "") + " act" + std::to_string(act);
    const TT y = expect_fast_equals_reference("QLinearConv", attrs, in, what);
    const uint8_t lo = yt == KES_U8 ? 0x00 : 0x80, hi = yt == KES_U8 ? 0xFF : 0x7F;
    for (uint8_t v : y.bytes) spread.inside += v != lo && v != hi;
    spread.outputs += y.bytes.size();
}

TEST(QuantFastKernels, QLinearConvEqualsReferenceOnRandomShapes) {
    std::mt19937 rng(2024);
    auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
    int tested = 0;
    Spread spread;
    for (int iter = 0; tested < 120 && iter < 2000; ++iter) {
        QConvCase g{};
        g.n = pick({1, 1, 2}), g.h = pick({1, 3, 7, 8, 13}), g.w = pick({1, 4, 9, 11, 29});
        g.kh = pick({1, 1, 3, 5}), g.kw = pick({1, 3, 3, 5});
        g.sh = pick({1, 2}), g.sw = pick({1, 2}), g.dh = pick({1, 1, 2}), g.dw = pick({1, 1, 2});
        const int mode = static_cast<int>(rng() % 3);  // 0 dense, 1 grouped, 2 depthwise
        g.c = pick({1, 3, 5, 8, 17, 24, 33}), g.m = pick({1, 2, 7, 16, 19, 32, 40}), g.group = 1;
        if (mode == 1) {
            g.group = pick({2, 3});
            g.c = g.group * pick({1, 2, 5}), g.m = g.group * pick({1, 3, 8});
        } else if (mode == 2) {
            g.c = g.m = g.group = pick({1, 3, 8, 17, 24, 33});
        }
        g.pt = static_cast<int64_t>(rng() % g.kh), g.pl = static_cast<int64_t>(rng() % g.kw);
        g.pb = static_cast<int64_t>(rng() % g.kh), g.pr = static_cast<int64_t>(rng() % g.kw);
        if (g.h + g.pt + g.pb < (g.kh - 1) * g.dh + 1 || g.w + g.pl + g.pr < (g.kw - 1) * g.dw + 1) continue;
        check_qconv(rng, g, false, spread);
        if (HasFailure()) return;
        ++tested;
    }
    EXPECT_EQ(tested, 120);
    // The cases exercise the rounding, not only the saturation: most outputs lie inside the range.
    EXPECT_GT(spread.inside * 2, spread.outputs) << spread.inside << " of " << spread.outputs;
}

// Inputs and weights at their types' ends, zero points at the other ends: every product is as large as
// the types allow, where 16-bit pair sums (vpmaddubsw) saturate; the int16 path must stay exact.
TEST(QuantFastKernels, QLinearConvIsExactAtTheTypesExtremes) {
    std::mt19937 rng(7);
    Spread spread;
    const QConvCase cases[] = {
        {1, 64, 24, 1, 9, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},    // 1×1, K = 64
        {2, 16, 33, 1, 11, 13, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1},   // 3×3, K = 144, stride 2 across
        {1, 24, 24, 24, 17, 37, 5, 5, 2, 1, 1, 2, 2, 2, 2, 2},  // depthwise 5×5, 33 outputs a row
        {1, 8, 8, 8, 9, 70, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},      // depthwise 3×3, stride 2, 35 outputs a row
    };
    for (const QConvCase& g : cases)
        for (int i = 0; i < 4; ++i) {
            check_qconv(rng, g, true, spread);
            if (HasFailure()) return;
        }
    EXPECT_GT(spread.inside * 2, spread.outputs) << spread.inside << " of " << spread.outputs;
}

// QLinearMatMul with a constant 2-D B: rows of A across tiles and batches, K and N off every tile size,
// per-tensor and per-column B, u8/i8 everywhere, the int32 bias (input 8), a fused Relu.
TEST(QuantFastKernels, QLinearMatMulEqualsReference) {
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> scale(0.002f, 0.05f);
    for (int iter = 0; iter < 40; ++iter) {
        const kes_dtype at = kTypes[rng() % 2], bt = kTypes[rng() % 2], yt = kTypes[rng() % 2];
        const int64_t batch = 1 + static_cast<int64_t>(rng() % 3), m = 1 + static_cast<int64_t>(rng() % 40);
        const int64_t k = 1 + static_cast<int64_t>(rng() % 70), n = 1 + static_cast<int64_t>(rng() % 30);
        const TT a = random_q(rng, at, {batch, m, k}, false), b = random_q(rng, bt, {k, n}, true);
        const bool per_column = rng() % 2 == 0;
        std::vector<float> b_scale;
        std::vector<int> b_zp;
        for (int64_t i = 0; i < (per_column ? n : 1); ++i) {
            b_scale.push_back(scale(rng));
            b_zp.push_back(random_zero_point(rng, bt));
        }
        const kes::Shape bs = per_column ? kes::Shape{n} : kes::Shape{};
        const TT sa = kes_test::konst(kes_test::f32({}, {scale(rng)})),
                 sb = kes_test::konst(kes_test::f32(bs, b_scale));
        const TT za = zero_point(at, {}, {random_zero_point(rng, at)}), zb = zero_point(bt, bs, b_zp);
        const TT sy = kes_test::konst(kes_test::f32({}, {scale(rng) * b_scale[0] * static_cast<float>(k) * 40.0f}));
        const TT zy = zero_point(yt, {}, {random_zero_point(rng, yt)});
        std::vector<int32_t> bias(static_cast<size_t>(n));
        for (int32_t& v : bias) v = static_cast<int32_t>(rng() % 20001) - 10000;
        const TT bias_t = kes_test::konst(kes_test::i32({n}, bias));
        A attrs;
        if (rng() % 3 == 0) attrs.s("activation", "Relu");
        std::vector<const TT*> in{&a, &sa, &za, &b, &sb, &zb, &sy, &zy};
        if (rng() % 2) in.push_back(&bias_t);
        expect_fast_equals_reference("QLinearMatMul", attrs, in,
                                     std::to_string(batch) + "x" + std::to_string(m) + "x" + std::to_string(k) + " * " +
                                         std::to_string(k) + "x" + std::to_string(n) +
                                         (per_column ? " per-column" : ""));
        if (HasFailure()) return;
    }
}

// QLinearAdd of two inputs of one shape (a residual): the reference's f32 arithmetic and rounding, so the
// same bytes; random scales from equal to 50x apart, zero points anywhere, fused Relu/Clip, sizes across
// the threads' chunks.
TEST(QuantFastKernels, QLinearAddEqualsReference) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> scale(0.002f, 0.1f);
    for (int iter = 0; iter < 40; ++iter) {
        const kes_dtype t = kTypes[rng() % 2];
        const int64_t c = 1 + static_cast<int64_t>(rng() % 40), hw = 1 + static_cast<int64_t>(rng() % 1500);
        const TT a = random_q(rng, t, {1, c, hw}, false), b = random_q(rng, t, {1, c, hw}, false);
        const TT sa = kes_test::konst(kes_test::f32({}, {scale(rng)})),
                 sb = kes_test::konst(kes_test::f32({}, {scale(rng)}));
        const TT sc = kes_test::konst(kes_test::f32({}, {scale(rng)}));
        const TT za = zero_point(t, {}, {random_zero_point(rng, t)}),
                 zb = zero_point(t, {}, {random_zero_point(rng, t)});
        const TT zc = zero_point(t, {}, {random_zero_point(rng, t)});
        A attrs;
        const int act = static_cast<int>(rng() % 3);
        if (act == 1) attrs.s("activation", "Relu");
        if (act == 2) attrs.s("activation", "Clip").f("activation_min", -1.0f).f("activation_max", 2.0f);
        expect_fast_equals_reference(
            "QLinearAdd", attrs, {&a, &sa, &za, &b, &sb, &zb, &sc, &zc},
            std::to_string(c) + "x" + std::to_string(hw) + " " + kes_dtype_name(t) + " act" + std::to_string(act));
        if (HasFailure()) return;
    }
}

// MaxPool on u8/i8 NCHW bytes: random windows, strides, dilations, pads (windows partly or, with large
// pads, wholly in the padding) and ceil_mode.
TEST(QuantFastKernels, QuantizedMaxPoolEqualsReference) {
    std::mt19937 rng(13);
    auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
    int tested = 0;
    for (int iter = 0; tested < 60 && iter < 1000; ++iter) {
        const int64_t n = pick({1, 2}), c = pick({1, 3, 8}), h = pick({1, 2, 7, 16}), w = pick({1, 3, 16, 33});
        const int64_t kh = pick({1, 2, 3}), kw = pick({1, 2, 3, 5}), sh = pick({1, 2}), sw = pick({1, 2, 3});
        const int64_t dh = pick({1, 1, 2}), dw = pick({1, 1, 2});
        const int64_t pt = static_cast<int64_t>(rng() % kh), pl = static_cast<int64_t>(rng() % kw);
        const int64_t pb = static_cast<int64_t>(rng() % kh), pr = static_cast<int64_t>(rng() % kw);
        if (h + pt + pb < (kh - 1) * dh + 1 || w + pl + pr < (kw - 1) * dw + 1) continue;
        const kes_dtype t = kTypes[rng() % 2];
        const TT x = random_q(rng, t, {n, c, h, w}, false);
        A attrs;
        attrs.is("kernel_shape", {kh, kw}).is("strides", {sh, sw}).is("dilations", {dh, dw});
        attrs.is("pads", {pt, pl, pb, pr}).i("ceil_mode", static_cast<int64_t>(rng() % 2));
        expect_fast_equals_reference("MaxPool", attrs, {&x},
                                     std::to_string(h) + "x" + std::to_string(w) + " k" + std::to_string(kh) +
                                         std::to_string(kw) + " s" + std::to_string(sh) + std::to_string(sw) + " d" +
                                         std::to_string(dh) + std::to_string(dw) + " p" + std::to_string(pt) +
                                         std::to_string(pl) + std::to_string(pb) + std::to_string(pr) + " " +
                                         kes_dtype_name(t));
        if (HasFailure()) return;
        ++tested;
    }
    EXPECT_EQ(tested, 60);
}

// QuantizeLinear per tensor: the reference's division, saturation, NaN → qmin and rounding half to even
// (exact halves included), u8 and i8, with and without a zero point.
TEST(QuantFastKernels, QuantizeLinearEqualsReference) {
    std::mt19937 rng(17);
    for (int iter = 0; iter < 30; ++iter) {
        const kes_dtype t = kTypes[rng() % 2];
        const int64_t n = 1 + static_cast<int64_t>(rng() % 40000);
        const float s = std::uniform_real_distribution<float>(0.001f, 0.2f)(rng);
        std::vector<float> v(static_cast<size_t>(n));
        std::uniform_real_distribution<float> d(-300.0f * s, 300.0f * s);
        for (float& x : v) x = d(rng);
        // Exact halves of the step, infinities and a NaN.
        v[0] = 2.5f * s;
        if (n > 4) v[1] = -0.5f * s, v[2] = INFINITY, v[3] = -INFINITY, v[4] = NAN;
        const TT x = kes_test::f32({n}, v);
        const TT scale = kes_test::konst(kes_test::f32({}, {s}));
        const TT zp = zero_point(t, {}, {random_zero_point(rng, t)});
        const bool with_zp = t == KES_I8 || rng() % 2;
        std::vector<const TT*> in{&x, &scale};
        if (with_zp) in.push_back(&zp);
        expect_fast_equals_reference("QuantizeLinear", A(), in, std::to_string(n) + " " + kes_dtype_name(t));
        if (HasFailure()) return;
    }
}

// Clip on bytes: constant and runtime bounds, either omitted, min above max (every value becomes max).
TEST(QuantFastKernels, ClipOnBytesEqualsReference) {
    std::mt19937 rng(19);
    for (int iter = 0; iter < 24; ++iter) {
        const kes_dtype t = kTypes[rng() % 2];
        const TT x = random_q(rng, t, {1, 1 + static_cast<int64_t>(rng() % 40000)}, false);
        const bool runtime = rng() % 2;
        TT lo = zero_point(t, {}, {random_zero_point(rng, t)}), hi = zero_point(t, {}, {random_zero_point(rng, t)});
        lo.is_const = hi.is_const = !runtime;
        std::vector<const TT*> in{&x};
        const int bounds = iter % 4;  // none, min, max, both
        if (bounds != 0) in.push_back(bounds == 2 ? nullptr : &lo);
        if (bounds >= 2) in.push_back(&hi);
        expect_fast_equals_reference("Clip", A(), in,
                                     std::string(kes_dtype_name(t)) + " bounds " + std::to_string(bounds) +
                                         (runtime ? " runtime" : " constant"));
        if (HasFailure()) return;
    }
}

TEST(QuantFastKernels, Conv1DAndRuntimeWeightsKeepTheReferenceKernel) {
    std::mt19937 rng(3);
    const TT x1 = random_q(rng, KES_U8, {1, 4, 10}, false), w1 = random_q(rng, KES_I8, {2, 4, 3}, true);
    const TT w_runtime = random_q(rng, KES_I8, {2, 4, 3, 3}, false), x2 = random_q(rng, KES_U8, {1, 4, 6, 6}, false);
    const TT s = kes_test::konst(kes_test::f32({}, {0.02f})), zu = zero_point(KES_U8, {}, {3}),
             zi = zero_point(KES_I8, {}, {0});
    for (const auto& in : {std::vector<const TT*>{&x1, &s, &zu, &w1, &s, &zi, &s, &zu},
                           std::vector<const TT*>{&x2, &s, &zu, &w_runtime, &s, &zi, &s, &zu}}) {
        kes_test::TestNode t("QLinearConv", A(), in);
        EXPECT_EQ(kes::select_kernel(*t.node, t.outs), nullptr);
    }
}

}  // namespace
