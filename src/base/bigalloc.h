/*
 * bigalloc.h - allocations for big arrays, backed by transparent huge pages.
 *
 * Page faults are expensive (one per 4 KiB page touched); an array of
 * XP_BIG_ALLOC bytes or more is mapped on its own and marked
 * MADV_HUGEPAGE, so it faults in 2 MiB at a time, and growing it moves page
 * tables (mremap) instead of copying. Smaller arrays come from malloc.
 * Every block records its size, so big_free needs only the pointer; a block
 * from these functions must be released with big_free, never free().
 *
 * Fresh pages cost more than the work on them where the kernel must clear
 * them (and on a VM the host must back them: 2.5-3 s a GiB here, against
 * 0.05 s to overwrite pages a process holds). While a piece of work holds
 * the pool, the mappings it frees keep their pages for its next ones; the
 * last release gives them back, so an idle process holds none.
 * Under AddressSanitizer every block comes from malloc (checked bounds).
 */
#ifndef XPROFS_BIGALLOC_H
#define XPROFS_BIGALLOC_H

#include <stddef.h>

/* Sizes from which a block gets its own huge-page mapping. */
#define XP_BIG_ALLOC ((size_t)2 << 20)

/* bytes of uninitialised memory, or NULL when out of memory. */
void *big_malloc(size_t bytes);

/* n * size zeroed bytes (NULL on overflow or when out of memory). */
void *big_calloc(size_t n, size_t size);

/* Resize p (NULL: allocate) keeping its contents; NULL when out of memory
 * (p is then unchanged). */
void *big_realloc(void *p, size_t bytes);

/* Release p (NULL is a no-op). */
void big_free(void *p);

/* Say that work which frees and makes big blocks starts (hold) or ends
 * (release): between the first hold and the last release, freed mappings
 * stay in a pool that later mappings are made of. Calls nest and may come
 * from any thread. */
void big_pool_hold(void);
void big_pool_release(void);

/* Bytes in the pool now (tests). */
size_t big_pool_bytes(void);

#endif
