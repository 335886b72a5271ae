/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs-ui MOUNTPOINT [--port 8791] [--host 127.0.0.1] [--static DIR]
 *                      [--request-timeout 10] [--quiet]
 *
 * A small HTTP server in front of an xprofs mount: it answers the XProf
 * web frontend's backend routes by reading the mount's files, and serves
 * a bundled page (or the XProf frontend from --static DIR). This file
 * parses the command line, starts the server and waits for a signal.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/version.h"
#include "conf.h"
#include "server.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: xprofs-ui MOUNTPOINT [--port 8791] [--host 127.0.0.1] [--static DIR]\n"
               "                 [--request-timeout 10] [--quiet]\n"
               "\n"
               "Serves the XProf web frontend's routes from an xprofs mount.\n"
               "  --port N      port to listen on (0: any free port; default 8791)\n"
               "  --host ADDR   address to listen on (default 127.0.0.1)\n"
               "  --static DIR  serve the XProf frontend files in DIR instead of the\n"
               "                bundled page\n"
               "  --request-timeout S  seconds a client has to send a request once the\n"
               "                connection is ready for it (1 to 3600; default 10)\n"
               "  --quiet       no access log on stderr\n");
}

/* Parses a port number; 0 or -1. */
static int parse_port(const char *s, unsigned int *port)
{
    unsigned long v;
    char *end;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > 65535 || s[0] == '-')
        return -1;
    *port = (unsigned int)v;
    return 0;
}

/* Parses the request timeout in seconds, 1 to 3600; 0 or -1. */
static int parse_timeout(const char *s, unsigned int *secs)
{
    unsigned long v;
    char *end;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > 3600 || s[0] == '-')
        return -1;
    *secs = (unsigned int)v;
    return 0;
}

/* Canonical path of an existing directory, malloc'd; NULL with a message. */
static char *canonical_dir(const char *path, const char *what)
{
    struct stat st;
    char *real = realpath(path, NULL);

    if (!real) {
        fprintf(stderr, "xprofs-ui: %s '%s': %s\n", what, path, strerror(errno));
        return NULL;
    }
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "xprofs-ui: %s '%s' is not a directory\n", what, path);
        free(real);
        return NULL;
    }
    return real;
}

/*
 * Fills conf from argv. Options take their value as the next argument or
 * after '='. Returns 0, 1 after --help or --version, or -1 with a message.
 */
static int parse_args(int argc, char **argv, struct ui_conf *conf, const char **static_arg)
{
    const char *mount = NULL;
    const char *val;
    size_t n;
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 ||
            (argc == 2 && strcmp(a, "help") == 0)) {
            usage(stdout);
            return 1;
        }
        if (strcmp(a, "--version") == 0) {
            printf("xprofs-ui %s\n", XPROFS_VERSION);
            return 1;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            conf->quiet = 1;
            continue;
        }
        if (a[0] == '-' && strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "xprofs-ui: unknown option '%s'\n", a);
            return -1;
        }
        if (strncmp(a, "--", 2) != 0) {
            if (mount) {
                fprintf(stderr, "xprofs-ui: more than one MOUNTPOINT given\n");
                return -1;
            }
            mount = a;
            continue;
        }
        n = strcspn(a, "=");
        if (!((n == 6 && strncmp(a, "--port", 6) == 0) ||
              (n == 6 && strncmp(a, "--host", 6) == 0) ||
              (n == 8 && strncmp(a, "--static", 8) == 0) ||
              (n == 17 && strncmp(a, "--request-timeout", 17) == 0))) {
            fprintf(stderr, "xprofs-ui: unknown option '%.*s'\n", (int)n, a);
            return -1;
        }
        val = a[n] == '=' ? a + n + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!val) {
            fprintf(stderr, "xprofs-ui: option '%s' needs a value\n", a);
            return -1;
        }
        if (strncmp(a, "--port", n) == 0 && n == 6) {
            if (parse_port(val, &conf->port) != 0) {
                fprintf(stderr, "xprofs-ui: bad port '%s'\n", val);
                return -1;
            }
        } else if (strncmp(a, "--host", n) == 0 && n == 6) {
            conf->host = val;
        } else if (strncmp(a, "--static", n) == 0 && n == 8) {
            *static_arg = val;
        } else if (strncmp(a, "--request-timeout", n) == 0 && n == 17) {
            if (parse_timeout(val, &conf->request_timeout_s) != 0) {
                fprintf(stderr, "xprofs-ui: bad request timeout '%s' (1 to 3600 seconds)\n", val);
                return -1;
            }
        } else {
            fprintf(stderr, "xprofs-ui: unknown option '%.*s'\n", (int)n, a);
            return -1;
        }
    }
    if (!mount) {
        usage(stderr);
        return -1;
    }
    conf->mount = canonical_dir(mount, "mount point");
    return conf->mount ? 0 : -1;
}

/* Blocks the stop signals in every thread; returns 0 or -1. */
static int block_signals(sigset_t *set)
{
    if (sigemptyset(set) || sigaddset(set, SIGINT) || sigaddset(set, SIGTERM) ||
        sigaddset(set, SIGHUP))
        return -1;
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return -1;
    return pthread_sigmask(SIG_BLOCK, set, NULL) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct ui_conf conf = {NULL, NULL, "127.0.0.1", 8791, 0, 10};
    const char *static_arg = NULL;
    struct ui_server *server;
    unsigned int port;
    sigset_t set;
    int rc, sig;

    rc = parse_args(argc, argv, &conf, &static_arg);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (static_arg) {
        conf.static_dir = canonical_dir(static_arg, "static directory");
        if (!conf.static_dir)
            goto err_mount;
    }
    if (block_signals(&set) != 0) {
        fprintf(stderr, "xprofs-ui: cannot set up signals: %s\n", strerror(errno));
        goto err_static;
    }
    server = ui_server_start(&conf, &port);
    if (!server)
        goto err_static;
    fprintf(stderr, "xprofs-ui: serving %s on http://%s%s%s:%u/\n", conf.mount,
            strchr(conf.host, ':') ? "[" : "", conf.host, strchr(conf.host, ':') ? "]" : "", port);
    fflush(stderr);
    if (sigwait(&set, &sig) != 0)
        sig = 0;
    fprintf(stderr, "xprofs-ui: stopping (signal %d)\n", sig);
    ui_server_stop(server);
    free(conf.static_dir);
    free(conf.mount);
    return 0;

err_static:
    free(conf.static_dir);
err_mount:
    free(conf.mount);
    return 1;
}
