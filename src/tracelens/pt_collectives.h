/*
 * pt_collectives.h - collectives.csv of a multi-rank PyTorch run: TraceLens's
 * NCCL analysis of collective calls matched across ranks (pt_collectives.c).
 */
#ifndef XPROFS_PT_COLLECTIVES_H
#define XPROFS_PT_COLLECTIVES_H

#include "base/err.h"
#include "out/out.h"
#include "session/session.h"

/* The table of the hosts of hl (rank r = hl->names[r]). Returns 0, or a
 * negative errno with err set: -ENOENT when there is no collective of the
 * kinds kept, -EIO when a call's metadata differs between ranks. */
int pt_collectives_csv(const struct host_list *hl, struct out *o, struct xp_err *err);

/* perf_report/coll_analysis.csv: TraceLens's build_df_summary_long of the
 * same events, one row per (rank, process group, collective, sizes, splits,
 * stream) with the durations' sum, mean, std, min and max. Returns 0 or a
 * negative errno with err set (-ENOENT without collectives). */
int pt_coll_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err);

#endif
