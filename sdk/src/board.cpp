// Board profiles: the DVPP/AIPP rules of each board, as numbers (docs/BOARD-RULES.md).
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ascend_runtime.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kestrel/board.h"

#ifndef KES_DEFAULT_BOARD_NAME
#define KES_DEFAULT_BOARD_NAME "310B"
#endif

namespace kes {
namespace {

// Ascend 310 (DVPP V1 as on Atlas 200 DK).
constexpr kes_board_profile k310 = {
    KES_BOARD_310, "310", "Ascend 310 (Atlas 200 DK, Atlas 200/300/500)",
    8,  // 8x Cortex-A55 class (BOARD-RULES §CPU: UNCONFIRMED how many the app may use)
    // §JPEGD: align128(w) x align16(h), 32..8192
    128, 16, 32, 8192,
    // §JPEGE: width stride multiple of 16, 32..8192
    16, 32, 8192,
    // §PNGD: PredictDecSize uses align128(w) x align16(h); 32..4096
    128, 16, 32, 4096,
    // §VPC: output align16(w) x align2(h); 10x6..4096x4096; NV12/NV21 input up to 8192 ("8K")
    16, 2, 10, 6, 4096, 8192, 4096, 4096,
    1,    // ROI left/top even, right/bottom odd
    16,   // paste ROI left 16-aligned
    256,  // BATCH_ROI_MAX_SIZE
    32,
    16,  // scale [1/32, 16] (mxVision rule; UNCONFIRMED for acldvpp itself, BOARD-RULES §VPC)
    // §VDEC: align16(w) x align2(h); 128..4096; 32 channels (V100_CHANNEL_ID_CEILING=31)
    16, 2, 128, 4096, 32,
    // §VENC: 310 limits UNCONFIRMED (believed ~128..1920); we use 128..1920
    128, 1920,
    // §AIPP-order: src 1..4096; dynamic output width <= 1080; no resize
    4096, 1080, 0,
    0,   // JPEGD keeps odd 4:2:0 sizes
    1,   // VPC writes NV12/NV21 only
    1,   // no colour-matrix setting
    16,  // VENC width stride (KES_VENC_WIDTH_STRIDE_ALIGN)
    0,   // H.265: vdec_max_dim
};

// Ascend 310B (Atlas 200I DK A2, Orange Pi AIpro).
constexpr kes_board_profile k310B = {
    KES_BOARD_310B, "310B", "Ascend 310B (Atlas 200I DK A2, Orange Pi AIpro)",
    4,  // 4x TaiShan V200M
    // JPEGD: align64(w) x align16(h); up to 16384 per the DK A2 spec
    64, 16, 32, 16384,
    // JPEGE: up to 16384
    16, 32, 16384,
    // PNGD: the 310B doc gives no PNGD stride; we follow its JPEGD width alignment (UNCONFIRMED)
    64, 16, 32, 4096,
    // VPC: no width alignment, height align2; output 10x6..4096x8192; input up to 8192
    1, 2, 10, 6, 8192, 8192, 4096, 8192,
    0,  // no ROI parity rule
    1,  // paste left: no documented alignment on 310B (UNCONFIRMED)
    256, 32, 16,
    // VDEC: V1 keeps align16 x align2 (the VDEC contract); H.264 up to 8192
    16, 2, 128, 8192, 32,
    // §VENC: 114..8192
    114, 8192, 4096, 1080, 0,
    1,     // JPEGD rounds odd 4:2:0 sizes down to even (§JPEGD)
    0,     // VPC writes every listed format
    0,     // colour matrices settable
    16,    // VENC width stride align16(w) (§VENC)
    5400,  // H.265 up to 5400 wide (§VDEC)
};

// Host: no hardware rules beyond what pixel formats need; the widest limits.
constexpr kes_board_profile kHost = {
    KES_BOARD_HOST,
    "host",
    "Host CPU (no board rules beyond pixel-format alignment)",
    0,
    1,
    1,
    1,
    16384,
    1,
    1,
    16384,
    1,
    1,
    1,
    16384,
    1,
    1,
    1,
    1,
    16384,
    16384,
    16384,
    16384,
    0,
    1,
    4096,
    1024,
    1024,
    1,
    1,
    16,
    16384,
    256,
    16,
    16384,
    16384,
    16384,
    1,
    0,  // host: none of the boards' identity rules
    0,
    0,
    0,
    0,
};

constexpr int kBoardUnset = -1;
std::atomic<int> g_board{kBoardUnset};
// The app chose the profile (KES_BOARD or kes_board_set): the runtime's SoC never overrides it.
std::atomic<bool> g_board_chosen{false};

bool parse_board(const char* name, kes_board* out) {
    if (!name) return false;
    std::string s;
    for (const char* p = name; *p; ++p) {
        if (*p == '-' || *p == '_' || *p == ' ') continue;
        s += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
    }
    if (s == "310" || s == "ascend310" || s == "atlas200dk") {
        *out = KES_BOARD_310;
    } else if (s == "310b" || s == "ascend310b" || s == "atlas200idka2" || s == "orangepiaipro") {
        *out = KES_BOARD_310B;
    } else if (s == "host" || s == "cpu") {
        *out = KES_BOARD_HOST;
    } else {
        return false;
    }
    return true;
}

int active_board() noexcept {
    int board = g_board.load(std::memory_order_acquire);
    if (board != kBoardUnset) return board;
    kes_board chosen = KES_BOARD_310B;
    if (!parse_board(KES_DEFAULT_BOARD_NAME, &chosen)) chosen = KES_BOARD_310B;
    const char* env = std::getenv("KES_BOARD");
    if (env && *env) {
        kes_board from_env;
        if (parse_board(env, &from_env)) {
            chosen = from_env;
            g_board_chosen.store(true, std::memory_order_release);
        } else {
            KES_LOGW("sdk", "KES_BOARD=%s is not 310, 310B or host; using %s", env, kes_board_name(chosen));
        }
    }
    if (!g_board_chosen.load(std::memory_order_acquire)) {
        // On a board (or the simulator) the SoC says which rules apply: aclrtGetSocName, docs/BOARD-RULES.md.
        const int detected = acl::detected_board();
        if (detected != kBoardUnset) chosen = static_cast<kes_board>(detected);
    }
    int expected = kBoardUnset;
    g_board.compare_exchange_strong(expected, chosen, std::memory_order_acq_rel);
    return g_board.load(std::memory_order_acquire);
}

}  // namespace

const kes_board_profile* profile_for(int64_t board) noexcept {
    switch (board) {
        case KES_BOARD_310: return &k310;
        case KES_BOARD_310B: return &k310B;
        case KES_BOARD_HOST: return &kHost;
    }
    return nullptr;
}

void board_adopt_from_runtime(int board) noexcept {
    if (!g_board_chosen.load(std::memory_order_acquire) && profile_for(board) != nullptr) {
        g_board.store(board, std::memory_order_release);
    }
}

}  // namespace kes

extern "C" {

const kes_board_profile* kes_board_get_profile(kes_board board) {
    return kes::profile_for(kes::enum_value(board));
}

kes_board kes_board_get(void) {
    return static_cast<kes_board>(kes::active_board());
}

const kes_board_profile* kes_board_active_profile(void) {
    return kes_board_get_profile(kes_board_get());
}

kes_status kes_board_set(kes_board board) {
    if (!kes::profile_for(kes::enum_value(board))) {
        return kes::set_error(KES_ERR_INVALID_ARGUMENT,
                              "kes_board_set: board %lld is not KES_BOARD_HOST, KES_BOARD_310 or KES_BOARD_310B",
                              static_cast<long long>(kes::enum_value(board)));
    }
    kes::g_board_chosen.store(true, std::memory_order_release);
    kes::g_board.store(static_cast<int>(kes::enum_value(board)), std::memory_order_release);
    return KES_OK;
}

const char* kes_board_name(kes_board board) {
    const kes_board_profile* p = kes::profile_for(kes::enum_value(board));
    return p ? p->name : "unknown";
}

kes_status kes_board_from_name(const char* name, kes_board* out_board) {
    if (!name || !out_board) {
        return kes::set_error(KES_ERR_INVALID_ARGUMENT, "kes_board_from_name: %s is NULL", name ? "out_board" : "name");
    }
    if (!kes::parse_board(name, out_board)) {
        return kes::set_error(KES_ERR_INVALID_ARGUMENT,
                              "kes_board_from_name: \"%s\" is not a board (310, 310B or host)", name);
    }
    return KES_OK;
}

}  // extern "C"
