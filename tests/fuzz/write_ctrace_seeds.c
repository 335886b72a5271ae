/*
 * write_ctrace_seeds.c - writes the Chrome-trace seeds (ctrace_seeds.h)
 * into a directory, one file each, for fuzz_ctrace's corpus:
 *
 *   write_ctrace_seeds DIR
 *
 * Built and run by `make fuzz` (into build-fuzz/ctrace-seeds/).
 */
#include <stdio.h>
#include <string.h>

#include "ctrace_seeds.h"

int main(int argc, char **argv)
{
    size_t i;

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    for (i = 0; i < CTRACE_NSEEDS; i++) {
        char path[4096];
        FILE *f;
        if (snprintf(path, sizeof(path), "%s/%s", argv[1], ctrace_seeds[i].name) >=
            (int)sizeof(path))
            return 1;
        f = fopen(path, "w");
        if (f == NULL || fputs(ctrace_seeds[i].text, f) == EOF || fclose(f) != 0) {
            perror(path);
            return 1;
        }
    }
    return 0;
}
