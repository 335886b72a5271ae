/*
 * host_piece.c - a host's part of an all-hosts file (host_piece.h).
 *
 * Payload: "HPIECE01", i64 a, i64 b, u64 length, then the part's bytes
 * (store_codec.h). A part is not kept while its profile is still being
 * written (snapshot_is_fresh), nor when its function failed.
 */
#include "host_piece.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_codec.h"

#define PIECE_MAGIC "HPIECE01"

/* The key of host's part of file what ("summary"): intermediate piece WHAT HOST. */
static char *piece_key(const struct snapshot *snap, const char *what, const char *host)
{
    char kind[128];

    snprintf(kind, sizeof(kind), "piece %s", what);
    return snapshot_intermediate_key(snap, kind, host);
}

/* The cached part into dst: 0, or -1 on a miss or a bad entry. */
static int from_store(struct store *st, const char *key, struct out *dst, int64_t *a, int64_t *b)
{
    struct blob *bl = store_get(st, key);
    struct arena arena;
    struct sc_cur c;
    uint64_t len;
    int rc = -1;

    if (bl == NULL)
        return -1;
    arena_init(&arena);
    sc_init(&c, bl->mem, bl->size, &arena);
    sc_magic(&c, PIECE_MAGIC);
    *a = (int64_t)sc_u64(&c);
    *b = (int64_t)sc_u64(&c);
    len = sc_u64(&c);
    if (!c.bad && len == c.left) {
        out_write(dst, c.p, (size_t)len);
        rc = 0;
    }
    arena_free(&arena);
    blob_unref(bl);
    return rc;
}

int host_piece(struct tool_ctx *ctx, const char *what, const char *host, host_piece_fn fn,
               struct out *dst, int64_t *a, int64_t *b)
{
    struct store *st = store_shared();
    char *key = st != NULL ? piece_key(ctx->snap, what, host) : NULL;
    struct out part;
    int rc;

    if (key != NULL && from_store(st, key, dst, a, b) == 0) {
        free(key);
        return 0;
    }
    out_init(&part);
    if ((rc = fn(ctx, host, &part, a, b)) != 0 || out_failed(&part)) {
        out_discard(&part);
        free(key);
        return rc != 0 ? rc : xp_err_set(ctx->err, -ENOMEM, "out of memory");
    }
    out_append(dst, &part);
    if (key != NULL && !snapshot_is_fresh(ctx->snap, 2)) {
        struct out o;
        out_init(&o);
        out_write(&o, PIECE_MAGIC, 8);
        sc_put_u64(&o, (uint64_t)*a);
        sc_put_u64(&o, (uint64_t)*b);
        sc_put_u64(&o, out_len(&part));
        out_append(&o, &part);
        sc_persist(st, key, &o);
    }
    out_discard(&part);
    free(key);
    return 0;
}
