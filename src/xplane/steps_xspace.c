/*
 * steps_xspace.c - steps from an XSpace: pick the step annotation on the
 * /host: planes, then hand every host line that holds a step to the builder.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/stats.h"
#include "steps_build.h"

/* Bits of a metadata's flags. */
enum {
    MF_STEP_NUM = 1, /* an event of it (or the metadata) carries step_num */
    MF_ROOT = 2,     /* ... carries _r */
    MF_USED = 4,     /* some host event uses it */
};

#define SCAN_PER_META 64 /* events of one metadata whose stats detection reads */

/* A host plane: "/host:..." other than the metadata plane. */
static int host_plane(const struct xp_plane *p)
{
    return strncmp(p->name, "/host:", 6) == 0 && strcmp(p->name, "/host:metadata") != 0;
}

/* Flag bits of the stats in st[0..n) that are step_num / _r in plane p. */
static int stat_bits(const struct xp_plane *p, const struct xp_stat *st, uint32_t n)
{
    int bits = 0;
    uint32_t i;

    for (i = 0; i < n; i++) {
        if (p->stat_id[XS_STEP_NUM] != XP_NO_STAT && st[i].meta_id == p->stat_id[XS_STEP_NUM])
            bits |= MF_STEP_NUM;
        if (p->stat_id[XS_IS_ROOT] != XP_NO_STAT && st[i].meta_id == p->stat_id[XS_IS_ROOT])
            bits |= MF_ROOT;
    }
    return bits;
}

/* Flags of every metadata of host plane p (flags[k] for p->emeta[k]). The
 * stats of at most SCAN_PER_META events of each metadata are read: an
 * annotation carries its step_num / _r on every occurrence, and reading every
 * host event's stats would cost more than the rest of the model. */
static int scan_plane(const struct xp_plane *p, uint8_t *flags, struct xp_err *err)
{
    int want = (p->stat_id[XS_STEP_NUM] != XP_NO_STAT ? MF_STEP_NUM : 0) |
               (p->stat_id[XS_IS_ROOT] != XP_NO_STAT ? MF_ROOT : 0);
    uint8_t *seen = calloc(p->nemeta ? p->nemeta : 1, 1);
    uint32_t k, l, e;

    if (seen == NULL)
        return xp_err_set(err, -ENOMEM, "steps: out of memory");
    for (k = 0; k < p->nemeta; k++)
        flags[k] = (uint8_t)stat_bits(p, p->emeta[k].stats, p->emeta[k].nstats);
    for (l = 0; l < p->nlines; l++) {
        const struct xp_line *ln = &p->lines[l];
        for (e = 0; e < ln->nevents; e++) {
            const struct xp_event *ev = &ln->events[e];
            struct xp_stat_iter it;
            struct xp_stat st;
            int rc;
            flags[ev->meta] |= MF_USED;
            if (want == 0 || (flags[ev->meta] & want) == want || seen[ev->meta] >= SCAN_PER_META)
                continue;
            seen[ev->meta]++;
            xp_stat_iter_init(&it, p, ln, ev);
            while ((rc = xp_stat_next(&it, &st)) == 1)
                flags[ev->meta] |= (uint8_t)stat_bits(p, &st, 1);
            if (rc < 0) {
                free(seen);
                return xp_err_set(err, -EIO, "steps: corrupt stats of an event on line '%s'",
                                  ln->name);
            }
        }
    }
    free(seen);
    return 0;
}

/* Add the names of the metadata of p whose flags have all bits of mask (and
 * are used), or, with mask 0, the TensorFlow step markers that are used. */
static int add_names(struct st_builder *b, const struct xp_plane *p, const uint8_t *flags, int mask,
                     struct xp_err *err)
{
    uint32_t k;
    int i, rc;

    for (k = 1; k < p->nemeta; k++) {
        const char *name = p->emeta[k].name;
        int pick = 0;
        if (!(flags[k] & MF_USED) || name[0] == '\0')
            continue;
        if (mask == MF_ROOT)
            pick = (flags[k] & MF_ROOT) || strcmp(name, "TraceContext") == 0;
        else if (mask != 0)
            pick = (flags[k] & mask) == mask;
        for (i = 0; mask == 0 && i < ST_N_TF_MARKERS; i++)
            pick |= strcmp(name, st_tf_markers[i]) == 0;
        if (pick) {
            rc = st_add_name(b, name, strlen(name), err);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* Choose the step names: asked, else the first tier that finds any. */
static int choose_names(struct st_builder *b, const struct xspace *xs, const char *step,
                        enum xp_steps_source *source, struct xp_err *err)
{
    static const struct {
        int mask;
        enum xp_steps_source source;
    } tiers[] = {
        {MF_STEP_NUM, XP_STEPS_STEP_NUM}, {MF_ROOT, XP_STEPS_ROOT}, {0, XP_STEPS_TF_MARKER}};
    uint8_t **flags = calloc(xs->nplanes ? xs->nplanes : 1, sizeof(*flags));
    uint32_t i;
    size_t t;
    int rc = 0;

    if (flags == NULL)
        return xp_err_set(err, -ENOMEM, "steps: out of memory");
    if (step != NULL) {
        *source = XP_STEPS_ASKED;
        rc = st_add_name(b, step, strlen(step), err);
        goto out;
    }
    for (i = 0; i < xs->nplanes && rc == 0; i++) {
        if (!host_plane(&xs->planes[i]))
            continue;
        flags[i] = calloc(xs->planes[i].nemeta, 1);
        if (flags[i] == NULL)
            rc = xp_err_set(err, -ENOMEM, "steps: out of memory");
        else
            rc = scan_plane(&xs->planes[i], flags[i], err);
    }
    for (t = 0; t < sizeof(tiers) / sizeof(tiers[0]) && rc == 0; t++) {
        for (i = 0; i < xs->nplanes && rc == 0; i++) {
            if (flags[i] != NULL)
                rc = add_names(b, &xs->planes[i], flags[i], tiers[t].mask, err);
        }
        *source = tiers[t].source;
        if (b->m->nstep_names > 0)
            break;
    }
out:
    for (i = 0; i < xs->nplanes; i++)
        free(flags[i]);
    free(flags);
    st_sort_names(b);
    return rc;
}

/* Context of the step-number callback: the line being read. */
struct num_ctx {
    const struct xp_plane *plane;
    const struct xp_line *line;
};

/* step_num of the event, else iter_num. */
static int event_num(void *ctxp, uint32_t src, int64_t *num)
{
    const struct num_ctx *c = ctxp;
    const struct xp_event *ev = &c->line->events[src];
    struct xp_stat st;

    if (xp_event_stat(c->plane, c->line, ev, XS_STEP_NUM, &st) ||
        xp_event_stat(c->plane, c->line, ev, XS_ITER_NUM, &st)) {
        *num = xp_stat_int(&st);
        return 1;
    }
    return 0;
}

/* Per-plane tables: is a step (1), is hidden (2). */
static int plane_kinds(const struct st_builder *b, const struct xp_plane *p, uint8_t *kind)
{
    uint32_t k;
    int any = 0;

    for (k = 0; k < p->nemeta; k++) {
        const char *name = p->emeta[k].name;
        kind[k] = 0;
        if (st_has_name(b, name, strlen(name)) != NULL) {
            kind[k] = 1;
            any = 1;
        } else if (xp_event_is_internal(name)) {
            kind[k] = 2;
        }
    }
    return any;
}

/* The name a row shows: the trace viewer's (display name, else name); a step
 * keeps the annotation's name it was chosen by. */
static const char *shown_name(const struct xp_event_meta *em, int is_step)
{
    return !is_step && em->display_name[0] ? em->display_name : em->name;
}

/* Feed one line to the builder if it holds a step. *buf / *cap: reused events. */
static int feed_line(struct st_builder *b, const struct xp_plane *p, const struct xp_line *ln,
                     const uint8_t *kind, struct st_ev **buf, uint32_t *cap, struct xp_err *err)
{
    struct num_ctx ctx = {p, ln};
    uint32_t e, n = 0;
    const char *tname;

    for (e = 0; e < ln->nevents && kind[ln->events[e].meta] != 1; e++)
        ;
    if (e == ln->nevents)
        return 0;
    if (*cap < ln->nevents) {
        struct st_ev *nb = realloc(*buf, (size_t)ln->nevents * sizeof(**buf));
        if (nb == NULL)
            return xp_err_set(err, -ENOMEM, "steps: out of memory");
        *buf = nb;
        *cap = ln->nevents;
    }
    for (e = 0; e < ln->nevents; e++) {
        const struct xp_event *ev = &ln->events[e];
        if (kind[ev->meta] == 2)
            continue;
        (*buf)[n++] = (struct st_ev){xp_event_start_ps(ln, ev), xp_event_end_ps(ln, ev),
                                     shown_name(&p->emeta[ev->meta], kind[ev->meta] == 1), e,
                                     kind[ev->meta] == 1};
    }
    st_sort_events(*buf, n);
    tname = ln->display_name[0] ? ln->display_name : ln->name;
    return st_track(b, ln->id, tname, *buf, n, event_num, &ctx, err);
}

static int feed_planes(struct st_builder *b, const struct xspace *xs, struct xp_err *err)
{
    struct st_ev *buf = NULL;
    uint32_t cap = 0, i, l;
    int rc = 0;

    for (i = 0; i < xs->nplanes && rc == 0; i++) {
        const struct xp_plane *p = &xs->planes[i];
        uint8_t *kind;
        if (!host_plane(p))
            continue;
        kind = malloc(p->nemeta ? p->nemeta : 1);
        if (kind == NULL) {
            rc = xp_err_set(err, -ENOMEM, "steps: out of memory");
            break;
        }
        if (plane_kinds(b, p, kind)) {
            for (l = 0; l < p->nlines && rc == 0; l++)
                rc = feed_line(b, p, &p->lines[l], kind, &buf, &cap, err);
        }
        free(kind);
    }
    free(buf);
    return rc;
}

int xp_steps_from_xspace(const struct xspace *xs, const char *step, struct xp_steps **sp,
                         struct xp_err *err)
{
    enum xp_steps_source source = XP_STEPS_NOTHING;
    struct st_builder b;
    char reason[256];
    int rc;

    rc = st_begin(&b, err);
    if (rc != 0)
        return rc;
    rc = choose_names(&b, xs, step, &source, err);
    if (rc == 0)
        rc = feed_planes(&b, xs, err);
    if (rc != 0) {
        st_abort(&b);
        return rc;
    }
    if (step != NULL)
        snprintf(reason, sizeof(reason), "no event named '%s' on a /host: plane", step);
    else
        snprintf(reason, sizeof(reason),
                 "no /host: event carries step_num or _r, and none is a TensorFlow step "
                 "marker (FunctionRun, SessionRun, RunGraph, ExecutorState::Process)");
    return st_finish(&b, source, reason, sp, err);
}
