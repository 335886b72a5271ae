/*
 * trace_xplane_fill.c - the parallel jobs that add an xplane's events to a
 * trace index: a first pass counts each job's shown events and marks the
 * metadata they use; a second fills the job's slots: file events with
 * their special stats (the metadata's, then the event's own, then what
 * XProf's preprocessing adds: flows from correlation and producer/consumer
 * ids, group ids, step names of group roots), derived events with their
 * names and frames. Strings, frames and channel tracks are taken under the
 * builder's lock.
 */
#include "trace_xplane_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xplane/derived.h"

/* XFlow's fields. */
static unsigned flow_type_of(uint64_t v)
{
    switch (v & 3) {
    case 1:
        return TV_FLOW_END; /* in */
    case 2:
        return TV_FLOW_START; /* out */
    case 3:
        return TV_FLOW_MID;
    default:
        return TV_FLOW_NONE;
    }
}

/* xp_stat_next_wanted's filter: stats with a role. */
static int has_role(const void *ctx, int64_t id)
{
    return txp_role_of(ctx, id) != 0;
}

/* The group root's step_name, when grouping named it (explicit roots). */
static const char *root_step_name(const struct builder *b, uint32_t p, uint32_t l, uint32_t e,
                                  int32_t group)
{
    const struct xp_group *g;
    const struct xp_plane *pl;
    struct xp_stat st;

    if (b->groups == NULL || group < 0 || (uint32_t)group >= b->groups->ngroups)
        return NULL;
    g = &b->groups->groups[group];
    if (g->root_plane != p || g->root_line != l || g->root_event != e)
        return NULL;
    pl = &b->xs->planes[p];
    if (!xp_event_stat(pl, &pl->lines[l], &pl->lines[l].events[e], XS_IS_ROOT, &st))
        return NULL;
    return g->name;
}

/* The name of a grouped event of a TPU plane's Steps line: its group's
 * (AddGroupMetadataToStepEvents), else NULL. */
static const char *tpu_step_name(const struct builder *b, uint32_t p, uint32_t l, int32_t group)
{
    const struct xp_groups *g = b->groups;

    if (g == NULL || g->tpu_step_line == NULL || g->tpu_step_line[p] != (int32_t)l || group < 0 ||
        (uint32_t)group >= g->ngroups)
        return NULL;
    return g->groups[group].name;
}

/* Fold one of the event's own stats (XProf's ConvertXStatsToTraceEventArguments,
 * as fold_stat, with the role looked up once). */
static void fold_own(const struct xp_stat *st, uint16_t r, struct special *sp)
{
    int is_int = st->kind == XP_STAT_INT || st->kind == XP_STAT_UINT;

    if (r & R_CORR) {
        sp->has_corr = 1;
        sp->corr = st->kind == XP_STAT_UINT ? st->v.u : 0;
    } else if ((r & R_PT) && is_int) {
        sp->has_pt = 1;
        sp->pt = st->v.i;
    } else if ((r & R_P) && is_int) {
        sp->has_p = 1;
        sp->p = st->v.i;
    } else if ((r & R_CT) && is_int) {
        sp->has_ct = 1;
        sp->ct = st->v.i;
    } else if ((r & R_C) && is_int) {
        sp->has_c = 1;
        sp->c = st->v.i;
    }
    if (!is_int && st->kind != XP_STAT_STR && st->kind != XP_STAT_REF)
        return;
    if ((r & R_FLOW) && is_int) {
        sp->has_flow = 1;
        sp->flow = st->v.u;
    } else if ((r & R_GROUP) && is_int) {
        sp->has_group = 1;
        sp->group = st->v.i;
    } else if ((r & R_ASYNC) && is_int) {
        sp->is_async = 1;
    } else if ((r & R_STEP) && !is_int) {
        sp->step_name = st->str;
        sp->step_len = st->len;
    }
}

/* No special stat yet: every flag clear (a value is read only under its
 * flag). Stores field by field: a memset of the whole struct costs more than
 * the rest of a typical event's work. */
static inline void special_clear(struct special *sp)
{
    sp->has_flow = 0;
    sp->flow = 0;
    sp->has_group = 0;
    sp->is_async = 0;
    sp->step_name = NULL;
    sp->step_len = 0;
    sp->has_corr = 0;
    sp->has_pt = 0;
    sp->has_p = 0;
    sp->has_ct = 0;
    sp->has_c = 0;
}

/* Collect the special stats of one event, including what preprocessing adds:
 * the metadata's folded stats, then the event's own (which win). */
static int event_specials(struct builder *b, const struct plane_state *ps, uint32_t l, uint32_t ei,
                          const struct meta_info *info, struct special *sp, int32_t *group)
{
    const struct xp_plane *pl = ps->pl;
    const struct xp_line *ln = &pl->lines[l];
    const struct xp_event *ev = &ln->events[ei];
    struct xp_stat_iter it;
    struct xp_stat st;
    struct special own;

    special_clear(sp);
    if (info->special != 0) {
        const struct meta_special *x = &ps->specials[info->special - 1];
        sp->has_flow = x->has_flow;
        sp->flow = x->flow;
        sp->has_group = x->has_group;
        sp->group = x->group;
        sp->is_async = x->is_async;
        sp->step_name = x->step_name;
        sp->step_len = x->step_len;
    }
    special_clear(&own);
    if (ps->roles.only_group && ln->gids != NULL && ln->gids[ei] != XP_GID_WALK) {
        /* its group_id, the one stat wanted here, as the decoder saw it */
        own.has_group = ln->gids[ei] >= 0;
        own.group = ln->gids[ei];
    } else if (ps->roles.any) {
        xp_stat_iter_init(&it, pl, ln, ev);
        while (xp_stat_next_wanted(&it, &st, has_role, &ps->roles) == 1) {
            uint16_t r = txp_role_of(&ps->roles, st.meta_id);
            fold_own(&st, r, &own);
            if (txp_is_frame_stat(&st, r)) {
                int rc;
                pthread_mutex_lock(&b->lock);
                rc = tv_add_frame(b->h, st.str, st.len);
                pthread_mutex_unlock(&b->lock);
                if (rc != 0)
                    return -ENOMEM;
            }
        }
    }
    if (own.has_flow) {
        sp->has_flow = 1;
        sp->flow = own.flow;
    }
    if (own.has_group) {
        sp->has_group = 1;
        sp->group = own.group;
    }
    sp->is_async |= own.is_async;
    if (own.step_name != NULL) {
        sp->step_name = own.step_name;
        sp->step_len = own.step_len;
    }
    *group = sp->has_group ? (int32_t)sp->group : TV_NO_GROUP;
    if (!b->preprocess)
        return 0;
    /* AddFlowsToXplane: from the event's own stats, appended after them. */
    if (own.has_corr) {
        sp->has_flow = 1;
        sp->flow = xsrc_flow(b->host_id, own.corr, 0, ps->is_host ? 2 : 1, CTX_GPU_LAUNCH);
    }
    if (own.has_pt && own.has_p) {
        unsigned ctx = own.pt >= 0 && own.pt <= MAX_CONTEXT ? (unsigned)own.pt : 0;
        sp->has_flow = 1;
        sp->flow = xsrc_flow(b->host_id, (uint64_t)own.p, 1 + ctx, 2, ctx);
    }
    if (own.has_ct && own.has_c) {
        unsigned ctx = own.ct >= 0 && own.ct <= MAX_CONTEXT ? (unsigned)own.ct : 0;
        sp->has_flow = 1;
        sp->flow = xsrc_flow(b->host_id, (uint64_t)own.c, 1 + ctx, 1, ctx);
    }
    if (b->groups != NULL) {
        int32_t g = xp_group_of(b->groups, ps->index, l, ei);
        if (g >= 0)
            *group = g;
    }
    return 0;
}

/* tv_str / tv_track_channel under the builder's lock (0 / -1 on no memory). */
static uint32_t locked_str(struct builder *b, const char *s, size_t n)
{
    uint32_t id;

    pthread_mutex_lock(&b->lock);
    id = tv_str(b->h, s, n);
    pthread_mutex_unlock(&b->lock);
    return id;
}

static int64_t locked_channel(struct builder *b, uint32_t pid, uint32_t name)
{
    int64_t t;

    pthread_mutex_lock(&b->lock);
    t = tv_track_channel(b->h, pid, name);
    pthread_mutex_unlock(&b->lock);
    return t;
}

/* Count the shown events of a job and mark the metadata they use. */
int txp_count_job(void *arg, size_t j)
{
    struct builder *b = arg;
    struct line_job *job = &b->jobs[j];
    struct plane_state *ps = &b->planes[job->plane];
    const struct xp_line *ln;
    uint32_t ei, n = 0;

    if (job->derived) {
        job->count = job->end - job->first;
        return 0;
    }
    ln = &ps->pl->lines[job->line];

    for (ei = job->first; ei < job->end; ei++) {
        struct meta_info *info = &ps->meta[ln->events[ei].meta];
        if (info->internal ||
            xp_tpu_step_end(b->groups, ps->index, job->line, ei, 0) == XP_STEP_DROPPED)
            continue;
        n++;
        if (!__atomic_load_n(&info->used, __ATOMIC_RELAXED))
            __atomic_store_n(&info->used, 1, __ATOMIC_RELAXED);
    }
    job->count = n;
    return 0;
}

/* Interned names of a derived job, by text pointer (the derived events
 * share their name strings): a small direct-mapped cache. */
#define NAME_CACHE 4096 /* holds every distinct name of typical lines */

struct name_cache {
    const char *text[NAME_CACHE]; /* cached pointer, NULL = empty */
    uint32_t id[NAME_CACHE];      /* its string id */
};

static uint32_t cache_slot(const char *p)
{
    uintptr_t x = (uintptr_t)p;

    return (uint32_t)((x >> 3) ^ (x >> 11)) & (NAME_CACHE - 1);
}

/* The string id of text (interned under the lock on a miss); 0 = no memory. */
static uint32_t cached_str(struct builder *b, struct name_cache *c, const char *text)
{
    uint32_t s = cache_slot(text);

    if (c->text[s] != text) {
        uint32_t id = locked_str(b, text, strlen(text));
        if (id == 0)
            return 0;
        c->text[s] = text;
        c->id[s] = id;
    }
    return c->id[s];
}

/* Record the "@@" frame of a derived event's full name, once per distinct
 * name (call with the lock held). */
static int derived_frame(struct builder *b, const char *name, size_t len)
{
    uint32_t full = tv_str(b->h, name, len);

    if (full == 0)
        return -ENOMEM;
    if (full >= b->nframe_done) {
        uint32_t n = full + 1 > 2 * b->nframe_done ? full + 1 : 2 * b->nframe_done;
        uint8_t *d = realloc(b->frame_done, n);
        if (d == NULL)
            return -ENOMEM;
        memset(d + b->nframe_done, 0, n - b->nframe_done);
        b->frame_done = d;
        b->nframe_done = n;
    }
    if (!b->frame_done[full]) {
        if (tv_add_frame(b->h, name, len) != 0)
            return -ENOMEM;
        b->frame_done[full] = 1;
    }
    return 0;
}

/* Add the events of a run of one derived line into its slots. */
static int fill_derived(struct builder *b, const struct line_job *job)
{
    const struct dv_line *dl = &b->src->dv->lines[job->line];
    uint32_t base = xsrc_derived_base(b->src, job->line), k;
    struct name_cache *names = calloc(1, sizeof(*names));
    struct name_cache *framed = calloc(1, sizeof(*framed));
    int rc = 0;

    if (names == NULL || framed == NULL) {
        free(names);
        free(framed);
        return -ENOMEM;
    }
    for (k = job->first; k < job->end && rc == 0; k++) {
        const struct dv_event *de = &dl->ev[k];
        const struct dv_ref *pair = &dl->refs[de->ref];
        struct tv_new_event te = {0};
        const char *shown, *step_name = derived_step_name(dl, k);
        te.ts = de->ts;
        te.dur = de->dur;
        te.track = (uint32_t)job->track;
        te.src = base + k;
        if (step_name != NULL && step_name[0] != '\0')
            shown = step_name;
        else
            shown = pair->display != NULL ? pair->display : pair->name;
        te.name = cached_str(b, names, shown);
        if (te.name == 0 || tv_put_event(b->h, b->out + job->out + (k - job->first), &te) != 0) {
            rc = -ENOMEM;
            break;
        }
        if (pair->display != NULL && framed->text[cache_slot(pair->name)] != pair->name) {
            size_t len = strlen(pair->name);
            if (len >= ARG_INTERN_MIN) {
                pthread_mutex_lock(&b->lock);
                rc = derived_frame(b, pair->name, len);
                pthread_mutex_unlock(&b->lock);
            }
            framed->text[cache_slot(pair->name)] = pair->name;
        }
    }
    free(names);
    free(framed);
    /* The index holds the times of the line's events once its last job is
     * done: give their half of the line back now. */
    if (__atomic_sub_fetch(&b->dv_jobs_left[job->line], 1, __ATOMIC_ACQ_REL) == 0)
        derived_compact_line(&b->src->dv->lines[job->line]);
    return rc;
}

/* The stretch of a mapped profile that a file-line job read: its pages can
 * go (xspace_release), since no later pass of the build reads them. */
static void release_job_bytes(const struct builder *b, const struct xp_line *ln,
                              const struct line_job *job)
{
    size_t line_at = (size_t)(ln->body - b->xs->data), from, to;

    if (job->end <= job->first)
        return;
    from = line_at + ln->events[job->first].rec_off;
    to = line_at + ln->events[job->end - 1].rec_off;
    xspace_release(b->xs, from, to - from);
}

/* Add the events of one job into its slots (runs on several threads). */
int txp_fill_job(void *arg, size_t j)
{
    struct builder *b = arg;
    const struct line_job *job = &b->jobs[j];
    const struct plane_state *ps = &b->planes[job->plane];
    const struct xp_line *ln;
    uint32_t base, ei, slot = job->out, chan_name = 0, nflow = 0;
    int64_t chan_track = -1;

    if (job->derived)
        return fill_derived(b, job);
    ln = &ps->pl->lines[job->line];
    base = xsrc_line_base(b->src, ps->index, job->line);

    for (ei = job->first; ei < job->end; ei++) {
        const struct xp_event *ev = &ln->events[ei];
        const struct meta_info *info = &ps->meta[ev->meta];
        struct tv_new_event ne = {0}, *te = &ne;
        struct special sp;
        const char *root_name;
        int64_t track = job->track;
        int64_t end = xp_event_start_ps(ln, ev) + ev->duration_ps;
        int32_t group;

        if (info->internal)
            continue;
        /* TPU Steps line after MergeHostSteps: merged into the event before,
         * or longer */
        end = xp_tpu_step_end(b->groups, ps->index, job->line, ei, end);
        if (end == XP_STEP_DROPPED)
            continue;
        if (event_specials(b, ps, job->line, ei, info, &sp, &group) != 0)
            return -ENOMEM;
        te->ts = (uint64_t)xp_event_start_ps(ln, ev);
        te->dur = (uint64_t)(end - xp_event_start_ps(ln, ev));
        te->src = base + ei;
        te->name = info->name;
        if (b->h->groups_own != NULL)
            b->h->groups_own[te->src] = group;
        root_name = b->preprocess ? root_step_name(b, ps->index, job->line, ei, group) : NULL;
        if (root_name == NULL && b->preprocess)
            root_name = tpu_step_name(b, ps->index, job->line, group);
        if (root_name != NULL && root_name[0] != '\0')
            te->name = locked_str(b, root_name, strlen(root_name));
        else if (sp.step_name != NULL && sp.step_len > 0)
            te->name = locked_str(b, sp.step_name, sp.step_len);
        if (te->name == 0)
            return -ENOMEM;
        if (job->counter || (sp.has_flow && sp.is_async)) {
            if (chan_track < 0 || chan_name != te->name) {
                chan_name = te->name;
                chan_track = locked_channel(b, ps->pid, te->name);
                if (chan_track < 0)
                    return -ENOMEM;
            }
        }
        if (job->counter) {
            te->flags = TV_EV_COUNTER;
            te->dur = 0;
            track = chan_track;
        } else if (sp.has_flow) {
            b->h->flows[te->src] =
                tv_flow_pack(sp.flow >> 2, flow_type_of(sp.flow), (unsigned)(sp.flow >> 58));
            te->has_flow = 1;
            if (sp.is_async) {
                te->flags = TV_EV_ASYNC;
                track = chan_track;
            }
        }
        te->track = (uint32_t)track;
        nflow += te->has_flow && track == job->track;
        if (tv_put_event(b->h, b->out + slot, te) != 0 ||
            (track != job->track && tv_move_event(b->h, b->out + slot, te->track) != 0))
            return -ENOMEM;
        slot++;
    }
    release_job_bytes(b, ln, job);
    b->jobs[j].nflow = nflow; /* this job is this thread's alone */
    return 0;
}
