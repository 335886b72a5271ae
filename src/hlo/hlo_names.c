/*
 * hlo_names.c - a host's HLO module names and counts (hlo_names.h), built
 * from its modules or mapped back from the persistent cache.
 *
 * Payload: "HLONAME1", u32 nmods, u32 texts_truncated, then per module its
 * u64 program id and its name (store_codec.h).
 */
#include "hlo_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module.h"
#include "store/store_codec.h"

#define NAMES_MAGIC "HLONAME1"

static void free_names(void *v)
{
    struct hlo_names *n = v;

    if (n == NULL)
        return;
    arena_free(&n->arena);
    free(n);
}

static struct hlo_names *new_names(void)
{
    struct hlo_names *n = calloc(1, sizeof(*n));

    if (n != NULL)
        arena_init(&n->arena);
    return n;
}

static void save(const struct hlo_names *n, struct out *o)
{
    out_write(o, NAMES_MAGIC, 8);
    sc_put_u32(o, n->nmods);
    sc_put_u32(o, n->texts_truncated);
    for (uint32_t i = 0; i < n->nmods; i++) {
        sc_put_u64(o, n->program_ids[i]);
        sc_put_str(o, n->names[i]);
    }
}

static int load(const void *p, size_t size, struct hlo_names **np)
{
    struct hlo_names *n = new_names();
    struct sc_cur c;

    if (n == NULL)
        return -ENOMEM;
    sc_init(&c, p, size, &n->arena);
    sc_magic(&c, NAMES_MAGIC);
    n->nmods = sc_u32(&c);
    n->texts_truncated = sc_u32(&c);
    n->program_ids = sc_array(&c, n->nmods, sizeof(*n->program_ids), 12);
    n->names = sc_array(&c, n->nmods, sizeof(*n->names), 12);
    for (uint32_t i = 0; !c.bad && i < n->nmods; i++) {
        n->program_ids[i] = sc_u64(&c);
        n->names[i] = sc_str(&c);
        if (n->names[i] == NULL)
            c.bad = 1;
    }
    if (sc_done(&c) != 0) {
        free_names(n);
        return -EIO;
    }
    *np = n;
    return 0;
}

static int from_modules(const struct hlo_modules *m, struct hlo_names **np)
{
    struct hlo_names *n = new_names();
    uint32_t i;

    if (n == NULL)
        return -ENOMEM;
    n->nmods = m->nmods;
    n->texts_truncated = m->texts_truncated;
    n->program_ids = arena_alloc(&n->arena, (m->nmods ? m->nmods : 1) * sizeof(uint64_t));
    n->names = arena_alloc(&n->arena, (m->nmods ? m->nmods : 1) * sizeof(char *));
    for (i = 0; n->program_ids != NULL && n->names != NULL && i < m->nmods; i++) {
        const char *s = m->mods[i].g.name != NULL ? m->mods[i].g.name : "";
        n->program_ids[i] = m->mods[i].program_id;
        if ((n->names[i] = arena_strndup(&n->arena, s, strlen(s))) == NULL)
            break;
    }
    if (i < m->nmods || n->program_ids == NULL || n->names == NULL) {
        free_names(n);
        return -ENOMEM;
    }
    *np = n;
    return 0;
}

static int build(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    struct store *st = store_shared();
    char *key = st != NULL ? snapshot_intermediate_key(snap, "hlo_names", host) : NULL;
    const struct hlo_modules *m;
    struct hlo_names *n;
    int rc;

    if (key != NULL) {
        struct blob *b = store_get(st, key);
        rc = b != NULL ? load(b->mem, b->size, &n) : -ENOENT;
        blob_unref(b);
        if (rc == 0) {
            free(key);
            *value = n;
            return 0;
        }
    }
    if ((rc = snapshot_hlo_modules(snap, host, &m, err)) != 0) {
        free(key);
        return rc;
    }
    if ((rc = from_modules(m, &n)) != 0) {
        free(key);
        return xp_err_set(err, rc, "%s: HLO module names: out of memory", host);
    }
    if (key != NULL && !snapshot_is_fresh(snap, 2)) {
        struct out o;
        out_init(&o);
        save(n, &o);
        sc_persist(st, key, &o);
    }
    free(key);
    *value = n;
    return 0;
}

static const struct snapshot_part names_part = {"hlo_names", build, free_names};

int snapshot_hlo_names(struct snapshot *snap, const char *host, const struct hlo_names **np,
                       struct xp_err *err)
{
    void *v;
    int rc = snapshot_part(snap, &names_part, host, NULL, host, &v, err);

    *np = rc == 0 ? v : NULL;
    return rc;
}
