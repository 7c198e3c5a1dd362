// model_cache.hpp — where the real models and photos are (engine/tests/models/fetch_models.sh puts them in
// ${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}), and a whole-file read for the tests that use them.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kes_test {

inline std::string cache_dir() {
    const char* env = std::getenv("KES_MODEL_CACHE");
    if (env && *env) return env;
    const char* home = std::getenv("HOME");
    return std::string(home ? home : ".") + "/.cache/kestrel/models";
}

// false when the file cannot be opened.
inline bool read_bytes(const std::string& path, std::vector<uint8_t>& out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return true;
}

}  // namespace kes_test
