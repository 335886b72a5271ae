/* SPDX-License-Identifier: Apache-2.0 */
/*
 * XProf's backend routes (spec 4.2), answered from the mount: runs,
 * run_tools, hosts, data, data_csv, module_list, version, config,
 * capture_profile, plus run_files and data_txt for the bundled page.
 */
#ifndef UI_ROUTES_H
#define UI_ROUTES_H

#include <microhttpd.h>

#include "conf.h"
#include "reply.h"

/* One request, as the routes see it. */
struct ui_req {
    struct MHD_Connection *conn; /* for the query parameters */
    const struct ui_conf *conf;  /* the server's configuration */
};

/* A route fills r (status, type, body) and never sends anything itself. */
typedef void (*ui_route_fn)(const struct ui_req *q, struct ui_reply *r);

/* Returns the route for an exact path ("/runs"), or NULL. */
ui_route_fn ui_route_find(const char *path);

/* Returns query parameter key of the request, or NULL. */
const char *ui_req_arg(const struct ui_req *q, const char *key);

/*
 * Opens the directory of the run named by parameter "run", checking the
 * name and that the directory is a run (holds tools.json). Returns an fd,
 * or -1 with r filled (400 bad name, 404 unknown run, ...).
 */
int ui_req_open_run(const struct ui_req *q, struct ui_reply *r);

/* The /data, /data_csv and /data_txt routes (data.c). */
void ui_route_data(const struct ui_req *q, struct ui_reply *r);
void ui_route_data_csv(const struct ui_req *q, struct ui_reply *r);
void ui_route_data_txt(const struct ui_req *q, struct ui_reply *r);

#endif
