/*
 * ctrace_meta.c - process and thread metadata of a Chrome trace: names and
 * sort indices from the "M" events (process_name, process_sort_index,
 * thread_name, thread_sort_index), sorted for lookup, and the lookups of
 * ctrace.h.
 */
#include "sort.h"
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
        *sort_index = (int64_t)v->valuedouble;
    cJSON_Delete(args);
    return rc;
}

int ctr_build_metadata(struct ctrace *ct)
{
    uint32_t nproc = 0, nthr = 0, i, pn = 0, tn = 0;
    uint32_t pid_proc = ctrace_str_find(ct, "process_name");
    uint32_t pid_sort = ctrace_str_find(ct, "process_sort_index");
    uint32_t tid_name = ctrace_str_find(ct, "thread_name");
    uint32_t tid_sort = ctrace_str_find(ct, "thread_sort_index");
    int rc;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->ph != 'M' || ev->name == 0)
            continue;
        if (ev->name == pid_proc || ev->name == pid_sort)
            nproc++;
        else if (ev->name == tid_name || ev->name == tid_sort)
            nthr++;
    }
    ct->processes = calloc(nproc ? nproc : 1, sizeof(*ct->processes));
    ct->threads = calloc(nthr ? nthr : 1, sizeof(*ct->threads));
    if (ct->processes == NULL || ct->threads == NULL)
        return -ENOMEM;
    /* Later metadata events override earlier ones (as a dict would). */
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        uint32_t name = 0, k;
        int64_t sort_index = CT_NONE;
        if (ev->ph != 'M' || ev->name == 0)
            continue;
        if (ev->name == pid_proc || ev->name == pid_sort) {
            struct ctrace_process *p = NULL;
            uint16_t pf = ev->flags & CT_PID_STR;
            for (k = 0; k < pn; k++) {
                if (ct->processes[k].pid == ev->pid && ct->processes[k].pid_flags == pf) {
                    p = &ct->processes[k];
                    break;
                }
            }
            if (p == NULL) {
                p = &ct->processes[pn++];
                p->pid = ev->pid;
                p->pid_flags = pf;
                p->sort_index = CT_NONE;
            }
            rc = meta_args(ct, ev, &name, &sort_index);
            if (rc != 0)
                return rc;
            if (ev->name == pid_proc)
                p->name = name;
            else if (sort_index != CT_NONE)
                p->sort_index = sort_index;
        } else if (ev->name == tid_name || ev->name == tid_sort) {
            struct ctrace_thread *t = NULL;
            uint16_t f = ev->flags & (CT_PID_STR | CT_TID_STR);
            for (k = tn; k > 0; k--) {
                struct ctrace_thread *c = &ct->threads[k - 1];
                if (c->pid == ev->pid && c->tid == ev->tid && c->flags == f) {
                    t = c;
                    break;
                }
            }
            if (t == NULL) {
                t = &ct->threads[tn++];
                t->pid = ev->pid;
                t->tid = ev->tid;
                t->flags = f;
                t->sort_index = CT_NONE;
            }
            rc = meta_args(ct, ev, &name, &sort_index);
            if (rc != 0)
                return rc;
            if (ev->name == tid_name)
                t->name = name;
            else if (sort_index != CT_NONE)
                t->sort_index = sort_index;
        }
    }
    ct->nprocesses = pn;
    ct->nthreads = tn;
    xp_qsort(ct->processes, pn, sizeof(*ct->processes), proc_cmp);
    xp_qsort(ct->threads, tn, sizeof(*ct->threads), thread_cmp);
    return 0;
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
