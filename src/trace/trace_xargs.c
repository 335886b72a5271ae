/*
 * trace_xargs.c - event numbering and full args of xplane trace events.
 *
 * The event-details request returns one event with the args XProf stores in
 * its metadata table: long_name first (for events with a display name), then
 * the metadata's stats and the event's own stats in order, skipping internal
 * stats, bytes and the special ones (flow, group_id, _a), then what
 * preprocessing appended (step_name of a step root). Strings longer than 16
 * bytes are interned by XProf; long_name and hlo_text ones become a stack
 * frame ("sf") instead of an arg, the first one only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_json.h"
#include "trace_xplane.h"
#include "base/hash.h"

#define MAX_LONG_NAME 10000
#define ARG_INTERN_MIN 17

int xsrc_new(const struct xspace *xs, const struct xp_groups *groups, int preprocess,
             struct xsrc **srcp)
{
    struct xsrc *src = calloc(1, sizeof(*src));
    uint32_t p, l, n = 0, base = 0;

    if (src == NULL)
        return -ENOMEM;
    src->xs = xs;
    src->groups = groups;
    src->preprocess = preprocess;
    for (p = 0; p < xs->nplanes; p++)
        n += xs->planes[p].nlines;
    src->lines = malloc((n ? n : 1) * sizeof(*src->lines));
    src->plane_first = malloc((xs->nplanes ? xs->nplanes : 1) * sizeof(*src->plane_first));
    if (src->lines == NULL || src->plane_first == NULL) {
        free(src->lines);
        free(src->plane_first);
        free(src);
        return -ENOMEM;
    }
    for (p = 0; p < xs->nplanes; p++) {
        src->plane_first[p] = src->nlines;
        for (l = 0; l < xs->planes[p].nlines; l++) {
            struct xsrc_line *sl = &src->lines[src->nlines++];
            sl->base = base;
            sl->plane = p;
            sl->line = l;
            base += xs->planes[p].lines[l].nevents;
        }
    }
    src->nfile = base;
    *srcp = src;
    return 0;
}

int xsrc_index_derived(struct xsrc *src)
{
    uint32_t i, base = src->nfile;

    if (src->dv == NULL)
        return 0;
    src->dv_base = malloc((src->dv->nlines + 1) * sizeof(*src->dv_base));
    if (src->dv_base == NULL)
        return -ENOMEM;
    for (i = 0; i < src->dv->nlines; i++) {
        src->dv_base[i] = base;
        base += src->dv->lines[i].nev;
    }
    src->dv_base[src->dv->nlines] = base;
    return 0;
}

void xsrc_free(void *arg)
{
    struct xsrc *src = arg;

    if (src == NULL)
        return;
    derived_free(src->dv);
    free(src->dv_base);
    free(src->lines);
    free(src->plane_first);
    free(src);
}

uint32_t xsrc_line_base(const struct xsrc *src, uint32_t p, uint32_t l)
{
    return src->lines[src->plane_first[p] + l].base;
}

uint32_t xsrc_derived_base(const struct xsrc *src, uint32_t di)
{
    return src->dv_base[di];
}

uint64_t xsrc_flow(uint64_t host_id, uint64_t key, uint64_t kind, unsigned direction,
                   unsigned category)
{
    uint64_t h = host_id * 0x9e3779b97f4a7c15ull ^ (key + 0x632be59bd9b4e019ull);

    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= kind + (h >> 29);
    h *= 0x94d049bb133111ebull;
    h ^= h >> 32;
    return (direction & 3) | ((h & ((1ull << 56) - 1)) << 2) | ((uint64_t)category << 58);
}

void xsrc_extras(const struct xsrc *src, uint32_t p, uint32_t l, uint32_t e, struct xsrc_extras *x)
{
    const struct xp_plane *pl = &src->xs->planes[p];
    const struct xp_line *ln = &pl->lines[l];
    const struct xp_event *ev = &ln->events[e];
    struct xp_stat_iter it;
    struct xp_stat st;
    int has_corr = 0, has_pt = 0, has_p = 0, has_ct = 0, has_c = 0;
    uint64_t corr = 0;
    int64_t pt = 0, pv = 0, ct = 0, cv = 0;

    memset(x, 0, sizeof(*x));
    x->group = -1;
    if (!src->preprocess)
        return;
    xp_stat_iter_init(&it, pl, ln, ev);
    while (xp_stat_next(&it, &st) == 1) {
        int is_int = st.kind == XP_STAT_INT || st.kind == XP_STAT_UINT;
        if (st.meta_id == pl->stat_id[XS_CORRELATION_ID]) {
            has_corr = 1;
            corr = st.kind == XP_STAT_UINT ? st.v.u : 0;
        } else if (st.meta_id == pl->stat_id[XS_PRODUCER_TYPE] && is_int) {
            has_pt = 1;
            pt = st.v.i;
        } else if (st.meta_id == pl->stat_id[XS_PRODUCER_ID] && is_int) {
            has_p = 1;
            pv = st.v.i;
        } else if (st.meta_id == pl->stat_id[XS_CONSUMER_TYPE] && is_int) {
            has_ct = 1;
            ct = st.v.i;
        } else if (st.meta_id == pl->stat_id[XS_CONSUMER_ID] && is_int) {
            has_c = 1;
            cv = st.v.i;
        }
    }
    if (has_corr)
        x->flows[x->nflows++] =
            xsrc_flow(src->host_id, corr, 0, strncmp(pl->name, "/host:CPU", 9) == 0 ? 2 : 1, 9);
    if (has_pt && has_p) {
        unsigned c = pt >= 0 && pt <= 15 ? (unsigned)pt : 0;
        x->flows[x->nflows++] = xsrc_flow(src->host_id, (uint64_t)pv, 1 + c, 2, c);
    }
    if (has_ct && has_c) {
        unsigned c = ct >= 0 && ct <= 15 ? (unsigned)ct : 0;
        x->flows[x->nflows++] = xsrc_flow(src->host_id, (uint64_t)cv, 1 + c, 1, c);
    }
    if (src->groups != NULL) {
        int32_t g = xp_group_of(src->groups, p, l, e);
        if (g >= 0 && (uint32_t)g < src->groups->ngroups) {
            const struct xp_group *grp = &src->groups->groups[g];
            x->group = g;
            if (grp->root_plane == p && grp->root_line == l && grp->root_event == e &&
                xp_event_stat(pl, ln, ev, XS_IS_ROOT, &st))
                x->step_name = grp->name;
        }
    }
}

/* The file line holding event number n. */
static const struct xsrc_line *line_of(const struct xsrc *src, uint32_t n)
{
    uint32_t lo = 0, hi = src->nlines;

    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (src->lines[mid].base <= n)
            lo = mid;
        else
            hi = mid;
    }
    return &src->lines[lo];
}

/* Writer state: args object members or a counter's values. */
struct arg_sink {
    struct out *o;          /* output */
    int *first;             /* no member written yet */
    uint64_t sf;            /* stack frame referenced, 0 if none */
    int counter;            /* 1: write values only (counter entries) */
    const char *first_name; /* counter: name of the first arg */
};

static void sink_sep(struct arg_sink *s, const char *name)
{
    if (!*s->first)
        out_putc(s->o, ',');
    if (*s->first && s->counter)
        s->first_name = name;
    *s->first = 0;
}

/* A string arg, with XProf's interning rule. */
static void sink_str(struct arg_sink *s, const char *name, const char *v, size_t n)
{
    int frame =
        n >= ARG_INTERN_MIN && (strcmp(name, "long_name") == 0 || strcmp(name, "hlo_text") == 0);

    if (frame && !s->counter) {
        if (s->sf == 0) {
            char *buf = malloc(n + 2);
            if (buf == NULL) {
                s->o->oom = 1;
                return;
            }
            memcpy(buf, "@@", 2);
            memcpy(buf + 2, v, n);
            s->sf = std_hash_bytes(buf, n + 2);
            free(buf);
            return;
        }
        /* Later frames print as plain args, "@@" prefix included. */
        sink_sep(s, name);
        tj_cstr(s->o, name);
        out_putc(s->o, ':');
        {
            char *buf = malloc(n + 2);
            if (buf == NULL) {
                s->o->oom = 1;
                return;
            }
            memcpy(buf, "@@", 2);
            memcpy(buf + 2, v, n);
            tj_str(s->o, buf, n + 2);
            free(buf);
        }
        return;
    }
    sink_sep(s, name);
    if (s->counter)
        tj_str(s->o, v, n);
    else
        tj_arg_str(s->o, name, v, n);
}

static void sink_i64(struct arg_sink *s, const char *name, int64_t v)
{
    sink_sep(s, name);
    if (s->counter)
        out_i64(s->o, v);
    else
        tj_arg_i64(s->o, name, v);
}

static void sink_u64(struct arg_sink *s, const char *name, uint64_t v)
{
    sink_sep(s, name);
    if (s->counter)
        out_u64(s->o, v);
    else
        tj_arg_u64(s->o, name, v);
}

static void sink_double(struct arg_sink *s, const char *name, double v)
{
    sink_sep(s, name);
    if (s->counter)
        tj_double_value(s->o, name, v);
    else
        tj_arg_double(s->o, name, v);
}

/* The long_name arg of an event whose metadata has a display name. */
static void sink_long_name(struct arg_sink *s, const char *full)
{
    size_t n = strlen(full);

    if (n > MAX_LONG_NAME) {
        char *buf = malloc(MAX_LONG_NAME + 16);
        if (buf == NULL) {
            s->o->oom = 1;
            return;
        }
        memcpy(buf, full, MAX_LONG_NAME);
        memcpy(buf + MAX_LONG_NAME, "...<truncated>", 14);
        sink_str(s, "long_name", buf, MAX_LONG_NAME + 14);
        free(buf);
        return;
    }
    sink_str(s, "long_name", full, n);
}

/* One stat as an arg, unless XProf hides or consumes it. */
static void sink_stat(struct arg_sink *s, const struct xp_plane *pl, const struct xp_stat *st)
{
    const char *name = xp_stat_name(pl, st);
    int64_t id = st->meta_id;

    if (xp_stat_is_internal(name))
        return;
    switch (st->kind) {
    case XP_STAT_INT:
    case XP_STAT_UINT:
        if (id == pl->stat_id[XS_FLOW] || id == pl->stat_id[XS_GROUP_ID] ||
            id == pl->stat_id[XS_IS_ASYNC])
            return;
        if (st->kind == XP_STAT_INT)
            sink_i64(s, name, st->v.i);
        else
            sink_u64(s, name, st->v.u);
        return;
    case XP_STAT_DOUBLE:
        sink_double(s, name, st->v.d);
        return;
    case XP_STAT_STR:
    case XP_STAT_REF:
        sink_str(s, name, st->str, st->len);
        return;
    default:
        return;
    }
}

/* Args of a file event. */
static void file_args(const struct xsrc *src, uint32_t n, struct arg_sink *s)
{
    const struct xsrc_line *sl = line_of(src, n);
    const struct xp_plane *pl = &src->xs->planes[sl->plane];
    const struct xp_line *ln = &pl->lines[sl->line];
    uint32_t ei = n - sl->base, i;
    const struct xp_event *ev = &ln->events[ei];
    const struct xp_event_meta *m = &pl->emeta[ev->meta];
    struct xp_stat_iter it;
    struct xp_stat st;

    if (m->display_name[0] != '\0')
        sink_long_name(s, m->name);
    for (i = 0; i < m->nstats; i++)
        sink_stat(s, pl, &m->stats[i]);
    xp_stat_iter_init(&it, pl, ln, ev);
    while (xp_stat_next(&it, &st) == 1)
        sink_stat(s, pl, &st);
    if (src->preprocess && src->groups != NULL) {
        int32_t g = xp_group_of(src->groups, sl->plane, sl->line, ei);
        const struct xp_group *grp;
        if (g >= 0 && (uint32_t)g < src->groups->ngroups) {
            grp = &src->groups->groups[g];
            if (grp->root_plane == sl->plane && grp->root_line == sl->line &&
                grp->root_event == ei && xp_event_stat(pl, ln, ev, XS_IS_ROOT, &st))
                sink_str(s, "step_name", grp->name, strlen(grp->name));
        }
    }
}

/* The derived line of derived event n, and n's index in it. */
static const struct dv_line *derived_line_of(const struct xsrc *src, uint32_t n, uint32_t *k)
{
    uint32_t lo = 0, hi = src->dv->nlines;

    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (src->dv_base[mid] <= n)
            lo = mid;
        else
            hi = mid;
    }
    *k = n - src->dv_base[lo];
    return &src->dv->lines[lo];
}

/* Args of a derived event. */
static void derived_args(const struct xsrc *src, uint32_t n, struct arg_sink *s)
{
    const struct dv_line *dl;
    const struct dv_launch *la;
    const char *step_name, *long_name;
    uint32_t k;

    dl = derived_line_of(src, n, &k);
    long_name = derived_long_name(dl, k);
    if (long_name != NULL)
        sink_long_name(s, long_name);
    step_name = derived_step_name(dl, k);
    if (step_name != NULL)
        sink_str(s, "step_name", step_name, strlen(step_name));
    la = derived_launch(dl, k);
    if (la != NULL) {
        sink_i64(s, "num_launches", la->num_launches);
        sink_double(s, "max_launch_time_us", la->max_launch_us);
        sink_double(s, "avg_launch_time_us", la->avg_launch_us);
    }
}

static void any_args(const struct xsrc *src, uint32_t n, struct arg_sink *s)
{
    if (n < src->nfile)
        file_args(src, n, s);
    else if (src->dv != NULL)
        derived_args(src, n, s);
}

uint64_t xsrc_args(const struct tv_host *h, const struct tv_event *e, struct out *o, int *first)
{
    struct arg_sink s = {o, first, 0, 0, NULL};

    any_args(h->source, e->src, &s);
    return s.sf;
}

int32_t xsrc_group(const struct tv_host *h, const struct tv_event *e)
{
    const struct xsrc *src = h->source;
    const struct dv_line *dl;
    uint32_t k;
    int32_t group;

    if (e->src < src->nfile || src->dv == NULL)
        return TV_NO_GROUP;
    dl = derived_line_of(src, e->src, &k);
    group = derived_group(dl, k);
    return group >= 0 ? group : TV_NO_GROUP;
}

/* The counter value of one stat if it is an arg (see sink_stat); 0 when
 * XProf does not make it an arg. */
static int stat_value(const struct xp_plane *pl, const struct xp_stat *st,
                      struct tv_counter_value *v)
{
    int64_t id = st->meta_id;

    if (xp_stat_is_internal(xp_stat_name(pl, st)))
        return 0;
    switch (st->kind) {
    case XP_STAT_INT:
    case XP_STAT_UINT:
        if (id == pl->stat_id[XS_FLOW] || id == pl->stat_id[XS_GROUP_ID] ||
            id == pl->stat_id[XS_IS_ASYNC])
            return 0;
        if (st->kind == XP_STAT_UINT) {
            v->kind = TV_COUNTER_UINT;
            v->u = st->v.u;
        }
        return 1; /* an int_value arg: no counter value */
    case XP_STAT_DOUBLE:
        v->kind = TV_COUNTER_DOUBLE;
        v->d = st->v.d;
        return 1;
    case XP_STAT_STR:
    case XP_STAT_REF:
        return 1;
    default:
        return 0;
    }
}

/* The first arg of event n as a counter value (XProf's extractor reads
 * RawData arg 0: a double or uint value, nothing for other kinds). */
static void first_value(const struct xsrc *src, uint32_t n, struct tv_counter_value *v)
{
    const struct xsrc_line *sl;
    const struct xp_plane *pl;
    const struct xp_line *ln;
    const struct xp_event *ev;
    const struct xp_event_meta *m;
    struct xp_stat_iter it;
    struct xp_stat st;
    uint32_t i;

    memset(v, 0, sizeof(*v));
    if (n >= src->nfile)
        return; /* derived events: long_name, step_name or an int first */
    sl = line_of(src, n);
    pl = &src->xs->planes[sl->plane];
    ln = &pl->lines[sl->line];
    ev = &ln->events[n - sl->base];
    m = &pl->emeta[ev->meta];
    if (m->display_name[0] != '\0')
        return; /* long_name comes first */
    for (i = 0; i < m->nstats; i++) {
        if (stat_value(pl, &m->stats[i], v))
            return;
    }
    xp_stat_iter_init(&it, pl, ln, ev);
    while (xp_stat_next(&it, &st) == 1) {
        if (stat_value(pl, &st, v))
            return;
    }
}

int xsrc_counter(const struct tv_host *h, const struct tv_event *e, struct out *o,
                 const char **first_arg_name, struct tv_counter_value *first_val)
{
    int first = 1;
    struct arg_sink s = {o, &first, 0, 1, NULL};

    if (first_val != NULL)
        first_value(h->source, e->src, first_val);
    if (o == NULL)
        return first_val != NULL && first_val->kind != TV_COUNTER_NONE;
    any_args(h->source, e->src, &s);
    *first_arg_name = s.first_name != NULL ? s.first_name : "";
    return !first;
}
