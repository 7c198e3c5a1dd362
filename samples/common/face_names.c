/* face_names.c — the names database (face_names.h): person i ↔ fv library (i / 1024, i % 1024), saved as DB (the fv
 * repository) and DB.names (the names, one line each). DB.names is outside data: every line is checked. */
#include "face_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_errors.h"

#define NAMES_HEADER "kestrel-face-names 1"

/* The program the messages name; a zeroed database (the fuzz target's) has none. */
static const char* program_of(const face_db* db) {
    return db->program ? db->program : "face-names";
}

const char* name_problem(const char* name) {
    const size_t n = strlen(name);
    if (n == 0) return "is empty";
    if (n >= NAME_BYTES) return "is longer than 63 bytes";
    for (size_t i = 0; i < n; ++i)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) return "has a control character";
    return NULL;
}

static int64_t person_find(const face_db* db, const char* name) {
    for (size_t i = 0; i < db->count; ++i)
        if (strcmp(db->names[i], name) == 0) return (int64_t)i;
    return -1;
}

static int64_t person_add(face_db* db, const char* name) {
    if (db->count == MAX_PEOPLE) return -1;
    if (db->count == db->capacity) {
        const size_t cap = db->capacity ? db->capacity * 2 : 16;
        void* grown = realloc(db->names, cap * NAME_BYTES);
        if (!grown) return -1;
        db->names = grown;
        db->capacity = cap;
    }
    snprintf(db->names[db->count], NAME_BYTES, "%s", name);
    return (int64_t)db->count++;
}

int face_db_create(face_db* db, const char* program, size_t dim) {
    memset(db, 0, sizeof *db);
    db->program = program;
    db->dim = dim;
    kes_fv_config cfg;
    kes_fv_config_init(&cfg);
    cfg.kind = KES_FV_DENSE;
    cfg.dim = (uint32_t)dim;
    cfg.storage = KES_F32;
    cfg.metric = KES_FV_METRIC_COSINE;
    if (kes_fv_repo_create(&cfg, &db->repo) != KES_OK) return sample_fail(program_of(db), "fv repository");
    return 0;
}

void face_db_destroy(face_db* db) {
    free(db->names);
    kes_fv_repo_destroy(db->repo);
}

int face_db_add(face_db* db, const char* name, const float* embedding) {
    int64_t person = person_find(db, name);
    if (person < 0 && (person = person_add(db, name)) < 0) {
        fprintf(stderr, "%s: cannot add '%s': out of memory or more than %d people\n", program_of(db), name,
                MAX_PEOPLE);
        return 1;
    }
    const uint32_t id0 = (uint32_t)person / PEOPLE_PER_ID0, id1 = (uint32_t)person % PEOPLE_PER_ID0;
    uint32_t offset = 0;
    if (kes_fv_repo_library_size(db->repo, id0, id1, &offset) != KES_OK ||
        kes_fv_repo_add(db->repo, id0, id1, offset, embedding, 1, db->dim * sizeof(float)) != KES_OK)
        return sample_fail(program_of(db), "enroll");
    return 0;
}

const char* face_db_name(const face_db* db, int64_t person, float cosine, float threshold) {
    return person >= 0 && (size_t)person < db->count && cosine >= threshold ? db->names[person] : NULL;
}

int face_db_search(const face_db* db, const float* embedding, int64_t* person, float* cosine) {
    kes_fv_search_params sp;
    kes_fv_search_params_init(&sp);
    sp.k = 1;
    kes_fv_result best;
    uint32_t found = 0;
    *person = -1;
    *cosine = 0;
    if (kes_fv_search(db->repo, embedding, db->dim, &sp, &best, 1, &found) != KES_OK)
        return sample_fail(program_of(db), "search");
    if (found == 1) {
        *person = (int64_t)best.id0 * PEOPLE_PER_ID0 + best.id1;
        *cosine = best.distance;
    }
    return 0;
}

/* ---- DB.names ------------------------------------------------------------------------------------- */

/* Written to PATH.names.tmp and renamed: a crash never leaves half a names file beside the repository. */
static int names_save(const face_db* db, const char* repo_path) {
    char path[4096], tmp[4096 + 8];
    snprintf(path, sizeof path, "%s.names", repo_path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE* f = fopen(tmp, "w");
    if (!f) return sample_sys_fail(program_of(db), tmp);
    fprintf(f, "%s\n", NAMES_HEADER);
    for (size_t i = 0; i < db->count; ++i)
        fprintf(f, "%zu %zu %s\n", i / PEOPLE_PER_ID0, i % PEOPLE_PER_ID0, db->names[i]);
    if (ferror(f) | fclose(f) || rename(tmp, path) != 0) {
        sample_sys_fail(program_of(db), path);
        remove(tmp);
        return 1;
    }
    return 0;
}

int face_db_save(const face_db* db, const char* path) {
    if (kes_fv_repo_save(db->repo, path) != KES_OK) return sample_fail(program_of(db), path);
    if (names_save(db, path)) return 1;
    printf("saved %zu people to %s and %s.names\n", db->count, path, path);
    return 0;
}

static int names_error(const face_db* db, const char* path, unsigned line, const char* what) {
    fprintf(stderr, "%s: %s line %u: %s\n", program_of(db), path, line, what);
    return 1;
}

int face_db_read_names(face_db* db, FILE* f, const char* path) {
    char line[256];
    unsigned number = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        ++number;
        size_t len = strlen(line);
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (!feof(f)) {
            rc = names_error(db, path, number, "longer than 255 bytes");
            break;
        }
        if (number == 1) {
            if (strcmp(line, NAMES_HEADER) != 0) rc = names_error(db, path, number, "not \"" NAMES_HEADER "\"");
            continue;
        }
        /* "id0 id1 name": the ids are this person's position, checked rather than believed. */
        const size_t person = db->count;
        char want[32];
        snprintf(want, sizeof want, "%zu %zu ", person / PEOPLE_PER_ID0, person % PEOPLE_PER_ID0);
        if (strncmp(line, want, strlen(want)) != 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "want \"id0 id1 name\" starting with \"%s\" (person %zu)", want, person);
            rc = names_error(db, path, number, msg);
            break;
        }
        const char* name = line + strlen(want);
        const char* problem = name_problem(name);
        if (problem) {
            char msg[64];
            snprintf(msg, sizeof msg, "the name %s", problem);
            rc = names_error(db, path, number, msg);
        } else if (person_find(db, name) >= 0)
            rc = names_error(db, path, number, "the name is given twice");
        else if (person_add(db, name) < 0)
            rc = names_error(db, path, number, "too many people");
    }
    if (!rc && ferror(f)) {
        sample_sys_fail(program_of(db), path);
        rc = 1;
    }
    if (!rc && number == 0) rc = names_error(db, path, 1, "empty file (no \"" NAMES_HEADER "\" line)");
    return rc;
}

/* Nothing DB.names says is trusted until it matches the repository (face_db_load checks that). */
static int names_load(face_db* db, const char* repo_path) {
    char path[4096];
    snprintf(path, sizeof path, "%s.names", repo_path);
    FILE* f = fopen(path, "r");
    if (!f) return sample_sys_fail(program_of(db), path);
    const int rc = face_db_read_names(db, f, path);
    fclose(f);
    return rc;
}

int face_db_load(face_db* db, const char* path) {
    kes_fv_repo* loaded = NULL;
    if (kes_fv_repo_load(path, &loaded) != KES_OK) return sample_fail(program_of(db), path);
    kes_fv_repo_destroy(db->repo);
    db->repo = loaded;
    if (names_load(db, path)) return 1;
    kes_fv_config cfg;
    kes_fv_config_init(&cfg);
    uint64_t features = 0;
    uint32_t libraries = 0;
    if (kes_fv_repo_get_config(db->repo, &cfg) != KES_OK ||
        kes_fv_repo_count(db->repo, &features, &libraries) != KES_OK)
        return sample_fail(program_of(db), path);
    if (cfg.kind != KES_FV_DENSE || cfg.dim != db->dim || cfg.metric != KES_FV_METRIC_COSINE) {
        fprintf(stderr, "%s: %s holds no %zu-float cosine embeddings (not made by face-search with this embedder)\n",
                program_of(db), path, db->dim);
        return 1;
    }
    for (size_t i = 0; i < db->count; ++i) {
        uint32_t size = 0;
        kes_fv_repo_library_size(db->repo, (uint32_t)(i / PEOPLE_PER_ID0), (uint32_t)(i % PEOPLE_PER_ID0), &size);
        if (size == 0) {
            fprintf(stderr, "%s: %s.names names '%s' (library %zu %zu), which %s does not hold: not a pair\n",
                    program_of(db), path, db->names[i], i / PEOPLE_PER_ID0, i % PEOPLE_PER_ID0, path);
            return 1;
        }
    }
    if (libraries != db->count) {
        fprintf(stderr, "%s: %s holds %u people, %s.names names %zu: not a pair\n", program_of(db), path, libraries,
                path, db->count);
        return 1;
    }
    printf("loaded %zu people (%llu faces) from %s\n", db->count, (unsigned long long)features, path);
    return 0;
}
