// microkernels_avx2.cpp — the microkernel table for AVX2 + FMA (compiled with those flags only, chosen
// at run time by dispatch::pick_table once kes_cpu_has() confirms them; on other architectures this file compiles to a
// stub).
#include "../common/microkernels.hpp"
#include "kes/cpu_dispatch.hpp"

#if KES_SIMD_X86
#include <immintrin.h>

#include "../common/microkernel_impl.hpp"

namespace kes {
namespace kernels {
namespace {

struct Avx2 {
    using reg = __m256;
    static constexpr size_t width = 8;
    static reg load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, reg x) { _mm256_storeu_ps(p, x); }
    static reg set1(float x) { return _mm256_set1_ps(x); }
    static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
    static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
    // maxps/minps return the second operand when either is NaN: with the bound first, NaN passes.
    static reg min(reg a, reg b) { return _mm256_min_ps(b, a); }
    static reg max(reg a, reg b) { return _mm256_max_ps(b, a); }
    static reg sub(reg a, reg b) { return _mm256_sub_ps(a, b); }
    static reg div(reg a, reg b) { return _mm256_div_ps(a, b); }
    static reg round(reg x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static reg pow2i(reg n) {
        const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
        return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
    }
    static float hsum(reg x) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
    }
    static float hmax(reg x) {
        __m128 s = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
        s = _mm_max_ps(s, _mm_movehl_ps(s, s));
        return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
    }
    static __m256i mask(size_t n) {
        const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lanes);
    }
    static reg load_partial(const float* p, size_t n) { return _mm256_maskload_ps(p, mask(n)); }
    static void store_partial(float* p, size_t n, reg x) { _mm256_maskstore_ps(p, mask(n), x); }
};

}  // namespace

const Microkernels* microkernels_avx2() {
    // Built on first call, which dispatch::pick_table makes only on a CPU with these instructions: as a
    // namespace-scope object its initialiser ran ISA code at load time, before any check (SIGILL).
    // 6 × 16 tile: 12 accumulators + 2 weight vectors + 1 broadcast of the 16 ymm registers.
    static const Microkernels table = impl::make_table<Avx2, 6, 2, 2>("avx2");
    return &table;
}

}  // namespace kernels
}  // namespace kes

#else

namespace kes {
namespace kernels {
const Microkernels* microkernels_avx2() {
    return nullptr;
}
}  // namespace kernels
}  // namespace kes

#endif
