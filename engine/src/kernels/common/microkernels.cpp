// microkernels.cpp — the scalar microkernel table and the run-time choice among the tables.
#include "microkernels.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kes/cpu_dispatch.hpp"
#include "microkernel_impl.hpp"

namespace kes {
namespace kernels {
namespace {

// One float per "vector": the template's tiles become plain register blocks the compiler may still
// vectorise for the baseline ISA (SSE2 on x86-64).
struct Scalar {
    using reg = float;
    static constexpr size_t width = 1;
    static reg load_partial(const float* p, size_t n) { return impl::load_partial_by_copy<Scalar>(p, n); }
    static void store_partial(float* p, size_t n, reg x) { impl::store_partial_by_copy<Scalar>(p, n, x); }
    static reg load(const float* p) { return *p; }
    static void store(float* p, reg x) { *p = x; }
    static reg set1(float x) { return x; }
    static reg fma(reg a, reg b, reg c) { return a * b + c; }
    static reg add(reg a, reg b) { return a + b; }
    static reg mul(reg a, reg b) { return a * b; }
    // NaN-preserving like maxps/minps with the clamp bound second: a NaN input stays NaN.
    static reg min(reg a, reg b) { return b < a ? b : a; }
    static reg max(reg a, reg b) { return b > a ? b : a; }
    static reg sub(reg a, reg b) { return a - b; }
    static reg div(reg a, reg b) { return a / b; }
    static reg round(reg x) { return std::nearbyint(x); }
    static reg pow2i(reg n) {
        const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
    static float hsum(reg x) { return x; }
    static float hmax(reg x) { return x; }
};

const Microkernels kScalar = impl::make_table<Scalar, 4, 8, 8>("scalar");

}  // namespace

const Microkernels& microkernels_scalar() {
    return kScalar;
}

// Fastest first. AVX-512's file is built with AVX2 and FMA too: its gate names all three.
constexpr dispatch::Variant<Microkernels> kVariants[] = {
    {KES_CPU_AVX512F | KES_CPU_AVX2, microkernels_avx512},
    {KES_CPU_AVX2, microkernels_avx2},
    {KES_CPU_NEON, microkernels_neon},
};

const Microkernels& microkernels_active() {
    static const Microkernels& chosen = dispatch::pick_table(kVariants, kScalar);
    return chosen;
}

std::vector<const Microkernels*> microkernels_available() {
    return dispatch::usable_tables(kVariants, kScalar);
}

}  // namespace kernels
}  // namespace kes
