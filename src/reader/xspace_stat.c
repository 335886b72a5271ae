/*
 * xspace_stat.c - stats: parsing XStat records, lookups, string forms.
 */
#include "xspace.h"
#include "xstat_usual.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct xp_event_meta *xp_plane_event_meta(const struct xp_plane *p, int64_t id)
{
    uint32_t ix = idmap_get(&p->emeta_index, id);
    return &p->emeta[ix == IDMAP_NONE ? 0 : ix];
}

const struct xp_stat_meta *xp_plane_stat_meta(const struct xp_plane *p, int64_t id)
{
    uint32_t ix = idmap_get(&p->smeta_index, id);
    return ix == IDMAP_NONE ? NULL : &p->smeta[ix];
}

const char *xp_stat_name(const struct xp_plane *p, const struct xp_stat *st)
{
    const struct xp_stat_meta *m = xp_plane_stat_meta(p, st->meta_id);
    return m ? m->name : "";
}

int64_t xp_plane_stat_id_by_name(const struct xp_plane *p, const char *name)
{
    uint32_t i;

    for (i = 0; i < p->nsmeta; i++) {
        if (strcmp(p->smeta[i].name, name) == 0)
            return p->smeta[i].id;
    }
    return XP_NO_STAT;
}

/* Point a REF stat at the name of the stat metadata it refers to. */
static void resolve_ref(const struct xp_plane *p, struct xp_stat *st)
{
    const struct xp_stat_meta *m = xp_plane_stat_meta(p, (int64_t)st->v.u);

    st->str = m ? m->name : "";
    st->len = m ? m->name_len : 0;
}

/* An XStat body without resolving refs. */
static inline int stat_parse_raw(struct wire *body, struct xp_stat *st)
{
    if (xp_stat_parse_usual(body, st)) {
        body->p = body->end;
        return 0;
    }
    st->meta_id = 0;
    st->kind = XP_STAT_NONE;
    st->v.u = 0;
    st->str = NULL;
    st->len = 0;
    while (!wire_eof(body)) {
        uint32_t field;
        int type;
        uint64_t v;
        struct wire sub;

        if (wire_key(body, &field, &type) != 0)
            return -1;
        if (type == WIRE_VARINT && (field == F_STAT_META || field == F_STAT_UINT ||
                                    field == F_STAT_INT || field == F_STAT_REF)) {
            if (wire_varint(body, &v) != 0)
                return -1;
            if (field == F_STAT_META) {
                st->meta_id = (int64_t)v;
            } else if (field == F_STAT_UINT) {
                st->kind = XP_STAT_UINT;
                st->v.u = v;
            } else if (field == F_STAT_INT) {
                st->kind = XP_STAT_INT;
                st->v.i = (int64_t)v;
            } else {
                st->kind = XP_STAT_REF;
                st->v.u = v;
            }
        } else if (type == WIRE_I64 && field == F_STAT_DOUBLE) {
            if (wire_fixed64(body, &v) != 0)
                return -1;
            st->kind = XP_STAT_DOUBLE;
            memcpy(&st->v.d, &v, sizeof(v));
        } else if (type == WIRE_LEN &&
                   (field == F_STAT_STR || field == F_STAT_BYTES || field == F_STAT_COMPRESSED)) {
            if (wire_bytes(body, &sub) != 0)
                return -1;
            st->kind = field == F_STAT_STR ? XP_STAT_STR : XP_STAT_BYTES;
            st->str = (const char *)sub.p;
            st->len = (size_t)(sub.end - sub.p);
        } else if (wire_skip(body, type) != 0) {
            return -1;
        }
    }
    return 0;
}

int xp_stat_parse(const struct xp_plane *p, struct wire *body, struct xp_stat *st)
{
    if (stat_parse_raw(body, st) != 0)
        return -1;
    if (st->kind == XP_STAT_REF && p != NULL)
        resolve_ref(p, st);
    return 0;
}

/* Dense tables are used while the largest id stays below this. */
#define PICK_DENSE_MAX ((int64_t)1 << 20)

int xp_pick_init(struct xp_pick *pk, const struct xp_plane *p, const int64_t *ids, uint32_t n,
                 int last_wins)
{
    int64_t max = -1;
    uint32_t i;

    memset(pk, 0, sizeof(*pk));
    pk->plane = p;
    pk->last_wins = last_wins;
    if (n > XP_PICK_MAX)
        n = XP_PICK_MAX;
    pk->nids = n;
    for (i = 0; i < n; i++) {
        pk->ids[i] = ids[i];
        if (ids[i] != XP_NO_STAT && ids[i] < 0)
            max = PICK_DENSE_MAX; /* negative ids: no dense table */
        else if (ids[i] != XP_NO_STAT && ids[i] > max)
            max = ids[i];
    }
    if (max >= 0 && max < PICK_DENSE_MAX) {
        pk->ndense = (size_t)max + 1;
        pk->dense = calloc(pk->ndense, 1);
        if (pk->dense == NULL)
            return -ENOMEM;
        /* the first slot of a repeated id wins, as in the linear search */
        for (i = n; i-- > 0;) {
            if (ids[i] != XP_NO_STAT)
                pk->dense[ids[i]] = (uint8_t)(i + 1);
        }
    }
    for (i = 0; i < n; i++) {
        uint32_t j;
        for (j = 0; j < i && ids[j] != ids[i]; j++)
            ;
        if (ids[i] != XP_NO_STAT && j == i)
            pk->all |= 1u << i;
    }
    return 0;
}

void xp_pick_free(struct xp_pick *pk)
{
    free(pk->dense);
    pk->dense = NULL;
}

/* Slot of a stat metadata id, or 0. */
static uint32_t pick_slot(const struct xp_pick *pk, int64_t id)
{
    uint32_t i;

    if (pk->dense != NULL)
        return id >= 0 && (uint64_t)id < pk->ndense ? pk->dense[id] : 0;
    if (id == XP_NO_STAT)
        return 0;
    for (i = 0; i < pk->nids; i++) {
        if (pk->ids[i] == id)
            return i + 1;
    }
    return 0;
}

uint32_t xp_pick_event(const struct xp_pick *pk, const struct xp_line *l, const struct xp_event *e,
                       struct xp_stat *out)
{
    struct wire w, body, sub;
    uint32_t field, found = 0;
    int type;

    if (pk->nids == 0)
        return 0;
    wire_init(&w, l->body + e->rec_off, l->body_len - e->rec_off);
    if (wire_key(&w, &field, &type) != 0 || type != WIRE_LEN || wire_bytes(&w, &body) != 0)
        return 0;
    while (xp_next_stat_body(&body, &sub) == 1) {
        struct xp_stat st;
        uint32_t slot;

        if (!xp_stat_parse_usual(&sub, &st) && stat_parse_raw(&sub, &st) != 0)
            break;
        slot = pick_slot(pk, st.meta_id);
        if (slot == 0 || (!pk->last_wins && (found & (1u << (slot - 1)))))
            continue;
        if (st.kind == XP_STAT_REF)
            resolve_ref(pk->plane, &st);
        out[slot - 1] = st;
        found |= 1u << (slot - 1);
        if (!pk->last_wins && found == pk->all)
            break; /* the first of every id is known */
    }
    return found;
}

void xp_stat_iter_init(struct xp_stat_iter *it, const struct xp_plane *p, const struct xp_line *l,
                       const struct xp_event *e)
{
    struct wire w;
    uint32_t field;
    int type;

    /* rec_off is the offset of the event's key; its body follows. The bytes
     * were checked when the line was decoded. */
    it->plane = p;
    wire_init(&w, l->body + e->rec_off, l->body_len - e->rec_off);
    if (wire_key(&w, &field, &type) != 0 || type != WIRE_LEN || wire_bytes(&w, &it->w) != 0)
        wire_init(&it->w, l->body, 0);
}

int xp_stat_next(struct xp_stat_iter *it, struct xp_stat *st)
{
    while (!wire_eof(&it->w)) {
        uint32_t field;
        int type;
        struct wire sub;

        if (wire_key(&it->w, &field, &type) != 0)
            return -1;
        if (field == 4 && type == WIRE_LEN) {
            if (wire_bytes(&it->w, &sub) != 0)
                return -1;
            if (xp_stat_parse(it->plane, &sub, st) != 0)
                return -1;
            return 1;
        }
        if (wire_skip(&it->w, type) != 0)
            return -1;
    }
    return 0;
}

int xp_stat_next_wanted(struct xp_stat_iter *it, struct xp_stat *st,
                        int (*want)(const void *ctx, int64_t id), const void *ctx)
{
    for (;;) {
        struct wire sub;
        int rc = xp_next_stat_body(&it->w, &sub);

        if (rc != 1)
            return rc;
        if (!xp_stat_parse_usual(&sub, st) && stat_parse_raw(&sub, st) != 0)
            return -1;
        if (!want(ctx, st->meta_id))
            continue;
        if (st->kind == XP_STAT_REF && it->plane != NULL)
            resolve_ref(it->plane, st);
        return 1;
    }
}

int xp_event_own_stat(const struct xp_plane *p, const struct xp_line *l, const struct xp_event *e,
                      int64_t id, struct xp_stat *st)
{
    struct xp_stat_iter it;

    if (id == XP_NO_STAT)
        return 0;
    xp_stat_iter_init(&it, p, l, e);
    while (xp_stat_next(&it, st) == 1) {
        if (st->meta_id == id)
            return 1;
    }
    return 0;
}

int xp_event_stat(const struct xp_plane *p, const struct xp_line *l, const struct xp_event *e,
                  enum xp_stat_type t, struct xp_stat *st)
{
    const struct xp_event_meta *m;
    int64_t id = p->stat_id[t];
    uint32_t i;

    if (id == XP_NO_STAT)
        return 0;
    if (xp_event_own_stat(p, l, e, id, st))
        return 1;
    m = xp_event_meta(p, e);
    for (i = 0; i < m->nstats; i++) {
        if (m->stats[i].meta_id == id) {
            *st = m->stats[i];
            return 1;
        }
    }
    return 0;
}

int xp_plane_stat(const struct xp_plane *p, enum xp_stat_type t, struct xp_stat *st)
{
    int64_t id = p->stat_id[t];
    uint32_t i;

    if (id == XP_NO_STAT)
        return 0;
    for (i = 0; i < p->nstats; i++) {
        if (p->stats[i].meta_id == id) {
            *st = p->stats[i];
            return 1;
        }
    }
    return 0;
}

int64_t xp_stat_int(const struct xp_stat *st)
{
    switch (st->kind) {
    case XP_STAT_INT:
        return st->v.i;
    case XP_STAT_UINT:
        return (int64_t)st->v.u;
    case XP_STAT_DOUBLE:
        return (int64_t)st->v.d;
    default:
        return 0;
    }
}

double xp_stat_double(const struct xp_stat *st)
{
    switch (st->kind) {
    case XP_STAT_INT:
        return (double)st->v.i;
    case XP_STAT_UINT:
        return (double)st->v.u;
    case XP_STAT_DOUBLE:
        return st->v.d;
    default:
        return 0;
    }
}

char *xp_stat_to_string(const struct xp_stat *st, char *buf, size_t n)
{
    switch (st->kind) {
    case XP_STAT_INT:
        snprintf(buf, n, "%" PRId64, st->v.i);
        break;
    case XP_STAT_UINT:
        snprintf(buf, n, "%" PRIu64, st->v.u);
        break;
    case XP_STAT_DOUBLE:
        snprintf(buf, n, "%g", st->v.d);
        break;
    case XP_STAT_STR:
    case XP_STAT_REF:
        snprintf(buf, n, "%.*s", (int)(st->len < (size_t)INT32_MAX ? st->len : 0), st->str);
        break;
    case XP_STAT_BYTES:
        snprintf(buf, n, "<opaque bytes>");
        break;
    default:
        if (n > 0)
            buf[0] = '\0';
        break;
    }
    return buf;
}
