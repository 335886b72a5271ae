/*
 * group_name.c - the step groups: roots in XProf's order, each one that is
 * not under a grouped root of its level claims its descendants, and its
 * name ("train 7": GetGroupName) (CreateEventGroups; its TPU lock step is
 * in group_tpu.c).
 */
#include "group_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"

int gr_add_group(struct xp_groups *g, int64_t id, const char *name, int64_t step_num, uint32_t p,
                 uint32_t l, uint32_t e, int named_root)
{
    struct groups_mem *m = g->mem;
    struct xp_group *gr;

    if (g->ngroups == m->ngroups_cap) {
        size_t cap = m->ngroups_cap ? m->ngroups_cap * 2 : 16;
        struct xp_group *ng = realloc(g->groups, cap * sizeof(*ng));
        if (ng == NULL)
            return -ENOMEM;
        g->groups = ng;
        m->ngroups_cap = cap;
    }
    gr = &g->groups[g->ngroups++];
    gr->id = id;
    gr->name = arena_strndup(&m->arena, name, strlen(name));
    gr->step_num = step_num;
    gr->root_plane = p;
    gr->root_line = l;
    gr->root_event = e;
    gr->named_root = named_root;
    return gr->name == NULL ? -ENOMEM : 0;
}

/* A group already recorded takes a new name (the TPU lock step names one
 * id once per core, as XProf's group metadata keeps the last name). */
static int rename_group(struct xp_groups *g, int32_t id, const char *name)
{
    struct groups_mem *m = g->mem;
    const char *copy = arena_strndup(&m->arena, name, strlen(name));

    if (copy == NULL)
        return -ENOMEM;
    g->groups[id].name = copy;
    return 0;
}

int gr_process_root(struct forest *f, struct xp_groups *g, uint32_t root, int32_t id)
{
    struct xp_stat st;
    char name[512];
    size_t len = 0;
    int64_t num;
    int64_t step_num = -1;
    uint32_t p, l, e;
    const struct xp_plane *pl;
    int rc, implicit;

    if ((rc = gr_propagate(f, root, id)) != 0)
        return rc;
    /* IsImplicitRootEvent: the implicit root types and TPU step and module
     * lines (whose names carry no event name and get no step_name) */
    implicit = gr_is_implicit_root((enum ev_type)f->type[root]) || gr_on_tpu_parent_line(f, root);
    gr_node_where(f, root, &p, &l, &e);
    pl = &f->xs->planes[p];
    name[0] = '\0';
    if (gr_context_stat(f, root, XS_GRAPH_TYPE, &st, &rc)) {
        if (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF || st.kind == XP_STAT_BYTES)
            len = (size_t)snprintf(name, sizeof(name), "%.*s ", (int)(st.len > 400 ? 400 : st.len),
                                   st.str);
        else
            len = (size_t)snprintf(name, sizeof(name), " ");
    } else if (rc == 0 && !implicit) {
        len = (size_t)snprintf(name, sizeof(name), "%.400s ",
                               xp_event_meta(pl, &pl->lines[l].events[e])->name);
    }
    if (rc != 0)
        return rc;
    num = f->gid[root] >= 0 ? f->gid[root] : 0;
    if (gr_context_stat(f, root, XS_ITER_NUM, &st, &rc)) {
        num = xp_stat_int(&st);
        step_num = num;
    } else if (rc == 0 && gr_context_stat(f, root, XS_STEP_NUM, &st, &rc)) {
        num = xp_stat_int(&st);
        step_num = num;
    }
    if (rc != 0)
        return rc;
    if (len >= sizeof(name))
        len = sizeof(name) - 1;
    snprintf(name + len, sizeof(name) - len, "%" PRId64, num);
    if (id >= 0 && (uint32_t)id < g->ngroups)
        return rename_group(g, id, name);
    return gr_add_group(g, id, name, step_num, p, l, e, !implicit);
}

/* A root with what orders it: level (higher first), then timespan, then node. */
struct sort_root {
    int32_t level;
    uint32_t node;
    int64_t begin;
    int64_t dur;
};

static int sort_root_cmp(const void *x, const void *y)
{
    const struct sort_root *a = x, *b = y;

    if (a->level != b->level)
        return a->level > b->level ? -1 : 1;
    if (gr_span_less(a->begin, a->dur, b->begin, b->dur))
        return -1;
    if (gr_span_less(b->begin, b->dur, a->begin, a->dur))
        return 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

/* CreateEventGroups and MarkEagerlyExecuted*. */
int gr_create_groups(struct forest *f, struct xp_groups *g)
{
    int32_t next = 0;
    size_t i;
    int rc = 0;

    if (f->loop_roots.n > 0) {
        uint32_t *r = f->loop_roots.v;
        for (i = 0; i < f->loop_roots.n; i++) {
            if ((rc = gr_process_root(f, g, r[i], next++)) != 0)
                return rc;
        }
    } else if (f->roots.n > 0) {
        const struct root_node *rn = f->roots.v;
        struct sort_root *r = malloc(f->roots.n * sizeof(*r));
        size_t n = 0;
        if (r == NULL)
            return -ENOMEM;
        for (i = 0; i < f->roots.n; i++) {
            struct xp_stat st;
            if (f->tfdata_ids.n > 0 && gr_node_stat(f, rn[i].node, XS_STEP_ID, &st) &&
                gr_is_tfdata_id(f, xp_stat_int(&st)))
                continue;
            r[n].level = rn[i].level;
            r[n].node = rn[i].node;
            gr_node_span(f, rn[i].node, &r[n].begin, &r[n].dur);
            n++;
        }
        if (n > 1)
            xp_qsort(r, n, sizeof(*r), sort_root_cmp);
        for (i = 0; i < n && rc == 0; i++) {
            if (f->gid[r[i].node] >= 0)
                continue;
            if (gr_find_ancestor(f, r[i].node, 0, -1, r[i].level, &rc) != NO_NODE || rc != 0)
                continue;
            rc = gr_process_root(f, g, r[i].node, next++);
        }
        free(r);
        if (rc != 0)
            return rc;
    }
    if (f->tpu_tc_lines.n > 0 && (rc = gr_tpu_lock_step(f, g, next)) != 0)
        return rc;
    if (f->has_eager_execute)
        return gr_mark_eager(f);
    return 0;
}
