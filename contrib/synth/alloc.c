/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Allocator events for --alloc-events (alloc.h). Event 2k allocates block
 * k (address 0x10000000 + 4096 k, a size from a hash of k between 256 B
 * and 1 MiB); event 2k+1 frees block k-63 once there are 64 live, so the
 * live set stays small and the allocator's stats (bytes_allocated, the
 * running peak, bytes_reserved) follow the replay exactly. Events are 1 us
 * apart, each 0 long, with allocator_name "GPU_0_bfc", tf_op, region_type,
 * data_type and shape stats as the TF allocator writes them.
 */
#include "alloc.h"

#include <string.h>

#include "synth.h"

enum {
    A_ALLOCATOR = ALLOC_STAT_BASE,
    A_RESERVED,
    A_ALLOCATED,
    A_AVAILABLE,
    A_FRAGMENTATION,
    A_PEAK,
    A_REQUESTED,
    A_ALLOCATION,
    A_ADDR,
    A_TF_OP,
    A_REGION,
    A_DTYPE,
    A_SHAPE,
    A_END
};
static const char *const names[A_END - ALLOC_STAT_BASE] = {"allocator_name",
                                                           "bytes_reserved",
                                                           "bytes_allocated",
                                                           "bytes_available",
                                                           "fragmentation",
                                                           "peak_bytes_in_use",
                                                           "requested_bytes",
                                                           "allocation_bytes",
                                                           "addr",
                                                           "tf_op",
                                                           "region_type",
                                                           "data_type",
                                                           "shape"};

#define E_ALLOC 1000000
#define E_FREE 1000001
#define LIVE 64

void alloc_tail(struct wbuf *tail)
{
    int i;

    pb_named_entry(tail, 4, E_ALLOC, "MemoryAllocation");
    pb_named_entry(tail, 4, E_FREE, "MemoryDeallocation");
    for (i = 0; i < A_END - ALLOC_STAT_BASE; i++)
        pb_named_entry(tail, 5, ALLOC_STAT_BASE + i, names[i]);
}

static uint64_t block_size(int64_t k)
{
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull;

    x ^= x >> 29;
    return 256 + x % (1u << 20);
}

int alloc_line(void *ctx, int arg, struct emit *em)
{
    const struct synth *sy = ctx;
    int64_t n = sy->s_begin == 0 ? sy->opt->alloc_events : 0, i, k = 0, freed = 0;
    uint64_t in_use = 0, peak = 0;

    (void)arg;
    for (i = 0; i < n; i++) {
        int free_one = (k - freed) >= LIVE && (i % 2 == 1);
        int64_t b = free_one ? freed : k;
        uint64_t size = block_size(b);
        if (free_one) {
            in_use -= size;
            freed++;
        } else {
            in_use += size;
            if (in_use > peak)
                peak = in_use;
            k++;
        }
        xev_begin(em, free_one ? E_FREE : E_ALLOC, (i + 1) * 1000000LL, 0);
        xev_str(em, A_ALLOCATOR, "GPU_0_bfc");
        xev_int(em, A_RESERVED, 0);
        xev_int(em, A_ALLOCATED, (int64_t)in_use);
        xev_int(em, A_AVAILABLE, (int64_t)((1ull << 34) - in_use));
        xev_int(em, A_PEAK, (int64_t)peak);
        xev_int(em, A_REQUESTED, (int64_t)size);
        xev_int(em, A_ALLOCATION, (int64_t)size);
        xev_int(em, A_ADDR, (int64_t)(0x10000000ull + 4096ull * (uint64_t)b));
        xev_str(em, A_TF_OP, "jit(train_step)/dot_general");
        xev_str(em, A_REGION, "output");
        xev_int(em, A_DTYPE, 1);
        xev_str(em, A_SHAPE, "(1024,256)");
        xev_end(em);
    }
    return em->err;
}
