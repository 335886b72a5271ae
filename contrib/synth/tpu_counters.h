/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --counters CHIP (tpu scenarios): TPU performance-counter samples on each
 * TensorCore plane, as the TPU runtime records them for XProf's perf
 * counters and utilization viewer: lines "counters_<k>" (id 100 + k), one
 * event per counter of the chip's table (XProf's, shipped as
 * src/tools/tpu_counter_ids_<chip>.inc), named by the counter, with stats
 * performance_counter_id, counter_value, performance_counter_description
 * and performance_counter_sets (some of them on the event metadata).
 */
#ifndef SYNTH_TPU_COUNTERS_H
#define SYNTH_TPU_COUNTERS_H

#include <stdint.h>

#include "wire.h"
#include "xplane.h"

/* 0 for "v6e", 1 for "v7x", -1 otherwise. */
int tpu_counters_chip(const char *name);

/* XProf's device_type_string of the chip. */
const char *tpu_counters_device_type(int chip);

/* Counters per sample: the chip's table, or width if smaller (width 0: all). */
uint32_t tpu_counters_width(int chip, uint32_t width);

/* Stat metadata ids the counter events use (the tpu plane's must not clash). */
enum {
    TC_STAT_COUNTER_ID = 101,
    TC_STAT_COUNTER_VALUE,
    TC_STAT_DESCRIPTION,
    TC_STAT_SETS,
    TC_STAT_DEVICE_ID,
    TC_STAT_GLOBAL_CHIP_ID,
};

/* The shape of the samples. */
struct tpu_counter_gen {
    int chip;           /* 0 v6e, 1 v7x */
    uint32_t width;     /* counters per sample */
    int64_t first_meta; /* event metadata id of counter 0 */
    uint64_t seed;      /* values vary with it */
};

/* Appends the counters' event metadata and the stat metadata above. */
void tpu_counters_tail(struct wbuf *tail, const struct tpu_counter_gen *g);

/* Line generator: arg = sample * 2 + core. */
int tpu_counters_line(void *ctx, int arg, struct emit *em);

/* The value of counter i in sample k of core c (tests recompute it from
 * the file, not from this). */
uint64_t tpu_counters_value(const struct tpu_counter_gen *g, int c, int64_t k, uint32_t i);

#endif
