/*
 * hlo_host_modules.c - the HLO modules of a host (hlo_module.h): the `Hlo
 * Proto` stats of its /host:metadata events, one module per program id that
 * every reader accepts, read once per snapshot with their instructions'
 * texts, which share one budget per host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module_int.h"
#include "session/session.h"
#include "reader/stats.h"
#include "reader/xspace.h"
/* The HloModuleProto inside HloProto bytes (its first hlo_module field).
 * Returns 0 or -1. */
static int module_of_proto(const uint8_t *p, size_t n, struct wire *module)
{
    struct wire w;

    wire_init(&w, p, n);
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1 && t == WIRE_LEN)
            return wire_bytes(&w, module) != 0 ? -1 : 0;
        if (wire_skip(&w, t) != 0)
            return -1;
    }
    return -1;
}

/* Free m and its modules; NULL is fine. */
void hlo_modules_free(struct hlo_modules *m)
{
    uint32_t i;

    if (m == NULL)
        return;
    for (i = 0; i < m->nmods; i++)
        hlo_graph_free(&m->mods[i].g);
    free(m->mods);
    free(m);
}

/* Whether an earlier module of program_id is one every reader accepts. */
static int program_taken(const struct hlo_modules *m, uint64_t program_id)
{
    uint32_t i;

    for (i = 0; i < m->nmods; i++) {
        if (m->mods[i].program_id == program_id && !m->mods[i].window_corrupt)
            return 1;
    }
    return 0;
}

/* Add the module of one metadata event, if it has one worth reading.
 * Returns 0 or -ENOMEM. */
static int add_module(struct hlo_modules *m, const struct xp_event_meta *em, int64_t proto_id,
                      int64_t pid_id, uint32_t *cap, const struct hlo_read_opts *opts)
{
    const struct xp_stat *proto = NULL;
    struct hlo_proto_module mod;
    struct hlo_read_status st = {0, 0};
    struct wire mw;
    uint32_t j;
    int rc;

    memset(&mod, 0, sizeof(mod));
    mod.program_id = (uint64_t)em->id;
    for (j = 0; j < em->nstats; j++) {
        if (em->stats[j].meta_id == proto_id && proto == NULL)
            proto = &em->stats[j];
    }
    if (proto == NULL || proto->kind != XP_STAT_BYTES)
        return 0;
    for (j = 0; j < em->nstats; j++) {
        if (pid_id != XP_NO_STAT && em->stats[j].meta_id == pid_id) {
            mod.program_id = (uint64_t)xp_stat_int(&em->stats[j]);
            break;
        }
    }
    if (program_taken(m, mod.program_id))
        return 0;
    if (module_of_proto((const uint8_t *)proto->str, proto->len, &mw) != 0)
        return 0;
    rc = hlo_read_module_opts(mw.p, (size_t)(mw.end - mw.p), &mod.g, &st, opts);
    if (rc != 0)
        return rc == -ENOMEM ? rc : 0;
    mod.window_corrupt = st.window_corrupt;
    if (m->nmods == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 8;
        struct hlo_proto_module *v = realloc(m->mods, nc * sizeof(*v));
        if (v == NULL) {
            hlo_graph_free(&mod.g);
            return -ENOMEM;
        }
        m->mods = v;
        *cap = nc;
    }
    m->mods[m->nmods++] = mod;
    return 0;
}

/* The modules of the /host:metadata planes' event metadata, in order. */
int hlo_modules_read(const struct xspace *xs, struct hlo_modules **mp, struct xp_err *err)
{
    struct hlo_modules *m = calloc(1, sizeof(*m));
    struct out scratch;            /* the writer every module's texts are printed with */
    struct hlo_text_budget budget; /* what all of them may take */
    struct hlo_read_opts opts = {HLO_READ_TEXTS, &scratch, &budget};
    uint32_t p, i, cap = 0;
    int rc = 0;

    *mp = NULL;
    if (m == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory reading HLO", xs->path);
    out_init(&scratch);
    hlo_text_budget_init(&budget);
    for (p = 0; p < xs->nplanes && rc == 0; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int64_t proto_id = pl->stat_id[XS_HLO_PROTO];
        if (strcmp(pl->name, "/host:metadata") != 0)
            continue;
        if (proto_id == XP_NO_STAT)
            proto_id = xp_plane_stat_id_by_name(pl, "HLO Proto");
        if (proto_id == XP_NO_STAT)
            continue;
        for (i = 1; i < pl->nemeta && rc == 0; i++)
            rc = add_module(m, &pl->emeta[i], proto_id, pl->stat_id[XS_PROGRAM_ID], &cap, &opts);
    }
    out_discard(&scratch);
    m->texts_truncated = budget.truncated;
    if (rc != 0) {
        hlo_modules_free(m);
        return xp_err_set(err, rc, "%s: out of memory reading HLO", xs->path);
    }
    *mp = m;
    return 0;
}

/* The part's builder: the modules of host arg. */
static int build_modules(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    struct xspace *xs;
    struct hlo_modules *m;
    int rc = snapshot_xspace_decoded(snap, arg, &xs, err);

    if (rc != 0)
        return rc;
    rc = hlo_modules_read(xs, &m, err);
    *value = m;
    return rc;
}

/* The part's destructor. */
static void free_modules(void *value)
{
    hlo_modules_free(value);
}

static const struct snapshot_part hlo_modules_part = {"hlo_modules", build_modules, free_modules};

/* The modules of host, read once per snapshot under a per-host key. */
int snapshot_hlo_modules(struct snapshot *snap, const char *host, const struct hlo_modules **mp,
                         struct xp_err *err)
{
    void *v;
    int rc;

    rc = snapshot_part(snap, &hlo_modules_part, host, NULL, host, &v, err);
    *mp = rc == 0 ? v : NULL;
    return rc;
}
