/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --alloc-events N (train scenario): the host's /host:CPU plane gains a
 * line "allocator" of N MemoryAllocation / MemoryDeallocation events of
 * one GPU BFC allocator, as TensorFlow's and JAX's allocators record them
 * for XProf's memory profile (alloc.c).
 */
#ifndef SYNTH_ALLOC_H
#define SYNTH_ALLOC_H

#include <stdint.h>

#include "wire.h"
#include "xplane.h"

/* Stat metadata ids of the allocator events (clear of the host plane's). */
#define ALLOC_STAT_BASE 1000000

/* Appends the allocator events' event and stat metadata to a host tail. */
void alloc_tail(struct wbuf *tail);

/* Line generator: ctx is the struct synth; all events come with the run's
 * first step (s_begin 0), none with the others. */
int alloc_line(void *ctx, int arg, struct emit *em);

#endif
