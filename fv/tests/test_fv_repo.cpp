// Repository model: creation, aclfv offsets, delete/modify/delete_range, storage schemes.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fv_test_util.hpp"
#include "struct_size_check.hpp"

using kes_test::expect_struct_growth;
using kes_test::SizedStruct;

using namespace fvt;

namespace {

std::string err() {
    return kes_last_error();
}

TEST(FvRepo, ConfigInitGivesDocumentedDefaults) {
    kes_fv_config c;
    std::memset(&c, 0xAB, sizeof c);
    kes_fv_config_init(&c);
    EXPECT_EQ(c.struct_size, sizeof(kes_fv_config));
    EXPECT_EQ(c.kind, KES_FV_PQ36);
    EXPECT_EQ(c.dim, 0u);
    EXPECT_EQ(c.storage, KES_F32);
    EXPECT_EQ(c.metric, KES_FV_METRIC_IP);
    EXPECT_EQ(c.max_topk, 4800u);
    EXPECT_EQ(c.capacity_hint, 0u);
    kes_fv_config_init(nullptr);
    kes_fv_repo_destroy(nullptr);
}

TEST(FvRepo, CreateRejectsBadConfigNamingTheField) {
    kes_fv_repo* r = reinterpret_cast<kes_fv_repo*>(0x1);
    kes_fv_config c;
    kes_fv_config_init(&c);
    c.kind = KES_FV_DENSE;
    c.dim = 0;
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(r, nullptr);
    EXPECT_NE(err().find("dim"), std::string::npos) << err();
    c.dim = KES_FV_DIM_MAX + 1;
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_ERR_INVALID_ARGUMENT);
    c.dim = 8;
    c.storage = KES_I32;
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("storage"), std::string::npos) << err();
    c.storage = KES_F16;
    int bad = 7;
    std::memcpy(&c.metric, &bad, sizeof bad);
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("metric"), std::string::npos) << err();
    kes_fv_config_init(&c);
    std::memcpy(&c.kind, &bad, sizeof bad);
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_ERR_INVALID_ARGUMENT);
    kes_fv_config_init(&c);
    c.max_topk = 0;
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("max_topk"), std::string::npos) << err();
    kes_fv_config_init(&c);
    c.struct_size = 4;
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("struct_size"), std::string::npos) << err();
    EXPECT_EQ(kes_fv_repo_create(nullptr, &r), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_create(&c, nullptr), KES_ERR_INVALID_ARGUMENT);
}

TEST(FvRepo, SizesFollowKindAndStorage) {
    Repo pq = make_pq();
    size_t bytes = 0, floats = 0;
    int larger = -1;
    ASSERT_EQ(kes_fv_repo_feature_bytes(pq.get(), &bytes), KES_OK);
    ASSERT_EQ(kes_fv_repo_query_floats(pq.get(), &floats), KES_OK);
    ASSERT_EQ(kes_fv_repo_larger_is_closer(pq.get(), &larger), KES_OK);
    EXPECT_EQ(bytes, 36u);
    EXPECT_EQ(floats, 8192u);
    EXPECT_EQ(larger, 0);
    Repo d = make_dense(192, KES_I8, KES_FV_METRIC_COSINE);
    ASSERT_EQ(kes_fv_repo_feature_bytes(d.get(), &bytes), KES_OK);
    ASSERT_EQ(kes_fv_repo_query_floats(d.get(), &floats), KES_OK);
    ASSERT_EQ(kes_fv_repo_larger_is_closer(d.get(), &larger), KES_OK);
    EXPECT_EQ(bytes, 192u * 4);
    EXPECT_EQ(floats, 192u);
    EXPECT_EQ(larger, 1);
    Repo l2 = make_dense(4, KES_F32, KES_FV_METRIC_L2);
    ASSERT_EQ(kes_fv_repo_larger_is_closer(l2.get(), &larger), KES_OK);
    EXPECT_EQ(larger, 0);
}

TEST(FvRepo, AddAppendsWithContinuousOffsets) {
    Repo r = make_pq();
    const auto a = random_pq36(100, 1), b = random_pq36(50, 2);
    ASSERT_EQ(kes_fv_repo_add(r.get(), 3, 4, 0, a.data(), 100, a.size()), KES_OK) << err();
    ASSERT_EQ(kes_fv_repo_add(r.get(), 3, 4, 100, b.data(), 50, b.size()), KES_OK) << err();
    uint32_t size = 0;
    ASSERT_EQ(kes_fv_repo_library_size(r.get(), 3, 4, &size), KES_OK);
    EXPECT_EQ(size, 150u);
    ASSERT_EQ(kes_fv_repo_library_size(r.get(), 4, 3, &size), KES_OK);
    EXPECT_EQ(size, 0u);
    uint64_t live = 0;
    uint32_t libs = 0;
    ASSERT_EQ(kes_fv_repo_count(r.get(), &live, &libs), KES_OK);
    EXPECT_EQ(live, 150u);
    EXPECT_EQ(libs, 1u);
    // Feature 100 is b's first record.
    const std::vector<float> v = kes::fv::stored_vector(r.get(), 3, 4, 100);
    for (size_t m = 0; m < 32; ++m) EXPECT_EQ(v[m], b[4 + m]);
}

TEST(FvRepo, AddWithWrongOffsetIsRefused) {
    Repo r = make_pq();
    const auto a = random_pq36(3, 1);
    ASSERT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, a.data(), 3, a.size()), KES_OK);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 0, 2, a.data(), 3, a.size()), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("expected 3, got 2"), std::string::npos) << err();
    EXPECT_NE(err().find("kes_fv_repo_add"), std::string::npos) << err();
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 1, 1, a.data(), 3, a.size()), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("expected 0, got 1"), std::string::npos) << err();
    uint32_t size = 0;
    kes_fv_repo_library_size(r.get(), 0, 0, &size);
    EXPECT_EQ(size, 3u);
}

TEST(FvRepo, AddWithWrongByteCountIsRefused) {
    Repo r = make_dense(8, KES_F32, KES_FV_METRIC_IP);
    const auto x = random_floats(16, 3);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, x.data(), 2, 63), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("features_bytes"), std::string::npos) << err();
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, nullptr, 2, 64), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, nullptr, 0, 0), KES_OK);  // empty batch: no-op
    uint32_t libs = 9;
    kes_fv_repo_count(r.get(), nullptr, &libs);
    EXPECT_EQ(libs, 0u);
}

TEST(FvRepo, Pq36WithNonZeroHeaderIsRefusedAndNothingAdded) {
    Repo r = make_pq();
    auto a = random_pq36(10, 4);
    a[7 * 36 + 2] = 1;
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, a.data(), 10, a.size()), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("feature 7"), std::string::npos) << err();
    EXPECT_NE(err().find("must be 0"), std::string::npos) << err();
    uint32_t size = 1;
    kes_fv_repo_library_size(r.get(), 0, 0, &size);
    EXPECT_EQ(size, 0u);
}

TEST(FvRepo, NonFiniteOrOutOfRangeValuesAreRefused) {
    Repo r = make_dense(4, KES_F32, KES_FV_METRIC_IP);
    float x[8] = {1, 2, 3, 4, 5, std::nanf(""), 7, 8};
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, x, 2, sizeof x), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("feature 1 value 1"), std::string::npos) << err();
    x[5] = INFINITY;
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, x, 2, sizeof x), KES_ERR_INVALID_ARGUMENT);
    Repo h = make_dense(4, KES_F16, KES_FV_METRIC_IP);
    float y[4] = {1, 70000.f, 0, 0};
    EXPECT_EQ(kes_fv_repo_add(h.get(), 0, 0, 0, y, 1, sizeof y), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("f16"), std::string::npos) << err();
    y[1] = 65504.f;
    EXPECT_EQ(kes_fv_repo_add(h.get(), 0, 0, 0, y, 1, sizeof y), KES_OK) << err();
}

TEST(FvRepo, IdsZeroAnd1023AreValidAnd1024IsNot) {
    Repo r = make_pq();
    const auto a = random_pq36(2, 5);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 1023, 0, a.data(), 2, a.size()), KES_OK);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 1023, 0, 0, a.data(), 2, a.size()), KES_OK);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 1024, 0, 0, a.data(), 2, a.size()), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("id0 must be in [0, 1023] (got 1024)"), std::string::npos) << err();
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 1024, 0, a.data(), 2, a.size()), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_delete(r.get(), 0, 5000, 0), KES_ERR_INVALID_ARGUMENT);
    uint32_t size = 0;
    EXPECT_EQ(kes_fv_repo_library_size(r.get(), 2000, 0, &size), KES_ERR_INVALID_ARGUMENT);
}

TEST(FvRepo, DeletingTwiceIsNotFoundAndOffsetStaysTaken) {
    Repo r = make_pq();
    const auto a = random_pq36(5, 6);
    ASSERT_EQ(kes_fv_repo_add(r.get(), 1, 2, 0, a.data(), 5, a.size()), KES_OK);
    EXPECT_EQ(kes_fv_repo_delete(r.get(), 1, 2, 4), KES_OK) << err();
    EXPECT_EQ(kes_fv_repo_delete(r.get(), 1, 2, 4), KES_ERR_NOT_FOUND);
    EXPECT_NE(err().find("was deleted"), std::string::npos) << err();
    EXPECT_EQ(kes_fv_repo_delete(r.get(), 1, 2, 5), KES_ERR_NOT_FOUND);
    EXPECT_EQ(kes_fv_repo_delete(r.get(), 2, 2, 0), KES_ERR_NOT_FOUND);
    EXPECT_NE(err().find("does not exist"), std::string::npos) << err();
    uint32_t size = 0;
    kes_fv_repo_library_size(r.get(), 1, 2, &size);
    EXPECT_EQ(size, 5u);
    uint64_t live = 0;
    kes_fv_repo_count(r.get(), &live, nullptr);
    EXPECT_EQ(live, 4u);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 1, 2, 4, a.data(), 1, 36), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 1, 2, 5, a.data(), 1, 36), KES_OK);
}

TEST(FvRepo, ModifyRewritesInPlaceAndRefusesDeletedFeatures) {
    Repo r = make_dense(3, KES_F32, KES_FV_METRIC_L2);
    const float x[6] = {1, 2, 3, 4, 5, 6};
    ASSERT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, x, 2, sizeof x), KES_OK);
    const float y[3] = {-1, -2, -3};
    ASSERT_EQ(kes_fv_repo_modify(r.get(), 0, 0, 1, y, sizeof y), KES_OK) << err();
    EXPECT_EQ(kes::fv::stored_vector(r.get(), 0, 0, 1), std::vector<float>({-1, -2, -3}));
    EXPECT_EQ(kes::fv::stored_vector(r.get(), 0, 0, 0), std::vector<float>({1, 2, 3}));
    EXPECT_EQ(kes_fv_repo_modify(r.get(), 0, 0, 1, y, 8), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_modify(r.get(), 0, 0, 2, y, sizeof y), KES_ERR_NOT_FOUND);
    ASSERT_EQ(kes_fv_repo_delete(r.get(), 0, 0, 0), KES_OK);
    EXPECT_EQ(kes_fv_repo_modify(r.get(), 0, 0, 0, y, sizeof y), KES_ERR_NOT_FOUND);
    Repo pq = make_pq();
    auto a = random_pq36(1, 7);
    ASSERT_EQ(kes_fv_repo_add(pq.get(), 0, 0, 0, a.data(), 1, 36), KES_OK);
    a[0] = 9;
    EXPECT_EQ(kes_fv_repo_modify(pq.get(), 0, 0, 0, a.data(), 36), KES_ERR_INVALID_ARGUMENT);
}

TEST(FvRepo, DeleteRangeRemovesOnlyLibrariesInsideAndResetsTheirOffsets) {
    Repo r = make_pq();
    const auto a = random_pq36(4, 8);
    const uint32_t ids[][2] = {{0, 0}, {1, 1}, {1, 5}, {2, 1}, {5, 1}, {1023, 1023}};
    for (const auto& id : ids) ASSERT_EQ(kes_fv_repo_add(r.get(), id[0], id[1], 0, a.data(), 4, a.size()), KES_OK);
    const kes_fv_range range{1, 2, 0, 1};  // (1,1) and (2,1); not (1,5)
    uint32_t deleted = 0;
    ASSERT_EQ(kes_fv_repo_delete_range(r.get(), &range, &deleted), KES_OK) << err();
    EXPECT_EQ(deleted, 2u);
    uint32_t size = 0;
    kes_fv_repo_library_size(r.get(), 1, 1, &size);
    EXPECT_EQ(size, 0u);
    kes_fv_repo_library_size(r.get(), 1, 5, &size);
    EXPECT_EQ(size, 4u);
    uint64_t live = 0;
    uint32_t libs = 0;
    kes_fv_repo_count(r.get(), &live, &libs);
    EXPECT_EQ(live, 16u);
    EXPECT_EQ(libs, 4u);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 2, 1, 0, a.data(), 4, a.size()), KES_OK) << err();
    const kes_fv_range bad{3, 2, 0, 0};
    EXPECT_EQ(kes_fv_repo_delete_range(r.get(), &bad, nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find("id0_min <= id0_max"), std::string::npos) << err();
    const kes_fv_range all{0, 1023, 0, 1023};
    ASSERT_EQ(kes_fv_repo_delete_range(r.get(), &all, &deleted), KES_OK);
    EXPECT_EQ(deleted, 5u);
    kes_fv_repo_count(r.get(), &live, &libs);
    EXPECT_EQ(live, 0u);
    EXPECT_EQ(libs, 0u);
}

TEST(FvRepo, CapacityHintIsReservedAndTheStoreGrowsPastIt) {
    kes_fv_config c;
    kes_fv_config_init(&c);
    c.kind = KES_FV_DENSE;
    c.dim = 16;
    c.storage = KES_I8;
    c.capacity_hint = 100;
    kes_fv_repo* raw = nullptr;
    ASSERT_EQ(kes_fv_repo_create(&c, &raw), KES_OK) << err();
    Repo r(raw);
    for (uint32_t i = 0; i < 30; ++i) {
        const auto x = random_floats(16 * 10, 100 + i);
        ASSERT_EQ(kes_fv_repo_add(r.get(), i % 2, 0, (i / 2) * 10, x.data(), 10, x.size() * 4), KES_OK) << err();
    }
    uint64_t live = 0;
    kes_fv_repo_count(r.get(), &live, nullptr);
    EXPECT_EQ(live, 300u);
    kes_fv_config got;
    got.struct_size = sizeof got;
    ASSERT_EQ(kes_fv_repo_get_config(r.get(), &got), KES_OK);
    EXPECT_EQ(got.capacity_hint, 100u);
    EXPECT_EQ(got.storage, KES_I8);
}

TEST(FvRepo, Int8StorageFollowsTheDocumentedPerVectorScale) {
    const uint32_t dim = 24;
    Repo r = make_dense(dim, KES_I8, KES_FV_METRIC_IP);
    auto x = random_floats(dim * 20, 9, -3.f, 3.f);
    std::fill(x.begin() + dim * 19, x.end(), 0.f);  // an all-zero vector stays zero
    add_dense(r.get(), 0, 0, x, dim);
    for (uint32_t j = 0; j < 20; ++j) {
        const std::vector<float> v = kes::fv::stored_vector(r.get(), 0, 0, j);
        float maxabs = 0;
        for (uint32_t i = 0; i < dim; ++i) maxabs = std::max(maxabs, std::fabs(x[j * dim + i]));
        const float scale = maxabs / 127.f;
        for (uint32_t i = 0; i < dim; ++i) {
            const float want = std::nearbyint(x[j * dim + i] / (scale > 0 ? scale : 1.f)) * scale;
            EXPECT_FLOAT_EQ(v[i], want) << "vector " << j << " value " << i;
            EXPECT_LE(std::fabs(v[i] - x[j * dim + i]), scale * 0.5f + 1e-6f);
        }
    }
}

TEST(FvRepo, CosineNormalisesAtInsertAndF16RoundsToNearest) {
    Repo r = make_dense(2, KES_F32, KES_FV_METRIC_COSINE);
    const float x[4] = {3, 4, 0, 0};
    ASSERT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, x, 2, sizeof x), KES_OK);
    const std::vector<float> v = kes::fv::stored_vector(r.get(), 0, 0, 0);
    EXPECT_FLOAT_EQ(v[0], 0.6f);
    EXPECT_FLOAT_EQ(v[1], 0.8f);
    EXPECT_EQ(kes::fv::stored_vector(r.get(), 0, 0, 1), std::vector<float>({0, 0}));
    Repo h = make_dense(2, KES_F16, KES_FV_METRIC_IP);
    const float y[2] = {1.0f / 3.0f, -2.5f};
    ASSERT_EQ(kes_fv_repo_add(h.get(), 0, 0, 0, y, 1, sizeof y), KES_OK);
    const std::vector<float> w = kes::fv::stored_vector(h.get(), 0, 0, 0);
    EXPECT_EQ(w[0], kes_fp16_to_float(kes_fp16_from_float(1.0f / 3.0f)));
    EXPECT_EQ(w[1], -2.5f);
}

}  // namespace

// struct_size (kes/struct_size.hpp): every fv struct is accepted from its first release up (fields it
// lacks take their defaults) and, newer, only with a zero tail.
TEST(FvRepo, ConfigGrowsWithoutBreakingApps) {
    kes_fv_config cfg;
    kes_fv_config_init(&cfg);
    cfg.kind = KES_FV_DENSE;
    cfg.dim = 4;
    expect_struct_growth(cfg, offsetof(kes_fv_config, keep_f32), [](kes_fv_config* c) {
        kes_fv_repo* repo = nullptr;
        const kes_status st = kes_fv_repo_create(c, &repo);
        kes_fv_repo_destroy(repo);
        return st;
    });
}

// Filled at the caller's size: an older struct gets the fields it has, a newer one its unknown tail
// zeroed (it was left as the caller's garbage).
TEST(FvRepo, ConfigOfAnyReleaseIsFilled) {
    kes_fv_config cfg;
    kes_fv_config_init(&cfg);
    cfg.kind = KES_FV_DENSE;
    cfg.dim = 4;
    kes_fv_repo* repo = nullptr;
    ASSERT_EQ(kes_fv_repo_create(&cfg, &repo), KES_OK) << kes_last_error();
    kes_test::expect_out_struct_growth<kes_fv_config>(
        offsetof(kes_fv_config, keep_f32), [&](kes_fv_config* c) { return kes_fv_repo_get_config(repo, c); });
    kes_fv_repo_destroy(repo);
}

TEST(FvSearch, ParamsGrowWithoutBreakingApps) {
    kes_fv_config cfg;
    kes_fv_config_init(&cfg);
    cfg.kind = KES_FV_DENSE;
    cfg.dim = 4;
    kes_fv_repo* repo = nullptr;
    ASSERT_EQ(kes_fv_repo_create(&cfg, &repo), KES_OK) << kes_last_error();
    const float v[4] = {1, 0, 0, 0};
    ASSERT_EQ(kes_fv_repo_add(repo, 0, 0, 0, v, 1, 4 * sizeof(float)), KES_OK) << kes_last_error();
    kes_fv_search_params params;
    kes_fv_search_params_init(&params);
    params.k = 1;
    expect_struct_growth(params, offsetof(kes_fv_search_params, rerank), [&](kes_fv_search_params* p) {
        kes_fv_result r[1];
        uint32_t n = 0;
        return kes_fv_search(repo, v, 4, p, r, 1, &n);
    });
    kes_fv_repo_destroy(repo);
}

TEST(FvPq, TrainParamsGrowWithoutBreakingApps) {
    const uint32_t dim = 64;
    std::vector<float> data(size_t(KES_FV_PQ_TRAIN_MIN) * dim);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& x : data) x = u(rng);
    kes_fv_pq_train_params params;
    kes_fv_pq_train_params_init(&params);
    params.iterations = 1;
    expect_struct_growth(params, offsetof(kes_fv_pq_train_params, max_training_vectors) + sizeof(uint64_t),
                         [&](kes_fv_pq_train_params* p) {
                             kes_fv_pq* pq = nullptr;
                             EXPECT_EQ(kes_fv_pq_create(dim, &pq), KES_OK) << kes_last_error();
                             const kes_status st =
                                 kes_fv_pq_train(pq, data.data(), KES_FV_PQ_TRAIN_MIN, data.size(), p);
                             kes_fv_pq_destroy(pq);
                             return st;
                         });
}
