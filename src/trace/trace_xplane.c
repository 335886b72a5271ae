/*
 * trace_xplane.c - one host's xplane as XProf's streaming trace viewer sees
 * it (xprof/convert/xplane_to_trace_container.cc after
 * PreprocessSingleHostXSpace), into a trace index.
 *
 * Processes: /host:CPU* planes (sorted by name) are pids 701, 702, ...; GPU
 * planes (else TPU planes) 1 + plane id (1 when above 500); CUSTOM planes
 * 501 + id; named "<host> <plane name>". Threads: one per line with events,
 * except "_counters_" (its events are counter samples) and "counters_*"
 * lines; tid = low 32 bits of the display id. An event's name is its
 * step_name stat, else its metadata display name (the full name then becomes
 * arg long_name), else its name; internal event types are hidden.
 *
 * A host that is not grouped yet gets what XProf's preprocessing adds: flows
 * from correlation ids (host launch -> device kernel) and producer/consumer
 * stats, group ids from the shared grouping (group.h), step_name on explicit
 * step roots, and the derived GPU lines (derived.h). A host already grouped
 * (group_id stats in the file) is taken as it is, as XProf does.
 *
 * Events are added in parallel: every shown line (file or derived) is cut
 * into jobs of at most XP_SPLIT events; a first pass counts each job's shown
 * events and marks the metadata they use, those metadata are then named once
 * (names, frames, their own special stats), each job gets its slots in
 * track output order, and a second pass fills the slots, reading each
 * event's own stats once. Strings, frames and channel tracks are shared: a
 * worker takes the builder's lock for them (rare: step names, hlo_text,
 * counters, async events); flows and group ids go to the host's arrays by
 * source record (a host grouped here has its group ids read in place from
 * the grouping: no copy). A derived line drops its events' times as soon
 * as its last run is filled (derived_compact_line): the index holds them.
 * Derived lines are filled first, so that the memory they give back is
 * there before the file events need it.
 *
 * This file runs the build; the shown planes and lines are chosen in
 * trace_xplane_planes.c, stats read in trace_xplane_specials.c, the jobs
 * run in trace_xplane_fill.c (trace_xplane_int.h).
 */
#include "trace_xplane_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xplane/derived.h"
#include "xplane/group.h"
#include "base/parallel.h"
#include "trace_json.h"
#include "base/hash.h"

/* Where a job's events go: by track in output order (pid, channels, then
 * threads by tid), so that finishing moves few events. Counter lines go to
 * channels; async events found later move then. */
static uint64_t job_key(const struct builder *b, const struct line_job *job)
{
    uint64_t pid = b->planes[job->plane].pid;

    if (job->counter)
        return pid << 33;
    return (pid << 33) | (1ull << 32) | job->tid;
}

static int job_order_cmp(const void *x, const void *y, void *arg)
{
    const struct builder *b = arg;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    uint64_t ki = job_key(b, &b->jobs[i]), kj = job_key(b, &b->jobs[j]);

    if (ki != kj)
        return ki < kj ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Assign each job its first slot; returns the number of events. */
static int place_jobs(struct builder *b, uint32_t *totalp)
{
    uint32_t *order = malloc((b->njobs ? b->njobs : 1) * sizeof(*order)), i, total = 0;

    if (order == NULL)
        return -ENOMEM;
    for (i = 0; i < b->njobs; i++)
        order[i] = i;
    qsort_r(order, b->njobs, sizeof(*order), job_order_cmp, b);
    for (i = 0; i < b->njobs; i++) {
        struct line_job *job = &b->jobs[order[i]];
        job->out = total;
        total += job->count;
    }
    free(order);
    *totalp = total;
    return 0;
}

/* Each job's slots are a run of its track (a counter job's events each go
 * to their counter's channel: all moved; async events move as found). */
static int declare_runs(struct builder *b)
{
    uint32_t j;
    int rc = 0;

    for (j = 0; j < b->njobs && rc == 0; j++) {
        const struct line_job *job = &b->jobs[j];
        rc = tv_add_run(b->h, b->out + job->out, job->count,
                        job->counter ? TV_RUN_MOVED : (uint32_t)job->track);
    }
    return rc;
}

/* The fill order: derived lines' jobs first, so that each line gives back
 * its 24-byte records (derived_compact_line) before the file events' slots
 * take fresh pages. Returns 0 or -ENOMEM. */
static int order_fill(struct builder *b)
{
    uint32_t j, k = 0;

    b->fill_order = malloc((b->njobs ? b->njobs : 1) * sizeof(*b->fill_order));
    if (b->fill_order == NULL)
        return -ENOMEM;
    for (j = 0; j < b->njobs; j++) {
        if (b->jobs[j].derived)
            b->fill_order[k++] = j;
    }
    for (j = 0; j < b->njobs; j++) {
        if (!b->jobs[j].derived)
            b->fill_order[k++] = j;
    }
    return 0;
}

/* The group ids of file events: when this build groups the host itself,
 * those of the grouping, read in place (a host with no group needs no
 * table: xsrc_group answers none); else each event's own, written by the
 * fill. Returns 0 or -ENOMEM. */
static int add_groups(struct builder *b)
{
    const int32_t *flat;

    if (!b->preprocess)
        return tv_alloc_groups(b->h, b->src->nfile);
    flat = xp_groups_flat(b->groups);
    if (flat != NULL)
        tv_share_groups(b->h, flat, b->src->nfile);
    return 0;
}

/* The tracks that hold events with a flow: those of the file jobs that
 * kept one, and the channels of the async events that moved. */
static void mark_flows(struct builder *b)
{
    uint32_t j;

    for (j = 0; j < b->njobs; j++) {
        if (b->jobs[j].nflow > 0)
            tv_mark_flows(b->h, (uint32_t)b->jobs[j].track);
    }
    tv_flows_marked(b->h);
}

/* txp_fill_job of the k-th job in fill order (parallel_for item). */
static int fill_in_order(void *arg, size_t k)
{
    struct builder *b = arg;

    return txp_fill_job(b, b->fill_order[k]);
}

/* Every shown plane's file and derived events: count them (in parallel),
 * name the metadata they use, then fill the slots (in parallel). */
static int add_planes(struct builder *b, const struct shown_plane *planes, uint32_t nplanes,
                      int nthreads)
{
    uint32_t jobs_cap = 0, i, m, total = 0;
    int rc = 0, shown;

    b->planes = calloc(nplanes ? nplanes : 1, sizeof(*b->planes));
    if (b->planes == NULL)
        return -ENOMEM;
    for (i = 0; i < nplanes && rc == 0; i++)
        rc = txp_declare_plane(b, &planes[i], &jobs_cap, &shown);
    if (rc == 0)
        rc = parallel_for(b->njobs, nthreads, txp_count_job, b);
    for (i = 0; i < b->nplanes && rc == 0; i++) {
        struct plane_state *ps = &b->planes[i];
        ps->specials = malloc((ps->pl->nemeta ? ps->pl->nemeta : 1) * sizeof(*ps->specials));
        if (ps->specials == NULL)
            return -ENOMEM;
        for (m = 0; m < ps->pl->nemeta && rc == 0; m++) {
            if (ps->meta[m].used)
                rc = txp_meta_fill(b, ps, m);
        }
    }
    if (rc == 0)
        rc = place_jobs(b, &total);
    if (rc == 0 && b->src->dv != NULL) {
        b->dv_jobs_left =
            calloc(b->src->dv->nlines ? b->src->dv->nlines : 1, sizeof(*b->dv_jobs_left));
        if (b->dv_jobs_left == NULL)
            return -ENOMEM;
        for (i = 0; i < b->njobs; i++) {
            if (b->jobs[i].derived)
                b->dv_jobs_left[b->jobs[i].line]++;
        }
    }
    if (rc == 0 && total > 0) {
        /* Flows and group ids of file events, by source record. */
        rc = tv_alloc_events(b->h, total, &b->out);
        if (rc == 0)
            rc = declare_runs(b);
        if (rc == 0)
            rc = tv_alloc_flows(b->h, b->src->nfile);
        if (rc == 0)
            rc = add_groups(b);
        if (rc == 0)
            rc = order_fill(b);
        if (rc == 0)
            rc = parallel_for(b->njobs, nthreads, fill_in_order, b);
        if (rc == 0)
            mark_flows(b);
    }
    return rc;
}

static void builder_free(struct builder *b)
{
    uint32_t i;

    for (i = 0; i < b->nplanes; i++) {
        free(b->planes[i].meta);
        free(b->planes[i].specials);
        txp_roles_free(&b->planes[i].roles);
    }
    free(b->planes);
    free(b->jobs);
    free(b->fill_order);
    free(b->frame_done);
    free(b->dv_jobs_left);
}

int tv_build_xplane(struct snapshot *snap, const char *host, const struct tv_window *w,
                    struct tv_host **hp, struct xp_err *err)
{
    struct builder b;
    const struct hlo_modules *hlo = NULL;
    struct xspace *xs;
    struct shown_plane *planes = NULL;
    uint32_t nplanes = 0, i;
    uint64_t total = 0;
    int rc, nthreads = parallel_cores();

    memset(&b, 0, sizeof(b));
    pthread_mutex_init(&b.lock, NULL);
    rc = snapshot_xspace_decoded(snap, host, &xs, err);
    if (rc != 0)
        goto out;
    b.xs = xs;
    b.preprocess = !xspace_is_grouped(xs);
    if (b.preprocess) {
        rc = snapshot_groups(snap, host, &b.groups, err);
        if (rc != 0)
            goto out;
    }
    b.host_id = xs->nhostnames > 0 ? std_hash_bytes(xs->hostnames[0], strlen(xs->hostnames[0])) : 0;
    b.h = tv_host_new(host);
    if (b.h != NULL && tv_runs_begin(b.h) != 0) {
        tv_host_free(b.h);
        b.h = NULL;
    }
    if (b.h == NULL) {
        rc = xp_err_set(err, -ENOMEM, "%s: out of memory", host);
        goto out;
    }
    rc = xsrc_new(xs, b.groups, b.preprocess, &b.src);
    if (rc == 0)
        b.src->host_id = b.host_id;
    if (rc == 0 && b.preprocess)
        rc = snapshot_hlo_modules(snap, host, &hlo, err);
    if (rc == 0 && b.preprocess)
        rc = derived_build(xs, b.groups, hlo, &b.src->dv, err);
    /* The passes over the whole profile are done: a big mapped one lets go of
     * its pages, and each fill job then holds only the stretch it reads. */
    xspace_release(xs, 0, xs->size);
    if (rc == 0)
        rc = xsrc_index_derived(b.src);
    if (rc == 0) {
        b.h->source = b.src;
        b.h->source_free = xsrc_free;
        b.h->args = xsrc_args;
        b.h->counter = xsrc_counter;
        b.h->group_of = xsrc_group;
        for (i = 0; i < xs->nplanes; i++)
            total += xs->planes[i].nevents;
        if (b.src->dv != NULL) {
            for (i = 0; i < b.src->dv->nlines; i++)
                total += b.src->dv->lines[i].nev;
        }
        rc = tv_reserve(b.h, total);
    } else if (b.src != NULL) {
        xsrc_free(b.src);
    }
    if (rc == 0)
        rc = txp_select_planes(xs, &planes, &nplanes);
    if (rc == 0)
        rc = add_planes(&b, planes, nplanes, nthreads);
    free(planes);
    xspace_release(xs, 0, xs->size);
    /* Lines with no run shown still hold their times: give their half back
     * too before finishing needs memory. */
    if (rc == 0)
        derived_compact(b.src->dv);
    if (rc == 0)
        rc = tv_finish_for(b.h, nthreads, w, err);
    else if (err->code == 0)
        xp_err_set(err, rc, "%s: out of memory while building the trace", host);
    if (rc != 0) {
        tv_host_free(b.h);
        goto out;
    }
    *hp = b.h;
out:
    builder_free(&b);
    pthread_mutex_destroy(&b.lock);
    return rc;
}
