/*
 * steps.c - the step/region model: the builder both trace sources feed, and
 * the once-per-snapshot intermediate; see steps.h and steps_build.h.
 */
#include "base/sort.h"
#include "steps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps_build.h"
#include "store/store_codec.h"

const char *const st_tf_markers[ST_N_TF_MARKERS] = {"FunctionRun", "SessionRun", "RunGraph",
                                                    "ExecutorState::Process"};

const char *xp_steps_source_name(enum xp_steps_source s)
{
    switch (s) {
    case XP_STEPS_ASKED:
        return "asked";
    case XP_STEPS_STEP_NUM:
        return "step_num";
    case XP_STEPS_ROOT:
        return "root";
    case XP_STEPS_TF_MARKER:
        return "tf_step_marker";
    case XP_STEPS_PROFILER_STEP:
        return "profiler_step";
    case XP_STEPS_NOTHING:
        break;
    }
    return "none";
}

void xp_steps_free(struct xp_steps *m)
{
    uint32_t i;

    if (m == NULL)
        return;
    for (i = 0; i < m->nstep_names; i++)
        free((char *)m->step_names[i]);
    free(m->step_names);
    free(m->rows);
    free(m->steps);
    free(m->threads);
    if (m->names != NULL) {
        arena_free(m->names);
        free(m->names);
    }
    free(m);
}

int st_begin(struct st_builder *b, struct xp_err *err)
{
    memset(b, 0, sizeof(*b));
    b->m = calloc(1, sizeof(*b->m));
    if (b->m == NULL)
        return xp_err_set(err, -ENOMEM, "steps: out of memory");
    return 0;
}

void st_abort(struct st_builder *b)
{
    xp_steps_free(b->m);
    b->m = NULL;
    free(b->numbered);
    free(b->spans);
    free(b->nodes);
    xp_nest_work_release(&b->work);
    memset(b, 0, sizeof(*b));
}

/* Grow *arr (elements of size sz, *cap slots) to hold need; 0 or -ENOMEM. */
static int grow(void **arr, uint32_t *cap, uint64_t need, size_t sz)
{
    uint64_t c = *cap ? *cap : 16;
    void *p;

    if (need <= *cap)
        return 0;
    if (need >= UINT32_MAX)
        return -EFBIG;
    while (c < need)
        c *= 2;
    if (c >= UINT32_MAX)
        c = UINT32_MAX - 1;
    p = realloc(*arr, (size_t)c * sz);
    if (p == NULL)
        return -ENOMEM;
    *arr = p;
    *cap = (uint32_t)c;
    return 0;
}

static int grow_err(int rc, struct xp_err *err)
{
    if (rc == -EFBIG)
        return xp_err_set(err, rc, "steps: more than 4 billion rows");
    return xp_err_set(err, rc, "steps: out of memory");
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int st_add_name(struct st_builder *b, const char *name, size_t len, struct xp_err *err)
{
    struct xp_steps *m = b->m;
    uint32_t i;
    char *copy;
    int rc;

    for (i = 0; i < m->nstep_names; i++) {
        if (strncmp(m->step_names[i], name, len) == 0 && m->step_names[i][len] == '\0')
            return 0;
    }
    rc = grow((void **)&m->step_names, &b->cap_names, (uint64_t)m->nstep_names + 1,
              sizeof(*m->step_names));
    if (rc != 0)
        return grow_err(rc, err);
    copy = strndup(name, len);
    if (copy == NULL)
        return xp_err_set(err, -ENOMEM, "steps: out of memory");
    m->step_names[m->nstep_names++] = copy;
    return 0;
}

void st_sort_names(struct st_builder *b)
{
    if (b->m->nstep_names > 1)
        xp_qsort(b->m->step_names, b->m->nstep_names, sizeof(*b->m->step_names), name_cmp);
}

const char *st_has_name(const struct st_builder *b, const char *name, size_t len)
{
    uint32_t lo = 0, hi = b->m->nstep_names;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const char *s = b->m->step_names[mid];
        int c = strncmp(s, name, len);
        if (c == 0)
            c = s[len] == '\0' ? 0 : 1;
        if (c == 0)
            return s;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int ev_cmp(const void *pa, const void *pb)
{
    const struct st_ev *a = pa, *b = pb;

    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi > b->hi ? -1 : 1;
    if (a->step != b->step)
        return a->step > b->step ? -1 : 1;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return 0;
}

void st_sort_events(struct st_ev *ev, uint32_t n)
{
    uint32_t i;

    for (i = 1; i < n; i++) {
        if (ev_cmp(&ev[i - 1], &ev[i]) > 0)
            break;
    }
    if (i < n)
        xp_qsort(ev, n, sizeof(*ev), ev_cmp);
}

/* 1 if e belongs to the step s: it starts inside it, or is a point at its end. */
static int in_step(const struct st_ev *s, const struct st_ev *e)
{
    return e->lo < s->hi || (e->lo == s->hi && e->hi == e->lo && !e->step);
}

/* Append the rows of step ev[0] whose regions are ev[1..n). */
static int add_step(struct st_builder *b, uint32_t thread, const struct st_ev *ev, uint32_t n,
                    st_num_fn num, void *ctx, struct xp_err *err)
{
    struct xp_steps *m = b->m;
    uint32_t k, nreg = n - 1, first;
    int64_t root_children = 0, naive = ev[0].hi - ev[0].lo, step_num = 0;
    struct xp_steps_step *st;
    uint32_t old_tmp = b->cap_tmp, old_steps = b->cap_steps;
    int rc;

    rc = grow((void **)&b->spans, &b->cap_tmp, nreg, sizeof(*b->spans));
    if (rc == 0 && b->cap_tmp != old_tmp) {
        void *p = realloc(b->nodes, (size_t)b->cap_tmp * sizeof(*b->nodes));
        rc = p == NULL ? -ENOMEM : 0;
        if (p != NULL)
            b->nodes = p;
    }
    if (rc == 0)
        rc = grow((void **)&m->rows, &b->cap_rows, (uint64_t)m->nrows + n, sizeof(*m->rows));
    if (rc == 0)
        rc = grow((void **)&m->steps, &b->cap_steps, (uint64_t)m->nsteps + 1, sizeof(*m->steps));
    if (rc == 0 && b->cap_steps != old_steps) {
        void *p = realloc(b->numbered, b->cap_steps);
        rc = p == NULL ? -ENOMEM : 0;
        if (p != NULL)
            b->numbered = p;
    }
    if (rc != 0)
        return grow_err(rc, err);
    for (k = 0; k < nreg; k++)
        b->spans[k] = (struct xp_span){ev[k + 1].lo, ev[k + 1].hi};
    rc = xp_nest(b->spans, nreg, (struct xp_span){ev[0].lo, ev[0].hi}, &b->work, b->nodes,
                 &root_children);
    if (rc != 0)
        return xp_err_set(err, rc, "steps: out of memory");
    first = m->nrows;
    m->rows[first] =
        (struct xp_steps_row){ev[0].lo, ev[0].hi - ev[0].lo, ev[0].hi - ev[0].lo - root_children,
                              0,        ev[0].name,          XP_STEPS_NONE,
                              0};
    for (k = 0; k < nreg; k++) {
        const struct xp_nest_node *nd = &b->nodes[k];
        int64_t dur = ev[k + 1].hi - ev[k + 1].lo;
        uint32_t parent = nd->parent == XP_NEST_ROOT ? first : first + 1 + nd->parent;
        m->rows[first + 1 + k] = (struct xp_steps_row){
            ev[k + 1].lo, dur,      dur - nd->children_ps, nd->overlap_ps, ev[k + 1].name,
            parent,       nd->depth};
        naive += dur;
    }
    m->nrows += n;
    b->numbered[m->nsteps] = num != NULL && num(ctx, ev[0].src, &step_num) == 1;
    st = &m->steps[m->nsteps++];
    *st = (struct xp_steps_step){first, n, thread, step_num, naive};
    return 0;
}

int st_track(struct st_builder *b, int64_t thread_id, const char *thread_name,
             const struct st_ev *ev, uint32_t n, st_num_fn num, void *ctx, struct xp_err *err)
{
    struct xp_steps *m = b->m;
    uint32_t i = 0, j, thread = XP_STEPS_NONE;
    int rc;

    while (i < n) {
        if (!ev[i].step) {
            i++;
            continue;
        }
        for (j = i + 1; j < n && in_step(&ev[i], &ev[j]); j++)
            ;
        if (thread == XP_STEPS_NONE) {
            rc = grow((void **)&m->threads, &b->cap_threads, (uint64_t)m->nthreads + 1,
                      sizeof(*m->threads));
            if (rc != 0)
                return grow_err(rc, err);
            thread = m->nthreads++;
            m->threads[thread] = (struct xp_steps_thread){thread_id, thread_name};
        }
        rc = add_step(b, thread, &ev[i], j - i, num, ctx, err);
        if (rc != 0)
            return rc;
        i = j;
    }
    return 0;
}

/* Order of steps: start, then thread, then row. */
static int step_cmp(const void *pa, const void *pb, void *arg)
{
    const struct xp_steps_step *a = pa, *b = pb;
    const struct xp_steps_row *rows = arg;
    int64_t sa = rows[a->row].start_ps, sb = rows[b->row].start_ps;

    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

/* Steps without a number get their ordinal among the steps of their name.
 * Quadratic in the number of step names only (a handful). */
static void number_steps(struct xp_steps *m, const uint8_t *numbered_by_row, uint32_t *count)
{
    uint32_t i, k;

    for (i = 0; i < m->nsteps; i++) {
        struct xp_steps_step *st = &m->steps[i];
        const char *name = m->rows[st->row].name;
        if (numbered_by_row[i])
            continue;
        for (k = 0; k < m->nstep_names; k++) {
            if (strcmp(m->step_names[k], name) == 0)
                break;
        }
        st->step_num = count[k]++;
    }
}

int st_finish(struct st_builder *b, enum xp_steps_source source, const char *none_reason,
              struct xp_steps **sp, struct xp_err *err)
{
    struct xp_steps *m = b->m;
    uint8_t *numbered = NULL;
    uint32_t *count = NULL, i;

    if (m->nsteps > 0) {
        /* Carry the "numbered" flag through the sort via a copy keyed by row. */
        struct xp_steps_step *orig = malloc((size_t)m->nsteps * sizeof(*orig));
        numbered = malloc(m->nsteps);
        count = calloc((size_t)m->nstep_names + 1, sizeof(*count));
        if (orig == NULL || numbered == NULL || count == NULL) {
            free(orig);
            free(numbered);
            free(count);
            st_abort(b);
            return xp_err_set(err, -ENOMEM, "steps: out of memory");
        }
        memcpy(orig, m->steps, (size_t)m->nsteps * sizeof(*orig));
        qsort_r(m->steps, m->nsteps, sizeof(*m->steps), step_cmp, m->rows);
        /* Steps were appended in row order: find each one's old index by row. */
        for (i = 0; i < m->nsteps; i++) {
            uint32_t lo = 0, hi = m->nsteps;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (orig[mid].row < m->steps[i].row)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            numbered[i] = b->numbered[lo];
        }
        number_steps(m, numbered, count);
        free(orig);
    }
    m->source = m->nsteps > 0 ? source : XP_STEPS_NOTHING;
    if (m->nsteps == 0)
        snprintf(m->reason, sizeof(m->reason), "%s", none_reason);
    free(numbered);
    free(count);
    b->m = NULL;
    st_abort(b);
    *sp = m;
    return 0;
}

/* ---- the snapshot intermediate ------------------------------------------ */

struct steps_arg {
    const char *host; /* host name */
    const char *step; /* asked step name, or NULL */
};

static void free_steps(void *v)
{
    xp_steps_free(v);
}

/* The persistent cache's key of the model (malloc'd, NULL when out of
 * memory): the host, then the asked step name, if any, with its length. */
static char *persist_key(const struct snapshot *snap, const struct steps_arg *arg)
{
    size_t n = strlen(arg->host) + (arg->step ? strlen(arg->step) : 0) + 64;
    char *what = malloc(n), *key;

    if (what == NULL)
        return NULL;
    if (arg->step != NULL)
        snprintf(what, n, "intermediate steps %s step %zu %s", arg->host, strlen(arg->step),
                 arg->step);
    else
        snprintf(what, n, "intermediate steps %s", arg->host);
    key = snapshot_key_text(snap, what);
    free(what);
    return key;
}

/* The model from the persistent cache, or NULL. */
static struct xp_steps *from_store(struct store *st, const char *key)
{
    struct blob *b = store_get(st, key);
    struct xp_steps *m = NULL;

    if (b != NULL && st_load(b->mem, b->size, &m) != 0)
        m = NULL;
    blob_unref(b);
    return m;
}

static void to_store(struct store *st, const char *key, const struct xp_steps *m)
{
    struct out o;

    out_init(&o);
    st_save(m, &o);
    sc_persist(st, key, &o);
}

static int build_steps(struct snapshot *snap, const void *argp, void **value, struct xp_err *err)
{
    const struct steps_arg *arg = argp;
    struct xp_steps *m = NULL;
    struct store *st = store_shared();
    char *key = st != NULL ? persist_key(snap, arg) : NULL;
    int rc, loaded = 0;

    if (key != NULL && (m = from_store(st, key)) != NULL) {
        loaded = 1;
        rc = 0;
    } else if (snapshot_host_file(snap, arg->host, SRC_XPLANE) != NULL) {
        struct xspace *xs;
        rc = snapshot_xspace_decoded(snap, arg->host, &xs, err);
        if (rc == 0)
            rc = xp_steps_from_xspace(xs, arg->step, &m, err);
    } else if (snapshot_host_file(snap, arg->host, SRC_TRACE_JSON) != NULL ||
               snapshot_host_file(snap, arg->host, SRC_PT_TRACE) != NULL) {
        const struct ctrace *ct;
        rc = snapshot_ctrace(snap, arg->host, &ct, err);
        if (rc == 0)
            rc = xp_steps_from_ctrace(ct, arg->step, &m, err);
    } else {
        struct st_builder b;
        rc = st_begin(&b, err);
        if (rc == 0)
            rc = st_finish(&b, XP_STEPS_NOTHING, "no XSpace or Chrome trace file", &m, err);
    }
    if (rc == 0 && !loaded && key != NULL && !snapshot_is_fresh(snap, 2))
        to_store(st, key, m);
    free(key);
    if (rc != 0)
        return rc;
    if (m->nsteps == 0)
        snapshot_log(snap, "steps: host %s%s%s%s: no steps: %s", arg->host,
                     arg->step ? " (step=" : "", arg->step ? arg->step : "", arg->step ? ")" : "",
                     m->reason);
    *value = m;
    return 0;
}

static const struct snapshot_part steps_part = {"steps", build_steps, free_steps};

int snapshot_steps(struct snapshot *snap, const char *host, const char *step,
                   const struct xp_steps **sp, struct xp_err *err)
{
    struct steps_arg arg = {host, step};
    void *v;
    int rc;

    /* The step name is the user's text: any byte but NUL, a variant of its
     * own; no step is no variant. */
    rc = snapshot_part(snap, &steps_part, host, step, &arg, &v, err);
    *sp = rc == 0 ? v : NULL;
    return rc;
}
