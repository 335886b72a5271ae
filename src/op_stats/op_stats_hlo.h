/*
 * op_stats_hlo.h - the HLO program map op_stats looks instructions up in.
 *
 * XProf keys every GPU XLA op by (program id, HLO op name) and takes its
 * category, framework op ("provenance") and cost from the HLO module of that
 * program (xprof/utils/hlo_module_map.cc). The modules are the host's
 * (hlo_module.h, read once per snapshot); the first module of a program id
 * with readable windows wins.
 *
 * Cost (flops, bytes accessed, HBM read/write) comes from XLA's GPU cost
 * model run over each module (hlo_cost.h); where it gives 0 (unknown custom
 * calls, modules the analysis fails on) op_stats falls back to the events'
 * own flops / bytes_accessed stats, as XProf does.
 */
#ifndef XPROFS_OP_STATS_HLO_H
#define XPROFS_OP_STATS_HLO_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "hlo/hlo_module.h"

struct hlo_instr {
    const char *name;              /* instruction name */
    const char *opcode;            /* "fusion", "convolution" ... */
    const char *category;          /* ToCategory(): "loop fusion", "data formatting" ... */
    const char *provenance;        /* TfOpName(): "op_name:op_type", or "" */
    const char *op_name;           /* metadata.op_name */
    const char *op_type;           /* metadata.op_type */
    const char *deduplicated_name; /* metadata.deduplicated_name */
    const char *expression;        /* HLO text (hlo_node.text), "" when not printed */
    const char *source_file;       /* GetSourceInfo: metadata.source_file, else the */
    int32_t source_line;           /* first stack frame's file and line */
    const char *stack_frame;       /* the stack frames, "" when none */
    int64_t flops;                 /* device flops (cost model), 0 = unknown */
    int64_t model_flops;           /* model flops, 0 = unknown */
    int64_t bytes_accessed;        /* bytes accessed, 0 = unknown */
    uint64_t hbm_read;             /* HBM bytes read, 0 = none */
    uint64_t hbm_write;            /* HBM bytes written, 0 = none */
};

struct hlo_module {
    uint64_t program_id;      /* key */
    const char *name;         /* module name */
    struct hlo_instr *instrs; /* sorted by name (first of a name kept) */
    uint32_t ninstrs;         /* entries */
};

struct hlo_map {
    struct arena arena;      /* provenance strings; the others are the modules' */
    struct hlo_module *mods; /* sorted by program id */
    uint32_t nmods;          /* entries */
    int is_training;         /* some instruction's metadata marks gradients */
};

/* The map of a host's HLO modules (corrupt protos were already dropped, as
 * XProf logs and drops them). Returns 0 and *mp, or -ENOMEM. */
int hlo_map_build(const struct hlo_modules *mods, struct hlo_map **mp, struct xp_err *err);
void hlo_map_free(struct hlo_map *m);

/* The instruction (program_id, name[0..n)), or NULL. */
const struct hlo_instr *hlo_map_find(const struct hlo_map *m, uint64_t program_id, const char *name,
                                     size_t n);

#endif
