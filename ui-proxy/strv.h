/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A growable list of owned strings (run names, host names, module names),
 * with sorting and de-duplication.
 */
#ifndef UI_STRV_H
#define UI_STRV_H

#include <stddef.h>

struct ui_strv {
    char **v;   /* owned strings */
    size_t n;   /* strings in v */
    size_t cap; /* slots allocated */
};

#define UI_STRV_INIT                                                                               \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* Appends a copy of the first len bytes of s; 0 or -ENOMEM, -E2BIG. */
int ui_strv_addn(struct ui_strv *sv, const char *s, size_t len);

/* Appends a copy of s; 0 or a negative errno. */
int ui_strv_add(struct ui_strv *sv, const char *s);

/* Sorts by byte order (descending when desc) and drops duplicates. */
void ui_strv_sort(struct ui_strv *sv, int desc);

/* Returns 1 when s is in the list. */
int ui_strv_has(const struct ui_strv *sv, const char *s);

/* Frees every string and the array; the list is empty afterwards. */
void ui_strv_release(struct ui_strv *sv);

#endif
