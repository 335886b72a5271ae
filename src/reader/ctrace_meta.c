/*
 * ctrace_meta.c - process and thread metadata of a Chrome trace: names and
 * sort indices from the "M" events (process_name, process_sort_index,
 * thread_name, thread_sort_index), sorted for lookup, and the lookups of
 * ctrace.h.
 */
#include "base/sort.h"
#include "ctrace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- metadata tables ----------------------------------------------------- */

static int proc_cmp(const void *a, const void *b)
{
    const struct ctrace_process *x = a, *y = b;
    if (x->pid_flags != y->pid_flags)
        return x->pid_flags < y->pid_flags ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int thread_cmp(const void *a, const void *b)
{
    const struct ctrace_thread *x = a, *y = b;
    if (x->flags != y->flags)
        return x->flags < y->flags ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* A sort_index as a whole number: its integer part, those past int64 the
 * nearest end (converting them would be undefined). */
static int64_t sort_index_of(double d)
{
    if (d >= 9223372036854775807.0)
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

/* args.name (string id) and args.sort_index of a metadata event. */
static int meta_args(struct ctrace *ct, const struct ctrace_event *ev, uint32_t *name,
                     int64_t *sort_index)
{
    cJSON *args = ctrace_event_args(ct, ev), *v;
    int rc = 0;

    if (args == NULL)
        return 0;
    v = cJSON_GetObjectItemCaseSensitive(args, "name");
    if (cJSON_IsString(v))
        rc = ctr_strtab_add(ct->strings, v->valuestring, strlen(v->valuestring), name);
    v = cJSON_GetObjectItemCaseSensitive(args, "sort_index");
    if (cJSON_IsNumber(v))
        *sort_index = sort_index_of(v->valuedouble);
    cJSON_Delete(args);
    return rc;
}

/* One metadata event: its key in p or t, and what it sets. */
struct meta_rec {
    struct ctrace_process p; /* process_name / process_sort_index */
    struct ctrace_thread t;  /* thread_name / thread_sort_index */
    int is_name;             /* sets the name (even to none), else the sort index */
};

static int rec_proc_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return proc_cmp(&((const struct meta_rec *)a)->p, &((const struct meta_rec *)b)->p);
}

static int rec_thread_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return thread_cmp(&((const struct meta_rec *)a)->t, &((const struct meta_rec *)b)->t);
}

/* The records of one kind sorted by key, stably: a key's records stay in
 * file order, so folding them lets a later event override an earlier one
 * (as a dict would). Returns the number of distinct keys, written to the
 * front of recs. */
static uint32_t fold(struct meta_rec *recs, uint32_t n, int threads)
{
    uint32_t i, k = 0;

    for (i = 0; i < n; i++) {
        struct meta_rec *r = &recs[i];
        int same = k > 0 && (threads ? thread_cmp(&recs[k - 1].t, &r->t) == 0
                                     : proc_cmp(&recs[k - 1].p, &r->p) == 0);
        struct meta_rec *out = same ? &recs[k - 1] : &recs[k++];
        uint32_t name = threads ? r->t.name : r->p.name;
        int64_t sort_index = threads ? r->t.sort_index : r->p.sort_index;
        int is_name = r->is_name;
        if (!same) {
            *out = *r;
            out->p.name = out->t.name = 0;
            out->p.sort_index = out->t.sort_index = CT_NONE;
        }
        if (is_name) {
            out->p.name = out->t.name = name;
        } else if (sort_index != CT_NONE) {
            out->p.sort_index = out->t.sort_index = sort_index;
        }
    }
    return k;
}

int ctr_build_metadata(struct ctrace *ct)
{
    uint32_t nproc = 0, nthr = 0, i, pn = 0, tn = 0;
    uint32_t pid_proc = ctrace_str_find(ct, "process_name");
    uint32_t pid_sort = ctrace_str_find(ct, "process_sort_index");
    uint32_t tid_name = ctrace_str_find(ct, "thread_name");
    uint32_t tid_sort = ctrace_str_find(ct, "thread_sort_index");
    struct meta_rec *procs, *threads;
    int rc = 0;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->ph != 'M' || ev->name == 0)
            continue;
        if (ev->name == pid_proc || ev->name == pid_sort)
            nproc++;
        else if (ev->name == tid_name || ev->name == tid_sort)
            nthr++;
    }
    procs = calloc(nproc ? nproc : 1, sizeof(*procs));
    threads = calloc(nthr ? nthr : 1, sizeof(*threads));
    if (procs == NULL || threads == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (i = 0; i < ct->nevents && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        struct meta_rec *r;
        if (ev->ph != 'M' || ev->name == 0)
            continue;
        if (ev->name == pid_proc || ev->name == pid_sort) {
            r = &procs[pn++];
            r->p.pid = ev->pid;
            r->p.pid_flags = ev->flags & CT_PID_STR;
            r->p.sort_index = CT_NONE;
            r->is_name = ev->name == pid_proc;
            rc = meta_args(ct, ev, &r->p.name, &r->p.sort_index);
        } else if (ev->name == tid_name || ev->name == tid_sort) {
            r = &threads[tn++];
            r->t.pid = ev->pid;
            r->t.tid = ev->tid;
            r->t.flags = ev->flags & (CT_PID_STR | CT_TID_STR);
            r->t.sort_index = CT_NONE;
            r->is_name = ev->name == tid_name;
            rc = meta_args(ct, ev, &r->t.name, &r->t.sort_index);
        }
    }
    if (rc == 0 && (xp_sort_runs(procs, pn, sizeof(*procs), rec_proc_cmp, NULL) != 0 ||
                    xp_sort_runs(threads, tn, sizeof(*threads), rec_thread_cmp, NULL) != 0))
        rc = -ENOMEM;
    if (rc != 0)
        goto out;
    pn = fold(procs, pn, 0);
    tn = fold(threads, tn, 1);
    ct->processes = calloc(pn ? pn : 1, sizeof(*ct->processes));
    ct->threads = calloc(tn ? tn : 1, sizeof(*ct->threads));
    if (ct->processes == NULL || ct->threads == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (i = 0; i < pn; i++)
        ct->processes[i] = procs[i].p;
    for (i = 0; i < tn; i++)
        ct->threads[i] = threads[i].t;
    ct->nprocesses = pn;
    ct->nthreads = tn;
out:
    free(procs);
    free(threads);
    return rc;
}

const struct ctrace_process *ctrace_process_find(const struct ctrace *ct, int64_t pid,
                                                 uint16_t pid_flags)
{
    struct ctrace_process key;

    memset(&key, 0, sizeof(key));
    key.pid = pid;
    key.pid_flags = pid_flags & CT_PID_STR;
    return bsearch(&key, ct->processes, ct->nprocesses, sizeof(key), proc_cmp);
}

const struct ctrace_thread *ctrace_thread_find(const struct ctrace *ct, int64_t pid, int64_t tid,
                                               uint16_t flags)
{
    struct ctrace_thread key;

    memset(&key, 0, sizeof(key));
    key.pid = pid;
    key.tid = tid;
    key.flags = flags & (CT_PID_STR | CT_TID_STR);
    return bsearch(&key, ct->threads, ct->nthreads, sizeof(key), thread_cmp);
}

const char *ctrace_event_process_name(const struct ctrace *ct, const struct ctrace_event *ev)
{
    const struct ctrace_process *p = ctrace_process_find(ct, ev->pid, ev->flags);
    return p != NULL ? ctrace_str(ct, p->name) : "";
}

const char *ctrace_event_thread_name(const struct ctrace *ct, const struct ctrace_event *ev)
{
    const struct ctrace_thread *t = ctrace_thread_find(ct, ev->pid, ev->tid, ev->flags);
    return t != NULL ? ctrace_str(ct, t->name) : "";
}
