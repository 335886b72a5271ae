/*
 * steps_ctrace.c - steps from a Chrome trace (perfetto_trace.json.gz): pick
 * the step annotation among complete ("X") events, group the events of the
 * threads that hold steps, and hand each thread to the builder.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "reader/stats.h"
#include "steps_build.h"

#define EXACT_PS_US 4294967296.0 /* 2^32 us: a double holds a ps below it */

#define PROFILER_STEP "ProfilerStep#" /* PyTorch's step: ProfilerStep#<n> */

/* Length of name without a trailing " <integer>" (the trace viewer names a
 * step "learner_step 3") or PyTorch's "#<integer>" of ProfilerStep#6; the
 * whole length when there is none. */
static size_t base_len(const char *name)
{
    size_t n = strlen(name), i = n;

    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    if (i < n && i == strlen(PROFILER_STEP) && strncmp(name, PROFILER_STEP, i) == 0)
        return i - 1;
    if (i < n && i > 0 && name[i - 1] == '-')
        i--;
    if (i < n && i > 1 && name[i - 1] == ' ')
        return i - 1;
    return n;
}

/* 1 if the event's args hold key (a quoted JSON key). */
static int args_have(const struct ctrace *ct, const struct ctrace_event *ev, const char *key)
{
    size_t len;
    const char *t = ctrace_event_args_text(ct, ev, &len);

    return t != NULL && memmem(t, len, key, strlen(key)) != NULL;
}

static int is_span(const struct ctrace_event *ev)
{
    return ev->ph == 'X' && (ev->flags & CT_HAS_TS);
}

/* Add the names of the events that pass tier t (0 step_num, 1 root, 2 TF,
 * 3 PyTorch's ProfilerStep#N). */
static int add_tier(struct st_builder *b, const struct ctrace *ct, int t, struct xp_err *err)
{
    uint32_t i;
    int k, rc;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        const char *name = ctrace_str(ct, ev->name);
        int pick = 0;
        if (!is_span(ev) || name[0] == '\0')
            continue;
        if (t == 0)
            pick = args_have(ct, ev, "\"step_num\"");
        else if (t == 1)
            pick = args_have(ct, ev, "\"_r\"") || strcmp(name, "TraceContext") == 0;
        for (k = 0; t == 2 && k < ST_N_TF_MARKERS; k++)
            pick |= strcmp(name, st_tf_markers[k]) == 0;
        if (t == 3)
            pick = strncmp(name, PROFILER_STEP, strlen(PROFILER_STEP)) == 0 &&
                   base_len(name) < strlen(name);
        if (pick) {
            rc = st_add_name(b, name, t == 2 ? strlen(name) : base_len(name), err);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static int choose_names(struct st_builder *b, const struct ctrace *ct, const char *step,
                        enum xp_steps_source *source, struct xp_err *err)
{
    static const enum xp_steps_source tiers[] = {XP_STEPS_STEP_NUM, XP_STEPS_ROOT,
                                                 XP_STEPS_TF_MARKER, XP_STEPS_PROFILER_STEP};
    int t, rc = 0;

    if (step != NULL) {
        *source = XP_STEPS_ASKED;
        rc = st_add_name(b, step, strlen(step), err);
    }
    for (t = 0; step == NULL && t < 4 && rc == 0 && b->m->nstep_names == 0; t++) {
        rc = add_tier(b, ct, t, err);
        *source = tiers[t];
    }
    st_sort_names(b);
    return rc;
}

/* Per string id: the step name it stands for (NULL if none). A name matches
 * as written or without its " <number>" suffix. */
static const char **step_name_table(const struct st_builder *b, const struct ctrace *ct)
{
    uint32_t n = ctrace_str_count(ct), id;
    const char **tab = calloc((size_t)n + 1, sizeof(*tab));

    if (tab == NULL)
        return NULL;
    for (id = 1; id <= n; id++) {
        const char *s = ctrace_str(ct, id);
        tab[id] = st_has_name(b, s, strlen(s));
        if (tab[id] == NULL)
            tab[id] = st_has_name(b, s, base_len(s));
    }
    return tab;
}

/* A thread: (kind flags, pid, tid). */
struct track_key {
    int64_t pid;    /* pid or its string id */
    int64_t tid;    /* tid or its string id */
    uint16_t flags; /* CT_PID_STR | CT_TID_STR */
};

static int key_cmp(const void *pa, const void *pb)
{
    const struct track_key *a = pa, *b = pb;

    if (a->flags != b->flags)
        return a->flags < b->flags ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return 0;
}

static struct track_key key_of(const struct ctrace_event *ev)
{
    return (struct track_key){ev->pid, ev->tid, (uint16_t)(ev->flags & (CT_PID_STR | CT_TID_STR))};
}

/* An event of a step thread: its thread's index and its own. */
struct member {
    uint32_t track; /* index into the sorted keys */
    uint32_t event; /* index into ct->events */
};

static int member_cmp(const void *pa, const void *pb)
{
    const struct member *a = pa, *b = pb;

    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    return a->event < b->event ? -1 : a->event > b->event;
}

/* Number callback context. */
struct num_ctx {
    const struct ctrace *ct;
};

/* args.step_num (number or numeric string), else the name's number suffix. */
static int event_num(void *ctxp, uint32_t src, int64_t *num)
{
    const struct ctrace *ct = ((const struct num_ctx *)ctxp)->ct;
    const struct ctrace_event *ev = &ct->events[src];
    const char *name = ctrace_str(ct, ev->name);
    cJSON *args = ctrace_event_args(ct, ev);
    const cJSON *v = args ? cJSON_GetObjectItemCaseSensitive(args, "step_num") : NULL;
    size_t b = base_len(name);
    int found = 0;
    char *end;

    if (cJSON_IsNumber(v)) {
        *num = (int64_t)v->valuedouble;
        found = 1;
    } else if (cJSON_IsString(v)) {
        long long x = strtoll(v->valuestring, &end, 10);
        if (end != v->valuestring && *end == '\0') {
            *num = x;
            found = 1;
        }
    }
    cJSON_Delete(args);
    if (!found && b < strlen(name)) {
        *num = strtoll(name + b + 1, &end, 10);
        found = 1;
    }
    return found;
}

/* The thread keys holding steps, sorted and unique; *n gets their count. */
static struct track_key *step_tracks(const struct ctrace *ct, const char **tab, uint32_t *n)
{
    struct track_key *keys = NULL;
    uint32_t i, k = 0, cap = 0;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        /* PyTorch copies ProfilerStep onto a GPU stream: that is no step. */
        if (!is_span(ev) || tab[ev->name] == NULL ||
            strcmp(ctrace_str(ct, ev->cat), "gpu_user_annotation") == 0)
            continue;
        if (k == cap) {
            struct track_key *nk;
            cap = cap ? 2 * cap : 64;
            nk = realloc(keys, (size_t)cap * sizeof(*keys));
            if (nk == NULL) {
                free(keys);
                return NULL;
            }
            keys = nk;
        }
        keys[k++] = key_of(ev);
    }
    if (k == 0) {
        *n = 0;
        free(keys);
        return calloc(1, sizeof(*keys));
    }
    xp_qsort(keys, k, sizeof(*keys), key_cmp);
    for (i = 1, *n = 1; i < k; i++) {
        if (key_cmp(&keys[i], &keys[*n - 1]) != 0)
            keys[(*n)++] = keys[i];
    }
    return keys;
}

/* Clock origin: the earliest start of a span (the profile start), 0 without one. */
static double clock_origin(const struct ctrace *ct)
{
    double lo = 0;
    int first = 1;
    uint32_t i;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (!is_span(ev))
            continue;
        if (first || ev->ts < lo)
            lo = ev->ts;
        first = 0;
    }
    return lo;
}

/* ps from the clock origin to ts. Past 2^32 us a double holds a time more
 * coarsely than a picosecond (a trace on an epoch clock, written to the
 * nanosecond): the noise below a nanosecond is rounded away there. */
static int64_t ps_since_origin(double ts, double origin_us)
{
    int64_t ps = llround((ts - origin_us) * 1e6);

    if (fabs(origin_us) < EXACT_PS_US)
        return ps;
    return (ps >= 0 ? ps + 500 : ps - 500) / 1000 * 1000;
}

/* Feed the threads' events in members[0..n) (sorted by thread) to the builder. */
static int feed_tracks(struct st_builder *b, const struct ctrace *ct, const char **tab,
                       const struct member *mem, uint32_t n, struct xp_err *err)
{
    struct st_ev *ev = malloc((n ? n : 1) * sizeof(*ev));
    struct num_ctx ctx = {ct};
    uint32_t i = 0, j, k;
    int rc = 0;

    if (ev == NULL)
        return xp_err_set(err, -ENOMEM, "steps: out of memory");
    b->m->origin_us = clock_origin(ct);
    while (i < n && rc == 0) {
        const struct ctrace_event *first = &ct->events[mem[i].event];
        const char *tname = ctrace_event_thread_name(ct, first);
        uint32_t cnt = 0;
        for (j = i; j < n && mem[j].track == mem[i].track; j++) {
            const struct ctrace_event *e = &ct->events[mem[j].event];
            const char *name = ctrace_str(ct, e->name);
            int64_t lo, dur;
            if (xp_event_is_internal(name))
                continue;
            lo = ps_since_origin(e->ts, b->m->origin_us);
            dur = e->dur > 0 ? llround(e->dur * 1e6) : 0;
            k = cnt++;
            ev[k] = (struct st_ev){lo, lo + dur, tab[e->name] ? tab[e->name] : name, mem[j].event,
                                   tab[e->name] != NULL};
        }
        if (tname[0] == '\0' && (first->flags & CT_TID_STR))
            tname = ctrace_str(ct, (uint32_t)first->tid);
        st_sort_events(ev, cnt);
        rc = st_track(b, (first->flags & CT_TID_STR) ? -1 : first->tid, tname, ev, cnt, event_num,
                      &ctx, err);
        i = j;
    }
    free(ev);
    return rc;
}

/* Collect the events of the step threads and feed them. */
static int feed(struct st_builder *b, const struct ctrace *ct, const char **tab, struct xp_err *err)
{
    struct member *mem = NULL;
    struct track_key *keys;
    uint32_t nkeys = 0, i, n = 0, cap = 0;
    int rc;

    keys = step_tracks(ct, tab, &nkeys);
    if (keys == NULL)
        return xp_err_set(err, -ENOMEM, "steps: out of memory");
    for (i = 0; i < ct->nevents && nkeys > 0; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        struct track_key k;
        struct track_key *hit;
        if (!is_span(ev))
            continue;
        k = key_of(ev);
        hit = bsearch(&k, keys, nkeys, sizeof(*keys), key_cmp);
        if (hit == NULL)
            continue;
        if (n == cap) {
            struct member *nm;
            cap = cap ? 2 * cap : 1024;
            nm = realloc(mem, (size_t)cap * sizeof(*mem));
            if (nm == NULL) {
                free(mem);
                free(keys);
                return xp_err_set(err, -ENOMEM, "steps: out of memory");
            }
            mem = nm;
        }
        mem[n++] = (struct member){(uint32_t)(hit - keys), i};
    }
    if (n > 1)
        xp_qsort(mem, n, sizeof(*mem), member_cmp);
    rc = feed_tracks(b, ct, tab, mem, n, err);
    free(mem);
    free(keys);
    return rc;
}

int xp_steps_from_ctrace(const struct ctrace *ct, const char *step, struct xp_steps **sp,
                         struct xp_err *err)
{
    enum xp_steps_source source = XP_STEPS_NOTHING;
    struct st_builder b;
    const char **tab = NULL;
    char reason[256];
    int rc;

    rc = st_begin(&b, err);
    if (rc != 0)
        return rc;
    rc = choose_names(&b, ct, step, &source, err);
    if (rc == 0) {
        tab = step_name_table(&b, ct);
        if (tab == NULL)
            rc = xp_err_set(err, -ENOMEM, "steps: out of memory");
    }
    if (rc == 0)
        rc = feed(&b, ct, tab, err);
    free(tab);
    if (rc != 0) {
        st_abort(&b);
        return rc;
    }
    if (step != NULL)
        snprintf(reason, sizeof(reason), "no complete event named '%s'", step);
    else
        snprintf(reason, sizeof(reason),
                 "no complete event has a step_num or _r arg, and none is a TensorFlow step "
                 "marker (FunctionRun, SessionRun, RunGraph, ExecutorState::Process) or "
                 "PyTorch's ProfilerStep#N");
    return st_finish(&b, source, reason, sp, err);
}
