// The simulator's model API (aclmdl*) through the sdk's AscendCL function table, as the engine's Ascend
// executor will call it: a .kom wrapped by the IMOD container loads into device memory, executes, and
// gives exactly what Kestrel's CPU engine gives on the same .kom — on each simulated SoC and run mode.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ascend_test_env.hpp"
#include "imod.hpp"
#include "kes/ascend.hpp"
#include "kestrel/convert.h"
#include "kestrel/engine.h"
#include "test_conv_kom.hpp"
#include "test_onnx_builder.hpp"

using namespace kes_test;
namespace acl = kes::acl;

namespace {

// The CPU engine's output for `input` at `batch` (0: static) or image size `h` x `w`.
std::vector<float> cpu_reference(const std::vector<uint8_t>& kom, const std::vector<float>& input, int64_t batch,
                                 int64_t h = 0, int64_t w = 0) {
    kes_model* m = nullptr;
    kes_model_context* c = nullptr;
    EXPECT_EQ(kes_model_load_from_memory(kom.data(), kom.size(), &m), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_model_context_create(m, nullptr, 0, &c), KES_OK) << kes_last_error();
    if (batch) {
        EXPECT_EQ(kes_model_context_set_batch(c, batch), KES_OK) << kes_last_error();
    }
    if (h) {
        EXPECT_EQ(kes_model_context_set_image_size(c, h, w), KES_OK) << kes_last_error();
    }
    kes_tensor din, dout, in, out;
    kes_model_context_input_desc(c, 0, &din);
    kes_model_context_output_desc(c, 0, &dout);
    std::vector<float> y(dout.size / 4);
    kes_tensor_wrap(&in, din.dtype, din.layout, din.ndim, din.shape, const_cast<float*>(input.data()), din.size);
    kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
    EXPECT_EQ(kes_model_execute(c, &in, 1, &out, 1), KES_OK) << kes_last_error();
    kes_model_context_destroy(c);
    kes_model_unload(m);
    return y;
}

// A model loaded on the simulated NPU with device work and weight memory, plus device I/O buffers.
struct NpuModel {
    const acl::Api& api;
    acl::ScopedContext bind;
    uint32_t id = 0;
    void* work = nullptr;
    void* weight = nullptr;
    acl::MdlDesc* desc = nullptr;
    std::vector<void*> device;
    std::vector<acl::DataBuffer*> buffers;
    acl::Dataset* in = nullptr;
    acl::Dataset* out = nullptr;
    int load_error = 0;

    NpuModel(const acl::Api& a, const std::vector<uint8_t>& om) : api(a) {
        size_t work_size = 0, weight_size = 0;
        load_error = api.aclmdlQuerySizeFromMem(om.data(), om.size(), &work_size, &weight_size);
        if (load_error) return;
        EXPECT_EQ(api.aclrtMalloc(&work, work_size, acl::kMallocHugeFirst), 0);
        EXPECT_EQ(api.aclrtMalloc(&weight, weight_size, acl::kMallocHugeFirst), 0);
        load_error = api.aclmdlLoadFromMemWithMem(om.data(), om.size(), &id, work, work_size, weight, weight_size);
        if (load_error) return;
        desc = api.aclmdlCreateDesc();
        EXPECT_EQ(api.aclmdlGetDesc(desc, id), 0);
        in = api.aclmdlCreateDataset();
        out = api.aclmdlCreateDataset();
        for (size_t i = 0; i < api.aclmdlGetNumInputs(desc); ++i) add(in, api.aclmdlGetInputSizeByIndex(desc, i));
        for (size_t i = 0; i < api.aclmdlGetNumOutputs(desc); ++i) add(out, api.aclmdlGetOutputSizeByIndex(desc, i));
    }
    void add(acl::Dataset* ds, size_t size) {
        void* p = nullptr;
        EXPECT_EQ(api.aclrtMalloc(&p, size, acl::kMallocHugeFirst), 0);
        EXPECT_EQ(api.aclrtMemset(p, size, 0, size), 0);
        device.push_back(p);
        buffers.push_back(api.aclCreateDataBuffer(p, size));
        EXPECT_EQ(api.aclmdlAddDatasetBuffer(ds, buffers.back()), 0);
    }
    void* input(size_t i) const { return api.aclGetDataBufferAddr(api.aclmdlGetDatasetBuffer(in, i)); }
    void* output(size_t i) const { return api.aclGetDataBufferAddr(api.aclmdlGetDatasetBuffer(out, i)); }
    ~NpuModel() {
        if (desc) {
            EXPECT_EQ(api.aclmdlDestroyDesc(desc), 0);
        }
        if (in) {
            EXPECT_EQ(api.aclmdlDestroyDataset(in), 0);
        }
        if (out) {
            EXPECT_EQ(api.aclmdlDestroyDataset(out), 0);
        }
        for (acl::DataBuffer* b : buffers) {
            EXPECT_EQ(api.aclDestroyDataBuffer(b), 0);
        }
        for (void* p : device) {
            EXPECT_EQ(api.aclrtFree(p), 0);
        }
        if (load_error == 0 && id) {
            EXPECT_EQ(api.aclmdlUnload(id), 0);
        }
        if (work) {
            EXPECT_EQ(api.aclrtFree(work), 0);
        }
        if (weight) {
            EXPECT_EQ(api.aclrtFree(weight), 0);
        }
    }
};

std::string recent(const acl::Api& api) {
    const char* m = api.aclGetRecentErrMsg ? api.aclGetRecentErrMsg() : nullptr;
    return m ? m : "";
}

}  // namespace

using SimModel = AscendBoardTest;

TEST_P(SimModel, StaticModelMatchesTheCpuEngine) {
    const acl::Api& api = acl::require();
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    const std::vector<float> x = ramp(3 * 8 * 8, 2.0f);
    const std::vector<float> want = cpu_reference(kom, x, 0);
    {
        NpuModel m(api, pack(kom, GetParam().soc));
        ASSERT_EQ(m.load_error, 0) << recent(api);
        ASSERT_EQ(api.aclmdlGetNumInputs(m.desc), 1u);
        acl::IODims dims;
        ASSERT_EQ(api.aclmdlGetInputDims(m.desc, 0, &dims), 0);
        EXPECT_STREQ(dims.name, "x");
        ASSERT_EQ(dims.dimCount, 4u);
        EXPECT_EQ(dims.dims[1], 3);
        EXPECT_EQ(api.aclmdlGetInputDataType(m.desc, 0), 0);  // ACL_FLOAT
        ASSERT_EQ(api.aclmdlGetOutputSizeByIndex(m.desc, 0), want.size() * 4);
        ASSERT_EQ(api.aclrtMemcpy(m.input(0), x.size() * 4, x.data(), x.size() * 4, acl::kMemcpyH2D), 0);
        ASSERT_EQ(api.aclmdlExecute(m.id, m.in, m.out), 0) << recent(api);
        std::vector<float> got(want.size());
        ASSERT_EQ(api.aclrtMemcpy(got.data(), got.size() * 4, m.output(0), got.size() * 4, acl::kMemcpyD2H), 0);
        EXPECT_EQ(got, want);
    }
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();  // nothing leaked
}

TEST_P(SimModel, AsyncResultsAppearOnlyAfterTheStreamSyncs) {
    const acl::Api& api = acl::require();
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    const std::vector<float> x = ramp(3 * 8 * 8, 1.5f);
    const std::vector<float> want = cpu_reference(kom, x, 0);
    {
        NpuModel m(api, pack(kom, GetParam().soc));
        ASSERT_EQ(m.load_error, 0) << recent(api);
        acl::Stream stream = nullptr;
        ASSERT_EQ(api.aclrtCreateStream(&stream), 0);
        ASSERT_EQ(api.aclrtMemcpyAsync(m.input(0), x.size() * 4, x.data(), x.size() * 4, acl::kMemcpyH2D, stream), 0);
        ASSERT_EQ(api.aclmdlExecuteAsync(m.id, m.in, m.out, stream), 0) << recent(api);
        std::vector<float> got(want.size(), -1.0f);
        ASSERT_EQ(api.aclrtMemcpy(got.data(), got.size() * 4, m.output(0), got.size() * 4, acl::kMemcpyD2H), 0);
        EXPECT_EQ(got, std::vector<float>(want.size(), 0.0f));  // not run yet
        ASSERT_EQ(api.aclrtSynchronizeStream(stream), 0) << recent(api);
        ASSERT_EQ(api.aclrtMemcpy(got.data(), got.size() * 4, m.output(0), got.size() * 4, acl::kMemcpyD2H), 0);
        EXPECT_EQ(got, want);
        EXPECT_EQ(api.aclrtDestroyStream(stream), 0);
    }
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_P(SimModel, DynamicBatchGoesThroughTheHiddenInput) {
    const acl::Api& api = acl::require();
    const std::vector<uint8_t> kom = conv_kom("1,2,4");
    const std::vector<float> x = ramp(2 * 3 * 8 * 8, 1.0f);
    const std::vector<float> want = cpu_reference(kom, x, 2);
    {
        NpuModel m(api, pack(kom, GetParam().soc));
        ASSERT_EQ(m.load_error, 0) << recent(api);
        ASSERT_EQ(api.aclmdlGetNumInputs(m.desc), 2u);
        size_t hidden = 99;
        ASSERT_EQ(api.aclmdlGetInputIndexByName(m.desc, acl::kDynamicTensorName, &hidden), 0);
        EXPECT_EQ(hidden, 1u);
        acl::IODims dims;
        ASSERT_EQ(api.aclmdlGetInputDims(m.desc, 0, &dims), 0);
        EXPECT_EQ(dims.dims[0], -1);
        ASSERT_EQ(api.aclrtMemcpy(m.input(0), x.size() * 4, x.data(), x.size() * 4, acl::kMemcpyH2D), 0);
        // Without a gear the execution fails, as on a board.
        EXPECT_EQ(api.aclmdlExecute(m.id, m.in, m.out), acl::kRtModelExecute);
        EXPECT_NE(recent(api).find("aclmdlSetDynamicBatchSize"), std::string::npos);
        EXPECT_EQ(api.aclmdlSetDynamicBatchSize(m.id, m.in, hidden, 3), 145013);         // not a gear
        EXPECT_EQ(api.aclmdlSetDynamicBatchSize(m.id, m.in, 0, 2), acl::kInvalidParam);  // not the hidden input
        ASSERT_EQ(api.aclmdlSetDynamicBatchSize(m.id, m.in, hidden, 2), 0) << recent(api);
        ASSERT_EQ(api.aclmdlExecute(m.id, m.in, m.out), 0) << recent(api);
        std::vector<float> got(want.size());
        ASSERT_EQ(api.aclrtMemcpy(got.data(), got.size() * 4, m.output(0), got.size() * 4, acl::kMemcpyD2H), 0);
        EXPECT_EQ(got, want);
    }
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_P(SimModel, DynamicImageSizeGoesThroughTheHiddenInput) {
    const acl::Api& api = acl::require();
    const std::vector<uint8_t> kom = conv_kom(nullptr, "8,8;12,12");
    const std::vector<float> x = ramp(3 * 8 * 8, 1.25f);
    const std::vector<float> want = cpu_reference(kom, x, 0, 8, 8);
    {
        NpuModel m(api, pack(kom, GetParam().soc));
        ASSERT_EQ(m.load_error, 0) << recent(api);
        size_t hidden = 99;
        ASSERT_EQ(api.aclmdlGetInputIndexByName(m.desc, acl::kDynamicTensorName, &hidden), 0);
        acl::IODims dims;
        ASSERT_EQ(api.aclmdlGetInputDims(m.desc, 0, &dims), 0);
        EXPECT_EQ(dims.dims[2], -1);
        EXPECT_EQ(dims.dims[3], -1);
        EXPECT_EQ(api.aclmdlSetDynamicBatchSize(m.id, m.in, hidden, 1), acl::kModelNotDynamic);  // HW, not batch
        EXPECT_EQ(api.aclmdlSetDynamicHWSize(m.id, m.in, hidden, 9, 9), 145013);                 // not a gear
        ASSERT_EQ(api.aclmdlSetDynamicHWSize(m.id, m.in, hidden, 8, 8), 0) << recent(api);
        ASSERT_EQ(api.aclrtMemcpy(m.input(0), x.size() * 4, x.data(), x.size() * 4, acl::kMemcpyH2D), 0);
        ASSERT_EQ(api.aclmdlExecute(m.id, m.in, m.out), 0) << recent(api);
        std::vector<float> got(want.size());
        ASSERT_EQ(api.aclrtMemcpy(got.data(), got.size() * 4, m.output(0), got.size() * 4, acl::kMemcpyD2H), 0);
        EXPECT_EQ(got, want);
    }
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_P(SimModel, StaticModelIsNotDynamic) {
    const acl::Api& api = acl::require();
    NpuModel m(api, pack(conv_kom(nullptr), GetParam().soc));
    ASSERT_EQ(m.load_error, 0) << recent(api);
    EXPECT_EQ(api.aclmdlSetDynamicBatchSize(m.id, m.in, 0, 1), acl::kModelNotDynamic);
    EXPECT_EQ(acl::error_status(acl::kModelNotDynamic), KES_ERR_INVALID_ARGUMENT);
}

TEST_P(SimModel, ModelForTheOtherSocIsRefusedByName) {
    const acl::Api& api = acl::require();
    const std::string other = std::string(GetParam().soc) == "Ascend310" ? "Ascend310B4" : "Ascend310";
    {
        NpuModel m(api, pack(conv_kom(nullptr), other));
        EXPECT_EQ(m.load_error, acl::kGeLoadModel);
        const std::string why = recent(api);
        EXPECT_NE(why.find("built for " + other), std::string::npos) << why;
        EXPECT_NE(why.find(std::string("this device is ") + GetParam().soc), std::string::npos) << why;
        const std::string d = acl::describe("aclmdlLoadFromMemWithMem", m.load_error);
        EXPECT_NE(d.find("ACL_ERROR_GE_LOAD_MODEL"), std::string::npos) << d;
        EXPECT_NE(d.find("--soc_version"), std::string::npos) << d;
    }
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_P(SimModel, RealOmAndOtherFilesAreRefusedCleanly) {
    const acl::Api& api = acl::require();
    acl::ScopedContext bind;
    size_t work = 0, weight = 0;
    std::vector<uint8_t> real_om(4096, 0x5a);
    std::memcpy(real_om.data(), "IMOD", 4);
    EXPECT_EQ(api.aclmdlQuerySizeFromMem(real_om.data(), real_om.size(), &work, &weight), acl::kGeLoadModel);
    EXPECT_NE(recent(api).find("a real ATC .om"), std::string::npos);
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    EXPECT_EQ(api.aclmdlQuerySizeFromMem(kom.data(), kom.size(), &work, &weight), acl::kInvalidFile);
    std::vector<uint8_t> truncated = pack(kom, GetParam().soc);
    truncated.resize(truncated.size() - 10);
    EXPECT_EQ(api.aclmdlQuerySizeFromMem(truncated.data(), truncated.size(), &work, &weight), acl::kParseModel);
    EXPECT_EQ(api.aclmdlQuerySizeFromMem(nullptr, 10, &work, &weight), acl::kInvalidParam);
}

TEST_P(SimModel, FailedExecuteIsReportedAndLeaksNothing) {
    setenv("KES_SIM_FAIL", "aclmdlExecute:1:507011", 1);
    const acl::Api& api = acl::require();
    {
        NpuModel m(api, pack(conv_kom(nullptr), GetParam().soc));
        ASSERT_EQ(m.load_error, 0) << recent(api);
        const int e = api.aclmdlExecute(m.id, m.in, m.out);
        EXPECT_EQ(e, acl::kRtModelExecute);
        EXPECT_EQ(acl::error_status(e), KES_ERR_INTERNAL);
        const std::string d = acl::describe("aclmdlExecute", e);
        EXPECT_NE(d.find("aclmdlExecute failed: 507011 ACL_ERROR_RT_MODEL_EXECUTE"), std::string::npos) << d;
        EXPECT_NE(d.find("failure injected by KES_SIM_FAIL"), std::string::npos) << d;
        EXPECT_EQ(api.aclmdlExecute(m.id, m.in, m.out), 0) << recent(api);  // only the 1st call fails
    }
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_P(SimModel, HostBuffersAreRefusedForExecution) {
    const acl::Api& api = acl::require();
    NpuModel m(api, pack(conv_kom(nullptr), GetParam().soc));
    ASSERT_EQ(m.load_error, 0) << recent(api);
    std::vector<float> host(3 * 8 * 8);
    acl::DataBuffer* b = api.aclCreateDataBuffer(host.data(), host.size() * 4);
    acl::Dataset* ds = api.aclmdlCreateDataset();
    ASSERT_EQ(api.aclmdlAddDatasetBuffer(ds, b), 0);
    EXPECT_EQ(api.aclmdlExecute(m.id, ds, m.out), acl::kInvalidParam);
    EXPECT_NE(recent(api).find("not device memory"), std::string::npos);
    EXPECT_EQ(api.aclmdlDestroyDataset(ds), 0);
    EXPECT_EQ(api.aclDestroyDataBuffer(b), 0);
}

TEST_P(SimModel, RepeatInitIsRefusedWhileInitialised) {
    const acl::Api& api = acl::require();
    EXPECT_EQ(api.aclInit(nullptr), acl::kRepeatInitialize);
}

INSTANTIATE_TEST_SUITE_P(Sim, SimModel, testing::ValuesIn(kSimBoards), sim_board_name);
