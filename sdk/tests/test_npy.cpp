// kes/npy.hpp: what NumPy writes is read (versions 1.0 to 3.0, every dtype Kestrel has a code for);
// what lies about its size, overflows or is not a .npy file is refused with a status; what the writer
// writes reads back.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/npy.hpp"

namespace {

// A .npy file as NumPy would write it: `dict` padded so the data starts 64-byte aligned.
std::vector<uint8_t> npy(const std::string& dict, const void* data, size_t bytes, uint8_t major = 1) {
    std::string d = dict;
    const size_t pre = major == 1 ? 10 : 12;
    d.append((64 - (pre + d.size() + 1) % 64) % 64, ' ');
    d.push_back('\n');
    std::string b = "\x93NUMPY";
    b += static_cast<char>(major);
    b += '\0';
    const uint32_t n = static_cast<uint32_t>(d.size());
    b += static_cast<char>(n & 0xFF);
    b += static_cast<char>((n >> 8) & 0xFF);
    if (major != 1) {
        b += static_cast<char>((n >> 16) & 0xFF);
        b += static_cast<char>(n >> 24);
    }
    b += d;
    b.append(static_cast<const char*>(data), bytes);
    return std::vector<uint8_t>(b.begin(), b.end());
}

std::string dict(const std::string& descr, const std::string& shape, const char* order = "False") {
    return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
}

kes_status status_of(const std::vector<uint8_t>& b) {
    try {
        kes::npy::parse(b.data(), b.size());
        return KES_OK;
    } catch (const kes::Error& e) {
        return e.status();
    }
}

TEST(Npy, WhatNumpyWritesIsReadInEveryVersion) {
    const float f[6] = {1, 2, 3, 4, 5, 6};
    for (uint8_t major : {1, 2, 3}) {
        const auto b = npy(dict("<f4", "(2, 3)"), f, sizeof f, major);
        const kes::npy::Array a = kes::npy::parse(b.data(), b.size());
        EXPECT_EQ(a.dtype, KES_F32);
        EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
        EXPECT_EQ(a.data_offset % 64, 0u);
        ASSERT_EQ(a.data_bytes, sizeof f);
        EXPECT_EQ(std::memcmp(b.data() + a.data_offset, f, sizeof f), 0);
    }
    // Keys in any order, double quotes, no trailing comma, Python 2 longs.
    const auto b = npy("{\"shape\":(2L,3L),\"descr\":\"=f4\",\"fortran_order\":False}", f, sizeof f);
    EXPECT_EQ(kes::npy::parse(b.data(), b.size()).shape, (std::vector<int64_t>{2, 3}));
}

TEST(Npy, EveryDtypeWithACodeReadsAndScalarsAndEmptyArraysToo) {
    const uint8_t bytes[16] = {};
    const struct {
        const char* descr;
        kes_dtype dtype;
    } cases[] = {{"<f2", KES_F16}, {"<f4", KES_F32}, {"<f8", KES_F64}, {"|i1", KES_I8},
                 {"<i2", KES_I16}, {"<i4", KES_I32}, {"<i8", KES_I64}, {"|u1", KES_U8},
                 {"<u2", KES_U16}, {"<u4", KES_U32}, {"<u8", KES_U64}, {"|b1", KES_BOOL}};
    for (const auto& c : cases) {
        const auto b = npy(dict(c.descr, "(2,)"), bytes, 2 * kes_dtype_size(c.dtype));
        EXPECT_EQ(kes::npy::parse(b.data(), b.size()).dtype, c.dtype) << c.descr;
    }
    const auto scalar = npy(dict("<i8", "()"), bytes, 8);
    EXPECT_TRUE(kes::npy::parse(scalar.data(), scalar.size()).shape.empty());
    const auto empty = npy(dict("<f4", "(0, 3)"), bytes, 0);
    EXPECT_EQ(kes::npy::parse(empty.data(), empty.size()).data_bytes, 0u);
    const auto big_endian_byte = npy(dict(">u1", "(2,)"), bytes, 2);  // one byte has no order
    EXPECT_EQ(kes::npy::parse(big_endian_byte.data(), big_endian_byte.size()).dtype, KES_U8);
}

TEST(Npy, SizesThatLieOrOverflowAreCorruptData) {
    const float f[6] = {};
    for (const char* shape : {"(2, 4)", "(2, 2)", "(6, 0, 1)", "(4611686018427387904, 4)",
                              "(0, 4611686018427387904, 4611686018427387904)", "(99999999999999999999, 3)"})
        EXPECT_EQ(status_of(npy(dict("<f4", shape), f, sizeof f)), KES_ERR_CORRUPT_DATA) << shape;
    const auto good = npy(dict("<f4", "(2, 3)"), f, sizeof f);
    for (size_t n = 0; n < good.size(); ++n)
        EXPECT_EQ(status_of(std::vector<uint8_t>(good.begin(), good.begin() + n)), KES_ERR_CORRUPT_DATA) << n;
    auto past = good;
    past[8] = 0xFF;  // header length past the end
    EXPECT_EQ(status_of(past), KES_ERR_CORRUPT_DATA);
    EXPECT_THROW(kes::npy::parse(nullptr, 0), kes::Error);
}

TEST(Npy, MalformedHeadersAreCorruptData) {
    const float f[6] = {};
    for (const std::string& d :
         {std::string("{'descr': '<f4', 'fortran_order': False}"), dict("<f4", "(2, 3)") + " junk",
          std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}"),
          std::string("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"),
          std::string("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3)}"),
          std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}"),
          std::string("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}"),
          std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)"), std::string("not a dict")})
        EXPECT_EQ(status_of(npy(d, f, sizeof f)), KES_ERR_CORRUPT_DATA) << d;
    std::vector<uint8_t> no_magic = npy(dict("<f4", "(2, 3)"), f, sizeof f);
    no_magic[1] = 'n';
    EXPECT_EQ(status_of(no_magic), KES_ERR_CORRUPT_DATA);
}

TEST(Npy, ValidFilesKestrelDoesNotReadAreUnsupported) {
    const uint8_t bytes[48] = {};
    EXPECT_EQ(status_of(npy(dict(">f4", "(2, 3)"), bytes, 24)), KES_ERR_UNSUPPORTED);
    EXPECT_EQ(status_of(npy(dict("<f4", "(2, 3)", "True"), bytes, 24)), KES_ERR_UNSUPPORTED);
    EXPECT_EQ(status_of(npy(dict("<c8", "(3,)"), bytes, 24)), KES_ERR_UNSUPPORTED);
    EXPECT_EQ(status_of(npy(dict("<U2", "(3,)"), bytes, 24)), KES_ERR_UNSUPPORTED);
    EXPECT_EQ(status_of(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", bytes, 24)),
              KES_ERR_UNSUPPORTED);
    EXPECT_EQ(status_of(npy(dict("|u1", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), bytes, 1)), KES_ERR_UNSUPPORTED);
    auto v4 = npy(dict("<f4", "(2, 3)"), bytes, 24, 2);
    v4[6] = 4;
    EXPECT_EQ(status_of(v4), KES_ERR_UNSUPPORTED);
    // One dimension reads the same in either order.
    EXPECT_EQ(status_of(npy(dict("<f4", "(6,)", "True"), bytes, 24)), KES_OK);
}

TEST(Npy, EncodedArraysReadBackAndTheHeaderIs64ByteAligned) {
    const int16_t v[6] = {1, -2, 3, -4, 5, -6};
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{}, {6}, {2, 3}, {1, 2, 1, 3}, {0, 5}}) {
        const auto h = kes::npy::header(KES_I16, shape);
        EXPECT_EQ(h.size() % 64, 0u);
        const auto b = kes::npy::encode(KES_I16, shape, v, sizeof v);
        const kes::npy::Array a = kes::npy::parse(b.data(), b.size());
        EXPECT_EQ(a.shape, shape);
        EXPECT_EQ(a.data_offset, h.size());
        EXPECT_EQ(std::memcmp(b.data() + a.data_offset, v, a.data_bytes), 0);
    }
    EXPECT_THROW(kes::npy::encode(KES_I16, {4, 2}, v, sizeof v), kes::Error);  // 16 bytes needed, 12 given
    EXPECT_THROW(kes::npy::header(KES_I16, {-1}), kes::Error);
}

TEST(Npy, WriteFileReplacesThePathWhole) {
    const std::string dir = std::string(KES_TEST_TMPDIR) + "/sdknpy_" + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/a.npy";
    const float f[3] = {1.5f, 2.5f, 3.5f};
    kes::npy::write_file(path, KES_F32, {3}, f, sizeof f);
    kes::npy::write_file(path, KES_F32, {1, 3}, f, sizeof f);
    const std::vector<uint8_t> b = kes::read_file(path.c_str());
    const kes::npy::Array a = kes::npy::parse(b.data(), b.size());
    EXPECT_EQ(a.shape, (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);  // no temporary left
    try {
        kes::npy::write_file(dir + "/no/such/dir/b.npy", KES_F32, {3}, f, sizeof f);
        ADD_FAILURE() << "wrote into a missing directory";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_IO);
        EXPECT_NE(std::string(e.what()).find("no/such/dir/b.npy"), std::string::npos) << e.what();
    }
    std::filesystem::remove_all(dir);
}

}  // namespace
