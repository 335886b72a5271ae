/*
 * store_codec.c - the bytes of a persisted intermediate and back (see
 * store_codec.h).
 */
#include "store_codec.h"

#include <errno.h>
#include <string.h>

void sc_put_u32(struct out *o, uint32_t v)
{
    out_write(o, &v, sizeof(v));
}

void sc_put_u64(struct out *o, uint64_t v)
{
    out_write(o, &v, sizeof(v));
}

void sc_put_f64(struct out *o, double v)
{
    out_write(o, &v, sizeof(v));
}

void sc_put_f32(struct out *o, float v)
{
    out_write(o, &v, sizeof(v));
}

void sc_put_str(struct out *o, const char *s)
{
    size_t n;

    if (s == NULL) {
        sc_put_u32(o, SC_NULL_STR);
        return;
    }
    n = strlen(s);
    sc_put_u32(o, (uint32_t)n);
    out_write(o, s, n);
}

void sc_init(struct sc_cur *c, const void *p, size_t n, struct arena *arena)
{
    c->p = p;
    c->left = n;
    c->arena = arena;
    c->bad = 0;
}

static void get(struct sc_cur *c, void *dst, size_t n)
{
    if (c->bad || c->left < n) {
        c->bad = 1;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, c->p, n);
    c->p += n;
    c->left -= n;
}

void sc_magic(struct sc_cur *c, const char magic[8])
{
    char got[8];

    get(c, got, sizeof(got));
    if (memcmp(got, magic, sizeof(got)) != 0)
        c->bad = 1;
}

uint32_t sc_u32(struct sc_cur *c)
{
    uint32_t v;

    get(c, &v, sizeof(v));
    return v;
}

uint64_t sc_u64(struct sc_cur *c)
{
    uint64_t v;

    get(c, &v, sizeof(v));
    return v;
}

double sc_f64(struct sc_cur *c)
{
    double v;

    get(c, &v, sizeof(v));
    return v;
}

float sc_f32(struct sc_cur *c)
{
    float v;

    get(c, &v, sizeof(v));
    return v;
}

const char *sc_str(struct sc_cur *c)
{
    uint32_t n = sc_u32(c);
    char *s;

    if (n == SC_NULL_STR || c->bad)
        return NULL;
    if (c->left < n) {
        c->bad = 1;
        return NULL;
    }
    s = arena_strndup(c->arena, c->p, n);
    if (s == NULL)
        c->bad = 1;
    c->p += n;
    c->left -= n;
    return s;
}

void *sc_array(struct sc_cur *c, uint32_t n, size_t size, size_t min)
{
    size_t bytes = (n ? n : 1) * size;
    void *v;

    if (c->bad || (uint64_t)n * min > c->left) {
        c->bad = 1;
        return NULL;
    }
    v = arena_alloc(c->arena, bytes);
    if (v == NULL)
        c->bad = 1;
    else
        memset(v, 0, bytes);
    return v;
}

int sc_done(const struct sc_cur *c)
{
    return c->bad || c->left != 0 ? -EIO : 0;
}

void sc_persist(struct store *st, const char *key, struct out *o)
{
    struct xp_err err = {0};
    struct blob *b;

    if (out_finish(o, &b) != 0)
        return;
    (void)store_put_blob(st, key, b, &err);
    blob_unref(b);
}
