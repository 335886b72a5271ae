/*
 * ctrace_strtab.c - the Chrome-trace reader's interned strings (names,
 * categories, string pids and tids) in a base/intern.h table, an empty
 * string being no string; and the string accessors of ctrace.h.
 */
#include "ctrace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ctr_strtab_add(struct intern *t, const char *s, size_t n, uint32_t *id)
{
    if (n == 0) {
        *id = 0;
        return 0;
    }
    return intern_add(t, s, n, id);
}

/* ---- accessors ----------------------------------------------------------- */

const char *ctrace_str(const struct ctrace *ct, uint32_t id)
{
    if (ct == NULL || id >= ct->strings->n)
        return "";
    return ct->strings->text[id];
}

uint32_t ctrace_str_find(const struct ctrace *ct, const char *s)
{
    return intern_find(ct->strings, s, strlen(s));
}

uint32_t ctrace_str_count(const struct ctrace *ct)
{
    return ct->strings->n - 1;
}
