// Tensor descriptor: dtype facts, shapes with overflow checks, contiguous strides, validation and
// ownership.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/tensor.h"

namespace {
std::string last_error() {
    return kes_last_error();
}
constexpr int64_t kMax = INT64_MAX;
}  // namespace

TEST(TensorDtype, SizesAndNamesMatchAclDataType) {
    struct {
        size_t size;
        const char* name;
        kes_dtype dtype;
        int acl_value;
    } cases[] = {{4, "f32", KES_F32, 0}, {2, "f16", KES_F16, 1},  {1, "i8", KES_I8, 2},    {4, "i32", KES_I32, 3},
                 {1, "u8", KES_U8, 4},   {2, "i16", KES_I16, 6},  {2, "u16", KES_U16, 7},  {4, "u32", KES_U32, 8},
                 {8, "i64", KES_I64, 9}, {8, "u64", KES_U64, 10}, {8, "f64", KES_F64, 11}, {1, "bool", KES_BOOL, 12}};
    for (const auto& c : cases) {
        EXPECT_EQ(static_cast<int>(c.dtype), c.acl_value);
        EXPECT_EQ(kes_dtype_size(c.dtype), c.size) << c.name;
        EXPECT_STREQ(kes_dtype_name(c.dtype), c.name);
    }
    EXPECT_EQ(kes_dtype_size(static_cast<kes_dtype>(5)), 0u);  // hole in aclDataType
    EXPECT_STREQ(kes_dtype_name(static_cast<kes_dtype>(5)), "unknown");
    EXPECT_EQ(kes_dtype_size(static_cast<kes_dtype>(-1)), 0u);
    EXPECT_STREQ(kes_layout_name(KES_LAYOUT_ND), "ND");
    EXPECT_STREQ(kes_layout_name(KES_LAYOUT_NCHW), "NCHW");
    EXPECT_STREQ(kes_layout_name(KES_LAYOUT_NHWC), "NHWC");
    EXPECT_STREQ(kes_layout_name(static_cast<kes_layout>(9)), "unknown");
}

TEST(TensorShape, CountsElements) {
    uint64_t n = 0;
    const int64_t shape[] = {1, 3, 224, 224};
    ASSERT_EQ(kes_shape_element_count(4, shape, &n), KES_OK);
    EXPECT_EQ(n, 3u * 224 * 224);
    ASSERT_EQ(kes_shape_element_count(0, nullptr, &n), KES_OK);  // a scalar
    EXPECT_EQ(n, 1u);
    const int64_t empty[] = {4, 0, 5};
    ASSERT_EQ(kes_shape_element_count(3, empty, &n), KES_OK);
    EXPECT_EQ(n, 0u);
    const int64_t big[] = {kMax, 1};
    ASSERT_EQ(kes_shape_element_count(2, big, &n), KES_OK);
    EXPECT_EQ(n, static_cast<uint64_t>(kMax));
}

TEST(TensorShape, OverflowIsRejected) {
    uint64_t n = 0;
    const int64_t huge[] = {int64_t{1} << 32, int64_t{1} << 32};
    EXPECT_EQ(kes_shape_element_count(2, huge, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("overflows int64"), std::string::npos) << last_error();
    const int64_t just_over[] = {kMax / 2 + 1, 2};
    EXPECT_EQ(kes_shape_element_count(2, just_over, &n), KES_ERR_INVALID_ARGUMENT);

    // Fits int64 as a count but not as bytes.
    kes_tensor t;
    static float dummy;
    const int64_t bytes_overflow[] = {int64_t{1} << 61};
    EXPECT_EQ(kes_tensor_wrap(&t, KES_F64, KES_LAYOUT_ND, 1, bytes_overflow, &dummy, SIZE_MAX),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_tensor_alloc(&t, nullptr, KES_F32, KES_LAYOUT_ND, 2, huge), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(t.data, nullptr);
}

TEST(TensorShape, RejectsNegativeDimsAndTooManyDims) {
    uint64_t n = 0;
    const int64_t negative[] = {2, -1};
    EXPECT_EQ(kes_shape_element_count(2, negative, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("shape[1] = -1"), std::string::npos) << last_error();
    const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    EXPECT_EQ(kes_shape_element_count(9, nine, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_shape_element_count(8, nine, &n), KES_OK);
    EXPECT_EQ(kes_shape_element_count(2, nullptr, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_shape_element_count(2, negative, nullptr), KES_ERR_INVALID_ARGUMENT);
}

TEST(TensorWrap, ComputesContiguousStrides) {
    std::vector<float> buf(size_t{2} * 3 * 4 * 5);
    const int64_t shape[] = {2, 3, 4, 5};
    kes_tensor t;
    ASSERT_EQ(kes_tensor_wrap(&t, KES_F32, KES_LAYOUT_NCHW, 4, shape, buf.data(), buf.size() * sizeof(float)), KES_OK)
        << last_error();
    EXPECT_EQ(t.ndim, 4u);
    EXPECT_EQ(t.strides[0], 60);
    EXPECT_EQ(t.strides[1], 20);
    EXPECT_EQ(t.strides[2], 5);
    EXPECT_EQ(t.strides[3], 1);
    EXPECT_EQ(t.layout, KES_LAYOUT_NCHW);
    EXPECT_EQ(t.data, buf.data());
    EXPECT_EQ(t.owns_data, 0u);
    EXPECT_EQ(kes_tensor_is_contiguous(&t), 1);
    EXPECT_EQ(kes_tensor_validate(&t), KES_OK);
    uint64_t n = 0;
    size_t bytes = 0;
    ASSERT_EQ(kes_tensor_element_count(&t, &n), KES_OK);
    ASSERT_EQ(kes_tensor_byte_size(&t, &bytes), KES_OK);
    EXPECT_EQ(n, 120u);
    EXPECT_EQ(bytes, 480u);
    kes_tensor_release(&t);  // borrowed: clears the struct only
    EXPECT_EQ(t.data, nullptr);
    EXPECT_EQ(t.ndim, 0u);
}

TEST(TensorWrap, EmptyDimsGetStridesAsIfTheyWereOne) {
    const int64_t shape[] = {2, 0, 3};
    kes_tensor t;
    ASSERT_EQ(kes_tensor_wrap(&t, KES_U8, KES_LAYOUT_ND, 3, shape, nullptr, 0), KES_OK) << last_error();
    EXPECT_EQ(t.strides[0], 3);
    EXPECT_EQ(t.strides[1], 3);
    EXPECT_EQ(t.strides[2], 1);
    size_t bytes = 1;
    ASSERT_EQ(kes_tensor_byte_size(&t, &bytes), KES_OK);
    EXPECT_EQ(bytes, 0u);
    EXPECT_EQ(kes_tensor_is_contiguous(&t), 1);
    EXPECT_EQ(kes_tensor_validate(&t), KES_OK);
    // A scalar: one element, no dims.
    float value = 0;
    ASSERT_EQ(kes_tensor_wrap(&t, KES_F32, KES_LAYOUT_ND, 0, nullptr, &value, sizeof value), KES_OK);
    ASSERT_EQ(kes_tensor_byte_size(&t, &bytes), KES_OK);
    EXPECT_EQ(bytes, sizeof(float));
}

TEST(TensorWrap, RejectsTooSmallBufferBadLayoutAndUnknownDtype) {
    std::vector<uint8_t> buf(100);
    const int64_t shape[] = {1, 3, 8, 8};
    kes_tensor t;
    EXPECT_EQ(kes_tensor_wrap(&t, KES_F32, KES_LAYOUT_NCHW, 4, shape, buf.data(), buf.size()),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("size 100 < 768"), std::string::npos) << last_error();
    EXPECT_EQ(kes_tensor_wrap(&t, KES_U8, KES_LAYOUT_NHWC, 3, shape, buf.data(), buf.size()), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("NHWC needs ndim 4 (got 3)"), std::string::npos) << last_error();
    EXPECT_EQ(kes_tensor_wrap(&t, static_cast<kes_dtype>(5), KES_LAYOUT_ND, 1, shape, buf.data(), buf.size()),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_tensor_wrap(&t, KES_U8, static_cast<kes_layout>(3), 1, shape, buf.data(), buf.size()),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_tensor_wrap(&t, KES_U8, KES_LAYOUT_ND, 1, shape, nullptr, 100), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_tensor_wrap(nullptr, KES_U8, KES_LAYOUT_ND, 1, shape, buf.data(), buf.size()),
              KES_ERR_INVALID_ARGUMENT);
}

TEST(TensorStrides, ZeroSizedDimBeforeHugeOnesOverflowsStrides) {
    // The count is 0, but the contiguous strides 2^62·2^62 do not fit int64.
    const int64_t shape[] = {0, int64_t{1} << 62, int64_t{1} << 62};
    kes_tensor t;
    EXPECT_EQ(kes_tensor_wrap(&t, KES_U8, KES_LAYOUT_ND, 3, shape, nullptr, 0), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("strides overflow"), std::string::npos) << last_error();
}

TEST(TensorStrides, TransposedAndBroadcastViewsValidateByTheirReach) {
    std::vector<float> buf(6);
    const int64_t shape[] = {2, 3};
    kes_tensor t;
    ASSERT_EQ(kes_tensor_wrap(&t, KES_F32, KES_LAYOUT_ND, 2, shape, buf.data(), 24), KES_OK);

    kes_tensor transposed = t;  // a 3×2 view of the same memory
    transposed.shape[0] = 3;
    transposed.shape[1] = 2;
    transposed.strides[0] = 1;
    transposed.strides[1] = 3;
    EXPECT_EQ(kes_tensor_is_contiguous(&transposed), 0);
    EXPECT_EQ(kes_tensor_validate(&transposed), KES_OK) << last_error();
    size_t bytes = 0;
    ASSERT_EQ(kes_tensor_byte_size(&transposed, &bytes), KES_OK);
    EXPECT_EQ(bytes, 24u);

    kes_tensor broadcast = t;  // each row repeats the first
    broadcast.strides[0] = 0;
    EXPECT_EQ(kes_tensor_validate(&broadcast), KES_OK);
    ASSERT_EQ(kes_tensor_byte_size(&broadcast, &bytes), KES_OK);
    EXPECT_EQ(bytes, 12u);
    uint64_t n = 0;
    ASSERT_EQ(kes_tensor_element_count(&broadcast, &n), KES_OK);
    EXPECT_EQ(n, 6u);

    kes_tensor too_far = t;
    too_far.strides[0] = 4;  // last element at offset 4 + 2 = 6: one past the buffer
    EXPECT_EQ(kes_tensor_validate(&too_far), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("reach 28 bytes but size is 24"), std::string::npos) << last_error();

    kes_tensor negative = t;
    negative.strides[1] = -1;
    EXPECT_EQ(kes_tensor_validate(&negative), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("strides[1] = -1"), std::string::npos) << last_error();

    kes_tensor huge = t;
    huge.strides[0] = kMax;
    EXPECT_EQ(kes_tensor_validate(&huge), KES_ERR_INVALID_ARGUMENT);
}

TEST(TensorStrides, UnitDimsDoNotAffectContiguity) {
    std::vector<float> buf(12);
    const int64_t shape[] = {1, 3, 1, 4};
    kes_tensor t;
    ASSERT_EQ(kes_tensor_wrap(&t, KES_F32, KES_LAYOUT_NCHW, 4, shape, buf.data(), 48), KES_OK);
    t.strides[0] = 999;
    t.strides[2] = 7;
    EXPECT_EQ(kes_tensor_is_contiguous(&t), 1);
    t.strides[3] = 2;
    EXPECT_EQ(kes_tensor_is_contiguous(&t), 0);
    EXPECT_EQ(kes_tensor_is_contiguous(nullptr), 0);
}

TEST(TensorValidate, RejectsBrokenStructs) {
    std::vector<float> buf(4);
    const int64_t shape[] = {4};
    kes_tensor good;
    ASSERT_EQ(kes_tensor_wrap(&good, KES_F32, KES_LAYOUT_ND, 1, shape, buf.data(), 16), KES_OK);
    kes_tensor t = good;
    t.ndim = 9;
    EXPECT_EQ(kes_tensor_validate(&t), KES_ERR_INVALID_ARGUMENT);
    t = good;
    t.dtype = static_cast<kes_dtype>(77);
    EXPECT_EQ(kes_tensor_validate(&t), KES_ERR_INVALID_ARGUMENT);
    t = good;
    t.layout = KES_LAYOUT_NCHW;
    EXPECT_EQ(kes_tensor_validate(&t), KES_ERR_INVALID_ARGUMENT);
    t = good;
    t.data = nullptr;
    EXPECT_EQ(kes_tensor_validate(&t), KES_ERR_INVALID_ARGUMENT);
    t = good;
    t.size = 15;
    EXPECT_EQ(kes_tensor_validate(&t), KES_ERR_INVALID_ARGUMENT);
    t = good;
    t.shape[0] = -4;
    EXPECT_EQ(kes_tensor_validate(&t), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_tensor_validate(nullptr), KES_ERR_INVALID_ARGUMENT);
}

TEST(TensorAlloc, OwnsAlignedMemoryFromPoolOrHost) {
    const int64_t shape[] = {1, 224, 224, 3};
    kes_tensor t;
    ASSERT_EQ(kes_tensor_alloc(&t, nullptr, KES_U8, KES_LAYOUT_NHWC, 4, shape), KES_OK) << last_error();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % KES_MEM_ALIGNMENT, 0u);
    EXPECT_EQ(t.size, size_t{224} * 224 * 3);
    EXPECT_EQ(t.owns_data, 1u);
    EXPECT_EQ(t.strides[1], 224 * 3);
    static_cast<uint8_t*>(t.data)[t.size - 1] = 1;
    EXPECT_EQ(kes_tensor_validate(&t), KES_OK);
    kes_tensor_release(&t);
    EXPECT_EQ(t.data, nullptr);
    kes_tensor_release(&t);
    kes_tensor_release(nullptr);

    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.initial_bytes = 1u << 20;
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&cfg, &pool), KES_OK) << last_error();
    const int64_t vec[] = {1000};
    ASSERT_EQ(kes_tensor_alloc(&t, pool, KES_F16, KES_LAYOUT_ND, 1, vec), KES_OK) << last_error();
    EXPECT_EQ(t.pool, pool);
    EXPECT_EQ(kes_mem_pool_contains(pool, t.data), 1);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % KES_MEM_ALIGNMENT, 0u);
    const int64_t too_big[] = {1 << 20};
    kes_tensor t2;
    EXPECT_EQ(kes_tensor_alloc(&t2, pool, KES_F32, KES_LAYOUT_ND, 1, too_big), KES_ERR_OUT_OF_MEMORY);
    EXPECT_NE(last_error().find("kes_tensor_alloc"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("cannot allocate 4194304 bytes for f32 [1048576] from the pool"), std::string::npos)
        << last_error();
    EXPECT_EQ(t2.data, nullptr);
    kes_tensor_release(&t);
    kes_mem_pool_stats stats;
    ASSERT_EQ(kes_mem_pool_get_stats(pool, &stats), KES_OK);
    EXPECT_EQ(stats.live_blocks, 0u);
    kes_mem_pool_destroy(pool);
}

TEST(TensorAlloc, EmptyTensorStillGetsABuffer) {
    const int64_t shape[] = {0, 3};
    kes_tensor t;
    ASSERT_EQ(kes_tensor_alloc(&t, nullptr, KES_F32, KES_LAYOUT_ND, 2, shape), KES_OK) << last_error();
    EXPECT_NE(t.data, nullptr);
    EXPECT_EQ(t.size, 0u);
    EXPECT_EQ(kes_tensor_validate(&t), KES_OK);
    kes_tensor_release(&t);
}
