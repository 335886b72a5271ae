/*
 * memory_profile.h - XProf's memory profile of one host: the allocator
 * timeline of its MemoryAllocation / MemoryDeallocation events.
 *
 * A port of xprof/convert/xplane_to_memory_profile.cc (spec: stats-tools.md
 * section 13). Every such event of the /host:CPU plane is a snapshot of its
 * allocator (the last of its index_on_host, device_ordinal or
 * allocator_name stats): the allocator's counters after it and what it
 * allocated or freed. Per allocator, in time order: step ids filled in, each
 * deallocation given its allocation's op, region, type and shape, a
 * timeline of at most max_snapshots points (a max box filter), and the
 * allocations live at the peak, biggest first, with the "unused
 * preallocated device memory" and "stack" rows.
 *
 * Where XProf's order is not defined (std::sort of equal times, and of equal
 * allocations in a hash map's order) ours is: events in file order for equal
 * times, and equal live allocations in time order.
 */
#ifndef XPROFS_MEMORY_PROFILE_H
#define XPROFS_MEMORY_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/intern.h"
#include "reader/xspace.h"
#include "xplane/group.h"

#define MP_MAX_SNAPSHOTS 1000 /* XProf's default sampled timeline */

enum mp_activity {
    MP_UNKNOWN_ACTIVITY = 0,
    MP_ALLOCATION = 1,
    MP_DEALLOCATION = 2,
};

/* MemoryAggregationStats: the allocator's counters after an event. */
struct mp_stats {
    int64_t stack_reserved_bytes;
    int64_t heap_allocated_bytes;
    int64_t free_memory_bytes;
    double fragmentation;
    int64_t peak_bytes_in_use;
};

/* MemoryActivityMetadata: what one event did. Strings are ids of the
 * profile's table (0: ""), so a snapshot takes about 100 bytes. */
struct mp_meta {
    enum mp_activity activity;
    uint32_t tf_op_name;
    int64_t requested_bytes;
    int64_t allocation_bytes;
    uint64_t address;
    int64_t step_id;
    uint32_t region_type;
    uint32_t data_type;
    uint32_t tensor_shape;
};

/* MemoryProfileSnapshot. */
struct mp_snapshot {
    int64_t time_offset_ps; /* the event's offset on its line (XProf's OffsetPs) */
    struct mp_stats stats;
    struct mp_meta meta;
};

/* MemoryProfileSummary. */
struct mp_summary {
    int64_t peak_bytes_usage_lifetime;
    struct mp_stats peak_stats;
    int64_t peak_stats_time_ps;
    int64_t memory_capacity;
};

/* ActiveAllocation: a row of the table of allocations live at the peak. */
struct mp_active {
    int64_t snapshot_index; /* into kept, or -1, -2 for special[0], special[1] */
    int64_t special_index;  /* -snapshot_index - 1 for specials, else -1 */
    int64_t num_occurrences;
};

/* PerAllocatorMemoryProfile. */
struct mp_allocator {
    char *memory_id;           /* key ("0", "gpu_host_bfc"), NUL-terminated */
    struct mp_snapshot *snaps; /* every snapshot, in time order */
    uint32_t nsnaps;           /* entries in snaps */
    uint32_t cap;              /* allocated entries */
    struct mp_summary summary; /* peak and capacity */
    uint32_t *kept;            /* memory_profile_snapshots: snaps of active rows */
    uint32_t nkept;            /* entries in kept */
    struct mp_active *active;  /* active allocations at the peak */
    uint32_t nactive;          /* entries in active */
    struct mp_meta special[2]; /* special allocations */
    uint32_t nspecial;         /* entries in special */
    uint32_t *sampled;         /* sampled_timeline_snapshots: indices into snaps */
    uint32_t nsampled;         /* entries in sampled */
};

/* HloModule: an event of a TPU plane's "XLA Modules" line. */
struct mp_hlo_module {
    uint32_t name; /* string id */
    int64_t start_time_ps;
    int64_t end_time_ps;
    int64_t id;
    uint32_t plane_name; /* string id: the plane's name without "/device:" */
};

/* MemoryProfile. */
struct mp_profile {
    int has_host_plane;                /* 0: no /host:CPU plane (XProf answers "") */
    struct mp_allocator *allocators;   /* sorted by memory_id */
    uint32_t nallocators;              /* entries in allocators */
    struct mp_hlo_module *hlo_modules; /* in plane and line order */
    uint32_t nhlo_modules;             /* entries in hlo_modules */
    struct intern strings;             /* every string above, by id */
};

/* The memory profile of a decoded profile, with its grouping (group ids are
 * the step ids; NULL: none). max_snapshots bounds each sampled timeline.
 * Returns 0 and *mpp (free with mp_profile_free), or a negative errno. */
int mp_profile_build(const struct xspace *xs, const struct xp_groups *g, uint32_t max_snapshots,
                     struct mp_profile **mpp, struct xp_err *err);

void mp_profile_free(struct mp_profile *mp);

/* The text of a string id, NUL-terminated; *len gets its length. */
static inline const char *mp_text(const struct mp_profile *mp, uint32_t id, size_t *len)
{
    *len = mp->strings.len[id];
    return mp->strings.text[id];
}

/* XProf's DataTypeString of a TensorFlow DataType number ("float",
 * "bfloat16_ref", "unknown dtype enum (99)") into buf; returns its length. */
size_t mp_data_type_string(int64_t dtype, char *buf, size_t n);

#endif
