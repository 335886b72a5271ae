/*
 * lister.h - one background thread that does a job again (a store's
 * listing) when asked and the last run began max_age_ms ago or more, so
 * the job runs at most once per max_age_ms, and only while someone asks.
 *
 * An asker waits for the run it asked for at most wait_ms from when that
 * run began, then goes on with what the last finished run left: a store
 * that hangs holds nobody for longer. The job keeps its own result (under
 * its owner's lock); the lister only says whether it is fresh.
 */
#ifndef XPROFS_LISTER_H
#define XPROFS_LISTER_H

#include <pthread.h>
#include <stdint.h>

struct lister {
    pthread_t thread;       /* the worker */
    pthread_mutex_t lock;   /* guards the fields below */
    pthread_cond_t wake;    /* the worker's: a run is asked for, or stop */
    pthread_cond_t done;    /* the askers': a run finished */
    void (*job)(void *arg); /* one run */
    void *arg;              /* the job's argument */
    int max_age_ms;         /* how old the last run may be (5000) */
    int wait_ms;            /* how long an asker waits for a run (3000) */
    int stop;               /* lister_stop was called */
    int asked;              /* a run is asked for and not begun */
    int running;            /* a run is under way */
    uint64_t runs_done;     /* runs finished */
    int64_t begun_ms;       /* when the run under way began */
    int64_t last_ms;        /* when the last finished run began */
};

/* Start the worker; last_ms is when the caller's own first run began
 * (lister_now_ms()). 0 or a negative errno. */
int lister_start(struct lister *l, void (*job)(void *arg), void *arg, int max_age_ms, int wait_ms,
                 int64_t last_ms);

/* A run recent enough: 1 at once if the last began within max_age_ms;
 * else ask for one and wait for it: 1 once it finished, 0 past wait_ms
 * (or once the lister stops). */
int lister_ask(struct lister *l);

/* Stop the worker after its run under way (make the job return soon) and
 * wait for it. */
void lister_stop(struct lister *l);

/* CLOCK_MONOTONIC milliseconds. */
int64_t lister_now_ms(void);

#endif
