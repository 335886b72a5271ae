/* SPDX-License-Identifier: Apache-2.0 */
/*
 * splitmix64 (Steele, Lea, Flood 2014), used both sequentially and as a
 * counter-based hash. No libc rand(): output depends on the seed only.
 */
#include "rng.h"

uint64_t rng_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t rng_next(uint64_t *state)
{
    uint64_t out = rng_mix(*state);

    *state += 0x9e3779b97f4a7c15ULL;
    return out;
}

uint64_t rng_key(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    uint64_t h = rng_mix(a);

    h = rng_mix(h ^ b);
    h = rng_mix(h ^ c);
    return rng_mix(h ^ d);
}

int64_t rng_range(uint64_t h, int64_t lo, int64_t hi)
{
    unsigned __int128 wide;
    uint64_t span;

    if (hi <= lo)
        return lo;
    span = (uint64_t)(hi - lo) + 1;
    /* multiply-high instead of a modulo (Lemire): same spread, no division */
    wide = (unsigned __int128)h * span;
    return lo + (int64_t)(uint64_t)(wide >> 64);
}
