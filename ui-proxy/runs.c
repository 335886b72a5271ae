/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Walking the mount for runs (runs.h). The walk is bounded in depth and in
 * the number of directories, so a strange tree cannot hold a request.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "runs.h"

#define RUNS_MAX_DEPTH 16
#define RUNS_MAX_DIRS 100000

struct walk {
    struct ui_strv *out; /* run names found */
    size_t n_dirs;       /* directories opened so far */
};

/* Returns 1 when entry name of dir is a directory (no symlink). */
static int is_dir(int dirfd, const struct dirent *de)
{
    struct stat st;

    if (de->d_type == DT_DIR)
        return 1;
    if (de->d_type != DT_UNKNOWN)
        return 0;
    if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return 0;
    return S_ISDIR(st.st_mode);
}

static int walk_dir(struct walk *w, int dirfd, const char *rel, int depth, int in_run);

/* Visits child directory name of dirfd, whose path is rel/name. */
static int visit(struct walk *w, int dirfd, const char *rel, const char *name, int depth)
{
    char path[PATH_MAX];
    int fd, run, rc, n;

    n = *rel ? snprintf(path, sizeof(path), "%s/%s", rel, name)
             : snprintf(path, sizeof(path), "%s", name);
    if (n < 0 || (size_t)n >= sizeof(path))
        return 0;
    fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0; /* vanished or unreadable: not a run */
    run = ui_has_file_at(fd, "tools.json");
    rc = run ? ui_strv_add(w->out, path) : 0;
    if (rc == 0)
        rc = walk_dir(w, fd, path, depth + 1, run);
    close(fd);
    return rc;
}

/* Walks directory dirfd (path rel); closes nothing it did not open. */
static int walk_dir(struct walk *w, int dirfd, const char *rel, int depth, int in_run)
{
    struct dirent *de;
    DIR *d;
    int fd, rc = 0;

    if (depth > RUNS_MAX_DEPTH || ++w->n_dirs > RUNS_MAX_DIRS)
        return 0;
    fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    d = fdopendir(fd);
    if (!d) {
        rc = -errno;
        close(fd);
        return rc;
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (!ui_name_ok(de->d_name) || !is_dir(dirfd, de))
            continue;
        if (in_run && (strcmp(de->d_name, "hosts") == 0 || strcmp(de->d_name, "raw") == 0))
            continue;
        rc = visit(w, dirfd, rel, de->d_name, depth);
    }
    closedir(d);
    return rc;
}

int ui_runs_find(int mountfd, struct ui_strv *out)
{
    struct walk w = {out, 0};
    int rc = walk_dir(&w, mountfd, "", 0, 0);

    if (rc == 0)
        ui_strv_sort(out, 1);
    return rc;
}
