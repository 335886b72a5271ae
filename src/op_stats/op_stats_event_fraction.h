/*
 * op_stats_event_fraction.h - XProf's event time fraction analyzer
 * (xprof/convert/xspace_to_event_time_fraction_analyzer.cc): per TPU core
 * plane and per step, the share of the step that the events whose name
 * holds a given text take (their device_duration_ps over the plane's step
 * time), first and last steps dropped; per host each step's mean over its
 * planes. The smart suggestions read it for barrier-cores and debug_print.
 */
#ifndef XPROFS_OP_STATS_EVENT_FRACTION_H
#define XPROFS_OP_STATS_EVENT_FRACTION_H

#include <stdint.h>

#include "base/err.h"
#include "session/session.h"

/* EventTimeFractionPerHost. */
struct ef_host {
    char *hostname;   /* XSpace.hostnames[0], else the run's name of the host */
    float *fractions; /* event_time_fractions, one per kept step */
    uint32_t n;       /* entries in fractions */
};

/* EventTimeFractionAnalyzerResult of one event name, hosts combined. */
struct ef_result {
    float *chip_fractions; /* every chip's event_time_fractions, pooled */
    uint32_t nchip;        /* entries in chip_fractions */
    struct ef_host *hosts; /* by hostname (ascending), hosts of one name merged */
    uint32_t nhosts;       /* entries in hosts */
};

/* The analysis of the hosts of hl for event (a substring of the event
 * metadata names) into r. Returns 0 or a negative errno with err; free r
 * with ef_free either way. */
int ef_analyze(const struct host_list *hl, const char *event, struct ef_result *r,
               struct xp_err *err);
void ef_free(struct ef_result *r);

#endif
