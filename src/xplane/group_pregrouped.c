/*
 * group_pregrouped.c - profiles saved already grouped (old TensorFlow
 * profilers): group ids read from the group_id stats, names from step_name
 * and the Steps markers from the device planes' Steps lines.
 */
#include "group_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigalloc.h"
#include "base/parallel.h"

/* The group_id pass: lines side by side, each into its own row of gid. */
struct gid_job {
    const struct xspace *xs;
    const uint32_t *line_base; /* first event of each line (flat numbering) */
    uint32_t *plane_of;        /* [line] its plane */
    uint32_t *line_of;         /* [line] its index in the plane */
    int32_t *gid;              /* [event] group id, or -1 */
    int64_t *line_max;         /* [line] largest group id kept, or -1 */
};

/* Group ids of flat line i from their group_id stats: values 0 .. 2^24 - 1
 * kept, others read as none (parallel_for item). */
static int read_line_gids(void *arg, size_t i)
{
    struct gid_job *job = arg;
    const struct xp_plane *pl = &job->xs->planes[job->plane_of[i]];
    const struct xp_line *ln = &pl->lines[job->line_of[i]];
    int64_t gsid = pl->stat_id[XS_GROUP_ID], max_id = -1;
    int32_t *row = job->gid + job->line_base[i];
    uint32_t e;

    for (e = 0; e < ln->nevents; e++) {
        struct xp_stat st;
        int32_t known = ln->gids != NULL ? ln->gids[e] : XP_GID_WALK;
        row[e] = -1;
        if (known >= 0 && known < (1 << 24)) {
            /* the one group_id the decoder saw */
            row[e] = known;
            if (known > max_id)
                max_id = known;
        } else if (known == XP_GID_WALK && gsid != XP_NO_STAT &&
                   xp_event_own_stat(pl, ln, &ln->events[e], gsid, &st)) {
            int64_t v = xp_stat_int(&st);
            if (v >= 0 && v < (1 << 24)) {
                row[e] = (int32_t)v;
                if (v > max_id)
                    max_id = v;
            }
        }
    }
    job->line_max[i] = max_id;
    return 0;
}

/* Files saved already grouped: read group_id stats and the Steps lines. */
int gr_read_pre_grouped(struct xp_groups *g, uint32_t *line_base, uint32_t n)
{
    const struct xspace *xs = g->xs;
    int32_t *gid = big_malloc(((size_t)n ? n : 1) * sizeof(int32_t));
    int64_t max_id = -1;
    char **names = NULL;
    uint32_t p, l, e, flat = 0, nlines = 0;
    struct gid_job job;
    int rc;

    for (p = 0; p < xs->nplanes; p++)
        nlines += xs->planes[p].nlines;
    job = (struct gid_job){xs,
                           line_base,
                           malloc(((size_t)nlines + 1) * sizeof(uint32_t)),
                           malloc(((size_t)nlines + 1) * sizeof(uint32_t)),
                           gid,
                           malloc(((size_t)nlines + 1) * sizeof(int64_t))};
    if (gid == NULL || job.plane_of == NULL || job.line_of == NULL || job.line_max == NULL) {
        big_free(gid);
        free(job.plane_of);
        free(job.line_of);
        free(job.line_max);
        return -ENOMEM;
    }
    for (p = 0; p < xs->nplanes; p++) {
        for (l = 0; l < xs->planes[p].nlines; l++, flat++) {
            job.plane_of[flat] = p;
            job.line_of[flat] = l;
        }
    }
    rc = parallel_for(nlines, 0, read_line_gids, &job);
    for (flat = 0; flat < nlines; flat++) {
        if (job.line_max[flat] > max_id)
            max_id = job.line_max[flat];
    }
    free(job.plane_of);
    free(job.line_of);
    free(job.line_max);
    if (rc != 0) {
        big_free(gid);
        return rc;
    }
    if ((rc = gr_attach_tables(g, gid, NULL, line_base)) != 0)
        return rc;
    /* group names from step_name stats; Steps lines give the markers */
    if (max_id >= 0) {
        names = calloc((size_t)max_id + 1, sizeof(*names));
        if (names == NULL)
            return -ENOMEM;
    }
    flat = 0;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int64_t snid = pl->stat_id[XS_STEP_NAME];
        size_t cap = 0;
        for (l = 0; l < pl->nlines; l++, flat++) {
            const struct xp_line *ln = &pl->lines[l];
            int32_t *row = gid + line_base[flat];
            int is_steps = (int32_t)ln->id == (int32_t)0xdeadbeef;
            for (e = 0; e < ln->nevents; e++) {
                struct xp_stat st;
                if (row[e] < 0)
                    continue;
                if (is_steps && strncmp(pl->name, "/device:", 8) == 0) {
                    int64_t b = xp_event_start_ps(ln, &ln->events[e]);
                    if (g->nsteps[p] == cap) {
                        size_t nc = cap ? cap * 2 : 16;
                        struct xp_step_marker *ns = realloc(g->steps[p], nc * sizeof(*ns));
                        if (ns == NULL) {
                            rc = -ENOMEM;
                            goto out;
                        }
                        g->steps[p] = ns;
                        cap = nc;
                    }
                    g->steps[p][g->nsteps[p]++] =
                        (struct xp_step_marker){row[e], b, b + ln->events[e].duration_ps};
                }
                if (names[row[e]] == NULL && snid != XP_NO_STAT &&
                    xp_event_own_stat(pl, ln, &ln->events[e], snid, &st) &&
                    (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF)) {
                    names[row[e]] =
                        arena_strndup(&((struct groups_mem *)g->mem)->arena, st.str, st.len);
                    if (names[row[e]] == NULL) {
                        rc = -ENOMEM;
                        goto out;
                    }
                }
            }
        }
    }
    rc = 0;
    for (e = 0; (int64_t)e <= max_id && rc == 0; e++) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%u", e);
        rc = gr_add_group(g, e, names[e] ? names[e] : buf, -1, 0, 0, 0, 0);
    }
out:
    free(names);
    return rc;
}
