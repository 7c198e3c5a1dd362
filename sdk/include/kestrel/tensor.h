/* kestrel/tensor.h — the tensor descriptor shared by aipp, engine and fv, plus fp16 conversion.
 *
 * A kes_tensor is a plain struct: element type, up to KES_TENSOR_MAX_DIMS dimensions, strides in
 * elements, and a data pointer. Dimension 0 is the outermost; a contiguous tensor has
 * strides[ndim-1] = 1. The layout field records what the dimensions mean (NCHW vs NHWC); Kestrel never
 * guesses it from the shape.
 *
 * kes_dtype values equal AscendCL's aclDataType, so tensors map 1:1 onto aclmdl datasets.
 *
 * Ownership: as for kes_image — kes_tensor_alloc owns (release frees), kes_tensor_wrap borrows.
 * Thread-safety: the functions here touch only the structs passed in. kes_fp16_* are pure and may run
 * from any thread.
 */
#ifndef KESTREL_TENSOR_H
#define KESTREL_TENSOR_H

#include "kestrel/memory.h"

KES_BEGIN_DECLS

#define KES_TENSOR_MAX_DIMS 8

typedef enum kes_dtype {
    KES_F32 = 0,
    KES_F16 = 1,
    KES_I8 = 2,
    KES_I32 = 3,
    KES_U8 = 4,
    KES_I16 = 6,
    KES_U16 = 7,
    KES_U32 = 8,
    KES_I64 = 9,
    KES_U64 = 10,
    KES_F64 = 11,
    KES_BOOL = 12
} kes_dtype;

typedef enum kes_layout {
    KES_LAYOUT_ND = 0, /* no image meaning attached */
    KES_LAYOUT_NCHW = 1,
    KES_LAYOUT_NHWC = 2
} kes_layout;

typedef struct kes_tensor {
    kes_dtype dtype;
    kes_layout layout;
    uint32_t ndim;                        /* 0 (scalar) .. KES_TENSOR_MAX_DIMS */
    int64_t shape[KES_TENSOR_MAX_DIMS];   /* each ≥ 0 */
    int64_t strides[KES_TENSOR_MAX_DIMS]; /* in elements */
    void* data;
    size_t size;        /* bytes available at data */
    kes_mem_pool* pool; /* owning pool, or NULL */
    uint32_t owns_data;
    uint32_t reserved;
} kes_tensor;

/* Bytes per element (1 for KES_BOOL); 0 for values outside the enum. */
KES_API size_t kes_dtype_size(kes_dtype dtype);
/* "f32", "f16", "i8", ...; "unknown" otherwise. */
KES_API const char* kes_dtype_name(kes_dtype dtype);
KES_API const char* kes_layout_name(kes_layout layout);

/* Product of the dims (1 for ndim 0; 0 if any dim is 0, however large the others). KES_ERR_INVALID_ARGUMENT
 * for ndim > 8, a negative dim, or overflow of int64. */
KES_API kes_status kes_shape_element_count(uint32_t ndim, const int64_t* shape, uint64_t* out_count);

/* Describes caller-owned memory as a contiguous tensor (strides computed; a dim of 0 or 1 counts as 1,
 * as in numpy/PyTorch). Checks that `size` holds every element; data may be NULL only for an empty
 * tensor. NCHW/NHWC need ndim == 4. On failure *out_tensor is zeroed. */
KES_API kes_status kes_tensor_wrap(kes_tensor* out_tensor, kes_dtype dtype, kes_layout layout, uint32_t ndim,
                                   const int64_t* shape, void* data, size_t size);

/* Allocates a contiguous tensor from `pool` (NULL: kes_mem_alloc). Contents undefined; `size` is
 * count × dtype size (an empty tensor still gets a non-NULL block). On failure *out_tensor is zeroed. */
KES_API kes_status kes_tensor_alloc(kes_tensor* out_tensor, kes_mem_pool* pool, kes_dtype dtype, kes_layout layout,
                                    uint32_t ndim, const int64_t* shape);

/* Frees an owned buffer, then zeroes the struct. NULL is a no-op. */
KES_API void kes_tensor_release(kes_tensor* tensor);

/* Elements: the product of the shape. Bytes: from data to the end of the furthest element the strides
 * reach, (max offset + 1) × dtype size — count × dtype size for contiguous tensors, less for broadcast
 * (stride 0) views, 0 when empty. */
KES_API kes_status kes_tensor_element_count(const kes_tensor* tensor, uint64_t* out_count);
KES_API kes_status kes_tensor_byte_size(const kes_tensor* tensor, size_t* out_bytes);

/* 1 if strides are the row-major contiguous ones, else 0. As in PyTorch, the stride of a dim of extent
 * 1 is ignored and an empty tensor is contiguous. */
KES_API int kes_tensor_is_contiguous(const kes_tensor* tensor);

/* Checks that a tensor is self-consistent: known dtype and layout, ndim ≤ 8 (4 for NCHW/NHWC), dims and
 * strides ≥ 0, every element inside `size` without overflow, data non-NULL unless empty. */
KES_API kes_status kes_tensor_validate(const kes_tensor* tensor);

/* IEEE 754 binary16 ↔ binary32, round-to-nearest-even, with subnormals and infinities preserved and
 * NaN kept as a quiet NaN of the same sign (top payload bits kept); finite floats ≥ 65520 in magnitude
 * become ±inf. The bulk calls are vectorised (F16C on x86, NEON on aarch64) with a scalar fallback
 * chosen once at run time (KES_CPU_DISABLE=f16c forces it); every path gives the same bits. count 0 is
 * a no-op; src and dst must not overlap. The single-value calls use the scalar path. */
KES_API void kes_fp16_from_f32(const float* src, uint16_t* dst, size_t count);
KES_API void kes_fp16_to_f32(const uint16_t* src, float* dst, size_t count);
KES_API uint16_t kes_fp16_from_float(float value);
KES_API float kes_fp16_to_float(uint16_t value);

/* The table the bulk calls use on this CPU: "f16c", "neon" or "scalar" (chosen on first use; see
 * kestrel/cpu.h). */
KES_API const char* kes_fp16_kernels_name(void);

KES_END_DECLS

#endif /* KESTREL_TENSOR_H */
