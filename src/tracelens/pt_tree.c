/*
 * pt_tree.c - TraceLens's call tree of a PyTorch trace (see pt_tree.h): one
 * sort of the host events by (thread, start, file position), one stack walk
 * per thread, and the GPU links from gt_pt_links.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "pt_tree.h"
#include "base/sort.h"

/* A host event as the stack walk needs it. */
struct host_event {
    int64_t pid;
    int64_t tid;
    double ts;
    double end; /* ts + dur */
    uint32_t index;
    uint16_t flags; /* CT_PID_STR | CT_TID_STR */
};

static int host_event_cmp(const void *a, const void *b)
{
    const struct host_event *x = a, *y = b;

    if (x->flags != y->flags)
        return x->flags < y->flags ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int same_thread(const struct host_event *x, const struct host_event *y)
{
    return x->flags == y->flags && x->pid == y->pid && x->tid == y->tid;
}

static void classify(const struct ctrace *ct, uint8_t *kind)
{
    uint32_t cpu_op = ctrace_str_find(ct, "cpu_op");
    uint32_t runtime = ctrace_str_find(ct, "cuda_runtime");
    uint32_t driver = ctrace_str_find(ct, "cuda_driver");
    uint32_t python = ctrace_str_find(ct, "python_function");
    uint32_t kernel = ctrace_str_find(ct, "kernel");
    uint32_t memcpy_cat = ctrace_str_find(ct, "gpu_memcpy");
    uint32_t memset_cat = ctrace_str_find(ct, "gpu_memset");
    uint32_t i;

    for (i = 0; i < ct->nevents; i++) {
        uint32_t cat = ct->events[i].cat;
        kind[i] = PT_OTHER;
        if (cat == 0)
            continue;
        if (cat == cpu_op)
            kind[i] = PT_CPU_OP;
        else if (cat == runtime || cat == driver)
            kind[i] = PT_RUNTIME;
        else if (cat == python)
            kind[i] = PT_PYTHON;
        else if (cat == kernel || cat == memcpy_cat || cat == memset_cat)
            kind[i] = PT_GPU;
    }
}

/* The stack walk over one thread's events v[0..n), in start order. */
static void nest_thread(const struct host_event *v, size_t n, uint32_t *stack, uint32_t *parent,
                        uint8_t *in_tree)
{
    size_t depth = 0, i;

    for (i = 0; i < n; i++) {
        const struct host_event *e = &v[i];
        while (depth > 0 && e->ts >= v[stack[depth - 1]].end)
            depth--;
        if (depth > 0 && e->end > v[stack[depth - 1]].end) {
            /* Event bleed: a sub-µs overlap moves it up one level; a larger
             * one leaves it out of the tree. */
            if (v[stack[depth - 1]].end - e->ts < 1.0 && depth >= 2)
                depth--;
            else
                continue;
        }
        if (depth > 0)
            parent[e->index] = v[stack[depth - 1]].index;
        in_tree[e->index] = 1;
        stack[depth++] = (uint32_t)i;
    }
}

int pt_tree_build(const struct ctrace *ct, int add_python_func, struct pt_tree *t)
{
    size_t n = ct->nevents ? ct->nevents : 1, nhost = 0, i, start;
    struct host_event *host = NULL;
    uint32_t *stack = NULL, *links = NULL;
    int rc;

    memset(t, 0, sizeof(*t));
    t->nevents = ct->nevents;
    t->parent = malloc(n * sizeof(*t->parent));
    t->kind = malloc(n);
    t->in_tree = calloc(n, 1);
    if (t->parent == NULL || t->kind == NULL || t->in_tree == NULL)
        goto nomem;
    memset(t->parent, 0xff, n * sizeof(*t->parent));
    classify(ct, t->kind);
    for (i = 0; i < ct->nevents; i++) {
        uint8_t k = t->kind[i];
        if ((k == PT_CPU_OP || k == PT_RUNTIME || (k == PT_PYTHON && add_python_func)) &&
            (ct->events[i].flags & CT_HAS_TS))
            nhost++;
    }
    host = malloc((nhost ? nhost : 1) * sizeof(*host));
    stack = malloc((nhost ? nhost : 1) * sizeof(*stack));
    if (host == NULL || stack == NULL)
        goto nomem;
    nhost = 0;
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        uint8_t k = t->kind[i];
        if (!(k == PT_CPU_OP || k == PT_RUNTIME || (k == PT_PYTHON && add_python_func)) ||
            !(ev->flags & CT_HAS_TS))
            continue;
        host[nhost].pid = ev->pid;
        host[nhost].tid = ev->tid;
        host[nhost].ts = ev->ts;
        host[nhost].end = ev->ts + ev->dur;
        host[nhost].index = (uint32_t)i;
        host[nhost].flags = ev->flags & (CT_PID_STR | CT_TID_STR);
        nhost++;
    }
    xp_qsort(host, nhost, sizeof(*host), host_event_cmp);
    for (start = 0; start < nhost; start = i) {
        for (i = start + 1; i < nhost && same_thread(&host[i], &host[start]); i++)
            ;
        nest_thread(host + start, i - start, stack, t->parent, t->in_tree);
    }
    free(host);
    free(stack);
    host = NULL;
    stack = NULL;
    rc = gt_pt_links(ct, &links);
    if (rc != 0)
        goto nomem;
    for (i = 0; i < ct->nevents; i++) {
        if (t->kind[i] == PT_GPU)
            t->parent[i] = links[i];
    }
    free(links);
    return 0;
nomem:
    free(host);
    free(stack);
    pt_tree_free(t);
    return -ENOMEM;
}

void pt_tree_free(struct pt_tree *t)
{
    free(t->parent);
    free(t->kind);
    free(t->in_tree);
    t->parent = NULL;
    t->kind = NULL;
    t->in_tree = NULL;
}
