/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checked names and no-follow opening below a root directory (files.h).
 * The root is opened afresh for each request, so a mount made after the
 * server started is seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

int ui_name_ok(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > NAME_MAX || strchr(name, '/'))
        return 0;
    return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

int ui_relpath_ok(const char *rel)
{
    const char *p = rel;
    const char *slash;
    size_t n;

    if (!*rel || *rel == '/' || strlen(rel) >= PATH_MAX)
        return 0;
    for (;;) {
        slash = strchr(p, '/');
        n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || n > NAME_MAX)
            return 0;
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        if (!slash)
            return 1;
        p = slash + 1;
    }
}

int ui_open_root(const char *root)
{
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    return fd < 0 ? -errno : fd;
}

int ui_open_dir_at(int dirfd, const char *rel)
{
    char *copy, *p, *slash;
    int fd, next, err = 0;

    if (!*rel) {
        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
    }
    if (!ui_relpath_ok(rel))
        return -EINVAL;
    copy = strdup(rel);
    if (!copy)
        return -ENOMEM;
    fd = dirfd;
    for (p = copy; p; p = slash ? slash + 1 : NULL) {
        slash = strchr(p, '/');
        if (slash)
            *slash = '\0';
        next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0)
            err = errno == ELOOP ? -ENOENT : -errno;
        if (fd != dirfd)
            close(fd);
        if (err)
            break;
        fd = next;
    }
    free(copy);
    return err ? err : fd;
}

int ui_has_file_at(int dirfd, const char *name)
{
    struct stat st;

    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return 0;
    return S_ISREG(st.st_mode);
}

int ui_open_file_at(int dirfd, const char *name)
{
    struct stat st;
    int fd;

    if (!ui_name_ok(name))
        return -EINVAL;
    /* Check the type first: opening a FIFO would block. */
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -ENOENT;
    fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ELOOP ? -ENOENT : -errno;
    if (fstat(fd, &st) != 0) {
        int err = -errno;

        close(fd);
        return err;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return -ENOENT;
    }
    return fd;
}

long ui_read_full(int fd, void *p, size_t n)
{
    size_t got = 0;
    ssize_t r;

    while (got < n) {
        r = read(fd, (char *)p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (long)got;
}

int ui_read_all(int fd, size_t max, struct ui_buf *out)
{
    char chunk[16384];
    long r;

    for (;;) {
        r = ui_read_full(fd, chunk, sizeof(chunk));
        if (r < 0)
            return (int)r;
        if (r == 0)
            break;
        if (out->len + (size_t)r > max)
            return -EFBIG;
        ui_buf_add(out, chunk, (size_t)r);
        if (ui_buf_finish(out))
            return ui_buf_finish(out);
        if ((size_t)r < sizeof(chunk))
            break;
    }
    return 0;
}
