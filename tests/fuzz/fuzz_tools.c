/*
 * fuzz_tools.c - libFuzzer target of every tool: the input becomes the one
 * host file of a run (LOGDIR/plugins/profile/r/h.xplane.pb in a temporary
 * directory), and every file the run directory lists is made, as `xprofs
 * cat` makes it, plus a trace window, a down-sampled trace and the hosts/
 * copies. A file may fail with an error; nothing may crash, leak or hang.
 * Built by `make fuzz`, where undefined behaviour stops the run like a
 * crash (so that libFuzzer keeps the input): the first report, before that
 * was so, was a memcpy from a NULL module in the XLA Ops names
 * (test_derived.c's test_op_without_module); the second an event offset
 * near 2^63 whose start overflowed (test_xspace.c's
 * test_time_out_of_range). An input that crashes it belongs in
 * tests/fuzz/regressions/tools/ (event-offset-overflow.xplane.pb is the
 * second), whose inputs tests/unit/test_fuzz_tools.c makes every file of
 * on each `make test` (as it does with mutations of our generator's small
 * profiles, which catch the first); inputs of the reader's target go to
 * tests/fuzz/regressions/ (test_fuzz_regressions.c).
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
    static char file[128];
    struct xp_err err = {0};
    struct target t;
    int fd;

    if (logdir[0] == '\0') {
        char run[128];
        strcpy(logdir, "/tmp/xprofs-fuzz-XXXXXX");
        if (mkdtemp(logdir) == NULL)
            abort();
        snprintf(run, sizeof(run), "%s/plugins", logdir);
        mkdir(run, 0700);
        snprintf(run, sizeof(run), "%s/plugins/profile", logdir);
        mkdir(run, 0700);
        snprintf(run, sizeof(run), "%s/plugins/profile/r", logdir);
        mkdir(run, 0700);
        snprintf(file, sizeof(file), "%s/h.xplane.pb", run);
    }
    fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size)
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
