/*
 * main.c - `xprofs`: the converter core without FUSE.
 *
 *   xprofs cat LOGDIR PATH...     print the files the mount shows at PATH...
 *   xprofs ls [-l] LOGDIR [PATH]  list a directory of the mount's tree
 *   xprofs compare LOGDIR A B     print B's compare.md against base A
 *   xprofs check [-j N] FILE      read one .xplane.pb[.gz] completely (N decode
 *                                 threads) and print what it holds and how long
 *                                 reading took: a validator and the reader's benchmark
 *   xprofs precompute LOGDIR ...  fill a cache directory (precompute.c)
 *   xprofs COMMAND SESSION ...    XProf's agent CLI (agent.c, docs/agent-cli.md)
 *
 * --cache-dir DIR [--cache-bytes N], anywhere before the agent command's own
 * flags, keeps produced files in DIR as the mount's -o cache_dir= does.
 *
 * Output is byte for byte what the mount serves; errors go to stderr as one
 * line with a non-zero exit code (1 not found, 2 usage or bad option, 3 bad
 * input).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/malloc_tune.h"
#include "base/version.h"
#include "agent/agent.h"
#include "agent_main.h"
#include "precompute.h"
#include "store/store.h"
#include "vfs/vfs.h"

#define CLI_CACHE_BYTES ((size_t)256 << 20)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xprofs cat LOGDIR PATH...\n"
            "       xprofs ls [-l] LOGDIR [PATH]\n"
            "       xprofs compare LOGDIR BASE RUN   (RUN/compare.md?base=BASE)\n"
            "       xprofs check [-j THREADS] FILE.xplane.pb\n"
            "       xprofs COMMAND SESSION [--flag=value ...]   XProf's agent CLI:\n"
            "         get_overview, get_top_hlo_ops, list_xplane_events, ... (docs/agent-cli.md)\n"
            "       xprofs precompute LOGDIR [RUN] [--host H | --task I --tasks N] [--all-hosts]\n"
            "         [--files F,...] --cache-dir DIR   fill DIR for one host's share\n"
            "       xprofs --version | help\n"
            "--cache-dir DIR [--cache-bytes N] (before the command): keep produced files in DIR.\n"
            "PATH is what the mount shows under its mount point, options after '?':\n"
            "  xprofs cat ~/logs 'run1/trace_viewer.json?start_time_ms=0&end_time_ms=5'\n"
            "A file past 4 MiB is written while it is produced (no temporary file).\n"
            "Environment: XPROFS_PLAIN_MALLOC=1 (glibc's default malloc).\n");
}

/* A log directory without runs is a mistake here: -1 with the reason. */
static int refuse_empty(struct vfs *v, const char *logdir)
{
    char why[PATH_MAX + 256];
    int misplaced;

    if (!vfs_empty_reason(v, logdir, why, sizeof(why), &misplaced))
        return 0;
    fprintf(stderr, "xprofs: %s\n", why);
    return -1;
}

static int exit_code(int rc)
{
    if (rc == -ENOENT || rc == -ENOTDIR || rc == -EISDIR)
        return 1;
    if (rc == -EINVAL)
        return 2;
    return 3;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A source file to stdout (copied from its store first, if it lives in
 * one). 0 or a negative errno with err. */
static int cat_raw(struct vfs *v, const struct vfs_node *node, struct xp_err *err)
{
    char buf[1 << 16];
    ssize_t n;
    int fd, rc;

    rc = vfs_open_raw(v, node, &fd, err);
    if (rc != 0)
        return rc;
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        if (write_all(1, buf, (size_t)n) != 0) {
            close(fd);
            return xp_err_set(err, -EIO, "write: %s", strerror(errno));
        }
    }
    close(fd);
    return n < 0 ? xp_err_set(err, -EIO, "read: %s", strerror(errno)) : 0;
}

static int cmd_cat(struct vfs *v, const char *path)
{
    struct vfs_node node;
    struct xp_err err = {0};
    int rc;

    rc = vfs_lookup(v, path, &node, &err);
    if (rc != 0)
        goto fail;
    if (node.kind == VFS_DIR) {
        vfs_node_free(&node);
        rc = xp_err_set(&err, -EISDIR, "is a directory");
        goto fail;
    }
    if (node.kind == VFS_RAW) {
        rc = cat_raw(v, &node, &err);
        vfs_node_free(&node);
        goto done;
    }
    rc = vfs_read_to(v, &node, 1, &err);
    vfs_node_free(&node);
done:
    if (rc == 0)
        return 0;
fail:
    fprintf(stderr, "xprofs: %s: %s\n", path, err.msg[0] ? err.msg : strerror(-rc));
    return exit_code(rc);
}

/* RUN/compare.md?base=BASE, BASE percent-encoded where a query needs it. */
static int cmd_compare(struct vfs *v, const char *base, const char *run)
{
    static const char keep[] = "-._~/";
    size_t n = strlen(run) + 3 * strlen(base) + 32, len;
    char *path = malloc(n);
    const char *p;
    int rc;

    if (path == NULL) {
        fprintf(stderr, "xprofs: out of memory\n");
        return 3;
    }
    len = (size_t)snprintf(path, n, "%s/compare.md?base=", run);
    for (p = base; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr(keep, c) != NULL)
            path[len++] = (char)c;
        else
            len += (size_t)snprintf(path + len, n - len, "%%%02X", c);
    }
    path[len] = '\0';
    rc = cmd_cat(v, path);
    free(path);
    return rc;
}

struct ls_ctx {
    struct vfs *v;
    const char *dir;
    int longfmt;
};

static int ls_entry(void *arg, const char *name, int is_dir)
{
    struct ls_ctx *c = arg;

    if (!c->longfmt) {
        printf("%s%s\n", name, is_dir ? "/" : "");
    } else {
        char path[4096];
        struct vfs_node node;
        long long size = 0;
        snprintf(path, sizeof(path), "%s%s%s", c->dir, c->dir[0] ? "/" : "", name);
        if (!is_dir && vfs_lookup(c->v, path, &node, NULL) == 0) {
            size = (long long)vfs_known_size(c->v, &node);
            vfs_node_free(&node);
        }
        printf("%c %12lld %s%s\n", is_dir ? 'd' : '-', size, name, is_dir ? "/" : "");
    }
    return 0;
}

static int cmd_ls(struct vfs *v, const char *path, int longfmt)
{
    struct xp_err err = {0};
    struct ls_ctx c = {v, path, longfmt};
    int rc = vfs_list(v, path, ls_entry, &c, &err);

    if (rc != 0) {
        fprintf(stderr, "xprofs: %s: %s\n", path[0] ? path : ".",
                err.msg[0] ? err.msg : strerror(-rc));
        return exit_code(rc);
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int cmd_check(const char *path, int threads)
{
    struct xp_err err = {0};
    struct xspace *xs;
    double t0 = now_s(), t1, t2;
    uint64_t lines = 0;
    uint32_t i;
    int rc;

    if (!ends_with(path, ".xplane.pb") && !ends_with(path, ".xplane.pb.gz")) {
        fprintf(stderr, "xprofs: check reads .xplane.pb[.gz] files; %s is not one\n", path);
        return 2;
    }
    rc = xspace_open(path, &xs, &err);
    t1 = now_s();
    if (rc == 0) {
        rc = xspace_decode(xs, threads, &err);
        if (rc != 0)
            xspace_close(xs);
    }
    t2 = now_s();
    if (rc != 0) {
        fprintf(stderr, "xprofs: %s\n", err.msg);
        return exit_code(rc);
    }
    for (i = 0; i < xs->nplanes; i++)
        lines += xs->planes[i].nlines;
    printf("%s: %u planes, %llu lines, %llu events; index %.6f s, decode %.6f s, total %.6f s\n",
           path, xs->nplanes, (unsigned long long)lines, (unsigned long long)xs->nevents, t1 - t0,
           t2 - t1, t2 - t0);
    xspace_close(xs);
    return 0;
}

/* N with an optional K, M, G or T (powers of 1024); -1 if not one. */
static long long parse_bytes(const char *arg)
{
    unsigned long long x, mul = 1;
    char *end;

    errno = 0;
    x = strtoull(arg, &end, 10);
    if (*end != '\0' && strchr("kKmMgGtT", *end) != NULL) {
        int sh = strchr("kK", *end) ? 10 : strchr("mM", *end) ? 20 : strchr("gG", *end) ? 30 : 40;
        mul = 1ull << sh;
        end++;
    }
    if (end == arg || arg[0] == '-' || *end != '\0' || errno != 0 || x > (~0ull >> 2) / mul)
        return -1;
    return (long long)(x * mul);
}

/* Take --cache-dir DIR (or =DIR) and --cache-bytes N out of argv, where
 * they stand before the first argument that is not an option of ours
 * after the command (so an agent command's flags are its own). Returns 0,
 * or -1 after a message. */
static int take_cache_opts(int *argc, char **argv, const char **dir, long long *bytes)
{
    int i = 1, o = 1;

    for (; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--cache-dir") == 0 || strcmp(a, "--cache-bytes") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "xprofs: %s needs a value\n", a);
                return -1;
            }
            if (a[8] == 'd')
                *dir = argv[++i];
            else if ((*bytes = parse_bytes(argv[++i])) < 0) {
                fprintf(stderr, "xprofs: --cache-bytes %s: not a byte count\n", argv[i]);
                return -1;
            }
        } else if (strncmp(a, "--cache-dir=", 12) == 0) {
            *dir = a + 12;
        } else if (strncmp(a, "--cache-bytes=", 14) == 0) {
            if ((*bytes = parse_bytes(a + 14)) < 0) {
                fprintf(stderr, "xprofs: %s: not a byte count\n", a);
                return -1;
            }
        } else {
            argv[o++] = argv[i];
        }
    }
    argv[o] = NULL;
    *argc = o;
    return 0;
}

int main(int argc, char **argv)
{
    const char *cache_dir = NULL;
    long long cache_bytes = 0;
    struct vfs *v;
    struct xp_err err = {0};
    int longfmt = 0, argi = 2, rc;
    const char *cmd;

    malloc_tune(argv);
    if (argc >= 2 && !agent_is_command(argv[1]) &&
        take_cache_opts(&argc, argv, &cache_dir, &cache_bytes) != 0)
        return 2;
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    cmd = argv[1];
    if (strcmp(cmd, "precompute") == 0)
        return cmd_precompute(argc - 1, argv + 1, cache_dir, (size_t)cache_bytes);
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("xprofs %s\n", XPROFS_VERSION);
        return 0;
    }
    /* XProf's agent commands (docs/agent-cli.md) */
    if (agent_is_command(cmd))
        return agent_main(argc, argv);
    if (strcmp(cmd, "check") == 0) {
        int threads = 0;
        if (argc == 5 && strcmp(argv[2], "-j") == 0) {
            char *end;
            long t = strtol(argv[3], &end, 10);
            threads = *end == '\0' && end != argv[3] && t >= 0 && t <= 1024 ? (int)t : -1;
            argi = 4;
        }
        if (argc - argi != 1 || threads < 0) {
            usage(stderr);
            return 2;
        }
        return cmd_check(argv[argi], threads);
    }
    if (strcmp(cmd, "ls") == 0 && argi < argc && strcmp(argv[argi], "-l") == 0) {
        longfmt = 1;
        argi++;
    }
    if (argi < argc && argv[argi][0] == '-') {
        fprintf(stderr, "xprofs: unknown option '%s'\n", argv[argi]);
        usage(stderr);
        return 2;
    }
    if ((strcmp(cmd, "cat") == 0 && argc - argi < 2) ||
        (strcmp(cmd, "ls") == 0 && (argc - argi < 1 || argc - argi > 2)) ||
        (strcmp(cmd, "compare") == 0 && argc - argi != 3) ||
        (strcmp(cmd, "cat") != 0 && strcmp(cmd, "ls") != 0 && strcmp(cmd, "compare") != 0)) {
        usage(stderr);
        return 2;
    }
    if (vfs_open_location(argv[argi], NULL, CLI_CACHE_BYTES, &v, &err) != 0) {
        fprintf(stderr, "xprofs: %s\n", err.msg);
        return 1;
    }
    if (refuse_empty(v, argv[argi]) != 0) {
        vfs_close_location(v);
        return 1;
    }
    if (cache_dir != NULL) {
        struct store *st;
        if (store_open(cache_dir, (size_t)cache_bytes, &st, &err) != 0) {
            fprintf(stderr, "xprofs: %s\n", err.msg);
            vfs_close_location(v);
            return 3;
        }
        vfs_use_store(v, st);
    }
    if (strcmp(cmd, "cat") == 0) {
        /* Several paths are read in one process, in order: a later path
         * (errors.txt) sees what reading an earlier one did. */
        int i;
        rc = 0;
        for (i = argi + 1; i < argc; i++) {
            int one = cmd_cat(v, argv[i]);
            if (one > rc)
                rc = one;
        }
    } else if (strcmp(cmd, "compare") == 0)
        rc = cmd_compare(v, argv[argi + 1], argv[argi + 2]);
    else
        rc = cmd_ls(v, argi + 1 < argc ? argv[argi + 1] : "", longfmt);
    if (fflush(stdout) != 0 && rc == 0)
        rc = 3;
    vfs_close_location(v);
    return rc;
}
