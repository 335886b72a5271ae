/*
 * hash.c - libstdc++'s _Hash_bytes (the 64-bit Murmur variant behind
 * std::hash of a string), byte for byte, for the values XProf prints.
 */
#include "hash.h"

#include <string.h>

/* Loads n bytes (1 <= n < 8) little-endian, as libstdc++'s load_bytes. */
static uint64_t load_bytes(const unsigned char *p, int n)
{
    uint64_t result = 0;

    --n;
    do {
        result = (result << 8) + p[n];
    } while (--n >= 0);
    return result;
}

static uint64_t shift_mix(uint64_t v)
{
    return v ^ (v >> 47);
}

uint64_t std_hash_bytes(const void *ptr, size_t len)
{
    const uint64_t mul = (((uint64_t)0xc6a4a793UL) << 32UL) + (uint64_t)0x5bd1e995UL;
    const unsigned char *buf = ptr;
    const size_t len_aligned = len & ~(size_t)0x7;
    const unsigned char *end = buf + len_aligned;
    uint64_t hash = (uint64_t)0xc70f6907UL ^ ((uint64_t)len * mul);
    const unsigned char *p;

    for (p = buf; p != end; p += 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        hash ^= shift_mix(word * mul) * mul;
        hash *= mul;
    }
    if ((len & 0x7) != 0) {
        hash ^= load_bytes(end, (int)(len & 0x7));
        hash *= mul;
    }
    hash = shift_mix(hash) * mul;
    hash = shift_mix(hash);
    return hash;
}
