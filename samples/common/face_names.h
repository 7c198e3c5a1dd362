/* face_names.h — the names database: people by name, their faces in a kestrel/fv.h repository, and the
 * pair of files face-search's --save writes and --load reads (video-analytics --load reads it too).
 * Teaches how an app puts names on fv's numeric ids and keeps them with the repository on disk.
 *
 * Person i (in enrolment order) is fv library (id0, id1) = (i / 1024, i % 1024); its offsets 0, 1, ... are
 * its enrolled faces, so a top-1 search names the person directly. kes_fv_repo_save writes DB; DB.names
 * is a text file: the line "kestrel-face-names 1", then one line "id0 id1 name" per person in order.
 * --load checks the pair: every line well formed, ids consecutive, names unique, and exactly one
 * non-empty library per name, with the embedder's dimension and the cosine metric. */
#ifndef KESTREL_SAMPLES_FACE_NAMES_H
#define KESTREL_SAMPLES_FACE_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kestrel/fv.h"

#define NAME_BYTES 64 /* names are 1..63 bytes */
#define PEOPLE_PER_ID0 (KES_FV_ID_MAX + 1)
#define MAX_PEOPLE (PEOPLE_PER_ID0 * PEOPLE_PER_ID0)

typedef struct face_db {
    const char* program;       /* names the program in messages (NULL: "face-names") */
    kes_fv_repo* repo;         /* dense float32 embeddings, cosine */
    size_t dim;                /* floats per embedding */
    char (*names)[NAME_BYTES]; /* person i's name */
    size_t count, capacity;    /* people */
} face_db;

/* NULL if NAME can be a person's name (1..63 bytes, no control character), else what is wrong with it. */
const char* name_problem(const char* name);

/* An empty database of DIM-float embeddings; `program` starts its messages. Returns 0, or 1 after printing
 * the error. */
int face_db_create(face_db* db, const char* program, size_t dim);

/* Frees everything; harmless on a zeroed struct. */
void face_db_destroy(face_db* db);

/* Adds one embedding to NAME's library, adding the person on their first face. Returns 0 or 1. */
int face_db_add(face_db* db, const char* name, const float* embedding);

/* The enrolled face nearest to `embedding` (top-1 cosine): *person (-1 when nobody is enrolled) and
 * *cosine. Returns 0 or 1. */
int face_db_search(const face_db* db, const float* embedding, int64_t* person, float* cosine);

/* Person's name when `cosine` (their best match's) reaches `threshold`, else NULL: unknown. */
const char* face_db_name(const face_db* db, int64_t person, float cosine, float threshold);

/* Writes PATH and PATH.names (printing "saved ..."). Returns 0 or 1. */
int face_db_save(const face_db* db, const char* path);

/* Reads the people of a DB.names file from `file` (its header line, then "id0 id1 name" per person, each
 * checked: consecutive ids, a valid name, no name twice) into db, which holds nobody yet; `path` names
 * the file in messages. face_db_load calls it; the fuzz target (face-search/fuzz/fuzz_names.c) feeds it any bytes.
 * Returns 0, or 1 after printing "PATH line N: what is wrong". */
int face_db_read_names(face_db* db, FILE* file, const char* path);

/* Replaces the database with PATH and PATH.names, checked to be a pair made with an embedder of db->dim
 * floats (printing "loaded ..."). Returns 0 or 1. */
int face_db_load(face_db* db, const char* path);

#endif /* KESTREL_SAMPLES_FACE_NAMES_H */
