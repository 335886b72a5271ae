/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The server's configuration, filled from the command line by main.c and
 * read (never written) by every request thread.
 */
#ifndef UI_CONF_H
#define UI_CONF_H

struct ui_conf {
    char *mount;                    /* canonical path of the mount point */
    char *static_dir;               /* canonical --static DIR, or NULL for the bundled page */
    const char *host;               /* address to listen on */
    unsigned int port;              /* port to listen on; 0 picks a free one */
    int quiet;                      /* 1: no access log lines */
    unsigned int request_timeout_s; /* time a client has to send a request */
};

#endif
