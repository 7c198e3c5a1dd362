/* sample_io.h — what the MediaPipe samples (hands, pose, segment) do alike with their results: an
 * encodable copy of a frame to draw on, the JPEG of it, and where output files go. Each call that can
 * fail prints "<program>: <what>: <why>" on stderr and returns 1 (0 on success). */
#ifndef KESTREL_SAMPLES_SAMPLE_IO_H
#define KESTREL_SAMPLES_SAMPLE_IO_H

#include <stddef.h>

#include "kestrel/kestrel.h"

/* A copy of `image` (NV12) with JPEGE's strides, its size rounded down to even (as JPEGE and VENC take
 * it), from `pool`: to draw on and encode. The caller releases it. */
int sample_canvas_from(const char* program, kes_mem_pool* pool, const kes_image* image, kes_image* canvas);

/* `canvas` as a quality-90 JPEG file at `path`. */
int sample_write_jpeg(const char* program, kes_dvpp_channel* channel, const kes_image* canvas, const char* path);

/* The file name of `path` without its directory and extension. */
void sample_stem_of(const char* path, char* stem, size_t size);

/* dir/<stem of input><suffix>, or beside the input when dir is NULL. */
void sample_output_path(const char* input, const char* dir, const char* suffix, char* path, size_t size);

#endif
