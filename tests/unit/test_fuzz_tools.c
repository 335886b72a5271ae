/*
 * test_fuzz_tools.c - every tool on hostile profiles, as `make fuzz`'s
 * fuzz_tools target runs them, in every `make test` (plain and under
 * ASan+UBSan, where undefined behaviour aborts): the seeds are the small
 * fixed profiles of our generator (GPU steps with HLO, TPU, SparseCore,
 * ungrouped TPU, inference, TPU with DCN collectives; XPROFS_TOOL_SEEDS
 * names their directory, made by the Makefile), each made whole and then with bits flipped, bytes
 * overwritten and the file cut short at a spread of places, plus every
 * input saved in tests/fuzz/regressions/tools/. Each input is the one host
 * file of a run; every file the run and its hosts/ copy list is made, with
 * a trace window, a down-sampled trace and a search. A file is made with
 * content (but errors.txt) or fails with a reason; nothing may crash, leak
 * or hang.
 *
 * A profile built here with an event time past the reader's limit (the
 * input fuzz_tools found overflowing a start time) gets the reader's reason
 * from every tool that reads events.
 *
 * Chrome-trace runs the same way, as `make fuzz`'s fuzz_ctrace target runs
 * them: our small hand-written traces (tests/fuzz/ctrace_seeds.h), each as
 * a run's h.trace.json and as its h.pt.trace.json, whole, with bytes
 * changed and cut short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fuzz/ctrace_seeds.h"
#include "../fuzz/run_files.h"
#include "pbw.h"
#include "vfs/vfs.h"

#ifndef REGRESSIONS_DIR
#define REGRESSIONS_DIR "tests/fuzz/regressions/tools"
#endif
/* The bytes a Chrome-trace seed gets at each place: JSON's punctuation and
 * a digit, a NUL and a non-ASCII byte. */
static const uint8_t ctrace_bytes[] = {'"', '{', ']', '\\', '9', '\0', 0xc3};

#define SEEDS_MIN 5        /* profiles the Makefile makes */
#define PLACES_PER_SEED 16 /* positions mutated in each seed */
#define PLACES_FIRST 6     /* of which the first bytes (tags of the space) */
/* Files only a GPU profile has (gpu_timeline, gpu_devices,
 * kernel_launchers, xla_summary ...: eight, in the run and in hosts/h). */
#define GPU_ONLY_FILES 16

/* What making the files of one input gave. */
struct made {
    int ok;     /* files made with content */
    int failed; /* files refused with a reason */
    int no_hlo; /* of those, memory_viewer.json and graph_viewer.json: they need
                 * a module name (graph_viewer.json a type too), the memory
                 * viewer a buffer assignment our generator's profiles lack */
};

/* The run directory the inputs go to. */
struct logdir {
    char root[64];  /* LOGDIR */
    char run[128];  /* LOGDIR/plugins/profile/r */
    char file[160]; /* its one host file */
    int out;        /* scratch file the files are made into */
};

/* One input's files being made. */
struct making {
    struct vfs *v;
    struct logdir *d;
    struct made m;
};

/* Make path into d->out (run_files_each's fn): content, or a failure with
 * a reason. */
static void make_file(void *arg, const char *path)
{
    struct making *mk = arg;
    struct vfs_node node;
    struct xp_err err = {0};
    int rc;

    if (vfs_lookup(mk->v, path, &node, &err) != 0) {
        assert_true(err.msg[0] != '\0');
        mk->m.failed++;
        return;
    }
    assert_int_equal(ftruncate(mk->d->out, 0), 0);
    assert_int_equal(lseek(mk->d->out, 0, SEEK_SET), 0);
    rc = vfs_read_to(mk->v, &node, mk->d->out, &err);
    vfs_node_free(&node);
    if (rc == 0) {
        /* errors.txt may be empty (no errors), and memory_profile.json is
         * XProf's "" for a host without a /host:CPU plane */
        assert_true(lseek(mk->d->out, 0, SEEK_END) > 0 || strstr(path, "errors.txt") != NULL ||
                    strstr(path, "memory_profile.json") != NULL);
        mk->m.ok++;
    } else {
        assert_true(rc < 0);
        assert_int_equal(err.code, rc);
        assert_true(err.msg[0] != '\0');
        mk->m.failed++;
        mk->m.no_hlo += strstr(path, "/memory_viewer.json") != NULL ||
                        strstr(path, "/graph_viewer.json") != NULL;
    }
}

/* One input as the run's one file at path, every file of the run made (and
 * of its hosts/ copy, with hosts set: the same tools on one host); the file
 * is removed after. */
static struct made make_all_as(struct logdir *d, const char *path, const uint8_t *data, size_t n,
                               int hosts)
{
    struct making mk = {.v = NULL, .d = d, .m = {0, 0, 0}};
    struct xp_err err = {0};
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    close(fd);
    assert_int_equal(vfs_open(d->root, 16 << 20, &mk.v, &err), 0);
    run_files_each(mk.v, "r", make_file, &mk);
    if (hosts)
        run_files_each(mk.v, "r/hosts/h", make_file, &mk);
    vfs_close(mk.v);
    unlink(path);
    return mk.m;
}

/* One input as the run's host file (make_all_as). */
static struct made make_all(struct logdir *d, const uint8_t *data, size_t n, int hosts)
{
    return make_all_as(d, d->file, data, n, hosts);
}

/* A Chrome trace as the run's one file: h.trace.json, or with pytorch set
 * h.pt.trace.json (make_all_as). */
static struct made make_ctrace(struct logdir *d, const uint8_t *data, size_t n, int pytorch,
                               int hosts)
{
    char path[192];

    snprintf(path, sizeof(path), "%s/%s", d->run, pytorch ? "h.pt.trace.json" : "h.trace.json");
    return make_all_as(d, path, data, n, hosts);
}

static int setup(void **state)
{
    struct logdir *d = calloc(1, sizeof(*d));
    char path[160];

    assert_non_null(d);
    strcpy(d->root, "/tmp/test_fuzz_tools_XXXXXX");
    assert_non_null(mkdtemp(d->root));
    snprintf(path, sizeof(path), "%s/plugins", d->root);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/plugins/profile", d->root);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(d->run, sizeof(d->run), "%s/plugins/profile/r", d->root);
    assert_int_equal(mkdir(d->run, 0700), 0);
    snprintf(d->file, sizeof(d->file), "%s/h.xplane.pb", d->run);
    snprintf(path, sizeof(path), "%s/out", d->root);
    d->out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(d->out >= 0);
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    struct logdir *d = *state;
    char path[160];

    close(d->out);
    snprintf(path, sizeof(path), "%s/out", d->root);
    unlink(path);
    unlink(d->file);
    rmdir(d->run);
    snprintf(path, sizeof(path), "%s/plugins/profile", d->root);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/plugins", d->root);
    rmdir(path);
    rmdir(d->root);
    free(d);
    return 0;
}

/* The bytes of a file (malloc'd) into *np; NULL if it cannot be read. */
static uint8_t *read_file(const char *path, size_t *np)
{
    struct stat st;
    uint8_t *buf;
    FILE *f;

    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    buf = malloc((size_t)st.st_size + 1);
    f = fopen(path, "rb");
    assert_non_null(buf);
    assert_non_null(f);
    assert_int_equal(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
    fclose(f);
    *np = (size_t)st.st_size;
    return buf;
}

/* Calls fn on every regular file of dir (names ending in ".md" aside);
 * returns how many. */
static int each_file(const char *dir,
                     void (*fn)(void *arg, const char *name, const uint8_t *data, size_t n),
                     void *arg)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    int count = 0;

    assert_non_null(dp);
    while ((de = readdir(dp)) != NULL) {
        char path[1024];
        uint8_t *data;
        size_t n;

        if (de->d_name[0] == '.' || strstr(de->d_name, ".md") != NULL)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        data = read_file(path, &n);
        if (data == NULL)
            continue;
        fn(arg, de->d_name, data, n);
        free(data);
        count++;
    }
    closedir(dp);
    return count;
}

static void replay_one(void *arg, const char *name, const uint8_t *data, size_t n)
{
    (void)name;
    (void)make_all(arg, data, n, 1);
}

static void test_saved_inputs(void **state)
{
    print_message("replayed %d saved inputs\n", each_file(REGRESSIONS_DIR, replay_one, *state));
}

/* A Chrome-trace seed as either file, whole (its trace viewer, and all but
 * the GPU tools, made), then changed at PLACES_PER_SEED places spread over
 * it (each byte of ctrace_bytes put there, the file cut there). */
static void mutate_ctrace_seed(struct logdir *d, const uint8_t *seed, size_t n)
{
    uint8_t *buf = malloc(n);
    int pytorch, k;
    size_t b;

    assert_non_null(buf);
    for (pytorch = 0; pytorch < 2; pytorch++) {
        struct made whole = make_ctrace(d, seed, n, pytorch, 1);
        assert_true(whole.ok >= 8);
        for (k = 0; k < PLACES_PER_SEED; k++) {
            size_t at = (size_t)((uint64_t)n * (uint64_t)k / PLACES_PER_SEED);
            for (b = 0; b < sizeof(ctrace_bytes); b++) {
                struct made m;
                memcpy(buf, seed, n);
                buf[at] = ctrace_bytes[b];
                m = make_ctrace(d, buf, n, pytorch, 0);
                assert_true(m.ok + m.failed > 0);
            }
            (void)make_ctrace(d, seed, at, pytorch, 0);
        }
    }
    free(buf);
}

static void test_mutated_ctrace_seeds(void **state)
{
    size_t i;

    for (i = 0; i < CTRACE_NSEEDS; i++)
        mutate_ctrace_seed(*state, (const uint8_t *)ctrace_seeds[i].text,
                           strlen(ctrace_seeds[i].text));
}

/* Every file of a run whose host line starts at 50 us and holds one event
 * with an offset of 2^63 - 64 ps (the sum fuzz_tools found overflowing in
 * summary.json): made with content or a reason, summary.json and the trace
 * with the reader's. */
static void test_time_out_of_range_tools(void **state)
{
    struct logdir *d = *state;
    struct pbw space = {0}, plane = {0}, line = {0}, ev = {0}, meta = {0}, entry = {0};
    struct made m;
    struct vfs *v;
    struct vfs_node node;
    struct xp_err err = {0};
    static const char *const files[] = {"r/summary.json", "r/trace_viewer.json",
                                        "r/overview_page.json"};
    size_t i;
    int fd;

    pbw_uint(&meta, 1, 1);
    pbw_str(&meta, 2, "op");
    pbw_uint(&entry, 1, 1);
    pbw_msg(&entry, 2, &meta);
    pbw_str(&plane, 2, "/host:CPU");
    pbw_msg(&plane, 4, &entry);
    pbw_uint(&line, 1, 1);
    pbw_uint(&line, 3, 50000); /* timestamp_ns */
    pbw_uint(&ev, 1, 1);
    pbw_uint(&ev, 2, (uint64_t)INT64_MAX - 63); /* offset_ps */
    pbw_uint(&ev, 3, 10);
    pbw_msg(&line, 4, &ev);
    pbw_msg(&plane, 3, &line);
    pbw_msg(&space, 1, &plane);
    m = make_all(d, space.p, space.n, 1);
    assert_true(m.failed > 0);
    /* make_all removed the file: write it again to read the reasons */
    fd = open(d->file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, space.p, space.n), (ssize_t)space.n);
    close(fd);
    assert_int_equal(vfs_open(d->root, 16 << 20, &v, &err), 0);
    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        int rc;
        memset(&err, 0, sizeof(err));
        rc = vfs_lookup(v, files[i], &node, &err);
        if (rc == 0) {
            rc = vfs_read_to(v, &node, d->out, &err);
            vfs_node_free(&node);
        }
        assert_int_equal(rc, -EIO);
        assert_non_null(strstr(err.msg, "event time out of range"));
    }
    vfs_close(v);
    unlink(d->file);
    free(space.p);
}

/* The stats the builders read by name (XProf's stat names). */
static const char *const known_stats[] = {"hlo_module",
                                          "program_id",
                                          "hlo_op",
                                          "correlation_id",
                                          "group_id",
                                          "step_num",
                                          "is_root",
                                          "tf_op",
                                          "kernel_details",
                                          "device_id",
                                          "_r",
                                          "_pt",
                                          "_p",
                                          "_ct",
                                          "_c",
                                          "flops",
                                          "bytes_accessed",
                                          "memcpy_details",
                                          "step_name",
                                          "long_name"};
#define NKNOWN (sizeof(known_stats) / sizeof(known_stats[0]))
#define NPAIRED 6 /* the first ones are also hidden in pairs with every other */

/* Rename stat name to one nobody reads in buf[0..n): every string field
 * holding exactly it (tag 2, its length, its bytes: a StatMetadata name)
 * gets an 'X' for its first letter. Returns how many were renamed. */
static int hide_stat(uint8_t *buf, size_t n, const char *name)
{
    size_t len = strlen(name), i;
    int count = 0;

    for (i = 0; i + 2 + len <= n; i++) {
        if (buf[i] == 0x12 && buf[i + 1] == len && memcmp(buf + i + 2, name, len) == 0) {
            buf[i + 2] = 'X';
            count++;
        }
    }
    return count;
}

/* The seed with each known stat it names hidden, alone, and the first
 * NPAIRED with each other one: events without the stats the tools expect beside the others (a
 * kernel with its hlo_op but neither hlo_module nor program_id, ...). */
static void hide_stats(struct logdir *d, const uint8_t *seed, size_t n, uint8_t *buf)
{
    size_t a, b;

    for (a = 0; a < NKNOWN; a++) {
        memcpy(buf, seed, n);
        if (hide_stat(buf, n, known_stats[a]) == 0)
            continue;
        (void)make_all(d, buf, n, 0);
        for (b = a + 1; a < NPAIRED && b < NKNOWN; b++) {
            memcpy(buf, seed, n);
            hide_stat(buf, n, known_stats[a]);
            if (hide_stat(buf, n, known_stats[b]) > 0)
                (void)make_all(d, buf, n, 0);
        }
    }
}

/* A seed whole, then mutated at PLACES_PER_SEED places spread over it
 * (one bit flipped, the byte set to 0xff and to 0x80, a varint that goes
 * on, the file cut there), then with stats hidden (hide_stats). */
static void mutate_seed(void *arg, const char *name, const uint8_t *seed, size_t n)
{
    struct logdir *d = arg;
    uint8_t *buf = malloc(n);
    struct made whole = make_all(d, seed, n, 1), m;
    int k, bit = 0;

    /* The seed itself: every file it lists is made, but on a profile
     * without GPUs the eight GPU-only tools (in the run and in hosts/). */
    assert_true(whole.ok >= 20);
    if (strncmp(name, "steps4", 6) == 0)
        assert_int_equal(whole.failed - whole.no_hlo, 0);
    else
        assert_true(whole.failed - whole.no_hlo <= GPU_ONLY_FILES);
    assert_non_null(buf);
    for (k = 0; k < PLACES_PER_SEED; k++) {
        /* the first bytes, then spread over the file */
        size_t at =
            k < PLACES_FIRST ? (size_t)k : (size_t)((uint64_t)n * (uint64_t)k / PLACES_PER_SEED);
        if (at >= n)
            continue;
        memcpy(buf, seed, n);
        buf[at] ^= (uint8_t)(1u << (bit++ % 8));
        m = make_all(d, buf, n, 0);
        assert_true(m.ok + m.failed > 0);
        buf[at] = 0xff;
        (void)make_all(d, buf, n, 0);
        buf[at] = 0x80;
        (void)make_all(d, buf, n, 0);
        (void)make_all(d, seed, at, 0);
    }
    hide_stats(d, seed, n, buf);
    free(buf);
}

static void test_mutated_seeds(void **state)
{
    const char *dir = getenv("XPROFS_TOOL_SEEDS");

    /* Run by the Makefile, which makes the seeds: without them this fails. */
    assert_non_null(dir);
    assert_true(each_file(dir, mutate_seed, *state) >= SEEDS_MIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_saved_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mutated_seeds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_out_of_range_tools, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mutated_ctrace_seeds, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
