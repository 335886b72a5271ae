/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Safe access to files under a root directory (the mount, or --static DIR).
 * Names from requests are checked, then opened one component at a time
 * with openat(O_NOFOLLOW), so no name can leave the root: no "..", no
 * absolute path, no symlink. Nothing here writes.
 */
#ifndef UI_FILES_H
#define UI_FILES_H

#include <stddef.h>

#include "buf.h"

/* Returns 1 when name is one path component: not empty, ".", "..", no '/'. */
int ui_name_ok(const char *name);

/*
 * Returns 1 when rel is a relative path of good components ("a/b/run"):
 * no leading '/', no empty, "." or ".." component, at most PATH_MAX bytes.
 */
int ui_relpath_ok(const char *rel);

/* Opens the root directory; returns an fd or a negative errno. */
int ui_open_root(const char *root);

/*
 * Opens directory rel (checked with ui_relpath_ok) below dirfd, following
 * no symlink; "" opens dirfd itself again. Returns an fd or a negative
 * errno (-EINVAL for a bad name, -ENOENT, -ENOTDIR, ...).
 */
int ui_open_dir_at(int dirfd, const char *rel);

/*
 * Opens regular file name (one component) in dirfd for reading, following
 * no symlink. Returns an fd or a negative errno; a directory or special
 * file gives -ENOENT.
 */
int ui_open_file_at(int dirfd, const char *name);

/* Returns 1 when dirfd holds a regular file called name (no open). */
int ui_has_file_at(int dirfd, const char *name);

/*
 * Reads the whole of fd (at most max bytes) into out, which the caller
 * initialised. Returns 0, -EFBIG when longer, or the read's negative errno.
 */
int ui_read_all(int fd, size_t max, struct ui_buf *out);

/* Reads up to n bytes, retrying on EINTR and short reads; returns bytes or -errno. */
long ui_read_full(int fd, void *p, size_t n);

#endif
