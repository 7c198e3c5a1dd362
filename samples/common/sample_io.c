/* sample_io.c — the MediaPipe samples' output helpers (sample_io.h). */
#define _POSIX_C_SOURCE 200809L
#include "sample_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_errors.h"

int sample_canvas_from(const char* program, kes_mem_pool* pool, const kes_image* image, kes_image* canvas) {
    const uint32_t w = image->width & ~1u, h = image->height & ~1u;
    uint32_t ws = 0, hs = 0;
    if (kes_image_strides(KES_PIXEL_NV12, w, h, KES_STRIDE_JPEGE, kes_board_get(), &ws, &hs) != KES_OK ||
        kes_image_alloc(canvas, pool, KES_PIXEL_NV12, w, h, ws, hs) != KES_OK)
        return sample_fail(program, "canvas");
    const uint8_t* src = image->data;
    uint8_t* dst = canvas->data;
    for (uint32_t y = 0; y < h; ++y) memcpy(dst + (size_t)y * ws, src + (size_t)y * image->width_stride, w);
    src += (size_t)image->width_stride * image->height_stride;
    dst += (size_t)ws * hs;
    for (uint32_t y = 0; y < h / 2; ++y) memcpy(dst + (size_t)y * ws, src + (size_t)y * image->width_stride, w);
    return 0;
}

int sample_write_jpeg(const char* program, kes_dvpp_channel* channel, const kes_image* canvas, const char* path) {
    size_t capacity = 0, size = 0;
    int rc = 0;
    void* jpeg = NULL;
    if (kes_jpeg_predict_encode_size(channel, canvas, &capacity) != KES_OK || !(jpeg = malloc(capacity)) ||
        kes_jpeg_encode(channel, canvas, 90, jpeg, capacity, &size) != KES_OK) {
        rc = sample_fail(program, "JPEGE");
    } else {
        FILE* f = fopen(path, "wb");
        int written = f && fwrite(jpeg, 1, size, f) == size;
        if (f && fclose(f) != 0) written = 0;
        if (!written) rc = sample_sys_fail(program, path);
    }
    free(jpeg);
    return rc;
}

int sample_encode_frame(const char* program, kes_venc** venc, const char* path, const kes_vdec_stream_info* info,
                        const kes_image* canvas) {
    if (!*venc) {
        kes_venc_config vc;
        kes_venc_config_init(&vc);
        vc.path = path;
        vc.width = canvas->width;
        vc.height = canvas->height;
        if (info->fps_num > 0 && info->fps_den > 0) vc.fps_num = info->fps_num, vc.fps_den = info->fps_den;
        if (kes_venc_create(&vc, venc) != KES_OK) return sample_fail(program, path);
    }
    return kes_venc_encode_frame(*venc, canvas) != KES_OK ? sample_fail(program, "VENC") : 0;
}

void sample_stem_of(const char* path, char* stem, size_t size) {
    const char* slash = strrchr(path, '/');
    snprintf(stem, size, "%s", slash ? slash + 1 : path);
    char* dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
}

void sample_output_path(const char* input, const char* dir, const char* suffix, char* path, size_t size) {
    char stem[1024];
    sample_stem_of(input, stem, sizeof stem);
    const char* slash = strrchr(input, '/');
    if (dir)
        snprintf(path, size, "%s/%s%s", dir, stem, suffix);
    else if (slash)
        snprintf(path, size, "%.*s/%s%s", (int)(slash - input), input, stem, suffix);
    else
        snprintf(path, size, "%s%s", stem, suffix);
}

int sample_parse_count(const char* text, unsigned long max, unsigned long* out) {
    char* end = NULL;
    errno = 0;
    const unsigned long v = strtoul(text, &end, 10);
    /* strtoul takes "-1" as a huge number: the sign is refused before. */
    if (text[0] == '-' || errno || end == text || *end || v == 0 || v > max) return 1;
    *out = v;
    return 0;
}

void sample_print_json_string(const char* text) {
    putchar('"');
    for (const char* c = text; *c; ++c) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if ((unsigned char)*c < 0x20)
            printf("\\u%04x", (unsigned char)*c);
        else
            putchar(*c);
    }
    putchar('"');
}
