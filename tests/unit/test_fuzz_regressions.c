/*
 * test_fuzz_regressions.c - replays every input that ever crashed or hung the
 * reader's fuzz target (tests/fuzz/regressions/), plus a set of hostile
 * mutations of a small valid profile made here: each must be refused or read
 * cleanly, never crash (this test also runs under ASan+UBSan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pbw.h"
#include "reader/xspace.h"

#ifndef REGRESSIONS_DIR
#define REGRESSIONS_DIR "tests/fuzz/regressions"
#endif

/* What the fuzz target does with one input. */
static void read_all(const void *data, size_t n)
{
    struct xspace *xs;
    struct xp_err err;
    char buf[128];
    uint32_t p, l, e;

    if (xspace_open_buffer("input", data, n, &xs, &err) != 0)
        return;
    if (xspace_decode(xs, 2, &err) == 0) {
        for (p = 0; p < xs->nplanes; p++) {
            const struct xp_plane *pl = &xs->planes[p];
            for (l = 0; l < pl->nlines; l++) {
                const struct xp_line *ln = &pl->lines[l];
                for (e = 0; e < ln->nevents; e++) {
                    struct xp_stat_iter it;
                    struct xp_stat st;
                    xp_stat_iter_init(&it, pl, ln, &ln->events[e]);
                    while (xp_stat_next(&it, &st) == 1)
                        xp_stat_to_string(&st, buf, sizeof(buf));
                }
            }
        }
    }
    xspace_close(xs);
}

static void test_saved_inputs(void **state)
{
    DIR *d = opendir(REGRESSIONS_DIR);
    struct dirent *de;
    int n = 0;

    (void)state;
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        char path[1024];
        FILE *f;
        struct stat st;
        char *buf;

        if (de->d_name[0] == '.' || strstr(de->d_name, ".md") != NULL)
            continue;
        snprintf(path, sizeof(path), "%s/%s", REGRESSIONS_DIR, de->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        buf = malloc((size_t)st.st_size + 1);
        f = fopen(path, "rb");
        assert_non_null(f);
        assert_int_equal(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
        fclose(f);
        read_all(buf, (size_t)st.st_size);
        free(buf);
        n++;
    }
    closedir(d);
    print_message("replayed %d saved inputs\n", n);
}

/* Byte flips, truncations and length bumps of a small valid profile. */
static void test_mutations(void **state)
{
    struct pbw space = {0}, plane = {0}, line = {0}, ev = {0}, st = {0}, e = {0}, m = {0};
    size_t i;
    int b;

    (void)state;
    pbw_uint(&m, 1, 1);
    pbw_str(&m, 2, "kernel");
    pbw_uint(&e, 1, 1);
    pbw_msg(&e, 2, &m);
    pbw_str(&plane, 2, "/device:GPU:0");
    pbw_msg(&plane, 4, &e);
    pbw_uint(&st, 1, 5);
    pbw_str(&st, 5, "details");
    pbw_uint(&ev, 1, 1);
    pbw_uint(&ev, 2, 100);
    pbw_uint(&ev, 3, 50);
    pbw_msg(&ev, 4, &st);
    pbw_msg(&line, 4, &ev);
    pbw_str(&line, 2, "Stream #1");
    pbw_msg(&plane, 3, &line);
    pbw_msg(&space, 1, &plane);
    for (i = 0; i < space.n; i++) {
        for (b = 0; b < 8; b++) {
            space.p[i] ^= (unsigned char)(1u << b);
            read_all(space.p, space.n);
            space.p[i] ^= (unsigned char)(1u << b);
        }
        read_all(space.p, i);
        unsigned char keep = space.p[i];
        space.p[i] = 0xff;
        read_all(space.p, space.n);
        space.p[i] = 0x7f;
        read_all(space.p, space.n);
        space.p[i] = keep;
    }
    free(space.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saved_inputs),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
