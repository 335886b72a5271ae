/*
 * tpu_planes.c - TPU plane and line names, and event device spans (see
 * tpu_planes.h).
 */
#include "tpu_planes.h"

#include <string.h>

#define TPU_PREFIX "/device:TPU:"

/* Digits from *s on: how many, *s moved past them. */
static int skip_digits(const char **s)
{
    const char *p = *s;

    while (**s >= '0' && **s <= '9')
        (*s)++;
    return (int)(*s - p);
}

enum tpu_core_kind tpu_plane_core(const char *name)
{
    const char *s = name + strlen(TPU_PREFIX);
    int n;

    if (strncmp(name, TPU_PREFIX, strlen(TPU_PREFIX)) != 0)
        return TPU_NOT_A_CORE;
    n = skip_digits(&s);
    if (*s == '\0')
        return TPU_TENSOR_CORE; /* "([0-9]*)$": no number is a match too */
    if (n == 0 || strncmp(s, " SparseCore ", 12) != 0)
        return TPU_NOT_A_CORE;
    s += 12;
    return skip_digits(&s) > 0 && *s == '\0' ? TPU_SPARSE_CORE : TPU_NOT_A_CORE;
}

int tpu_device_span(const struct xp_plane *p, const struct xp_line *l, const struct xp_event *e,
                    int64_t *begin, int64_t *end)
{
    struct xp_stat off, dur;

    if (xp_event_own_stat(p, l, e, p->stat_id[XS_DEVICE_OFFSET_PS], &off) &&
        xp_event_own_stat(p, l, e, p->stat_id[XS_DEVICE_DURATION_PS], &dur)) {
        *begin = xp_stat_int(&off);
        *end = *begin + xp_stat_int(&dur);
        return 1;
    }
    *begin = xp_event_start_ps(l, e);
    *end = xp_event_end_ps(l, e);
    return 0;
}

int tpu_is_step_line(const char *name)
{
    return strcmp(name, "Steps") == 0 || strcmp(name, "Sparse Core Steps") == 0;
}

int tpu_is_module_line(const char *name)
{
    return strcmp(name, "XLA Modules") == 0 || strcmp(name, "Sparse Core Modules") == 0;
}
