/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server: libmicrohttpd with a thread per connection (reads from
 * the mount may block while it computes), bounded connections and request
 * size, GET and HEAD only, and checked request paths.
 */
#ifndef UI_SERVER_H
#define UI_SERVER_H

#include "conf.h"

struct ui_server;

/*
 * Starts serving conf (which must outlive the server) and stores the port
 * actually bound in *port. Returns the server, or NULL with a message on
 * stderr.
 */
struct ui_server *ui_server_start(const struct ui_conf *conf, unsigned int *port);

/* Stops accepting, waits for the running requests and frees the server. */
void ui_server_stop(struct ui_server *s);

#endif
