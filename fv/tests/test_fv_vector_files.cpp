// .npy / .fvecs / raw f32 readers: what NumPy and the TexMex sets write is read; damage is refused.
#include <string>

#include "fv_test_util.hpp"
#include "kes/error.hpp"
#include "kes/npy.hpp"
#include "vector_files.hpp"

namespace {

using kes::fv::MatrixLayout;

std::vector<uint8_t> npy(const std::string& dict, const std::vector<float>& values, uint8_t major = 1) {
    std::string d = dict;
    const size_t pre = major == 1 ? 10 : 12;
    d.append((64 - (pre + d.size() + 1) % 64) % 64, ' ');
    d.push_back('\n');
    std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
    const uint32_t n = static_cast<uint32_t>(d.size());
    b.push_back(n & 0xFF);
    b.push_back((n >> 8) & 0xFF);
    if (major != 1) {
        b.push_back((n >> 16) & 0xFF);
        b.push_back(n >> 24);
    }
    b.insert(b.end(), d.begin(), d.end());
    const uint8_t* v = reinterpret_cast<const uint8_t*>(values.data());
    b.insert(b.end(), v, v + values.size() * 4);
    return b;
}

kes_status parse_status(const std::vector<uint8_t>& b, bool fvecs = false) {
    try {
        if (fvecs)
            kes::fv::parse_fvecs(b.data(), b.size());
        else
            kes::fv::parse_npy(b.data(), b.size());
        return KES_OK;
    } catch (const kes::Error& e) {
        return e.status();
    }
}

TEST(FvVectorFiles, NpyAsNumpyWritesItIsRead) {
    const std::vector<float> v{1, 2, 3, 4, 5, 6};
    for (const char* dict : {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                             "{\"shape\":(2,3),\"descr\":\"<f4\",\"fortran_order\":False}"}) {
        const auto b = npy(dict, v);
        const MatrixLayout m = kes::fv::parse_npy(b.data(), b.size());
        EXPECT_EQ(m.rows, 2u);
        EXPECT_EQ(m.cols, 3u);
        std::vector<float> out(6);
        kes::fv::copy_rows(b.data(), m, 0, 2, out.data());
        EXPECT_EQ(out, v);
    }
    const auto b2 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, 2);
    EXPECT_EQ(kes::fv::parse_npy(b2.data(), b2.size()).rows, 2u);
    // The writer's header (kes-fv export) reads back.
    auto h = kes::npy::header(KES_F32, {2, 3});
    EXPECT_EQ(h.size() % 64, 0u);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(v.data());
    h.insert(h.end(), p, p + 24);
    EXPECT_EQ(kes::fv::parse_npy(h.data(), h.size()).cols, 3u);
}

TEST(FvVectorFiles, NpyOtherThanFloat32COrder2DIsRefused) {
    const std::vector<float> v{1, 2, 3, 4, 5, 6};
    for (const char* dict : {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }",
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }",
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }",
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0), }",
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3), }",
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}",
                             "{'descr': '<f4', 'fortran_order': False}",
                             "{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (2, 3) junk"}) {
        EXPECT_EQ(parse_status(npy(dict, v)), KES_ERR_CORRUPT_DATA) << dict;
    }
    // Valid .npy files no Kestrel reader reads (kes/npy.hpp).
    for (const char* dict : {"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
                             "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }"}) {
        EXPECT_EQ(parse_status(npy(dict, v)), KES_ERR_UNSUPPORTED) << dict;
    }
    auto b = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v);
    for (size_t n = 0; n < b.size(); ++n)
        EXPECT_EQ(parse_status(std::vector<uint8_t>(b.begin(), b.begin() + n)), KES_ERR_CORRUPT_DATA) << n;
    b[8] = 0xFF;  // header length past the end
    EXPECT_EQ(parse_status(b), KES_ERR_CORRUPT_DATA);
}

TEST(FvVectorFiles, FvecsRecordsMustAllHaveTheSameDim) {
    std::vector<uint8_t> b;
    auto put = [&](int32_t d, std::initializer_list<float> xs) {
        const uint8_t* p = reinterpret_cast<const uint8_t*>(&d);
        b.insert(b.end(), p, p + 4);
        for (float x : xs) {
            const uint8_t* q = reinterpret_cast<const uint8_t*>(&x);
            b.insert(b.end(), q, q + 4);
        }
    };
    put(2, {1, 2});
    put(2, {3, 4});
    const MatrixLayout m = kes::fv::parse_fvecs(b.data(), b.size());
    EXPECT_EQ(m.rows, 2u);
    EXPECT_EQ(m.cols, 2u);
    std::vector<float> out(2);
    kes::fv::copy_rows(b.data(), m, 1, 1, out.data());
    EXPECT_EQ(out, (std::vector<float>{3, 4}));
    for (size_t n = 1; n < b.size(); ++n)
        if (n % 12) {
            EXPECT_EQ(parse_status(std::vector<uint8_t>(b.begin(), b.begin() + n), true), KES_ERR_CORRUPT_DATA) << n;
        }
    put(3, {1, 2});  // same length as a dim-2 record, wrong dim
    EXPECT_EQ(parse_status(b, true), KES_ERR_CORRUPT_DATA);
    std::vector<uint8_t> neg{0xFF, 0xFF, 0xFF, 0xFF};
    EXPECT_EQ(parse_status(neg, true), KES_ERR_CORRUPT_DATA);
    EXPECT_EQ(kes::fv::parse_fvecs(nullptr, 0).rows, 0u);
    EXPECT_EQ(kes::fv::parse_raw_f32(24, 3).rows, 2u);
    EXPECT_THROW(kes::fv::parse_raw_f32(20, 3), kes::Error);
}

}  // namespace
