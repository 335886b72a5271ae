/*
 * gt_classify.c - which class a GPU event counts in by its name (see
 * gpu_timeline.h): TraceLens's JAX rules, its PyTorch rules (ROCm legacy
 * copy kernels are memcpy, fill kernels computation), and the communication
 * test they share.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "gpu_timeline.h"
#include "gt_int.h"

static int has_prefix_nocase(const char *s, const char *p)
{
    for (; *p; s++, p++) {
        if (tolower((unsigned char)*s) != *p)
            return 0;
    }
    return 1;
}

int gt_contains_nocase(const char *s, const char *p)
{
    size_t n = strlen(p);

    for (; *s; s++) {
        if (strncasecmp(s, p, n) == 0)
            return 1;
    }
    return 0;
}

int gt_is_communication(const char *name)
{
    return gt_contains_nocase(name, "nccl") || gt_contains_nocase(name, "rccl") ||
           gt_contains_nocase(name, "cross_device_reduce");
}

enum gt_class gt_classify_jax(const char *name)
{
    if (has_prefix_nocase(name, "copy") || has_prefix_nocase(name, "memcpy") ||
        has_prefix_nocase(name, "memset"))
        return GT_MEMCPY;
    if (gt_is_communication(name))
        return GT_COMMUNICATION;
    return GT_COMPUTATION;
}

/* s is p, then optional suffixes in order, then end (Python's re.match with
 * '$', which also matches before one trailing newline). */
static const char *eat(const char *s, const char *p)
{
    size_t n = strlen(p);
    return strncmp(s, p, n) == 0 ? s + n : NULL;
}

static int at_end(const char *s)
{
    const char *k = eat(s, ".kd");
    if (k != NULL)
        s = k;
    return *s == 0 || (s[0] == '\n' && s[1] == 0);
}

static int is_rocm_legacy_memcpy(const char *name)
{
    static const char *const copies[] = {"MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST",
                                         "MEMORY_COPY_DEVICE_TO_DEVICE"};
    const char *s;
    size_t k;

    for (k = 0; k < 3; k++) {
        s = eat(name, copies[k]);
        if (s != NULL && at_end(s))
            return 1;
    }
    s = eat(name, "__amd_rocclr_copyBuffer");
    if (s == NULL)
        return 0;
    if (eat(s, "Rect") != NULL)
        s = eat(s, "Rect");
    if (eat(s, "Aligned") != NULL)
        s = eat(s, "Aligned");
    return at_end(s);
}

static int is_rocm_legacy_memset(const char *name)
{
    const char *s = eat(name, "__amd_rocclr_fillBuffer");

    if (s == NULL)
        return 0;
    if (eat(s, "Aligned") != NULL)
        s = eat(s, "Aligned");
    return at_end(s);
}

enum gt_class gt_classify_pytorch(const char *cat, const char *name)
{
    if (strcmp(cat, "gpu_memcpy") == 0)
        return GT_MEMCPY;
    if (strcmp(cat, "kernel") == 0 && is_rocm_legacy_memcpy(name))
        return GT_MEMCPY;
    if (strcmp(cat, "kernel") == 0 && is_rocm_legacy_memset(name))
        return GT_COMPUTATION;
    if (gt_is_communication(name))
        return GT_COMMUNICATION;
    return GT_COMPUTATION;
}
