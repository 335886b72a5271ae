/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Serving the frontend (site.h): from the embedded page, or from a
 * directory opened without following symlinks.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "assets.h"
#include "files.h"
#include "site.h"

/* The file name a URL path asks for; "" and "local" mean index.html. */
static const char *file_of(const char *path)
{
    const char *rel = path + 1;

    if (!*rel || strcmp(rel, "local") == 0)
        return "index.html";
    return rel;
}

static void bundled(const char *rel, struct ui_reply *r)
{
    const struct ui_asset *a = ui_asset_find(rel);

    if (!a) {
        rel = "index.html";
        a = ui_asset_find(rel);
    }
    if (!a) {
        ui_reply_text(r, 404, "not found: '%s'", rel);
        return;
    }
    ui_reply_static(r, ui_mime_type(rel), a->data, a->len);
    r->csp = ui_csp_page;
}

/* Opens rel below the directory rootfd; an fd or a negative errno. */
static int open_rel(int rootfd, const char *rel)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(rel, '/');
    int dfd, fd;

    if (!ui_relpath_ok(rel))
        return -EINVAL;
    if (!slash)
        return ui_open_file_at(rootfd, rel);
    if ((size_t)(slash - rel) >= sizeof(dir))
        return -ENAMETOOLONG;
    memcpy(dir, rel, (size_t)(slash - rel));
    dir[slash - rel] = '\0';
    dfd = ui_open_dir_at(rootfd, dir);
    if (dfd < 0)
        return dfd;
    fd = ui_open_file_at(dfd, slash + 1);
    close(dfd);
    return fd;
}

static void from_dir(const char *root, const char *rel, struct ui_reply *r)
{
    int rootfd = ui_open_root(root);
    int fd;

    if (rootfd < 0) {
        ui_reply_errno(r, rootfd, root);
        return;
    }
    fd = open_rel(rootfd, rel);
    if (fd == -ENOENT || fd == -ENOTDIR) {
        rel = "index.html";
        fd = ui_open_file_at(rootfd, rel);
    }
    close(rootfd);
    if (fd < 0) {
        ui_reply_errno(r, fd, rel);
        return;
    }
    ui_reply_file(r, ui_mime_type(rel), fd);
}

void ui_site_reply(const struct ui_conf *conf, const char *path, struct ui_reply *r)
{
    const char *rel = file_of(path);

    if (conf->static_dir)
        from_dir(conf->static_dir, rel, r);
    else
        bundled(rel, r);
}
