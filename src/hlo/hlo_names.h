/*
 * hlo_names.h - what the all-hosts HLO files take from a host's HLO modules
 * beyond its op_stats: how many modules it has, how many of their texts
 * outgrew the budget, and each module's program id and name (op_profile's
 * program nodes). Small, so it is kept per host in the persistent cache
 * (store.h) and a new process combines it without reading the profile.
 */
#ifndef XPROFS_HLO_NAMES_H
#define XPROFS_HLO_NAMES_H

#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "session/session.h"

struct hlo_names {
    uint32_t nmods;           /* hlo_modules.nmods */
    uint32_t texts_truncated; /* hlo_modules.texts_truncated */
    uint64_t *program_ids;    /* each module's, in discovery order */
    const char **names;       /* each module's name ("" when it has none) */
    struct arena arena;       /* holds the arrays and names */
};

/* The names of host's modules, once per snapshot: from the persistent cache
 * when it has them, else from the modules (then kept there). */
int snapshot_hlo_names(struct snapshot *snap, const char *host, const struct hlo_names **np,
                       struct xp_err *err);

#endif
