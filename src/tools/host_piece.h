/*
 * host_piece.h - a host's part of an all-hosts file, kept in the cache.
 *
 * Files such as summary.json and module_list.json are the hosts' parts put
 * together. A part is made once by its tool's function and kept in the
 * persistent cache (cache_dir=) under "intermediate piece WHAT HOST", with
 * two numbers the tool combines (summary.json: the host's time span), so
 * that a process combining the hosts' entries reads no profile.
 */
#ifndef XPROFS_HOST_PIECE_H
#define XPROFS_HOST_PIECE_H

#include <stdint.h>

#include "tool.h"

/* Writes host's part to o and its two numbers; 0 or a negative errno with
 * ctx->err set. */
typedef int (*host_piece_fn)(struct tool_ctx *ctx, const char *host, struct out *o, int64_t *a,
                             int64_t *b);

/* Appends host's part (made by fn, or mapped back from the cache) to dst,
 * with its numbers in *a and *b. Returns what fn returned (0 from the
 * cache). */
int host_piece(struct tool_ctx *ctx, const char *what, const char *host, host_piece_fn fn,
               struct out *dst, int64_t *a, int64_t *b);

#endif
