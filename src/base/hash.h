/*
 * hash.h - the hashes of the project: FNV-1a for our own hash tables (64
 * and 32 bits, over bytes, strings and whole words), and libstdc++'s
 * std::hash of a string where XProf's output shows that value.
 */
#ifndef XPROFS_HASH_H
#define XPROFS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV64_OFFSET 14695981039346656037ull
#define FNV64_PRIME 1099511628211ull
#define FNV32_OFFSET 2166136261u
#define FNV32_PRIME 16777619u

/* h extended by the bytes p[0..n). */
static inline uint64_t fnv64_add(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ b[i]) * FNV64_PRIME;
    return h;
}

/* h extended by the NUL-terminated s. */
static inline uint64_t fnv64_add_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * FNV64_PRIME;
    return h;
}

/* h extended by a whole word in one step (keys made of integers). */
static inline uint64_t fnv64_add_word(uint64_t h, uint64_t v)
{
    return (h ^ v) * FNV64_PRIME;
}

/* FNV-1a of p[0..n) and of s. */
static inline uint64_t fnv64(const void *p, size_t n)
{
    return fnv64_add(FNV64_OFFSET, p, n);
}

static inline uint64_t fnv64_str(const char *s)
{
    return fnv64_add_str(FNV64_OFFSET, s);
}

/* 32-bit FNV-1a of p[0..n), for tables indexed by 32-bit slots. */
static inline uint32_t fnv32(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t h = FNV32_OFFSET;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ b[i]) * FNV32_PRIME;
    return h;
}

/* libstdc++'s std::hash<std::string_view> (64-bit _Hash_bytes, seed
 * 0xc70f6907) of s[0..n): XProf's host ids and stack-frame hashes. */
uint64_t std_hash_bytes(const void *s, size_t n);

#endif
