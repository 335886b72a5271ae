/*
 * trace_xplane_specials.c - what the stats of an xplane event mean to the
 * trace viewer (XProf's ConvertXStatsToTraceEventArguments): the roles of a
 * plane's stat ids (flows, group ids, async events, step names, "@@"
 * frames), and the specials of each event metadata, folded once (the
 * event's own stats are folded as it is filled, trace_xplane_fill.c).
 */
#include "trace_xplane_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Fold one stat into sp (XProf's ConvertXStatsToTraceEventArguments). */
static void fold_stat(const struct xp_plane *pl, const struct xp_stat *st, struct special *sp)
{
    int64_t id = st->meta_id;
    int is_int = st->kind == XP_STAT_INT || st->kind == XP_STAT_UINT;

    if (id == pl->stat_id[XS_CORRELATION_ID]) {
        sp->has_corr = 1;
        sp->corr = st->kind == XP_STAT_UINT ? st->v.u : 0;
    } else if (id == pl->stat_id[XS_PRODUCER_TYPE] && is_int) {
        sp->has_pt = 1;
        sp->pt = st->v.i;
    } else if (id == pl->stat_id[XS_PRODUCER_ID] && is_int) {
        sp->has_p = 1;
        sp->p = st->v.i;
    } else if (id == pl->stat_id[XS_CONSUMER_TYPE] && is_int) {
        sp->has_ct = 1;
        sp->ct = st->v.i;
    } else if (id == pl->stat_id[XS_CONSUMER_ID] && is_int) {
        sp->has_c = 1;
        sp->c = st->v.i;
    }
    if (!is_int && st->kind != XP_STAT_STR && st->kind != XP_STAT_REF)
        return;
    if (id == pl->stat_id[XS_FLOW] && is_int) {
        sp->has_flow = 1;
        sp->flow = st->v.u;
    } else if (id == pl->stat_id[XS_GROUP_ID] && is_int) {
        sp->has_group = 1;
        sp->group = st->v.i;
    } else if (id == pl->stat_id[XS_IS_ASYNC] && is_int) {
        sp->is_async = 1;
    } else if (id == pl->stat_id[XS_STEP_NAME] && !is_int) {
        sp->step_name = st->str;
        sp->step_len = st->len;
    }
}

static const int role_stat[9] = {
    XS_CORRELATION_ID, XS_PRODUCER_TYPE, XS_PRODUCER_ID, XS_CONSUMER_TYPE, XS_CONSUMER_ID,
    XS_FLOW,           XS_GROUP_ID,      XS_IS_ASYNC,    XS_STEP_NAME,
};

void txp_roles_free(struct stat_roles *r)
{
    free(r->table);
    free(r->hlo);
    memset(r, 0, sizeof(*r));
}

/* The roles of pl's stat ids. Returns 0 or -ENOMEM. */
int txp_roles_init(struct stat_roles *r, const struct xp_plane *pl)
{
    int64_t max = -1;
    int small = 1;
    uint32_t i;

    memset(r, 0, sizeof(*r));
    r->hlo = malloc((pl->nsmeta ? pl->nsmeta : 1) * sizeof(*r->hlo));
    if (r->hlo == NULL)
        return -ENOMEM;
    for (i = 0; i < pl->nsmeta; i++) {
        /* The id must resolve to this entry, as xp_stat_name resolves it. */
        if (strcmp(pl->smeta[i].name, "hlo_text") == 0 &&
            xp_plane_stat_meta(pl, pl->smeta[i].id) == &pl->smeta[i])
            r->hlo[r->nhlo++] = pl->smeta[i].id;
    }
    for (i = 0; i < 9; i++)
        r->ids[i] = pl->stat_id[role_stat[i]];
    r->only_group = r->nhlo == 0;
    for (i = 0; i < 9 + r->nhlo; i++) {
        int64_t id = i < 9 ? r->ids[i] : r->hlo[i - 9];
        if (id == XP_NO_STAT)
            continue;
        if (i >= 9 || (1u << i) != R_GROUP)
            r->only_group = 0;
        r->any = 1;
        if (id < 0 || id >= ROLE_TABLE_MAX)
            small = 0;
        else if (id > max)
            max = id;
    }
    if (!small || max < 0)
        return 0;
    r->table = calloc((size_t)max + 1, sizeof(*r->table));
    if (r->table == NULL) {
        txp_roles_free(r);
        return -ENOMEM;
    }
    for (i = 0; i < 9 + r->nhlo; i++) {
        int64_t id = i < 9 ? r->ids[i] : r->hlo[i - 9];
        if (id != XP_NO_STAT)
            r->table[id] |= (uint16_t)(i < 9 ? 1u << i : R_HLO);
    }
    r->size = (uint32_t)max + 1;
    return 0;
}

/* Record the "@@" frames an event with metadata m produces (long_name). */
static int meta_frames(struct builder *b, const struct xp_event_meta *m)
{
    size_t n = strlen(m->name);

    if (n > MAX_LONG_NAME) {
        char *buf = malloc(MAX_LONG_NAME + 16);
        int rc;
        if (buf == NULL)
            return -ENOMEM;
        memcpy(buf, m->name, MAX_LONG_NAME);
        memcpy(buf + MAX_LONG_NAME, "...<truncated>", 14);
        rc = tv_add_frame(b->h, buf, MAX_LONG_NAME + 14);
        free(buf);
        return rc;
    }
    if (n >= ARG_INTERN_MIN)
        return tv_add_frame(b->h, m->name, n);
    return 0;
}

/* Fill the cached info of metadata mi of a plane (single-threaded). */
int txp_meta_fill(struct builder *b, struct plane_state *ps, uint32_t mi)
{
    struct meta_info *info = &ps->meta[mi];
    const struct xp_event_meta *m = &ps->pl->emeta[mi];
    struct special sp;
    uint32_t i;
    int display = m->display_name[0] != '\0';

    info->name = tv_cstr(b->h, display ? m->display_name : m->name);
    if (info->name == 0)
        return -ENOMEM;
    if (display && meta_frames(b, m) != 0)
        return -ENOMEM;
    memset(&sp, 0, sizeof(sp));
    for (i = 0; i < m->nstats; i++) {
        const struct xp_stat *st = &m->stats[i];
        fold_stat(ps->pl, st, &sp);
        if (txp_is_frame_stat(st, txp_role_of(&ps->roles, st->meta_id)) &&
            tv_add_frame(b->h, st->str, st->len) != 0)
            return -ENOMEM;
    }
    if (sp.has_flow || sp.has_group || sp.is_async || sp.step_name != NULL) {
        struct meta_special *x = &ps->specials[ps->nspecials];
        x->flow = sp.flow;
        x->group = sp.group;
        x->step_name = sp.step_name;
        x->step_len = sp.step_len;
        x->has_flow = (uint8_t)sp.has_flow;
        x->has_group = (uint8_t)sp.has_group;
        x->is_async = (uint8_t)sp.is_async;
        info->special = ++ps->nspecials;
    }
    return 0;
}
