// ascend_test_env.hpp — test helpers for the Ascend backend against Kestrel's simulator
// (board/ascend-sim). ctest runs every TEST in a fresh process with KES_ASCEND_LIB_DIR pointing at the
// simulator; a test sets the simulator's variables before its first Kestrel call and releases the
// runtime at the end, so the binary also runs as a whole (the simulator starts over after aclFinalize).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <ostream>
#include <string>
#include <tuple>

#include "kestrel/backend.h"
#include "kestrel/board.h"
#include "kestrel/status.h"

namespace kes_test {

inline void clear_sim_env() {
    for (const char* v : {"KES_BACKEND", "KES_SIM_SOC", "KES_SIM_RUN_MODE", "KES_SIM_FAIL", "KES_SIM_STUB",
                          "KES_SIM_TASK_MS", "KES_SIM_LEAK_ABORT", "KES_SIM_LEAK_CHECK", "KES_SIM_DEVICE_MEMORY",
                          "KES_BOARD", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"}) {
        unsetenv(v);
    }
#ifdef KES_ASCEND_SIM_DIR
    setenv("KES_ASCEND_LIB_DIR", KES_ASCEND_SIM_DIR, 1);
#endif
}

// A simulated board: SoC and run mode. Param "Ascend310B4/host" style.
struct SimBoard {
    const char* soc;
    const char* mode;
};

// How ctest names an instance ("... # GetParam() = Ascend310/host"), instead of the struct's bytes.
inline void PrintTo(const SimBoard& b, std::ostream* os) {
    *os << b.soc << "/" << b.mode;
}

inline std::string sim_board_name(const testing::TestParamInfo<SimBoard>& info) {
    return std::string(info.param.soc) + "_" + info.param.mode;
}

inline const SimBoard kSimBoards[] = {
    {"Ascend310", "device"}, {"Ascend310", "host"}, {"Ascend310B4", "device"}, {"Ascend310B4", "host"}};

class AscendTest : public testing::Test {
protected:
    void SetUp() override { clear_sim_env(); }
    void TearDown() override {
        // Best effort: a test that failed half-way may leave buffers, and then shutdown says BUSY.
        kes_backend_shutdown();
        kes_backend_set_library_dir(nullptr);
        kes_backend_set(KES_BACKEND_AUTO);
    }
};

class AscendBoardTest : public testing::TestWithParam<SimBoard> {
protected:
    void SetUp() override {
        clear_sim_env();
        setenv("KES_SIM_SOC", GetParam().soc, 1);
        setenv("KES_SIM_RUN_MODE", GetParam().mode, 1);
    }
    void TearDown() override {
        kes_backend_shutdown();
        kes_backend_set(KES_BACKEND_AUTO);
    }
    bool host_mode() const { return std::string(GetParam().mode) == "host"; }
};

}  // namespace kes_test
