/* photos.c — enrolment and the query photos (photos.h). */
#define _POSIX_C_SOURCE 200809L /* scandir, alphasort */
#include "photos.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "annotate.h"
#include "errors.h"

static float area(const kes_detection* d) {
    return (d->x1 - d->x0) * (d->y1 - d->y0);
}

int enroll_photo(pipeline* p, const char* name, const char* path, long which, int strict, float* embeddings,
                 face* faces) {
    kes_image img;
    if (pipeline_decode_photo(p, path, &img)) return 1;
    size_t n = 0;
    const int rc = pipeline_process_image(p, &img, faces, embeddings, &n);
    kes_image_release(&img);
    if (rc) return 1;
    if (n == 0 || which >= (long)n) {
        if (n == 0)
            fprintf(stderr, "face-search: %s: no face found%s\n", path, strict ? "" : "; skipped");
        else
            fprintf(stderr, "face-search: %s has %zu faces (0..%zu, left to right); face %ld asked for\n", path, n,
                    n - 1, which);
        return strict ? 1 : 0;
    }
    size_t pick = (size_t)which;
    if (which < 0) {
        pick = 0;
        for (size_t i = 1; i < n; ++i)
            if (area(&faces[i].det) > area(&faces[pick].det)) pick = i;
    }
    if (face_db_add(&p->db, name, embeddings + pick * p->dim)) return 1;
    const kes_detection* d = &faces[pick].det;
    printf("enrolled %s: %s face %zu of %zu at (%.0f, %.0f) %.0fx%.0f\n", name, path, pick, n, d->x0, d->y0,
           d->x1 - d->x0, d->y1 - d->y0);
    return 0;
}

static int has_jpeg_extension(const char* file) {
    const char* dot = strrchr(file, '.');
    return dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

int is_directory(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int enroll_gallery(pipeline* p, const char* dir, float* embeddings, face* faces) {
    struct dirent** persons = NULL;
    const int n = scandir(dir, &persons, NULL, alphasort);
    if (n < 0) {
        return sys_fail(dir);
    }
    int rc = 0;
    for (int i = 0; i < n; ++i) {
        char sub[4096];
        const char* name = persons[i]->d_name;
        snprintf(sub, sizeof sub, "%s/%s", dir, name);
        if (!rc && name[0] != '.' && is_directory(sub)) {
            if (name_problem(name)) {
                fprintf(stderr, "face-search: %s: the folder name %s; skipped\n", sub, name_problem(name));
            } else {
                struct dirent** photos = NULL;
                const int m = scandir(sub, &photos, NULL, alphasort);
                if (m < 0) {
                    sys_fail(sub);
                    rc = 1;
                }
                for (int j = 0; j < m; ++j) {
                    char file[8192];
                    snprintf(file, sizeof file, "%s/%s", sub, photos[j]->d_name);
                    if (!rc && photos[j]->d_name[0] != '.' && has_jpeg_extension(photos[j]->d_name))
                        rc = enroll_photo(p, name, file, -1, 0, embeddings, faces);
                    free(photos[j]);
                }
                free(photos);
            }
        }
        free(persons[i]);
    }
    free(persons);
    return rc;
}

static void print_face(const pipeline* p, size_t i, const face* f) {
    const kes_detection* d = &f->det;
    printf("  face %zu at (%.0f, %.0f) %.0fx%.0f: ", i, d->x0, d->y0, d->x1 - d->x0, d->y1 - d->y0);
    const char* name = face_name(p, f);
    if (name)
        printf("%s, cosine %.3f\n", name, f->cosine);
    else if (f->person >= 0)
        printf("unknown (best %s, cosine %.3f)\n", p->db.names[f->person], f->cosine);
    else
        printf("unknown (nobody enrolled)\n");
}

int search_photo(pipeline* p, const options* o, const char* path, float* embeddings, face* faces, pair_set* pairs) {
    kes_image img;
    if (pipeline_decode_photo(p, path, &img)) return 1;
    size_t n = 0;
    int rc = pipeline_process_image(p, &img, faces, embeddings, &n);
    if (!rc) rc = pipeline_search_faces(p, embeddings, faces, n);
    if (!rc) {
        printf("%s: %zu face%s\n", path, n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n; ++i) print_face(p, i, &faces[i]);
        for (size_t i = 0; i < n && pairs && pairs->count < MAX_PAIR_FACES; ++i, ++pairs->count) {
            pairs->who[pairs->count] = (pair_face){path, i};
            memcpy(pairs->embeddings + pairs->count * p->dim, embeddings + i * p->dim, p->dim * sizeof(float));
        }
    }
    if (!rc && o->annotate) {
        kes_image canvas;
        char out[4096];
        output_path(path, o->out_dir, "_annotated.jpg", out, sizeof out);
        rc = canvas_from(p, &img, &canvas);
        if (!rc) rc = draw_faces(p, &canvas, faces, n);
        if (!rc) rc = write_jpeg(p, &canvas, out);
        if (!rc) printf("wrote %s (%ux%u)\n", out, canvas.width, canvas.height);
        kes_image_release(&canvas);
    }
    kes_image_release(&img);
    return rc;
}

/* ---- --pairs ------------------------------------------------------------------------------------- */

static float cosine(const float* a, const float* b, size_t dim) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < dim; ++i) ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return aa > 0 && bb > 0 ? (float)(ab / sqrt(aa * bb)) : 0.0f;
}

typedef struct pair {
    size_t a, b;
    float cosine;
} pair;

static int by_cosine(const void* x, const void* y) {
    const pair* a = x;
    const pair* b = y;
    if (a->cosine != b->cosine) return a->cosine > b->cosine ? -1 : 1;
    return a->a != b->a ? (a->a < b->a ? -1 : 1) : (a->b < b->b ? -1 : a->b > b->b);
}

int print_pairs(const pipeline* p, const pair_set* s) {
    const size_t total = s->count * (s->count > 0 ? s->count - 1 : 0) / 2;
    pair* all = malloc((total ? total : 1) * sizeof *all);
    if (!all) {
        fprintf(stderr, "face-search: out of memory\n");
        return 1;
    }
    size_t k = 0;
    for (size_t a = 0; a < s->count; ++a)
        for (size_t b = a + 1; b < s->count; ++b)
            all[k++] = (pair){a, b, cosine(s->embeddings + a * p->dim, s->embeddings + b * p->dim, p->dim)};
    qsort(all, k, sizeof *all, by_cosine);
    printf("pairs: %zu faces, %zu pairs, best first\n", s->count, k);
    for (size_t i = 0; i < k; ++i)
        printf("  %.3f  %s face %zu  %s face %zu\n", all[i].cosine, s->who[all[i].a].photo, s->who[all[i].a].index,
               s->who[all[i].b].photo, s->who[all[i].b].index);
    free(all);
    return 0;
}
