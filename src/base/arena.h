/*
 * arena.h - a bump allocator for data that lives as long as its owner.
 *
 * Metadata tables, names and protobuf-c messages of one host profile are
 * allocated here and released together by arena_free(). Allocations are
 * 16-byte aligned; arena_alloc returns NULL when memory runs out.
 */
#ifndef XPROFS_ARENA_H
#define XPROFS_ARENA_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

struct arena_block;

struct arena {
    struct arena_block *head; /* newest block, holding the free space */
    size_t total;             /* bytes held in all blocks */
    ProtobufCAllocator pbc;   /* protobuf-c allocator over this arena */
};

/* Prepare an empty arena. Cannot fail. */
void arena_init(struct arena *a);

/* n bytes, 16-aligned, or NULL when out of memory. Freed only by arena_free. */
void *arena_alloc(struct arena *a, size_t n);

/* A NUL-terminated copy of s[0..n) in the arena, or NULL. */
char *arena_strndup(struct arena *a, const char *s, size_t n);

/* Release every block. The arena is empty and reusable afterwards. */
void arena_free(struct arena *a);

#endif
