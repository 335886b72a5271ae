/*
 * op_stats_kernel.c - the kernel stats db: reports merged by key, sorted by
 * total duration, top 1000 (xprof/utils/kernel_stats_utils.cc).
 */
#include "base/sort.h"
#include "op_stats_int.h"
#include "base/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KERNELS 1000

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t str_hash(uint64_t h, const char *s)
{
    return mix(fnv64_add_str(h, s), 0xff);
}

static uint64_t report_hash(const struct kernel_report *k)
{
    uint64_t h = str_hash(FNV64_OFFSET, k->name);
    int i;

    h = str_hash(h, k->op_name);
    for (i = 0; i < 3; i++) {
        h = mix(h, k->grid_dim[i]);
        h = mix(h, k->block_dim[i]);
    }
    h = mix(h, k->registers_per_thread);
    h = mix(h, k->static_shmem_bytes);
    h = mix(h, k->dynamic_shmem_bytes);
    h = mix(h,
            (uint64_t)k->is_kernel_using_tensor_core * 2 + (uint64_t)k->is_op_tensor_core_eligible);
    return h;
}

/* KernelReportLessThanComparator as a three-way compare. */
static int report_key_cmp(const struct kernel_report *a, const struct kernel_report *b)
{
    int c = strcmp(a->name, b->name), i;

    if (c != 0)
        return c;
    for (i = 0; i < 3; i++) {
        if (a->grid_dim[i] != b->grid_dim[i])
            return a->grid_dim[i] < b->grid_dim[i] ? -1 : 1;
    }
    for (i = 0; i < 3; i++) {
        if (a->block_dim[i] != b->block_dim[i])
            return a->block_dim[i] < b->block_dim[i] ? -1 : 1;
    }
    if (a->registers_per_thread != b->registers_per_thread)
        return a->registers_per_thread < b->registers_per_thread ? -1 : 1;
    if (a->static_shmem_bytes != b->static_shmem_bytes)
        return a->static_shmem_bytes < b->static_shmem_bytes ? -1 : 1;
    if (a->dynamic_shmem_bytes != b->dynamic_shmem_bytes)
        return a->dynamic_shmem_bytes < b->dynamic_shmem_bytes ? -1 : 1;
    if (a->is_kernel_using_tensor_core != b->is_kernel_using_tensor_core)
        return a->is_kernel_using_tensor_core < b->is_kernel_using_tensor_core ? -1 : 1;
    if (a->is_op_tensor_core_eligible != b->is_op_tensor_core_eligible)
        return a->is_op_tensor_core_eligible < b->is_op_tensor_core_eligible ? -1 : 1;
    return strcmp(a->op_name, b->op_name);
}

static int rehash(struct kernel_map *km, uint32_t cap)
{
    uint32_t *ix = calloc(cap, sizeof(uint32_t)), i;

    if (ix == NULL)
        return -ENOMEM;
    for (i = 0; i < km->n; i++) {
        uint32_t s = (uint32_t)report_hash(&km->v[i]) & (cap - 1);
        while (ix[s] != 0)
            s = (s + 1) & (cap - 1);
        ix[s] = i + 1;
    }
    free(km->index);
    km->index = ix;
    km->index_cap = cap;
    return 0;
}

int kernel_map_add(struct kernel_map *km, struct arena *arena, const struct kernel_report *k)
{
    uint32_t s;
    struct kernel_report *e;

    if (km->index_cap == 0 || (km->n + 1) * 2 > km->index_cap) {
        if (rehash(km, km->index_cap ? km->index_cap * 2 : 64) != 0)
            return -ENOMEM;
    }
    s = (uint32_t)report_hash(k) & (km->index_cap - 1);
    while (km->index[s] != 0) {
        e = &km->v[km->index[s] - 1];
        if (report_key_cmp(e, k) == 0) {
            e->total_duration_ns += k->total_duration_ns;
            if (k->min_duration_ns < e->min_duration_ns)
                e->min_duration_ns = k->min_duration_ns;
            if (k->max_duration_ns > e->max_duration_ns)
                e->max_duration_ns = k->max_duration_ns;
            e->occurrences += k->occurrences;
            return 0;
        }
        s = (s + 1) & (km->index_cap - 1);
    }
    if (km->n == km->cap) {
        uint32_t cap = km->cap ? km->cap * 2 : 64;
        struct kernel_report *v = realloc(km->v, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        km->v = v;
        km->cap = cap;
    }
    e = &km->v[km->n];
    *e = *k;
    e->name = arena_strndup(arena, k->name, strlen(k->name));
    e->op_name = arena_strndup(arena, k->op_name, strlen(k->op_name));
    if (e->name == NULL || e->op_name == NULL)
        return -ENOMEM;
    km->index[s] = ++km->n;
    return 0;
}

void kernel_map_free(struct kernel_map *km)
{
    free(km->v);
    free(km->index);
    memset(km, 0, sizeof(*km));
}

/* Total duration descending, then the key ascending. */
static int report_order(const void *a, const void *b)
{
    const struct kernel_report *x = a, *y = b;

    if (x->total_duration_ns != y->total_duration_ns)
        return x->total_duration_ns > y->total_duration_ns ? -1 : 1;
    return report_key_cmp(x, y);
}

int kernel_map_to_db(const struct kernel_map *km, struct op_stats *os)
{
    uint32_t n = km->n;

    os->kernels = malloc((n ? n : 1) * sizeof(*os->kernels));
    if (os->kernels == NULL)
        return -ENOMEM;
    if (n > 0)
        memcpy(os->kernels, km->v, n * sizeof(*os->kernels));
    os->nkernels = n;
    kernels_sort_top(os);
    return 0;
}

void kernels_sort_top(struct op_stats *os)
{
    xp_qsort(os->kernels, os->nkernels, sizeof(*os->kernels), report_order);
    if (os->nkernels > MAX_KERNELS)
        os->nkernels = MAX_KERNELS;
}
