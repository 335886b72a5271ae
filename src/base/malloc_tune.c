/*
 * malloc_tune.c - re-execute with glibc's huge-page malloc (malloc_tune.h).
 */
#include "malloc_tune.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TUNABLE "glibc.malloc.hugetlb=1"
#define TOP_PAD (64 << 20)   /* heap grows by at least this much */
#define MARK "XPROFS_MALLOC" /* set once we re-executed: never loop */

void malloc_tune(char **argv)
{
    const char *old = getenv("GLIBC_TUNABLES");
    const char *plain = getenv("XPROFS_PLAIN_MALLOC");
    char *value;
    size_t n;

    if (plain != NULL && strcmp(plain, "1") == 0)
        return;
    mallopt(M_TOP_PAD, TOP_PAD);
    if (getenv(MARK) != NULL || (old != NULL && strstr(old, "glibc.malloc.hugetlb") != NULL))
        return;
    n = (old != NULL ? strlen(old) + 1 : 0) + sizeof(TUNABLE);
    value = malloc(n);
    if (value == NULL)
        return;
    if (old != NULL && old[0] != '\0')
        snprintf(value, n, "%s:%s", old, TUNABLE);
    else
        snprintf(value, n, "%s", TUNABLE);
    if (setenv("GLIBC_TUNABLES", value, 1) == 0 && setenv(MARK, "1", 1) == 0)
        execv("/proc/self/exe", argv);
    /* Still here: exec failed (no /proc); go on as we are. */
    free(value);
    if (old != NULL)
        setenv("GLIBC_TUNABLES", old, 1);
    else
        unsetenv("GLIBC_TUNABLES");
    unsetenv(MARK);
}

void malloc_tune_one_arena(void)
{
    const char *plain = getenv("XPROFS_PLAIN_MALLOC");

    if (plain != NULL && strcmp(plain, "1") == 0)
        return;
    /* Refused only where another malloc is in use: nothing to limit. */
    (void)mallopt(M_ARENA_MAX, 1);
}
