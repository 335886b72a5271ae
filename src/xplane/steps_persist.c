/*
 * steps_persist.c - a host's step model as bytes and back (st_save,
 * st_load), so that the persistent cache keeps it and steps, regions and
 * report of a new process read no profile.
 *
 * Payload (store_codec.h): "XPSTEPS1", u32 source, f64 origin_us, the
 * reason, the step names; u32 nrows and per row start, dur, self, overlap
 * (u64 each), name, parent, depth; u32 nsteps and per step row, nrows,
 * thread, step_num, naive_sum; u32 nthreads and per thread its id and name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps_build.h"
#include "store/store_codec.h"

#define STEPS_MAGIC "XPSTEPS1"

void st_save(const struct xp_steps *m, struct out *o)
{
    uint32_t i;

    out_write(o, STEPS_MAGIC, 8);
    sc_put_u32(o, (uint32_t)m->source);
    sc_put_f64(o, m->origin_us);
    sc_put_str(o, m->reason);
    sc_put_u32(o, m->nstep_names);
    for (i = 0; i < m->nstep_names; i++)
        sc_put_str(o, m->step_names[i]);
    sc_put_u32(o, m->nrows);
    for (i = 0; i < m->nrows; i++) {
        const struct xp_steps_row *r = &m->rows[i];
        sc_put_u64(o, (uint64_t)r->start_ps);
        sc_put_u64(o, (uint64_t)r->dur_ps);
        sc_put_u64(o, (uint64_t)r->self_ps);
        sc_put_u64(o, (uint64_t)r->overlap_ps);
        sc_put_str(o, r->name);
        sc_put_u32(o, r->parent);
        sc_put_u32(o, r->depth);
    }
    sc_put_u32(o, m->nsteps);
    for (i = 0; i < m->nsteps; i++) {
        const struct xp_steps_step *s = &m->steps[i];
        sc_put_u32(o, s->row);
        sc_put_u32(o, s->nrows);
        sc_put_u32(o, s->thread);
        sc_put_u64(o, (uint64_t)s->step_num);
        sc_put_u64(o, (uint64_t)s->naive_sum_ps);
    }
    sc_put_u32(o, m->nthreads);
    for (i = 0; i < m->nthreads; i++) {
        sc_put_u64(o, (uint64_t)m->threads[i].id);
        sc_put_str(o, m->threads[i].name);
    }
}

/* n entries of size bytes, malloc'd, n checked against what remains
 * (each entry takes at least min bytes). */
static void *get_malloc(struct sc_cur *c, uint32_t n, size_t size, size_t min)
{
    void *v;

    if (c->bad || (uint64_t)n * min > c->left) {
        c->bad = 1;
        return NULL;
    }
    v = calloc(n ? n : 1, size);
    if (v == NULL)
        c->bad = 1;
    return v;
}

static void load_rows(struct sc_cur *c, struct xp_steps *m)
{
    m->nrows = sc_u32(c);
    m->rows = get_malloc(c, m->nrows, sizeof(*m->rows), 44);
    for (uint32_t i = 0; !c->bad && i < m->nrows; i++) {
        struct xp_steps_row *r = &m->rows[i];
        r->start_ps = (int64_t)sc_u64(c);
        r->dur_ps = (int64_t)sc_u64(c);
        r->self_ps = (int64_t)sc_u64(c);
        r->overlap_ps = (int64_t)sc_u64(c);
        r->name = sc_str(c);
        r->parent = sc_u32(c);
        r->depth = sc_u32(c);
    }
    for (uint32_t i = 0; !c->bad && i < m->nrows; i++) {
        if (m->rows[i].parent != XP_STEPS_NONE && m->rows[i].parent >= m->nrows)
            c->bad = 1;
    }
}

static void load_steps(struct sc_cur *c, struct xp_steps *m)
{
    m->nsteps = sc_u32(c);
    m->steps = get_malloc(c, m->nsteps, sizeof(*m->steps), 28);
    for (uint32_t i = 0; !c->bad && i < m->nsteps; i++) {
        struct xp_steps_step *s = &m->steps[i];
        s->row = sc_u32(c);
        s->nrows = sc_u32(c);
        s->thread = sc_u32(c);
        s->step_num = (int64_t)sc_u64(c);
        s->naive_sum_ps = (int64_t)sc_u64(c);
        if ((uint64_t)s->row + s->nrows > m->nrows || s->nrows == 0)
            c->bad = 1;
    }
}

static void load_threads(struct sc_cur *c, struct xp_steps *m)
{
    m->nthreads = sc_u32(c);
    m->threads = get_malloc(c, m->nthreads, sizeof(*m->threads), 12);
    for (uint32_t i = 0; !c->bad && i < m->nthreads; i++) {
        m->threads[i].id = (int64_t)sc_u64(c);
        m->threads[i].name = sc_str(c);
    }
    for (uint32_t i = 0; !c->bad && i < m->nsteps; i++) {
        if (m->steps[i].thread >= m->nthreads)
            c->bad = 1;
    }
}

int st_load(const void *p, size_t n, struct xp_steps **mp)
{
    struct xp_steps *m = calloc(1, sizeof(*m));
    struct sc_cur c;
    const char *reason;
    uint32_t i;

    *mp = NULL;
    if (m == NULL || (m->names = malloc(sizeof(*m->names))) == NULL) {
        free(m);
        return -ENOMEM;
    }
    arena_init(m->names);
    sc_init(&c, p, n, m->names);
    sc_magic(&c, STEPS_MAGIC);
    m->source = (enum xp_steps_source)sc_u32(&c);
    m->origin_us = sc_f64(&c);
    reason = sc_str(&c);
    snprintf(m->reason, sizeof(m->reason), "%s", reason != NULL ? reason : "");
    m->nstep_names = sc_u32(&c);
    m->step_names = get_malloc(&c, m->nstep_names, sizeof(*m->step_names), 4);
    if (m->step_names == NULL)
        m->nstep_names = 0;
    for (i = 0; !c.bad && i < m->nstep_names; i++) {
        const char *s = sc_str(&c);
        if (s == NULL || (m->step_names[i] = strdup(s)) == NULL)
            c.bad = 1;
    }
    if (!c.bad)
        load_rows(&c, m);
    if (!c.bad)
        load_steps(&c, m);
    if (!c.bad)
        load_threads(&c, m);
    if (sc_done(&c) != 0) {
        xp_steps_free(m);
        return -EIO;
    }
    *mp = m;
    return 0;
}
