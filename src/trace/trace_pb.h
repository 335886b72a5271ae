/*
 * trace_pb.h - trace viewer events as XProf's compressed delta-series proto
 * (format=pb).
 *
 * XProf answers format=pb with a zstd frame (level 1, content size in the
 * header) of a serialized xprof.TraceDataResponse
 * (trace_data_response.proto, built by
 * trace_data_to_compressed_delta_series_proto.cc): one series per track
 * with start-time deltas, durations, interned names (index 0 is "") and one
 * metadata message per event, then the processes and threads, the interned
 * strings, the details and the full time span. Here the events are those a
 * trace viewer selected from the trace index; the message is never built in
 * memory: a size pass fixes every length, then the bytes go through zstd's
 * streaming API straight into the output writer.
 */
#ifndef XPROFS_TRACE_PB_H
#define XPROFS_TRACE_PB_H

#include <stdint.h>

#include "out/out.h"
#include "trace_index.h"

/* Which of XProf's containers the response is made from. */
enum tpb_source {
    TPB_STREAMING, /* read back from XProf's store: serials, details, dropped events left out */
    TPB_LEGACY,    /* the container as converted: every event, no serials, no details */
};

/* What goes around the events. */
struct tpb_options {
    enum tpb_source source; /* container kind */
    int full_dma;           /* TPB_STREAMING: the full_dma option (a detail of TPU traces) */
};

/* Write the compressed response for parts[0..nparts) (ascending offsets).
 * Returns 0, -ENOMEM, or -EIO when zstd fails. */
int trace_pb_write(const struct tv_part *parts, int nparts, const struct tpb_options *opt,
                   struct out *o);

#endif
