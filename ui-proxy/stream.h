/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Streaming a file as a response body, gzipped on the fly or not, so a
 * large trace never sits in the proxy's memory. The mount computes a file
 * when it is opened or first read, so the caller reads the first block
 * itself (and can still answer with an error status); the stream starts
 * with that block.
 */
#ifndef UI_STREAM_H
#define UI_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bytes read ahead before the response starts. */
#define UI_STREAM_BLOCK (256 * 1024)

struct ui_stream;

/*
 * Makes a stream of fd that first yields the n bytes at head (a malloc'd
 * block of UI_STREAM_BLOCK bytes). Takes ownership of fd and head, also on
 * failure. Returns NULL when out of memory.
 */
struct ui_stream *ui_stream_new(int fd, char *head, size_t n, int gzip);

/*
 * MHD content reader: fills out with at most max bytes of the body.
 * Returns the bytes written, or MHD's end-of-stream / error values.
 */
ssize_t ui_stream_read(void *cls, uint64_t pos, char *out, size_t max);

/* MHD free callback: closes the file and frees the stream. */
void ui_stream_free(void *cls);

#endif
