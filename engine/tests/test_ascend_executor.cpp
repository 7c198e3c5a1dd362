// The engine's Ascend executor through the public C API only: a .om (the simulator's IMOD container
// around a .kom built here, the bytes kes-sim-pack writes) loads with kes_model_load_*, runs on the
// simulated NPU and gives exactly what the CPU executor gives on the same .kom — on each simulated SoC
// and run mode. Faults give a clear status and message naming the AscendCL call and code, and leak
// nothing: kes_backend_shutdown runs the simulator's aclFinalize ledger and fails on any leftover.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ascend_test_env.hpp"
#include "imod.hpp"
#include "kestrel/aipp.h"
#include "kestrel/backend.h"
#include "kestrel/convert.h"
#include "kestrel/engine.h"
#include "kestrel/memory.h"
#include "test_conv_kom.hpp"
#include "test_onnx_builder.hpp"

using namespace kes_test;

namespace {

std::string other_soc(const std::string& soc) {
    return soc == "Ascend310" ? "Ascend310B4" : "Ascend310";
}

// A model and one context, loaded through the public API; runs one execution at a gear.
struct Loaded {
    kes_model* model = nullptr;
    kes_model_context* ctx = nullptr;
    kes_status load = KES_OK, create = KES_OK;
    std::string error;

    explicit Loaded(const std::vector<uint8_t>& bytes) {
        load = kes_model_load_from_memory(bytes.data(), bytes.size(), &model);
        if (load != KES_OK) {
            error = kes_last_error();
            return;
        }
        create = kes_model_context_create(model, nullptr, 0, &ctx);
        if (create != KES_OK) error = kes_last_error();
    }
    ~Loaded() {
        kes_model_context_destroy(ctx);
        kes_model_unload(model);
    }
    const char* backend() const {
        kes_model_metadata md{};
        md.struct_size = sizeof md;
        kes_model_get_metadata(model, &md);
        return md.source_format;  // "om" for the Ascend executor
    }
    // One execution of input 0 → output 0 at the gear (batch, or h × w); returns the output.
    std::vector<float> execute(const std::vector<float>& x, int64_t batch = 0, int64_t h = 0, int64_t w = 0,
                               kes_status* status = nullptr) {
        if (batch) {
            EXPECT_EQ(kes_model_context_set_batch(ctx, batch), KES_OK) << kes_last_error();
        }
        if (h) {
            EXPECT_EQ(kes_model_context_set_image_size(ctx, h, w), KES_OK) << kes_last_error();
        }
        kes_tensor din, dout, in, out;
        EXPECT_EQ(kes_model_context_input_desc(ctx, 0, &din), KES_OK);
        EXPECT_EQ(kes_model_context_output_desc(ctx, 0, &dout), KES_OK);
        EXPECT_EQ(din.size, x.size() * 4) << "input size at this gear";
        std::vector<float> y(dout.size / 4, -7.0f);
        kes_tensor_wrap(&in, din.dtype, din.layout, din.ndim, din.shape, const_cast<float*>(x.data()), din.size);
        kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
        const kes_status st = kes_model_execute(ctx, &in, 1, &out, 1);
        if (status) {
            *status = st;
            error = st == KES_OK ? "" : kes_last_error();
        } else {
            EXPECT_EQ(st, KES_OK) << kes_last_error();
        }
        return y;
    }
};

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

class AscendExecutor : public AscendBoardTest {
protected:
    std::string soc() const { return GetParam().soc; }
    // Nothing the executor made is left: the simulator's aclFinalize ledger runs here.
    void expect_no_leak() { EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error(); }
};

}  // namespace

TEST_P(AscendExecutor, StaticModelMatchesTheCpuExecutor) {
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    const std::vector<float> x = ramp(3 * 8 * 8, 2.0f);
    {
        Loaded cpu(kom), npu(pack(kom, soc()));
        ASSERT_EQ(npu.load, KES_OK) << npu.error;
        ASSERT_EQ(npu.create, KES_OK) << npu.error;
        EXPECT_STREQ(npu.backend(), "om");
        EXPECT_EQ(kes_backend_active(), KES_BACKEND_ASCEND);
        size_t n = 0;
        ASSERT_EQ(kes_model_input_count(npu.model, &n), KES_OK);
        EXPECT_EQ(n, 1u);
        const char* name = nullptr;
        ASSERT_EQ(kes_model_input_name(npu.model, 0, &name), KES_OK);
        EXPECT_STREQ(name, "x");
        ASSERT_EQ(kes_model_output_name(npu.model, 0, &name), KES_OK);
        EXPECT_STREQ(name, "y");
        kes_tensor d;
        ASSERT_EQ(kes_model_input_desc(npu.model, 0, &d), KES_OK);
        EXPECT_EQ(d.dtype, KES_F32);
        ASSERT_EQ(d.ndim, 4u);
        EXPECT_EQ(d.shape[1], 3);
        EXPECT_EQ(d.shape[3], 8);
        kes_model_metadata md{};
        md.struct_size = sizeof md;
        ASSERT_EQ(kes_model_get_metadata(npu.model, &md), KES_OK);
        EXPECT_EQ(std::string(md.target_board), soc());
        EXPECT_EQ(npu.execute(x), cpu.execute(x));
        EXPECT_EQ(npu.execute(x), cpu.execute(x));  // datasets reused
        // No per-layer view of the NPU through AscendCL: said, not faked.
        EXPECT_EQ(kes_model_context_set_profiling(npu.ctx, 1), KES_ERR_UNSUPPORTED);
        EXPECT_TRUE(has(kes_last_error(), "per-layer")) << kes_last_error();
        const char* aipp = "x";
        ASSERT_EQ(kes_model_input_aipp(npu.model, 0, &aipp), KES_OK);
        EXPECT_EQ(aipp, nullptr);
    }
    expect_no_leak();
}

TEST_P(AscendExecutor, QuerySizeAndCallerDeviceMemoryFromAPool) {
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    const std::vector<uint8_t> om = pack(kom, soc());
    const std::vector<float> x = ramp(3 * 8 * 8, 1.5f);
    size_t work = 0, weight = 0;
    ASSERT_EQ(kes_model_query_size(om.data(), om.size(), &work, &weight), KES_OK) << kes_last_error();
    EXPECT_GT(weight, 0u);
    {
        kes_mem_pool_config cfg;
        kes_mem_pool_config_init(&cfg);
        cfg.backend = KES_MEM_DEVICE;
        cfg.initial_bytes = (work + weight) + 64 * 1024;
        cfg.name = "model";
        kes_mem_pool* pool = nullptr;
        ASSERT_EQ(kes_mem_pool_create(&cfg, &pool), KES_OK) << kes_last_error();
        void *w = nullptr, *wt = nullptr;
        if (work) {
            ASSERT_EQ(kes_mem_pool_alloc(pool, work, &w), KES_OK);
        }
        ASSERT_EQ(kes_mem_pool_alloc(pool, weight, &wt), KES_OK);
        kes_model* m = nullptr;
        ASSERT_EQ(kes_model_load_from_memory_with_mem(om.data(), om.size(), w, work, wt, weight, &m), KES_OK)
            << kes_last_error();
        size_t gw = 0, gwt = 0;
        ASSERT_EQ(kes_model_get_size(m, &gw, &gwt), KES_OK);
        EXPECT_EQ(gw, work);
        EXPECT_EQ(gwt, weight);
        kes_model_context* c = nullptr;
        ASSERT_EQ(kes_model_context_create(m, nullptr, 0, &c), KES_OK) << kes_last_error();
        kes_tensor din, dout, in, out;
        kes_model_context_input_desc(c, 0, &din);
        kes_model_context_output_desc(c, 0, &dout);
        std::vector<float> y(dout.size / 4);
        kes_tensor_wrap(&in, din.dtype, din.layout, din.ndim, din.shape, const_cast<float*>(x.data()), din.size);
        kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
        ASSERT_EQ(kes_model_execute(c, &in, 1, &out, 1), KES_OK) << kes_last_error();
        Loaded cpu(kom);
        EXPECT_EQ(y, cpu.execute(x));
        // A context's work memory holds its device I/O buffers: too small is named.
        void* small = nullptr;
        ASSERT_EQ(kes_mem_pool_alloc(pool, 128, &small), KES_OK);
        kes_model_context* c2 = nullptr;
        EXPECT_EQ(kes_model_context_create(m, small, 128, &c2), KES_ERR_INVALID_ARGUMENT);
        EXPECT_TRUE(has(kes_last_error(), "device input and output buffers")) << kes_last_error();
        kes_model_context_destroy(c);
        kes_model_unload(m);
        kes_mem_pool_destroy(pool);
    }
    // Host memory is not device memory: the runtime refuses it and the message says so.
    {
        void *w = nullptr, *wt = nullptr;
        ASSERT_EQ(kes_mem_alloc(KES_MEM_HOST, weight, &wt), KES_OK);
        if (work) {
            ASSERT_EQ(kes_mem_alloc(KES_MEM_HOST, work, &w), KES_OK);
        }
        kes_model* m = nullptr;
        EXPECT_NE(kes_model_load_from_memory_with_mem(om.data(), om.size(), w, work, wt, weight, &m), KES_OK);
        const std::string why = kes_last_error();
        EXPECT_TRUE(has(why, "aclmdlLoadFromMemWithMem")) << why;
        EXPECT_TRUE(has(why, "device memory")) << why;
        EXPECT_EQ(m, nullptr);
        kes_mem_free(w);
        kes_mem_free(wt);
    }
    expect_no_leak();
}

TEST_P(AscendExecutor, DynamicBatchGearsMatchTheCpuExecutor) {
    const std::vector<uint8_t> kom = conv_kom("1,2,4");
    {
        Loaded cpu(kom), npu(pack(kom, soc()));
        ASSERT_EQ(npu.load, KES_OK) << npu.error;
        ASSERT_EQ(npu.create, KES_OK) << npu.error;
        size_t n = 0;
        ASSERT_EQ(kes_model_input_count(npu.model, &n), KES_OK);
        EXPECT_EQ(n, 1u) << "ascend_mbatch_shape_data is the runtime's, not the app's";
        int64_t gears[8];
        ASSERT_EQ(kes_model_batch_gears(npu.model, gears, 8, &n), KES_OK);
        ASSERT_EQ(n, 3u);
        EXPECT_EQ(gears[0], 1);
        EXPECT_EQ(gears[2], 4);
        kes_tensor d;
        ASSERT_EQ(kes_model_input_desc(npu.model, 0, &d), KES_OK);
        EXPECT_EQ(d.shape[0], 4) << "described at the largest gear";
        const std::vector<float> x4 = ramp(4 * 3 * 8 * 8, 0.7f);
        EXPECT_EQ(npu.execute(x4), cpu.execute(x4));  // no gear chosen: the largest
        const std::vector<float> x2 = ramp(2 * 3 * 8 * 8, 1.0f);
        EXPECT_EQ(npu.execute(x2, 2), cpu.execute(x2, 2));
        ASSERT_EQ(kes_model_context_output_desc(npu.ctx, 0, &d), KES_OK);
        EXPECT_EQ(d.shape[0], 2);
        const std::vector<float> x1 = ramp(3 * 8 * 8, 1.3f);
        EXPECT_EQ(npu.execute(x1, 1), cpu.execute(x1, 1));
        EXPECT_EQ(kes_model_context_set_batch(npu.ctx, 3), KES_ERR_INVALID_ARGUMENT);
        EXPECT_TRUE(has(kes_last_error(), "not one of the model's gears")) << kes_last_error();
    }
    expect_no_leak();
}

TEST_P(AscendExecutor, DynamicImageSizeGearsMatchTheCpuExecutor) {
    const std::vector<uint8_t> kom = conv_kom(nullptr, "8,8;12,12");
    {
        Loaded cpu(kom), npu(pack(kom, soc()));
        ASSERT_EQ(npu.load, KES_OK) << npu.error;
        ASSERT_EQ(npu.create, KES_OK) << npu.error;
        int64_t sizes[8];
        size_t n = 0;
        ASSERT_EQ(kes_model_image_sizes(npu.model, sizes, 4, &n), KES_OK);
        ASSERT_EQ(n, 2u);
        EXPECT_EQ(sizes[2], 12);
        const std::vector<float> x8 = ramp(3 * 8 * 8, 1.25f);
        EXPECT_EQ(npu.execute(x8, 0, 8, 8), cpu.execute(x8, 0, 8, 8));
        kes_tensor d;
        ASSERT_EQ(kes_model_context_output_desc(npu.ctx, 0, &d), KES_OK);
        EXPECT_EQ(d.shape[2], 8);
        EXPECT_EQ(d.shape[3], 8);
        const std::vector<float> x12 = ramp(3 * 12 * 12, 0.9f);
        EXPECT_EQ(npu.execute(x12, 0, 12, 12), cpu.execute(x12, 0, 12, 12));
        EXPECT_EQ(kes_model_context_set_image_size(npu.ctx, 9, 9), KES_ERR_INVALID_ARGUMENT);
    }
    expect_no_leak();
}

TEST_P(AscendExecutor, StaticAippTakesTheImageBytesAndMatchesTheCpuExecutor) {
    const char* aipp =
        "aipp_op {\n  aipp_mode: static\n  input_format: YUV420SP_U8\n  src_image_size_w: 8\n  src_image_size_h: 8\n"
        "  csc_switch: true\n  mean_chn_0: 16\n  var_reci_chn_0: 0.5\n}\n";
    const std::vector<uint8_t> kom = conv_kom(nullptr, nullptr, aipp);
    std::vector<uint8_t> nv12(8 * 8 * 3 / 2);
    for (size_t i = 0; i < nv12.size(); ++i) nv12[i] = static_cast<uint8_t>(37 * i + 11);
    kes_image image;
    ASSERT_EQ(kes_image_wrap(&image, KES_PIXEL_NV12, 8, 8, 0, 0, nv12.data(), nv12.size()), KES_OK) << kes_last_error();
    auto run_images = [&](Loaded& r) {
        kes_tensor dout, out;
        EXPECT_EQ(kes_model_context_output_desc(r.ctx, 0, &dout), KES_OK);
        std::vector<float> y(dout.size / 4, -7.0f);
        kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
        kes_model_input in{nullptr, &image, 1};
        EXPECT_EQ(kes_model_execute_images(r.ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();
        return y;
    };
    {
        Loaded cpu(kom), npu(pack(kom, soc()));
        ASSERT_EQ(cpu.load, KES_OK) << cpu.error;
        ASSERT_EQ(npu.load, KES_OK) << npu.error;
        ASSERT_EQ(npu.create, KES_OK) << npu.error;
        kes_tensor d;
        ASSERT_EQ(kes_model_input_desc(npu.model, 0, &d), KES_OK);
        EXPECT_EQ(d.dtype, KES_U8) << "ATC makes a static-AIPP input the image buffer";
        EXPECT_EQ(d.size, nv12.size());
        const std::vector<float> want = run_images(cpu);
        EXPECT_EQ(run_images(npu), want);
        // An image of another size is named with both byte counts.
        kes_image wrong;
        std::vector<uint8_t> small(4 * 4 * 3 / 2);
        ASSERT_EQ(kes_image_wrap(&wrong, KES_PIXEL_NV12, 4, 4, 0, 0, small.data(), small.size()), KES_OK);
        kes_tensor dout, out;
        kes_model_context_output_desc(npu.ctx, 0, &dout);
        std::vector<float> y(dout.size / 4);
        kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
        kes_model_input in{nullptr, &wrong, 1};
        EXPECT_EQ(kes_model_execute_images(npu.ctx, &in, 1, &out, 1), KES_ERR_INVALID_ARGUMENT);
        EXPECT_TRUE(has(kes_last_error(), "96 bytes per image")) << kes_last_error();
    }
    expect_no_leak();
}

// Dynamic AIPP: a 16x16 NV12 image cropped to the model's 8x8 with per-item mean, min and var_reci.
kes_aipp_dynamic* dynamic_params() {
    kes_aipp_dynamic* d = nullptr;
    EXPECT_EQ(kes_aipp_dynamic_create(nullptr, 1, &d), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_aipp_dynamic_set_input_format(d, KES_AIPP_YUV420SP_U8), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_src_image_size(d, 16, 16), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_csc_params(d, 1, 298, 0, 409, 298, -100, -208, 298, 516, 0, 0, 0, 0, 16, 128, 128),
              KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_crop_params(d, 1, 4, 2, 6, 6, 0), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_aipp_dynamic_set_padding_params(d, 1, 1, 1, 1, 1, 0), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_aipp_dynamic_set_dtc_pixel_mean(d, 100, 110, 120, 0, 0), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_dtc_pixel_min(d, 0.5f, 0.25f, 0.0f, 0.0f, 0), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_pixel_var_reci(d, 0.0078125f, 0.01f, 0.02f, 1.0f, 0), KES_OK);
    return d;
}

constexpr const char* kDynamicAippConf =
    "aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: 1536\n}\n";

TEST_P(AscendExecutor, DynamicAippMatchesTheCpuExecutor) {
    const std::vector<uint8_t> kom = conv_kom(nullptr, nullptr, kDynamicAippConf);
    std::vector<uint8_t> nv12(16 * 16 * 3 / 2);
    for (size_t i = 0; i < nv12.size(); ++i) nv12[i] = static_cast<uint8_t>(37 * i + 11);
    kes_image image;
    ASSERT_EQ(kes_image_wrap(&image, KES_PIXEL_NV12, 16, 16, 0, 0, nv12.data(), nv12.size()), KES_OK);
    kes_aipp_dynamic* params = dynamic_params();
    auto run_images = [&](Loaded& r, kes_status want = KES_OK) {
        kes_tensor dout, out;
        EXPECT_EQ(kes_model_context_output_desc(r.ctx, 0, &dout), KES_OK);
        std::vector<float> y(dout.size / 4, -7.0f);
        kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
        kes_model_input in{nullptr, &image, 1};
        EXPECT_EQ(kes_model_execute_images(r.ctx, &in, 1, &out, 1), want) << kes_last_error();
        r.error = kes_last_error();
        return y;
    };
    {
        Loaded cpu(kom), npu(pack(kom, soc()));
        ASSERT_EQ(cpu.load, KES_OK) << cpu.error;
        ASSERT_EQ(npu.load, KES_OK) << npu.error;
        ASSERT_EQ(npu.create, KES_OK) << npu.error;
        const char* text = nullptr;
        ASSERT_EQ(kes_model_input_aipp(npu.model, 0, &text), KES_OK);
        ASSERT_NE(text, nullptr);
        EXPECT_TRUE(has(text, "dynamic") && has(text, "1536")) << text;
        size_t inputs = 0;
        kes_model_input_count(npu.model, &inputs);
        EXPECT_EQ(inputs, 1u) << "ascend_dynamic_aipp_data is hidden";
        // No parameters yet: the error names the call to make.
        run_images(npu, KES_ERR_INVALID_ARGUMENT);
        EXPECT_TRUE(has(npu.error, "kes_model_context_set_dynamic_aipp")) << npu.error;
        ASSERT_EQ(kes_model_context_set_dynamic_aipp(cpu.ctx, 0, params), KES_OK) << kes_last_error();
        ASSERT_EQ(kes_model_context_set_dynamic_aipp(npu.ctx, 0, params), KES_OK) << kes_last_error();
        const std::vector<float> want = run_images(cpu);
        EXPECT_EQ(run_images(npu), want);
        EXPECT_EQ(run_images(npu), want) << "a second execution";
        // A plain execution cannot fill the hidden input.
        std::vector<float> x(nv12.size());
        kes_status st = KES_OK;
        kes_tensor din;
        kes_model_context_input_desc(npu.ctx, 0, &din);
        std::vector<uint8_t> raw(din.size);
        kes_tensor in, out;
        kes_tensor dout;
        kes_model_context_output_desc(npu.ctx, 0, &dout);
        std::vector<float> y(dout.size / 4);
        kes_tensor_wrap(&in, din.dtype, din.layout, din.ndim, din.shape, raw.data(), din.size);
        kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
        st = kes_model_execute(npu.ctx, &in, 1, &out, 1);
        EXPECT_EQ(st, KES_ERR_INVALID_ARGUMENT);
        EXPECT_TRUE(has(kes_last_error(), "kes_model_context_set_dynamic_aipp")) << kes_last_error();
    }
    kes_aipp_dynamic_destroy(params);
    expect_no_leak();
}

TEST_P(AscendExecutor, DynamicAippFailedSetInputAippNamesTheCallAndLeaksNothing) {
    setenv("KES_SIM_FAIL", "aclmdlSetInputAIPP:1:100000", 1);
    const std::vector<uint8_t> kom = conv_kom(nullptr, nullptr, kDynamicAippConf);
    std::vector<uint8_t> nv12(16 * 16 * 3 / 2, 90);
    kes_image image;
    ASSERT_EQ(kes_image_wrap(&image, KES_PIXEL_NV12, 16, 16, 0, 0, nv12.data(), nv12.size()), KES_OK);
    kes_aipp_dynamic* params = dynamic_params();
    {
        Loaded npu(pack(kom, soc()));
        ASSERT_EQ(npu.load, KES_OK) << npu.error;
        ASSERT_EQ(kes_model_context_set_dynamic_aipp(npu.ctx, 0, params), KES_OK) << kes_last_error();
        kes_tensor dout, out;
        kes_model_context_output_desc(npu.ctx, 0, &dout);
        std::vector<float> y(dout.size / 4);
        kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
        kes_model_input in{nullptr, &image, 1};
        EXPECT_NE(kes_model_execute_images(npu.ctx, &in, 1, &out, 1), KES_OK);
        EXPECT_TRUE(has(kes_last_error(), "aclmdlSetInputAIPP") && has(kes_last_error(), "100000")) << kes_last_error();
        EXPECT_EQ(kes_model_execute_images(npu.ctx, &in, 1, &out, 1), KES_OK) << "the next runs: " << kes_last_error();
    }
    unsetenv("KES_SIM_FAIL");
    kes_aipp_dynamic_destroy(params);
    expect_no_leak();
}

TEST_P(AscendExecutor, StaticAippTakesAnImageInDvppMemoryInPlace) {
    const char* aipp =
        "aipp_op {\n  aipp_mode: static\n  input_format: YUV420SP_U8\n  src_image_size_w: 8\n  src_image_size_h: 8\n"
        "  csc_switch: true\n  mean_chn_0: 16\n  var_reci_chn_0: 0.5\n}\n";
    const std::vector<uint8_t> kom = conv_kom(nullptr, nullptr, aipp);
    std::vector<uint8_t> nv12(8 * 8 * 3 / 2);
    for (size_t i = 0; i < nv12.size(); ++i) nv12[i] = static_cast<uint8_t>(53 * i + 7);
    {
        Loaded cpu(kom), npu(pack(kom, soc()));
        ASSERT_EQ(npu.create, KES_OK) << npu.error;
        auto run = [&](Loaded& r, const kes_image& image) {
            kes_tensor dout, out;
            EXPECT_EQ(kes_model_context_output_desc(r.ctx, 0, &dout), KES_OK);
            std::vector<float> y(dout.size / 4, -7.0f);
            kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
            kes_model_input in{nullptr, &image, 1};
            EXPECT_EQ(kes_model_execute_images(r.ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();
            return y;
        };
        kes_image host;
        ASSERT_EQ(kes_image_wrap(&host, KES_PIXEL_NV12, 8, 8, 0, 0, nv12.data(), nv12.size()), KES_OK);
        const std::vector<float> want = run(cpu, host);
        // The image in DVPP memory (where a VPC output lands on a board): the model reads it in place, in
        // both run modes (the CPU never touches it on a PCIe card); twice, so the context's own input
        // buffer is back in the dataset in between.
        void* dvpp = nullptr;
        ASSERT_EQ(kes_mem_alloc(KES_MEM_DVPP, nv12.size(), &dvpp), KES_OK) << kes_last_error();
        ASSERT_EQ(kes_mem_copy(dvpp, nv12.size(), nv12.data(), nv12.size(), KES_MEMCPY_HOST_TO_DEVICE), KES_OK);
        kes_image on_device;
        ASSERT_EQ(kes_image_wrap(&on_device, KES_PIXEL_NV12, 8, 8, 0, 0, dvpp, nv12.size()), KES_OK);
        on_device.owns_data = 1;  // a kes_mem_alloc buffer: kes_image_memory finds it, release frees it
        EXPECT_EQ(kes_image_memory(&on_device), KES_MEM_DVPP);
        EXPECT_EQ(run(npu, on_device), want);
        EXPECT_EQ(run(npu, host), want);
        EXPECT_EQ(run(npu, on_device), want);
        kes_image_release(&on_device);
    }
    expect_no_leak();
}

TEST_P(AscendExecutor, AsyncExecutionRunsOnTheWorkerThreadWithTheContextBound) {
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    const std::vector<float> x = ramp(3 * 8 * 8, 0.6f);
    {
        Loaded cpu(kom), npu(pack(kom, soc()));
        ASSERT_EQ(npu.create, KES_OK) << npu.error;
        kes_tensor din, dout, in, out;
        kes_model_context_input_desc(npu.ctx, 0, &din);
        kes_model_context_output_desc(npu.ctx, 0, &dout);
        std::vector<float> y(dout.size / 4);
        kes_tensor_wrap(&in, din.dtype, din.layout, din.ndim, din.shape, const_cast<float*>(x.data()), din.size);
        kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
        ASSERT_EQ(kes_model_execute_async(npu.ctx, &in, 1, &out, 1, nullptr, nullptr), KES_OK);
        ASSERT_EQ(kes_model_context_wait(npu.ctx), KES_OK) << kes_last_error();
        EXPECT_EQ(y, cpu.execute(x));
    }
    expect_no_leak();
}

// ---- faults ------------------------------------------------------------------------------------------

TEST_P(AscendExecutor, DeviceOutOfMemoryAtEveryAllocationLeaksNothing) {
    const std::vector<uint8_t> om = pack(conv_kom(nullptr), soc());
    // The load allocates work and weight memory, the context its input and output buffers.
    for (int n = 1; n <= 4; ++n) {
        const std::string fault = "aclrtMalloc:" + std::to_string(n) + ":207018";
        setenv("KES_SIM_FAIL", fault.c_str(), 1);
        {
            Loaded npu(om);
            const kes_status st = npu.load != KES_OK ? npu.load : npu.create;
            EXPECT_EQ(st, KES_ERR_OUT_OF_MEMORY) << fault << ": " << npu.error;
            EXPECT_TRUE(has(npu.error, "aclrtMalloc")) << npu.error;
            EXPECT_TRUE(has(npu.error, "ACL_ERROR_RT_DEVICE_OOM")) << npu.error;
            EXPECT_TRUE(has(npu.error, "device memory")) << npu.error;
        }
        expect_no_leak();
    }
}

TEST_P(AscendExecutor, FailedExecuteNamesTheCallAndCodeAndTheNextRuns) {
    setenv("KES_SIM_FAIL", "aclmdlExecuteAsync:1:507011", 1);
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    const std::vector<float> x = ramp(3 * 8 * 8, 1.1f);
    {
        Loaded cpu(kom), npu(pack(kom, soc()));
        ASSERT_EQ(npu.create, KES_OK) << npu.error;
        kes_status st = KES_OK;
        npu.execute(x, 0, 0, 0, &st);
        EXPECT_EQ(st, KES_ERR_INTERNAL);
        EXPECT_TRUE(has(npu.error, "aclmdlExecuteAsync failed: 507011 ACL_ERROR_RT_MODEL_EXECUTE")) << npu.error;
        EXPECT_EQ(npu.execute(x), cpu.execute(x));
    }
    expect_no_leak();
}

TEST_P(AscendExecutor, SyncTimeoutIsATimeoutAndTheContextStillCleansUp) {
    setenv("KES_SIM_TASK_MS", "400", 1);
    setenv("KES_ASCEND_SYNC_TIMEOUT_MS", "20", 1);
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    const std::vector<float> x = ramp(3 * 8 * 8, 0.8f);
    {
        Loaded cpu(kom), npu(pack(kom, soc()));
        ASSERT_EQ(npu.create, KES_OK) << npu.error;
        kes_status st = KES_OK;
        npu.execute(x, 0, 0, 0, &st);
        EXPECT_EQ(st, KES_ERR_TIMEOUT) << npu.error;
        EXPECT_TRUE(has(npu.error, "aclrtSynchronizeStreamWithTimeout")) << npu.error;
        EXPECT_TRUE(has(npu.error, "507046")) << npu.error;
        EXPECT_TRUE(has(npu.error, "KES_ASCEND_SYNC_TIMEOUT_MS")) << npu.error;
        setenv("KES_ASCEND_SYNC_TIMEOUT_MS", "-1", 1);
        EXPECT_EQ(npu.execute(x), cpu.execute(x));  // the late work drains first
        setenv("KES_ASCEND_SYNC_TIMEOUT_MS", "20", 1);
        npu.execute(x, 0, 0, 0, &st);  // left queued: the context's destruction waits for it
        EXPECT_EQ(st, KES_ERR_TIMEOUT);
    }
    unsetenv("KES_ASCEND_SYNC_TIMEOUT_MS");
    expect_no_leak();
}

TEST_P(AscendExecutor, ModelForTheOtherSocNamesBothChips) {
    const std::string other = other_soc(soc());
    {
        Loaded npu(pack(conv_kom(nullptr), other));
        EXPECT_EQ(npu.load, KES_ERR_UNSUPPORTED);
        EXPECT_TRUE(has(npu.error, "built for " + other)) << npu.error;
        EXPECT_TRUE(has(npu.error, "this device is " + soc())) << npu.error;
        EXPECT_TRUE(has(npu.error, "--soc_version=" + soc())) << npu.error;
    }
    expect_no_leak();
}

TEST_P(AscendExecutor, RealOmIsRefusedByTheRuntimeWithItsReason) {
    std::vector<uint8_t> real(4096, 0x5a);
    std::memcpy(real.data(), "IMOD", 4);
    kes_model* m = nullptr;
    EXPECT_NE(kes_model_load_from_memory(real.data(), real.size(), &m), KES_OK);
    const std::string why = kes_last_error();
    EXPECT_TRUE(has(why, "aclmdlQuerySizeFromMem")) << why;
    EXPECT_TRUE(has(why, "545001")) << why;
    expect_no_leak();
}

TEST_P(AscendExecutor, StubLibraryIsNamed) {
    setenv("KES_SIM_STUB", "1", 1);
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    Loaded npu(pack(kom, soc()));
    EXPECT_EQ(npu.load, KES_ERR_UNSUPPORTED);
    EXPECT_TRUE(has(npu.error, "stub")) << npu.error;
    EXPECT_TRUE(has(npu.error, "Ascend .om")) << npu.error;
    Loaded cpu(kom);  // the .kom still runs on the CPU
    EXPECT_EQ(cpu.load, KES_OK) << cpu.error;
}

TEST_P(AscendExecutor, MissingLibraryIsNamed) {
    setenv("KES_ASCEND_LIB_DIR", "/nonexistent/ascend", 1);
    Loaded npu(pack(conv_kom(nullptr), soc()));
    EXPECT_EQ(npu.load, KES_ERR_UNSUPPORTED);
    EXPECT_TRUE(has(npu.error, "libascendcl.so")) << npu.error;
    EXPECT_TRUE(has(npu.error, "KES_ASCEND_LIB_DIR")) << npu.error;
}

TEST_P(AscendExecutor, BackendForcedToCpuIsNamed) {
    setenv("KES_BACKEND", "cpu", 1);
    const std::vector<uint8_t> om = pack(conv_kom(nullptr), soc());
    size_t work = 0, weight = 0;
    EXPECT_EQ(kes_model_query_size(om.data(), om.size(), &work, &weight), KES_ERR_UNSUPPORTED);
    const std::string why = kes_last_error();
    EXPECT_TRUE(has(why, "cpu")) << why;
}

INSTANTIATE_TEST_SUITE_P(Sim, AscendExecutor, testing::ValuesIn(kSimBoards), sim_board_name);
