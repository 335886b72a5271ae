/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One host's training-loop XSpace: plane order and line layout, and the
 * choice of a step count that makes the file about --size-mb big.
 */
#ifndef SYNTH_PROFILE_H
#define SYNTH_PROFILE_H

#include <stdint.h>

#include "sink.h"
#include "synth.h"

/*
 * Writes (sink NULL: counts) the XSpace of the current host for steps
 * [sy->s_begin, sy->s_end); adds its size to *bytes. 0 or a negative errno.
 */
int profile_write(struct synth *sy, struct sink *sink, uint64_t *bytes);

/*
 * Sets *n_steps so that a host file is about target_bytes long (at least 1
 * step), from counted sizes of the first and of a late step. 0 or -errno.
 */
int profile_choose_steps(struct synth *sy, uint64_t target_bytes, int64_t *n_steps);

#endif
