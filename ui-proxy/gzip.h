/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gzip for response bodies (zlib): whether the client accepts it, one-shot
 * compression of a buffer, and an incremental compressor for streamed
 * files. XProf's server gzips every response; we do when the client says
 * Accept-Encoding: gzip.
 */
#ifndef UI_GZIP_H
#define UI_GZIP_H

#include <stddef.h>
#include <zlib.h>

/* Returns 1 when an Accept-Encoding value allows gzip (q > 0), else 0. */
int ui_gzip_accepted(const char *accept_encoding);

/*
 * Compresses n bytes into a new gzip member in *out (free() it), its size
 * in *n_out. Returns 0, -ENOMEM or -EIO.
 */
int ui_gzip_buf(const void *in, size_t n, char **out, size_t *n_out);

/* Starts a gzip stream compressor; 0 or -ENOMEM. Pair with ui_gzip_end(). */
int ui_gzip_begin(z_stream *zs);

/*
 * Compresses the pending input of zs (next_in/avail_in) into out, at most
 * n bytes; with finish set, also writes the trailer once the input is done.
 * Returns the bytes written (possibly 0 when more input is needed), or
 * -EIO. *ended becomes 1 once the trailer is out.
 */
long ui_gzip_step(z_stream *zs, void *out, size_t n, int finish, int *ended);

/* Frees the compressor's state. */
void ui_gzip_end(z_stream *zs);

#endif
