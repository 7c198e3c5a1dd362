/* photos.h — what face-search does with photos: enrol people from them (--enroll, --gallery), search the
 * query photos (each face's name, an annotated JPEG) and compare every pair of their faces (--pairs).
 * Teaches the app's side of the pipeline: decode, process, then decide what the numbers mean. */
#ifndef FACE_SEARCH_PHOTOS_H
#define FACE_SEARCH_PHOTOS_H

#include <stddef.h>

#include "args.h"
#include "pipeline.h"

#define MAX_PAIR_FACES 512

/* The faces of every query photo, for --pairs. */
typedef struct pair_face {
    const char* photo;
    size_t index;
} pair_face;

typedef struct pair_set {
    pair_face who[MAX_PAIR_FACES];
    float* embeddings;
    size_t count;
} pair_set;

/* Enrolls face `which` of the photo (-1: the largest) as `name`. A photo without a face is an error for
 * --enroll (strict) and a warning for --gallery. embeddings and faces: room for MAX_FACES. Returns 0 or 1. */
int enroll_photo(pipeline* p, const char* name, const char* path, long which, int strict, float* embeddings,
                 face* faces);

/* Enrolls DIR/NAME/PHOTO.jpg (.jpg, .jpeg), the largest face of each, in name order (the same database
 * on every machine). Returns 0 or 1. */
int enroll_gallery(pipeline* p, const char* dir, float* embeddings, face* faces);

/* Prints each face of the photo with its name or "unknown", writes the annotated JPEG unless
 * --no-annotate, and adds the faces to `pairs` (NULL: no --pairs). Returns 0 or 1. */
int search_photo(pipeline* p, const options* o, const char* path, float* embeddings, face* faces, pair_set* pairs);

/* Prints every pair of the collected faces with its cosine, best first. Returns 0 or 1. */
int print_pairs(const pipeline* p, const pair_set* s);

/* Is PATH a directory? */
int is_directory(const char* path);

#endif /* FACE_SEARCH_PHOTOS_H */
