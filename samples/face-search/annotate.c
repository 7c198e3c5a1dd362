/* annotate.c — the annotated JPEGs and video frames (annotate.h): canvas, OSD boxes and labels, JPEGE. */
#include "annotate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

int canvas_from(pipeline* p, const kes_image* img, kes_image* canvas) {
    const uint32_t w = img->width & ~1u, h = img->height & ~1u;
    uint32_t ws = 0, hs = 0;
    if (kes_image_strides(KES_PIXEL_NV12, w, h, KES_STRIDE_JPEGE, kes_board_get(), &ws, &hs) != KES_OK ||
        kes_image_alloc(canvas, p->pool, KES_PIXEL_NV12, w, h, ws, hs) != KES_OK)
        return fail("canvas");
    const uint8_t* src = img->data;
    uint8_t* dst = canvas->data;
    for (uint32_t y = 0; y < h; ++y) memcpy(dst + (size_t)y * ws, src + (size_t)y * img->width_stride, w);
    src += (size_t)img->width_stride * img->height_stride;
    dst += (size_t)ws * hs;
    for (uint32_t y = 0; y < h / 2; ++y) memcpy(dst + (size_t)y * ws, src + (size_t)y * img->width_stride, w);
    return 0;
}

int draw_faces(pipeline* p, kes_image* canvas, const face* faces, size_t count) {
    const double t0 = stage_begin(ST_DRAW);
    kes_osd_box boxes[MAX_FACES];
    char labels[MAX_FACES][NAME_BYTES + 16];
    const int32_t scale = canvas->width >= 800 ? 2 : 1; /* labels readable on a photo, compact on VGA video */
    for (size_t i = 0; i < count; ++i) {
        const kes_detection* d = &faces[i].det;
        const char* name = face_name(p, &faces[i]);
        if (name)
            snprintf(labels[i], sizeof labels[i], "%s %.2f", name, faces[i].cosine);
        else
            snprintf(labels[i], sizeof labels[i], "unknown");
        boxes[i].x = (int32_t)lroundf(d->x0);
        boxes[i].y = (int32_t)lroundf(d->y0);
        boxes[i].width = (int32_t)lroundf(d->x1) - boxes[i].x;
        boxes[i].height = (int32_t)lroundf(d->y1) - boxes[i].y;
        boxes[i].color = name ? kes_osd_color_rgb(0, 170, 60) : kes_osd_color_rgb(220, 60, 30);
        boxes[i].label = labels[i];
    }
    kes_osd_box_style style;
    kes_osd_box_style_init(&style);
    style.thickness = scale + 1;
    style.text_scale = scale;
    const kes_status st = kes_osd_draw_boxes(canvas, boxes, (uint32_t)count, &style);
    stage_end(&p->time, ST_DRAW, t0);
    return st == KES_OK ? 0 : fail("OSD");
}

void output_path(const char* input, const char* out_dir, const char* suffix, char* path, size_t size) {
    const int url = strstr(input, "://") != NULL;
    const char* slash = strrchr(input, '/');
    const char* base = slash ? slash + 1 : input;
    char stem[256];
    size_t n = 0;
    for (const char* c = base; *c && n + 1 < sizeof stem; ++c) {
        const int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                       *c == '_' || *c == '.';
        stem[n++] = url && !ok ? '_' : *c;
    }
    stem[n] = '\0';
    char* dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
    if (stem[0] == '\0') snprintf(stem, sizeof stem, "camera");
    if (out_dir)
        snprintf(path, size, "%s/%s%s", out_dir, stem, suffix);
    else if (!url && slash)
        snprintf(path, size, "%.*s/%s%s", (int)(slash - input), input, stem, suffix);
    else
        snprintf(path, size, "%s%s", stem, suffix);
}

int write_jpeg(pipeline* p, const kes_image* canvas, const char* path) {
    const double t0 = stage_begin(ST_ENCODE);
    size_t capacity = 0, size = 0;
    int rc = 0;
    void* jpeg = NULL;
    if (kes_jpeg_predict_encode_size(p->channel, canvas, &capacity) != KES_OK || !(jpeg = malloc(capacity)) ||
        kes_jpeg_encode(p->channel, canvas, 90, jpeg, capacity, &size) != KES_OK) {
        rc = fail("JPEGE");
    } else {
        FILE* f = fopen(path, "wb");
        int written = f && fwrite(jpeg, 1, size, f) == size;
        if (f && fclose(f) != 0) written = 0;
        if (!written) rc = sys_fail(path);
    }
    free(jpeg);
    stage_end(&p->time, ST_ENCODE, t0);
    return rc;
}
