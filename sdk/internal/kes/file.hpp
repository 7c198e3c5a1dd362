// kes/file.hpp — reading whole files of outside data (images, configs) for the modules' *_file calls.
#pragma once

#include <cstdint>
#include <vector>

namespace kes {

// The whole file at `path`. Throws kes::Error: KES_ERR_NOT_FOUND when it does not exist,
// KES_ERR_IO when it cannot be opened or read; the message names the path and the reason.
std::vector<uint8_t> read_file(const char* path);

}  // namespace kes
