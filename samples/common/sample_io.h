/* sample_io.h — what the MediaPipe samples (hands, pose, segment) do alike: an encodable copy of a frame
 * to draw on, the JPEG of it, where output files go, counts on the command line and JSON strings. Each
 * call that can fail and takes `program` prints "<program>: <what>: <why>" on stderr and returns 1 (0 on success). */
#ifndef KESTREL_SAMPLES_SAMPLE_IO_H
#define KESTREL_SAMPLES_SAMPLE_IO_H

#include <stddef.h>

#include "kestrel/kestrel.h"

/* A copy of `image` (NV12) with JPEGE's strides, its size rounded down to even (as JPEGE and VENC take
 * it), from `pool`: to draw on and encode. The caller releases it. */
int sample_canvas_from(const char* program, kes_mem_pool* pool, const kes_image* image, kes_image* canvas);

/* `canvas` as a quality-90 JPEG file at `path`. */
int sample_write_jpeg(const char* program, kes_dvpp_channel* channel, const kes_image* canvas, const char* path);

/* `canvas` as the next frame of the MP4 at `path`: the first call opens *venc at the canvas' size and the
 * stream's frame rate (`info`; VENC's default when the stream has none). The caller finishes and destroys
 * *venc. */
int sample_encode_frame(const char* program, kes_venc** venc, const char* path, const kes_vdec_stream_info* info,
                        const kes_image* canvas);

/* The file name of `path` without its directory and extension. */
void sample_stem_of(const char* path, char* stem, size_t size);

/* dir/<stem of input><suffix>, or beside the input when dir is NULL. */
void sample_output_path(const char* input, const char* dir, const char* suffix, char* path, size_t size);

/* A whole number from 1 to max (no sign, nothing after it) into *out: 0; otherwise 1, *out untouched. */
int sample_parse_count(const char* text, unsigned long max, unsigned long* out);

/* `text` as a JSON string on stdout, quotes and control characters escaped. */
void sample_print_json_string(const char* text);

#endif
