/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The small XProf routes and the route table (routes.h). Bodies composed
 * here are JSON written as Python's json.dumps(sort_keys=True) writes
 * them, since that is what XProf's server sends.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/version.h"
#include "files.h"
#include "json.h"
#include "routes.h"
#include "runs.h"
#include "strv.h"

#define SMALL_FILE_MAX (16u << 20) /* hosts.json, module_list.json */
#define BODY_MAX (64u << 20)       /* composed bodies */

/* Tools XProf answers for all hosts only, and those that add ALL_HOSTS. */
static const char *const all_hosts_only[] = {"overview_page", "pod_viewer", "smart_suggestion"};
static const char *const all_hosts_too[] = {
    "input_pipeline_analyzer", "framework_op_stats", "kernel_stats",
    "megascale_stats",         "overview_page",      "pod_viewer"};

const char *ui_req_arg(const struct ui_req *q, const char *key)
{
    return MHD_lookup_connection_value(q->conn, MHD_GET_ARGUMENT_KIND, key);
}

int ui_req_open_run(const struct ui_req *q, struct ui_reply *r)
{
    const char *run = ui_req_arg(q, "run");
    int rootfd, fd;

    if (!run || !*run) {
        ui_reply_text(r, 400, "bad request: missing parameter 'run'");
        return -1;
    }
    if (!ui_relpath_ok(run)) {
        ui_reply_text(r, 400, "bad request: bad run name '%s'", run);
        return -1;
    }
    rootfd = ui_open_root(q->conf->mount);
    if (rootfd < 0) {
        ui_reply_errno(r, rootfd, q->conf->mount);
        r->status = 500;
        return -1;
    }
    fd = ui_open_dir_at(rootfd, run);
    close(rootfd);
    if (fd >= 0 && !ui_has_file_at(fd, "tools.json")) {
        close(fd);
        fd = -ENOENT;
    }
    if (fd < 0) {
        if (fd == -ENOENT || fd == -ENOTDIR)
            ui_reply_text(r, 404, "not found: unknown run '%s'", run);
        else
            ui_reply_errno(r, fd, run);
        return -1;
    }
    return fd;
}

/* Reads small file name of dirfd into out; 0, or -1 with r filled. */
static int read_small(int dirfd, const char *name, struct ui_buf *out, struct ui_reply *r)
{
    int fd = ui_open_file_at(dirfd, name);
    int rc;

    if (fd < 0) {
        ui_reply_errno(r, fd, name);
        return -1;
    }
    ui_buf_init(out, SMALL_FILE_MAX);
    rc = ui_read_all(fd, SMALL_FILE_MAX, out);
    close(fd);
    if (rc) {
        ui_buf_release(out);
        ui_reply_errno(r, rc, name);
        return -1;
    }
    return 0;
}

/* Reads the strings of a JSON list file; 0, or -1 with r filled. */
static int read_strings(int dirfd, const char *name, const char *key, struct ui_strv *out,
                        struct ui_reply *r)
{
    struct ui_buf text;
    int rc;

    if (read_small(dirfd, name, &text, r))
        return -1;
    rc = ui_json_strings(text.data ? text.data : "", text.len, key, out);
    ui_buf_release(&text);
    if (rc) {
        ui_strv_release(out);
        ui_reply_text(r, 500, "error: '%s' is not the JSON list expected", name);
        return -1;
    }
    return 0;
}

static int listed(const char *const *names, size_t n, const char *s)
{
    size_t i;

    for (i = 0; s && i < n; i++)
        if (strcmp(names[i], s) == 0)
            return 1;
    return 0;
}

/* Writes a JSON list of strings, as json.dumps separates it. */
static void add_str_list(struct ui_buf *b, const struct ui_strv *sv)
{
    size_t i;

    ui_buf_adds(b, "[");
    for (i = 0; i < sv->n; i++) {
        if (i)
            ui_buf_adds(b, ", ");
        ui_json_add_str(b, sv->v[i]);
    }
    ui_buf_adds(b, "]");
}

static void route_runs(const struct ui_req *q, struct ui_reply *r)
{
    struct ui_strv runs = UI_STRV_INIT;
    struct ui_buf b;
    int rootfd = ui_open_root(q->conf->mount);
    int rc;

    if (rootfd < 0) {
        ui_reply_errno(r, rootfd, q->conf->mount);
        r->status = 500;
        return;
    }
    rc = ui_runs_find(rootfd, &runs);
    close(rootfd);
    if (rc) {
        ui_strv_release(&runs);
        ui_reply_errno(r, rc, q->conf->mount);
        r->status = 500;
        return;
    }
    ui_buf_init(&b, BODY_MAX);
    add_str_list(&b, &runs);
    ui_strv_release(&runs);
    ui_reply_buf(r, 200, UI_TYPE_JSON, &b);
}

static void route_run_tools(const struct ui_req *q, struct ui_reply *r)
{
    int dfd = ui_req_open_run(q, r);
    int fd;

    if (dfd < 0)
        return;
    fd = ui_open_file_at(dfd, "tools.json");
    close(dfd);
    if (fd < 0)
        ui_reply_errno(r, fd, "tools.json");
    else
        ui_reply_file(r, UI_TYPE_JSON, fd);
}

/* Applies XProf's ALL_HOSTS rules (spec 3.5) to sorted hosts. */
static int all_hosts_rule(struct ui_strv *hosts, const char *tag)
{
    size_t n_only = sizeof(all_hosts_only) / sizeof(all_hosts_only[0]);
    size_t n_too = sizeof(all_hosts_too) / sizeof(all_hosts_too[0]);

    if (hosts->n <= 1)
        return 0;
    if (listed(all_hosts_only, n_only, tag)) {
        ui_strv_release(hosts);
        return ui_strv_add(hosts, "ALL_HOSTS");
    }
    if (listed(all_hosts_too, n_too, tag)) {
        int rc = ui_strv_add(hosts, "ALL_HOSTS");

        ui_strv_sort(hosts, 0);
        return rc;
    }
    return 0;
}

static void route_hosts(const struct ui_req *q, struct ui_reply *r)
{
    struct ui_strv hosts = UI_STRV_INIT;
    struct ui_buf b;
    size_t i;
    int dfd = ui_req_open_run(q, r);
    int rc;

    if (dfd < 0)
        return;
    rc = read_strings(dfd, "hosts.json", "hostname", &hosts, r);
    close(dfd);
    if (rc)
        return;
    ui_strv_sort(&hosts, 0);
    if (all_hosts_rule(&hosts, ui_req_arg(q, "tag"))) {
        ui_strv_release(&hosts);
        ui_reply_errno(r, -ENOMEM, "hosts");
        return;
    }
    ui_buf_init(&b, BODY_MAX);
    ui_buf_adds(&b, "[");
    for (i = 0; i < hosts.n; i++) {
        ui_buf_adds(&b, i ? ", {\"hostname\": " : "{\"hostname\": ");
        ui_json_add_str(&b, hosts.v[i]);
        ui_buf_adds(&b, "}");
    }
    ui_buf_adds(&b, "]");
    ui_strv_release(&hosts);
    ui_reply_buf(r, 200, UI_TYPE_JSON, &b);
}

static void route_module_list(const struct ui_req *q, struct ui_reply *r)
{
    struct ui_strv mods = UI_STRV_INIT;
    struct ui_buf b;
    size_t i;
    int dfd = ui_req_open_run(q, r);
    int rc;

    if (dfd < 0)
        return;
    rc = read_strings(dfd, "module_list.json", "name", &mods, r);
    close(dfd);
    if (rc)
        return;
    ui_buf_init(&b, BODY_MAX);
    for (i = 0; i < mods.n; i++) {
        if (i)
            ui_buf_adds(&b, ",");
        ui_buf_adds(&b, mods.v[i]);
    }
    if (mods.n == 0)
        ui_buf_adds(&b, "NO_MODULE");
    ui_strv_release(&mods);
    ui_reply_buf(r, 200, UI_TYPE_TEXT, &b);
}

/* The plain files of a run directory, for the bundled page. */
static void route_run_files(const struct ui_req *q, struct ui_reply *r)
{
    struct ui_strv names = UI_STRV_INIT;
    struct dirent *de;
    struct ui_buf b;
    DIR *d;
    int dfd = ui_req_open_run(q, r);
    int rc = 0;

    if (dfd < 0)
        return;
    d = fdopendir(dfd);
    if (!d) {
        ui_reply_errno(r, -errno, "run");
        close(dfd);
        return;
    }
    while (rc == 0 && (de = readdir(d)) != NULL)
        if (de->d_name[0] != '.' && ui_has_file_at(dirfd(d), de->d_name))
            rc = ui_strv_add(&names, de->d_name);
    closedir(d);
    ui_strv_sort(&names, 0);
    ui_buf_init(&b, BODY_MAX);
    add_str_list(&b, &names);
    ui_strv_release(&names);
    if (rc)
        ui_reply_errno(r, rc, "run");
    else
        ui_reply_buf(r, 200, UI_TYPE_JSON, &b);
}

static void route_version(const struct ui_req *q, struct ui_reply *r)
{
    static const char version[] = XPROFS_VERSION;

    (void)q;
    ui_reply_static(r, UI_TYPE_TEXT, version, sizeof(version) - 1);
}

static void route_config(const struct ui_req *q, struct ui_reply *r)
{
    static const char config[] = "{\"enableTabNameLabel\": false, "
                                 "\"hideCaptureProfileButton\": true, \"srcPathPrefix\": \"\"}";

    (void)q;
    ui_reply_static(r, UI_TYPE_JSON, config, sizeof(config) - 1);
}

static void route_capture(const struct ui_req *q, struct ui_reply *r)
{
    static const char error[] = "{\"error\": \"xprofs-ui is read-only: capture profiles with "
                                "your framework into the log directory\"}";

    (void)q;
    ui_reply_static(r, UI_TYPE_JSON, error, sizeof(error) - 1);
    r->status = 500;
}

static void route_generate_cache(const struct ui_req *q, struct ui_reply *r)
{
    (void)q;
    ui_reply_text(r, 405, "method not allowed: xprofs-ui is read-only");
}

/* The routes, sorted by path. */
static const struct {
    const char *path; /* exact path, prefix stripped */
    ui_route_fn fn;   /* its handler */
} routes[] = {
    {"/capture_profile", route_capture},
    {"/config", route_config},
    {"/data", ui_route_data},
    {"/data_csv", ui_route_data_csv},
    {"/data_txt", ui_route_data_txt},
    {"/generate_cache", route_generate_cache},
    {"/hosts", route_hosts},
    {"/module_list", route_module_list},
    {"/run_files", route_run_files},
    {"/run_tools", route_run_tools},
    {"/runs", route_runs},
    {"/version", route_version},
};

ui_route_fn ui_route_find(const char *path)
{
    size_t i;

    for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (strcmp(routes[i].path, path) == 0)
            return routes[i].fn;
    return NULL;
}
