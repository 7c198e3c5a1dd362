// FAISS export through the C API: the file's bytes are FAISS 1.7.3's IndexFlat / IndexPQ layout
// (fv/src/fv_export.cpp) with the stored vectors in (id0, id1, offset) order and the id map to match.
// The file is parsed here field by field, so this runs on the emulated board too; that FAISS itself
// reads it and returns the same top-k is FvFaissExport (tests/faiss_export_check.py, host only).
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "fv_test_util.hpp"

using namespace fvt;

namespace {

std::string tmp_path(const char* name) {
    return std::string(KES_TEST_TMPDIR) + "/fvx_" + std::to_string(getpid()) + "_" + name;
}

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Reads little-endian fields in sequence, failing the test on a short file.
struct Reader {
    const std::vector<uint8_t>& b;
    size_t at = 0;
    template <class T>
    T get() {
        T v{};
        EXPECT_LE(at + sizeof v, b.size());
        if (at + sizeof v <= b.size()) std::memcpy(&v, b.data() + at, sizeof v);
        at += sizeof v;
        return v;
    }
    std::string fourcc() {
        const uint32_t v = get<uint32_t>();
        return std::string(reinterpret_cast<const char*>(&v), 4);
    }
};

// FAISS's index header; returns ntotal.
int64_t header(Reader& r, const char* magic, int32_t d, int32_t metric) {
    EXPECT_EQ(r.fourcc(), magic);
    EXPECT_EQ(r.get<int32_t>(), d);
    const int64_t ntotal = r.get<int64_t>();
    r.get<int64_t>();
    r.get<int64_t>();
    EXPECT_EQ(r.get<uint8_t>(), 1u);  // is_trained
    EXPECT_EQ(r.get<int32_t>(), metric);
    return ntotal;
}

void check_dense(kes_dtype storage, kes_fv_metric metric) {
    SCOPED_TRACE(testing::Message() << "storage " << storage << " metric " << metric);
    const uint32_t dim = 20;
    Repo r = make_dense(dim, storage, metric);
    add_dense(r.get(), 5, 6, random_floats(7 * dim, 1), dim);
    add_dense(r.get(), 0, 1023, random_floats(4 * dim, 2), dim);
    add_dense(r.get(), 1023, 0, random_floats(3 * dim, 3), dim);
    ASSERT_EQ(kes_fv_repo_delete(r.get(), 5, 6, 2), KES_OK);
    const std::string path = tmp_path("dense.faiss");
    std::vector<kes_fv_feature_id> ids(13);
    uint64_t n = 0;
    ASSERT_EQ(kes_fv_repo_export_faiss(r.get(), nullptr, path.c_str(), ids.data(), ids.size(), &n), KES_OK)
        << kes_last_error();
    ASSERT_EQ(n, 13u);
    const std::vector<uint8_t> b = read_all(path);
    ::unlink(path.c_str());
    Reader rd{b};
    const bool l2 = metric == KES_FV_METRIC_L2;
    ASSERT_EQ(header(rd, l2 ? "IxF2" : "IxFI", dim, l2 ? 1 : 0), 13);
    ASSERT_EQ(rd.get<uint64_t>(), 13u * dim);  // FAISS counts the vector in 4-byte words
    // Labels in (id0, id1, offset) order, the deleted feature (5, 6, 2) left out.
    std::vector<kes_fv_feature_id> want;
    for (uint32_t o = 0; o < 4; ++o) want.push_back({0, 1023, o});
    for (uint32_t o = 0; o < 7; ++o)
        if (o != 2) want.push_back({5, 6, o});
    for (uint32_t o = 0; o < 3; ++o) want.push_back({1023, 0, o});
    for (size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(ids[i].id0, want[i].id0);
        EXPECT_EQ(ids[i].id1, want[i].id1);
        EXPECT_EQ(ids[i].offset, want[i].offset);
        const std::vector<float> v = kes::fv::stored_vector(r.get(), want[i].id0, want[i].id1, want[i].offset);
        for (uint32_t j = 0; j < dim; ++j) EXPECT_EQ(rd.get<float>(), v[j]) << j;
    }
    EXPECT_EQ(rd.at, b.size()) << "bytes after the vectors";
}

TEST(FvExport, DenseFlatLayoutEveryStorageAndMetric) {
    for (kes_dtype s : {KES_F32, KES_F16, KES_I8})
        for (kes_fv_metric m : {KES_FV_METRIC_IP, KES_FV_METRIC_COSINE, KES_FV_METRIC_L2}) check_dense(s, m);
}

TEST(FvExport, Pq36IsIndexPqWithCodebookAndCodes) {
    Repo r = make_pq();
    const std::vector<uint8_t> codes = random_pq36(9, 4);
    add_pq(r.get(), 2, 3, codes);
    const std::string path = tmp_path("pq.faiss");
    uint64_t n = 0;
    EXPECT_EQ(kes_fv_repo_export_faiss(r.get(), nullptr, path.c_str(), nullptr, 0, &n), KES_ERR_NOT_FOUND);
    EXPECT_NE(std::string(kes_last_error()).find("codebook"), std::string::npos) << kes_last_error();

    const uint32_t dim = 64;
    kes_fv_pq* pq = nullptr;
    ASSERT_EQ(kes_fv_pq_create(dim, &pq), KES_OK);
    const std::vector<float> cb = random_floats(256 * dim, 5);
    ASSERT_EQ(kes_fv_pq_set_codebook(pq, cb.data(), cb.size()), KES_OK);
    ASSERT_EQ(kes_fv_repo_set_pq(r.get(), pq), KES_OK);
    kes_fv_pq_destroy(pq);
    ASSERT_EQ(kes_fv_repo_delete(r.get(), 2, 3, 0), KES_OK);
    std::vector<kes_fv_feature_id> ids(8);
    ASSERT_EQ(kes_fv_repo_export_faiss(r.get(), nullptr, path.c_str(), ids.data(), ids.size(), &n), KES_OK)
        << kes_last_error();
    EXPECT_EQ(n, 8u);
    const std::vector<uint8_t> b = read_all(path);
    ::unlink(path.c_str());
    Reader rd{b};
    ASSERT_EQ(header(rd, "IxPq", dim, 1), 8);
    EXPECT_EQ(rd.get<uint64_t>(), dim);  // ProductQuantizer d, M, nbits
    EXPECT_EQ(rd.get<uint64_t>(), 32u);
    EXPECT_EQ(rd.get<uint64_t>(), 8u);
    ASSERT_EQ(rd.get<uint64_t>(), cb.size());
    for (float c : cb) ASSERT_EQ(rd.get<float>(), c);
    ASSERT_EQ(rd.get<uint64_t>(), 8u * 32);
    for (uint32_t i = 0; i < 8; ++i) {
        EXPECT_EQ(ids[i].offset, i + 1);
        for (uint32_t m = 0; m < 32; ++m) EXPECT_EQ(rd.get<uint8_t>(), codes[(i + 1) * 36 + 4 + m]);
    }
    EXPECT_EQ(rd.get<int32_t>(), 0);    // search_type ST_PQ
    EXPECT_EQ(rd.get<uint8_t>(), 0u);   // encode_signs
    EXPECT_EQ(rd.get<int32_t>(), 257);  // polysemous_ht
    EXPECT_EQ(rd.at, b.size());
}

TEST(FvExport, RangeCountAndEmpty) {
    const uint32_t dim = 8;
    Repo r = make_dense(dim, KES_F32, KES_FV_METRIC_IP);
    add_dense(r.get(), 1, 1, random_floats(5 * dim, 1), dim);
    add_dense(r.get(), 2, 2, random_floats(6 * dim, 2), dim);
    const kes_fv_range only2{2, 2, 0, 1023};
    uint64_t n = 0;
    ASSERT_EQ(kes_fv_repo_count_range(r.get(), &only2, &n), KES_OK);
    EXPECT_EQ(n, 6u);
    const std::string path = tmp_path("range.faiss");
    std::vector<kes_fv_feature_id> ids(6);
    ASSERT_EQ(kes_fv_repo_export_faiss(r.get(), &only2, path.c_str(), ids.data(), ids.size(), &n), KES_OK);
    EXPECT_EQ(n, 6u);
    for (const auto& id : ids) EXPECT_EQ(id.id0, 2u);
    EXPECT_EQ(read_all(path).size(), 4 + 4 + 8 * 3 + 1 + 4 + 8 + 6u * dim * 4);
    // An empty range is an empty, valid index.
    const kes_fv_range none{7, 9, 0, 1023};
    ASSERT_EQ(kes_fv_repo_export_faiss(r.get(), &none, path.c_str(), nullptr, 0, &n), KES_OK);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(read_all(path).size(), 4 + 4 + 8 * 3 + 1 + 4 + 8u);
    ::unlink(path.c_str());
}

TEST(FvExport, RefusesBadArgumentsAndLeavesTheOldFile) {
    const uint32_t dim = 8;
    Repo r = make_dense(dim, KES_F32, KES_FV_METRIC_L2);
    add_dense(r.get(), 0, 0, random_floats(5 * dim, 1), dim);
    const std::string path = tmp_path("old.faiss");
    { std::ofstream(path) << "previous"; }
    std::vector<kes_fv_feature_id> ids(4);
    uint64_t n = 0;
    EXPECT_EQ(kes_fv_repo_export_faiss(r.get(), nullptr, path.c_str(), ids.data(), ids.size(), &n),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(n, 5u) << "the size to allocate";
    EXPECT_NE(std::string(kes_last_error()).find("ids_capacity"), std::string::npos) << kes_last_error();
    EXPECT_EQ(read_all(path), std::vector<uint8_t>({'p', 'r', 'e', 'v', 'i', 'o', 'u', 's'}));
    const kes_fv_range bad{3, 2, 0, 0};
    EXPECT_EQ(kes_fv_repo_export_faiss(r.get(), &bad, path.c_str(), nullptr, 0, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_count_range(r.get(), &bad, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_export_faiss(nullptr, nullptr, path.c_str(), nullptr, 0, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_export_faiss(r.get(), nullptr, nullptr, nullptr, 0, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_export_faiss(r.get(), nullptr, "", nullptr, 0, &n), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_export_faiss(r.get(), nullptr, "/nonexistent-dir/x.faiss", nullptr, 0, &n), KES_ERR_IO);
    ::unlink(path.c_str());
}

}  // namespace
