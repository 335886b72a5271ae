/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Streaming XSpace writer. A plane's lines are produced by callbacks that
 * emit their events in order; each line is generated twice, once to count
 * its bytes (the length prefixes come first on the wire) and once to write
 * it, so memory stays bounded however big the file gets.
 */
#ifndef SYNTH_XPLANE_H
#define SYNTH_XPLANE_H

#include <stdint.h>

#include "sink.h"
#include "wire.h"

/*
 * Where encoded events go: chunk collects them; when it grows past a limit it
 * is written to `sink`, or only counted when sink is NULL.
 */
struct emit {
    struct wbuf chunk; /* pending bytes */
    struct wbuf ev;    /* body of the event being built */
    struct sink *sink; /* destination, NULL to count only */
    uint64_t bytes;    /* bytes emitted, flushed or not */
    int err;           /* first error (negative errno), sticky */
};

/* Starts the body of an XEvent in em->ev (offset and duration in ps). */
void xev_begin(struct emit *em, int64_t meta, int64_t offset_ps, int64_t duration_ps);

/* XStat helpers on the event being built. */
void xev_uint(struct emit *em, int64_t stat, uint64_t v);
void xev_int(struct emit *em, int64_t stat, int64_t v);
void xev_ref(struct emit *em, int64_t stat, int64_t ref);
void xev_str(struct emit *em, int64_t stat, const char *s);

/* Appends the event built since xev_begin() as XLine.events (field 4). */
void xev_end(struct emit *em);

/* A line of a plane; gen emits its events through xev_*() and returns 0 or -errno. */
struct xline_desc {
    int64_t id;       /* XLine.id (thread id or stream id) */
    const char *name; /* XLine.name */
    int64_t ts_ns;    /* XLine.timestamp_ns */
    int (*gen)(void *ctx, int arg, struct emit *em);
    void *ctx; /* first argument of gen */
    int arg;   /* second argument of gen */
};

/* A plane: header fields, lines, and the encoded tail (metadata maps, stats). */
struct xplane_desc {
    int64_t id;                     /* XPlane.id */
    const char *name;               /* XPlane.name */
    const struct xline_desc *lines; /* lines in file order */
    size_t n_lines;                 /* number of lines */
    const struct wbuf *tail;        /* fields 4, 5 and 6, already encoded */
    const uint64_t *event_bytes;    /* per line, from xline_count(); NULL: count here */
};

/*
 * Runs ld's generator in counting mode and adds its event bytes to *bytes.
 * em starts zeroed, is reused across calls and freed by emit_release().
 * Returns 0 or a negative errno.
 */
int xline_count(struct emit *em, const struct xline_desc *ld, uint64_t *bytes);

/* Frees an emitter's buffers. */
void emit_release(struct emit *em);

/*
 * Writes the plane as XSpace.planes (field 1) to sink, or only counts it when
 * sink is NULL. Adds the plane's bytes (key and length included) to *bytes.
 * Returns 0 or a negative errno (message printed).
 */
int xplane_write(struct sink *sink, const struct xplane_desc *pd, uint64_t *bytes);

/* Writes (or counts, sink NULL) one XSpace.hostnames entry (field 4). */
int xspace_write_hostname(struct sink *sink, const char *host, uint64_t *bytes);

#endif
