/* Fuzz target for face-search's DB.names reader (samples/common/face_names.c, face_db_read_names): any bytes must be
 * read or refused with a message, never crash or read out of bounds, and whatever is read must be a valid list of
 * people (names 1..63 bytes, no control character, none twice). */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "face_names.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    /* fmemopen takes a non-const buffer, even for reading (and, in glibc since 2.22, a size of 0). */
    char* copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    FILE* f = fmemopen(copy, size, "r");
    if (f) {
        face_db db;
        memset(&db, 0, sizeof db);
        if (face_db_read_names(&db, f, "fuzz.names") == 0) {
            for (size_t i = 0; i < db.count; ++i) {
                if (name_problem(db.names[i])) abort();
                for (size_t j = 0; j < i; ++j)
                    if (strcmp(db.names[i], db.names[j]) == 0) abort();
            }
        }
        fclose(f);
        face_db_destroy(&db);
    }
    free(copy);
    return 0;
}
