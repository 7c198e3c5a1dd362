// tensor_compare.hpp — how Kestrel compares a tensor with its reference (the msaccucmp view): largest
// absolute and relative error, cosine similarity, and whether any element is outside atol + rtol·|b|.
// kes-compare prints it per dumped tensor; kes-convert --quantize prints it per quantized layer, summed
// over the calibration set (add() accumulates, so several runs make one comparison).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace kes {

struct TensorComparison {
    double max_abs = 0, max_rel = 0;
    double dot = 0, norm_a = 0, norm_b = 0;
    size_t elements = 0;
    bool over_tolerance = false;  // some element beyond atol + rtol·|b| (NaN included)

    // a: the tensor under test, b: its reference.
    void add(double a, double b, double atol, double rtol) {
        const double d = std::fabs(a - b);
        if (!(d <= atol + rtol * std::fabs(b))) over_tolerance = true;
        max_abs = std::max(max_abs, d);
        max_rel = std::max(max_rel, d / std::max(std::fabs(b), 1e-12));
        dot += a * b, norm_a += a * a, norm_b += b * b;
        ++elements;
    }
    // 1 for two all-zero tensors; NaN when either holds a NaN.
    double cosine() const { return norm_a == 0 && norm_b == 0 ? 1.0 : dot / std::sqrt(norm_a * norm_b); }
    bool diverges(double min_cosine) const { return over_tolerance || !(cosine() >= min_cosine); }
};

}  // namespace kes
