/*
 * fuzz_ctrace.c - libFuzzer target of every tool on a Chrome-trace run: the
 * input is the run's one file, named as run_ctrace_name says (a first byte
 * 0 or 1 picks h.trace.json, read by the trace viewer, or h.pt.trace.json,
 * read by the PyTorch tools too; plain JSON, as the seeds in
 * tests/fuzz/ctrace-seeds/ are, is h.trace.json). Every file the run directory and its
 * hosts/ copy list is made, as `xprofs cat` makes it, plus a trace window,
 * a down-sampled trace and a search (run_files.h). A file may fail with an
 * error; nothing may crash, leak or hang. Built by `make fuzz`; an input
 * that crashes it belongs in tests/fuzz/regressions/ctrace/, which
 * tests/unit/test_fuzz_tools.c replays on each `make test`.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_files.h"
#include "vfs.h"

/* Where the files of one input go. */
struct target {
    struct vfs *v;
    int devnull; /* /dev/null, open for writing */
};

/* Make one file to /dev/null (run_files_each's fn); errors are expected. */
static void make_file(void *arg, const char *path)
{
    struct target *t = arg;
    struct vfs_node node;
    struct xp_err err = {0};

    if (vfs_lookup(t->v, path, &node, &err) != 0)
        return;
    if (node.kind == VFS_TOOL || node.kind == VFS_README)
        (void)vfs_read_to(t->v, &node, t->devnull, &err);
    vfs_node_free(&node);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char logdir[64];
    static char run[128];
    static const char *const names[2] = {"h.trace.json", "h.pt.trace.json"};
    char file[192];
    struct xp_err err = {0};
    struct target t;
    size_t skip;
    const char *name = run_ctrace_name(data, size, &skip);
    int fd, i;
    if (logdir[0] == '\0') {
        strcpy(logdir, "/tmp/xprofs-fuzz-ctrace-XXXXXX");
        if (mkdtemp(logdir) == NULL)
            abort();
        snprintf(run, sizeof(run), "%s/plugins", logdir);
        mkdir(run, 0700);
        snprintf(run, sizeof(run), "%s/plugins/profile", logdir);
        mkdir(run, 0700);
        snprintf(run, sizeof(run), "%s/plugins/profile/r", logdir);
        mkdir(run, 0700);
    }
    for (i = 0; i < 2; i++) {
        snprintf(file, sizeof(file), "%s/%s", run, names[i]);
        unlink(file);
    }
    snprintf(file, sizeof(file), "%s/%s", run, name);
    fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data + skip, size - skip) != (ssize_t)(size - skip))
        abort();
    close(fd);
    t.devnull = open("/dev/null", O_WRONLY);
    if (t.devnull < 0)
        abort();
    if (vfs_open(logdir, 64 << 20, &t.v, &err) == 0) {
        run_files_each(t.v, "r", make_file, &t);
        run_files_each(t.v, "r/hosts/h", make_file, &t);
        vfs_close(t.v);
    }
    close(t.devnull);
    return 0;
}
