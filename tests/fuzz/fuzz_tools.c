/*
 * fuzz_tools.c - libFuzzer target of every tool: the input becomes the one
 * host file of a run (LOGDIR/plugins/profile/r/h.xplane.pb in a temporary
 * directory), and every file the run directory lists is made, as `xprofs
 * cat` makes it, plus a trace window, a down-sampled trace and the hosts/
 * copies. A file may fail with an error; nothing may crash, leak or hang.
 * Built by `make fuzz`, where undefined behaviour stops the run like a
 * crash (so that libFuzzer keeps the input): the one report so far, before
 * that was so, was a memcpy from a NULL module in the XLA Ops names
 * (test_derived.c's test_op_without_module). An input that crashes it
 * belongs in tests/fuzz/regressions/tools/, whose inputs
 * tests/unit/test_fuzz_tools.c makes every file of on each `make test`
 * (as it does with mutations of our generator's small profiles, which
 * catch that report); inputs of the reader's target go to
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

#include "vfs.h"

/* The file names of one directory listing. */
struct names {
    char name[64][96];
    int n;
};

static int add_name(void *arg, const char *name, int is_dir)
{
    struct names *nm = arg;

    if (!is_dir && nm->n < 64 && strlen(name) < sizeof(nm->name[0]))
        strcpy(nm->name[nm->n++], name);
    return 0;
}

/* Make one file to /dev/null; errors are expected. */
static void make_file(struct vfs *v, int devnull, const char *path)
{
    struct vfs_node node;
    struct xp_err err = {0};

    if (vfs_lookup(v, path, &node, &err) != 0)
        return;
    if (node.kind == VFS_TOOL || node.kind == VFS_README)
        (void)vfs_read_to(v, &node, devnull, &err);
    vfs_node_free(&node);
}

/* Make every file listed under dir. */
static void make_dir(struct vfs *v, int devnull, const char *dir)
{
    static const char *const extra[] = {"trace_viewer.json?resolution=100",
                                        "trace_viewer.json?start_time_ms=0&end_time_ms=1",
                                        "trace_viewer.json?search_prefix=a&format=pb"};
    struct names nm = {.n = 0};
    struct xp_err err = {0};
    char path[256];
    int i;

    if (vfs_list(v, dir, add_name, &nm, &err) != 0)
        return;
    for (i = 0; i < nm.n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, nm.name[i]);
        make_file(v, devnull, path);
    }
    for (i = 0; i < (int)(sizeof(extra) / sizeof(extra[0])); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, extra[i]);
        make_file(v, devnull, path);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char logdir[64];
    static char file[128];
    struct xp_err err = {0};
    struct vfs *v;
    int fd, devnull;

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
    devnull = open("/dev/null", O_WRONLY);
    if (devnull < 0)
        abort();
    if (vfs_open(logdir, 64 << 20, &v, &err) == 0) {
        make_dir(v, devnull, "r");
        make_dir(v, devnull, "r/hosts/h");
        vfs_close(v);
    }
    close(devnull);
    return 0;
}
