/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Deterministic randomness: splitmix64 as a sequential generator and as a
 * keyed hash, so that any (seed, step, op, gpu) value can be computed in
 * any order and gives the same bytes on every run.
 */
#ifndef SYNTH_RNG_H
#define SYNTH_RNG_H

#include <stdint.h>

/* One splitmix64 output for state x (the mixing function alone). */
uint64_t rng_mix(uint64_t x);

/* Next value of the sequential generator whose state is *state. */
uint64_t rng_next(uint64_t *state);

/* Hash of a key made of up to four words; different keys differ. */
uint64_t rng_key(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

/* Maps hash h onto [lo, hi] (inclusive); returns lo when hi <= lo. */
int64_t rng_range(uint64_t h, int64_t lo, int64_t hi);

#endif
