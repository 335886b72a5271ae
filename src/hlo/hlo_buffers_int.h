/*
 * hlo_buffers_int.h - what the files of the memory picture share (not for
 * other modules: see hlo_buffers.h). hlo_buffers.c reads the
 * BufferAssignmentProto and indexes it, hlo_buffers_sim.c replays the
 * heap-simulator trace and builds the peak picture, hlo_buffers_dot.c
 * draws the allocation timeline.
 */
#ifndef XPROFS_HLO_BUFFERS_INT_H
#define XPROFS_HLO_BUFFERS_INT_H

#include "hlo_buffers.h"

/* The logical buffer of id, or HLO_MEM_NO_ID. */
int32_t hlo_mem_lbuf_find(const struct hlo_mem *m, int64_t id);

/* Pick and replay the trace of m->color, then fill the peak picture, the
 * spans and the allocation sums. Returns 0, -EIO (a trace XProf refuses)
 * or -ENOMEM, with err. */
int hlo_mem_simulate(struct hlo_mem *m, struct xp_err *err);

/* The blocks and rectangles of the allocation timeline. 0 or -ENOMEM. */
int hlo_mem_timeline(struct hlo_mem *m, struct xp_err *err);

/* a + b, saturated at the int64 range (sums that only become MiB). */
static inline int64_t hlo_mem_add_sat(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

#endif
