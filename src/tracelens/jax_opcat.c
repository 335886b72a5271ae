/*
 * jax_opcat.c - the op category of a JAX/XLA kernel as TraceLens's JAX
 * analyser gives it: the JaxOpKeys.ClassCategories keywords matched on the
 * kernel name, then on its hlo_op (jax_launchers_int.h), with a cache of the
 * hlo_op texts already matched; and which names are not kernels.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jax_launchers_int.h"
#include "base/hash.h"

/* TraceLens's JaxOpKeys.ClassCategories, in its order. */
struct category {
    const char *name;
    const char *keys[5];
};

static const struct category categories[] = {
    {"GEMM", {"Cijk", "gemm", "nvjet", "cublasLt", NULL}},
    {"FA BWD", {"FmhaBwd", "flash_bprop", "ck_fused_attn::dk_dv_reduce_thd", "fmha_bwd", NULL}},
    {"FA FWD", {"FmhaFwd", "flash_fprop", "fmha_fwd", NULL}},
    {"FA V3", {"kernel_func", NULL}},
    {"Conv", {"conv_", "conv.", "conv-", NULL}},
    {"TE", {"transformer_engine", "te_fused_attn", NULL}},
    {"Communication rccl/nccl", {"rccl", "nccl", NULL}},
};

#define NCATEGORIES (sizeof(categories) / sizeof(categories[0]))

/* The first category with a keyword in s, or NULL. */
const char *jax_match_category(const char *s)
{
    size_t c, k;

    for (c = 0; c < NCATEGORIES; c++) {
        for (k = 0; categories[c].keys[k] != NULL; k++) {
            if (strstr(s, categories[c].keys[k]) != NULL)
                return categories[c].name;
        }
    }
    return NULL;
}

/* The category of a kernel from its name and hlo_op (may be NULL). */
const char *jax_kernel_category(const char *name, const char *hlo_op)
{
    const char *by_name = jax_match_category(name), *by_op;
    int fa = by_name != NULL && strncmp(by_name, "FA ", 3) == 0;

    if (hlo_op != NULL && hlo_op[0] != 0 && !fa) {
        by_op = jax_match_category(hlo_op);
        if (by_op != NULL)
            return by_op;
    }
    return by_name != NULL ? by_name : JAX_UNCATEGORIZED;
}

/* Copies, memcpy and memset (any case) are not kernels. */
int jax_is_kernel_name(const char *name)
{
    static const char *const not_kernels[] = {"copy", "memcpy", "memset"};
    size_t k, i;

    for (k = 0; k < 3; k++) {
        const char *p = not_kernels[k];
        for (i = 0; p[i] != 0 && tolower((unsigned char)name[i]) == p[i]; i++)
            ;
        if (p[i] == 0)
            return 0;
    }
    return 1;
}

/* FNV-1a of s[0..n), high bits folded in. */
static uint64_t bytes_hash(const char *s, size_t n)
{
    uint64_t h = fnv64(s, n);

    return h ^ (h >> 32);
}

/* Double the slots (256 at first) and rehash. 0 or -ENOMEM. */
static int op_cache_grow(struct jax_op_cache *c)
{
    size_t nslots = c->nslots ? c->nslots * 2 : 256, i;
    struct jax_op_entry *slots = calloc(nslots, sizeof(*slots));

    if (slots == NULL)
        return -ENOMEM;
    for (i = 0; i < c->nslots; i++) {
        size_t k;
        if (c->slots[i].text == NULL)
            continue;
        k = bytes_hash(c->slots[i].text, c->slots[i].len) & (nslots - 1);
        while (slots[k].text != NULL)
            k = (k + 1) & (nslots - 1);
        slots[k] = c->slots[i];
    }
    free(c->slots);
    c->slots = slots;
    c->nslots = nslots;
    return 0;
}

/* *catp = the category of the op text s[0..n); -ENOMEM when out of memory. */
int jax_op_category(struct jax_op_cache *c, const char *s, size_t n, const char **catp)
{
    char text[JAX_HLO_OP_MAX + 1];
    size_t k;

    if (n > JAX_HLO_OP_MAX)
        n = JAX_HLO_OP_MAX;
    if ((c->used + 1) * 2 > c->nslots && op_cache_grow(c) != 0)
        return -ENOMEM;
    k = bytes_hash(s, n) & (c->nslots - 1);
    while (c->slots[k].text != NULL) {
        if (c->slots[k].len == n && memcmp(c->slots[k].text, s, n) == 0) {
            *catp = c->slots[k].category;
            return 0;
        }
        k = (k + 1) & (c->nslots - 1);
    }
    memcpy(text, s, n);
    text[n] = 0;
    c->slots[k].text = s;
    c->slots[k].len = n;
    c->slots[k].category = text[0] != 0 ? jax_match_category(text) : NULL;
    c->used++;
    *catp = c->slots[k].category;
    return 0;
}

/* Free the slots and leave c empty. */
void jax_op_cache_free(struct jax_op_cache *c)
{
    free(c->slots);
    memset(c, 0, sizeof(*c));
}
