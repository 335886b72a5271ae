/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sends a prepared reply on an MHD connection: compresses it when the
 * client accepts gzip, streams file bodies, adds XProf's headers.
 */
#ifndef UI_RESPOND_H
#define UI_RESPOND_H

#include <microhttpd.h>

#include "reply.h"

/*
 * Queues r on conn (gzip when gzip is 1) and releases r. A file body is
 * read ahead first, so a read error still becomes an error status. The
 * status actually sent is stored in *status. Returns MHD's result.
 */
enum MHD_Result ui_respond(struct MHD_Connection *conn, struct ui_reply *r, int gzip,
                           unsigned int *status);

#endif
