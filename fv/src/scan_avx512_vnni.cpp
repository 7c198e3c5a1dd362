// scan_avx512_vnni.cpp — AVX-512 VNNI int8 inner products (VPDPBUSD: 64 u8 × s8 products summed in
// fours into 16 int32 lanes per instruction). Compiled with VNNI enabled for this file only and chosen
// at run time; the table is the AVX-512 one with these int8 kernels. A stub elsewhere.
//
// VPDPBUSD multiplies an unsigned operand by a signed one, so the stored codes are biased: x + 128 =
// x XOR 0x80 is in [1, 255], and Σ (x[i] + 128) · h[i] = Σ x[i] · h[i] + 128 · Σ h[i], the last term
// known per query (I8Query::hi_sum, lo_sum). Lane sums stay below 2^31 (fv_kernels.hpp), and the
// result is the exact integer the scalar kernel computes.
#include "fv_kernels.hpp"
#include "kes/cpu_dispatch.hpp"
#include "scan_batch.hpp"

#if KES_SIMD_X86
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, see scan_avx512.cpp
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

namespace kes {
namespace fv {
namespace {

struct VnniOps {
    static void sums(const I8Query& q, const int8_t* x, size_t dim, int32_t* hi_dot, int32_t* lo_dot) {
        const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
        __m512i ah = _mm512_setzero_si512(), al = ah;
        size_t i = 0;
        for (; i + 64 <= dim; i += 64) {
            const __m512i xu = _mm512_xor_si512(_mm512_loadu_si512(x + i), bias);
            ah = _mm512_dpbusd_epi32(ah, xu, _mm512_loadu_si512(q.hi + i));
            al = _mm512_dpbusd_epi32(al, xu, _mm512_loadu_si512(q.lo + i));
        }
        if (i < dim) {
            // Masked-off codes read as 0 and bias to 128, but their query bytes are 0 too.
            const __mmask64 m = (~__mmask64{0}) >> (64 - (dim - i));
            const __m512i xu = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), bias);
            ah = _mm512_dpbusd_epi32(ah, xu, _mm512_maskz_loadu_epi8(m, q.hi + i));
            al = _mm512_dpbusd_epi32(al, xu, _mm512_maskz_loadu_epi8(m, q.lo + i));
        }
        // Unsigned arithmetic for the correction: the true sums fit int32, intermediate wrap-around
        // cancels exactly.
        *hi_dot = static_cast<int32_t>(static_cast<uint32_t>(_mm512_reduce_add_epi32(ah)) -
                                       128u * static_cast<uint32_t>(q.hi_sum));
        *lo_dot = static_cast<int32_t>(static_cast<uint32_t>(_mm512_reduce_add_epi32(al)) -
                                       128u * static_cast<uint32_t>(q.lo_sum));
    }
};
using I8 = I8Batch<VnniOps>;

}  // namespace

const Kernels* kernels_avx512_vnni() {
    // Built on first call (after dispatch::pick_table's check), from the base table of its family.
    static const Kernels* const table = []() -> const Kernels* {
        const Kernels* base = kernels_avx512();
        if (!base) return nullptr;
        static Kernels t = *base;
        t.name = "avx512vnni";
        t.dot_i8 = I8::dot_i8;
        t.dot4_i8 = I8::dot4_i8;
        return &t;
    }();
    return table;
}

}  // namespace fv
}  // namespace kes

#else

namespace kes {
namespace fv {
const Kernels* kernels_avx512_vnni() {
    return nullptr;
}
}  // namespace fv
}  // namespace kes

#endif
