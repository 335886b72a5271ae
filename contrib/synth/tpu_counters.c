/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TPU counter samples for --counters (tpu_counters.h). Counter i of a
 * sample: its event metadata (first_meta + i) is named by the counter;
 * every third has a performance_counter_description stat on the metadata,
 * every fifth its performance_counter_id there too (the rest carry it on
 * the event); every event has counter_value (uint64) and
 * performance_counter_sets ("issue" or "memory"). A sample's events start
 * at 100 + 1000 k us (+ core) and last 800 + 10 (k mod 8) us. Values come
 * from a hash of the seed, core, sample and counter: cycle counters about
 * 10^9, the others below 10^6.
 */
#include "tpu_counters.h"

#include <stdio.h>
#include <string.h>

struct synth_counter {
    const char *name;
    uint64_t id;
};

static const struct synth_counter v6e[] = {
#include "tools/tpu_counter_ids_v6e.inc"
};

static const struct synth_counter v7x[] = {
#include "tools/tpu_counter_ids_v7x.inc"
};

#define US 1000000LL /* ps */

static const struct synth_counter *table(int chip, uint32_t *n)
{
    if (chip == 1) {
        *n = (uint32_t)(sizeof(v7x) / sizeof(v7x[0]));
        return v7x;
    }
    *n = (uint32_t)(sizeof(v6e) / sizeof(v6e[0]));
    return v6e;
}

int tpu_counters_chip(const char *name)
{
    if (strcmp(name, "v6e") == 0)
        return 0;
    if (strcmp(name, "v7x") == 0)
        return 1;
    return -1;
}

const char *tpu_counters_device_type(int chip)
{
    return chip == 1 ? "TPU v7x" : "TPU v6 Lite";
}

uint32_t tpu_counters_width(int chip, uint32_t width)
{
    uint32_t n;

    table(chip, &n);
    return width == 0 || width > n ? n : width;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static int is_cycles(const char *name)
{
    size_t n = strlen(name);

    return (n >= 7 && strcmp(name + n - 7, "_CYCLES") == 0) ||
           (n >= 12 && strcmp(name + n - 12, "_CYCLE_COUNT") == 0);
}

uint64_t tpu_counters_value(const struct tpu_counter_gen *g, int c, int64_t k, uint32_t i)
{
    uint32_t n;
    const struct synth_counter *t = table(g->chip, &n);
    uint64_t h = mix(g->seed ^ mix(((uint64_t)k << 20) ^ ((uint64_t)c << 16) ^ i));

    if (is_cycles(t[i].name))
        return 1000000000ull + h % 100000000ull;
    return h % 1000000ull;
}

void tpu_counters_tail(struct wbuf *tail, const struct tpu_counter_gen *g)
{
    static const char *const stat_names[] = {
        "performance_counter_id",   "counter_value", "performance_counter_description",
        "performance_counter_sets", "device_id",     "global_chip_id"};
    uint32_t n, i;
    const struct synth_counter *t = table(g->chip, &n);

    for (i = 0; i < g->width; i++) {
        struct wbuf v = WBUF_INIT;
        pb_int(&v, 1, g->first_meta + i);
        pb_str(&v, 2, t[i].name);
        if (i % 3 == 0) {
            char text[64];
            snprintf(text, sizeof(text), "counter %u of the table", i);
            pb_stat_bytes(&v, 5, TC_STAT_DESCRIPTION, PB_STAT_STR, text, strlen(text));
        }
        if (i % 5 == 0)
            pb_stat_varint(&v, 5, TC_STAT_COUNTER_ID, PB_STAT_UINT64, t[i].id);
        pb_map_entry(tail, 4, g->first_meta + i, &v);
        if (v.failed)
            tail->failed = 1;
        wb_release(&v);
    }
    for (i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++)
        pb_named_entry(tail, 5, TC_STAT_COUNTER_ID + (int64_t)i, stat_names[i]);
}

int tpu_counters_line(void *ctx, int arg, struct emit *em)
{
    const struct tpu_counter_gen *g = ctx;
    int c = arg % 2;
    int64_t k = arg / 2;
    uint32_t n, i;
    const struct synth_counter *t = table(g->chip, &n);
    int64_t start = (100 + 1000 * k + c) * US, dur = (800 + 10 * (k % 8)) * US;

    for (i = 0; i < g->width; i++) {
        xev_begin(em, g->first_meta + i, start, dur);
        if (i % 5 != 0)
            xev_uint(em, TC_STAT_COUNTER_ID, t[i].id);
        xev_uint(em, TC_STAT_COUNTER_VALUE, tpu_counters_value(g, c, k, i));
        xev_str(em, TC_STAT_SETS, i % 2 == 0 ? "issue" : "memory");
        xev_end(em);
    }
    return em->err;
}
