/*
 * xspace_decode.c - decoding every event of a profile, in parallel.
 *
 * The work is cut into tasks of at most XP_SPLIT events (one line, or a slice
 * of a long line starting at a split point the index pass recorded). Worker
 * threads take tasks from a shared counter, biggest first, and decode straight
 * from the mapped file into each line's event array. Nothing else is
 * allocated per event.
 */
#include "base/sort.h"
#include "xspace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/bigalloc.h"
#include "base/parallel.h"
#include "xstat_usual.h"

enum { F_EV_META = 1, F_EV_OFFSET = 2, F_EV_DURATION = 3, F_EV_OCCURRENCES = 5 };

struct decode_task {
    struct xp_plane *plane; /* plane of the line */
    struct xp_line *line;   /* line to decode */
    uint32_t first;         /* index of the first event */
    uint32_t count;         /* events in this task */
    uint32_t rec_start;     /* offset of the first event's key in line->body */
};

struct decode_job {
    struct xspace *xs;         /* the profile */
    struct decode_task *tasks; /* all tasks */
    size_t ntasks;             /* entries in tasks */
    pthread_mutex_t err_lock;  /* guards err */
    struct xp_err err;         /* the first failure */
};

/* Fold the XStat body [p, end) into an event's gid so far (XP_GID_NONE
 * before its first stat; gsid: the plane's group_id stat id). Only the
 * usual shape is known: any other may hide a group_id (xp_stat_next reads
 * those with its general parser). */
static inline int32_t gid_fold(int32_t gid, const uint8_t *p, const uint8_t *end, int64_t gsid)
{
    struct wire w = {p, end};
    struct xp_stat st;

    if (gid == XP_GID_WALK || !xp_stat_parse_usual(&w, &st))
        return XP_GID_WALK;
    if (st.meta_id != gsid)
        return gid;
    if (gid != XP_GID_NONE)
        return XP_GID_WALK;
    if (st.kind == XP_STAT_INT && st.v.i >= 0 && st.v.i <= INT32_MAX)
        return (int32_t)st.v.i;
    if (st.kind == XP_STAT_UINT && st.v.u <= INT32_MAX)
        return (int32_t)st.v.u;
    return XP_GID_WALK;
}

/* Decode one XEvent body at rec into *ev, and its group_id stats into
 * *gid when gid is not NULL (gsid: the plane's group_id stat id). Returns 0
 * or -1. */
static int decode_event(const struct xp_plane *pl, struct wire rec, struct xp_event *ev,
                        int32_t *gid, int64_t gsid, int64_t *cache_id, uint32_t *cache_ix)
{
    int64_t meta_id = 0;
    int32_t g = XP_GID_NONE;

    ev->offset_ps = 0;
    ev->duration_ps = 0;
    while (!wire_eof(&rec)) {
        uint32_t field;
        int type;
        uint64_t v;

        /* stats (field 4) with a one-byte length: skipped here */
        if (rec.p[0] == 0x22 && rec.end - rec.p >= 2 && rec.p[1] < 0x80) {
            if (rec.p[1] > rec.end - rec.p - 2)
                return -1;
            if (gid != NULL)
                g = gid_fold(g, rec.p + 2, rec.p + 2 + rec.p[1], gsid);
            rec.p += 2 + rec.p[1];
            continue;
        }
        if (wire_key(&rec, &field, &type) != 0)
            return -1;
        if (gid != NULL && field == 4 && type == WIRE_LEN) {
            struct wire sub;
            if (wire_bytes(&rec, &sub) != 0)
                return -1;
            g = gid_fold(g, sub.p, sub.end, gsid);
            continue;
        }
        if (type == WIRE_VARINT && field <= F_EV_OCCURRENCES && field != 4) {
            if (wire_varint(&rec, &v) != 0)
                return -1;
            if (field == F_EV_META)
                meta_id = (int64_t)v;
            else if (field == F_EV_OFFSET)
                ev->offset_ps = (int64_t)v;
            else if (field == F_EV_DURATION)
                ev->duration_ps = (int64_t)v < 0 ? 0 : (int64_t)v;
            continue;
        }
        if (wire_skip(&rec, type) != 0)
            return -1;
    }
    if (meta_id != *cache_id) {
        uint32_t ix = idmap_get(&pl->emeta_index, meta_id);
        *cache_id = meta_id;
        *cache_ix = ix == IDMAP_NONE ? 0 : ix;
    }
    ev->meta = *cache_ix;
    if (gid != NULL)
        *gid = g;
    return 0;
}

/* 1 if the event starts and ends within XP_TIME_LIMIT_PS of 0 (the line's
 * start is, as the loader checked). */
static int event_time_ok(const struct xp_line *ln, const struct xp_event *ev)
{
    int64_t start, end;

    if (__builtin_add_overflow(ln->timestamp_ns * 1000, ev->offset_ps, &start) ||
        __builtin_add_overflow(start, ev->duration_ps, &end))
        return 0;
    return start >= -XP_TIME_LIMIT_PS && start <= XP_TIME_LIMIT_PS && end <= XP_TIME_LIMIT_PS;
}

static int run_task(struct decode_job *job, const struct decode_task *t)
{
    const struct xp_line *ln = t->line;
    struct wire w;
    uint32_t done = 0;
    int64_t cache_id = INT64_MIN, gsid = t->plane->stat_id[XS_GROUP_ID];
    uint32_t cache_ix = 0;

    wire_init(&w, ln->body + t->rec_start, ln->body_len - t->rec_start);
    while (done < t->count) {
        const uint8_t *at = w.p;
        const char *what = "corrupt event";
        uint32_t field;
        int type;
        struct wire rec;

        if (wire_key(&w, &field, &type) != 0)
            goto bad;
        if (field != 4 || type != WIRE_LEN) {
            if (wire_skip(&w, type) != 0)
                goto bad;
            continue;
        }
        if (wire_bytes(&w, &rec) != 0)
            goto bad;
        struct xp_event *ev = &ln->events[t->first + done];
        ev->rec_off = (uint32_t)(at - ln->body);
        if (decode_event(t->plane, rec, ev, ln->gids != NULL ? &ln->gids[t->first + done] : NULL,
                         gsid, &cache_id, &cache_ix) != 0) {
            w.p = at;
            goto bad;
        }
        if (!event_time_ok(ln, ev)) {
            what = "event time out of range";
            goto bad;
        }
        done++;
        continue;
    bad:
        pthread_mutex_lock(&job->err_lock);
        if (job->err.code == 0)
            xp_err_set(&job->err, -EIO, "%s: %s at byte %zu", job->xs->path, what,
                       (size_t)(at - job->xs->data));
        pthread_mutex_unlock(&job->err_lock);
        return -1;
    }
    return 0;
}

static int decode_task(void *arg, size_t i)
{
    struct decode_job *job = arg;
    return run_task(job, &job->tasks[i]) == 0 ? 0 : -EIO;
}

static int task_cmp(const void *a, const void *b)
{
    const struct decode_task *x = a, *y = b;
    return (x->count < y->count) - (x->count > y->count);
}

/* Event arrays of XP_BIG_ARRAY bytes or more are mapped with transparent huge
 * pages: page faults dominate first writes to fresh memory, and a 2 MiB page
 * takes one fault where 4 KiB pages take 512. */
#define XP_BIG_ARRAY (4u << 20)

static struct xp_event *events_alloc(uint32_t n)
{
    size_t bytes = (size_t)n * sizeof(struct xp_event);
    void *p;

    if (bytes < XP_BIG_ARRAY)
        return malloc(bytes);
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

void xp_events_free(struct xp_event *events, uint32_t n)
{
    size_t bytes = (size_t)n * sizeof(struct xp_event);

    if (events == NULL)
        return;
    if (bytes < XP_BIG_ARRAY)
        free(events);
    else
        munmap(events, bytes);
}

/* Allocate event arrays and cut the work into tasks. */
static int plan_tasks(struct xspace *xs, struct decode_job *job, struct xp_err *err)
{
    size_t n = 0, k = 0;
    uint32_t i, j, s;

    for (i = 0; i < xs->nplanes; i++)
        for (j = 0; j < xs->planes[i].nlines; j++)
            n += xs->planes[i].lines[j].nsplits;
    job->tasks = calloc(n ? n : 1, sizeof(*job->tasks));
    if (job->tasks == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
    for (i = 0; i < xs->nplanes; i++) {
        struct xp_plane *pl = &xs->planes[i];
        for (j = 0; j < pl->nlines; j++) {
            struct xp_line *ln = &pl->lines[j];
            if (ln->nevents == 0)
                continue;
            ln->events = events_alloc(ln->nevents);
            if (ln->events != NULL && pl->stat_id[XS_GROUP_ID] != XP_NO_STAT)
                ln->gids = big_malloc((size_t)ln->nevents * sizeof(*ln->gids));
            if (ln->events == NULL || (pl->stat_id[XS_GROUP_ID] != XP_NO_STAT && ln->gids == NULL))
                return xp_err_set(err, -ENOMEM, "%s: out of memory for %u events", xs->path,
                                  ln->nevents);
            for (s = 0; s < ln->nsplits; s++) {
                struct decode_task *t = &job->tasks[k++];
                t->plane = pl;
                t->line = ln;
                t->first = s * XP_SPLIT;
                t->count = ln->nevents - t->first < XP_SPLIT ? ln->nevents - t->first : XP_SPLIT;
                t->rec_start = ln->splits[s];
            }
        }
    }
    job->ntasks = k;
    xp_qsort(job->tasks, job->ntasks, sizeof(*job->tasks), task_cmp);
    return 0;
}

static int decode_all(struct xspace *xs, int nthreads, struct xp_err *err)
{
    struct decode_job job;
    int rc;

    memset(&job, 0, sizeof(job));
    job.xs = xs;
    pthread_mutex_init(&job.err_lock, NULL);
    rc = plan_tasks(xs, &job, err);
    if (rc == 0 && parallel_for(job.ntasks, nthreads, decode_task, &job) != 0) {
        *err = job.err;
        rc = job.err.code ? job.err.code : -EIO;
    }
    free(job.tasks);
    pthread_mutex_destroy(&job.err_lock);
    return rc;
}

int xspace_decode(struct xspace *xs, int nthreads, struct xp_err *err)
{
    int rc;

    pthread_mutex_lock(&xs->decode_lock);
    if (!xs->decoded) {
        xs->decode_rc = decode_all(xs, nthreads, &xs->decode_err);
        /* Zeros where the file was cut may decode: say what happened. */
        if (xspace_cut_short(xs, &xs->decode_err) != 0)
            xs->decode_rc = xs->decode_err.code;
        if (xs->decode_rc != 0) {
            uint32_t i, j;
            for (i = 0; i < xs->nplanes; i++) {
                for (j = 0; j < xs->planes[i].nlines; j++) {
                    xp_events_free(xs->planes[i].lines[j].events, xs->planes[i].lines[j].nevents);
                    xs->planes[i].lines[j].events = NULL;
                    big_free(xs->planes[i].lines[j].gids);
                    xs->planes[i].lines[j].gids = NULL;
                }
            }
        }
        xs->decoded = 1;
    }
    rc = xs->decode_rc;
    if (rc != 0 && err != NULL)
        *err = xs->decode_err;
    pthread_mutex_unlock(&xs->decode_lock);
    return rc;
}
