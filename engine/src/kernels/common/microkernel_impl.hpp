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

template <class V, int NB>
void dwconv(size_t channels, size_t ks, const float* const* in, const float* w, float* out, Clamp cl) {
    using R = typename V::reg;
    constexpr size_t W = V::width, B = NB * W;
    const R lo = V::set1(cl.min), hi = V::set1(cl.max);
    for (size_t c0 = 0; c0 < channels; c0 += B) {
        const size_t cn = std::min(B, channels - c0);
        R acc[NB];
#pragma GCC unroll 8
        for (int v = 0; v < NB; ++v) acc[v] = V::load(w + v * W);
        w += B;
        if (cn == B) {
            for (size_t t = 0; t < ks; ++t, w += B) {
                const float* x = in[t] + c0;
#pragma GCC unroll 8
                for (int v = 0; v < NB; ++v) acc[v] = V::fma(V::load(x + v * W), V::load(w + v * W), acc[v]);
            }
        } else {
            for (size_t t = 0; t < ks; ++t, w += B) {
                const float* x = in[t] + c0;
#pragma GCC unroll 8
                for (int v = 0; v < NB; ++v) {
                    const size_t at = static_cast<size_t>(v) * W;
                    if (at >= cn) break;
                    const R xv = at + W <= cn ? V::load(x + at) : V::load_partial(x + at, cn - at);
                    acc[v] = V::fma(xv, V::load(w + at), acc[v]);
                }
            }
        }
#pragma GCC unroll 8
        for (int v = 0; v < NB; ++v) acc[v] = clamp<V>(acc[v], lo, hi);
        store_row<V, NB>(out + c0, cn, acc);
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
    t.vmax_taps = &vmax_taps<V>;
    return t;
}

}  // namespace impl
}  // namespace kernels
}  // namespace kes
