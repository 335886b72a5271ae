/*
 * trace_index_get.c - the trace index as one of a snapshot's intermediates:
 * built once per snapshot and host by the first request (as deep as that
 * request reads), completed when a later one reads deeper, and, in the
 * mount, completed in the background after a coarse request is answered.
 */
#include "trace_index.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/bigalloc.h"

/* What the first request of a snapshot's index asks for. */
struct index_request {
    const char *host;
    const struct tv_window *w; /* levels it reads, NULL = all */
};

static int index_build(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const struct index_request *req = arg;
    struct tv_host *h = NULL;
    int rc;

    if (snapshot_host_file(snap, req->host, SRC_XPLANE) != NULL)
        rc = tv_build_xplane(snap, req->host, req->w, &h, err);
    else
        rc = tv_build_ctrace(snap, req->host, req->w, &h, err);
    if (rc != 0)
        return rc;
    *value = h;
    return 0;
}

static void index_free(void *value)
{
    tv_host_free(value);
}

/* Background completions: whether they are wanted, and how many run. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t done; /* signalled when running drops */
    int on;
    int running;
} bg = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

struct bg_job {
    struct snapshot *snap; /* referenced: the host lives as long */
    struct tv_host *h;
};

/* A job is over (done, or its thread never started). The last one gives
 * the heap's free pages back, as the mount does after its last file: its
 * snapshot may have been the last reference to a run the mount dropped. */
static void bg_job_end(struct bg_job *job)
{
    int last;

    snapshot_unref(job->snap);
    free(job);
    pthread_mutex_lock(&bg.lock);
    last = --bg.running == 0;
    pthread_cond_broadcast(&bg.done);
    pthread_mutex_unlock(&bg.lock);
    if (last)
        malloc_trim(0);
}

static void *bg_complete(void *arg)
{
    struct bg_job *job = arg;
    struct xp_err err = {0};

    /* A failure leaves the index coarse: the next deep request tries
     * again and reports it. */
    big_pool_hold();
    (void)tv_complete(job->h, 0, &err);
    big_pool_release();
    bg_job_end(job);
    return NULL;
}

void trace_index_background(int on)
{
    pthread_mutex_lock(&bg.lock);
    bg.on = on;
    pthread_mutex_unlock(&bg.lock);
}

void trace_index_answered(struct snapshot *snap, const struct tv_host *hc)
{
    struct tv_host *h = (struct tv_host *)hc; /* tv_complete is safe beside readers */
    struct bg_job *job;
    pthread_attr_t attr;
    pthread_t tid;
    int on;

    pthread_mutex_lock(&bg.lock);
    on = bg.on;
    pthread_mutex_unlock(&bg.lock);
    if (!on || tv_levels_of(h)->known >= TV_LEVELS - 1 ||
        __atomic_exchange_n(&h->background, 1, __ATOMIC_ACQ_REL))
        return;
    job = malloc(sizeof(*job));
    if (job == NULL)
        return;
    job->snap = snapshot_ref(snap);
    job->h = h;
    pthread_mutex_lock(&bg.lock);
    bg.running++;
    pthread_mutex_unlock(&bg.lock);
    if (pthread_attr_init(&attr) == 0) {
        int started = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                      pthread_create(&tid, &attr, bg_complete, job) == 0;
        pthread_attr_destroy(&attr);
        if (started)
            return;
    }
    /* No thread: the next deep request completes it. */
    bg_job_end(job);
}

void trace_index_drain(void)
{
    pthread_mutex_lock(&bg.lock);
    while (bg.running > 0)
        pthread_cond_wait(&bg.done, &bg.lock);
    pthread_mutex_unlock(&bg.lock);
}

static const struct snapshot_part trace_index_part = {"trace_index", index_build, index_free};

int snapshot_trace_index(struct snapshot *snap, const char *host, const struct tv_window *w,
                         const struct tv_host **hp, struct xp_err *err)
{
    struct index_request req = {host, w};
    struct tv_host *h;
    void *value;
    int rc, need;

    if (snapshot_host_index(snap, host) < 0)
        return xp_err_set(err, -ENOENT, "no host %s", host);
    rc = snapshot_part(snap, &trace_index_part, host, NULL, &req, &value, err);
    if (rc != 0)
        return rc;
    /* Built for an earlier request: complete it if this one reads deeper
     * (tv_complete is safe beside readers of the coarse levels). */
    h = value;
    need = w != NULL ? tv_window_level(h, w) : TV_LEVELS - 1;
    if (tv_levels_of(h)->known < need) {
        rc = tv_complete(h, 0, err);
        if (rc != 0)
            return rc;
    }
    *hp = h;
    return 0;
}
