/*
 * inodes.c - path <-> inode number table; see inodes.h.
 */
#include "inodes.h"
#include "base/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int inodes_init(struct inode_table *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    t->nhash = 4096;
    t->hash = calloc(t->nhash, sizeof(*t->hash));
    t->cap = 1024;
    t->byino = calloc(t->cap, sizeof(*t->byino));
    if (t->hash == NULL || t->byino == NULL) {
        free(t->hash);
        free(t->byino);
        return -ENOMEM;
    }
    t->nino = 2; /* 1 is the root, made below */
    t->byino[1] = calloc(1, sizeof(struct inode));
    if (t->byino[1] == NULL || (t->byino[1]->path = strdup("")) == NULL)
        return -ENOMEM;
    t->byino[1]->ino = 1;
    t->byino[1]->nlookup = 1;
    t->hash[fnv64_str("") & (t->nhash - 1)] = t->byino[1];
    return 0;
}

void inodes_destroy(struct inode_table *t)
{
    uint64_t i;

    for (i = 0; i < t->nino; i++) {
        if (t->byino[i] != NULL) {
            free(t->byino[i]->path);
            free(t->byino[i]);
        }
    }
    free(t->byino);
    free(t->hash);
    pthread_mutex_destroy(&t->lock);
}

static struct inode *find_path(struct inode_table *t, const char *path)
{
    struct inode *n = t->hash[fnv64_str(path) & (t->nhash - 1)];

    while (n != NULL && strcmp(n->path, path) != 0)
        n = n->hnext;
    return n;
}

uint64_t inodes_lookup(struct inode_table *t, const char *path)
{
    struct inode *n;
    uint64_t ino = 0;

    pthread_mutex_lock(&t->lock);
    n = find_path(t, path);
    if (n == NULL) {
        if (t->nino == t->cap) {
            uint64_t cap = t->cap * 2;
            struct inode **v = realloc(t->byino, cap * sizeof(*v));
            if (v == NULL)
                goto out;
            memset(v + t->cap, 0, (cap - t->cap) * sizeof(*v));
            t->byino = v;
            t->cap = cap;
        }
        n = calloc(1, sizeof(*n));
        if (n == NULL || (n->path = strdup(path)) == NULL) {
            free(n);
            goto out;
        }
        n->ino = t->nino++;
        t->byino[n->ino] = n;
        size_t h = fnv64_str(path) & (t->nhash - 1);
        n->hnext = t->hash[h];
        t->hash[h] = n;
    }
    n->nlookup++;
    ino = n->ino;
out:
    pthread_mutex_unlock(&t->lock);
    return ino;
}

char *inodes_path(struct inode_table *t, uint64_t ino)
{
    char *p = NULL;

    pthread_mutex_lock(&t->lock);
    if (ino < t->nino && t->byino[ino] != NULL)
        p = strdup(t->byino[ino]->path);
    pthread_mutex_unlock(&t->lock);
    return p;
}

void inodes_forget(struct inode_table *t, uint64_t ino, uint64_t n)
{
    struct inode *node, **pp;

    pthread_mutex_lock(&t->lock);
    if (ino <= 1 || ino >= t->nino || (node = t->byino[ino]) == NULL)
        goto out;
    node->nlookup = node->nlookup > n ? node->nlookup - n : 0;
    if (node->nlookup > 0)
        goto out;
    pp = &t->hash[fnv64_str(node->path) & (t->nhash - 1)];
    while (*pp != node)
        pp = &(*pp)->hnext;
    *pp = node->hnext;
    t->byino[ino] = NULL;
    free(node->path);
    free(node);
out:
    pthread_mutex_unlock(&t->lock);
}

uint64_t inodes_served(struct inode_table *t, uint64_t ino, uint64_t gen, off_t size)
{
    uint64_t old = 0;

    pthread_mutex_lock(&t->lock);
    if (ino < t->nino && t->byino[ino] != NULL) {
        old = t->byino[ino]->served_gen;
        t->byino[ino]->served_gen = gen;
        t->byino[ino]->served_size = size;
    }
    pthread_mutex_unlock(&t->lock);
    return old;
}

off_t inodes_served_size(struct inode_table *t, uint64_t ino, uint64_t gen)
{
    off_t size = -1;

    pthread_mutex_lock(&t->lock);
    if (ino < t->nino && t->byino[ino] != NULL && t->byino[ino]->served_gen == gen && gen != 0)
        size = t->byino[ino]->served_size;
    pthread_mutex_unlock(&t->lock);
    return size;
}
