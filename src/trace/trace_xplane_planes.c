/*
 * trace_xplane_planes.c - which planes and lines of an xplane the trace
 * viewer shows: the planes XProf selects and their pids, their processes
 * ("<host> <plane name>"), threads and thread tracks, the lines' jobs;
 * and XProf's hidden internal event types.
 */
#include "trace_xplane_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xplane/derived.h"
#include "reader/stats.h"

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int plane_name_cmp(const void *a, const void *b, void *arg)
{
    const struct xspace *xs = arg;
    const struct shown_plane *x = a, *y = b;

    return strcmp(xs->planes[x->index].name, xs->planes[y->index].name);
}

/* XProf's plane selection (ConvertXSpaceToTraceEventsContainer). */
int txp_select_planes(const struct xspace *xs, struct shown_plane **outp, uint32_t *np)
{
    struct shown_plane *out = malloc((xs->nplanes + 1) * sizeof(*out));
    uint32_t n = 0, i, nhost, ngpu = 0;

    if (out == NULL)
        return -ENOMEM;
    for (i = 0; i < xs->nplanes; i++) {
        if (starts_with(xs->planes[i].name, "/host:CPU"))
            out[n++].index = i;
    }
    qsort_r(out, n, sizeof(*out), plane_name_cmp, (void *)xs);
    for (i = 0; i < n; i++)
        out[i].pid = HOST_PID_FIRST + i;
    nhost = n;
    for (i = 0; i < xs->nplanes; i++) {
        if (starts_with(xs->planes[i].name, "/device:GPU:"))
            ngpu++;
    }
    for (i = 0; i < xs->nplanes; i++) {
        const char *name = xs->planes[i].name;
        if (ngpu > 0 ? starts_with(name, "/device:GPU:") : starts_with(name, "/device:TPU:")) {
            int64_t pid = DEVICE_PID_FIRST + xs->planes[i].id;
            out[n].index = i;
            out[n].pid = (pid > DEVICE_PID_LAST || pid < 0) ? DEVICE_PID_FIRST : (uint32_t)pid;
            n++;
        }
    }
    for (i = 0; i < xs->nplanes; i++) {
        if (starts_with(xs->planes[i].name, "/device:CUSTOM:")) {
            out[n].index = i;
            out[n].pid = (uint32_t)(CUSTOM_PID_FIRST + xs->planes[i].id);
            n++;
        }
    }
    (void)nhost;
    *outp = out;
    *np = n;
    return 0;
}

/* Is the device a TPU core or non-core (full_dma applies, details lists it)? */
static void device_kind(const char *name, int *core, int *noncore)
{
    *core = strstr(name, "/device:TPU:") != NULL || strstr(name, "TensorNode") != NULL ||
            strstr(name, "TPU Core") != NULL;
    *noncore = strstr(name, "#Chip") != NULL &&
               (strstr(name, "Host Interface") != NULL || strstr(name, "HBM") != NULL ||
                strstr(name, "ICI Router") != NULL);
}

/* The display id XProf shows for a file line. */
static int64_t line_display_id(const struct builder *b, uint32_t p, uint32_t l)
{
    const struct xp_line *ln = &b->xs->planes[p].lines[l];
    const struct derived *dv = b->src->dv;

    if (dv != NULL && p < dv->nplanes && dv->display_ids[p] != NULL && dv->display_ids[p][l] != 0)
        return dv->display_ids[p][l];
    return ln->display_id != 0 ? ln->display_id : ln->id;
}

/* Append a job (grown by doubling). */
static int push_job(struct builder *b, uint32_t *cap, const struct line_job *job)
{
    if (b->njobs == *cap) {
        uint32_t n = *cap ? *cap * 2 : 64;
        struct line_job *v = realloc(b->jobs, n * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        b->jobs = v;
        *cap = n;
    }
    b->jobs[b->njobs++] = *job;
    return 0;
}

/* Queue job over events [0, n) in runs of XP_SPLIT events. */
static int push_runs(struct builder *b, uint32_t *cap, struct line_job *job, uint32_t n)
{
    uint32_t first;

    for (first = 0; first < n; first += XP_SPLIT) {
        job->first = first;
        job->end = n - first > XP_SPLIT ? first + XP_SPLIT : n;
        if (push_job(b, cap, job) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* Declare one shown plane (process, threads, thread tracks) and queue its
 * file lines as jobs. *shown is set when the plane has something to show. */
int txp_declare_plane(struct builder *b, const struct shown_plane *sp, uint32_t *jobs_cap,
                      int *shown)
{
    const struct xp_plane *pl = &b->xs->planes[sp->index];
    const struct derived *dv = b->src->dv;
    struct plane_state *ps = &b->planes[b->nplanes];
    char *pname;
    uint32_t l, nlines = 0, i;
    int dev, core, noncore, rc;

    *shown = 0;
    for (l = 0; l < pl->nlines; l++) {
        /* Derivation removes empty lines from GPU planes. */
        if (dv == NULL || pl->lines[l].nevents > 0 || !starts_with(pl->name, "/device:GPU:"))
            nlines++;
    }
    for (l = 0; dv != NULL && l < dv->nlines; l++)
        nlines += dv->lines[l].plane == sp->index;
    if (nlines == 0)
        return 0;
    pname = malloc(strlen(b->h->hostname) + strlen(pl->name) + 2);
    if (pname == NULL)
        return -ENOMEM;
    sprintf(pname, "%s %s", b->h->hostname, pl->name);
    dev = tv_add_device(b->h, sp->pid, pname);
    free(pname);
    if (dev < 0)
        return -ENOMEM;
    device_kind(pl->name, &core, &noncore);
    b->h->devices[dev].tpu |= core || noncore;
    b->h->tpu |= core;
    memset(ps, 0, sizeof(*ps));
    ps->pl = pl;
    ps->index = sp->index;
    ps->pid = sp->pid;
    ps->is_host = starts_with(pl->name, "/host:CPU");
    b->nplanes++;
    *shown = 1;
    ps->meta = calloc(pl->nemeta ? pl->nemeta : 1, sizeof(*ps->meta));
    if (ps->meta == NULL)
        return -ENOMEM;
    for (i = 0; i < pl->nemeta; i++)
        ps->meta[i].internal = (uint8_t)xp_event_is_internal(pl->emeta[i].name);
    rc = txp_roles_init(&ps->roles, pl);
    if (rc != 0)
        return rc;
    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        struct line_job job;
        memset(&job, 0, sizeof(job));
        job.plane = b->nplanes - 1;
        job.line = l;
        job.counter = strcmp(ln->name, "_counters_") == 0;
        job.tid = (uint32_t)line_display_id(b, sp->index, l);
        job.track = -1;
        if (ln->nevents == 0 || starts_with(ln->name, "counters_"))
            continue;
        if (!job.counter) {
            const char *shown_name = ln->display_name[0] != '\0' ? ln->display_name : ln->name;
            uint32_t name = tv_cstr(b->h, shown_name);
            if (name == 0 || tv_add_resource(b->h, sp->pid, job.tid, name) != 0)
                return -ENOMEM;
            job.track = tv_track_thread(b->h, sp->pid, job.tid);
            if (job.track < 0)
                return -ENOMEM;
        }
        if (push_runs(b, jobs_cap, &job, ln->nevents) != 0)
            return -ENOMEM;
    }
    for (l = 0; dv != NULL && l < dv->nlines; l++) {
        const struct dv_line *dl = &dv->lines[l];
        struct line_job job;
        uint32_t name;
        if (dl->plane != sp->index)
            continue;
        memset(&job, 0, sizeof(job));
        job.derived = 1;
        job.plane = b->nplanes - 1;
        job.line = l;
        job.tid = (uint32_t)(dl->display_id != 0 ? dl->display_id : dl->id);
        name = tv_cstr(b->h, dl->name);
        job.track = tv_track_thread(b->h, sp->pid, job.tid);
        if (name == 0 || job.track < 0 || tv_add_resource(b->h, sp->pid, job.tid, name) != 0)
            return -ENOMEM;
        if (push_runs(b, jobs_cap, &job, dl->nev) != 0)
            return -ENOMEM;
    }
    return 0;
}
