/* SPDX-License-Identifier: Apache-2.0 */
/*
 * XEvent encoding and the two-pass plane writer (see xplane.h). Field numbers
 * follow tensorflow.profiler xplane.proto: XSpace.planes = 1, hostnames = 4;
 * XPlane id = 1, name = 2, lines = 3; XLine id = 1, name = 2,
 * timestamp_ns = 3, events = 4; XEvent metadata_id = 1, offset_ps = 2,
 * duration_ps = 3, stats = 4.
 */
#include "xplane.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_AT (1u << 20)

/* Moves the pending chunk to the sink (or drops it when counting). */
static void flush(struct emit *em)
{
    int rc;

    if (em->err == 0)
        em->err = wb_ok(&em->chunk);
    if (em->err == 0 && em->sink != NULL && em->chunk.len > 0) {
        rc = sink_write(em->sink, em->chunk.data, em->chunk.len);
        if (rc != 0)
            em->err = rc;
    }
    wb_reset(&em->chunk);
}

void xev_begin(struct emit *em, int64_t meta, int64_t offset_ps, int64_t duration_ps)
{
    wb_reset(&em->ev);
    pb_int(&em->ev, 1, meta);
    pb_int(&em->ev, 2, offset_ps);
    if (duration_ps != 0)
        pb_int(&em->ev, 3, duration_ps);
}

void xev_uint(struct emit *em, int64_t stat, uint64_t v)
{
    pb_stat_varint(&em->ev, 4, stat, PB_STAT_UINT64, v);
}

void xev_int(struct emit *em, int64_t stat, int64_t v)
{
    pb_stat_varint(&em->ev, 4, stat, PB_STAT_INT64, (uint64_t)v);
}

void xev_ref(struct emit *em, int64_t stat, int64_t ref)
{
    pb_stat_varint(&em->ev, 4, stat, PB_STAT_REF, (uint64_t)ref);
}

void xev_str(struct emit *em, int64_t stat, const char *s)
{
    pb_stat_bytes(&em->ev, 4, stat, PB_STAT_STR, s, strlen(s));
}

void xev_end(struct emit *em)
{
    size_t before = em->chunk.len;

    if (em->err == 0)
        em->err = wb_ok(&em->ev);
    if (em->sink == NULL) {
        /* counting pass: the size is all we need */
        em->bytes += 1 + pb_varint_size(em->ev.len) + em->ev.len;
        return;
    }
    pb_msg(&em->chunk, 4, &em->ev);
    em->bytes += em->chunk.len - before;
    if (em->chunk.len >= FLUSH_AT)
        flush(em);
}

/* Encodes the XLine fields that precede its events. */
static void line_header(struct wbuf *b, const struct xline_desc *ld)
{
    if (ld->id != 0)
        pb_int(b, 1, ld->id);
    pb_str(b, 2, ld->name);
    if (ld->ts_ns != 0)
        pb_int(b, 3, ld->ts_ns);
}

/* Runs a line's generator; returns the event bytes through *bytes. */
static int run_line(const struct xline_desc *ld, struct emit *em, uint64_t *bytes)
{
    int rc;

    em->bytes = 0;
    em->err = 0;
    rc = ld->gen(ld->ctx, ld->arg, em);
    flush(em);
    if (rc == 0)
        rc = em->err;
    if (rc != 0)
        return rc;
    *bytes = em->bytes;
    return 0;
}

int xline_count(struct emit *em, const struct xline_desc *ld, uint64_t *bytes)
{
    uint64_t n;
    int rc;

    em->sink = NULL;
    rc = run_line(ld, em, &n);
    if (rc == 0)
        *bytes += n;
    return rc;
}

void emit_release(struct emit *em)
{
    wb_release(&em->chunk);
    wb_release(&em->ev);
}

/* Sizes every line (events + header) into lens[] and adds them to the plane body size. */
static int count_lines(const struct xplane_desc *pd, struct emit *em, struct wbuf *hdr,
                       uint64_t *lens, uint64_t *body)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < pd->n_lines; i++) {
        uint64_t ev_bytes = 0;

        wb_reset(hdr);
        line_header(hdr, &pd->lines[i]);
        if (pd->event_bytes != NULL)
            ev_bytes = pd->event_bytes[i];
        else
            rc = run_line(&pd->lines[i], em, &ev_bytes);
        if (rc == 0)
            rc = wb_ok(hdr);
        if (rc != 0)
            return rc;
        lens[i] = hdr->len + ev_bytes;
        *body += 1 + pb_varint_size(lens[i]) + lens[i];
    }
    return 0;
}

/* Writes the lines counted by count_lines() and checks their sizes again. */
static int write_lines(const struct xplane_desc *pd, struct sink *sink, struct emit *em,
                       struct wbuf *hdr, const uint64_t *lens)
{
    size_t i;
    int rc;

    for (i = 0; i < pd->n_lines; i++) {
        uint64_t ev_bytes;

        wb_reset(hdr);
        pb_key(hdr, 3, PB_LEN);
        wb_varint(hdr, lens[i]);
        line_header(hdr, &pd->lines[i]);
        rc = wb_ok(hdr);
        if (rc == 0)
            rc = sink_write(sink, hdr->data, hdr->len);
        if (rc == 0)
            rc = run_line(&pd->lines[i], em, &ev_bytes);
        if (rc != 0)
            return rc;
        if (lens[i] != ev_bytes + hdr->len - 1 - pb_varint_size(lens[i])) {
            fprintf(stderr, "xprofs-synth: line '%s' changed size between passes\n",
                    pd->lines[i].name);
            return -EPROTO;
        }
    }
    return 0;
}

int xplane_write(struct sink *sink, const struct xplane_desc *pd, uint64_t *bytes)
{
    struct emit em = {WBUF_INIT, WBUF_INIT, NULL, 0, 0};
    struct wbuf hdr = WBUF_INIT;
    struct wbuf head = WBUF_INIT;
    uint64_t *lens = calloc(pd->n_lines ? pd->n_lines : 1, sizeof(*lens));
    uint64_t body = 0;
    int rc = -ENOMEM;

    if (lens == NULL)
        goto out;
    if (pd->id != 0)
        pb_int(&head, 1, pd->id);
    pb_str(&head, 2, pd->name);
    rc = count_lines(pd, &em, &hdr, lens, &body);
    if (rc == 0)
        rc = wb_ok(&head);
    if (rc != 0)
        goto out;
    body += head.len + pd->tail->len;
    *bytes += 1 + pb_varint_size(body) + body;
    if (sink == NULL)
        goto out;
    wb_reset(&hdr);
    pb_key(&hdr, 1, PB_LEN);
    wb_varint(&hdr, body);
    wb_put(&hdr, head.data, head.len);
    rc = wb_ok(&hdr);
    if (rc == 0)
        rc = sink_write(sink, hdr.data, hdr.len);
    em.sink = sink;
    if (rc == 0)
        rc = write_lines(pd, sink, &em, &hdr, lens);
    if (rc == 0 && pd->tail->len > 0)
        rc = sink_write(sink, pd->tail->data, pd->tail->len);
out:
    if (rc == -ENOMEM)
        fprintf(stderr, "xprofs-synth: out of memory\n");
    free(lens);
    emit_release(&em);
    wb_release(&hdr);
    wb_release(&head);
    return rc;
}

int xspace_write_hostname(struct sink *sink, const char *host, uint64_t *bytes)
{
    struct wbuf b = WBUF_INIT;
    int rc;

    pb_str(&b, 4, host);
    rc = wb_ok(&b);
    if (rc == 0) {
        *bytes += b.len;
        if (sink != NULL)
            rc = sink_write(sink, b.data, b.len);
    } else {
        fprintf(stderr, "xprofs-synth: out of memory\n");
    }
    wb_release(&b);
    return rc;
}
