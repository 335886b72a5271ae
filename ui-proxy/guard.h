/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connection guard: a deadline for each request and room for new
 * clients. Every open connection is on the guard's list with its socket
 * and state; a watchdog thread shuts down the socket of a connection that
 * waits for its request (line, headers, body) past the deadline, and,
 * while the server is nearly full, of every connection that has waited
 * longer than a short grace. Connections whose reply is being made or
 * sent are never touched (a cold file may take minutes to compute).
 */
#ifndef UI_GUARD_H
#define UI_GUARD_H

#include <time.h>

struct ui_guard;

/* One connection on the guard's list; it lives in the connection's own
 * context, filled by ui_guard_add and taken off by ui_guard_remove. */
struct ui_guard_conn {
    struct ui_guard_conn *prev, *next; /* the list, oldest first */
    int fd;                            /* the connection's socket */
    int waiting;                       /* 1: waits for a request; 0: answering */
    int shut;                          /* 1: the watchdog shut its socket down */
    struct timespec since;             /* when it began to wait */
};

/*
 * Starts the watchdog: a request must be in within deadline_ms of the
 * connection being ready for it; while at least crowded connections are
 * open, within grace_ms. Returns the guard, or NULL with errno set.
 */
struct ui_guard *ui_guard_start(unsigned int deadline_ms, unsigned int grace_ms,
                                unsigned int crowded);

/* Stops the watchdog and frees the guard; the list must be empty. */
void ui_guard_stop(struct ui_guard *g);

/* Puts a new connection with socket fd on the list, waiting; 0 or -1. */
int ui_guard_add(struct ui_guard *g, struct ui_guard_conn *c, int fd);

/* The connection's request is in: its reply is being made and sent. */
void ui_guard_answering(struct ui_guard *g, struct ui_guard_conn *c);

/* The reply is sent: the connection waits for its next request. */
void ui_guard_waiting(struct ui_guard *g, struct ui_guard_conn *c);

/* Takes the connection off the list; MHD calls this before it closes the
 * socket, so the watchdog never shuts down a descriptor reused since. */
void ui_guard_remove(struct ui_guard *g, struct ui_guard_conn *c);

#endif
