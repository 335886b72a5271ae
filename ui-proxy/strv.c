/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Owned string lists (see strv.h). The number of entries is capped so that
 * a hostile mount or file cannot make the proxy allocate without bound.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

#define STRV_MAX 1000000 /* entries */

int ui_strv_addn(struct ui_strv *sv, const char *s, size_t len)
{
    char *copy;

    if (sv->n == sv->cap) {
        size_t cap = sv->cap ? sv->cap * 2 : 16;
        char **v;

        if (cap > STRV_MAX)
            return -E2BIG;
        v = realloc(sv->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        sv->v = v;
        sv->cap = cap;
    }
    copy = strndup(s, len);
    if (!copy)
        return -ENOMEM;
    sv->v[sv->n++] = copy;
    return 0;
}

int ui_strv_add(struct ui_strv *sv, const char *s)
{
    return ui_strv_addn(sv, s, strlen(s));
}

static int cmp_asc(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_desc(const void *a, const void *b)
{
    return strcmp(*(char *const *)b, *(char *const *)a);
}

void ui_strv_sort(struct ui_strv *sv, int desc)
{
    size_t i, out = 0;

    if (sv->n < 2)
        return;
    qsort(sv->v, sv->n, sizeof(*sv->v), desc ? cmp_desc : cmp_asc);
    for (i = 0; i < sv->n; i++) {
        if (out && strcmp(sv->v[out - 1], sv->v[i]) == 0) {
            free(sv->v[i]);
            continue;
        }
        sv->v[out++] = sv->v[i];
    }
    sv->n = out;
}

int ui_strv_has(const struct ui_strv *sv, const char *s)
{
    size_t i;

    for (i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], s) == 0)
            return 1;
    return 0;
}

void ui_strv_release(struct ui_strv *sv)
{
    size_t i;

    for (i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = 0;
    sv->cap = 0;
}
