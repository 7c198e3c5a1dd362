/* annotate.h — names drawn on the picture: a host copy of the frame to draw on, boxes and labels with the
 * OSD (kestrel/osd.h), and where the annotated file goes. Teaches that an image from JPEGD, VDEC or VPC
 * has its unit's strides: the canvas is copied out with JPEGE's strides, which VENC takes too. */
#ifndef FACE_SEARCH_ANNOTATE_H
#define FACE_SEARCH_ANNOTATE_H

#include <stddef.h>

#include "pipeline.h"

/* A host copy of the image with JPEGE strides, even-sized: the canvas the boxes are drawn on, whatever
 * unit and memory the frame came from. Returns 0 or 1. */
int canvas_from(pipeline* p, const kes_image* img, kes_image* canvas);

/* Each face's box, green with "name cosine" when named, red with "unknown" otherwise. Returns 0 or 1. */
int draw_faces(pipeline* p, kes_image* canvas, const face* faces, size_t count);

/* out_dir/stem + suffix, stem = the input's file name without its extension (a camera URL's last path
 * part); out_dir NULL: beside the input (the current directory for a URL). */
void output_path(const char* input, const char* out_dir, const char* suffix, char* path, size_t size);

/* JPEGE at quality 90 into PATH. Returns 0 or 1. */
int write_jpeg(pipeline* p, const kes_image* canvas, const char* path);

#endif /* FACE_SEARCH_ANNOTATE_H */
