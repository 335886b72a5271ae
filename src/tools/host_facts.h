/*
 * host_facts.h - what a host's profile holds, as the tools that answer
 * "nothing here" (megascale_stats, the hardware tools) and tools.json ask
 * it: which device planes, HLO protos in /host:metadata, MegaScale events,
 * counter stats. A few bits per host, persisted in the cache (cache_dir=)
 * so that those answers need no profile once the host was seen.
 */
#ifndef XPROFS_HOST_FACTS_H
#define XPROFS_HOST_FACTS_H

#include "tool.h"

struct host_facts {
    int xplane;         /* the host has an xplane file */
    int gpu_plane;      /* a /device:GPU: plane */
    int tpu_plane;      /* a /device:TPU: plane */
    int hlo_metadata;   /* /host:metadata declares the "Hlo Proto" stat */
    int megascale;      /* /host:CPU has MegaScale: event metadata */
    int counter_stat;   /* a TPU or GPU plane declares the counter_value stat */
    int tpu_counter_ev; /* a TPU event carries a counter_value stat */
};

/* The facts of host (all 0 for a host without an xplane), built once per
 * snapshot from the indexed profile or mapped back from the cache. */
int host_facts_get(struct snapshot *snap, const char *host, const struct host_facts **fp,
                   struct xp_err *err);

#endif
