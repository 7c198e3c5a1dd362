// dvpp video without FFmpeg (KES_WITH_FFMPEG=OFF, dvpp/video.cmake): the VDEC/VENC calls stay in the
// API so apps link unchanged, and fail with KES_ERR_UNSUPPORTED saying why. For the smallest static
// binaries (bench/footprint.sh); kept beside video.cmake, which alone decides whether it is built.
#include <cstring>

#include "kes/error.hpp"
#include "kestrel/dvpp_video.h"

namespace {

kes_status unavailable(const char* fn) {
    return kes::set_error(KES_ERR_UNSUPPORTED, "%s: this Kestrel was built without FFmpeg (KES_WITH_FFMPEG=OFF)", fn);
}

}  // namespace

extern "C" {

// The same defaults as video_decode.cpp and video_encode.cpp: an app may read them before it fails.
void kes_vdec_config_init(kes_vdec_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->output_format = KES_PIXEL_NV12;
    config->frame_interval = 1;
    config->rtsp_transport = KES_RTSP_TCP;
    config->timeout_ms = 5000;  // reconnect AUTO and its 0s (defaults resolved at create) by the memset
}

kes_status kes_vdec_create(const kes_vdec_config*, kes_vdec** out_vdec) {
    if (out_vdec) *out_vdec = nullptr;
    return unavailable(__func__);
}

void kes_vdec_destroy(kes_vdec*) {}

kes_status kes_vdec_read_frame(kes_vdec*, kes_vdec_frame*) {
    return unavailable(__func__);
}

kes_status kes_vdec_send_packet(kes_vdec*, const void*, size_t, int64_t) {
    return unavailable(__func__);
}

kes_status kes_vdec_receive_frame(kes_vdec*, kes_vdec_frame*) {
    return unavailable(__func__);
}

kes_status kes_vdec_get_stream_info(kes_vdec*, kes_vdec_stream_info*) {
    return unavailable(__func__);
}

kes_status kes_vdec_get_stats(const kes_vdec*, kes_vdec_stats*) {
    return unavailable(__func__);
}

kes_status kes_vdec_get_health(const kes_vdec*, kes_vdec_health*) {
    return unavailable(__func__);
}

uint32_t kes_vdec_open_channels(void) {
    return 0;
}

void kes_venc_config_init(kes_venc_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->container = KES_VENC_CONTAINER_MP4;
    config->codec = KES_VIDEO_CODEC_H264;
    config->fps_num = 30;
    config->fps_den = 1;
    config->gop = 30;
}

kes_status kes_venc_create(const kes_venc_config*, kes_venc** out_venc) {
    if (out_venc) *out_venc = nullptr;
    return unavailable(__func__);
}

kes_status kes_venc_encode_frame(kes_venc*, const kes_image*) {
    return unavailable(__func__);
}

kes_status kes_venc_finish(kes_venc*) {
    return unavailable(__func__);
}

kes_status kes_venc_get_counts(const kes_venc*, uint64_t*, uint64_t*) {
    return unavailable(__func__);
}

void kes_venc_destroy(kes_venc*) {}

}  // extern "C"
