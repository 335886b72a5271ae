/*
 * host_facts.c - a host's facts (host_facts.h), from its indexed profile
 * or the persistent cache.
 *
 * Payload: "HOSTFCT1", then u32 flags, one bit per field in the order of
 * struct host_facts (store_codec.h). tpu_counter_ev alone decodes the
 * events, and only for hosts whose TPU planes declare counter_value.
 */
#include "host_facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_stats/dcn_slack.h"
#include "reader/stats.h"
#include "store/store_codec.h"
#include "tpu_sample.h"

#define FACTS_MAGIC "HOSTFCT1"
#define NFIELDS 7

static int *field(struct host_facts *f, int i)
{
    int *fields[NFIELDS] = {&f->xplane,    &f->gpu_plane,    &f->tpu_plane,     &f->hlo_metadata,
                            &f->megascale, &f->counter_stat, &f->tpu_counter_ev};
    return fields[i];
}

static void save(struct host_facts *f, struct out *o)
{
    uint32_t bits = 0;

    for (int i = 0; i < NFIELDS; i++)
        if (*field(f, i))
            bits |= 1u << i;
    out_write(o, FACTS_MAGIC, 8);
    sc_put_u32(o, bits);
}

static int load(const void *p, size_t size, struct host_facts *f)
{
    struct arena a;
    struct sc_cur c;
    uint32_t bits;
    int rc;

    arena_init(&a);
    sc_init(&c, p, size, &a);
    sc_magic(&c, FACTS_MAGIC);
    bits = sc_u32(&c);
    rc = sc_done(&c);
    arena_free(&a);
    if (rc != 0 || bits >> NFIELDS != 0)
        return -EIO;
    for (int i = 0; i < NFIELDS; i++)
        *field(f, i) = (bits >> i) & 1;
    return 0;
}

/* Whether a TPU plane that declares counter_value has an event with it. */
static int tpu_counter_events(struct snapshot *snap, const char *host, struct xp_err *err,
                              int *found)
{
    struct xspace *xs;
    uint32_t p, l, e;
    int rc;

    *found = 0;
    if ((rc = snapshot_xspace_decoded(snap, host, &xs, err)) != 0)
        return rc;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (strncmp(pl->name, "/device:TPU:", 12) != 0 ||
            pl->stat_id[XS_COUNTER_VALUE] == XP_NO_STAT)
            continue;
        for (l = 0; l < pl->nlines; l++) {
            for (e = 0; e < pl->lines[l].nevents; e++) {
                struct xp_stat st;
                if (xp_event_stat(pl, &pl->lines[l], &pl->lines[l].events[e], XS_COUNTER_VALUE,
                                  &st)) {
                    *found = 1;
                    return 0;
                }
            }
        }
    }
    return 0;
}

static int from_profile(struct snapshot *snap, const char *host, struct host_facts *f,
                        struct xp_err *err)
{
    struct xspace *xs;
    int maybe_counters = 0, rc;
    uint32_t p;

    if ((rc = snapshot_xspace(snap, host, &xs, err)) != 0)
        return rc;
    f->xplane = 1;
    f->megascale = dcn_xspace_has_megascale(xs);
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int gpu = strncmp(pl->name, "/device:GPU:", 12) == 0;
        int tpu = strncmp(pl->name, "/device:TPU:", 12) == 0;
        f->gpu_plane |= gpu;
        f->tpu_plane |= tpu;
        if ((gpu || tpu) && tpu_plane_has_counters(pl))
            f->counter_stat = 1;
        if (tpu && pl->stat_id[XS_COUNTER_VALUE] != XP_NO_STAT)
            maybe_counters = 1;
        if (strcmp(pl->name, "/host:metadata") == 0 &&
            (pl->stat_id[XS_HLO_PROTO] != XP_NO_STAT ||
             xp_plane_stat_id_by_name(pl, "HLO Proto") != XP_NO_STAT))
            f->hlo_metadata = 1;
    }
    if (maybe_counters)
        return tpu_counter_events(snap, host, err, &f->tpu_counter_ev);
    return 0;
}

static int build(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    struct store *st = store_shared();
    struct host_facts *f = calloc(1, sizeof(*f));
    char *key = NULL;
    int rc;

    if (f == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    if (snapshot_host_file(snap, host, SRC_XPLANE) == NULL) {
        *value = f;
        return 0;
    }
    if (st != NULL && (key = snapshot_intermediate_key(snap, "host_facts", host)) != NULL) {
        struct blob *b = store_get(st, key);
        rc = b != NULL ? load(b->mem, b->size, f) : -ENOENT;
        blob_unref(b);
        if (rc == 0) {
            free(key);
            *value = f;
            return 0;
        }
        memset(f, 0, sizeof(*f));
    }
    if ((rc = from_profile(snap, host, f, err)) != 0) {
        free(key);
        free(f);
        return rc;
    }
    if (key != NULL && !snapshot_is_fresh(snap, 2)) {
        struct out o;
        out_init(&o);
        save(f, &o);
        sc_persist(st, key, &o);
    }
    free(key);
    *value = f;
    return 0;
}

static const struct snapshot_part facts_part = {"host_facts", build, free};

int host_facts_get(struct snapshot *snap, const char *host, const struct host_facts **fp,
                   struct xp_err *err)
{
    void *v;
    int rc = snapshot_part(snap, &facts_part, host, NULL, host, &v, err);

    *fp = rc == 0 ? v : NULL;
    return rc;
}
