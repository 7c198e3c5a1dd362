// op_util.hpp — shared pieces of the reference kernels (src/ops/*.cpp): kernels built from lambdas,
// dtype dispatch, broadcast iteration and conv/pool window geometry. Everything here that a kernel
// calls from run() works on fixed-size arrays on the stack: run() never allocates.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../op.hpp"
#include "../../ops/geometry.hpp"
#include "kes/error.hpp"

namespace kes {

// Broadcasting and strided kernels keep their index arrays on the stack; ranks above this are
// rejected at create() with KES_ERR_UNSUPPORTED.
constexpr int kMaxRank = 8;

// A kernel whose run() is a lambda; the lambda captures everything create() computed (by value).
template <class F>
class LambdaKernel final : public Kernel {
public:
    explicit LambdaKernel(F f) : f_(std::move(f)) {}
    using Kernel::run;
    void run(const RunContext&, const void* const* inputs, void* const* outputs) const override { f_(inputs, outputs); }

private:
    F f_;
};

template <class F>
std::unique_ptr<Kernel> make_kernel(F f) {
    return std::make_unique<LambdaKernel<F>>(std::move(f));
}

template <class T>
inline const T* in_as(const void* const* inputs, size_t i) {
    return static_cast<const T*>(inputs[i]);
}
template <class T>
inline T* out_as(void* const* outputs, size_t i) {
    return static_cast<T*>(outputs[i]);
}

// const_ints (op.hpp) that also accepts an empty constant (e.g. Reshape to a scalar, empty axes):
// op.cpp's version would pass a null destination to memcpy for 0 elements.
std::vector<int64_t> const_int_list(const TensorDesc& t, const char* what);

template <class T>
struct TypeTag {
    using type = T;
};
// Calls f(TypeTag<T>{}) with the C++ type of a plain numeric dtype (not f16, not bool) and returns
// true; false for other dtypes.
constexpr const char* kNumericTypes = "f32, f64, i8, u8, i16, u16, i32, u32, i64, u64";
template <class F>
bool dispatch_numeric(kes_dtype dtype, F&& f) {
    switch (dtype) {
        case KES_F32: f(TypeTag<float>{}); return true;
        case KES_F64: f(TypeTag<double>{}); return true;
        case KES_I8: f(TypeTag<int8_t>{}); return true;
        case KES_U8: f(TypeTag<uint8_t>{}); return true;
        case KES_I16: f(TypeTag<int16_t>{}); return true;
        case KES_U16: f(TypeTag<uint16_t>{}); return true;
        case KES_I32: f(TypeTag<int32_t>{}); return true;
        case KES_U32: f(TypeTag<uint32_t>{}); return true;
        case KES_I64: f(TypeTag<int64_t>{}); return true;
        case KES_U64: f(TypeTag<uint64_t>{}); return true;
        default: return false;
    }
}

// double → T: integers truncate toward zero and saturate, NaN → 0 (no undefined conversions).
template <class T>
inline T saturate_cast(double v) {
    if constexpr (std::is_floating_point<T>::value) {
        return static_cast<T>(v);
    } else {
        if (v != v) return T(0);
        if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
        if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
        return static_cast<T>(v);
    }
}

// Wrapping (two's complement) integer arithmetic without undefined overflow: computed in an unsigned
// type at least as wide as unsigned int (narrower types would promote to signed int).
template <class T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <class T>
inline T wrap_add(T a, T b) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
}
template <class T>
inline T wrap_sub(T a, T b) {
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
}
template <class T>
inline T wrap_mul(T a, T b) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
}

void require_rank_at_most(const TensorDesc& t, int64_t max_rank, const char* what);  // else UNSUPPORTED
// Throws KES_ERR_UNSUPPORTED naming `what`, the dtype and the accepted list (e.g. "f32, i32, i64").
[[noreturn]] void unsupported_dtype(const char* what, kes_dtype dtype, const char* accepted);

// numpy broadcast of several shapes (all inputs of a variadic op).
Shape broadcast_all(const std::vector<Shape>& shapes);

// Iteration of an output shape with up to three broadcast inputs: for every output element i (row-major)
// calls f(i, offset0, offset1, offset2), the offsets being element offsets into each input.
struct BroadcastPlan {
    int rank = 0;
    int inputs = 0;
    int64_t count = 0;
    int64_t shape[kMaxRank] = {};
    int64_t strides[3][kMaxRank] = {};
};
BroadcastPlan make_broadcast_plan(const Shape& out, const std::vector<Shape>& inputs);

template <class F>
void for_each_broadcast(const BroadcastPlan& p, F&& f) {
    if (p.count == 0) return;
    if (p.rank == 0) {
        f(int64_t{0}, int64_t{0}, int64_t{0}, int64_t{0});
        return;
    }
    int64_t idx[kMaxRank] = {};
    int64_t off[3] = {0, 0, 0};
    const int last = p.rank - 1;
    const int64_t inner = p.shape[last];
    const int64_t s0 = p.strides[0][last], s1 = p.strides[1][last], s2 = p.strides[2][last];
    for (int64_t i = 0; i < p.count; i += inner) {
        for (int64_t j = 0; j < inner; ++j) f(i + j, off[0] + j * s0, off[1] + j * s1, off[2] + j * s2);
        // odometer step over the outer dimensions
        for (int d = last - 1; d >= 0; --d) {
            for (int k = 0; k < 3; ++k) off[k] += p.strides[k][d];
            if (++idx[d] < p.shape[d]) break;
            for (int k = 0; k < 3; ++k) off[k] -= p.strides[k][d] * idx[d];
            idx[d] = 0;
        }
    }
}

// Copies a strided view: out (contiguous, `shape`) [i] = in[sum idx[d] * in_strides[d]], elements of
// `elem_size` bytes. Used by Transpose, Slice, Expand and friends.
void copy_strided(const void* in, void* out, size_t elem_size, int rank, const int64_t* shape,
                  const int64_t* in_strides, int64_t in_offset);

// Resize's output shape and per-axis tap tables, from the node's attributes and constant inputs
// (resize.cpp, which documents the modes; checked there): output index o of axis d reads the input
// indices tap_index[axis[d].first + o·taps + t] with weights tap_weight[...] for t < axis[d].taps
// (index -1: outside, the extrapolation value). An axis that does not change has one tap, o → o. The
// reference kernel and the fast NHWC one (kernels/common/resize_nhwc.cpp) sample the same tables.
struct ResizePlan {
    struct Axis {
        int64_t first = 0;  // offset into the tap table
        int taps = 1;       // taps per output index
    };
    Shape out;
    std::vector<int64_t> tap_index;
    std::vector<float> tap_weight;
    std::vector<Axis> axis;  // empty when the output is empty
    float extrapolation = 0.0f;
};
ResizePlan plan_resize(const NodeDesc& node);

}  // namespace kes
