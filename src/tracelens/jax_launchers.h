/*
 * jax_launchers.h - TraceLens's kernel launchers of a JAX/XLA profile
 * (its JAX analyser: TreePerf's JAX variant and generate_perf_report_jax.py),
 * served as kernel_launchers.csv, kernel_launchers_summary.csv,
 * kernel_launchers_summary_by_category.csv and xla_summary.csv.
 *
 * On JAX/XLA profiles each GPU kernel is its own launcher
 * (total_direct_kernel_time = its duration), categorised by the JaxOpKeys
 * keywords on the kernel name, then on its hlo_op, else
 * "Uncategorized Events/XLA". GPU_kernel_launch_latency = kernel start minus
 * the start of the host event (pid 701, /host:CPU) with the same
 * correlation_id. Summaries group by name / category with pandas' arithmetic
 * (Kahan group sums, numpy pairwise totals, running cumulative percentages).
 *
 * Sources: .xplane.pb hosts and JAX Chrome traces (hosts with a PyTorch
 * trace are skipped: they get pt_launchers.h's CPU-op launchers).
 */
#ifndef XPROFS_JAX_LAUNCHERS_H
#define XPROFS_JAX_LAUNCHERS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "session/session.h"

/* The category of kernels no keyword matches. */
#define JAX_UNCATEGORIZED "Uncategorized Events/XLA"

/* One kernel as jax_visit hands it over. name points into the profile. */
struct jax_kernel {
    const char *name;      /* kernel name */
    size_t name_len;       /* its length */
    int name_plain;        /* 1: a CSV field as is (no comma, quote, line break) */
    const char *category;  /* static, a CSV field as is */
    double ts;             /* µs */
    double dur;            /* µs */
    int64_t pid;           /* TraceLens gpu pid */
    int64_t tid;           /* stream */
    int64_t corr;          /* correlation id, CT_NONE if none or not asked */
    double launch_latency; /* GPU_kernel_launch_latency, µs; NaN when unknown */
    int host;              /* index among the covered hosts (hl->names) */
};

/* Called once per kernel; a nonzero return stops the visit and is returned. */
typedef int (*jax_kernel_fn)(void *arg, const struct jax_kernel *k);

/* Visit the kernels of every covered JAX host in trace order (host, then
 * (pid, tid), then start, longer first). With want_latency k->corr and
 * k->launch_latency are filled (else the latency is NaN). Without
 * want_category an xplane kernel may get its name's category alone (the
 * hlo_op is not looked at). Returns 0 or a negative errno with err set
 * (-ENOENT when no kernel was found). */
int jax_visit(const struct host_list *hl, int want_latency, int want_category, jax_kernel_fn fn,
              void *arg, struct xp_err *err);

/* What a summary groups by. */
enum jax_group_by {
    JAX_BY_NAME,     /* kernel_launchers_summary.csv */
    JAX_BY_CATEGORY, /* kernel_launchers_summary_by_category.csv */
    JAX_BY_XLA_NAME, /* xla_summary.csv: XLA kernels, by name without its digits */
};

/* One summary row. */
struct jax_group {
    const char *key;   /* name, category or digit-less name */
    double sum;        /* total_direct_kernel_time_sum: Kahan sum of durations, µs */
    double comp;       /* Kahan compensation */
    uint64_t count;    /* kernels */
    double ms;         /* total_direct_kernel_time_ms = sum / 1000 */
    double pct;        /* Percentage (%) of the numpy total of ms */
    double cum;        /* Cumulative Percentage (%) */
    double ms_per_gpu; /* time ms per gpu: ms over the distinct pids */
};

/* The rows of a summary in pandas' order (groupby's key order, then
 * sort_values(ascending=False) by sum with numpy's order of ties). */
struct jax_summary {
    struct jax_group *groups; /* rows */
    size_t ngroups;           /* entries */
    char **stripped;          /* JAX_BY_XLA_NAME: the keys, owned here */
    size_t nstripped;         /* entries */
};

/* Build the summary of the covered hosts' kernels into *s. Returns 0 or a
 * negative errno with err set (-ENOENT when no kernel was found); *s
 * is empty on failure. Keys stay valid while hl->snap does. */
int jax_summarize(const struct host_list *hl, enum jax_group_by by, struct jax_summary *s,
                  struct xp_err *err);
void jax_summary_free(struct jax_summary *s);

#endif
