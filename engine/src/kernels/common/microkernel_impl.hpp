// microkernel_impl.hpp — the microkernels of microkernels.hpp, written once over a vector type.
//
// Each ISA file (microkernels_scalar.cpp, x86/microkernels_avx2.cpp, x86/microkernels_avx512.cpp,
// arm/microkernels_neon.cpp) defines a vector type V and includes this header, compiled with its ISA
// flags, then instantiates make_table<V, ...>(). V provides:
//   using reg; static constexpr int width;
//   load(const float*), store(float*, reg), set1(float), fma(a, b, c) = a·b + c, add, mul, min, max,
//   load_partial(const float*, n) (zeros past n), store_partial(float*, n, reg) (n < width),
//   sub, div, round (to nearest even), pow2i(n) = 2^n for integral n in [-126, 127] (built in the
//   exponent bits), hsum and hmax (the lanes reduced to one float, in a fixed order per ISA).
// The tile shapes are template parameters, so accumulators stay in registers: MR rows × NV vectors.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>

#include "microkernels.hpp"

namespace kes {
namespace kernels {
namespace impl {

namespace {
// min, max and -inf without the std ones: std::min<size_t> and friends are inline functions that every
// file shares, and at -O0 a file compiled with ISA flags emits its own copy, which the linker may keep
// for baseline callers (docs/ARCHITECTURE.md, "SIMD dispatch"; cmake/check_isa_objects.cmake fails
// the Debug build on it). In an anonymous namespace each file keeps its own.
template <class T>
constexpr const T& lesser(const T& a, const T& b) {
    return b < a ? b : a;
}
template <class T>
constexpr const T& greater(const T& a, const T& b) {
    return a < b ? b : a;
}
constexpr float kMinusInfinity = -__builtin_huge_valf();
}  // namespace

template <class V>
inline typename V::reg clamp(typename V::reg x, typename V::reg lo, typename V::reg hi) {
    return V::min(V::max(x, lo), hi);
}

// The packed width of a depthwise block of n channels: whole vectors (Microkernels::packed_width, the
// packing side of the same rule).
template <class V>
constexpr size_t block_width(size_t n) {
    return (n + V::width - 1) / V::width * V::width;
}

// Stores n ≤ NV·width floats of a row held in NV registers.
template <class V, int NV>
inline void store_row(float* dst, size_t n, const typename V::reg* row) {
    constexpr size_t W = V::width;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
        const size_t at = static_cast<size_t>(v) * W;
        if (at + W <= n) {
            V::store(dst + at, row[v]);
        } else {
            if (at < n) V::store_partial(dst + at, n - at, row[v]);
            return;
        }
    }
}

// EXACT: the panel is packed exactly nc wide (nc < the width: Microkernels::igemm_narrow), and its last
// vector column is loaded whole: the lanes past nc read the next row's first weights (or, past the last
// row, the packed region's panel_overread() zeros) and are never stored. Not masked: a mask in the
// inner loop made GCC spill the accumulators (AVX-512: 1.6x slower).
//
// Registers: MR row pointers, the weight pointer, the row stride and one index are what x86-64's 15
// general registers hold; one more and the compiler spills into vector registers. So the k loop counts a
// negative index up to zero (the row pointers start kc floats in: no end register).
//
// The rows of tap t come from rows(t, ap): igemm's pointer lists, or igemm_strided's evenly spaced rows.
template <class V, int MR, int NV, bool EXACT, class Rows>
__attribute__((always_inline)) inline void igemm_tile(size_t mr, size_t nc, size_t kc, size_t ks, Rows rows,
                                                      const float* w, float* c, size_t c_stride, Clamp cl) {
    using R = typename V::reg;
    constexpr size_t W = V::width;
    const size_t stride = EXACT ? nc : NV * W;
    R acc[MR][NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
        const R b = V::load(w + v * W);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) acc[r][v] = b;
    }
    w += stride;
    const ptrdiff_t k_end = static_cast<ptrdiff_t>(kc);
    for (size_t t = 0; t < ks; ++t) {
        const float* ap[MR];
        rows(t, ap);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) ap[r] += k_end;
        for (ptrdiff_t k = -k_end; k != 0; ++k, w += stride) {
            R wv[NV];
#pragma GCC unroll 8
            for (int v = 0; v < NV; ++v) wv[v] = V::load(w + v * W);
#pragma GCC unroll 16
            for (int r = 0; r < MR; ++r) {
                const R x = V::set1(ap[r][k]);
#pragma GCC unroll 8
                for (int v = 0; v < NV; ++v) acc[r][v] = V::fma(x, wv[v], acc[r][v]);
            }
        }
    }
    // The stores index acc directly (store_row's pointer to a row would make GCC keep all of acc in
    // memory: 24 vector spills at entry and exit of the 12x2 AVX-512 tile, 12% of its time at K = 24).
    const R lo = V::set1(cl.min), hi = V::set1(cl.max);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
        if (static_cast<size_t>(r) >= mr) break;
        float* dst = c + static_cast<size_t>(r) * c_stride;
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) {
            const size_t at = static_cast<size_t>(v) * W;
            const R y = clamp<V>(acc[r][v], lo, hi);
            if (at + W <= nc)
                V::store(dst + at, y);
            else if (at < nc)
                V::store_partial(dst + at, nc - at, y);
        }
    }
}

// `a` is a pointer list laid out for LD rows per tap (the table's gemm_mr), MR ≤ LD of them read.
template <class V, int MR, int NV, bool EXACT, int LD>
void igemm(size_t mr, size_t nc, size_t kc, size_t ks, const float* const* a, const float* w, float* c, size_t c_stride,
           Clamp cl) {
    auto rows = [a](size_t t, const float** ap) {
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) ap[r] = a[t * LD + static_cast<size_t>(r)];
    };
    igemm_tile<V, MR, NV, EXACT>(mr, nc, kc, ks, rows, w, c, c_stride, cl);
}

// Row r of tap t at a + offsets[t] + r·a_step; rows past mr repeat row mr - 1 (read, never stored).
template <class V, int MR, int NV, bool EXACT>
void igemm_strided(size_t mr, size_t nc, size_t kc, size_t ks, const float* a, size_t a_step, const ptrdiff_t* offsets,
                   const float* w, float* c, size_t c_stride, Clamp cl) {
    auto rows = [=](size_t t, const float** ap) {
        const float* row = a + offsets[t];
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
            ap[r] = row;
            if (static_cast<size_t>(r) + 1 < mr) row += a_step;
        }
    };
    igemm_tile<V, MR, NV, EXACT>(mr, nc, kc, ks, rows, w, c, c_stride, cl);
}

// Two pixels at a time share each weight load; the channel blocks are the outer loop so a block's
// weights stay in registers' reach of L1 across the run.
template <class V, int NB>
void dwconv(size_t pixels, size_t channels, size_t ks, const float* const* in, size_t in_step, const float* w,
            float* out, Clamp cl) {
    using R = typename V::reg;
    constexpr size_t W = V::width, B = NB * W;
    const R lo = V::set1(cl.min), hi = V::set1(cl.max);
    for (size_t c0 = 0; c0 < channels; c0 += B) {
        const size_t cn = lesser(B, channels - c0);
        const size_t bw = block_width<V>(cn);  // the block's packed width: B, or the last block's vectors
        const float* wt = w + bw;
        auto load_x = [&](const float* x, size_t at) {
            return at + W <= cn ? V::load(x + at) : V::load_partial(x + at, cn - at);
        };
        size_t p = 0;
        for (; p + 2 <= pixels; p += 2) {
            R a0[NB], a1[NB];
#pragma GCC unroll 8
            for (int v = 0; v < NB; ++v) a0[v] = a1[v] = V::load(w + v * W);
            const size_t off0 = p * in_step + c0, off1 = off0 + in_step;
            for (size_t t = 0; t < ks; ++t) {
                const float* x = in[t];
#pragma GCC unroll 8
                for (int v = 0; v < NB; ++v) {
                    const size_t at = static_cast<size_t>(v) * W;
                    if (at >= cn) break;
                    const R wv = V::load(wt + t * bw + at);
                    a0[v] = V::fma(load_x(x + off0, at), wv, a0[v]);
                    a1[v] = V::fma(load_x(x + off1, at), wv, a1[v]);
                }
            }
#pragma GCC unroll 8
            for (int v = 0; v < NB; ++v) {
                a0[v] = clamp<V>(a0[v], lo, hi);
                a1[v] = clamp<V>(a1[v], lo, hi);
            }
            store_row<V, NB>(out + p * channels + c0, cn, a0);
            store_row<V, NB>(out + (p + 1) * channels + c0, cn, a1);
        }
        for (; p < pixels; ++p) {
            R a0[NB];
#pragma GCC unroll 8
            for (int v = 0; v < NB; ++v) a0[v] = V::load(w + v * W);
            const size_t off0 = p * in_step + c0;
            for (size_t t = 0; t < ks; ++t) {
#pragma GCC unroll 8
                for (int v = 0; v < NB; ++v) {
                    const size_t at = static_cast<size_t>(v) * W;
                    if (at >= cn) break;
                    a0[v] = V::fma(load_x(in[t] + off0, at), V::load(wt + t * bw + at), a0[v]);
                }
            }
#pragma GCC unroll 8
            for (int v = 0; v < NB; ++v) a0[v] = clamp<V>(a0[v], lo, hi);
            store_row<V, NB>(out + p * channels + c0, cn, a0);
        }
        w += bw * (1 + ks);
    }
}

// Depthwise at stride 1 and dilation 1 along the row, P output pixels of one channel vector at a time:
// along a kernel row the taps of neighbouring pixels are neighbouring input pixels, so each input vector
// is loaded once and serves up to kw taps (a sliding window) instead of once per tap. Every output's sum
// is bias + Σ_{ky} Σ_{kx} x·w in the generic kernel's tap order, so the bytes are dwconv's.
template <class V, int P, int KW, int KH, bool FULL>
inline void dw_s1_pixels(size_t p, size_t channels, size_t at, size_t vn, size_t kh_runtime, const float* const* rows,
                         const float* w, size_t bw, float* out, typename V::reg lo, typename V::reg hi) {
    using R = typename V::reg;
    const size_t kh = KH > 0 ? static_cast<size_t>(KH) : kh_runtime;
    auto load_x = [&](const float* x) { return FULL ? V::load(x) : V::load_partial(x, vn); };
    R acc[P];
    const R bias = V::load(w + at);
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q) acc[q] = bias;
    const float* wt = w + bw + at;
#pragma GCC unroll 8
    for (size_t ky = 0; ky < kh; ++ky) {
        const float* row = rows[ky] + p * channels + at;
        R x[P + KW - 1];
#pragma GCC unroll 16
        for (int j = 0; j < P + KW - 1; ++j) x[j] = load_x(row + static_cast<size_t>(j) * channels);
#pragma GCC unroll 8
        for (int kx = 0; kx < KW; ++kx) {
            const R wv = V::load(wt + (ky * KW + static_cast<size_t>(kx)) * bw);
#pragma GCC unroll 16
            for (int q = 0; q < P; ++q) acc[q] = V::fma(x[q + kx], wv, acc[q]);
        }
    }
#pragma GCC unroll 16
    for (int q = 0; q < P; ++q) {
        const R y = clamp<V>(acc[q], lo, hi);
        float* dst = out + (p + static_cast<size_t>(q)) * channels + at;
        if (FULL)
            V::store(dst, y);
        else
            V::store_partial(dst, vn, y);
    }
}

// One channel vector of a run: P pixels at a time (8 where there are 32 vector registers of 16 lanes,
// 4 otherwise: the accumulators, the P + KW - 1 window and a weight stay in registers), then one by one.
// KH > 0 unrolls the kernel rows (square kernels, the common case); FULL: vn is the whole width.
template <class V, int KW, int KH, bool FULL>
void dw_s1_vector(size_t pixels, size_t channels, size_t at, size_t vn, size_t kh, const float* const* rows,
                  const float* w, size_t bw, float* out, typename V::reg lo, typename V::reg hi) {
    constexpr int P = V::width >= 16 ? 8 : 4;
    size_t p = 0;
    for (; p + P <= pixels; p += P) dw_s1_pixels<V, P, KW, KH, FULL>(p, channels, at, vn, kh, rows, w, bw, out, lo, hi);
    for (; p < pixels; ++p) dw_s1_pixels<V, 1, KW, KH, FULL>(p, channels, at, vn, kh, rows, w, bw, out, lo, hi);
}

template <class V, int NB, int KW>
void dwconv_s1_kw(size_t pixels, size_t channels, size_t kh, const float* const* rows, const float* w, float* out,
                  Clamp cl) {
    constexpr size_t W = V::width, B = NB * W;
    const typename V::reg lo = V::set1(cl.min), hi = V::set1(cl.max);
    for (size_t c0 = 0; c0 < channels; c0 += B) {
        const size_t cn = lesser(B, channels - c0), bw = block_width<V>(cn);
        const float* block_rows[Microkernels::dwconv_s1_max_kh];
        for (size_t ky = 0; ky < kh; ++ky) block_rows[ky] = rows[ky] + c0;
        float* o = out + c0;
        for (size_t at = 0; at < cn; at += W) {
            const size_t vn = lesser(W, cn - at);
            const bool square = kh == static_cast<size_t>(KW);
            if (vn == W && square)
                dw_s1_vector<V, KW, KW, true>(pixels, channels, at, vn, kh, block_rows, w, bw, o, lo, hi);
            else if (vn == W)
                dw_s1_vector<V, KW, 0, true>(pixels, channels, at, vn, kh, block_rows, w, bw, o, lo, hi);
            else if (square)
                dw_s1_vector<V, KW, KW, false>(pixels, channels, at, vn, kh, block_rows, w, bw, o, lo, hi);
            else
                dw_s1_vector<V, KW, 0, false>(pixels, channels, at, vn, kh, block_rows, w, bw, o, lo, hi);
        }
        w += bw * (1 + kh * KW);
    }
}

// rows[ky] points at the run's first input pixel (its leftmost tap) in kernel row ky; packed w as
// dwconv's; kw ≤ dwconv_s1_max_kw (the driver keeps to it), each width its own instance so the window
// stays in registers.
template <class V, int NB>
void dwconv_s1(size_t pixels, size_t channels, size_t kh, size_t kw, const float* const* rows, const float* w,
               float* out, Clamp cl) {
    switch (kw) {
        case 1: return dwconv_s1_kw<V, NB, 1>(pixels, channels, kh, rows, w, out, cl);
        case 2: return dwconv_s1_kw<V, NB, 2>(pixels, channels, kh, rows, w, out, cl);
        case 3: return dwconv_s1_kw<V, NB, 3>(pixels, channels, kh, rows, w, out, cl);
        case 4: return dwconv_s1_kw<V, NB, 4>(pixels, channels, kh, rows, w, out, cl);
        default: return dwconv_s1_kw<V, NB, 5>(pixels, channels, kh, rows, w, out, cl);
    }
}

template <class V, class Op>
inline void binary(size_t n, const float* a, const float* b, float* out, Clamp cl, Op op) {
    using R = typename V::reg;
    constexpr size_t W = V::width;
    const R lo = V::set1(cl.min), hi = V::set1(cl.max);
    size_t i = 0;
    for (; i + W <= n; i += W) V::store(out + i, clamp<V>(op(V::load(a + i), V::load(b + i)), lo, hi));
    if (i < n) {
        const size_t rest = n - i;
        V::store_partial(out + i, rest,
                         clamp<V>(op(V::load_partial(a + i, rest), V::load_partial(b + i, rest)), lo, hi));
    }
}

template <class V>
void vadd(size_t n, const float* a, const float* b, float* out, Clamp cl) {
    binary<V>(n, a, b, out, cl, [](typename V::reg x, typename V::reg y) { return V::add(x, y); });
}
template <class V>
void vmul(size_t n, const float* a, const float* b, float* out, Clamp cl) {
    binary<V>(n, a, b, out, cl, [](typename V::reg x, typename V::reg y) { return V::mul(x, y); });
}
// Rows of m floats against one vector b of m. Short rows (a per-channel constant over few channels,
// as in a detector's first layers) would pay a call and a masked tail per row: the rows are then
// taken `reps` at a time against b repeated `reps` times (the same element pairs, so the same bytes).
template <class V, class Op>
inline void binary_rows(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp cl, Op op) {
    constexpr size_t kPattern = 256;
    size_t reps = m < 64 ? lesser<size_t>(kPattern / greater<size_t>(m, 1), rows) : 1;
    float pattern[kPattern];
    if (reps > 1) {
        for (size_t k = 0; k < reps; ++k) std::memcpy(pattern + k * m, b, m * sizeof(float));
        b = pattern;
    } else {
        reps = 1;
    }
    size_t r = 0;
    for (; r + reps <= rows; r += reps) binary<V>(reps * m, a + r * m, b, out + r * m, cl, op);
    for (; r < rows; ++r) binary<V>(m, a + r * m, b, out + r * m, cl, op);
}

template <class V>
void vadd_rows(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp cl) {
    binary_rows<V>(rows, m, a, b, out, cl, [](typename V::reg x, typename V::reg y) { return V::add(x, y); });
}
template <class V>
void vmul_rows(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp cl) {
    binary_rows<V>(rows, m, a, b, out, cl, [](typename V::reg x, typename V::reg y) { return V::mul(x, y); });
}

template <class V>
void vsub_rows(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp cl) {
    binary_rows<V>(rows, m, a, b, out, cl, [](typename V::reg x, typename V::reg y) { return V::sub(x, y); });
}
template <class V>
void vdiv_rows(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp cl) {
    binary_rows<V>(rows, m, a, b, out, cl, [](typename V::reg x, typename V::reg y) { return V::div(x, y); });
}

template <class V>
void vprelu_rows(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp cl) {
    binary_rows<V>(rows, m, a, b, out, cl, [](typename V::reg x, typename V::reg slope) {
        const typename V::reg zero = V::set1(0.0f);
        return V::add(V::max(x, zero), V::mul(V::min(x, zero), slope));
    });
}

// out[i] = a[i] · s[i mod m] + t[i mod m] over rows of m: a multiply, then an add (not an FMA), as the
// reference BatchNormalization computes it. Short rows are taken several at a time, as binary_rows does.
template <class V>
void vaffine_rows(size_t rows, size_t m, const float* a, const float* s, const float* t, float* out) {
    using R = typename V::reg;
    constexpr size_t W = V::width, kPattern = 256;
    size_t reps = m < 64 ? lesser<size_t>(kPattern / greater<size_t>(m, 1), rows) : 1;
    float ps[kPattern], pt[kPattern];
    if (reps > 1) {
        for (size_t k = 0; k < reps; ++k) {
            std::memcpy(ps + k * m, s, m * sizeof(float));
            std::memcpy(pt + k * m, t, m * sizeof(float));
        }
        s = ps, t = pt;
    } else {
        reps = 1;
    }
    auto run = [&](size_t n, const float* x, float* y) {
        size_t i = 0;
        for (; i + W <= n; i += W) V::store(y + i, V::add(V::mul(V::load(x + i), V::load(s + i)), V::load(t + i)));
        if (i < n) {
            const size_t rest = n - i;
            const R v = V::add(V::mul(V::load_partial(x + i, rest), V::load_partial(s + i, rest)),
                               V::load_partial(t + i, rest));
            V::store_partial(y + i, rest, v);
        }
    };
    size_t r = 0;
    for (; r + reps <= rows; r += reps) run(reps * m, a + r * m, out + r * m);
    for (; r < rows; ++r) run(m, a + r * m, out + r * m);
}

template <class V>
void vmax_taps(size_t channels, size_t ks, const float* const* in, float* out) {
    using R = typename V::reg;
    constexpr size_t W = V::width;
    size_t c = 0;
    for (; c + W <= channels; c += W) {
        R m = V::load(in[0] + c);
        for (size_t t = 1; t < ks; ++t) m = V::max(m, V::load(in[t] + c));
        V::store(out + c, m);
    }
    for (; c < channels; ++c) {
        float m = in[0][c];
        for (size_t t = 1; t < ks; ++t) m = greater(m, in[t][c]);
        out[c] = m;
    }
}

template <class V>
void vavg_taps(size_t channels, size_t ks, const float* const* in, float* out, float divisor) {
    using R = typename V::reg;
    constexpr size_t W = V::width;
    const R d = V::set1(divisor);
    size_t c = 0;
    for (; c + W <= channels; c += W) {
        R s = V::load(in[0] + c);
        for (size_t t = 1; t < ks; ++t) s = V::add(s, V::load(in[t] + c));
        V::store(out + c, V::div(s, d));
    }
    if (c < channels) {
        const size_t rest = channels - c;
        R s = V::load_partial(in[0] + c, rest);
        for (size_t t = 1; t < ks; ++t) s = V::add(s, V::load_partial(in[t] + c, rest));
        V::store_partial(out + c, rest, V::div(s, d));
    }
}

// The reference starts its sums at 0 and its maxima at -infinity; so do these (0 + x is x, bit for bit,
// except for -0: the reference's sum is +0 there too).
template <class V>
void vsum_rows(size_t rows, size_t m, size_t stride, const float* x, float* out, float divisor) {
    using R = typename V::reg;
    constexpr size_t W = V::width;
    const R d = V::set1(divisor);
    for (size_t c = 0; c < m; c += W) {
        const size_t n = lesser(W, m - c);
        R s = V::set1(0.0f);
        for (size_t r = 0; r < rows; ++r)
            s = V::add(s, n == W ? V::load(x + r * stride + c) : V::load_partial(x + r * stride + c, n));
        s = V::div(s, d);
        if (n == W)
            V::store(out + c, s);
        else
            V::store_partial(out + c, n, s);
    }
}

template <class V>
void vmax_rows(size_t rows, size_t m, size_t stride, const float* x, float* out) {
    using R = typename V::reg;
    constexpr size_t W = V::width;
    for (size_t c = 0; c < m; c += W) {
        const size_t n = lesser(W, m - c);
        R s = V::set1(kMinusInfinity);
        // V::max(acc, v) keeps acc when v is NaN: fmax's rule.
        for (size_t r = 0; r < rows; ++r)
            s = V::max(s, n == W ? V::load(x + r * stride + c) : V::load_partial(x + r * stride + c, n));
        if (n == W)
            V::store(out + c, s);
        else
            V::store_partial(out + c, n, s);
    }
}

// out[i] = f(x[i]) with f over registers; the tail goes through a partial load and store.
template <class V, class F>
inline void map(size_t n, const float* x, float* out, F f) {
    constexpr size_t W = V::width;
    size_t i = 0;
    for (; i + W <= n; i += W) V::store(out + i, f(V::load(x + i)));
    if (i < n) V::store_partial(out + i, n - i, f(V::load_partial(x + i, n - i)));
}

// e^x = 2^n · (1 + q): Cephes' expf (range reduction by ln 2 in two parts, degree-5 polynomial). x is
// clamped to [-87, 88] so that n stays a normal exponent; callers need no more range than that.
template <class V>
inline void exp_parts(typename V::reg x, typename V::reg& pow2n, typename V::reg& q) {
    using R = typename V::reg;
    x = clamp<V>(x, V::set1(-87.0f), V::set1(88.0f));
    const R n = V::round(V::mul(x, V::set1(1.44269504088896341f)));
    R r = V::fma(n, V::set1(-0.693359375f), x);
    r = V::fma(n, V::set1(2.12194440e-4f), r);
    R p = V::set1(1.9875691500e-4f);
    p = V::fma(p, r, V::set1(1.3981999507e-3f));
    p = V::fma(p, r, V::set1(8.3334519073e-3f));
    p = V::fma(p, r, V::set1(4.1665795894e-2f));
    p = V::fma(p, r, V::set1(1.6666665459e-1f));
    p = V::fma(p, r, V::set1(5.0000001201e-1f));
    q = V::fma(V::mul(r, r), p, r);
    pow2n = V::pow2i(n);
}

template <class V>
inline typename V::reg exp(typename V::reg x) {
    typename V::reg p, q;
    exp_parts<V>(x, p, q);
    return V::fma(p, q, p);
}

template <class V>
void vclamp(size_t n, const float* x, float* out, const UnaryParams& p) {
    const typename V::reg lo = V::set1(p.clamp.min), hi = V::set1(p.clamp.max);
    map<V>(n, x, out, [&](typename V::reg v) { return clamp<V>(v, lo, hi); });
}

template <class V>
void vleaky_relu(size_t n, const float* x, float* out, const UnaryParams& p) {
    const typename V::reg zero = V::set1(0.0f), a = V::set1(p.alpha);
    map<V>(n, x, out, [&](typename V::reg v) { return V::add(V::max(v, zero), V::mul(V::min(v, zero), a)); });
}

template <class V>
void vhard_sigmoid(size_t n, const float* x, float* out, const UnaryParams& p) {
    const typename V::reg zero = V::set1(0.0f), one = V::set1(1.0f), a = V::set1(p.alpha), b = V::set1(p.beta);
    map<V>(n, x, out, [&](typename V::reg v) { return clamp<V>(V::add(V::mul(v, a), b), zero, one); });
}

// Divides by 6 (not multiplies by 1/6) as the reference does, so the two agree bit for bit.
template <class V>
void vhard_swish(size_t n, const float* x, float* out, const UnaryParams&) {
    const typename V::reg zero = V::set1(0.0f), one = V::set1(1.0f), six = V::set1(6.0f), half = V::set1(0.5f);
    map<V>(n, x, out, [&](typename V::reg v) { return V::mul(v, clamp<V>(V::add(V::div(v, six), half), zero, one)); });
}

template <class V>
void vsigmoid(size_t n, const float* x, float* out, const UnaryParams&) {
    const typename V::reg zero = V::set1(0.0f), one = V::set1(1.0f);
    map<V>(n, x, out, [&](typename V::reg v) { return V::div(one, V::add(one, exp<V>(V::sub(zero, v)))); });
}

template <class V>
void vsquare(size_t n, const float* x, float* out, const UnaryParams&) {
    map<V>(n, x, out, [](typename V::reg v) { return V::mul(v, v); });
}

// e^x for x in [-87, 88] (exp's range; the Exp kernel takes the lanes outside it, and NaN, from std::exp).
template <class V>
void vexp(size_t n, const float* x, float* out, const UnaryParams&) {
    map<V>(n, x, out, [](typename V::reg v) { return exp<V>(v); });
}

// Swish (SiLU): x · sigmoid(x), the sigmoid computed as vsigmoid does and then multiplied, so a fused
// Swish gives the bytes of the Sigmoid and Mul nodes it replaced.
template <class V>
void vswish(size_t n, const float* x, float* out, const UnaryParams&) {
    const typename V::reg zero = V::set1(0.0f), one = V::set1(1.0f);
    map<V>(n, x, out, [&](typename V::reg v) { return V::mul(v, V::div(one, V::add(one, exp<V>(V::sub(zero, v))))); });
}

// tanh(x) = expm1(2x) / (expm1(2x) + 2), with expm1 = (2^n - 1) + 2^n·q: exact in its first term, so
// near 0 (n = 0) it is q itself and tanh keeps its relative accuracy (1 - 2/(e^2x + 1) would not).
template <class V>
void vtanh(size_t n, const float* x, float* out, const UnaryParams&) {
    const typename V::reg one = V::set1(1.0f), two = V::set1(2.0f);
    map<V>(n, x, out, [&](typename V::reg v) {
        typename V::reg p, q;
        exp_parts<V>(V::add(v, v), p, q);
        const typename V::reg em1 = V::fma(p, q, V::sub(p, one));
        return V::div(em1, V::add(em1, two));
    });
}

template <class V>
void vsoftmax_rows(size_t rows, size_t m, const float* x, float* out) {
    using R = typename V::reg;
    constexpr size_t W = V::width;
    for (size_t row = 0; row < rows; ++row, x += m, out += m) {
        size_t i = 0;
        R vmax = V::set1(kMinusInfinity);
        for (; i + W <= m; i += W) vmax = V::max(vmax, V::load(x + i));
        float mx = V::hmax(vmax);
        for (; i < m; ++i) mx = greater(mx, x[i]);
        const R vm = V::set1(mx);
        R vsum = V::set1(0.0f);
        for (i = 0; i + W <= m; i += W) {
            const R e = exp<V>(V::sub(V::load(x + i), vm));
            V::store(out + i, e);
            vsum = V::add(vsum, e);
        }
        float sum = V::hsum(vsum);
        if (i < m) {
            // Lanes past m would add e^(0 - max): the tail is summed from what was stored.
            V::store_partial(out + i, m - i, exp<V>(V::sub(V::load_partial(x + i, m - i), vm)));
            for (size_t j = i; j < m; ++j) sum += out[j];
        }
        const R vs = V::set1(sum);
        map<V>(m, out, out, [&](R e) { return V::div(e, vs); });
    }
}

// Partial loads and stores through a small buffer, for ISAs without masked moves (call them from V's
// load_partial / store_partial).
template <class V>
typename V::reg load_partial_by_copy(const float* p, size_t n) {
    float buf[V::width] = {};
    std::memcpy(buf, p, n * sizeof(float));
    return V::load(buf);
}
template <class V>
void store_partial_by_copy(float* p, size_t n, typename V::reg x) {
    float buf[V::width];
    V::store(buf, x);
    std::memcpy(p, buf, n * sizeof(float));
}

// The tiles of height H for panels of 1 .. NV vectors, and the narrow one: [h][v - 1] = igemm<V, H, v>.
template <class V, int H, int NV, int LD>
void fill_igemm(Microkernels& t, size_t h) {
    if constexpr (NV > 1) fill_igemm<V, H, NV - 1, LD>(t, h);
    t.igemm_by_vectors[h][NV - 1] = &igemm<V, H, NV, false, LD>;
    t.igemm_strided_by_vectors[h][NV - 1] = &igemm_strided<V, H, NV, false>;
    if constexpr (NV == 1) {
        t.igemm_narrow[h] = &igemm<V, H, 1, true, LD>;
        t.igemm_strided_narrow[h] = &igemm_strided<V, H, 1, true>;
    }
}

// ---- int8 ----

// ops/quant.hpp's requantize() of one sum, bit for bit: the same f32 product, clamp (a NaN product, from
// an infinite multiplier times 0, takes the lower bound, as there) and rounding half to even. The result
// is in the output type's range: its low byte is the u8 or i8 value.
template <class V>
inline uint8_t requantize_byte(int32_t acc, float multiplier, const QuantOut& q) {
    float v = static_cast<float>(acc) * multiplier;
    if (!(v >= q.lo)) v = q.lo;
    if (v > q.hi) v = q.hi;
    return static_cast<uint8_t>(static_cast<int32_t>(__builtin_nearbyintf(v)) + q.zero_point);
}

// The portable integer GEMM tile (Microkernels::qgemm): plain loops the ISA file's compiler vectorises.
// Sums in uint32: int32 wrap-around without signed overflow (the reference wraps its sum the same way).
template <class V, int MR, int NR, int KG>
void qgemm(size_t mr, size_t nc, size_t kgroups, const int16_t* w, const int16_t* x, const int32_t* bias,
           const float* multiplier, const QuantOut& q, uint8_t* y, size_t y_stride) {
    uint32_t acc[MR][NR];
    for (int r = 0; r < MR; ++r)
        for (int n = 0; n < NR; ++n) acc[r][n] = static_cast<size_t>(r) < mr ? static_cast<uint32_t>(bias[r]) : 0u;
    for (size_t g = 0; g < kgroups; ++g, w += MR * KG, x += NR * KG)
        for (int r = 0; r < MR; ++r)
            for (int n = 0; n < NR; ++n) {
                int32_t s = 0;  // KG products of |v| ≤ 255: fits
                for (int j = 0; j < KG; ++j) s += static_cast<int32_t>(w[r * KG + j]) * x[n * KG + j];
                acc[r][n] += static_cast<uint32_t>(s);
            }
    for (size_t r = 0; r < mr; ++r)
        for (size_t n = 0; n < nc; ++n)
            y[r * y_stride + n] = requantize_byte<V>(static_cast<int32_t>(acc[r][n]), multiplier[r], q);
}

// The portable depthwise row (Microkernels::qdwconv_row), in blocks of outputs held in registers.
template <class V>
void qdwconv_row(size_t n, size_t ks, const int16_t* const* taps, size_t step, const int16_t* w, int32_t bias,
                 float multiplier, const QuantOut& q, uint8_t* y) {
    constexpr size_t kBlock = 64;
    uint32_t acc[kBlock];
    for (size_t i0 = 0; i0 < n; i0 += kBlock) {
        const size_t len = lesser(kBlock, n - i0);
        for (size_t i = 0; i < len; ++i) acc[i] = static_cast<uint32_t>(bias);
        for (size_t t = 0; t < ks; ++t) {
            const int16_t* in = taps[t] + i0 * step;
            const int32_t wt = w[t];
            if (step == 1)
                for (size_t i = 0; i < len; ++i) acc[i] += static_cast<uint32_t>(wt * in[i]);
            else
                for (size_t i = 0; i < len; ++i) acc[i] += static_cast<uint32_t>(wt * in[i * step]);
        }
        for (size_t i = 0; i < len; ++i) y[i0 + i] = requantize_byte<V>(static_cast<int32_t>(acc[i]), multiplier, q);
    }
}

// The portable int8 tile: 4 output channels × 16 pixels, k in pairs (the layout AVX2's vpmaddwd reads).
constexpr int kQgemmMr = 4, kQgemmNr = 16, kQgemmKgroup = 2;

template <class V, int MR, int NV, int DWB>
Microkernels make_table(const char* name) {
    Microkernels t{};
    t.name = name;
    t.gemm_mr = MR;
    t.gemm_nr = NV * V::width;
    t.vector_width = V::width;
    static_assert(NV <= static_cast<int>(Microkernels::kMaxPanelVectors), "igemm_by_vectors holds fewer vectors");
    // Heights MR, a third of it (at least 2: what the remainder of a 14×14 or 28×28 image needs), and 1.
    constexpr int kMid = MR / 3 > 2 ? MR / 3 : 2;
    static_assert(Microkernels::kTileHeights == 3 && MR > kMid, "three tile heights, descending");
    t.tile_heights[0] = MR, t.tile_heights[1] = kMid, t.tile_heights[2] = 1;
    fill_igemm<V, MR, NV, MR>(t, 0);
    fill_igemm<V, kMid, NV, MR>(t, 1);
    fill_igemm<V, 1, NV, MR>(t, 2);
    t.dw_block = DWB * V::width;
    t.dwconv = &dwconv<V, DWB>;
    t.dwconv_s1 = &dwconv_s1<V, DWB>;
    t.vadd = &vadd<V>;
    t.vmul = &vmul<V>;
    t.vadd_rows = &vadd_rows<V>;
    t.vmul_rows = &vmul_rows<V>;
    t.vsub_rows = &vsub_rows<V>;
    t.vdiv_rows = &vdiv_rows<V>;
    t.vprelu_rows = &vprelu_rows<V>;
    t.vaffine_rows = &vaffine_rows<V>;
    t.vmax_taps = &vmax_taps<V>;
    t.vavg_taps = &vavg_taps<V>;
    t.vsum_rows = &vsum_rows<V>;
    t.vmax_rows = &vmax_rows<V>;
    t.vclamp = &vclamp<V>;
    t.vleaky_relu = &vleaky_relu<V>;
    t.vhard_sigmoid = &vhard_sigmoid<V>;
    t.vhard_swish = &vhard_swish<V>;
    t.vsigmoid = &vsigmoid<V>;
    t.vtanh = &vtanh<V>;
    t.vswish = &vswish<V>;
    t.vexp = &vexp<V>;
    t.vsquare = &vsquare<V>;
    t.vsoftmax_rows = &vsoftmax_rows<V>;
    t.qgemm_mr = kQgemmMr, t.qgemm_nr = kQgemmNr, t.qgemm_kgroup = kQgemmKgroup;
    t.qgemm = &qgemm<V, kQgemmMr, kQgemmNr, kQgemmKgroup>;
    t.qdwconv_row = &qdwconv_row<V>;
    return t;
}

}  // namespace impl
}  // namespace kernels
}  // namespace kes
