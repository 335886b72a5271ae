/*
 * parallel.c - a parallel for-loop over a shared counter; see parallel.h.
 */
#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

#define PARALLEL_MAX_THREADS 64

struct parallel_job {
    size_t n;                  /* items */
    size_t next;               /* next item to take; atomic */
    int rc;                    /* first failure; atomic */
    int (*fn)(void *, size_t); /* work */
    void *arg;                 /* its argument */
};

static void *parallel_worker(void *p)
{
    struct parallel_job *job = p;

    for (;;) {
        size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        int rc;

        if (i >= job->n || __atomic_load_n(&job->rc, __ATOMIC_RELAXED) != 0)
            break;
        rc = job->fn(job->arg, i);
        if (rc != 0) {
            int zero = 0;
            __atomic_compare_exchange_n(&job->rc, &zero, rc, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

int parallel_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int parallel_for(size_t n, int nthreads, int (*fn)(void *arg, size_t i), void *arg)
{
    struct parallel_job job = {n, 0, 0, fn, arg};
    pthread_t tids[PARALLEL_MAX_THREADS];
    int started = 0, i;

    if (nthreads <= 0)
        nthreads = parallel_cores();
    if (nthreads > PARALLEL_MAX_THREADS)
        nthreads = PARALLEL_MAX_THREADS;
    if ((size_t)nthreads > n)
        nthreads = n > 0 ? (int)n : 1;
    for (i = 1; i < nthreads; i++) {
        if (pthread_create(&tids[started], NULL, parallel_worker, &job) != 0)
            break;
        started++;
    }
    parallel_worker(&job);
    for (i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    return job.rc;
}
