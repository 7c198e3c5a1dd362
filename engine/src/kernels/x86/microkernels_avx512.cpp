// microkernels_avx512.cpp — the microkernel table for AVX-512 F (compiled with those flags only, chosen
// at run time by dispatch::pick_table once kes_cpu_has() confirms them; on other architectures this file compiles to a
// stub).
#include "../common/microkernels.hpp"
#include "kes/cpu_dispatch.hpp"

#if KES_SIMD_X86
#include <immintrin.h>

// GCC 12's AVX-512 headers build _mm512_max_ps/_mm512_min_ps on an undefined vector (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "../common/microkernel_impl.hpp"

namespace kes {
namespace kernels {
namespace {

struct Avx512 {
    using reg = __m512;
    static constexpr size_t width = 16;
    static reg load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, reg x) { _mm512_storeu_ps(p, x); }
    static reg set1(float x) { return _mm512_set1_ps(x); }
    static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
    static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
    static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
    static reg min(reg a, reg b) { return _mm512_min_ps(b, a); }
    static reg max(reg a, reg b) { return _mm512_max_ps(b, a); }
    static reg sub(reg a, reg b) { return _mm512_sub_ps(a, b); }
    static reg div(reg a, reg b) { return _mm512_div_ps(a, b); }
    static reg round(reg x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static reg pow2i(reg n) {
        const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
        return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
    }
    static float hsum(reg x) { return _mm512_reduce_add_ps(x); }
    static float hmax(reg x) { return _mm512_reduce_max_ps(x); }
    static __mmask16 mask(size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
    static reg load_partial(const float* p, size_t n) { return _mm512_maskz_loadu_ps(mask(n), p); }
    static void store_partial(float* p, size_t n, reg x) { _mm512_mask_storeu_ps(p, mask(n), x); }
};

}  // namespace

const Microkernels* microkernels_avx512() {
    // Built on first call, which dispatch::pick_table makes only on a CPU with these instructions: as a
    // namespace-scope object its initialiser ran ISA code at load time, before any check (SIGILL).
    // 12 × 32 tile: 24 accumulators + 2 weight vectors + broadcasts of the 32 zmm registers.
    static const Microkernels table = impl::make_table<Avx512, 12, 2, 2>("avx512");
    return &table;
}

}  // namespace kernels
}  // namespace kes

#else

namespace kes {
namespace kernels {
const Microkernels* microkernels_avx512() {
    return nullptr;
}
}  // namespace kernels
}  // namespace kes

#endif
