/*
 * crc32c.c - CRC-32C (see crc32c.h): reflected polynomial 0x82f63b78,
 * initial and final value inverted, as iSCSI and ext4 use it.
 */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        table[i] = c;
    }
}

uint32_t crc32c_portable(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;

    pthread_once(&table_once, make_table);
    crc = ~crc;
    while (n-- > 0)
        crc = table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const void *p,
                                                               size_t n)
{
    const unsigned char *b = p;
    uint64_t c = ~crc;

    while (n > 0 && ((uintptr_t)b & 7) != 0) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *b++);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        c = __builtin_ia32_crc32di(c, w);
        b += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = __builtin_ia32_crc32qi((uint32_t)c, *b++);
    return ~(uint32_t)c;
}
#endif

uint32_t crc32c(uint32_t crc, const void *p, size_t n)
{
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        return crc32c_sse42(crc, p, n);
#endif
    return crc32c_portable(crc, p, n);
}
