/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --scenario tpu: a small fixed TPU profile (2 TensorCore planes with the
 * Steps / XLA Modules / XLA Ops lines the TPU runtime writes; see README.md).
 */
#ifndef SYNTH_TPU_H
#define SYNTH_TPU_H

#include "sink.h"
#include "synth.h"

/* Writes the tpu XSpace of host h to sink. Returns 0 or a negative errno. */
int tpu_write(struct synth *sy, int h, struct sink *sink);

#endif
