/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Line generators of the training-loop profile, used as xline_desc.gen with
 * ctx = struct synth * and arg = GPU ordinal where it applies. Each writes
 * the steps [sy->s_begin, sy->s_end) of the current host, events sorted by
 * start with parents before their children. They return 0 or -errno.
 */
#ifndef SYNTH_LINES_H
#define SYNTH_LINES_H

#include <stdint.h>

#include "xplane.h"

/* Line timestamps: every event of the line starts at or after them. */
int64_t lines_host_ts(const void *sy);
int64_t lines_device_ts(const void *sy);

/* /host:CPU lines. */
int lines_python(void *sy, int unused, struct emit *em);
int lines_execute(void *sy, int gpu, struct emit *em);
int lines_pool(void *sy, int unused, struct emit *em);

/* /device:GPU:<gpu> stream lines. */
int lines_compute(void *sy, int gpu, struct emit *em);
int lines_h2d(void *sy, int gpu, struct emit *em);
int lines_d2h(void *sy, int gpu, struct emit *em);
int lines_collective(void *sy, int gpu, struct emit *em);

/* Appends one event [t0, t1) (ns since profile start) of a line starting at ts_ns. */
void lines_span(struct emit *em, int64_t ts_ns, int64_t meta, int64_t t0, int64_t t1);

#endif
