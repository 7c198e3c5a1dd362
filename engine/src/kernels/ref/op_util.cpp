// op_util.cpp — see op_util.hpp.
#include "op_util.hpp"

#include <algorithm>

namespace kes {

std::vector<int64_t> const_int_list(const TensorDesc& t, const char* what) {
    if (t.is_const() && t.elements() == 0 && (t.dtype == KES_I64 || t.dtype == KES_I32)) return {};
    return const_ints(t, what);
}

void require_rank_at_most(const TensorDesc& t, int64_t max_rank, const char* what) {
    if (t.rank() > max_rank)
        fail(KES_ERR_UNSUPPORTED, "%s has rank %lld; at most %lld is supported", what, static_cast<long long>(t.rank()),
             static_cast<long long>(max_rank));
}

void unsupported_dtype(const char* what, kes_dtype dtype, const char* accepted) {
    fail(KES_ERR_UNSUPPORTED, "%s has dtype %s; supported: %s", what, kes_dtype_name(dtype), accepted);
}

Shape broadcast_all(const std::vector<Shape>& shapes) {
    Shape out;
    for (const Shape& s : shapes) out = broadcast_shapes(out, s);
    return out;
}

BroadcastPlan make_broadcast_plan(const Shape& out, const std::vector<Shape>& inputs) {
    if (out.size() > static_cast<size_t>(kMaxRank))
        fail(KES_ERR_UNSUPPORTED, "rank %zu exceeds the supported %d", out.size(), kMaxRank);
    BroadcastPlan p;
    p.rank = static_cast<int>(out.size());
    p.inputs = static_cast<int>(inputs.size());
    p.count = shape_elements(out);
    for (size_t d = 0; d < out.size(); ++d) p.shape[d] = out[d];
    for (size_t k = 0; k < inputs.size() && k < 3; ++k) {
        const Shape s = broadcast_strides(inputs[k], out);
        for (size_t d = 0; d < out.size(); ++d) p.strides[k][d] = s[d];
    }
    return p;
}

namespace {
template <class T>
void copy_strided_typed(const T* in, T* out, int rank, const int64_t* shape, const int64_t* strides, int64_t base) {
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) count *= shape[d];
    if (count == 0) return;
    if (rank == 0) {
        out[0] = in[base];
        return;
    }
    int64_t idx[kMaxRank] = {};
    int64_t off = base;
    const int last = rank - 1;
    const int64_t inner = shape[last], inner_stride = strides[last];
    for (int64_t i = 0; i < count; i += inner) {
        for (int64_t j = 0; j < inner; ++j) out[i + j] = in[off + j * inner_stride];
        for (int d = last - 1; d >= 0; --d) {
            off += strides[d];
            if (++idx[d] < shape[d]) break;
            off -= strides[d] * idx[d];
            idx[d] = 0;
        }
    }
}
}  // namespace

void copy_strided(const void* in, void* out, size_t elem_size, int rank, const int64_t* shape,
                  const int64_t* in_strides, int64_t in_offset) {
    switch (elem_size) {
        case 1:
            copy_strided_typed(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), rank, shape, in_strides,
                               in_offset);
            break;
        case 2:
            copy_strided_typed(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out), rank, shape, in_strides,
                               in_offset);
            break;
        case 4:
            copy_strided_typed(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), rank, shape, in_strides,
                               in_offset);
            break;
        default:
            copy_strided_typed(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), rank, shape, in_strides,
                               in_offset);
            break;
    }
}

}  // namespace kes
