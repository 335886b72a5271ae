/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Output file of the generator: plain or gzip-compressed, written to
 * "<path>.tmp" and renamed over <path> only when everything succeeded.
 */
#ifndef SYNTH_SINK_H
#define SYNTH_SINK_H

#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

struct sink {
    FILE *fp;       /* plain output, or NULL */
    gzFile gz;      /* gzip output, or NULL */
    char *path;     /* final path (owned) */
    char *tmp_path; /* path written until sink_close() (owned) */
    uint64_t bytes; /* uncompressed bytes written so far */
};

/*
 * Creates the temporary file for `path`. Returns 0, or a negative errno after
 * printing a message to stderr.
 */
int sink_open(struct sink *s, const char *path, int gzip);

/* Writes n bytes; returns 0 or a negative errno (message printed). */
int sink_write(struct sink *s, const void *p, size_t n);

/*
 * Flushes and closes; with ok == 0 renames the temporary file to the final
 * path, otherwise (an earlier failure) removes it. Returns 0 or a negative
 * errno of the close itself: callers keep their own earlier error. Frees the
 * struct's contents in every case.
 */
int sink_close(struct sink *s, int ok);

/* Creates directory `path` and its parents (like mkdir -p); 0 or -errno. */
int sink_mkdirs(const char *path);

#endif
