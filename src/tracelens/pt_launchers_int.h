/*
 * pt_launchers_int.h - what the PyTorch launcher files share (pt_launchers.c
 * builds, pt_overlaps.c finds cross-stream overlaps, pt_launchers_csv.c and
 * pt_summary.c write the files). Not for other modules: see pt_launchers.h.
 */
#ifndef XPROFS_PT_LAUNCHERS_INT_H
#define XPROFS_PT_LAUNCHERS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "reader/ctrace.h"
#include "out/out.h"
#include "session/session.h"
#include "pt_launchers.h"

/* One launcher. */
struct pt_launcher {
    uint32_t uid;          /* its event */
    uint32_t seq;          /* order of first sight (ties of the start sort) */
    uint32_t first;        /* its direct kernels: kernels[first..first+nkernels) */
    uint32_t nkernels;     /* direct_kernel_count */
    uint32_t first_kernel; /* the earliest direct kernel (category fallback) */
    const char *category;  /* static */
    double direct_us;      /* total_direct_kernel_time */
    double subtree_us;     /* total_subtree_kernel_time */
    int direct_int;        /* Python computed an int (every time a JSON integer) */
    int subtree_int;       /* same for the subtree time */
};

/* An overlapping GPU event of a GPU event, in the Python set's order. */
struct pt_overlap {
    uint32_t event; /* the GPU event */
    uint32_t other; /* the event overlapping it */
    uint32_t seq;   /* insertion order into event's set */
};

/* The launchers of one host, built once per snapshot. */
struct pt_host {
    const struct ctrace *ct; /* owned by the snapshot */
    struct pt_launcher *v;   /* in row order */
    uint32_t n;
    uint32_t *kernels;     /* direct kernels grouped by launcher, file order within */
    struct pt_overlap *ov; /* sorted by event, then set order */
    size_t nov;
};

/* The launchers of every host of hl with a PyTorch trace into hs[i] (NULL
 * for other hosts; room for hl->n) and *nhosts; -ENOENT (with err) when no
 * kernel is launched anywhere. */
int pt_all_hosts(const struct host_list *hl, const struct pt_host **hs, int *nhosts,
                 struct xp_err *err);

/* The overlaps of the linked GPU events gpu[0..ngpu) (file order), each
 * event's in its Python set's order, into *ovp (caller frees), *nov.
 * Returns 0 or -ENOMEM. */
int pt_find_overlaps(const struct ctrace *ct, const uint32_t *gpu, uint32_t ngpu,
                     struct pt_overlap **ovp, size_t *nov);

/* Write b's text as one CSV cell and empty b. */
struct pt_buf;
void pt_put_buf(struct out *o, struct pt_buf *b);

/* A float cell as pandas writes it (NaN empty). */
void pt_put_float(struct out *o, double v);

/* A time column cell: an int when as_int (the column was int64), else a float. */
void pt_put_time(struct out *o, double v, int as_int);

/* Whether the direct / subtree time columns of the rows of hs[0..n) are all
 * Python ints (pandas keeps such a column as int64). */
void pt_int_columns(const struct pt_host *const *hs, int n, int *direct, int *subtree);

/* The process / thread names of a trace's "M" events (pt_launchers_csv.c). */
struct pt_meta;
int pt_meta_collect(const struct ctrace *ct, struct pt_meta **mp); /* 0 or -ENOMEM */
void pt_meta_free(struct pt_meta *m);                              /* NULL is a no-op */

struct pt_buf;

/* Append to cells the nine grouping cells of launcher l as
 * get_df_kernel_launchers_unique_args reads them (name, op category,
 * process_name, process_label, thread_name, Input Dims, Input type, Input
 * Strides, Concrete Inputs), each one kind byte (0 None, 1 text), a 4-byte
 * length and the cell's text (str() of the DataFrame value, not CSV-quoted).
 * Returns 0 or -ENOMEM. */
int pt_group_cells(const struct ctrace *ct, const struct pt_launcher *l, const struct pt_meta *m,
                   struct pt_buf *cells);

/* One row's GPU events, sorted by ts (stable), for pt_put_kernel_details. */
struct pt_klist {
    const struct ctrace *ct;
    const uint32_t *k;
    uint32_t n;
};

/* TraceLens's _summarize_kernel_stats (agg mean, median, std, min, max) over
 * the rows' lists[0..n) (the first non-empty one is the template), then
 * trunc_kernel_details: two CSV fields, each followed by ','. Returns 0 or
 * -ENOMEM (pt_unique_args.c). */
int pt_put_kernel_details(struct out *o, const struct pt_klist *lists, size_t n);

#endif
