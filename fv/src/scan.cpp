// scan.cpp — scalar reference kernels and the run-time choice among the kernel tables.
#include <algorithm>
#include <cmath>

#include "fv_kernels.hpp"
#include "kes/cpu_dispatch.hpp"
#include "kestrel/tensor.h"
#include "scan_batch.hpp"

namespace kes {
namespace fv {
namespace {

void dot_f32(const float* q, const float* x, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) s += q[i] * x[i];
        out[j] = s;
    }
}

void l2_f32(const float* q, const float* x, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) {
            const float d = q[i] - x[i];
            s += d * d;
        }
        out[j] = s;
    }
}

void dot_f16(const float* q, const uint16_t* x, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) s += q[i] * kes_fp16_to_float(x[i]);
        out[j] = s;
    }
}

void l2_f16(const float* q, const uint16_t* x, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) {
            const float d = q[i] - kes_fp16_to_float(x[i]);
            s += d * d;
        }
        out[j] = s;
    }
}

// The reference integer sums (fv_kernels.hpp I8Query): every table must produce these exactly.
struct IntOps {
    static void sums(const I8Query& q, const int8_t* x, size_t dim, int32_t* hi_dot, int32_t* lo_dot) {
        int32_t h = 0, l = 0;
        for (size_t i = 0; i < dim; ++i) {
            h += int32_t{q.hi[i]} * x[i];
            l += int32_t{q.lo[i]} * x[i];
        }
        *hi_dot = h;
        *lo_dot = l;
    }
};

void l2_i8(const float* q, const int8_t* x, const float* scale, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        const float sc = scale[j];
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) {
            const float d = q[i] - static_cast<float>(x[i]) * sc;
            s += d * d;
        }
        out[j] = s;
    }
}

// No register blocking here: four single-query calls (same results by construction).
void dot4_f32(const float* const* q, const float* x, size_t dim, size_t n, float* const* out) {
    for (int j = 0; j < 4; ++j) dot_f32(q[j], x, dim, n, out[j]);
}
void dot8_f32(const float* const* q, const float* x, size_t dim, size_t n, float* const* out) {
    for (int j = 0; j < 8; ++j) dot_f32(q[j], x, dim, n, out[j]);
}
void dot4_f16(const float* const* q, const uint16_t* x, size_t dim, size_t n, float* const* out) {
    for (int j = 0; j < 4; ++j) dot_f16(q[j], x, dim, n, out[j]);
}

void adc_pq32(const float* table, const uint8_t* codes, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, codes += 32) {
        float s = 0.f;
        for (size_t m = 0; m < 32; ++m) s += table[m * 256 + codes[m]];
        out[j] = s;
    }
}

const Kernels kScalar = {"scalar",
                         dot_f32,
                         l2_f32,
                         dot_f16,
                         l2_f16,
                         I8Batch<IntOps>::dot_i8,
                         l2_i8,
                         dot4_f32,
                         dot4_f16,
                         dot8_f32,
                         I8Batch<IntOps>::dot4_i8,
                         adc_pq32};

// Fastest first; each gate names every feature its file is compiled for.
constexpr uint32_t kAvx512Features = KES_CPU_AVX512F | KES_CPU_AVX512BW | KES_CPU_AVX2 | KES_CPU_F16C;
constexpr dispatch::Variant<Kernels> kVariants[] = {
    {kAvx512Features | KES_CPU_AVX512VNNI, kernels_avx512_vnni},
    {kAvx512Features, kernels_avx512},
    {KES_CPU_AVX2 | KES_CPU_F16C, kernels_avx2},
    {KES_CPU_NEON | KES_CPU_ASIMDDP, kernels_neon_dotprod},
    {KES_CPU_NEON, kernels_neon},
};

}  // namespace

void quantize_query_i8(const float* query, size_t dim, std::vector<int8_t>& storage, I8Query& q) {
    // 32639 = 127 · 256 + 127: the largest |value| whose high byte, rounded, stays within int8.
    constexpr int32_t kMax = 32639;
    float maxabs = 0.f;
    for (size_t i = 0; i < dim; ++i) maxabs = std::max(maxabs, std::fabs(query[i]));
    storage.assign(2 * dim, 0);
    q.hi = storage.data();
    q.lo = storage.data() + dim;
    q.hi_sum = q.lo_sum = 0;
    q.step = static_cast<double>(maxabs) / kMax;
    if (maxabs == 0.f) return;
    for (size_t i = 0; i < dim; ++i) {
        const double v = std::nearbyint(static_cast<double>(query[i]) / q.step);
        const int32_t qq = static_cast<int32_t>(std::clamp(v, -double{kMax}, double{kMax}));
        // hi = round(qq / 256) (halves up), lo = qq − 256 · hi ∈ [−128, 127]; the bias keeps the
        // division on non-negative numbers.
        const int32_t hi = (qq + 128 + 256 * 128) / 256 - 128;
        const int32_t lo = qq - 256 * hi;
        storage[i] = static_cast<int8_t>(hi);
        storage[dim + i] = static_cast<int8_t>(lo);
        q.hi_sum += hi;
        q.lo_sum += lo;
    }
}

const Kernels& kernels_scalar() {
    return kScalar;
}

const Kernels& kernels_active() {
    static const Kernels& chosen = dispatch::pick_table(kVariants, kScalar);
    return chosen;
}

std::vector<const Kernels*> kernels_available() {
    return dispatch::usable_tables(kVariants, kScalar);
}

}  // namespace fv
}  // namespace kes
