// One Kestrel per process (issue 23 §3). The simulator's libascendcl.so carries a copy of Kestrel of its
// own (the CPU engine that plays the NPU). Once the app's Kestrel loads it, that copy shares the app's
// trace recorder, log level and sink, thread pool and CPU features, and reads no KES_* variable itself.
// Before, it kept its own: the simulated NPU's spans missed the app's trace (and its recorder overwrote
// the app's KES_TRACE file at exit: samples' trace tests), the app's log level and callback never reached
// it, a second pool doubled the threads, and each bad KES_* value was warned about twice.
// The state under test is read once per process: each TEST needs a process of its own, as ctest runs them.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ascend_test_env.hpp"
#include "kestrel/cpu.h"
#include "kestrel/engine.h"
#include "kestrel/log.h"
#include "kestrel/thread_pool.h"
#include "kestrel/trace.h"
#include "test_conv_kom.hpp"

using namespace kes_test;

namespace {

class OneKestrel : public AscendTest {};

// The .om of a .kom (not inlined: GCC 12 then sees a false -Warray-bounds in write_header).
__attribute__((noinline)) std::vector<uint8_t> om_of(const std::vector<uint8_t>& kom, const std::string& soc) {
    return pack(kom, soc);
}

// One execution of a .om on the simulated NPU: a tensor, or for static AIPP an 8×8 NV12 image.
void run_on_npu(const std::vector<uint8_t>& kom, bool image) {
    const std::vector<uint8_t> om = om_of(kom, "Ascend310B4");
    kes_model* model = nullptr;
    kes_model_context* ctx = nullptr;
    ASSERT_EQ(kes_model_load_from_memory(om.data(), om.size(), &model), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK) << kes_last_error();
    kes_tensor din, dout, in, out;
    ASSERT_EQ(kes_model_context_input_desc(ctx, 0, &din), KES_OK);
    ASSERT_EQ(kes_model_context_output_desc(ctx, 0, &dout), KES_OK);
    std::vector<uint8_t> x(din.size, 7);
    std::vector<float> y(dout.size / 4);
    kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y.data(), dout.size);
    if (image) {
        kes_image img;
        ASSERT_EQ(kes_image_wrap(&img, KES_PIXEL_NV12, 8, 8, 0, 0, x.data(), x.size()), KES_OK) << kes_last_error();
        const kes_model_input inputs{nullptr, &img, 1};
        EXPECT_EQ(kes_model_execute_images(ctx, &inputs, 1, &out, 1), KES_OK) << kes_last_error();
    } else {
        kes_tensor_wrap(&in, din.dtype, din.layout, din.ndim, din.shape, x.data(), din.size);
        EXPECT_EQ(kes_model_execute(ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();
    }
    kes_model_context_destroy(ctx);
    kes_model_unload(model);
}

// A model whose activations (3 MB at 256×256) make the engine spread it over the shared pool.
std::vector<uint8_t> pooled_kom() {
    return conv_kom(nullptr, "256,256");
}

std::vector<uint8_t> aipp_kom() {
    return conv_kom(nullptr, nullptr,
                    "aipp_op {\n  aipp_mode: static\n  input_format: YUV420SP_U8\n  src_image_size_w: 8\n"
                    "  src_image_size_h: 8\n  csc_switch: true\n}\n");
}

size_t count(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
    return n;
}

// Threads of the shared pools ("kes-0", "kes-1", ...: kestrel/thread_pool.h's default name).
size_t pool_threads() {
    size_t n = 0;
    DIR* d = opendir("/proc/self/task");
    if (!d) return 0;
    while (dirent* e = readdir(d)) {
        std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string name;
        if (std::getline(comm, name) && name.size() > 4 && name.compare(0, 4, "kes-") == 0 &&
            name.find_first_not_of("0123456789", 4) == std::string::npos)
            ++n;
    }
    closedir(d);
    return n;
}

std::vector<std::string> g_messages;
void collect(kes_log_level, const char* module, const char* message, void*) {
    g_messages.push_back(std::string(module) + ": " + message);
}

}  // namespace

TEST_F(OneKestrel, SimulatedNpuSpansGoToTheAppsTrace) {
    const std::string path = std::string(KES_TEST_TMPDIR) + "/one_kestrel_trace_" + std::to_string(getpid()) + ".json";
    const std::vector<uint8_t> kom = conv_kom(nullptr);
    ASSERT_EQ(kes_trace_start(path.c_str()), KES_OK) << kes_last_error();
    run_on_npu(kom, false);
    ASSERT_EQ(kes_trace_stop(), KES_OK) << kes_last_error();
    std::ifstream f(path);
    std::stringstream json;
    json << f.rdbuf();
    // The app's Ascend executor's span, and inside it the simulated NPU's (its CPU engine running the .om).
    EXPECT_EQ(count(json.str(), "\"name\":\"model_execute\""), 2u) << json.str();
    std::remove(path.c_str());
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

// KES_CPU_DISABLE=bogus gives the one warning the simulated NPU's engine has to give here.
TEST_F(OneKestrel, TheAppsLogCallbackHearsTheSimulator) {
    setenv("KES_CPU_DISABLE", "bogus", 1);
    kes_log_set_callback(collect, nullptr);
    testing::internal::CaptureStderr();
    run_on_npu(conv_kom(nullptr), false);
    const std::string err = testing::internal::GetCapturedStderr();
    kes_log_set_callback(nullptr, nullptr);
    EXPECT_EQ(count(err, "[kestrel"), 0u) << "a Kestrel message bypassed the app's callback:\n" << err;
    size_t warned = 0;
    for (const std::string& m : g_messages) warned += count(m, "KES_CPU_DISABLE: unknown feature \"bogus\"");
    EXPECT_EQ(warned, 1u);
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_F(OneKestrel, TheAppsLogLevelSilencesTheSimulator) {
    setenv("KES_CPU_DISABLE", "bogus", 1);
    ASSERT_EQ(kes_log_set_level(KES_LOG_OFF), KES_OK);
    testing::internal::CaptureStderr();
    run_on_npu(conv_kom(nullptr), false);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(count(err, "[kestrel"), 0u) << "KES_LOG_OFF, yet:\n" << err;
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

// A new worker names itself once it runs: wait up to a second for more than `have` to show.
size_t pool_threads_after(size_t have) {
    size_t n = pool_threads();
    for (int i = 0; i < 100 && n <= have; ++i) {
        usleep(10000);
        n = pool_threads();
    }
    return n;
}

TEST_F(OneKestrel, OneThreadPoolPerProcess) {
    setenv("KES_NUM_THREADS", "3", 1);
    ASSERT_NE(kes_thread_pool_default(), nullptr);
    ASSERT_EQ(pool_threads_after(1), 2u) << "the app's pool: 3 threads, the caller's among them";
    run_on_npu(pooled_kom(), false);
    EXPECT_EQ(pool_threads_after(2), 2u) << "the simulated NPU's engine started a pool of its own";
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_F(OneKestrel, EachKesVariableIsReadOnce) {
    setenv("KES_LOG_LEVEL", "bogus", 1);
    setenv("KES_BOARD", "bogus", 1);
    setenv("KES_CPU_DISABLE", "bogus", 1);
    setenv("KES_NUM_THREADS", "0", 1);
    testing::internal::CaptureStderr();
    // The app reads them (as an app's first Kestrel calls do), then runs models on the simulated NPU: one
    // spread over the pool, one with static AIPP (validated against a board profile).
    kes_board_get();
    kes_cpu_features();
    kes_thread_pool_default();
    run_on_npu(pooled_kom(), false);
    run_on_npu(aipp_kom(), true);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(count(err, "KES_LOG_LEVEL=bogus"), 1u) << err;
    EXPECT_EQ(count(err, "KES_BOARD=bogus"), 1u) << err;
    EXPECT_EQ(count(err, "KES_CPU_DISABLE: unknown feature \"bogus\""), 1u) << err;
    EXPECT_EQ(count(err, "KES_NUM_THREADS=0"), 1u) << err;
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}
