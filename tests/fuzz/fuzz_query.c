/*
 * fuzz_query.c - libFuzzer target of file names with queries: the input is
 * the rest of a path under a run of a fixed profile ("trace_viewer.json?
 * start_time_ms=1&end_time_ms=2", "hosts/h/op_profile.json?x=y", ...),
 * looked up and made as `xprofs cat` makes it. A bad name or query gets an
 * error with a reason (EINVAL, ENOENT); nothing may crash, leak or hang.
 * The profile is our generator's GPU steps seed
 * (XPROFS_FUZZ_PROFILE, default build/tests/tool-seeds/steps4.xplane.pb,
 * made by `make test-unit`). Built by `make fuzz`; seeds: one path a line in
 * tests/fuzz/query-seeds.txt (split them into files for libFuzzer).
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_run.h"

#define PATH_MAX_FUZZ 4096

static struct vfs *the_vfs;
static int devnull = -1;

/* The run, made once: LOGDIR/plugins/profile/r/h.xplane.pb. */
static void setup(void)
{
    static char logdir[64], run[128];
    const char *seed = getenv("XPROFS_FUZZ_PROFILE");
    char path[192], buf[65536];
    struct xp_err err = {0};
    ssize_t n;
    int in, out;

    if (seed == NULL)
        seed = "build/tests/tool-seeds/steps4.xplane.pb";
    fuzz_run_dir("query", logdir, run);
    snprintf(path, sizeof(path), "%s/h.xplane.pb", run);
    in = open(seed, O_RDONLY);
    out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0) {
        fprintf(stderr, "fuzz_query: cannot copy %s (set XPROFS_FUZZ_PROFILE)\n", seed);
        abort();
    }
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        if (write(out, buf, (size_t)n) != n)
            abort();
    }
    close(in);
    close(out);
    devnull = open("/dev/null", O_WRONLY);
    if (devnull < 0 || vfs_open(logdir, 64 << 20, &the_vfs, &err) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[PATH_MAX_FUZZ + 8];
    struct vfs_node node;
    struct xp_err err = {0};

    if (the_vfs == NULL)
        setup();
    if (size > PATH_MAX_FUZZ || memchr(data, '\0', size) != NULL)
        return 0;
    memcpy(path, "r/", 2);
    memcpy(path + 2, data, size);
    path[2 + size] = '\0';
    if (vfs_lookup(the_vfs, path, &node, &err) != 0) {
        if (err.msg[0] == '\0')
            abort(); /* an error without a reason */
        return 0;
    }
    if (node.kind == VFS_TOOL || node.kind == VFS_README) {
        memset(&err, 0, sizeof(err));
        if (vfs_read_to(the_vfs, &node, devnull, &err) != 0 && err.msg[0] == '\0')
            abort();
    }
    vfs_node_free(&node);
    return 0;
}
