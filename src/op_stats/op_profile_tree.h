/*
 * op_profile_tree.h - XProf's op_profile tree (op_profile.Node) built from
 * a device op metrics db, as xprof/convert/op_profile_builder.cc and
 * op_stats_to_op_profile.cc build it.
 *
 * Invariants: a built tree is read-only; every node has metrics; a node's
 * children are sorted and pruned (at most children_per_node where XProf's
 * level rule prunes); num_children is what XProf's double sort/prune pass
 * leaves (a pruned node says children_per_node, not its original count).
 * Strings point into the db's rows or the tree's arena: the tree must not
 * outlive the db it was built from.
 *
 * The shape (root "by_program" / "by_category" / "by_provenance"):
 *
 *   by_program:    root > program "name(id)" > category > dedup group > op
 *   by_category:   root > category > dedup group > op
 *   by_provenance: root > program > provenance parts... > category > ...
 *   the IDLE op:   a leaf directly under the root (unless excluded)
 *
 * A dedup group of one op is replaced by that op; a group of several is
 * named "<first op> and its duplicate(s)". Our op_stats carry no TPU fused
 * children (OpMetrics.children), so op leaves have no children.
 */
#ifndef XPROFS_OP_PROFILE_TREE_H
#define XPROFS_OP_PROFILE_TREE_H

#include <stdint.h>

#include "base/arena.h"
#include "op_stats.h"

/* OpProfileGrouping. */
enum op_profile_group {
    OPP_BY_PROGRAM = 0,    /* kByProgram (XProf's default) */
    OPP_BY_CATEGORY = 1,   /* kByCategory */
    OPP_BY_PROVENANCE = 2, /* kByProvenance */
};

/* op_profile.Metrics. */
struct op_profile_metrics {
    double flops;                       /* capped FLOPS utilization x time fraction */
    double uncapped_flops;              /* the same uncapped */
    double bandwidth_utils[3];          /* HBM, SRAM read, SRAM write (0..1) */
    double raw_time;                    /* ps */
    double raw_flops;                   /* model_flops_v2 */
    double bf16_flops;                  /* flops_v2 */
    double normalized_time_ps;          /* DVFS-normalized time */
    double raw_bytes_accessed_array[3]; /* HBM, SRAM read, SRAM write bytes */
    uint32_t occurrences;               /* executions (uint32 as in the proto) */
    double avg_time_ps;                 /* raw_time / occurrences */
};

/* op_profile.Node.XLAInstruction (op and computation_primitive_size are
 * always "" and 0 here, as XProf leaves them). */
struct op_profile_xla {
    const char *expression;      /* HLO expression ("" when unknown) */
    const char *provenance;      /* framework op */
    const char *category;        /* HLO category */
    int has_layout;              /* layout present (an empty LayoutAnalysis) */
    uint64_t fingerprint;        /* always 0 (XProf never sets it) */
    uint64_t program_id;         /* hlo_module_id */
    int has_source_info;         /* source_info present */
    const char *source_file;     /* source_info.file_name */
    int32_t source_line;         /* source_info.line_number */
    const char *stack_frame;     /* source_info.stack_frame */
    int has_kernel_metadata;     /* xprof_kernel_metadata present */
    const char *kernel_metadata; /* xprof_kernel_metadata */
};

/* The OpMetrics fields a node accumulates (the ones Metrics reads). */
struct op_profile_acc {
    uint64_t time_ps;            /* time (the root's is reset to the total) */
    uint64_t self_time_ps;       /* self time */
    uint64_t normalized_time_ps; /* DVFS-normalized time */
    double flops_v2;             /* device flops */
    double model_flops_v2;       /* model flops */
    uint32_t occurrences;        /* executions (uint32 as OpMetrics has it) */
    uint64_t hbm_rd, hbm_wr;     /* HBM bytes read / written */
    uint64_t chip_rd, chip_wr;   /* on-chip (non-HBM) bytes read / written */
};

struct op_profile_node {
    const char *name;                  /* Node.name */
    struct op_profile_metrics metrics; /* Node.metrics */
    struct op_profile_node **children; /* Node.children, sorted */
    uint32_t nchildren;                /* entries in children */
    int has_xla;                       /* Node.xla is set */
    struct op_profile_xla xla;         /* Node.xla */
    int32_t num_children;              /* Node.num_children */
    /* building state */
    uint32_t cap;                   /* slots in children */
    uint32_t seq;                   /* creation order: the tie-breaker of the sorts */
    int kind;                       /* what the node groups (op_profile_tree.c) */
    uint64_t key_id;                /* program id of a program node */
    const char *key;                /* lookup name of a grouping node */
    struct op_profile_node *parent; /* the node it was created under */
    struct op_profile_acc acc;      /* accumulated OpMetrics */
};

struct op_profile_options {
    enum op_profile_group group_by; /* grouping */
    int exclude_idle;               /* leave the IDLE op out */
    int children_per_node;          /* prune limit (XProf: 100) */
};

/* The program name of a program id ("name" of its HLO module), or NULL when
 * unknown (the node is then named "main", as XProf names it). */
typedef const char *(*op_profile_name_fn)(void *arg, uint64_t program_id);

struct op_profile_tree {
    struct arena arena;            /* nodes, accumulators, names */
    struct op_profile_node *root;  /* NULL: the db had no rows (an empty Node) */
    struct op_profile_node **all;  /* every node made, pruned ones included */
    uint32_t nall;                 /* entries in all */
    uint32_t all_cap;              /* slots in all */
    struct op_profile_node **slot; /* lookup table of grouping nodes */
    uint32_t slot_cap;             /* slots (power of two) */
    uint32_t nslot;                /* used slots */
};

/* Build the tree of db (rows in storage order) into t:
 * BuildOpProfileNodeTree. peak_tflops and peak_bws[0..npeak) (GB/s: HBM,
 * SRAM read, SRAM write, ...) are the perf_env; names gives program names.
 * Returns 0 or -ENOMEM (t is then empty). Free with op_profile_tree_free. */
int op_profile_tree_build(struct op_profile_tree *t, const struct op_metrics_db *db,
                          const struct op_profile_options *opt, double peak_tflops,
                          const double *peak_bws, uint32_t npeak, op_profile_name_fn names,
                          void *names_arg);

/* Release everything of t; t is empty afterwards. Accepts an empty tree. */
void op_profile_tree_free(struct op_profile_tree *t);

/* agg_dvfs_time_scale_multiplier: normalized_total_op_time_ps /
 * total_op_time_ps, the normalized total summed over db's rows the way
 * XEventsOpMetricsDbBuilder sums it. */
double op_profile_dvfs_multiplier(const struct op_metrics_db *db);

#endif
