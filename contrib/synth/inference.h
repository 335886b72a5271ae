/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --scenario inference: a small fixed serving profile (SessionRun requests
 * on even hosts, BatchingSessionRun + ProcessBatch on odd hosts, device
 * modules on TPU planes; see README.md).
 */
#ifndef SYNTH_INFERENCE_H
#define SYNTH_INFERENCE_H

#include "sink.h"
#include "synth.h"

/* Writes the inference XSpace of host h to sink. Returns 0 or a negative errno. */
int inference_write(struct synth *sy, int h, struct sink *sink);

#endif
