// fuzz_aipp_config.cpp — libFuzzer target for the ATC aipp config parser (BOARD-RULES §AIPP-fields).
//
// Whatever the bytes, parsing must return a status, never crash; a config that parses must
// serialise, and the serialised text must parse back to the same params (the round-trip promise
// of aipp.h), otherwise the target aborts so the fuzzer reports the input.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kestrel/aipp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kes_aipp_config* cfg = nullptr;
    if (kes_aipp_config_parse(reinterpret_cast<const char*>(data), size, "fuzz.cfg", &cfg) != KES_OK) return 0;
    const uint32_t n = kes_aipp_config_count(cfg);
    std::vector<kes_aipp_params> ops(n);
    for (uint32_t i = 0; i < n; ++i) {
        ops[i].struct_size = sizeof(kes_aipp_params);
        if (kes_aipp_config_get(cfg, i, &ops[i]) != KES_OK) std::abort();
    }
    kes_aipp_config_destroy(cfg);
    size_t needed = 0;
    kes_aipp_params_serialize(ops.data(), n, nullptr, 0, &needed);
    std::vector<char> text(needed);
    if (needed == 0 || kes_aipp_params_serialize(ops.data(), n, text.data(), text.size(), nullptr) != KES_OK) {
        return 0;  // e.g. a related_input_name the writer cannot quote
    }
    kes_aipp_config* again = nullptr;
    if (kes_aipp_config_parse(text.data(), needed - 1, "roundtrip.cfg", &again) != KES_OK) std::abort();
    if (kes_aipp_config_count(again) != n) std::abort();
    for (uint32_t i = 0; i < n; ++i) {
        kes_aipp_params p;
        p.struct_size = sizeof(p);
        if (kes_aipp_config_get(again, i, &p) != KES_OK) std::abort();
        if (std::memcmp(&p, &ops[i], sizeof(p)) != 0) std::abort();
    }
    kes_aipp_config_destroy(again);
    return 0;
}
