// Channels: the board profile and codec state every dvpp call works with (dvpp.h).
#include <cstring>

#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"

namespace kes {

kes_pixel_format format_arg(const kes_pixel_format& format, const char* name) {
    const int64_t v = enum_value(format);
    const bool known = (v >= 0 && v <= KES_PIXEL_BGRA8888) || v == KES_PIXEL_YUV440SP || v == KES_PIXEL_YVU440SP ||
                       v == KES_PIXEL_I420 || v == KES_PIXEL_UNKNOWN;
    KES_REQUIRE(known, "%s %lld is not a kes_pixel_format", name, static_cast<long long>(v));
    return static_cast<kes_pixel_format>(v);
}

void check_max_pixels(const kes_dvpp_channel* ch, uint32_t w, uint32_t h, const char* what) {
    const uint64_t pixels = uint64_t(w) * h;
    KES_REQUIRE(ch->max_pixels == 0 || pixels <= ch->max_pixels,
                "%s of %ux%u = %llu pixels exceeds the channel's max_pixels %llu", what, w, h,
                static_cast<unsigned long long>(pixels), static_cast<unsigned long long>(ch->max_pixels));
}

void check_sdk(kes_status st, const char* what) {
    if (st != KES_OK) KES_FAIL(st, "%s: %s", what, kes_last_error());
}

void require_cpu_access(const kes_image& image, const char* what) {
    const kes_mem_backend where = kes_image_memory(&image);
    if (kes_mem_is_host_accessible(where) == 0)
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "%s lives in %s memory the CPU cannot read (a PCIe card, ACL_HOST run mode), and this call runs on "
                 "the CPU: copy it to host memory first (kes_mem_copy), or keep it on the hardware path",
                 what, where == KES_MEM_DVPP ? "DVPP" : "device");
}

}  // namespace kes

extern "C" {

void kes_dvpp_channel_config_init(kes_dvpp_channel_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->apply_orientation = 1;
}

kes_status kes_dvpp_channel_create(const kes_dvpp_channel_config* config, kes_dvpp_channel** out_channel) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_channel);
        *out_channel = nullptr;
        kes_dvpp_channel_config cfg;
        kes_dvpp_channel_config_init(&cfg);
        if (config)
            kes::read_struct(config, KES_STRUCT_SIZE_THROUGH(kes_dvpp_channel_config, max_pixels), "config",
                             "kes_dvpp_channel_config", &cfg);
        // Resolve the backend first: a runtime that loads makes its SoC the active board profile.
        if (kes::enum_value(cfg.backend) != KES_BACKEND_CPU) (void)kes::acl::dvpp();
        const kes_board_profile* profile = cfg.board_profile ? cfg.board_profile : kes_board_active_profile();
        KES_REQUIRE(profile != nullptr, "no board profile");
        auto ch = std::make_unique<kes_dvpp_channel>();
        ch->profile = *profile;
        ch->pool = cfg.pool;
        ch->strict = cfg.strict != 0;
        ch->accept_warnings = cfg.accept_warnings != 0;
        ch->apply_orientation = cfg.apply_orientation != 0;
        ch->max_pixels = cfg.max_pixels;
        ch->hardware = kes::open_hardware(cfg.backend, ch->profile);
        *out_channel = ch.release();
        return KES_OK;
    });
}

void kes_dvpp_channel_destroy(kes_dvpp_channel* channel) {
    delete channel;
}

const kes_board_profile* kes_dvpp_channel_profile(const kes_dvpp_channel* channel) {
    return channel ? &channel->profile : nullptr;
}

kes_status kes_dvpp_channel_get_stats(const kes_dvpp_channel* channel, kes_dvpp_channel_stats* out_stats) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(channel);
        KES_REQUIRE_NOT_NULL(out_stats);
        kes::check_out_struct(out_stats, KES_STRUCT_SIZE_THROUGH(kes_dvpp_channel_stats, fallbacks), "out_stats",
                              "kes_dvpp_channel_stats");
        kes_dvpp_channel_stats s;
        std::memset(&s, 0, sizeof s);
        s.struct_size = sizeof s;
        s.backend = channel->hardware ? KES_BACKEND_ASCEND : KES_BACKEND_CPU;
        s.hardware_calls = channel->hardware_calls;
        s.cpu_calls = channel->cpu_calls;
        s.fallbacks = channel->fallbacks;
        kes::write_struct(s, out_stats);
        return KES_OK;
    });
}

}  // extern "C"
