// ascend_runtime.hpp — the sdk's private side of the AscendCL seam (kes/ascend.hpp is the shared side):
// what memory.cpp and board.cpp need from the loaded runtime. Internal to the sdk; not installed.
#pragma once

#include <cstddef>
#include <string>

#include "device_backend.hpp"
#include "kes/ascend.hpp"

namespace kes {
namespace acl {

// aclGetRecentErrMsg's text for this thread ("" when the symbol is missing or there is none).
std::string recent_runtime_message();

// The table of the loaded runtime whatever the current choice (memory made while Ascend was chosen is
// freed through it after a switch to the CPU), or nullptr when nothing is loaded.
const Api* loaded_api() noexcept;

// The backend behind KES_MEM_DEVICE for the current choice: the Ascend backend, a backend that refuses
// every allocation with the reason (Ascend required but unavailable), or nullptr for the host backend.
DeviceBackend* device_memory_backend() noexcept;

// The backend behind KES_MEM_DVPP: acldvppMalloc when Ascend is active and libacl_dvpp.so loaded, else
// nullptr (KES_MEM_DVPP is then KES_MEM_DEVICE).
DeviceBackend* dvpp_memory_backend() noexcept;

// Whether the CPU may touch KES_MEM_DEVICE (and KES_MEM_DVPP) memory under the current choice.
bool device_memory_host_accessible() noexcept;

// Copies through aclrtMemcpy when the Ascend backend is active and returns true; false (nothing done)
// otherwise. Throws kes::Error with the mapped AscendCL error.
bool copy(void* dst, size_t dst_capacity, const void* src, size_t count, int32_t kind);

// KES_BOARD_310 / KES_BOARD_310B for the active runtime's SoC, or -1 (no runtime, or a SoC without a
// Kestrel profile). Resolves the backend choice.
int detected_board() noexcept;

// Live regions of the Ascend memory backends, device and DVPP (kes_backend_shutdown refuses while any
// remain).
size_t live_device_allocations() noexcept;

}  // namespace acl

// board.cpp: adopt the runtime's SoC as the active profile unless the app chose one (KES_BOARD or
// kes_board_set).
void board_adopt_from_runtime(int board) noexcept;

}  // namespace kes
