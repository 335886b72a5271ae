/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connection guard (guard.h): a list of the open connections under a
 * mutex and a watchdog thread that walks it every TICK_MS.
 *
 * The socket the watchdog shuts down is still the connection's: MHD
 * reports a connection closed (ui_guard_remove, which takes the same
 * mutex) before it closes the socket, in MHD_cleanup_connections and on
 * the failure path of new connections (libmicrohttpd 0.9.75, daemon.c),
 * so while the watchdog holds the mutex no listed descriptor can have
 * been closed and reused. shutdown() wakes the connection's thread, whose
 * read then returns 0, and MHD closes the connection as a client's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "guard.h"

#define TICK_MS 100 /* how often the watchdog looks */

struct ui_guard {
    pthread_mutex_t lock;              /* guards everything below */
    pthread_cond_t wake;               /* signalled to stop the watchdog */
    pthread_t watchdog;                /* the thread of watch() */
    struct ui_guard_conn *head, *tail; /* open connections, oldest first */
    unsigned int count;                /* connections on the list */
    unsigned int deadline_ms;          /* time to send a request */
    unsigned int grace_ms;             /* the same once count >= crowded */
    unsigned int crowded;              /* connections that make the server crowded */
    int stopping;                      /* 1: the watchdog must return */
};

static long long ms_between(const struct timespec *a, const struct timespec *b)
{
    return (long long)(b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

/* Shuts down the waiting connections past their time; under g->lock. */
static void shut_late(struct ui_guard *g, const struct timespec *now)
{
    long long limit = g->count >= g->crowded ? g->grace_ms : g->deadline_ms;
    struct ui_guard_conn *c;

    for (c = g->head; c; c = c->next) {
        if (!c->waiting || c->shut || ms_between(&c->since, now) < limit)
            continue;
        /* ENOTCONN: the client is gone already and MHD will see it. */
        (void)shutdown(c->fd, SHUT_RDWR);
        c->shut = 1;
    }
}

static void *watch(void *arg)
{
    struct ui_guard *g = arg;
    struct timespec now, until;

    pthread_mutex_lock(&g->lock);
    while (!g->stopping) {
        if (clock_gettime(CLOCK_MONOTONIC, &now) == 0)
            shut_late(g, &now);
        until = now;
        until.tv_nsec += TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&g->wake, &g->lock, &until);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

/* A condition variable timed on CLOCK_MONOTONIC; 0 or an errno value. */
static int monotonic_cond(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);

    if (rc != 0)
        return rc;
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    return rc;
}

struct ui_guard *ui_guard_start(unsigned int deadline_ms, unsigned int grace_ms,
                                unsigned int crowded)
{
    struct ui_guard *g = calloc(1, sizeof(*g));
    int rc;

    if (!g)
        return NULL;
    g->deadline_ms = deadline_ms;
    g->grace_ms = grace_ms < deadline_ms ? grace_ms : deadline_ms;
    g->crowded = crowded;
    rc = pthread_mutex_init(&g->lock, NULL);
    if (rc != 0)
        goto err_free;
    rc = monotonic_cond(&g->wake);
    if (rc != 0)
        goto err_mutex;
    rc = pthread_create(&g->watchdog, NULL, watch, g);
    if (rc != 0)
        goto err_cond;
    return g;

err_cond:
    pthread_cond_destroy(&g->wake);
err_mutex:
    pthread_mutex_destroy(&g->lock);
err_free:
    free(g);
    errno = rc;
    return NULL;
}

void ui_guard_stop(struct ui_guard *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stopping = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->watchdog, NULL);
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

int ui_guard_add(struct ui_guard *g, struct ui_guard_conn *c, int fd)
{
    if (clock_gettime(CLOCK_MONOTONIC, &c->since) != 0)
        return -1;
    c->fd = fd;
    c->waiting = 1;
    c->shut = 0;
    c->next = NULL;
    pthread_mutex_lock(&g->lock);
    c->prev = g->tail;
    if (g->tail)
        g->tail->next = c;
    else
        g->head = c;
    g->tail = c;
    g->count++;
    pthread_mutex_unlock(&g->lock);
    return 0;
}

void ui_guard_answering(struct ui_guard *g, struct ui_guard_conn *c)
{
    pthread_mutex_lock(&g->lock);
    c->waiting = 0;
    pthread_mutex_unlock(&g->lock);
}

void ui_guard_waiting(struct ui_guard *g, struct ui_guard_conn *c)
{
    struct timespec now;

    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
        return; /* it stays answering: no deadline rather than a wrong one */
    pthread_mutex_lock(&g->lock);
    c->since = now;
    c->waiting = 1;
    pthread_mutex_unlock(&g->lock);
}

void ui_guard_remove(struct ui_guard *g, struct ui_guard_conn *c)
{
    pthread_mutex_lock(&g->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        g->tail = c->prev;
    g->count--;
    pthread_mutex_unlock(&g->lock);
}
