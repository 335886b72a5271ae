/*
 * fuzz_run.h - the run directory the fuzz targets put their input in, and
 * making its files to /dev/null, and the name a Chrome-trace input takes:
 * the set-up fuzz_tools.c, fuzz_ctrace.c and fuzz_query.c share. Test-only
 * code: a failure here aborts the target.
 */
#ifndef XPROFS_TEST_FUZZ_RUN_H
#define XPROFS_TEST_FUZZ_RUN_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_files.h"
#include "vfs/vfs.h"

/* A new LOGDIR (logdir[64], named "/tmp/xprofs-fuzz-<what>-XXXXXX") with
 * the empty run LOGDIR/plugins/profile/r, whose path goes to run[128]. */
static inline void fuzz_run_dir(const char *what, char *logdir, char *run)
{
    if (snprintf(logdir, 64, "/tmp/xprofs-fuzz-%s-XXXXXX", what) >= 64 || mkdtemp(logdir) == NULL)
        abort();
    snprintf(run, 128, "%s/plugins", logdir);
    mkdir(run, 0700);
    snprintf(run, 128, "%s/plugins/profile", logdir);
    mkdir(run, 0700);
    snprintf(run, 128, "%s/plugins/profile/r", logdir);
    if (mkdir(run, 0700) != 0)
        abort();
}

/* path holds exactly data[0..n). */
static inline void fuzz_write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    if (fd < 0 || write(fd, data, n) != (ssize_t)n)
        abort();
    close(fd);
}

/* The file name a Chrome-trace fuzz input becomes in its run, and how many
 * of its bytes to skip: a first byte 0 picks h.trace.json (older
 * TensorFlow, create_perfetto_trace) and 1 h.pt.trace.json (a PyTorch
 * trace, read by the PyTorch tools too), and is not part of the JSON; any
 * other input is JSON as it is, h.trace.json. */
static inline const char *run_ctrace_name(const uint8_t *data, size_t n, size_t *skip)
{
    *skip = n > 0 && data[0] <= 1 ? 1 : 0;
    return *skip && data[0] == 1 ? "h.pt.trace.json" : "h.trace.json";
}

/* Where fuzz_make_file makes files. */
struct fuzz_target {
    struct vfs *v;
    int out; /* open for writing (/dev/null) */
};

/* Make one file into t->out (run_files_each's fn, arg a struct
 * fuzz_target); errors are expected. */
static inline void fuzz_make_file(void *arg, const char *path)
{
    struct fuzz_target *t = arg;
    struct vfs_node node;
    struct xp_err err = {0};

    if (vfs_lookup(t->v, path, &node, &err) != 0)
        return;
    if (node.kind == VFS_TOOL || node.kind == VFS_README)
        (void)vfs_read_to(t->v, &node, t->out, &err);
    vfs_node_free(&node);
}

/* Every file of the run r and of its hosts/h copy made to /dev/null, as
 * `xprofs cat` makes it, with the queries of run_files_each. */
static inline void fuzz_make_run(const char *logdir)
{
    struct fuzz_target t;
    struct xp_err err = {0};

    t.out = open("/dev/null", O_WRONLY);
    if (t.out < 0)
        abort();
    if (vfs_open(logdir, 64 << 20, &t.v, &err) == 0) {
        run_files_each(t.v, "r", fuzz_make_file, &t);
        run_files_each(t.v, "r/hosts/h", fuzz_make_file, &t);
        vfs_close(t.v);
    }
    close(t.out);
}

#endif
