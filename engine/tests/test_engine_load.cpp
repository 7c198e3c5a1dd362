// Loading: description, sizes, file/mmap/caller-memory loads, and hostile files refused by name.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "kestrel/engine.h"
#include "kom_checksum.hpp"
#include "kom_generated.h"
#include "test_models.hpp"

namespace {

std::string write_temp(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = std::string(KES_TEST_TMPDIR) + "/" + name;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
}

kes_status load_status(const std::vector<uint8_t>& bytes) {
    kes_model* m = nullptr;
    const kes_status st = kes_model_load_from_memory(bytes.data(), bytes.size(), &m);
    kes_model_unload(m);
    return st;
}

std::string error_after_load(const std::vector<uint8_t>& bytes) {
    EXPECT_EQ(load_status(bytes), KES_ERR_CORRUPT_DATA);
    return kes_last_error();
}

kes::kom::Model* mutable_model(std::vector<uint8_t>& bytes) {
    return kes::kom::GetMutableModel(bytes.data());
}

}  // namespace

TEST(EngineLoad, DescribesInputsAndOutputs) {
    const kes::ir::KomImage img = kes_test::Dense{}.build();
    kes_model* m = nullptr;
    ASSERT_EQ(kes_model_load_from_memory(img.bytes.data(), img.bytes.size(), &m), KES_OK) << kes_last_error();
    size_t n = 0;
    ASSERT_EQ(kes_model_input_count(m, &n), KES_OK);
    EXPECT_EQ(n, 1u);
    ASSERT_EQ(kes_model_output_count(m, &n), KES_OK);
    EXPECT_EQ(n, 2u);
    const char* name = nullptr;
    ASSERT_EQ(kes_model_output_name(m, 1, &name), KES_OK);
    EXPECT_STREQ(name, "flat");
    kes_tensor d;
    ASSERT_EQ(kes_model_output_desc(m, 0, &d), KES_OK);
    EXPECT_EQ(d.dtype, KES_F32);
    EXPECT_EQ(d.ndim, 2u);
    EXPECT_EQ(d.shape[0], 6);
    EXPECT_EQ(d.shape[1], 2);
    EXPECT_EQ(d.size, 48u);
    EXPECT_EQ(d.data, nullptr);
    size_t index = 9;
    EXPECT_EQ(kes_model_find_input(m, "x", &index), KES_OK);
    EXPECT_EQ(index, 0u);
    EXPECT_EQ(kes_model_find_output(m, "nope", &index), KES_ERR_NOT_FOUND);
    EXPECT_EQ(kes_model_input_name(m, 1, &name), KES_ERR_INVALID_ARGUMENT);
    kes_model_unload(m);
    kes_model_unload(nullptr);
    kes_model_context_destroy(nullptr);
}

TEST(EngineLoad, QuerySizeReportsArenaAndWeights) {
    const kes::ir::KomImage img = kes_test::ConvReluAdd{}.build();
    size_t work = 0, weight = 0;
    ASSERT_EQ(kes_model_query_size(img.bytes.data(), img.bytes.size(), &work, &weight), KES_OK) << kes_last_error();
    // Work: the plan's arena, then the fast kernels' scratch; weights: the blob, then the packed weights.
    EXPECT_GE(work, img.arena_size);
    EXPECT_GE(weight, img.weights_size);
    EXPECT_EQ(work % 128, 0u);
    EXPECT_EQ(weight % 128, 0u);
    EXPECT_GE(img.arena_size, img.ideal_size);
    // filter_a 432 bytes, bias_a 16, filter_b 144, beta 16: each section starts 128-byte aligned.
    EXPECT_EQ(img.weights_size, 512u + 128 + 256 + 128);
    kes_model* m = nullptr;
    ASSERT_EQ(kes_model_load_from_memory(img.bytes.data(), img.bytes.size(), &m), KES_OK);
    size_t loaded_work = 0, loaded_weight = 0;
    ASSERT_EQ(kes_model_get_size(m, &loaded_work, &loaded_weight), KES_OK);
    EXPECT_EQ(loaded_work, work);
    EXPECT_EQ(loaded_weight, weight);
    size_t arena = 0, ideal = 0;
    ASSERT_EQ(kes_model_get_memory_plan(m, &arena, &ideal), KES_OK);
    EXPECT_EQ(arena, img.arena_size);
    EXPECT_EQ(ideal, img.ideal_size);
    EXPECT_GT(ideal, 0u);
    std::printf("conv-relu-add: arena %zu bytes, ideal %zu bytes\n", arena, ideal);
    kes_model_unload(m);
}

TEST(EngineLoad, FileAndMmapLoadsAgree) {
    const kes_test::Prelu g;
    const kes::ir::KomImage img = g.build();
    const std::string path = write_temp("prelu.kom", img.bytes);
    size_t work = 0, weight = 0;
    ASSERT_EQ(kes_model_query_size_from_file(path.c_str(), &work, &weight), KES_OK) << kes_last_error();
    EXPECT_EQ(work, img.arena_size);
    std::vector<float> x = kes_test::wave(24, 1.0f, 0.0f);
    std::vector<std::vector<float>> results;
    for (uint32_t flags : {0u, static_cast<unsigned>(KES_MODEL_LOAD_MMAP)}) {
        kes_model* m = nullptr;
        ASSERT_EQ(kes_model_load_from_file(path.c_str(), flags, &m), KES_OK) << kes_last_error();
        kes_model_context* ctx = nullptr;
        ASSERT_EQ(kes_model_context_create(m, nullptr, 0, &ctx), KES_OK);
        std::vector<float> y(24);
        const int64_t shape[3] = {2, 3, 4};
        kes_tensor in, out;
        ASSERT_EQ(kes_tensor_wrap(&in, KES_F32, KES_LAYOUT_ND, 3, shape, x.data(), 96), KES_OK);
        ASSERT_EQ(kes_tensor_wrap(&out, KES_F32, KES_LAYOUT_ND, 3, shape, y.data(), 96), KES_OK);
        ASSERT_EQ(kes_model_execute(ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();
        results.push_back(y);
        kes_model_context_destroy(ctx);
        kes_model_unload(m);
    }
    EXPECT_EQ(results[0], results[1]);
    kes_model* m = nullptr;
    EXPECT_EQ(kes_model_load_from_file("/nonexistent/model.kom", 0, &m), KES_ERR_NOT_FOUND);
    EXPECT_EQ(kes_model_load_from_file("/nonexistent/model.kom", KES_MODEL_LOAD_MMAP, &m), KES_ERR_NOT_FOUND);
    EXPECT_EQ(kes_model_load_from_file(KES_TEST_TMPDIR, 0, &m), KES_ERR_IO);  // a directory
    EXPECT_EQ(kes_model_load_from_file(path.c_str(), 0x10, &m), KES_ERR_INVALID_ARGUMENT);
}

TEST(EngineLoad, CallerMemoryMustBeAlignedAndLargeEnough) {
    const kes::ir::KomImage img = kes_test::ConvReluAdd{}.build();
    size_t need_work = 0, need_weight = 0;
    ASSERT_EQ(kes_model_query_size(img.bytes.data(), img.bytes.size(), &need_work, &need_weight), KES_OK)
        << kes_last_error();
    void* block = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_HOST, need_work + need_weight + 256, &block), KES_OK);
    auto* base = static_cast<uint8_t*>(block);
    kes_model* m = nullptr;
    const auto load = [&](void* work, size_t ws, void* weight, size_t wts) {
        const kes_status st =
            kes_model_load_from_memory_with_mem(img.bytes.data(), img.bytes.size(), work, ws, weight, wts, &m);
        kes_model_unload(m);
        m = nullptr;
        return st;
    };
    EXPECT_EQ(load(base, need_work, base + need_work, need_weight), KES_OK) << kes_last_error();
    EXPECT_EQ(load(base + 64, need_work, nullptr, 0), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("128-byte aligned"), std::string::npos);
    EXPECT_EQ(load(base, need_work - 128, nullptr, 0), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(load(nullptr, 0, base, need_weight - 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(load(nullptr, 0, base, img.weights_size),
              need_weight == img.weights_size ? KES_OK : KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(load(nullptr, 128, nullptr, 0), KES_ERR_INVALID_ARGUMENT);
    kes_mem_free(block);
}

TEST(EngineLoad, AnAscendOmFileIsNamedNotCalledCorrupt) {
    // The executor seam picks the backend from the file's first bytes: a .om ("IMOD" header) needs the
    // Ascend executor, and a build or machine without it must say so rather than call the file corrupt.
    std::vector<uint8_t> om(512, 0);
    std::memcpy(om.data(), "IMOD", 4);
    kes_model* m = nullptr;
    const kes_status st = kes_model_load_from_memory(om.data(), om.size(), &m);
    EXPECT_NE(st, KES_OK);
    EXPECT_NE(st, KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find(".om"), std::string::npos) << kes_last_error();
    EXPECT_EQ(m, nullptr);
    std::vector<uint8_t> jpeg = {0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0};
    EXPECT_EQ(kes_model_load_from_memory(jpeg.data(), jpeg.size(), &m), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find("not a .kom file"), std::string::npos) << kes_last_error();
}

TEST(EngineLoad, EveryTruncationIsRejected) {
    const kes::ir::KomImage img = kes_test::ConvReluAdd{}.build();
    for (size_t n = 0; n < img.bytes.size(); ++n) {
        std::vector<uint8_t> cut(img.bytes.begin(), img.bytes.begin() + static_cast<std::ptrdiff_t>(n));
        ASSERT_EQ(load_status(cut), KES_ERR_CORRUPT_DATA) << "prefix of " << n << " bytes";
    }
}

TEST(EngineLoad, ByteFlipsNeverCrash) {
    const kes::ir::KomImage img = kes_test::ConvReluAdd{}.build();
    const size_t fb_size = img.bytes.size() - img.weights_size;
    for (size_t i = 0; i < fb_size; ++i) {
        for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
            std::vector<uint8_t> b = img.bytes;
            b[i] ^= mask;
            kes_model* m = nullptr;
            const kes_status st = kes_model_load_from_memory(b.data(), b.size(), &m);
            ASSERT_TRUE(st == KES_OK || st == KES_ERR_CORRUPT_DATA || st == KES_ERR_UNSUPPORTED)
                << "byte " << i << ": " << kes_status_str(st);
            kes_model_unload(m);
        }
    }
}

TEST(EngineLoad, WrongIdentifierAndNewerVersion) {
    std::vector<uint8_t> b = kes_test::Prelu{}.build().bytes;
    std::vector<uint8_t> wrong = b;
    wrong[4] = 'X';
    EXPECT_NE(error_after_load(wrong).find("KOM1"), std::string::npos);
    ASSERT_TRUE(mutable_model(b)->mutate_format_version(3));
    EXPECT_EQ(load_status(b), KES_ERR_UNSUPPORTED);
}

TEST(EngineLoad, HostileIndicesOffsetsAndSectionsAreNamed) {
    const std::vector<uint8_t> good = kes_test::ConvReluAdd{}.build().bytes;
    {
        std::vector<uint8_t> b = good;
        mutable_model(b)->mutable_inputs()->Mutate(0, 1000);
        EXPECT_NE(error_after_load(b).find("graph input 0 is tensor 1000"), std::string::npos);
    }
    {
        std::vector<uint8_t> b = good;
        auto* node = mutable_model(b)->mutable_nodes()->GetMutableObject(1);
        node->mutable_inputs()->Mutate(0, 8);  // t: produced later, by node 3
        EXPECT_NE(error_after_load(b).find("no earlier node produces"), std::string::npos) << kes_last_error();
    }
    {
        std::vector<uint8_t> b = good;
        auto* sec = mutable_model(b)->mutable_weights()->GetMutableObject(0);
        sec->mutate_offset(64);
        EXPECT_NE(error_after_load(b).find("not 128-byte aligned"), std::string::npos);
        sec->mutate_offset(1u << 20);
        EXPECT_NE(error_after_load(b).find("runs past the weight blob"), std::string::npos);
    }
    {
        std::vector<uint8_t> b = good;
        mutable_model(b)->mutable_plan()->mutable_tensor_offsets()->Mutate(0, 1u << 30);
        EXPECT_NE(error_after_load(b).find("outside the"), std::string::npos);
        mutable_model(b)->mutable_plan()->mutable_tensor_offsets()->Mutate(0, 64);
        EXPECT_NE(error_after_load(b).find("unaligned"), std::string::npos);
    }
    {
        // r (tensor 6) and s (tensor 7) are both live when the first Add reads them.
        std::vector<uint8_t> b = good;
        auto* offsets = mutable_model(b)->mutable_plan()->mutable_tensor_offsets();
        offsets->Mutate(7, offsets->Get(6));
        EXPECT_NE(error_after_load(b).find("overlaps tensors 6 (r) and 7 (s)"), std::string::npos) << kes_last_error();
    }
    {
        std::vector<uint8_t> b = good;
        ASSERT_TRUE(mutable_model(b)->mutate_weights_offset(b.size()));
        EXPECT_NE(error_after_load(b).find("runs past the end of the file"), std::string::npos) << kes_last_error();
    }
    {
        std::vector<uint8_t> b = good;
        auto* shape = mutable_model(b)->mutable_tensors()->GetMutableObject(5)->mutable_shape();  // a
        shape->Mutate(2, 5);
        EXPECT_EQ(load_status(b), KES_ERR_CORRUPT_DATA);
        shape->Mutate(2, -1);
        EXPECT_NE(error_after_load(b).find("dim 2 is -1"), std::string::npos);
    }
}

TEST(EngineLoad, BuilderGraphOutOfOrderIsRejected) {
    kes::ir::Graph b;
    const int32_t x = kes_test::act(b, "x", {4});
    const int32_t a = kes_test::act(b, "a", {4});
    const int32_t y = kes_test::act(b, "y", {4});
    b.inputs = {x};
    b.outputs = {y};
    b.add_node("Abs", {a}, {y}, "late");
    b.add_node("Relu", {x}, {a}, "early");
    EXPECT_NE(error_after_load(kes::ir::write_kom(b).bytes).find("node 0 (late) reads tensor 1 (a)"), std::string::npos)
        << kes_last_error();
    kes::ir::Graph c;
    const int32_t p = kes_test::act(c, "p", {2, 3});
    const int32_t q = kes_test::act(c, "q", {3, 2});
    const int32_t r = kes_test::act(c, "r", {2, 3});
    c.inputs = {p, q};
    c.outputs = {r};
    c.add_node("Add", {p, q}, {r}, "add");
    EXPECT_NE(error_after_load(kes::ir::write_kom(c).bytes).find("do not broadcast"), std::string::npos)
        << kes_last_error();
}

// The fuzz seeds are small builder models. KES_ENGINE_WRITE_SEEDS=<dir> rewrites them; every run checks
// that the committed ones still load.
// The seeds were written by the converter before the weight checksum (issue 23 §6), except
// conv_relu_add_checksummed.kom: both kinds load.
TEST(EngineLoad, FuzzSeedsLoad) {
    const std::string dir = std::string(KES_SOURCE_DIR) + "/engine/fuzz/seeds";
    const std::vector<std::pair<std::string, kes::ir::KomImage>> seeds = {
        {"conv_relu_add.kom", kes_test::ConvReluAdd{}.build()},
        {"conv_relu_add_checksummed.kom", kes_test::ConvReluAdd{}.build()},
        {"prelu.kom", kes_test::Prelu{}.build()},
        {"dense.kom", kes_test::Dense{}.build()}};
    if (const char* out = std::getenv("KES_ENGINE_WRITE_SEEDS"))
        for (const auto& [name, img] : seeds)
            std::ofstream(std::string(out) + "/" + name, std::ios::binary)
                .write(reinterpret_cast<const char*>(img.bytes.data()), static_cast<std::streamsize>(img.bytes.size()));
    for (const auto& [name, img] : seeds) {
        kes_model* m = nullptr;
        EXPECT_EQ(kes_model_load_from_file((dir + "/" + name).c_str(), 0, &m), KES_OK)
            << name << ": " << kes_last_error();
        kes_model_unload(m);
    }
}

// ---- weight checksum (issue 23 §6) -------------------------------------------------------------------

namespace {

// The image with its weights_crc32 field removed (its vtable slot zeroed), as an earlier converter
// wrote files: otherwise the same bytes.
std::vector<uint8_t> without_weight_checksum(std::vector<uint8_t> b) {
    uint8_t* table = b.data() + flatbuffers::ReadScalar<flatbuffers::uoffset_t>(b.data());
    uint8_t* vtable = table - flatbuffers::ReadScalar<flatbuffers::soffset_t>(table);
    const auto vtable_bytes = flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable);
    EXPECT_LT(kes::kom::Model::VT_WEIGHTS_CRC32, vtable_bytes);
    flatbuffers::WriteScalar<flatbuffers::voffset_t>(vtable + kes::kom::Model::VT_WEIGHTS_CRC32, 0);
    EXPECT_FALSE(kes::kom::GetModel(b.data())->weights_crc32().has_value());
    return b;
}

// A NaN written over the first weight (what a damaged copy or a stray write leaves).
void poison_first_weight(std::vector<uint8_t>& b) {
    const uint64_t at = kes::kom::GetModel(b.data())->weights_offset();
    const uint32_t nan = 0x7fc00000u;
    std::memcpy(b.data() + at, &nan, 4);
}

}  // namespace

TEST(EngineLoad, WeightChecksumIsZlibsCrc32OfTheBlob) {
    const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
    EXPECT_EQ(kes::weights_crc32(check, sizeof check), 0xCBF43926u);  // CRC-32's published check value
    EXPECT_EQ(kes::weights_crc32(check + 4, 5, kes::weights_crc32(check, 4)), 0xCBF43926u);
    const kes::ir::KomImage img = kes_test::ConvReluAdd{}.build();
    const kes::kom::Model* root = kes::kom::GetModel(img.bytes.data());
    ASSERT_TRUE(root->weights_crc32().has_value());
    EXPECT_EQ(*root->weights_crc32(),
              kes::weights_crc32(img.bytes.data() + root->weights_offset(), root->weights_size()));
}

TEST(EngineLoad, DamagedWeightFailsTheLoadNamingTheFileAndTheChecksum) {
    std::vector<uint8_t> b = kes_test::ConvReluAdd{}.build().bytes;
    poison_first_weight(b);
    const std::string from_memory = error_after_load(b);
    EXPECT_NE(from_memory.find("the weights are damaged: their CRC-32 is"), std::string::npos) << from_memory;
    const std::string path = write_temp("damaged_weights.kom", b);
    for (uint32_t flags : {0u, static_cast<unsigned>(KES_MODEL_LOAD_MMAP)}) {
        kes_model* m = nullptr;
        EXPECT_EQ(kes_model_load_from_file(path.c_str(), flags, &m), KES_ERR_CORRUPT_DATA) << "flags " << flags;
        const std::string msg = kes_last_error();
        EXPECT_NE(msg.find(path + ": model: the weights are damaged"), std::string::npos) << msg;
        kes_model_unload(m);
    }
    kes_model* m = nullptr;
    EXPECT_EQ(kes_model_load_from_file_with_mem(path.c_str(), nullptr, 0, nullptr, 0, &m), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find(path + ": "), std::string::npos) << kes_last_error();
    // An mmap load told not to read the weights for the check does not see the damage.
    EXPECT_EQ(kes_model_load_from_file(path.c_str(), KES_MODEL_LOAD_MMAP | KES_MODEL_LOAD_NO_VERIFY, &m), KES_OK)
        << kes_last_error();
    kes_model_unload(m);
    m = nullptr;
    // Every byte of the blob is covered, the alignment padding too.
    const kes::kom::Model* root = kes::kom::GetModel(b.data());
    std::vector<uint8_t> last = kes_test::ConvReluAdd{}.build().bytes;
    last[root->weights_offset() + root->weights_size() - 1] ^= 0x01;
    EXPECT_EQ(load_status(last), KES_ERR_CORRUPT_DATA);
}

// Files of earlier converters carry no checksum: they load as before, unverified (an info log says so).
TEST(EngineLoad, FileWithoutAWeightChecksumLoadsUnverified) {
    std::vector<uint8_t> b = without_weight_checksum(kes_test::ConvReluAdd{}.build().bytes);
    EXPECT_EQ(load_status(b), KES_OK) << kes_last_error();
    poison_first_weight(b);
    EXPECT_EQ(load_status(b), KES_OK) << kes_last_error();  // nothing to check it against
}
