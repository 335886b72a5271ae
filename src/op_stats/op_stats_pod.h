/*
 * op_stats_pod.h - XProf's pod stats (xprof/convert/op_stats_to_pod_stats.cc):
 * per step and per core of the step db, the step time broken down into
 * XProf's nine generic event types and the largest of them, the bottleneck;
 * the host a core belongs to from core_id_to_details.
 */
#ifndef XPROFS_OP_STATS_POD_H
#define XPROFS_OP_STATS_POD_H

#include "op_stats.h"

/* GenericEventType: kDeviceCompute = 1 .. kAllOthers = 9. */
#define POD_NTYPES 9

/* GetGenericEventTypeStr of type 1..9. */
const char *pod_event_type_name(int type);

/* PodStatsRecord of one core's step. */
struct pod_record {
    const char *host_name;           /* core_id_to_details' hostname, NULL if none */
    uint32_t step_num;               /* the core's step number */
    double total_duration_us;        /* step time */
    double breakdown_us[POD_NTYPES]; /* step_breakdown_us by type - 1 */
    const char *bottleneck;          /* the type of the largest time (ties: the
                                        greater name) */
};

/* CreatePodStatsRecord for core c of os's step db. */
void pod_record(const struct op_stats *os, const struct step_core *c, struct pod_record *r);

#endif
