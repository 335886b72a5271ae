/*
 * trace_write.h - the "traceEvents" entries of a trace viewer answer, as
 * XProf's JsonEventWriter writes them, for selections of the trace index.
 *
 * The entries are formatted in batches of consecutive events on all cores,
 * each into its own writer, and appended in order; every batch starts from
 * the writer state the events before it leave (comma, open counter run), so
 * the bytes are those of one sequential pass.
 */
#ifndef XPROFS_TRACE_WRITE_H
#define XPROFS_TRACE_WRITE_H

#include <stdint.h>

#include "out/out.h"
#include "trace_index.h"

/* Stack frames of an answer, numbered 1.. in this order for "sf". */
struct tv_frames {
    struct tv_frame *v;           /* ascending hash, unique */
    uint32_t n;                   /* entries */
    const struct tv_host **owner; /* host holding each frame's text */
};

/* Append the entries of parts[0..nparts) to o, then close a counter run
 * left open. *first is 1 while the array has no entry yet (and is updated);
 * *counters gets the number of counter samples written. Returns 0 or
 * -ENOMEM. */
int tw_write_events(struct out *o, const struct tv_part *parts, int nparts,
                    const struct tv_frames *frames, int *first, uint64_t *counters);

/* The same with batches of batch_events (>= 1) positions: the bytes do not
 * depend on it (tests). */
int tw_write_batched(struct out *o, const struct tv_part *parts, int nparts,
                     const struct tv_frames *frames, int *first, uint64_t *counters,
                     uint32_t batch_events);

#endif
