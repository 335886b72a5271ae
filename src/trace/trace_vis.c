/*
 * trace_vis.c - XProf's TraceViewerVisibility (see trace_vis.h), ported from
 * xprof/convert/trace_viewer/trace_viewer_visibility.cc. All time arithmetic
 * is unsigned 64-bit, as upstream's, so its wrap-arounds are reproduced.
 */
#include "trace_vis.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void tv_flowmap_init(struct tv_flowmap *m)
{
    memset(m, 0, sizeof(*m));
}

void tv_flowmap_free(struct tv_flowmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

static uint32_t flow_slot(uint64_t key, uint32_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (uint32_t)key & (cap - 1);
}

/* Double the table (or make the first one). Returns 0 or -ENOMEM. */
static int flowmap_grow(struct tv_flowmap *m)
{
    uint32_t cap = m->cap ? m->cap * 2 : 64, i;
    uint64_t *keys = calloc(cap, sizeof(*keys));
    uint8_t *vals = calloc(cap, 1);

    if (keys == NULL || vals == NULL) {
        free(keys);
        free(vals);
        m->oom = 1;
        return -ENOMEM;
    }
    for (i = 0; i < m->cap; i++) {
        uint32_t s;
        if (m->keys[i] == 0)
            continue;
        s = flow_slot(m->keys[i], cap);
        while (keys[s] != 0)
            s = (s + 1) & (cap - 1);
        keys[s] = m->keys[i];
        vals[s] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

/* Slot of id, or the empty slot where it would go. */
static uint32_t flowmap_find(const struct tv_flowmap *m, uint64_t key)
{
    uint32_t s = flow_slot(key, m->cap);

    while (m->keys[s] != 0 && m->keys[s] != key)
        s = (s + 1) & (m->cap - 1);
    return s;
}

int tv_flowmap_get(const struct tv_flowmap *m, uint64_t id, uint8_t *val)
{
    uint32_t s;

    if (m->cap == 0)
        return 0;
    s = flowmap_find(m, id + 1);
    if (m->keys[s] == 0)
        return 0;
    *val = m->vals[s];
    return 1;
}

int tv_flowmap_put_new(struct tv_flowmap *m, uint64_t id, uint8_t val)
{
    uint32_t s;

    if ((m->n + 1) * 2 > m->cap && flowmap_grow(m) != 0)
        return 1;
    s = flowmap_find(m, id + 1);
    if (m->keys[s] != 0)
        return 0;
    m->keys[s] = id + 1;
    m->vals[s] = val;
    m->n++;
    return 1;
}

void tv_flowmap_set(struct tv_flowmap *m, uint64_t id, uint8_t val)
{
    uint32_t s;

    if (!tv_flowmap_put_new(m, id, val) && m->cap != 0) {
        s = flowmap_find(m, id + 1);
        m->vals[s] = val;
    }
}

/* Remove the used slot s. */
static void flowmap_erase_slot(struct tv_flowmap *m, uint32_t s)
{
    uint32_t next;

    /* Backward-shift deletion keeps probe chains intact without tombstones. */
    next = (s + 1) & (m->cap - 1);
    while (m->keys[next] != 0) {
        uint32_t home = flow_slot(m->keys[next], m->cap);
        int movable = (next > s) ? (home <= s || home > next) : (home <= s && home > next);
        if (movable) {
            m->keys[s] = m->keys[next];
            m->vals[s] = m->vals[next];
            s = next;
        }
        next = (next + 1) & (m->cap - 1);
    }
    m->keys[s] = 0;
    m->n--;
}

void tv_flowmap_erase(struct tv_flowmap *m, uint64_t id)
{
    uint32_t s;

    if (m->cap == 0)
        return;
    s = flowmap_find(m, id + 1);
    if (m->keys[s] != 0)
        flowmap_erase_slot(m, s);
}

/* The slot of id, inserted with val if absent (*inserted = 1); UINT32_MAX
 * when the table cannot grow. One probe for what get + put_new did. */
static uint32_t flowmap_upsert(struct tv_flowmap *m, uint64_t id, uint8_t val, int *inserted)
{
    uint32_t s;

    if ((m->n + 1) * 2 > m->cap && flowmap_grow(m) != 0)
        return UINT32_MAX;
    s = flowmap_find(m, id + 1);
    *inserted = m->keys[s] == 0;
    if (*inserted) {
        m->keys[s] = id + 1;
        m->vals[s] = val;
        m->n++;
    }
    return s;
}

uint8_t tv_flowmap_first(struct tv_flowmap *m, uint64_t id, uint8_t val, int erase, uint8_t if_oom)
{
    int inserted;
    uint32_t s = flowmap_upsert(m, id, val, &inserted);
    uint8_t v;

    if (s == UINT32_MAX)
        return if_oom;
    v = m->vals[s];
    if (erase)
        flowmap_erase_slot(m, s);
    return v;
}

int tv_vis_init(struct tv_vis *v, uint64_t res, uint32_t nrows)
{
    memset(v, 0, sizeof(*v));
    v->res = res;
    v->nrows = nrows;
    v->rows = calloc(nrows ? nrows : 1, sizeof(*v->rows));
    tv_flowmap_init(&v->flows);
    return v->rows != NULL ? 0 : -ENOMEM;
}

void tv_vis_free(struct tv_vis *v)
{
    uint32_t i;

    if (v->rows != NULL) {
        for (i = 0; i < v->nrows; i++) {
            free(v->rows[i].stack);
            free(v->rows[i].low);
        }
    }
    free(v->rows);
    tv_flowmap_free(&v->flows);
    memset(v, 0, sizeof(*v));
}

int tv_row_grow(struct tv_vis *v, struct tv_row *r, uint32_t depth)
{
    uint32_t cap = r->cap ? r->cap * 2 : 8;
    uint64_t *s, *low;

    while (cap <= depth) {
        if (cap > UINT32_MAX / 2) {
            v->oom = 1;
            return -ENOMEM;
        }
        cap *= 2;
    }
    s = realloc(r->stack, cap * sizeof(*s));
    if (s != NULL)
        r->stack = s;
    low = s != NULL ? realloc(r->low, cap * sizeof(*low)) : NULL;
    if (low == NULL) {
        v->oom = 1;
        return -ENOMEM;
    }
    r->low = low;
    r->cap = cap;
    return 0;
}

int tv_vis_visible(struct tv_vis *v, const struct tv_vis_event *e)
{
    struct tv_row *r = &v->rows[e->row];
    uint64_t end = e->ts + e->dur;
    uint32_t depth;
    int visible;

    if (!e->has_tid) {
        visible = !r->has_count || (e->ts - r->last_count) >= v->res;
        if (visible) {
            r->last_count = e->ts;
            r->has_count = 1;
        }
        return visible;
    }
    visible = e->dur >= v->res;
    depth = tv_row_depth(r, e->ts);
    if (!visible)
        visible = depth >= r->depth || (e->ts - r->stack[depth]) >= v->res;
    if (e->has_flow) {
        /* The flow's first event decides; one probe finds or inserts it. */
        int inserted;
        uint32_t s = flowmap_upsert(&v->flows, e->flow_id, (uint8_t)visible, &inserted);
        if (s == UINT32_MAX) {
            v->oom = 1;
            return visible;
        }
        if (!visible) {
            if (inserted)
                v->flows.vals[s] = (uint8_t)(!r->has_flow || (end - r->last_flow) >= v->res);
            visible = v->flows.vals[s];
        }
        if (e->type == 3 /* TV_FLOW_END */)
            flowmap_erase_slot(&v->flows, s);
        if (visible) {
            r->last_flow = end;
            r->has_flow = 1;
        }
    }
    if (visible)
        tv_row_push(v, r, depth, end);
    if (v->flows.oom)
        v->oom = 1;
    return visible;
}

void tv_vis_set(struct tv_vis *v, const struct tv_vis_event *e, int track_flows)
{
    struct tv_row *r = &v->rows[e->row];
    uint64_t end = e->ts + e->dur;

    if (!e->has_tid) {
        r->last_count = e->ts;
        r->has_count = 1;
        return;
    }
    if (e->has_flow && track_flows) {
        if (e->type == 3 /* TV_FLOW_END */)
            tv_flowmap_erase(&v->flows, e->flow_id);
        else
            tv_flowmap_put_new(&v->flows, e->flow_id, 1);
        r->last_flow = end;
        r->has_flow = 1;
    }
    tv_row_push(v, r, tv_row_depth(r, e->ts), end);
}
