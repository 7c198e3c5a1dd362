/* A C app that links the installed libkestrel.a: version check, board profile, a pooled frame, and —
 * when the build has dvpp — a JPEG encode/decode round trip, which proves the outside libraries
 * (libjpeg-turbo) come along through find_package and pkg-config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kestrel/kestrel.h"

int main(void) {
    if (kes_version() != KES_VERSION) {
        fprintf(stderr, "header %d vs library %d\n", KES_VERSION, kes_version());
        return 1;
    }
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.initial_bytes = 8u << 20;
    kes_mem_pool* pool = NULL;
    if (kes_mem_pool_create(&cfg, &pool) != KES_OK) {
        fprintf(stderr, "pool: %s\n", kes_last_error());
        return 1;
    }
    kes_image frame;
    uint32_t ws, hs;
    if (kes_image_strides(KES_PIXEL_NV12, 1920, 1080, KES_STRIDE_JPEGD, KES_BOARD_310, &ws, &hs) != KES_OK ||
        kes_image_alloc(&frame, pool, KES_PIXEL_NV12, 1920, 1080, ws, hs) != KES_OK) {
        fprintf(stderr, "image: %s\n", kes_last_error());
        return 1;
    }
    printf("consumer: Kestrel %s, 1080p NV12 on 310 JPEGD = %ux%u stride, %zu bytes at %p\n", kes_version_string(), ws,
           hs, frame.size, frame.data);
#if KES_HAVE_DVPP
    memset(frame.data, 128, frame.size);
    kes_dvpp_channel* channel = NULL;
    size_t capacity = 0, jpeg_size = 0;
    if (kes_dvpp_channel_create(NULL, &channel) != KES_OK ||
        kes_jpeg_predict_encode_size(channel, &frame, &capacity) != KES_OK) {
        fprintf(stderr, "dvpp: %s\n", kes_last_error());
        return 1;
    }
    void* jpeg = malloc(capacity);
    kes_image decoded;
    if (!jpeg || kes_jpeg_encode(channel, &frame, 90, jpeg, capacity, &jpeg_size) != KES_OK ||
        kes_jpeg_decode(channel, jpeg, jpeg_size, KES_PIXEL_NV12, pool, &decoded) != KES_OK) {
        fprintf(stderr, "dvpp: %s\n", kes_last_error());
        return 1;
    }
    printf("consumer: JPEG round trip %zu bytes -> %ux%u NV12\n", jpeg_size, decoded.width, decoded.height);
    const int same_size = decoded.width == 1920 && decoded.height == 1080;
    kes_image_release(&decoded);
    free(jpeg);
    kes_dvpp_channel_destroy(channel);
    if (!same_size) return 1;
#endif
    kes_image_release(&frame);
    kes_mem_pool_destroy(pool);
    return (ws == 1920 && hs == 1088) ? 0 : 1;
}
