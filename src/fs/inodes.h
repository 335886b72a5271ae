/*
 * inodes.h - the mount's inode numbers.
 *
 * The kernel names files by inode number; we name them by path inside the
 * tree. This table maps both ways. Numbers are handed out in order and never
 * reused while the mount lives; an entry is dropped when the kernel forgets
 * its last lookup. Names with `?options` get inodes like any other name.
 * Each entry also remembers what the kernel may have cached for it (the
 * generation and size of the last content served), so a changed source can
 * be detected at open and the kernel's page cache dropped.
 */
#ifndef XPROFS_FS_INODES_H
#define XPROFS_FS_INODES_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

struct inode {
    uint64_t ino;        /* inode number (1 = root) */
    char *path;          /* path in the tree, "" for the root */
    uint64_t nlookup;    /* kernel lookups not yet forgotten */
    uint64_t served_gen; /* generation of the content last opened, 0 if none */
    off_t served_size;   /* its size */
    struct inode *hnext; /* chain in the path hash */
};

struct inode_table {
    pthread_mutex_t lock; /* guards everything below and inode fields */
    struct inode **byino; /* ino -> entry (NULL when forgotten), grows */
    uint64_t nino;        /* next number; slots in byino */
    uint64_t cap;         /* allocated slots */
    struct inode **hash;  /* path hash chains */
    size_t nhash;         /* buckets, power of two */
};

int inodes_init(struct inode_table *t);
void inodes_destroy(struct inode_table *t);

/* The inode of path, made if new; nlookup is increased by one. Returns the
 * number, or 0 when out of memory. */
uint64_t inodes_lookup(struct inode_table *t, const char *path);

/* A copy of the path of ino (malloc'd), or NULL if unknown. */
char *inodes_path(struct inode_table *t, uint64_t ino);

/* The kernel forgot n lookups of ino. */
void inodes_forget(struct inode_table *t, uint64_t ino, uint64_t n);

/* Record the generation and size served for ino; returns the generation
 * served before (0 if none). */
uint64_t inodes_served(struct inode_table *t, uint64_t ino, uint64_t gen, off_t size);

/* The size last served for ino at generation gen, or -1. */
off_t inodes_served_size(struct inode_table *t, uint64_t ino, uint64_t gen);

#endif
