/*
 * pt_nodes.c - children, GPU reach and roots of TraceLens's call tree (see
 * pt_nodes.h), and the busy-time and name helpers its printers share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_nodes.h"
#include "base/sort.h"

/* A node with its sort key: start time, then file position. */
struct by_start {
    double ts;
    uint32_t index;
};

static int by_start_cmp(const void *a, const void *b)
{
    const struct by_start *x = a, *y = b;

    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The host events of the tree's walk by (ts, index) into *vp, *np. */
static int sorted_host_nodes(const struct pt_nodes *nd, struct by_start **vp, uint32_t *np)
{
    const struct ctrace *ct = nd->ct;
    uint32_t i, n = 0;
    struct by_start *v = malloc((ct->nevents ? ct->nevents : 1) * sizeof(*v));

    if (v == NULL)
        return -ENOMEM;
    for (i = 0; i < ct->nevents; i++) {
        uint8_t k = nd->t.kind[i];
        /* Every host event the stack walk saw: a root is one without a
         * parent, whether it joined the tree or was left out by the bleed
         * rule (its launches still reach their GPU events). */
        if (!(k == PT_CPU_OP || k == PT_RUNTIME || (k == PT_PYTHON && nd->python)) ||
            !(ct->events[i].flags & CT_HAS_TS))
            continue;
        v[n].ts = ct->events[i].ts;
        v[n].index = i;
        n++;
    }
    xp_qsort(v, n, sizeof(*v), by_start_cmp);
    *vp = v;
    *np = n;
    return 0;
}

static void mark_gpu_reach(struct pt_nodes *nd)
{
    uint32_t i, p;

    for (i = 0; i < nd->t.nevents; i++) {
        if (nd->t.kind[i] != PT_GPU)
            continue;
        nd->has_gpu[i] = 1;
        for (p = nd->t.parent[i]; p != PT_NONE && !nd->has_gpu[p]; p = nd->t.parent[p])
            nd->has_gpu[p] = 1;
    }
}

int pt_nodes_build(const struct ctrace *ct, int add_python_func, struct pt_nodes *nd)
{
    size_t n = ct->nevents, slots = n ? n : 1;
    struct by_start *host = NULL;
    uint32_t nhost = 0, i, *pos = NULL;
    int rc;

    memset(nd, 0, sizeof(*nd));
    nd->ct = ct;
    nd->python = add_python_func;
    rc = pt_tree_build(ct, add_python_func, &nd->t);
    if (rc != 0)
        return rc;
    nd->child_first = calloc(n + 1, sizeof(*nd->child_first));
    nd->children = malloc(slots * sizeof(*nd->children));
    nd->has_gpu = calloc(slots, 1);
    nd->roots = malloc(slots * sizeof(*nd->roots));
    pos = malloc((n + 1) * sizeof(*pos));
    if (nd->child_first == NULL || nd->children == NULL || nd->has_gpu == NULL ||
        nd->roots == NULL || pos == NULL || sorted_host_nodes(nd, &host, &nhost) != 0)
        goto nomem;
    for (i = 0; i < n; i++) {
        if (nd->t.parent[i] != PT_NONE)
            nd->child_first[nd->t.parent[i] + 1]++;
    }
    for (i = 0; i < n; i++)
        nd->child_first[i + 1] += nd->child_first[i];
    memcpy(pos, nd->child_first, (n + 1) * sizeof(*pos));
    /* Host children first, in the order the stack walk met them... */
    for (i = 0; i < nhost; i++) {
        uint32_t e = host[i].index, p = nd->t.parent[e];
        if (p != PT_NONE)
            nd->children[pos[p]++] = e;
        else
            nd->roots[nd->nroots++] = e;
    }
    /* ...then the GPU events each launch reaches, in file order. */
    for (i = 0; i < n; i++) {
        uint32_t p = nd->t.parent[i];
        if (nd->t.kind[i] == PT_GPU && p != PT_NONE)
            nd->children[pos[p]++] = i;
    }
    mark_gpu_reach(nd);
    free(host);
    free(pos);
    return 0;
nomem:
    free(host);
    free(pos);
    pt_nodes_free(nd);
    return -ENOMEM;
}

void pt_nodes_free(struct pt_nodes *nd)
{
    pt_tree_free(&nd->t);
    free(nd->child_first);
    free(nd->children);
    free(nd->has_gpu);
    free(nd->roots);
    nd->child_first = NULL;
    nd->children = NULL;
    nd->has_gpu = NULL;
    nd->roots = NULL;
}

/* ---- per snapshot ------------------------------------------------------------ */

struct nodes_arg {
    const char *host;
    int python;
};

static void nodes_free(void *v)
{
    if (v != NULL) {
        pt_nodes_free(v);
        free(v);
    }
}

static int nodes_make(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const struct nodes_arg *a = arg;
    const struct ctrace *ct;
    struct pt_nodes *nd;
    int rc = snapshot_ctrace(snap, a->host, &ct, err);

    if (rc != 0)
        return rc;
    nd = calloc(1, sizeof(*nd));
    if (nd == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    rc = pt_nodes_build(ct, a->python, nd);
    if (rc != 0) {
        free(nd);
        return xp_err_set(err, rc, "out of memory");
    }
    *value = nd;
    return 0;
}

static const struct snapshot_part pt_nodes_part = {"pt_nodes", nodes_make, nodes_free};

int snapshot_pt_nodes(struct snapshot *snap, const char *host, int add_python_func,
                      const struct pt_nodes **np, struct xp_err *err)
{
    struct nodes_arg a = {host, add_python_func};
    void *v;
    int rc;

    rc = snapshot_part(snap, &pt_nodes_part, host, add_python_func ? "python" : NULL, &a, &v, err);
    *np = rc == 0 ? v : NULL;
    return rc;
}

/* ---- helpers ----------------------------------------------------------------- */

struct span {
    double start, end;
    uint32_t order;
    uint8_t start_int, end_int;
};

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;

    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

double pt_busy_time(const struct ctrace *ct, const uint32_t *ev, uint32_t n, int *is_int, int *ok)
{
    struct span *v;
    uint32_t i, m = 0;
    double sum = 0;

    *is_int = 1;
    *ok = 1;
    if (n == 0)
        return 0;
    v = malloc(n * sizeof(*v));
    if (v == NULL) {
        *ok = 0;
        return 0;
    }
    for (i = 0; i < n; i++) {
        const struct ctrace_event *e = &ct->events[ev[i]];
        v[i].start = e->ts;
        v[i].end = e->ts + e->dur;
        v[i].order = i;
        v[i].start_int = (e->flags & CT_TS_INT) != 0;
        v[i].end_int = (e->flags & CT_TS_INT) && (e->flags & CT_DUR_INT);
    }
    xp_qsort(v, n, sizeof(*v), span_cmp);
    for (i = 0; i < n; i++) {
        if (m > 0 && v[i].start <= v[m - 1].end) {
            if (v[i].end > v[m - 1].end) { /* max() keeps the first of equals */
                v[m - 1].end = v[i].end;
                v[m - 1].end_int = v[i].end_int;
            }
            continue;
        }
        v[m++] = v[i];
    }
    for (i = 0; i < m; i++) {
        sum += v[i].end - v[i].start;
        if (!v[i].start_int || !v[i].end_int)
            *is_int = 0;
    }
    free(v);
    return sum;
}

void pt_node_name(const struct ctrace *ct, uint32_t i, size_t max, char *buf, size_t n)
{
    const struct ctrace_event *e = &ct->events[i];
    const char *s = e->name ? ctrace_str(ct, e->name) : "Unknown";
    size_t len = 0, points = 0;

    /* Python counts code points: walk UTF-8 lead bytes. */
    while (s[len] != '\0' && points < max) {
        len++;
        while (((unsigned char)s[len] & 0xc0) == 0x80)
            len++;
        points++;
    }
    snprintf(buf, n, "%.*s%s", (int)len, s, s[len] != '\0' ? ".." : "");
}

/* ---- printing ---------------------------------------------------------------- */

/* The last child of i that is printed, or PT_NONE. */
static uint32_t last_kept_child(const struct pt_tree_view *v, uint32_t i)
{
    uint32_t k;

    for (k = v->first[i + 1]; k > v->first[i]; k--) {
        if (v->keep == NULL || v->keep[v->kids[k - 1]])
            return v->kids[k - 1];
    }
    return PT_NONE;
}

/* One open node of the walk. */
struct frame {
    uint32_t node;
    uint32_t next; /* next position in kids[] */
    uint32_t last; /* its last printed child */
    size_t plen;   /* prefix length for its children */
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    void *q;
    size_t c = *cap ? *cap : 64;

    if (need <= *cap)
        return 0;
    while (c < need)
        c *= 2;
    q = realloc(*p, c * size);
    if (q == NULL)
        return -ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

/* Deepest level printed; deeper subtrees are replaced by one line. */
#define PT_PRINT_MAX_DEPTH 1000

int pt_print_tree(struct out *o, const struct pt_tree_view *v, uint32_t root,
                  void (*line)(struct out *o, uint32_t node, void *arg), void *arg)
{
    struct frame *stack = NULL;
    char *prefix = NULL;
    size_t depth = 0, cap = 0, pcap = 0, plen = 0;
    uint32_t node = root;
    int is_last = 1, rc = 0;

    while (node != PT_NONE) {
        const char *more = is_last ? "    " : "\u2502   ";
        size_t mlen = strlen(more);
        if (grow((void **)&stack, &cap, depth + 1, sizeof(*stack)) != 0 ||
            grow((void **)&prefix, &pcap, plen + mlen + 1, 1) != 0) {
            rc = -ENOMEM;
            break;
        }
        out_write(o, prefix, plen);
        out_puts(o, is_last ? "\u2514\u2500\u2500 " : "\u251c\u2500\u2500 ");
        line(o, node, arg);
        out_putc(o, '\n');
        memcpy(prefix + plen, more, mlen);
        if (depth + 1 >= PT_PRINT_MAX_DEPTH && last_kept_child(v, node) != PT_NONE) {
            /* A hostile nesting would repeat its indentation on every line
             * (quadratic output); TraceLens stops at Python's recursion limit. */
            out_write(o, prefix, plen + mlen);
            out_puts(o, "\u2514\u2500\u2500 ... (deeper levels not shown)\n");
            goto next;
        }
        stack[depth].node = node;
        stack[depth].next = v->first[node];
        stack[depth].last = last_kept_child(v, node);
        stack[depth].plen = plen + mlen;
        depth++;
    next:
        /* The next node: the next kept child of the deepest open node. */
        node = PT_NONE;
        while (depth > 0 && node == PT_NONE) {
            struct frame *f = &stack[depth - 1];
            uint32_t end = v->first[f->node + 1];
            while (f->next < end && v->keep != NULL && !v->keep[v->kids[f->next]])
                f->next++;
            if (f->next < end) {
                node = v->kids[f->next++];
                is_last = node == f->last;
                plen = f->plen;
            } else {
                depth--;
            }
        }
    }
    free(stack);
    free(prefix);
    return rc;
}

int pt_run_listed(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_PT_TRACE) > 0;
}
