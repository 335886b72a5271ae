/*
 * jax_launchers_int.h - what the JAX kernel launcher files share
 * (jax_launchers.c drives the visit, jax_kernels_xspace.c and
 * jax_kernels_json.c walk the kernels of one host, jax_launches.c finds the
 * launch start of a correlation id, jax_opcat.c categorises, jax_summary.c
 * groups). Not for other modules: see jax_launchers.h.
 */
#ifndef XPROFS_JAX_LAUNCHERS_INT_H
#define XPROFS_JAX_LAUNCHERS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "reader/ctrace.h"
#include "jax_launchers.h"
#include "reader/xspace.h"

/* ---- jax_opcat.c: categories ---- */

/* The first JaxOpKeys category whose keyword s contains (static), or NULL. */
const char *jax_match_category(const char *s);

/* The category of a kernel from its name and hlo_op (may be NULL): the op's
 * wins over the name's, but for flash attention; JAX_UNCATEGORIZED when
 * neither matches. */
const char *jax_kernel_category(const char *name, const char *hlo_op);

/* 0 for the names of copies, memcpy and memset (not kernels), else 1. */
int jax_is_kernel_name(const char *name);

/* The category an hlo_op text gives (jax_match_category on at most its first
 * JAX_HLO_OP_MAX bytes, up to a NUL, as a C string), cached by the text: ops
 * repeat across kernels and matching them is not free. */
#define JAX_HLO_OP_MAX 511

struct jax_op_entry {
    const char *text;     /* NULL: empty slot */
    size_t len;           /* bytes of text */
    const char *category; /* NULL: no category */
};

struct jax_op_cache {
    struct jax_op_entry *slots; /* open addressing */
    size_t nslots;              /* a power of two */
    size_t used;                /* filled slots */
};

/* *catp = the category of the op text s[0..n) (s must outlive the cache);
 * 0 or -ENOMEM. */
int jax_op_category(struct jax_op_cache *c, const char *s, size_t n, const char **catp);
void jax_op_cache_free(struct jax_op_cache *c);

/* ---- jax_launches.c: launch start by correlation id ---- */

/* One (correlation id, host launch start in µs) pair. */
struct jax_corr {
    int64_t id;
    double ts;
};

/* Launch start by correlation id: a table indexed by id - base when the ids
 * are dense (as runtimes hand them out), else the sorted pairs. */
struct jax_launches {
    struct jax_corr *sorted; /* by id, one per id */
    size_t n;                /* entries in sorted */
    double *dense;           /* [id - base], NaN where no launch has the id */
    int64_t base;            /* smallest id */
    uint64_t range;          /* entries in dense */
};

/* Host-side events with a correlation id on /host:CPU planes; where several
 * share an id, the last in trace order wins. 0 or -ENOMEM. */
int jax_xspace_launches(const struct xspace *xs, struct jax_launches *t);
/* Host events (pid 701) of a JAX Chrome trace with a correlation id; where
 * several share an id, the first in file order wins. 0 or -ENOMEM. */
int jax_json_launches(const struct ctrace *ct, struct jax_launches *t);
/* The launch start of id, NaN when none. */
double jax_launch_ts(const struct jax_launches *t, int64_t id);
void jax_launches_free(struct jax_launches *t);

/* ---- jax_launchers.c: the visit ---- */

/* The state of one jax_visit, handed to the per-host walkers. */
struct jax_visit_state {
    jax_kernel_fn fn;             /* the caller's callback */
    void *arg;                    /* its argument */
    struct jax_launches launches; /* this host's launches, when asked */
    uint64_t count;               /* kernels seen */
    int want_latency;             /* fill corr and launch_latency */
    int want_category;            /* 0: k->category may be the name's alone (xplane) */
};

/* One host's kernels (host index i) from its profile; 0, a negative errno
 * with err set, or the callback's return. */
int jax_visit_host(struct snapshot *snap, const char *host, int i, struct jax_visit_state *v,
                   struct xp_err *err);

/* ---- jax_kernels_cache.c: a host's kernels kept in the persistent cache ---- */

/* The same visit from the host's kernels as the cache keeps them (made
 * from the profile, with latency and category, and kept, on a miss). */
int jax_visit_cached(struct snapshot *snap, const char *host, int i, struct jax_visit_state *v,
                     struct xp_err *err);

/* Hand one kernel (all but launch_latency filled) to the caller. */
int jax_emit(struct jax_visit_state *v, struct jax_kernel *k);

/* 1 when s[0..n) is a CSV field as is (no comma, quote or line break). */
int jax_csv_plain(const char *s, size_t n);

/* ---- jax_kernels_xspace.c / jax_kernels_json.c: one host's kernels ---- */

/* Kernels of an xspace's GPU streams in trace order. 0, -ENOMEM or the
 * callback's return. */
int jax_visit_xspace(const struct xspace *xs, int host, struct jax_visit_state *v);
/* Kernels of a JAX Chrome trace's GPU streams in trace order. */
int jax_visit_json(const struct ctrace *ct, int host, struct jax_visit_state *v);

#endif
