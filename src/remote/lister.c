/*
 * lister.c - a job done again in a thread of its own when asked, waited
 * for a bounded time; see lister.h.
 */
#include "lister.h"

#include <errno.h>
#include <time.h>

int64_t lister_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The worker: one run per ask, none while nobody asks. */
static void *lister_main(void *arg)
{
    struct lister *l = arg;

    pthread_mutex_lock(&l->lock);
    for (;;) {
        while (!l->asked && !l->stop)
            pthread_cond_wait(&l->wake, &l->lock);
        if (l->stop)
            break;
        l->asked = 0;
        l->running = 1;
        l->begun_ms = lister_now_ms();
        pthread_mutex_unlock(&l->lock);
        l->job(l->arg);
        pthread_mutex_lock(&l->lock);
        l->running = 0;
        l->runs_done++;
        l->last_ms = l->begun_ms;
        pthread_cond_broadcast(&l->done);
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

int lister_start(struct lister *l, void (*job)(void *arg), void *arg, int max_age_ms, int wait_ms,
                 int64_t last_ms)
{
    pthread_condattr_t ca;
    int rc;

    l->job = job;
    l->arg = arg;
    l->max_age_ms = max_age_ms;
    l->wait_ms = wait_ms;
    l->stop = l->asked = l->running = 0;
    l->runs_done = 0;
    l->begun_ms = l->last_ms = last_ms;
    if (pthread_condattr_init(&ca) != 0)
        return -ENOMEM;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->wake, NULL);
    pthread_cond_init(&l->done, &ca);
    pthread_condattr_destroy(&ca);
    rc = pthread_create(&l->thread, NULL, lister_main, l);
    if (rc != 0) {
        pthread_cond_destroy(&l->done);
        pthread_cond_destroy(&l->wake);
        pthread_mutex_destroy(&l->lock);
        return -rc;
    }
    return 0;
}

int lister_ask(struct lister *l)
{
    int64_t asked_ms = lister_now_ms();
    uint64_t want;
    int fresh = 0;

    pthread_mutex_lock(&l->lock);
    if (asked_ms - l->last_ms < l->max_age_ms) {
        pthread_mutex_unlock(&l->lock);
        return 1;
    }
    /* The run under way (begun after the last finished one) will do. */
    want = l->runs_done + 1;
    if (!l->running && !l->asked) {
        l->asked = 1;
        pthread_cond_signal(&l->wake);
    }
    while (!l->stop) {
        int64_t from = l->running ? l->begun_ms : asked_ms, deadline = from + l->wait_ms;
        int64_t left = deadline - lister_now_ms();
        struct timespec ts;
        if (l->runs_done >= want) {
            fresh = 1;
            break;
        }
        if (left <= 0)
            break;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += left / 1000;
        ts.tv_nsec += (left % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&l->done, &l->lock, &ts);
    }
    pthread_mutex_unlock(&l->lock);
    return fresh;
}

void lister_stop(struct lister *l)
{
    pthread_mutex_lock(&l->lock);
    l->stop = 1;
    pthread_cond_broadcast(&l->wake);
    pthread_cond_broadcast(&l->done);
    pthread_mutex_unlock(&l->lock);
    pthread_join(l->thread, NULL);
    pthread_cond_destroy(&l->done);
    pthread_cond_destroy(&l->wake);
    pthread_mutex_destroy(&l->lock);
}
