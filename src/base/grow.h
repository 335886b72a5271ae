/*
 * grow.h - room for one more entry in an array that doubles as it fills.
 */
#ifndef XPROFS_GROW_H
#define XPROFS_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Make room for entry n of *v, an array of size-byte entries with *cap
 * allocated: when n reaches *cap the array doubles (8 at first). Returns 0,
 * or -ENOMEM with *v and *cap unchanged. */
int xp_grow(void **v, uint32_t *cap, uint32_t n, size_t size);

#endif
