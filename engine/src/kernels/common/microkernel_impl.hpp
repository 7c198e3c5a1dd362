// microkernel_impl.hpp — the microkernels of microkernels.hpp, written once over a vector type.
//
// Each ISA file (microkernels_scalar.cpp, x86/microkernels_avx2.cpp, x86/microkernels_avx512.cpp,
// arm/microkernels_neon.cpp) defines a vector type V and includes this header, compiled with its ISA
// flags, then instantiates make_table<V, ...>(). V provides:
//   using reg; static constexpr int width;
//   load(const float*), store(float*, reg), set1(float), fma(a, b, c) = a·b + c, add, mul, min, max,
//   load_partial(const float*, n) (zeros past n), store_partial(float*, n, reg) (n < width).
// The tile shapes are template parameters, so accumulators stay in registers: MR rows × NV vectors.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "microkernels.hpp"

namespace kes {
namespace kernels {
namespace impl {

template <class V>
inline typename V::reg clamp(typename V::reg x, typename V::reg lo, typename V::reg hi) {
    return V::min(V::max(x, lo), hi);
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

template <class V, int MR, int NV>
void igemm(size_t mr, size_t nc, size_t kc, size_t ks, const float* const* a, const float* w, float* c, size_t c_stride,
           Clamp cl) {
    using R = typename V::reg;
    constexpr size_t W = V::width, NR = NV * W;
    R acc[MR][NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
        const R b = V::load(w + v * W);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) acc[r][v] = b;
    }
    w += NR;
    for (size_t t = 0; t < ks; ++t, a += MR) {
        const float* ap[MR];
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) ap[r] = a[r];
        for (size_t k = 0; k < kc; ++k, w += NR) {
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
    const R lo = V::set1(cl.min), hi = V::set1(cl.max);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
        if (static_cast<size_t>(r) >= mr) break;
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[r][v] = clamp<V>(acc[r][v], lo, hi);
        store_row<V, NV>(c + static_cast<size_t>(r) * c_stride, nc, acc[r]);
    }
}

// Two pixels at a time share each weight load; the channel blocks are the outer loop so a block's
// weights stay in registers' reach of L1 across the run.
template <class V, int NB>
void dwconv(size_t pixels, size_t channels, size_t ks, const float* const* in, size_t in_step, const float* w,
            float* out, Clamp cl) {
    using R = typename V::reg;
    constexpr size_t W = V::width, B = NB * W;
    const R lo = V::set1(cl.min), hi = V::set1(cl.max);
    for (size_t c0 = 0; c0 < channels; c0 += B, w += B * (1 + ks)) {
        const size_t cn = std::min(B, channels - c0);
        const float* wt = w + B;
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
                    const R wv = V::load(wt + t * B + at);
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
                    a0[v] = V::fma(load_x(in[t] + off0, at), V::load(wt + t * B + at), a0[v]);
                }
            }
#pragma GCC unroll 8
            for (int v = 0; v < NB; ++v) a0[v] = clamp<V>(a0[v], lo, hi);
            store_row<V, NB>(out + p * channels + c0, cn, a0);
        }
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
template <class V>
void vadd_rows(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp cl) {
    for (size_t r = 0; r < rows; ++r) vadd<V>(m, a + r * m, b, out + r * m, cl);
}
template <class V>
void vmul_rows(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp cl) {
    for (size_t r = 0; r < rows; ++r) vmul<V>(m, a + r * m, b, out + r * m, cl);
}

template <class V>
void vprelu_rows(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp cl) {
    for (size_t r = 0; r < rows; ++r)
        binary<V>(m, a + r * m, b, out + r * m, cl, [](typename V::reg x, typename V::reg slope) {
            const typename V::reg zero = V::set1(0.0f);
            return V::add(V::max(x, zero), V::mul(V::min(x, zero), slope));
        });
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
        for (size_t t = 1; t < ks; ++t) m = std::max(m, in[t][c]);
        out[c] = m;
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

template <class V, int MR, int NV, int DWB>
Microkernels make_table(const char* name) {
    Microkernels t{};
    t.name = name;
    t.gemm_mr = MR;
    t.gemm_nr = NV * V::width;
    t.igemm = &igemm<V, MR, NV>;
    t.dw_block = DWB * V::width;
    t.dwconv = &dwconv<V, DWB>;
    t.vadd = &vadd<V>;
    t.vmul = &vmul<V>;
    t.vadd_rows = &vadd_rows<V>;
    t.vmul_rows = &vmul_rows<V>;
    t.vprelu_rows = &vprelu_rows<V>;
    t.vmax_taps = &vmax_taps<V>;
    return t;
}

}  // namespace impl
}  // namespace kernels
}  // namespace kes
