/*
 * trace_ctrace.c - a Chrome-trace JSON host (perfetto_trace.json.gz,
 * <host>.trace.json.gz, PyTorch *.pt.trace.json[.gz]) into a trace index,
 * so its trace_viewer.json is served and windowed like an xplane's.
 *
 * XProf never reads these files, so the mapping is ours (README): processes
 * are numbered 1..n in the order of their process_sort_index (else pid) and
 * named "<host> <process name>"; threads keep their tid (low 32 bits; string
 * tids are numbered); "X" events become complete events, "B"/"E" pairs are
 * matched per thread, instant events get duration 0, "C" samples become
 * counter tracks and "b"/"e" async events async tracks. Times are rebased
 * to the first event (picoseconds would overflow for epoch-based traces).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "reader/ctrace.h"
#include "base/idmap.h"
#include "trace_index.h"
#include "trace_json.h"

/* Renumbered process of a trace: original pid (and whether it was a string). */
struct proc {
    int64_t pid;        /* as in the file */
    uint16_t str;       /* CT_PID_STR or 0 */
    int64_t sort_index; /* process_sort_index, else pid */
};

static int proc_cmp(const void *a, const void *b)
{
    const struct proc *x = a, *y = b;

    if (x->sort_index != y->sort_index)
        return x->sort_index < y->sort_index ? -1 : 1;
    if (x->str != y->str)
        return x->str < y->str ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Process numbers (1-based, in the sorted table) by pid: one map for
 * numeric pids, one for string ids. */
struct proc_index {
    struct idmap num, str;
};

static uint32_t proc_number(const struct proc_index *x, int64_t pid, uint16_t str)
{
    uint32_t v = idmap_get(str ? &x->str : &x->num, pid);

    return v == IDMAP_NONE ? 0 : v;
}

static int proc_set(struct proc_index *x, int64_t pid, uint16_t str, uint32_t number)
{
    return idmap_set(str ? &x->str : &x->num, pid, number);
}

static uint64_t to_ps(double us, double base)
{
    double v = (us - base) * 1e6;

    return v <= 0 || !isfinite(v) ? 0 : (uint64_t)llround(v);
}

/* An open "B" event waiting for its "E". */
struct open_slice {
    uint32_t ev;   /* ctrace event index */
    uint32_t prev; /* 1 + its track's previous open slice in the list, 0: none */
    uint64_t ts;   /* start ps */
};

/* The "B" events not yet closed by an "E": a stack per track, linked
 * through prev, so that matching an "E" costs the same however many slices
 * other tracks hold open. */
struct open_slices {
    struct open_slice *v; /* every "B" so far, in file order */
    uint32_t n, cap;      /* entries, room */
    uint32_t *top;        /* [track] -> 1 + its newest open slice, 0: none */
    uint32_t ntop;        /* entries in top */
};

static void open_slices_free(struct open_slices *os)
{
    free(os->v);
    free(os->top);
}

/* Open a slice of event ev at ts on track. 0 or -ENOMEM. */
static int open_push(struct open_slices *os, uint32_t track, uint32_t ev, uint64_t ts)
{
    if (os->n == os->cap) {
        uint32_t cap = os->cap ? os->cap * 2 : 64;
        struct open_slice *v = cap > os->cap ? realloc(os->v, cap * sizeof(*v)) : NULL;
        if (v == NULL)
            return -ENOMEM;
        os->v = v;
        os->cap = cap;
    }
    if (track >= os->ntop) {
        uint32_t ntop = track + 1 > os->ntop * 2 ? track + 1 : os->ntop * 2;
        uint32_t *top = ntop > track ? realloc(os->top, ntop * sizeof(*top)) : NULL;
        if (top == NULL)
            return -ENOMEM;
        memset(top + os->ntop, 0, (ntop - os->ntop) * sizeof(*top));
        os->top = top;
        os->ntop = ntop;
    }
    os->v[os->n].ev = ev;
    os->v[os->n].ts = ts;
    os->v[os->n].prev = os->top[track];
    os->top[track] = ++os->n;
    return 0;
}

/* Close the newest open slice of track: it, or NULL when none is open. */
static const struct open_slice *open_pop(struct open_slices *os, uint32_t track)
{
    const struct open_slice *o;

    if (track >= os->ntop || os->top[track] == 0)
        return NULL;
    o = &os->v[os->top[track] - 1];
    os->top[track] = o->prev;
    /* The newest slice of all is no other track's: its room is free again
     * (slices nested on one thread keep v as short as their depth). The
     * caller reads o before the next push. */
    if (o == &os->v[os->n - 1])
        os->n--;
    return o;
}

static uint64_t ctrace_args(const struct tv_host *h, const struct tv_event *e, struct out *o,
                            int *first)
{
    const struct ctrace *ct = h->source;
    cJSON *args = ctrace_event_args(ct, &ct->events[e->src]), *a;

    if (args == NULL)
        return 0;
    for (a = args->child; a != NULL; a = a->next) {
        const char *name = a->string != NULL ? a->string : "";
        if (!*first)
            out_putc(o, ',');
        *first = 0;
        if (cJSON_IsNumber(a)) {
            double v = a->valuedouble;
            if (v == floor(v) && fabs(v) < 9.2e18)
                tj_arg_i64(o, name, (int64_t)v);
            else
                tj_arg_double(o, name, v);
        } else if (cJSON_IsString(a)) {
            tj_arg_str(o, name, a->valuestring, strlen(a->valuestring));
        } else {
            char *text = cJSON_PrintUnformatted(a);
            tj_arg_str(o, name, text != NULL ? text : "", text != NULL ? strlen(text) : 0);
            free(text);
        }
    }
    cJSON_Delete(args);
    return 0;
}

/* A counter's values are its numeric args; the first one is its counter
 * value (a double, as JSON numbers are). With o NULL only *first_val is
 * filled. */
static int ctrace_counter(const struct tv_host *h, const struct tv_event *e, struct out *o,
                          const char **first_arg_name, struct tv_counter_value *first_val)
{
    const struct ctrace *ct = h->source;
    cJSON *args = ctrace_event_args(ct, &ct->events[e->src]), *a;
    int n = 0;
    static __thread char first[128];

    if (first_val != NULL)
        memset(first_val, 0, sizeof(*first_val));
    if (o != NULL)
        *first_arg_name = "";
    if (args == NULL)
        return 0;
    for (a = args->child; a != NULL; a = a->next) {
        if (!cJSON_IsNumber(a))
            continue;
        if (n == 0 && first_val != NULL) {
            first_val->kind = TV_COUNTER_DOUBLE;
            first_val->d = a->valuedouble;
        }
        if (o == NULL) {
            n++;
            break;
        }
        if (n == 0) {
            snprintf(first, sizeof(first), "%s", a->string != NULL ? a->string : "");
            *first_arg_name = first;
        } else {
            out_putc(o, ',');
        }
        tj_g17(o, a->valuedouble);
        n++;
    }
    cJSON_Delete(args);
    return n > 0;
}

/* Collect and number the processes that have events (into ix). */
static int collect_procs(const struct ctrace *ct, struct proc **procsp, uint32_t *np,
                         struct proc_index *ix)
{
    struct proc *procs = NULL;
    uint32_t n = 0, cap = 0, i;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        uint16_t str = ev->flags & CT_PID_STR;
        const struct ctrace_process *cp;
        if (ev->ph == 'M' || ev->ph == 0 || proc_number(ix, ev->pid, str) != 0)
            continue;
        if (n == cap) {
            struct proc *np2;
            cap = cap ? cap * 2 : 16;
            np2 = realloc(procs, cap * sizeof(*np2));
            if (np2 == NULL) {
                free(procs);
                return -ENOMEM;
            }
            procs = np2;
        }
        if (proc_set(ix, ev->pid, str, n + 1) != 0) {
            free(procs);
            return -ENOMEM;
        }
        cp = ctrace_process_find(ct, ev->pid, str);
        procs[n].pid = ev->pid;
        procs[n].str = str;
        procs[n].sort_index = cp != NULL && cp->sort_index != CT_NONE ? cp->sort_index : ev->pid;
        n++;
    }
    if (n > 0)
        xp_qsort(procs, n, sizeof(*procs), proc_cmp);
    for (i = 0; i < n; i++) /* numbers in sorted order (overwrites, no growth) */
        proc_set(ix, procs[i].pid, procs[i].str, i + 1);
    *procsp = procs;
    *np = n;
    return 0;
}

/* Declare process k (1-based) and return its pid. */
static int declare_proc(struct tv_host *h, const struct ctrace *ct, const struct proc *p,
                        uint32_t k)
{
    const struct ctrace_process *cp = ctrace_process_find(ct, p->pid, p->str);
    char buf[512];

    if (cp != NULL && cp->name != 0)
        snprintf(buf, sizeof(buf), "%s %s", h->hostname, ctrace_str(ct, cp->name));
    else if (p->str)
        snprintf(buf, sizeof(buf), "%s %s", h->hostname, ctrace_str(ct, (uint32_t)p->pid));
    else
        snprintf(buf, sizeof(buf), "%s pid %lld", h->hostname, (long long)p->pid);
    return tv_add_device(h, k, buf) < 0 ? -ENOMEM : 0;
}

/* The thread track of an event, declaring the thread on first use. */
static int64_t thread_track(struct tv_host *h, const struct ctrace *ct,
                            const struct ctrace_event *ev, uint32_t pid)
{
    uint32_t tid = (uint32_t)ev->tid;
    const struct ctrace_thread *th;
    char buf[64];
    const char *name;
    uint32_t name_id;

    th = ctrace_thread_find(ct, ev->pid, ev->tid, ev->flags & (CT_PID_STR | CT_TID_STR));
    if (th != NULL && th->name != 0) {
        name = ctrace_str(ct, th->name);
    } else if (ev->flags & CT_TID_STR) {
        name = ctrace_str(ct, (uint32_t)ev->tid);
    } else {
        snprintf(buf, sizeof(buf), "%lld", (long long)ev->tid);
        name = buf;
    }
    name_id = tv_cstr(h, name);
    if (name_id == 0 || tv_add_resource(h, pid, tid, name_id) != 0)
        return -1;
    return tv_track_thread(h, pid, tid);
}

int tv_build_ctrace(struct snapshot *snap, const char *host, const struct tv_window *w,
                    struct tv_host **hp, struct xp_err *err)
{
    const struct ctrace *ct;
    struct tv_host *h;
    struct proc *procs = NULL;
    struct proc_index ix;
    struct open_slices open;
    uint32_t nprocs = 0, i;
    double base = INFINITY;
    int rc;

    memset(&ix, 0, sizeof(ix));
    memset(&open, 0, sizeof(open));
    rc = snapshot_ctrace(snap, host, &ct, err);
    if (rc != 0)
        return rc;
    h = tv_host_new(host);
    if (h == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", host);
    h->source = (void *)ct;
    h->args = ctrace_args;
    h->counter = ctrace_counter;
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->ph != 'M' && (ev->flags & CT_HAS_TS) && ev->ts < base)
            base = ev->ts;
    }
    base = isfinite(base) ? floor(base) : 0;
    rc = collect_procs(ct, &procs, &nprocs, &ix);
    for (i = 0; i < nprocs && rc == 0; i++)
        rc = declare_proc(h, ct, &procs[i], i + 1);
    if (rc == 0)
        rc = tv_reserve(h, ct->nevents);
    for (i = 0; i < ct->nevents && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        struct tv_new_event te;
        uint32_t pid;
        int64_t track;
        if (ev->ph == 'M' || ev->ph == 0)
            continue;
        pid = proc_number(&ix, ev->pid, ev->flags & CT_PID_STR);
        memset(&te, 0, sizeof(te));
        te.ts = to_ps(ev->ts, base);
        te.src = i;
        te.name = tv_cstr(h, ctrace_str(ct, ev->name));
        if (te.name == 0) {
            rc = -ENOMEM;
            break;
        }
        switch (ev->ph) {
        case 'X':
        case 'i':
        case 'I':
        case 'n':
            te.dur = ev->ph == 'X' ? to_ps(ev->ts + ev->dur, ev->ts) : 0;
            track = thread_track(h, ct, ev, pid);
            break;
        case 'B':
            track = thread_track(h, ct, ev, pid);
            if (track >= 0)
                rc = open_push(&open, (uint32_t)track, i, te.ts);
            continue; /* added when its "E" arrives */
        case 'E': {
            const struct open_slice *o;
            track = thread_track(h, ct, ev, pid);
            if (track < 0 || (o = open_pop(&open, (uint32_t)track)) == NULL)
                continue;
            te.src = o->ev;
            te.name = tv_cstr(h, ctrace_str(ct, ct->events[o->ev].name));
            te.dur = te.ts > o->ts ? te.ts - o->ts : 0;
            te.ts = o->ts;
            break;
        }
        case 'C':
            te.flags = TV_EV_COUNTER;
            track = tv_track_channel(h, pid, te.name);
            break;
        case 'b':
        case 'e':
            te.flags = TV_EV_ASYNC;
            te.has_flow = 1;
            track = tv_set_flow(h, i, ev->id != CT_NONE ? (uint64_t)ev->id : 0,
                                ev->ph == 'b' ? TV_FLOW_START : TV_FLOW_END, 0) == 0
                        ? tv_track_channel(h, pid, te.name)
                        : -1;
            break;
        default:
            continue;
        }
        if (track < 0) {
            rc = -ENOMEM;
            break;
        }
        te.track = (uint32_t)track;
        rc = tv_add_event(h, &te);
    }
    free(procs);
    open_slices_free(&open);
    idmap_free(&ix.num);
    idmap_free(&ix.str);
    if (rc == 0) {
        /* tv_add_event marked the tracks with flows */
        tv_flows_marked(h);
        rc = tv_finish_for(h, 2, w, err);
    } else
        xp_err_set(err, rc, "%s: out of memory while building the trace", host);
    if (rc != 0) {
        tv_host_free(h);
        return rc;
    }
    *hp = h;
    return 0;
}
