/*
 * test_op_stats_persist.c - one host's op_stats as the persistent cache
 * keeps it (op_stats_persist.c): for each seed profile of test_fuzz_tools
 * (XPROFS_TOOL_SEEDS), saved, loaded and saved again gives the same bytes;
 * cut at every length, or with any header byte changed, it is refused
 * (-EINVAL), and with payload bytes flipped it loads or is refused, never
 * crashing or leaking.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "op_stats/op_stats_int.h"
#include "vfs/vfs.h"

/* The bytes of op_stats_save(os) (malloc'd) and their count. */
static char *saved(const struct op_stats *os, size_t *n)
{
    struct out o;
    struct blob *b;
    char *p;

    out_init(&o);
    op_stats_save(os, &o);
    assert_int_equal(out_finish(&o, &b), 0);
    p = malloc(b->size ? b->size : 1);
    assert_non_null(p);
    assert_int_equal(blob_read(b, 0, p, b->size), (ssize_t)b->size);
    *n = b->size;
    blob_unref(b);
    return p;
}

static void check_seed(const char *seed)
{
    char root[] = "/tmp/test_op_stats_persist.XXXXXX", dir[512], cmd[1200];
    struct xp_err err = {0};
    const struct op_stats *os;
    struct op_stats *back;
    struct snapshot *snap;
    struct session *s;
    struct vfs *v;
    size_t n, n2;
    char *a, *b;

    assert_non_null(mkdtemp(root));
    snprintf(dir, sizeof(dir), "%s/plugins/profile/r", root);
    snprintf(cmd, sizeof(cmd),
             "mkdir -p %s && cp '%s' %s/h.xplane.pb && touch -d '1 hour ago' %s/*", dir, seed, dir,
             dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(vfs_open(root, 16 << 20, &v, &err), 0);
    s = catalog_find(v->cat, "r");
    assert_non_null(s);
    assert_int_equal(session_snapshot(s, &snap, &err), 0);
    if (snapshot_op_stats(snap, "h", &os, &err) == 0) {
        a = saved(os, &n);
        assert_int_equal(op_stats_load(a, n, &back), 0);
        b = saved(back, &n2);
        assert_int_equal(n2, n);
        assert_memory_equal(a, b, n);
        free(b);
        op_stats_free(back);
        /* cut short anywhere: refused */
        for (size_t cut = 0; cut < n; cut += cut < 256 ? 1 : 97) {
            assert_int_equal(op_stats_load(a, cut, &back), -EINVAL);
            assert_null(back);
        }
        /* another layout or magic: refused */
        for (size_t i = 0; i < 28 && i < n; i++) {
            a[i] ^= 0x40;
            assert_int_equal(op_stats_load(a, n, &back), -EINVAL);
            a[i] ^= 0x40;
        }
        /* flipped bytes: loaded or refused */
        for (size_t i = 28; i < n; i += 1 + n / 300) {
            a[i] ^= 0xff;
            if (op_stats_load(a, n, &back) == 0)
                op_stats_free(back);
            a[i] ^= 0xff;
        }
        free(a);
    }
    snapshot_unref(snap);
    session_unref(s);
    vfs_close(v);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static void test_seeds_round_trip(void **state)
{
    const char *dir = getenv("XPROFS_TOOL_SEEDS");
    const char *names[] = {"steps4", "tpu", "tpu_sc", "tpu_raw", "inference"};
    char path[1024];
    int done = 0;

    (void)state;
    if (dir == NULL) {
        fprintf(stderr, "XPROFS_TOOL_SEEDS unset: run it as make build/tests/%s.run\n",
                "test_op_stats_persist");
        fail();
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct stat sb;
        snprintf(path, sizeof(path), "%s/%s.xplane.pb", dir, names[i]);
        if (stat(path, &sb) != 0)
            continue;
        check_seed(path);
        done++;
    }
    assert_int_equal(done, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeds_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
