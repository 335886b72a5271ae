/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --scenario steps4: a small hand-checkable profile (4 learner_step steps
 * with exact microsecond times, documented in contrib/synth/README.md).
 */
#ifndef SYNTH_STEPS4_H
#define SYNTH_STEPS4_H

#include "sink.h"
#include "synth.h"

/* Writes the steps4 XSpace of host h to sink. Returns 0 or a negative errno. */
int steps4_write(struct synth *sy, int h, struct sink *sink);

#endif
