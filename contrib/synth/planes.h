/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Planes without timelines, shared by every scenario: /host:metadata (one
 * event metadata per XLA module carrying its HloProto) and Task Environment
 * (profile start and stop wall times).
 */
#ifndef SYNTH_PLANES_H
#define SYNTH_PLANES_H

#include <stdint.h>

#include "program.h"
#include "sink.h"

/* Wall-clock ns of the profile start of host h (fixed, 2025-01-01 UTC). */
uint64_t planes_wall_start(int host);

/*
 * Writes (sink NULL: counts) the /host:metadata plane of program pr, adding
 * its size to *bytes. Returns 0 or a negative errno (message printed).
 */
int planes_write_metadata(struct sink *sink, const struct program *pr, uint64_t *bytes);

/* Writes (or counts) the Task Environment plane; 0 or a negative errno. */
int planes_write_task_env(struct sink *sink, uint64_t start_ns, uint64_t stop_ns, uint64_t *bytes);

#endif
