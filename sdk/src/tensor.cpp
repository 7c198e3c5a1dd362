// tensor.cpp — the kes_tensor descriptor: dtype facts, shapes, contiguous strides, validation
// (kestrel/tensor.h). fp16 conversion lives in fp16.cpp.
//
// Shapes and strides come from outside (model files, apps), so every product is overflow-checked:
// a tensor whose element count or byte span does not fit int64/size_t is refused, never wrapped.
#include "kestrel/tensor.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "owned_block.hpp"

namespace kes {
namespace {

size_t dtype_size(int64_t dtype) noexcept {
    switch (dtype) {
        case KES_I8:
        case KES_U8:
        case KES_BOOL: return 1;
        case KES_F16:
        case KES_I16:
        case KES_U16: return 2;
        case KES_F32:
        case KES_I32:
        case KES_U32: return 4;
        case KES_I64:
        case KES_U64:
        case KES_F64: return 8;
        default: return 0;
    }
}

void require_dtype(const kes_dtype& dtype) {
    const int64_t v = enum_value(dtype);
    KES_REQUIRE(dtype_size(v) != 0, "dtype %lld is not a kes_dtype", static_cast<long long>(v));
}

void require_layout(const kes_layout& layout_arg, uint32_t ndim) {
    const int64_t layout = enum_value(layout_arg);
    KES_REQUIRE(layout == KES_LAYOUT_ND || layout == KES_LAYOUT_NCHW || layout == KES_LAYOUT_NHWC,
                "layout %lld is not a kes_layout", static_cast<long long>(layout));
    KES_REQUIRE(layout == KES_LAYOUT_ND || ndim == 4, "layout %s needs ndim 4 (got %u)",
                layout == KES_LAYOUT_NCHW ? "NCHW" : "NHWC", ndim);
}

std::string shape_str(uint32_t ndim, const int64_t* shape) {
    std::string s = "[";
    for (uint32_t i = 0; i < ndim; ++i) s += format(i ? ", %lld" : "%lld", static_cast<long long>(shape[i]));
    return s + "]";
}

// Product of the dims; every dim ≥ 0. Any zero dim makes the count 0 even if the others multiply
// past int64 (the tensor is empty), as numpy and PyTorch count it.
uint64_t element_count(uint32_t ndim, const int64_t* shape) {
    KES_REQUIRE(ndim <= KES_TENSOR_MAX_DIMS, "ndim %u > %d", ndim, KES_TENSOR_MAX_DIMS);
    KES_REQUIRE(ndim == 0 || shape != nullptr, "shape is NULL with ndim %u", ndim);
    bool empty = false;
    for (uint32_t i = 0; i < ndim; ++i) {
        KES_REQUIRE(shape[i] >= 0, "shape[%u] = %lld is negative", i, static_cast<long long>(shape[i]));
        if (shape[i] == 0) empty = true;
    }
    if (empty) return 0;
    int64_t count = 1;
    for (uint32_t i = 0; i < ndim; ++i)
        KES_REQUIRE(checked_mul<int64_t>(count, shape[i], &count), "shape %s: element count overflows int64",
                    shape_str(ndim, shape).c_str());
    return static_cast<uint64_t>(count);
}

// Row-major strides in elements. A zero or one dim contributes a factor 1 (numpy/PyTorch convention),
// so an empty tensor still gets well-defined strides.
void contiguous_strides(uint32_t ndim, const int64_t* shape, int64_t* strides) {
    int64_t s = 1;
    for (uint32_t i = ndim; i-- > 0;) {
        strides[i] = s;
        if (i > 0)
            KES_REQUIRE(checked_mul<int64_t>(s, shape[i] > 1 ? shape[i] : 1, &s), "shape %s: strides overflow int64",
                        shape_str(ndim, shape).c_str());
    }
}

size_t checked_bytes(uint64_t elements, kes_dtype dtype, uint32_t ndim, const int64_t* shape) {
    uint64_t bytes = 0;
    KES_REQUIRE(checked_mul<uint64_t>(elements, dtype_size(enum_value(dtype)), &bytes) && bytes <= SIZE_MAX,
                "shape %s of %s: %llu elements do not fit in size_t bytes", shape_str(ndim, shape).c_str(),
                kes_dtype_name(dtype), static_cast<unsigned long long>(elements));
    return static_cast<size_t>(bytes);
}

// Bytes from data to the end of the furthest element the strides reach: (max offset + 1) × dtype size,
// 0 for an empty tensor. Checks the struct's own fields (not data/size).
size_t span_bytes(const kes_tensor& t, uint64_t* out_count) {
    require_dtype(t.dtype);
    const uint64_t count = element_count(t.ndim, t.shape);
    require_layout(t.layout, t.ndim);
    uint64_t max_offset = 0;
    for (uint32_t i = 0; i < t.ndim; ++i) {
        KES_REQUIRE(t.strides[i] >= 0, "strides[%u] = %lld is negative", i, static_cast<long long>(t.strides[i]));
        if (count == 0) continue;
        uint64_t reach = 0;
        KES_REQUIRE(
            checked_mul<uint64_t>(static_cast<uint64_t>(t.shape[i] - 1), static_cast<uint64_t>(t.strides[i]), &reach) &&
                checked_add<uint64_t>(max_offset, reach, &max_offset),
            "shape %s with strides %s: offsets overflow", shape_str(t.ndim, t.shape).c_str(),
            shape_str(t.ndim, t.strides).c_str());
    }
    if (out_count) *out_count = count;
    if (count == 0) return 0;
    uint64_t elements = 0;
    KES_REQUIRE(checked_add<uint64_t>(max_offset, 1, &elements), "strides %s: offsets overflow",
                shape_str(t.ndim, t.strides).c_str());
    return checked_bytes(elements, t.dtype, t.ndim, t.shape);
}

// Fills *out with a contiguous descriptor (data/size left 0) and returns the bytes it needs.
size_t describe(kes_tensor* out, kes_dtype dtype, kes_layout layout, uint32_t ndim, const int64_t* shape) {
    require_dtype(dtype);
    const uint64_t count = element_count(ndim, shape);
    require_layout(layout, ndim);
    const size_t bytes = checked_bytes(count, dtype, ndim, shape);
    std::memset(out, 0, sizeof *out);
    out->dtype = dtype;
    out->layout = layout;
    out->ndim = ndim;
    for (uint32_t i = 0; i < ndim; ++i) out->shape[i] = shape[i];
    contiguous_strides(ndim, shape, out->strides);
    return bytes;
}

}  // namespace
}  // namespace kes

extern "C" {

size_t kes_dtype_size(kes_dtype dtype) {
    return kes::dtype_size(kes::enum_value(dtype));
}

const char* kes_dtype_name(kes_dtype dtype) {
    switch (kes::enum_value(dtype)) {
        case KES_F32: return "f32";
        case KES_F16: return "f16";
        case KES_I8: return "i8";
        case KES_I32: return "i32";
        case KES_U8: return "u8";
        case KES_I16: return "i16";
        case KES_U16: return "u16";
        case KES_U32: return "u32";
        case KES_I64: return "i64";
        case KES_U64: return "u64";
        case KES_F64: return "f64";
        case KES_BOOL: return "bool";
        default: return "unknown";
    }
}

const char* kes_layout_name(kes_layout layout) {
    switch (kes::enum_value(layout)) {
        case KES_LAYOUT_ND: return "ND";
        case KES_LAYOUT_NCHW: return "NCHW";
        case KES_LAYOUT_NHWC: return "NHWC";
        default: return "unknown";
    }
}

kes_status kes_shape_element_count(uint32_t ndim, const int64_t* shape, uint64_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = kes::element_count(ndim, shape);
        return KES_OK;
    });
}

kes_status kes_tensor_wrap(kes_tensor* out_tensor, kes_dtype dtype, kes_layout layout, uint32_t ndim,
                           const int64_t* shape, void* data, size_t size) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_tensor);
        std::memset(out_tensor, 0, sizeof *out_tensor);
        kes_tensor t;
        const size_t need = kes::describe(&t, dtype, layout, ndim, shape);
        KES_REQUIRE(data != nullptr || need == 0, "data is NULL for %zu bytes of %s %s", need, kes_dtype_name(dtype),
                    kes::shape_str(ndim, shape).c_str());
        KES_REQUIRE(size >= need, "size %zu < %zu bytes needed by %s %s", size, need, kes_dtype_name(dtype),
                    kes::shape_str(ndim, shape).c_str());
        t.data = data;
        t.size = size;
        *out_tensor = t;
        return KES_OK;
    });
}

kes_status kes_tensor_alloc(kes_tensor* out_tensor, kes_mem_pool* pool, kes_dtype dtype, kes_layout layout,
                            uint32_t ndim, const int64_t* shape) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_tensor);
        std::memset(out_tensor, 0, sizeof *out_tensor);
        kes_tensor t;
        const size_t need = kes::describe(&t, dtype, layout, ndim, shape);
        // An empty tensor still gets a (minimal) block, so an owned tensor always has data != NULL.
        t.data = kes::alloc_owned_block(pool, need, [&] {
            return kes::format("%s %s", kes_dtype_name(dtype), kes::shape_str(ndim, shape).c_str());
        });
        t.size = need;
        t.pool = pool;
        t.owns_data = 1;
        *out_tensor = t;
        return KES_OK;
    });
}

void kes_tensor_release(kes_tensor* tensor) {
    (void)kes::guard(__func__, [&] {
        if (tensor == nullptr) return KES_OK;
        if (tensor->owns_data) kes::free_owned_block(tensor->pool, tensor->data, "kes_tensor_release");
        std::memset(tensor, 0, sizeof *tensor);
        return KES_OK;
    });
}

kes_status kes_tensor_element_count(const kes_tensor* tensor, uint64_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(tensor);
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = kes::element_count(tensor->ndim, tensor->shape);
        return KES_OK;
    });
}

kes_status kes_tensor_byte_size(const kes_tensor* tensor, size_t* out_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(tensor);
        KES_REQUIRE_NOT_NULL(out_bytes);
        *out_bytes = kes::span_bytes(*tensor, nullptr);
        return KES_OK;
    });
}

int kes_tensor_is_contiguous(const kes_tensor* tensor) {
    if (tensor == nullptr || tensor->ndim > KES_TENSOR_MAX_DIMS) return 0;
    // As PyTorch decides it: an empty tensor is contiguous, and a dim of extent 1 never moves, so its
    // stride does not matter.
    int64_t expected = 1;
    for (uint32_t i = tensor->ndim; i-- > 0;) {
        const int64_t extent = tensor->shape[i];
        if (extent < 0) return 0;
        if (extent == 0) return 1;
    }
    for (uint32_t i = tensor->ndim; i-- > 0;) {
        const int64_t extent = tensor->shape[i];
        if (extent == 1) continue;
        if (tensor->strides[i] != expected) return 0;
        if (!kes::checked_mul<int64_t>(expected, extent, &expected)) return 0;
    }
    return 1;
}

kes_status kes_tensor_validate(const kes_tensor* tensor) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(tensor);
        const kes_tensor& t = *tensor;
        uint64_t count = 0;
        const size_t span = kes::span_bytes(t, &count);
        KES_REQUIRE(t.data != nullptr || span == 0, "data is NULL for %llu elements",
                    static_cast<unsigned long long>(count));
        KES_REQUIRE(span <= t.size, "strides %s reach %zu bytes but size is %zu",
                    kes::shape_str(t.ndim, t.strides).c_str(), span, t.size);
        KES_REQUIRE(t.owns_data <= 1, "owns_data %u must be 0 or 1", t.owns_data);
        KES_REQUIRE(t.pool == nullptr || t.owns_data == 1,
                    "pool is set but owns_data is 0: only an owned buffer comes from a pool");
        return KES_OK;
    });
}

}  // extern "C"
