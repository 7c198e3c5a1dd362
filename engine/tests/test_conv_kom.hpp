// test_conv_kom.hpp — the small model the Ascend tests run on the simulated NPU and on the CPU: an
// ONNX Conv + Relu converted to .kom in memory, with optional batch gears, image size gears and
// inserted static AIPP, and its .om for the simulator. Shared by the executor tests (engine/tests) and the simulator's
// own tests (board/ascend-sim/tests).
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "imod.hpp"
#include "kestrel/convert.h"
#include "test_onnx_builder.hpp"

namespace kes_test {

inline std::vector<float> ramp(size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
    return v;
}

// x [N,3,H,W] → Conv 4×3×3 pads 1 → Relu → "y" [N,4,H,W]; N dynamic with batch gears, H and W with
// image size gears, else 1 and 8×8; `aipp` (an aipp_op text) inserts static AIPP on x.
inline std::vector<uint8_t> conv_kom(const char* batches, const char* image_sizes = nullptr,
                                     const char* aipp = nullptr) {
    OnnxGraphSpec s;
    const int64_t n = batches ? -1 : 1, hw = image_sizes ? -1 : 8;
    s.inputs.push_back(value_info("x", kFloat, {n, 3, hw, hw}));
    s.outputs.push_back(value_info("y", kFloat, {n, 4, hw, hw}));
    s.initializers.push_back(tensor_f32("w", {4, 3, 3, 3}, ramp(4 * 27, 0.3f)));
    s.initializers.push_back(tensor_f32("b", {4}, ramp(4, 0.1f)));
    s.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"}, {attr_ints("pads", {1, 1, 1, 1})}));
    s.nodes.push_back(node("Relu", {"c"}, {"y"}));
    const std::vector<uint8_t> onnx = onnx_model(s);
    kes_convert_options opt;
    kes_convert_options_init(&opt);
    opt.dynamic_batch = batches;
    opt.dynamic_image_size = image_sizes;
    std::string conf;
    if (aipp) {
        conf = std::string(KES_TEST_TMPDIR) + "/ascend_executor_aipp_" + std::to_string(getpid()) + ".cfg";
        FILE* f = std::fopen(conf.c_str(), "w");
        EXPECT_NE(f, nullptr);
        std::fputs(aipp, f);
        std::fclose(f);
        opt.insert_op_conf = conf.c_str();
    }
    void* kom = nullptr;
    size_t size = 0;
    EXPECT_EQ(kes_convert_memory(onnx.data(), onnx.size(), &opt, &kom, &size, nullptr), KES_OK) << kes_last_error();
    if (aipp) std::remove(conf.c_str());
    std::vector<uint8_t> bytes(static_cast<uint8_t*>(kom), static_cast<uint8_t*>(kom) + size);
    kes_convert_free(kom);
    return bytes;
}

// Internal linkage, as when each test file had its own copy: GCC 12 then sees no out-of-bounds memset
// where it inlines write_header into a caller (a false -Warray-bounds otherwise).
namespace {
// What `kes-sim-pack in.kom out.om --soc SOC` writes: the simulator's .om around the .kom.
std::vector<uint8_t> pack(const std::vector<uint8_t>& kom, const std::string& soc) {
    std::vector<uint8_t> om(kes_sim::kImodHeaderSize + kom.size());
    kes_sim::write_header(om.data(), kom.data(), kom.size(), soc);
    std::memcpy(om.data() + kes_sim::kImodHeaderSize, kom.data(), kom.size());
    return om;
}

}  // namespace

}  // namespace kes_test
