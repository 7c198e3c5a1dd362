// fv_kernels.hpp — the scan kernels behind kes_fv_search: one table of function pointers per
// instruction set, chosen once at start-up from kes_cpu_features().
//
// Each kernel scores `n` stored vectors laid out back to back (stride = one vector) against one query
// and writes n floats. The scalar table is the reference: always built, always tested, and the SIMD
// tables must agree with it up to float summation order (tests/test_fv_kernels.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kes {
namespace fv {

// An int8 repository's inner products use an integer query (fv.h "int8 storage: integer scores"):
// the query is rounded once to 16-bit fixed point, q[i] ≈ step · (256 · hi[i] + lo[i]), so that
//     Σ q[i] · x[i] ≈ step · (256 · Σ hi[i] · x[i] + Σ lo[i] · x[i])
// where both sums are exact 32-bit integers (|sum| ≤ 65536 · 128 · 127 < 2^31) on every instruction
// set — VNNI, dot-product instructions or plain widening multiplies — so every kernel table gives
// bit-identical scores (i8_score below).
struct I8Query {
    const int8_t* hi = nullptr;  // dim values in [−127, 127]
    const int8_t* lo = nullptr;  // dim values in [−128, 127]
    int32_t hi_sum = 0;          // Σ hi and Σ lo: kernels that bias x to unsigned (VNNI) subtract 128 · these
    int32_t lo_sum = 0;
    double step = 0.0;  // max|q| / 32639 (0 for an all-zero query)
};

// Fills `q` (pointing into `storage`, 2 × dim bytes) from the float query.
void quantize_query_i8(const float* query, size_t dim, std::vector<int8_t>& storage, I8Query& q);

// The score of one vector from the two exact sums and its scale (double arithmetic, rounded once).
// static: the ISA-flagged files use it too, and each must keep its own copy (an inline function is
// shared, and at -O0 the linker may keep an AVX one for baseline callers; cmake/check_isa_objects.cmake).
static inline float i8_score(int32_t hi_dot, int32_t lo_dot, double step, float scale) {
    return static_cast<float>((256.0 * hi_dot + lo_dot) * step * static_cast<double>(scale));
}

struct Kernels {
    const char* name;
    // Dense f32: out[j] = Σ q[i]·x_j[i]  /  Σ (q[i] − x_j[i])².
    void (*dot_f32)(const float* q, const float* x, size_t dim, size_t n, float* out);
    void (*l2_f32)(const float* q, const float* x, size_t dim, size_t n, float* out);
    // Dense f16 (IEEE binary16 bits), same formulas on the widened values.
    void (*dot_f16)(const float* q, const uint16_t* x, size_t dim, size_t n, float* out);
    void (*l2_f16)(const float* q, const uint16_t* x, size_t dim, size_t n, float* out);
    // Dense int8 with one scale per vector: x_j[i] = code_j[i] · scale[j]. Inner products take the
    // integer query (I8Query); L2 stays in float.
    void (*dot_i8)(const I8Query& q, const int8_t* x, const float* scale, size_t dim, size_t n, float* out);
    void (*l2_i8)(const float* q, const int8_t* x, const float* scale, size_t dim, size_t n, float* out);
    // Four queries at once (M:N): out[j][v] = dot(q[j], x_v), bit-identical to the single-query kernel
    // of the same table, so a batch returns exactly what one query at a time returns. Sharing each
    // loaded vector among four queries is what makes M:N faster than four 1:N scans.
    void (*dot4_f32)(const float* const* q, const float* x, size_t dim, size_t n, float* const* out);
    void (*dot4_f16)(const float* const* q, const uint16_t* x, size_t dim, size_t n, float* const* out);
    // Eight f32 queries at once (the M:N block; a register-blocked micro-kernel where one exists),
    // bit-identical to dot_f32 like the four-query kernels.
    void (*dot8_f32)(const float* const* q, const float* x, size_t dim, size_t n, float* const* out);
    void (*dot4_i8)(const I8Query* const* q, const int8_t* x, const float* scale, size_t dim, size_t n,
                    float* const* out);
    // PQ36 ADC: codes are the 32 code bytes of each feature (header stripped, stride 32);
    // out[j] = Σ_m table[m·256 + code_j[m]].
    void (*adc_pq32)(const float* table, const uint8_t* codes, size_t n, float* out);
};

const Kernels& kernels_scalar();
// nullptr when this build or this CPU lacks the instruction set.
const Kernels* kernels_avx2();
const Kernels* kernels_avx512();       // AVX-512 F/BW/DQ/VL
const Kernels* kernels_avx512_vnni();  // the same plus the AVX-512 VNNI int8 kernels
const Kernels* kernels_neon();
const Kernels* kernels_neon_dotprod();  // NEON plus SDOT (armv8.2-a dotprod) int8 kernels

// The fastest table this CPU runs (decided once).
const Kernels& kernels_active();
// Every table usable on this CPU, scalar first: for tests and benchmarks.
std::vector<const Kernels*> kernels_available();

}  // namespace fv
}  // namespace kes
