/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of the persistent cache's
 * entries (store.h): the SSE4.2 crc32 instruction where the CPU has it
 * (several GB/s, so checking a big entry costs less than copying it), else
 * a table, with the same values.
 */
#ifndef XPROFS_CRC32C_H
#define XPROFS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32C of p[0..n) continued from crc (0 to start). */
uint32_t crc32c(uint32_t crc, const void *p, size_t n);

/* The table version alone (tests compare the two). */
uint32_t crc32c_portable(uint32_t crc, const void *p, size_t n);

#endif
