/*
 * jax_kernels_cache.c - a host's GPU kernels as the persistent cache keeps
 * them (jax_launchers_int.h), so that kernel_launchers*.csv and
 * xla_summary.csv of all hosts combine from the hosts' entries.
 *
 * The kernels are a snapshot part per host: on a miss the host's profile
 * is visited once with latency and category, every kernel kept in a
 * table, and the table persisted as "intermediate jax_kernels HOST".
 * Payload: "JAXKERN1", u32 names, u32 categories, u32 kernels, the names
 * and categories (strings), then per kernel u32 name, u32 category, f64
 * ts, f64 dur, u64 pid, u64 tid, u64 corr, f64 latency (store_codec.h).
 * A visit replays the table in the profile's order, so the files are the
 * same bytes as without the cache.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/intern.h"
#include "jax_launchers_int.h"
#include "store/store_codec.h"

#define KERN_MAGIC "JAXKERN1"
#define KERN_BYTES 56 /* a kernel's record in the payload */

struct kern {
    uint32_t name, cat; /* ids in names, cats */
    double ts, dur, latency;
    int64_t pid, tid, corr;
};

struct host_kernels {
    struct intern names;
    struct intern cats;
    struct kern *k;
    uint32_t n, cap;
};

static void free_kernels(void *p)
{
    struct host_kernels *h = p;

    if (h == NULL)
        return;
    intern_free(&h->names);
    intern_free(&h->cats);
    free(h->k);
    free(h);
}

static struct host_kernels *new_kernels(void)
{
    struct host_kernels *h = calloc(1, sizeof(*h));

    if (h == NULL)
        return NULL;
    if (intern_init(&h->names) != 0 || intern_init(&h->cats) != 0) {
        free_kernels(h);
        return NULL;
    }
    return h;
}

/* jax_visit_host callback: keep the kernel. */
static int keep(void *arg, const struct jax_kernel *x)
{
    struct host_kernels *h = arg;
    struct kern *k;
    int rc;

    if (h->n == UINT32_MAX)
        return -ENOMEM;
    if ((rc = xp_grow((void **)&h->k, &h->cap, h->n, sizeof(*h->k))) != 0)
        return rc;
    k = &h->k[h->n];
    if ((rc = intern_add(&h->names, x->name, x->name_len, &k->name)) != 0 ||
        (rc = intern_add(&h->cats, x->category, strlen(x->category), &k->cat)) != 0)
        return rc < 0 ? rc : -ENOMEM;
    k->ts = x->ts;
    k->dur = x->dur;
    k->latency = x->launch_latency;
    k->pid = x->pid;
    k->tid = x->tid;
    k->corr = x->corr;
    h->n++;
    return 0;
}

static void save(const struct host_kernels *h, struct out *o)
{
    uint32_t i;

    out_write(o, KERN_MAGIC, 8);
    sc_put_u32(o, h->names.n - 1);
    sc_put_u32(o, h->cats.n - 1);
    sc_put_u32(o, h->n);
    for (i = 1; i < h->names.n; i++)
        sc_put_str(o, h->names.text[i]);
    for (i = 1; i < h->cats.n; i++)
        sc_put_str(o, h->cats.text[i]);
    for (i = 0; i < h->n; i++) {
        const struct kern *k = &h->k[i];
        sc_put_u32(o, k->name);
        sc_put_u32(o, k->cat);
        sc_put_f64(o, k->ts);
        sc_put_f64(o, k->dur);
        sc_put_u64(o, (uint64_t)k->pid);
        sc_put_u64(o, (uint64_t)k->tid);
        sc_put_u64(o, (uint64_t)k->corr);
        sc_put_f64(o, k->latency);
    }
}

/* One string of the payload into t, expecting id want. */
static void load_str(struct sc_cur *c, struct intern *t, uint32_t want)
{
    const char *s = sc_str(c);
    uint32_t id;

    if (s == NULL || intern_add(t, s, strlen(s), &id) != 0 || id != want)
        c->bad = 1; /* NULL, a duplicate or out of memory */
}

static struct host_kernels *load(const void *p, size_t size)
{
    struct host_kernels *h = new_kernels();
    struct arena arena;
    struct sc_cur c;
    uint32_t nnames, ncats, i;

    if (h == NULL)
        return NULL;
    arena_init(&arena);
    sc_init(&c, p, size, &arena);
    sc_magic(&c, KERN_MAGIC);
    nnames = sc_u32(&c);
    ncats = sc_u32(&c);
    h->n = sc_u32(&c);
    if (!c.bad && (nnames > c.left / 4 || ncats > c.left / 4 || h->n > c.left / KERN_BYTES))
        c.bad = 1;
    for (i = 0; !c.bad && i < nnames; i++)
        load_str(&c, &h->names, i + 1);
    for (i = 0; !c.bad && i < ncats; i++)
        load_str(&c, &h->cats, i + 1);
    if (!c.bad && (h->k = malloc((h->n ? h->n : 1) * sizeof(*h->k))) == NULL)
        c.bad = 1;
    for (i = 0; !c.bad && i < h->n; i++) {
        struct kern *k = &h->k[i];
        k->name = sc_u32(&c);
        k->cat = sc_u32(&c);
        k->ts = sc_f64(&c);
        k->dur = sc_f64(&c);
        k->pid = (int64_t)sc_u64(&c);
        k->tid = (int64_t)sc_u64(&c);
        k->corr = (int64_t)sc_u64(&c);
        k->latency = sc_f64(&c);
        if (k->name == 0 || k->name > nnames || k->cat == 0 || k->cat > ncats)
            c.bad = 1;
    }
    h->cap = h->n;
    if (sc_done(&c) != 0) {
        arena_free(&arena);
        free_kernels(h);
        return NULL;
    }
    arena_free(&arena);
    return h;
}

static int build(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    struct store *st = store_shared();
    char *key = st != NULL ? snapshot_intermediate_key(snap, "jax_kernels", host) : NULL;
    struct host_kernels *h = NULL;
    struct jax_visit_state v;
    int rc;

    if (key != NULL) {
        struct blob *b = store_get(st, key);
        if (b != NULL)
            h = load(b->mem, b->size);
        blob_unref(b);
        if (h != NULL) {
            free(key);
            *value = h;
            return 0;
        }
    }
    if ((h = new_kernels()) == NULL) {
        free(key);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    memset(&v, 0, sizeof(v));
    v.fn = keep;
    v.arg = h;
    v.want_latency = 1;
    v.want_category = 1;
    if ((rc = jax_visit_host(snap, host, 0, &v, err)) != 0) {
        if (rc == -ENOMEM)
            xp_err_set(err, rc, "out of memory");
        free(key);
        free_kernels(h);
        return rc;
    }
    if (key != NULL && !snapshot_is_fresh(snap, 2)) {
        struct out o;
        out_init(&o);
        save(h, &o);
        sc_persist(st, key, &o);
    }
    free(key);
    *value = h;
    return 0;
}

static const struct snapshot_part kernels_part = {"jax_kernels", build, free_kernels};

int jax_visit_cached(struct snapshot *snap, const char *host, int i, struct jax_visit_state *v,
                     struct xp_err *err)
{
    struct host_kernels *h;
    void *p;
    uint32_t j;
    int rc;

    if ((rc = snapshot_part(snap, &kernels_part, host, NULL, host, &p, err)) != 0)
        return rc;
    h = p;
    for (j = 0; j < h->n; j++) {
        const struct kern *k = &h->k[j];
        struct jax_kernel x;
        x.name = h->names.text[k->name];
        x.name_len = h->names.len[k->name];
        x.name_plain = jax_csv_plain(x.name, x.name_len);
        x.category = h->cats.text[k->cat];
        x.ts = k->ts;
        x.dur = k->dur;
        x.pid = k->pid;
        x.tid = k->tid;
        x.corr = v->want_latency ? k->corr : CT_NONE;
        x.launch_latency = v->want_latency ? k->latency : NAN;
        x.host = i;
        v->count++;
        if ((rc = v->fn(v->arg, &x)) != 0)
            return rc;
    }
    return 0;
}
