// test_kernels_fast.cpp — every fast kernel against its reference kernel (the oracle), on random shapes:
// odd sizes, stride/pad/dilation/group combinations, channel counts that are not a multiple of any
// vector width, batch > 1, fused activations. Each case runs on every microkernel table this CPU has
// (scalar first: KES_CPU_DISABLE-style fallbacks included), on 1 thread and on 3, and the two must
// give the same bytes. Under qemu (the aarch64 build) the NEON table is the one tested.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "alloc_counter.hpp"
#include "dispatch_expect.hpp"
#include "fast_kernel_test_util.hpp"
#include "kernels/common/microkernels.hpp"
#include "kernels/select.hpp"
#include "kestrel/engine.h"
#include "kestrel/memory.h"
#include "op_test_util.hpp"

namespace {

using kes_test::A;
using kes_test::TT;

using kes_test::AlignedBuffer;
using kes_test::random_f32;
using Pool = kes_test::ThreePool;

struct FastRun {
    std::vector<float> one_thread, three_threads;
    std::string impl;
};

// Creates the node's reference kernel, runs it, then offers the node to the fast kernels with each
// table and compares. Returns false (and reports) when no fast kernel took the node.
void expect_fast_matches_reference(const std::string& op, const kes::Attrs& attrs, const std::vector<const TT*>& in,
                                   const std::string& what, float tolerance = 1e-4f) {
    SCOPED_TRACE(op + " " + what);
    const std::vector<TT> ref = kes_test::run_op(op, attrs, in, 1);
    kes_test::TestNode t(op, attrs, in);
    const kes::NodeDesc& node = *t.node;
    const std::vector<kes::TensorDesc>& outs = t.outs;
    const std::vector<const void*>& in_ptrs = t.data;
    Pool pool;
    for (const kes::kernels::Microkernels* table : kes::kernels::microkernels_available()) {
        SCOPED_TRACE(table->name);
        std::unique_ptr<kes::Kernel> fast = kes::select_kernel(node, outs, *table);
        ASSERT_NE(fast, nullptr) << "no fast kernel took the node";
        AlignedBuffer packed(fast->packed_bytes());
        fast->pack(packed.data());
        fast->bind_packed(packed.data());
        AlignedBuffer scratch(fast->scratch_bytes(kes::kMaxThreads));
        // Each worker's scratch slot is whole 128-byte blocks: two workers never write one cache line.
        EXPECT_EQ((fast->scratch_bytes(2) - fast->scratch_bytes(1)) % 128, 0u) << fast->impl();
        std::vector<float> y1(static_cast<size_t>(outs[0].elements()), NAN), y3(y1.size(), -NAN);
        void* o1[] = {y1.data()};
        void* o3[] = {y3.data()};
        kes::RunContext serial;
        serial.scratch = scratch.data();
        kes::RunContext threaded{pool.pool, 3, scratch.data(), fast->scratch_bytes(kes::kMaxThreads)};
        kes_test::start_counting();
        fast->run(serial, in_ptrs.data(), o1);
        fast->run(threaded, in_ptrs.data(), o3);
        EXPECT_EQ(kes_test::stop_counting(), 0u) << "run() allocated";
        ASSERT_EQ(std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(float)), 0)
            << "1 and 3 threads differ (" << fast->impl() << ")";
        const std::vector<float> r = ref[0].f();
        ASSERT_EQ(r.size(), y1.size());
        for (size_t i = 0; i < r.size(); ++i)
            ASSERT_LE(std::fabs(r[i] - y1[i]), tolerance * (1.0f + std::fabs(r[i])))
                << "element " << i << ": reference " << r[i] << ", " << fast->impl() << " " << y1[i];
    }
}

// True when no fast kernel takes the node (the reference kernel stays).
bool keeps_reference(const std::string& op, const kes::Attrs& attrs, const std::vector<const TT*>& in) {
    kes_test::TestNode t(op, attrs, in);
    return kes::select_kernel(*t.node, t.outs) == nullptr;
}

const char* const kActivations[] = {"", "Relu", "Relu6", "LeakyRelu", "HardSwish", "Sigmoid", "Swish", "Tanh"};

TEST(FastKernels, ActiveTableIsTheFastestThisCpuAllows) {
    // The AVX-512 file is compiled with AVX2 and FMA as well: its gate names them (AVX2 implies FMA).
    const std::initializer_list<kes_test::TableGate> gates = {
        {KES_CPU_AVX512F | KES_CPU_AVX2, "avx512"}, {KES_CPU_AVX2, "avx2"}, {KES_CPU_NEON, "neon"}};
    const std::string want = kes_test::expected_table(gates, "scalar");
    kes_test::record_table("engine", want);
    EXPECT_EQ(kes::kernels::microkernels_active().name, want);
    const char* forced = std::getenv("KES_KERNELS");
    EXPECT_EQ(kes_engine_kernels_name(), forced && std::strcmp(forced, "reference") == 0 ? "reference" : want);
    EXPECT_EQ(kes_test::names_of(kes::kernels::microkernels_available()), kes_test::expected_usable(gates, "scalar"));
}

TEST(FastKernels, ConvNhwcMatchesReferenceOnRandomShapes) {
    std::mt19937 rng(1234);
    auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
    int tested = 0;
    for (int iter = 0; tested < 90 && iter < 1000; ++iter) {
        // Widths past 12 pixels plus the kernel give every table's igemm tiles that lie inside one output
        // row (igemm_strided) beside the edge and row-spanning ones (pointer lists).
        const int64_t n = pick({1, 1, 2}), h = pick({1, 3, 7, 8, 13}), w = pick({1, 4, 9, 11, 29});
        const int64_t kh = pick({1, 1, 3, 5}), kw = pick({1, 3, 3, 5});
        const int64_t sh = pick({1, 2}), sw = pick({1, 2}), dh = pick({1, 1, 2}), dw = pick({1, 1, 2});
        const int mode = static_cast<int>(rng() % 3);  // 0 dense, 1 grouped, 2 depthwise
        int64_t c = pick({1, 3, 5, 8, 17, 24, 33}), m = pick({1, 2, 7, 16, 19, 32, 40}), group = 1;
        if (mode == 1) {
            group = pick({2, 3});
            c = group * pick({1, 2, 5}), m = group * pick({1, 3, 8});
        } else if (mode == 2) {
            c = m = group = pick({1, 3, 8, 17, 24, 33});
        }
        const int64_t pt = static_cast<int64_t>(rng() % kh), pl = static_cast<int64_t>(rng() % kw);
        const int64_t pb = static_cast<int64_t>(rng() % kh), pr = static_cast<int64_t>(rng() % kw);
        if (h + pt + pb < (kh - 1) * dh + 1 || w + pl + pr < (kw - 1) * dw + 1) continue;
        const TT x = random_f32(rng, {n, h, w, c});
        const TT wt = random_f32(rng, {m, kh, kw, c / group}, true);
        const TT bias = random_f32(rng, {m}, true);
        const bool has_bias = rng() % 4 != 0;
        A attrs;
        attrs.s("data_layout", "NHWC").i("group", group).is("strides", {sh, sw}).is("dilations", {dh, dw});
        attrs.is("pads", {pt, pl, pb, pr});
        const char* act = kActivations[rng() % std::size(kActivations)];
        if (*act) attrs.s("activation", act);
        // A fused residual (input 3: Add(Conv, r) from the converter) on ungrouped and depthwise convs.
        const bool has_sum = mode != 1 && rng() % 3 == 0;
        std::vector<const TT*> in{&x, &wt};
        if (has_bias || has_sum) in.push_back(has_bias ? &bias : nullptr);
        const int64_t oh = (h + pt + pb - ((kh - 1) * dh + 1)) / sh + 1,
                      ow = (w + pl + pr - ((kw - 1) * dw + 1)) / sw + 1;
        const TT sum = random_f32(rng, {n, oh, ow, m});
        if (has_sum) in.push_back(&sum);
        const std::string what = "x[" + std::to_string(n) + "," + std::to_string(h) + "," + std::to_string(w) + "," +
                                 std::to_string(c) + "] w[" + std::to_string(m) + "," + std::to_string(kh) + "," +
                                 std::to_string(kw) + "] s" + std::to_string(sh) + std::to_string(sw) + " d" +
                                 std::to_string(dh) + std::to_string(dw) + " p" + std::to_string(pt) +
                                 std::to_string(pl) + std::to_string(pb) + std::to_string(pr) + " g" +
                                 std::to_string(group) + " " + act + (has_sum ? " +residual" : "");
        expect_fast_matches_reference("Conv", attrs, in, what);
        if (HasFatalFailure()) return;
        ++tested;
    }
    EXPECT_EQ(tested, 90);
}

// Every igemm tile gives the same bytes for the same rows: the pointer-list and the evenly spaced
// (igemm_strided) forms, at every tile height that holds the rows (heights below gemm_mr only change how
// many rows are computed, not any output's order of accumulation). Random tile heights (rows past mr
// repeat the last), panel widths (narrow, whole and part vectors), depths and tap counts, on every table.
TEST(FastKernels, EveryIgemmTileGivesTheSameBytesForTheSameRows) {
    using Mk = kes::kernels::Microkernels;
    std::mt19937 rng(77);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (const Mk* mk : kes::kernels::microkernels_available()) {
        SCOPED_TRACE(mk->name);
        ASSERT_EQ(mk->tile_heights[0], mk->gemm_mr);
        ASSERT_EQ(mk->tile_heights[Mk::kTileHeights - 1], 1u);
        for (int iter = 0; iter < 200; ++iter) {
            const size_t mr = 1 + rng() % mk->gemm_mr, nc = 1 + rng() % mk->gemm_nr, kc = 1 + rng() % 37;
            const size_t ks = 1 + rng() % 4, step = kc + rng() % 5, c_stride = nc + rng() % 3;
            SCOPED_TRACE("mr " + std::to_string(mr) + " nc " + std::to_string(nc) + " kc " + std::to_string(kc) +
                         " ks " + std::to_string(ks));
            std::vector<ptrdiff_t> offsets(ks);
            for (size_t t = 0; t < ks; ++t) offsets[t] = static_cast<ptrdiff_t>(t * (mr * step + 3) + rng() % 4);
            std::vector<float> a(static_cast<size_t>(offsets.back()) + mr * step + kc);
            for (float& v : a) v = u(rng);
            const size_t pw = mk->panel_width(nc);
            std::vector<float> w(pw * (1 + ks * kc) + mk->panel_overread(), 0.0f);
            for (size_t row = 0; row <= ks * kc; ++row)
                for (size_t j = 0; j < nc; ++j) w[row * pw + j] = u(rng);
            std::vector<const float*> ptrs(ks * mk->gemm_mr);
            for (size_t t = 0; t < ks; ++t)
                for (size_t r = 0; r < mk->gemm_mr; ++r)
                    ptrs[t * mk->gemm_mr + r] = a.data() + offsets[t] + std::min(r, mr - 1) * step;
            const kes::kernels::Clamp clamp{-0.5f, iter % 2 ? 0.75f : std::numeric_limits<float>::infinity()};
            // A panel narrower than a vector is packed exactly nc wide and has its own (narrow) tiles.
            const size_t v = (nc + mk->vector_width - 1) / mk->vector_width - 1;
            const bool narrow = nc < mk->vector_width;
            std::vector<float> expected(mr * c_stride, 7.0f);
            (narrow ? mk->igemm_narrow[0] : mk->igemm_by_vectors[0][v])(mr, nc, kc, ks, ptrs.data(), w.data(),
                                                                        expected.data(), c_stride, clamp);
            for (size_t r = 0; r < mr; ++r)  // nothing stored past nc
                for (size_t j = nc; j < c_stride; ++j) ASSERT_EQ(expected[r * c_stride + j], 7.0f);
            for (size_t h = 0; h < Mk::kTileHeights && mk->tile_heights[h] >= mr; ++h) {
                SCOPED_TRACE("height " + std::to_string(mk->tile_heights[h]));
                std::vector<float> by_list(expected.size(), 7.0f), strided(expected.size(), 7.0f);
                (narrow ? mk->igemm_narrow[h] : mk->igemm_by_vectors[h][v])(mr, nc, kc, ks, ptrs.data(), w.data(),
                                                                            by_list.data(), c_stride, clamp);
                (narrow ? mk->igemm_strided_narrow[h] : mk->igemm_strided_by_vectors[h][v])(
                    mr, nc, kc, ks, a.data(), step, offsets.data(), w.data(), strided.data(), c_stride, clamp);
                ASSERT_EQ(std::memcmp(expected.data(), by_list.data(), expected.size() * sizeof(float)), 0);
                ASSERT_EQ(std::memcmp(expected.data(), strided.data(), expected.size() * sizeof(float)), 0);
            }
        }
    }
}

// The sliding-window depthwise microkernel (stride 1 along the row) gives the generic one's bytes: same
// taps in the same order, only the loads are shared. Random runs, channel counts off every vector width,
// every kernel size it takes, zero rows among the kernel rows, on every table.
TEST(FastKernels, DepthwiseSlidingWindowGivesTheGenericKernelsBytes) {
    std::mt19937 rng(99);
    for (const kes::kernels::Microkernels* t : kes::kernels::microkernels_available()) {
        SCOPED_TRACE(t->name);
        for (int trial = 0; trial < 60; ++trial) {
            const size_t pixels = 1 + rng() % 23, channels = 1 + rng() % 70;
            const size_t kh = 1 + rng() % 5, kw = 1 + rng() % kes::kernels::Microkernels::dwconv_s1_max_kw;
            const size_t ks = kh * kw, block = t->dw_block;
            // Packed as the driver packs: per block, bias then ks rows, zero past `channels`; the last
            // block only as wide as its whole vectors.
            std::vector<float> w(t->block_columns(channels) * (1 + ks), 0.0f);
            std::uniform_real_distribution<float> d(-1.0f, 1.0f);
            float* packed = w.data();
            for (size_t c0 = 0; c0 < channels; c0 += block) {
                const size_t cn = std::min(block, channels - c0), bw = t->packed_width(cn);
                for (size_t r = 0; r < 1 + ks; ++r, packed += bw)
                    for (size_t c = 0; c < cn; ++c) packed[c] = d(rng);
            }
            ASSERT_EQ(packed, w.data() + w.size());
            const size_t row_floats = (pixels + kw - 1) * channels;
            std::vector<std::vector<float>> rows(kh, std::vector<float>(row_floats));
            std::vector<float> zero(row_floats, 0.0f);
            std::vector<const float*> row_ptrs(kh);
            for (size_t ky = 0; ky < kh; ++ky) {
                for (float& v : rows[ky]) v = d(rng);
                row_ptrs[ky] = rng() % 4 == 0 ? zero.data() : rows[ky].data();  // a row in the padding
            }
            std::vector<const float*> taps(ks);
            for (size_t ky = 0; ky < kh; ++ky)
                for (size_t kx = 0; kx < kw; ++kx) taps[ky * kw + kx] = row_ptrs[ky] + kx * channels;
            const kes::kernels::Clamp clamp{trial % 3 == 0 ? 0.0f : -INFINITY, trial % 5 == 0 ? 0.5f : INFINITY};
            std::vector<float> generic(pixels * channels, NAN), sliding(pixels * channels, -NAN);
            t->dwconv(pixels, channels, ks, taps.data(), channels, w.data(), generic.data(), clamp);
            t->dwconv_s1(pixels, channels, kh, kw, row_ptrs.data(), w.data(), sliding.data(), clamp);
            ASSERT_EQ(std::memcmp(generic.data(), sliding.data(), generic.size() * sizeof(float)), 0)
                << pixels << " pixels, " << channels << " channels, " << kh << "x" << kw;
        }
    }
}

TEST(FastKernels, AddAndMulMatchReferenceForEveryBroadcastTheyTake) {
    std::mt19937 rng(99);
    const std::vector<std::pair<kes::Shape, kes::Shape>> cases = {
        {{2, 5, 7, 19}, {2, 5, 7, 19}},  // residual add
        {{1, 6, 6, 33}, {33}},           // per-channel bias
        {{1, 6, 6, 33}, {1, 1, 1, 33}},  // the same, rank-4
        {{3, 4, 5, 17}, {3, 1, 1, 17}},  // squeeze-excite
        {{1, 1, 1, 40}, {1, 1, 1, 40}}, {{7}, {7}},
        {{2, 37, 29, 3}, {3}},  // few channels: rows taken many at a time against a repeated b
        {{1, 31, 17, 10}, {1, 1, 10}},  {{2, 9, 13, 5}, {2, 1, 1, 5}},
    };
    for (const auto& [big, small] : cases)
        for (const char* op : {"Add", "Mul"})
            for (bool swap : {false, true})
                for (const char* act : {"", "Relu", "HardSwish"}) {
                    const TT a = random_f32(rng, big), b = random_f32(rng, small);
                    A attrs;
                    if (*act) attrs.s("activation", act);
                    const std::vector<const TT*> in =
                        swap ? std::vector<const TT*>{&b, &a} : std::vector<const TT*>{&a, &b};
                    expect_fast_matches_reference(op, attrs, in,
                                                  kes::shape_string(big) + (swap ? " swapped " : " ") + act, 0.0f);
                    if (HasFatalFailure()) return;
                }
}

// Sub and Div: the reference's bytes for a full-size first operand against each broadcast; a broadcast
// first operand (c - x, 1 / x) keeps the reference kernel, since the two do not commute.
TEST(FastKernels, SubAndDivMatchReferenceWithTheBroadcastOperandSecond) {
    std::mt19937 rng(98);
    const std::vector<std::pair<kes::Shape, kes::Shape>> cases = {
        {{1, 4420, 2}, {1, 4420, 2}},  // a box decode's centres and half sizes
        {{1, 4420, 2}, {}},            // a scalar scale
        {{1, 4420, 4}, {1, 1, 4}},     // per-coordinate variances
        {{2, 6, 5, 33}, {33}},        {{3, 4, 5, 17}, {3, 1, 1, 17}}, {{7}, {7}},
    };
    for (const auto& [big, small] : cases)
        for (const char* op : {"Sub", "Div"})
            for (const char* act : {"", "Relu"}) {
                const TT a = random_f32(rng, big), b = random_f32(rng, small);
                A attrs;
                if (*act) attrs.s("activation", act);
                expect_fast_matches_reference(op, attrs, {&a, &b}, kes::shape_string(big) + " " + act, 0.0f);
                if (HasFatalFailure()) return;
                if (small != big) {
                    EXPECT_TRUE(keeps_reference(op, A{}, {&b, &a})) << op << " swapped";
                }
            }
}

// Pow(x, 2) as x·x: the reference's bytes (its double pow rounded to float) for any dtype of the
// constant exponent, up to the largest float; other exponents, or a runtime one, keep the reference.
TEST(FastKernels, PowOfTwoIsTheReferencesSquare) {
    std::mt19937 rng(97);
    TT x = random_f32(rng, {1, 3, 40, 40, 2}, false, 4.0f);
    const float big[] = {1.8e19f, -1.5e19f, 0.0f, -0.0f};  // squares near the largest float
    std::memcpy(x.bytes.data(), big, sizeof big);
    for (const TT& two : {kes_test::f32({}, {2.0f}, true), kes_test::i64({1}, {2}), kes_test::f32({1}, {2.0f}, true)}) {
        expect_fast_matches_reference("Pow", A{}, {&x, &two}, kes_dtype_name(two.dtype), 0.0f);
        if (HasFatalFailure()) return;
    }
    const TT three = kes_test::f32({}, {3.0f}, true), runtime_two = kes_test::f32({}, {2.0f}, false);
    EXPECT_TRUE(keeps_reference("Pow", A{}, {&x, &three}));
    EXPECT_TRUE(keeps_reference("Pow", A{}, {&x, &runtime_two}));
}

TEST(FastKernels, PReluMatchesReferenceWithPerChannelSlopes) {
    std::mt19937 rng(17);
    for (const auto& [x_shape, slope_shape] :
         std::vector<std::pair<kes::Shape, kes::Shape>>{{{1, 7, 9, 33}, {33}},
                                                        {{2, 5, 5, 16}, {1, 1, 16}},
                                                        {{3, 11}, {3, 11}},
                                                        {{1, 4, 4, 8}, {1}},
                                                        {{1, 41, 23, 10}, {1, 1, 10}}}) {
        const TT x = random_f32(rng, x_shape), slope = random_f32(rng, slope_shape, true);
        expect_fast_matches_reference("PRelu", A{}, {&x, &slope}, kes::shape_string(x_shape), 1e-6f);
        if (HasFatalFailure()) return;
    }
}

TEST(FastKernels, BroadcastsOutsideTheirPatternKeepTheReferenceKernel) {
    std::mt19937 rng(5);
    const TT a = random_f32(rng, {2, 3, 1}), b = random_f32(rng, {2, 1, 4});  // broadcast both ways
    std::vector<kes::TensorDesc> descs(2);
    descs[0].shape = a.shape, descs[1].shape = b.shape;
    const std::string name = "n0", op = "Add";
    const kes::Attrs attrs;
    kes::NodeDesc node{name, op, attrs, {&descs[0], &descs[1]}, 1};
    std::vector<kes::TensorDesc> outs;
    kes::create_kernel(*kes::find_op(op), node, outs);
    EXPECT_EQ(kes::select_kernel(node, outs), nullptr);
    // A few floats per outer index (MTCNN's softmax as ops: x - max over a last axis of 2) is one call
    // per pixel: the reference's loop is faster, so it stays.
    const TT x = random_f32(rng, {1, 30, 20, 2}), mx = random_f32(rng, {1, 30, 20, 1});
    for (const char* o : {"Sub", "Div", "Add", "Mul"}) EXPECT_TRUE(keeps_reference(o, A{}, {&x, &mx})) << o;
}

TEST(FastKernels, MaxPoolNhwcMatchesReference) {
    std::mt19937 rng(7);
    for (int iter = 0; iter < 40; ++iter) {
        const int64_t n = 1 + rng() % 2, h = 1 + rng() % 12, w = 1 + rng() % 12, c = 1 + rng() % 37;
        const int64_t k = 1 + rng() % 3, s = 1 + rng() % 2, p = static_cast<int64_t>(rng() % k);
        if (h + 2 * p < k || w + 2 * p < k) continue;
        const TT x = random_f32(rng, {n, h, w, c});
        A attrs;
        attrs.s("data_layout", "NHWC").is("kernel_shape", {k, k}).is("strides", {s, s}).is("pads", {p, p, p, p});
        attrs.i("ceil_mode", static_cast<int64_t>(rng() % 2));
        expect_fast_matches_reference("MaxPool", attrs, {&x}, "k" + std::to_string(k) + " s" + std::to_string(s), 0.0f);
        if (HasFatalFailure()) return;
    }
}

TEST(FastKernels, NchwConvKeepsTheReferenceKernel) {
    std::mt19937 rng(3);
    const TT x = random_f32(rng, {1, 3, 5, 5}), w = random_f32(rng, {4, 3, 3, 3}, true);
    std::vector<kes::TensorDesc> descs(2);
    descs[0].shape = x.shape;
    descs[1].shape = w.shape, descs[1].data = w.bytes.data();
    const std::string name = "n0", op = "Conv";
    const kes::Attrs attrs;
    kes::NodeDesc node{name, op, attrs, {&descs[0], &descs[1]}, 1};
    std::vector<kes::TensorDesc> outs;
    kes::create_kernel(*kes::find_op(op), node, outs);
    EXPECT_EQ(kes::select_kernel(node, outs), nullptr);
}

std::string dims(const kes::Shape& s) {
    return kes::shape_string(s);
}

TEST(FastKernels, GemmWithConstantBMatchesReferenceForTransposesScalesAndBiases) {
    std::mt19937 rng(4242);
    auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
    for (int iter = 0; iter < 60; ++iter) {
        const int64_t m = pick({1, 2, 5, 13, 30}), k = pick({1, 3, 17, 64, 129}), n = pick({1, 7, 16, 33, 100});
        const bool ta = rng() % 3 == 0, tb = rng() % 2 == 0;
        const float alpha = rng() % 3 == 0 ? 0.5f : 1.0f, beta = rng() % 3 == 0 ? -2.0f : 1.0f;
        const TT a = random_f32(rng, ta ? kes::Shape{k, m} : kes::Shape{m, k});
        const TT b = random_f32(rng, tb ? kes::Shape{n, k} : kes::Shape{k, n}, true);
        const int c_kind = static_cast<int>(rng() % 5);  // none, [N], [1,N], [], [1]
        const kes::Shape c_shape = c_kind == 1   ? kes::Shape{n}
                                   : c_kind == 2 ? kes::Shape{1, n}
                                   : c_kind == 3 ? kes::Shape{}
                                                 : kes::Shape{1};
        const TT c = random_f32(rng, c_shape, true);
        A attrs;
        attrs.i("transA", ta).i("transB", tb).f("alpha", alpha).f("beta", beta);
        const char* act = kActivations[rng() % std::size(kActivations)];
        if (*act) attrs.s("activation", act);
        std::vector<const TT*> in{&a, &b};
        if (c_kind) in.push_back(&c);
        expect_fast_matches_reference("Gemm", attrs, in,
                                      "A" + dims(a.shape) + " B" + dims(b.shape) +
                                          (c_kind ? " C" + dims(c.shape) : "") + " tA" + std::to_string(ta) + " tB" +
                                          std::to_string(tb) + " " + act);
        if (HasFatalFailure()) return;
    }
}

TEST(FastKernels, GemmWithRuntimeBOrFullCKeepsTheReferenceKernel) {
    std::mt19937 rng(8);
    const TT a = random_f32(rng, {4, 5}), b_const = random_f32(rng, {5, 3}, true), b_runtime = random_f32(rng, {5, 3});
    const TT c_full = random_f32(rng, {4, 3}, true), c_column = random_f32(rng, {4, 1}, true);
    const TT c_runtime = random_f32(rng, {3});
    EXPECT_TRUE(keeps_reference("Gemm", A{}, {&a, &b_runtime}));
    EXPECT_TRUE(keeps_reference("Gemm", A{}, {&a, &b_const, &c_full}));
    EXPECT_TRUE(keeps_reference("Gemm", A{}, {&a, &b_const, &c_column}));
    EXPECT_TRUE(keeps_reference("Gemm", A{}, {&a, &b_const, &c_runtime}));
    EXPECT_FALSE(keeps_reference("Gemm", A{}, {&a, &b_const}));
    const TT a3 = random_f32(rng, {2, 4, 5}), b3 = random_f32(rng, {2, 5, 3}, true);
    EXPECT_TRUE(keeps_reference("MatMul", A{}, {&a3, &b3}));  // B with batch dims of its own
}

TEST(FastKernels, MatMulWithConstantBMatchesReferenceWithBatchDimsOnA) {
    std::mt19937 rng(77);
    const std::vector<std::pair<kes::Shape, kes::Shape>> cases = {
        {{19}, {19, 7}},          {{1, 19}, {19, 40}},     {{13, 33}, {33, 17}}, {{2, 3, 5, 8}, {8, 33}},
        {{3, 7, 64}, {1, 64, 9}}, {{2, 1, 100}, {100, 1}}, {{5, 16}, {16, 32}},
    };
    for (const auto& [as, bs] : cases)
        for (const char* act : {"", "Relu", "Sigmoid", "Swish"}) {
            const TT a = random_f32(rng, as), b = random_f32(rng, bs, true);
            A attrs;
            if (*act) attrs.s("activation", act);
            expect_fast_matches_reference("MatMul", attrs, {&a, &b}, dims(as) + " x " + dims(bs) + " " + act);
            if (HasFatalFailure()) return;
        }
}

// ConvTranspose (NHWC, one group): strides 1-3 against kernels 1-5 (phases with several taps, one, or
// none: a stride above the kernel leaves bias-only rows), dilations, pads, output_padding, output_shape
// (also past the full size: bias-only outputs at the end) and auto_pad SAME_*.
TEST(FastKernels, ConvTransposeNhwcMatchesReferenceOnRandomShapes) {
    std::mt19937 rng(4321);
    auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
    int tested = 0;
    for (int iter = 0; tested < 70 && iter < 1000; ++iter) {
        const int64_t n = pick({1, 1, 2}), h = pick({1, 2, 5, 8}), w = pick({1, 3, 7, 10});
        const int64_t kh = pick({1, 2, 3, 4, 5}), kw = pick({1, 2, 3, 4});
        const int64_t sh = pick({1, 2, 2, 3}), sw = pick({1, 2, 2, 3}), dh = pick({1, 1, 2}), dw = pick({1, 1, 2});
        const int64_t c = pick({1, 3, 8, 17, 33}), m = pick({1, 2, 7, 16, 19, 40});
        A attrs;
        attrs.s("data_layout", "NHWC").is("strides", {sh, sw}).is("dilations", {dh, dw});
        const int mode = static_cast<int>(rng() % 4);  // 0 pads, 1 output_padding + pads, 2 output_shape, 3 SAME
        std::string how;
        if (mode <= 1) {
            const int64_t pt = static_cast<int64_t>(rng() % kh), pl = static_cast<int64_t>(rng() % kw);
            const int64_t pb = static_cast<int64_t>(rng() % kh), pr = static_cast<int64_t>(rng() % kw);
            const int64_t oph = mode == 1 ? static_cast<int64_t>(rng() % std::max(sh, dh)) : 0;
            const int64_t opw = mode == 1 ? static_cast<int64_t>(rng() % std::max(sw, dw)) : 0;
            if ((h - 1) * sh + oph + (kh - 1) * dh + 1 - pt - pb < 1) continue;
            if ((w - 1) * sw + opw + (kw - 1) * dw + 1 - pl - pr < 1) continue;
            attrs.is("pads", {pt, pl, pb, pr}).is("output_padding", {oph, opw});
            how = "pads " + std::to_string(pt) + std::to_string(pl) + std::to_string(pb) + std::to_string(pr) +
                  " out_pad " + std::to_string(oph) + std::to_string(opw);
        } else if (mode == 2) {
            const int64_t oh = h * sh + pick({-1, 0, 0, 2}), ow = w * sw + pick({-1, 0, 1});
            if (oh < 1 || ow < 1) continue;
            attrs.is("output_shape", {oh, ow});
            how = "output_shape " + std::to_string(oh) + "x" + std::to_string(ow);
        } else {
            how = rng() % 2 ? "SAME_UPPER" : "SAME_LOWER";
            attrs.s("auto_pad", how);
        }
        const TT x = random_f32(rng, {n, h, w, c});
        const TT wt = random_f32(rng, {m, kh, kw, c}, true);
        const TT bias = random_f32(rng, {m}, true);
        std::vector<const TT*> in{&x, &wt};
        if (rng() % 4 != 0) in.push_back(&bias);
        const char* act = kActivations[rng() % std::size(kActivations)];
        if (*act) attrs.s("activation", act);
        const std::string what = "x" + dims(x.shape) + " w" + dims(wt.shape) + " s" + std::to_string(sh) +
                                 std::to_string(sw) + " d" + std::to_string(dh) + std::to_string(dw) + " " + how + " " +
                                 act;
        expect_fast_matches_reference("ConvTranspose", attrs, in, what);
        if (HasFatalFailure()) return;
        ++tested;
    }
    EXPECT_EQ(tested, 70);
}

// Grouped ConvTranspose and NCHW ones keep the reference kernel.
TEST(FastKernels, ConvTransposeGroupedOrNchwKeepsTheReference) {
    std::mt19937 rng(8);
    const TT x = random_f32(rng, {1, 4, 5, 6}), wt = random_f32(rng, {6, 2, 2, 2}, true);
    EXPECT_TRUE(
        keeps_reference("ConvTranspose", A().s("data_layout", "NHWC").i("group", 3).is("strides", {2, 2}), {&x, &wt}));
    const TT xc = random_f32(rng, {1, 6, 4, 5}), wc = random_f32(rng, {6, 3, 2, 2}, true);
    EXPECT_TRUE(keeps_reference("ConvTranspose", A().is("strides", {2, 2}), {&xc, &wc}));
}

// Transpose: the swaps of two blocks of axes (NCHW <-> NHWC, a detector head's, a channel shuffle's,
// size-1 axes anywhere) run the tiled kernel and give the reference's bytes in every dtype width, on 1
// and 3 threads; other permutations keep the reference.
TEST(FastKernels, TransposeSwapsOfTwoAxisBlocksEqualReference) {
    struct Case {
        kes::Shape shape;
        std::vector<int64_t> perm;
        bool fast;
    };
    const std::vector<Case> cases = {
        {{1, 3, 37, 41}, {0, 2, 3, 1}, true},
        {{2, 5, 7, 33}, {0, 3, 1, 2}, true},
        {{1, 3, 85, 4, 5}, {0, 1, 3, 4, 2}, true},
        {{1, 4, 4, 2, 8}, {0, 1, 2, 4, 3}, true},
        {{2, 3, 4, 5}, {0, 2, 1, 3}, true},
        {{6, 70}, {1, 0}, true},
        {{4, 1, 6}, {1, 2, 0}, true},
        {{1, 16, 1, 300}, {0, 3, 2, 1}, true},
        {{2, 3, 4}, {2, 1, 0}, false},
        {{3, 1, 4, 1, 5}, {4, 1, 2, 3, 0}, false},
        {{2, 3, 4, 5}, {1, 3, 0, 2}, false},
    };
    // ChannelShuffle (its reference is a transpose of the [outer, g, C/g, inner] view): same bytes.
    for (const auto& [shape, axis, group] : std::vector<std::tuple<kes::Shape, int64_t, int64_t>>{
             {{1, 7, 5, 116}, 3, 2}, {{2, 12, 3, 4}, 1, 3}, {{1, 9, 9, 24}, -1, 4}, {{3, 10}, 1, 5}}) {
        SCOPED_TRACE(dims(shape) + " axis " + std::to_string(axis) + " group " + std::to_string(group));
        std::mt19937 r(5);
        const TT x = random_f32(r, shape);
        expect_fast_matches_reference("ChannelShuffle", A().i("axis", axis).i("group", group), {&x}, dims(shape), 0.0f);
        if (HasFatalFailure()) return;
    }
    std::mt19937 rng(31);
    for (const Case& c : cases)
        for (kes_dtype dtype : {KES_F32, KES_U8, KES_F16, KES_I64}) {
            SCOPED_TRACE(dims(c.shape) + " perm" + dims(c.perm) + " " + kes_dtype_name(dtype));
            TT x;
            x.dtype = dtype, x.shape = c.shape;
            x.bytes.resize(static_cast<size_t>(x.elements()) * kes_dtype_size(dtype));
            for (uint8_t& b : x.bytes) b = static_cast<uint8_t>(rng());
            const A attrs = A().is("perm", c.perm);
            const std::vector<TT> ref = kes_test::run_op("Transpose", attrs, {&x}, 1);
            kes_test::TestNode t("Transpose", attrs, {&x});
            for (const kes::kernels::Microkernels* table : kes::kernels::microkernels_available()) {
                std::unique_ptr<kes::Kernel> fast = kes::select_kernel(*t.node, t.outs, *table);
                ASSERT_EQ(fast != nullptr, c.fast);
                if (!fast) continue;
                Pool pool;
                for (uint32_t threads : {1u, 3u}) {
                    std::vector<uint8_t> y(ref[0].bytes.size() + 1, 0xCD);
                    void* out[] = {y.data()};
                    kes::RunContext rc{threads > 1 ? pool.pool : nullptr, threads, nullptr, 0};
                    fast->run(rc, t.data.data(), out);
                    ASSERT_EQ(y.back(), 0xCD) << "wrote past the output";
                    y.pop_back();
                    ASSERT_EQ(y, ref[0].bytes) << threads << " threads";
                }
            }
        }
}

// BatchNormalization over the last axis (NHWC after the layout pass, or [N, C]); an NCHW one keeps the
// reference. 1e-6: aarch64's compiler contracts the reference's multiply-add into an FMA.
TEST(FastKernels, BatchNormalizationOverTheLastAxisMatchesReference) {
    std::mt19937 rng(91);
    for (const kes::Shape& shape : std::vector<kes::Shape>{{1, 9, 11, 64}, {2, 5, 3, 3}, {1, 130, 129, 17}, {7, 40}}) {
        const int64_t c = shape.back();
        const TT x = random_f32(rng, shape, false, 4.0f);
        const TT scale = random_f32(rng, {c}, true), bias = random_f32(rng, {c}, true);
        const TT mean = random_f32(rng, {c}, true);
        TT var = random_f32(rng, {c}, true);
        for (size_t i = 0; i < static_cast<size_t>(c); ++i) {
            float v;
            std::memcpy(&v, var.bytes.data() + i * 4, 4);
            v = std::fabs(v) + 0.1f;
            std::memcpy(var.bytes.data() + i * 4, &v, 4);
        }
        A attrs = A().f("epsilon", 1e-3f);
        if (shape.size() == 4) attrs.s("data_layout", "NHWC");
        expect_fast_matches_reference("BatchNormalization", attrs, {&x, &scale, &bias, &mean, &var}, dims(shape),
                                      1e-6f);
        if (HasFatalFailure()) return;
    }
    const TT x = random_f32(rng, {1, 4, 5, 6});
    const TT p = random_f32(rng, {4}, true);
    EXPECT_TRUE(keeps_reference("BatchNormalization", A{}, {&x, &p, &p, &p, &p}));  // NCHW
}

// Resize of H and W in NHWC, nearest (every nearest mode) and linear, by scales and by sizes, in every
// coordinate mode; cubic, and resizes that touch N or C, keep the reference.
TEST(FastKernels, ResizeNhwcNearestAndLinearMatchReference) {
    std::mt19937 rng(17);
    const char* const modes[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                 "asymmetric", "tf_half_pixel_for_nn", "half_pixel_symmetric"};
    const char* const nearest_modes[] = {"floor", "round_prefer_floor", "round_prefer_ceil", "ceil"};
    int tested = 0;
    for (int iter = 0; iter < 60; ++iter) {
        const int64_t n = 1 + rng() % 2, h = 1 + rng() % 9, w = 1 + rng() % 9, c = 1 + rng() % 40;
        const bool linear = rng() % 2;
        const char* ctm = modes[rng() % std::size(modes)];
        if (linear && std::string(ctm) == "tf_half_pixel_for_nn") continue;
        A attrs = A().s("mode", linear ? "linear" : "nearest").s("coordinate_transformation_mode", ctm);
        // tf_half_pixel_for_nn maps o to o + 0.5: rounded up, even the unresized N and C axes would move
        // (to o + 1, clamped), which the fast kernel leaves to the reference.
        const bool half_up = std::string(ctm) == "tf_half_pixel_for_nn";
        if (!linear) attrs.s("nearest_mode", nearest_modes[rng() % (half_up ? 2 : std::size(nearest_modes))]);
        const TT x = random_f32(rng, {n, h, w, c});
        const TT roi = kes_test::f32({0}, {}, true);
        TT scales = kes_test::f32({0}, {}, true), sizes = kes_test::i64({0}, {});
        std::string how;
        if (rng() % 2) {
            const float sh = std::vector<float>{0.5f, 1.0f, 2.0f, 3.0f, 1.5f}[rng() % 5];
            const float sw = std::vector<float>{0.5f, 1.0f, 2.0f, 0.75f}[rng() % 4];
            if (std::floor(static_cast<float>(h) * sh) < 1 || std::floor(static_cast<float>(w) * sw) < 1) continue;
            scales = kes_test::f32({4}, {1.0f, sh, sw, 1.0f}, true);
            how = "scales " + std::to_string(sh) + "x" + std::to_string(sw);
        } else {
            const int64_t oh = 1 + rng() % 17, ow = 1 + rng() % 17;
            sizes = kes_test::i64({4}, {n, oh, ow, c});
            how = "sizes " + std::to_string(oh) + "x" + std::to_string(ow);
        }
        const std::vector<const TT*> in = scales.elements() ? std::vector<const TT*>{&x, &roi, &scales}
                                                            : std::vector<const TT*>{&x, &roi, nullptr, &sizes};
        expect_fast_matches_reference("Resize", attrs, in, dims(x.shape) + " " + how + " " + ctm, 1e-5f);
        if (HasFatalFailure()) return;
        ++tested;
    }
    EXPECT_GT(tested, 40);
    const TT x = random_f32(rng, {1, 4, 5, 6});
    const TT roi = kes_test::f32({0}, {}, true);
    const TT up = kes_test::f32({4}, {1.0f, 2.0f, 2.0f, 1.0f}, true), chan = kes_test::f32({4}, {1, 1, 1, 2}, true);
    EXPECT_TRUE(keeps_reference("Resize", A().s("mode", "cubic"), {&x, &roi, &up}));
    EXPECT_TRUE(keeps_reference("Resize", A().s("mode", "nearest"), {&x, &roi, &chan}));
}

// Concat along the channels of NHWC images (a neck's), along a middle axis, of three inputs, one of
// them empty along the axis, and of short rows: the reference's bytes; a Concat with one outer row keeps the reference.
TEST(FastKernels, ConcatEqualsReference) {
    std::mt19937 rng(12);
    for (const auto& [shapes, axis] : std::vector<std::pair<std::vector<kes::Shape>, int64_t>>{
             {{{1, 20, 20, 64}, {1, 20, 20, 64}}, 3},
             {{{2, 7, 5, 3}, {2, 7, 5, 13}, {2, 7, 5, 0}}, -1},
             {{{2, 3, 4}, {2, 5, 4}}, 1},
             {{{1, 80, 80, 16}, {1, 80, 80, 16}, {1, 80, 80, 32}}, 3},
             // A detector head's boxes: rows of every size with a fixed-size copy (1, 2, 3, 4, 6, 8
             // floats), and one without (5).
             {{{1, 4420, 2},
               {1, 4420, 2},
               {1, 4420, 1},
               {1, 4420, 3},
               {1, 4420, 4},
               {1, 4420, 6},
               {1, 4420, 8},
               {1, 4420, 5}},
              -1}}) {
        std::vector<TT> xs;
        for (const kes::Shape& sh : shapes) xs.push_back(random_f32(rng, sh));
        std::vector<const TT*> in;
        for (const TT& x : xs) in.push_back(&x);
        expect_fast_matches_reference("Concat", A().i("axis", axis), in, dims(shapes[0]), 0.0f);
        if (HasFatalFailure()) return;
    }
    const TT a = random_f32(rng, {1, 4, 5}), b = random_f32(rng, {1, 4, 5});
    EXPECT_TRUE(keeps_reference("Concat", A().i("axis", 1), {&a, &b}));
}

// Split along NHWC channels (a ShuffleNet block's halves), a YOLO head's last axis (xy, wh, scores), a
// middle axis, with an empty part and by num_outputs: the reference's bytes in every output.
TEST(FastKernels, SplitEqualsReference) {
    std::mt19937 rng(13);
    struct Case {
        kes::Shape shape;
        int64_t axis;
        std::vector<int64_t> split;  // empty: num_outputs = 3
    };
    for (const Case& c : std::vector<Case>{{{1, 28, 28, 116}, 3, {58, 58}},
                                           {{1, 3, 40, 40, 85}, -1, {2, 2, 81}},
                                           {{2, 9, 5, 7}, 1, {4, 0, 5}},
                                           {{1, 4420, 6}, -1, {1, 2, 3}},
                                           {{3, 10, 11}, 2, {}}}) {
        const TT x = random_f32(rng, c.shape);
        A attrs;
        attrs.i("axis", c.axis);
        const size_t parts = c.split.empty() ? 3 : c.split.size();
        if (c.split.empty())
            attrs.i("num_outputs", 3);
        else
            attrs.is("split", c.split);
        SCOPED_TRACE(dims(c.shape));
        const std::vector<TT> ref = kes_test::run_op("Split", attrs, {&x}, parts);
        kes_test::TestNode t("Split", attrs, {&x}, parts);
        Pool pool;
        for (const kes::kernels::Microkernels* table : kes::kernels::microkernels_available()) {
            std::unique_ptr<kes::Kernel> fast = kes::select_kernel(*t.node, t.outs, *table);
            ASSERT_NE(fast, nullptr);
            EXPECT_STREQ(fast->impl(), "split-threads");
            for (uint32_t threads : {1u, 3u}) {
                std::vector<std::vector<float>> ys;
                std::vector<void*> outs;
                for (const kes::TensorDesc& o : t.outs) ys.emplace_back(static_cast<size_t>(o.elements()), NAN);
                for (auto& y : ys) outs.push_back(y.data());
                kes::RunContext rc{pool.pool, threads, nullptr, 0};
                fast->run(rc, t.data.data(), outs.data());
                for (size_t i = 0; i < parts; ++i) {
                    const std::vector<float> r = ref[i].f();
                    ASSERT_EQ(r.size(), ys[i].size());
                    if (r.empty()) continue;  // the empty part: no bytes (and memcmp may not take a null pointer)
                    EXPECT_EQ(std::memcmp(r.data(), ys[i].data(), r.size() * sizeof(float)), 0) << "output " << i;
                }
            }
        }
    }
}

TEST(FastKernels, AveragePoolNhwcEqualsReferenceWithPadsCeilModeAndCountIncludePad) {
    std::mt19937 rng(21);
    int tested = 0;
    for (int iter = 0; tested < 60 && iter < 500; ++iter) {
        const int64_t n = 1 + rng() % 2, h = 1 + rng() % 12, w = 1 + rng() % 12, c = 1 + rng() % 37;
        const int64_t kh = 1 + rng() % 3, kw = 1 + rng() % 3, s = 1 + rng() % 2;
        const int64_t pt = static_cast<int64_t>(rng() % kh), pl = static_cast<int64_t>(rng() % kw);
        const int64_t pb = static_cast<int64_t>(rng() % kh), pr = static_cast<int64_t>(rng() % kw);
        if (h + pt + pb < kh || w + pl + pr < kw) continue;
        const TT x = random_f32(rng, {n, h, w, c});
        const int64_t ceil = static_cast<int64_t>(rng() % 2), include_pad = static_cast<int64_t>(rng() % 2);
        A attrs;
        attrs.s("data_layout", "NHWC").is("kernel_shape", {kh, kw}).is("strides", {s, s}).is("pads", {pt, pl, pb, pr});
        attrs.i("ceil_mode", ceil).i("count_include_pad", include_pad);
        expect_fast_matches_reference("AveragePool", attrs, {&x},
                                      dims(x.shape) + " k" + std::to_string(kh) + std::to_string(kw) + " s" +
                                          std::to_string(s) + " ceil" + std::to_string(ceil) + " incl" +
                                          std::to_string(include_pad),
                                      0.0f);
        if (HasFatalFailure()) return;
        ++tested;
    }
    EXPECT_EQ(tested, 60);
}

TEST(FastKernels, GlobalPoolsNhwcEqualReference) {
    std::mt19937 rng(31);
    for (const kes::Shape& shape : std::vector<kes::Shape>{
             {1, 7, 7, 512}, {2, 5, 3, 33}, {3, 1, 1, 17}, {1, 16, 16, 300}, {2, 4, 9, 1}, {2, 6, 21}}) {
        const TT x = random_f32(rng, shape);
        for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
            expect_fast_matches_reference(op, A().s("data_layout", "NHWC"), {&x}, dims(shape), 0.0f);
            if (HasFatalFailure()) return;
        }
    }
    const TT nchw = random_f32(rng, {1, 8, 4, 4});
    EXPECT_TRUE(keeps_reference("GlobalAveragePool", A{}, {&nchw}));
}

TEST(FastKernels, StandaloneActivationsMatchReference) {
    std::mt19937 rng(55);
    struct Case {
        const char* op;
        A attrs;
        float tolerance;  // 0: the same operations as the reference, so the same bytes
    };
    const std::vector<Case> cases = {
        {"Relu", A{}, 0.0f},
        {"LeakyRelu", A().f("alpha", 0.1f), 0.0f},
        {"HardSigmoid", A().f("alpha", 0.25f).f("beta", 0.4f), 0.0f},
        {"HardSwish", A{}, 0.0f},
        // The polynomial e^x: a few ulp, see ActivationMicrokernelsStayWithinFewUlp for the bound.
        {"Sigmoid", A{}, 1e-6f},
        {"Tanh", A{}, 1e-6f},
    };
    for (const kes::Shape& shape : std::vector<kes::Shape>{{2, 5, 7, 19}, {1, 1000}, {3}, {1, 130, 129, 3}})
        for (const Case& c : cases) {
            const TT x = random_f32(rng, shape, false, 8.0f);
            expect_fast_matches_reference(c.op, c.attrs, {&x}, dims(shape), c.tolerance);
            if (HasFatalFailure()) return;
        }
    // Clip with min and max, min only, and max only (the other bound the reference's finite default).
    const TT x = random_f32(rng, {2, 7, 9, 21}, false, 8.0f);
    const TT lo = kes_test::f32({}, {-1.5f}), hi = kes_test::f32({}, {6.0f});
    for (const std::vector<const TT*>& in :
         std::vector<std::vector<const TT*>>{{&x, &lo, &hi}, {&x, &lo}, {&x, nullptr, &hi}, {&x, &hi, &lo}}) {
        expect_fast_matches_reference("Clip", A{}, in, "inputs " + std::to_string(in.size()), 0.0f);
        if (HasFatalFailure()) return;
    }
}

// Exp: within a few ulp of the reference over the polynomial's range, and the reference's own results
// outside it (overflow to infinity, underflow to subnormals and zero, NaN), whatever unit they fall in.
TEST(FastKernels, ExpMatchesReferenceInsideAndOutsideThePolynomialsRange) {
    std::mt19937 rng(54);
    const float inf = std::numeric_limits<float>::infinity();
    for (const kes::Shape& shape : std::vector<kes::Shape>{{1, 4420, 2}, {3, 17}, {40000}}) {
        TT x = random_f32(rng, shape, false, 20.0f);
        expect_fast_matches_reference("Exp", A{}, {&x}, dims(shape), 1e-6f);
        if (HasFatalFailure()) return;
    }
    const std::vector<float> edges = {88.0f,   88.5f,   89.0f, 200.0f,        inf,  -87.0f, -90.0f,
                                      -100.0f, -104.0f, -inf,  std::nanf(""), 0.0f, -0.0f,  1.0f};
    for (size_t at : {size_t{0}, size_t{16 * 1024 + 3}}) {  // in the first unit, or a later one
        std::vector<float> v(at + edges.size() + 5, 0.5f);
        std::copy(edges.begin(), edges.end(), v.begin() + static_cast<ptrdiff_t>(at));
        const TT x = kes_test::f32({static_cast<int64_t>(v.size())}, v);
        const std::vector<float> ref = kes_test::run_op("Exp", A{}, {&x}, 1)[0].f();
        kes_test::TestNode t("Exp", A{}, {&x});
        for (const kes::kernels::Microkernels* table : kes::kernels::microkernels_available()) {
            SCOPED_TRACE(table->name);
            std::unique_ptr<kes::Kernel> fast = kes::select_kernel(*t.node, t.outs, *table);
            ASSERT_NE(fast, nullptr);
            std::vector<float> y(v.size());
            void* out[] = {y.data()};
            kes::RunContext serial;
            fast->run(serial, t.data.data(), out);
            for (size_t i = 0; i < v.size(); ++i) {
                if (std::isnan(ref[i])) {
                    EXPECT_TRUE(std::isnan(y[i])) << "exp(" << v[i] << ")";
                } else if (std::isinf(ref[i]) || ref[i] == 0.0f) {
                    EXPECT_EQ(y[i], ref[i]) << "exp(" << v[i] << ")";
                } else {
                    EXPECT_NEAR(y[i], ref[i], 1e-6f * ref[i]) << "exp(" << v[i] << ")";
                }
            }
        }
    }
}

// Ulp distance between floats of the same sign (both finite).
int64_t ulps(float a, float b) {
    int32_t ia, ib;
    std::memcpy(&ia, &a, 4);
    std::memcpy(&ib, &b, 4);
    if (ia < 0) ia = std::numeric_limits<int32_t>::min() - ia;
    if (ib < 0) ib = std::numeric_limits<int32_t>::min() - ib;
    return std::llabs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

TEST(FastKernels, ActivationMicrokernelsStayWithinFewUlp) {
    // Inputs where sigmoid and tanh are normal floats: tiny, around 0, across the curved part, and out
    // to where tanh is 1 and sigmoid's tail is still above 2^-126.
    std::vector<float> x;
    for (float v = 1e-6f; v < 40.0f; v *= 1.01f) x.push_back(v), x.push_back(-v);
    std::vector<float> y(x.size());
    const kes::kernels::UnaryParams p{{0.0f, 0.0f}, 0.0f, 0.0f};
    for (const kes::kernels::Microkernels* t : kes::kernels::microkernels_available()) {
        SCOPED_TRACE(t->name);
        t->vsigmoid(x.size(), x.data(), y.data(), p);
        int64_t worst = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            if (x[i] < -80.0f) continue;
            worst = std::max(worst, ulps(y[i], static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x[i]))))));
        }
        EXPECT_LE(worst, 4) << "sigmoid";
        t->vtanh(x.size(), x.data(), y.data(), p);
        worst = 0;
        for (size_t i = 0; i < x.size(); ++i)
            worst = std::max(worst, ulps(y[i], static_cast<float>(std::tanh(static_cast<double>(x[i])))));
        EXPECT_LE(worst, 4) << "tanh";
        // Swish is x times vsigmoid(x): the same operations, so the same bytes.
        std::vector<float> s(x.size());
        t->vsigmoid(x.size(), x.data(), s.data(), p);
        t->vswish(x.size(), x.data(), y.data(), p);
        for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] * s[i]) << "swish at " << x[i];
    }
}

TEST(FastKernels, SoftmaxOnTheLastAxisMatchesReference) {
    std::mt19937 rng(66);
    for (const auto& [shape, axis] : std::vector<std::pair<kes::Shape, int64_t>>{
             {{1, 1000}, -1}, {{3, 17}, 1}, {{2, 5, 37}, -1}, {{4, 19, 1}, 1}, {{6, 16}, -1}, {{2, 40000}, -1}}) {
        const TT x = random_f32(rng, shape, false, 10.0f);
        expect_fast_matches_reference("Softmax", A().i("axis", axis), {&x}, dims(shape), 1e-5f);
        if (HasFatalFailure()) return;
    }
    const TT x = random_f32(rng, {2, 5, 7});
    EXPECT_TRUE(keeps_reference("Softmax", A().i("axis", 1), {&x}));
    // Short rows (a detector's 2-class scores: scalar maxima and sums, one vectorised e^x per unit), on
    // extreme logits too (differences far below -87, where e^x leaves the polynomial's range).
    for (const kes::Shape& shape : std::vector<kes::Shape>{{1, 896, 2}, {1, 4420, 2}, {5, 3}, {2, 9000, 15}}) {
        const TT scores = random_f32(rng, shape, false, 60.0f);
        expect_fast_matches_reference("Softmax", A{}, {&scores}, dims(shape), 1e-5f);
        if (HasFatalFailure()) return;
    }
}

TEST(FastKernels, PointwiseConvOnTinyImagesRunsAsOneGemmAndMatchesReference) {
    std::mt19937 rng(12);
    for (const auto& [xs, m] : std::vector<std::pair<kes::Shape, int64_t>>{
             {{2, 1, 1, 512}, 192}, {{3, 1, 2, 33}, 17}, {{5, 1, 1, 7}, 40}, {{1, 1, 1, 9}, 1}})
        for (const char* act : {"", "Relu6", "HardSwish"}) {
            const TT x = random_f32(rng, xs), w = random_f32(rng, {m, 1, 1, xs[3]}, true),
                     b = random_f32(rng, {m}, true);
            A attrs;
            attrs.s("data_layout", "NHWC");
            if (*act) attrs.s("activation", act);
            expect_fast_matches_reference("Conv", attrs, {&x, &w, &b}, dims(xs) + " " + act);
            if (HasFatalFailure()) return;
            // The Gemm kernel took it, and packs exactly as the conv kernel would (one packed copy per node).
            std::vector<kes::TensorDesc> descs(3);
            for (int i = 0; i < 3; ++i) {
                const TT* t = i == 0 ? &x : i == 1 ? &w : &b;
                descs[i].shape = t->shape;
                descs[i].data = t->is_const ? t->bytes.data() : nullptr;
            }
            const std::string name = "n0", op = "Conv";
            kes::NodeDesc node{name, op, attrs, {&descs[0], &descs[1], &descs[2]}, 1};
            std::vector<kes::TensorDesc> outs;
            kes::create_kernel(*kes::find_op(op), node, outs);
            std::unique_ptr<kes::Kernel> fast = kes::select_kernel(node, outs);
            ASSERT_NE(fast, nullptr);
            EXPECT_EQ(std::string(fast->impl()).rfind("conv1x1-igemm-", 0), 0u) << fast->impl();
            descs[0].shape = {xs[0], 8, 8, xs[3]};  // a larger image-size gear of the same node
            std::vector<kes::TensorDesc> big_outs;
            kes::create_kernel(*kes::find_op(op), node, big_outs);
            std::unique_ptr<kes::Kernel> conv = kes::select_kernel(node, big_outs);
            ASSERT_NE(conv, nullptr);
            ASSERT_EQ(fast->packed_bytes(), conv->packed_bytes()) << conv->impl();
            std::vector<uint8_t> p1(fast->packed_bytes()), p2(conv->packed_bytes());
            fast->pack(p1.data());
            conv->pack(p2.data());
            EXPECT_EQ(p1, p2) << "packed forms differ";
        }
}

}  // namespace
