/*
 * run_files.h - the files the tools' fuzz target and test_fuzz_tools.c make
 * of a run: every file a directory of it lists, then five requests with a
 * query (a down-sampled trace, a window, a search as format=pb, the memory
 * viewer and the graph viewer's long text of the first module whose name
 * holds a "("). Test-only code, shared
 * by the fuzz targets in tests/fuzz/ and tests/unit/test_fuzz_tools.c.
 */
#ifndef XPROFS_TEST_RUN_FILES_H
#define XPROFS_TEST_RUN_FILES_H

#include <stdio.h>
#include <string.h>

#include "vfs/vfs.h"

#define RUN_FILES_MAX 64 /* files listed in one directory */

/* The file names of one directory listing. */
struct run_names {
    char name[RUN_FILES_MAX][96];
    int n;
};

static inline int run_files_add(void *arg, const char *name, int is_dir)
{
    struct run_names *nm = arg;

    if (!is_dir && nm->n < RUN_FILES_MAX && strlen(name) < sizeof(nm->name[0]))
        strcpy(nm->name[nm->n++], name);
    return 0;
}

/* fn(arg, path) for every file listed under dir and the requests with a
 * query, as paths under the root ("dir/name"); nothing if dir cannot be
 * listed. */
static inline void run_files_each(struct vfs *v, const char *dir,
                                  void (*fn)(void *arg, const char *path), void *arg)
{
    static const char *const extra[] = {
        "trace_viewer.json?resolution=100", "trace_viewer.json?start_time_ms=0&end_time_ms=1",
        "trace_viewer.json?search_prefix=a&format=pb", "memory_viewer.json?program_id=%28",
        "graph_viewer.json?program_id=%28&type=long_txt&show_metadata=1"};
    struct run_names nm = {.n = 0};
    struct xp_err err = {0};
    char path[256];
    int i;

    if (vfs_list(v, dir, run_files_add, &nm, &err) != 0)
        return;
    for (i = 0; i < nm.n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, nm.name[i]);
        fn(arg, path);
    }
    for (i = 0; i < (int)(sizeof(extra) / sizeof(extra[0])); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, extra[i]);
        fn(arg, path);
    }
}

#endif
