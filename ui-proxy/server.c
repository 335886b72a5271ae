/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Requests in (server.h): each connection gets a context when MHD accepts
 * it (its place on the guard's list, guard.h); each request on it gets its
 * part of that context from the URI callback (the raw request target, for
 * the path checks and the log), then one reply from a route or the site,
 * then a log line when MHD is done with it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "access_log.h"
#include "guard.h"
#include "gzip.h"
#include "respond.h"
#include "routes.h"
#include "server.h"
#include "site.h"

#define MAX_CONNECTIONS 256           /* open at once; more wait in the listen queue */
#define PER_ADDRESS 64                /* open at once from one client address */
#define CROWDED 192                   /* open connections that make the server crowded */
#define CROWDED_GRACE_MS 1000         /* time to send a request when crowded */
#define MAX_REQUEST_BYTES (64 * 1024) /* request line and headers */
#define MAX_QUERY_FIELDS 64           /* ?a=1&b=2...: more get 431 */
#define IDLE_TIMEOUT_S 120            /* idle keep-alive connections */
#define THREAD_STACK (512 * 1024)     /* bytes per connection thread */
#define PREFIX "/data/plugin/profile"

struct ui_server {
    struct MHD_Daemon *daemon;  /* the HTTP server */
    struct ui_guard *guard;     /* request deadlines of its connections */
    const struct ui_conf *conf; /* its configuration */
    int loopback;               /* listening on a loopback address only */
};

/*
 * The request under way on a connection. It belongs to the connection
 * (struct connection): made when MHD accepts it and freed when MHD closes
 * it (conn_notify), both of which MHD always reports, so a request MHD
 * drops before any handler runs (a request line or headers past its
 * memory) leaks nothing. Each request line resets it (uri_seen);
 * request_done logs it.
 */
struct request {
    struct timespec start; /* when the request line was read */
    char *uri;             /* raw request target, NULL between requests */
    char method[16];       /* request method, for the log */
    int seen;              /* the access handler was called once */
    int too_many_fields;   /* the query had more than MAX_QUERY_FIELDS fields */
    unsigned int status;   /* status sent; 0 until then */
};

/* What MHD keeps for a connection (its socket context). */
struct connection {
    struct ui_guard_conn guard; /* its place on the guard's list */
    struct request rq;          /* the request under way */
};

/* The context of conn, or NULL when it has none. */
static struct connection *connection_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

/*
 * A connection without a context (no memory, no socket, no clock) is
 * answered by no handler: on_request closes it.
 */
static void conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
    struct ui_server *s = cls;
    struct connection *c = *socket_context;
    const union MHD_ConnectionInfo *ci;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        c = calloc(1, sizeof(*c));
        if (c && (!ci || ui_guard_add(s->guard, &c->guard, ci->connect_fd) != 0)) {
            free(c);
            c = NULL;
        }
        *socket_context = c;
    } else if (c) {
        ui_guard_remove(s->guard, &c->guard);
        free(c->rq.uri);
        free(c);
        *socket_context = NULL;
    }
}

/* The number of '&'-separated fields of the query of uri. */
static size_t query_fields(const char *uri)
{
    const char *q = strchr(uri, '?');
    size_t n;

    if (!q || q[1] == '\0')
        return 0;
    for (n = 1; (q = strchr(q + 1, '&')) != NULL; n++)
        ;
    return n;
}

static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct connection *c = connection_of(conn);
    struct request *rq = c ? &c->rq : NULL;

    (void)cls;
    if (!rq)
        return NULL;
    free(rq->uri);
    memset(rq, 0, sizeof(*rq));
    rq->uri = strdup(uri);
    if (!rq->uri || clock_gettime(CLOCK_MONOTONIC, &rq->start) != 0) {
        free(rq->uri);
        rq->uri = NULL;
        return NULL;
    }
    /*
     * MHD stores each query field in the connection's memory right after
     * this call, and with a few hundred of them it runs out and closes the
     * connection unanswered. No route takes more than a dozen, so a query
     * past MAX_QUERY_FIELDS is cut off here, where MHD's copy of the line
     * can still be changed (the text after '?' is what it parses next), and
     * the handler answers 431 with the reason. The log keeps rq->uri.
     */
    if (query_fields(uri) > MAX_QUERY_FIELDS) {
        char *q = strchr((char *)uri, '?');
        q[1] = '\0';
        rq->too_many_fields = 1;
    }
    return rq;
}

static void request_done(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct ui_server *s = cls;
    struct request *rq = *req_cls;
    struct connection *c = connection_of(conn);
    struct timespec now;
    double secs = 0;

    (void)toe;
    if (c)
        ui_guard_waiting(s->guard, &c->guard); /* the next request's deadline runs */
    if (!rq)
        return;
    if (!s->conf->quiet && rq->status && rq->uri) {
        if (clock_gettime(CLOCK_MONOTONIC, &now) == 0)
            secs = (double)(now.tv_sec - rq->start.tv_sec) +
                   (double)(now.tv_nsec - rq->start.tv_nsec) / 1e9;
        ui_access_log(rq->method, rq->uri, rq->status, secs);
    }
    free(rq->uri);
    rq->uri = NULL; /* the connection frees rq itself */
    *req_cls = NULL;
}

/* Returns 1 when the raw request target encodes a '/', '\\' or NUL. */
static int encoded_separator(const char *uri)
{
    size_t n = strcspn(uri, "?#");
    size_t i;

    if (strstr(uri, "%00"))
        return 1;
    for (i = 0; i + 2 < n; i++) {
        if (uri[i] != '%')
            continue;
        if (strncasecmp(uri + i, "%2f", 3) == 0 || strncasecmp(uri + i, "%5c", 3) == 0)
            return 1;
    }
    return 0;
}

/* Returns 1 when a decoded path is safe: absolute, no "." or ".." or "//". */
static int path_ok(const char *url)
{
    const char *p, *next;
    size_t n;

    if (url[0] != '/' || strchr(url, '\\'))
        return 0;
    for (p = url + 1; *p; p = next) {
        next = strchr(p, '/');
        n = next ? (size_t)(next - p) : strlen(p);
        next = next ? next + 1 : p + n;
        if (n == 0 && *next)
            return 0;
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
    }
    return 1;
}

/* Strips XProf's prefix and one trailing '/' from url into path. */
static int route_path(const char *url, char *path, size_t size)
{
    size_t n, plen = strlen(PREFIX);

    if (strncmp(url, PREFIX, plen) == 0 && (url[plen] == '/' || url[plen] == '\0'))
        url += plen;
    n = strlen(url);
    if (n >= size)
        return -1;
    if (n == 0) {
        memcpy(path, "/", 2);
        return 0;
    }
    memcpy(path, url, n + 1);
    if (n > 1 && path[n - 1] == '/')
        path[n - 1] = '\0';
    return 0;
}

/*
 * Returns 1 when the Host header names this machine's loopback. A server
 * bound to loopback answers only such requests, so a web page elsewhere
 * cannot read the mount through DNS rebinding.
 */
static int host_header_ok(struct MHD_Connection *conn)
{
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    size_t n;

    if (!h)
        return 1; /* HTTP/1.0 without Host (dispatch refuses it for 1.1) */
    if (h[0] == '[')
        return strncmp(h, "[::1]", 5) == 0 && (h[5] == '\0' || h[5] == ':');
    n = strcspn(h, ":");
    if (n == 9 && strncasecmp(h, "localhost", 9) == 0)
        return 1;
    if (n < 4 || strncmp(h, "127.", 4) != 0)
        return 0;
    return strspn(h, "0123456789.") == n;
}

/* Fills r for a GET or HEAD of url. */
static void dispatch(struct ui_server *s, struct MHD_Connection *conn, struct request *rq,
                     const char *url, const char *version, struct ui_reply *r)
{
    struct ui_req q = {conn, s->conf};
    char path[4096];
    ui_route_fn fn;

    if (rq->too_many_fields) {
        ui_reply_text(r, 431, "request header fields too large: more than %d query fields",
                      MAX_QUERY_FIELDS);
        return;
    }
    if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
        !MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)) {
        ui_reply_text(r, 400, "bad request: an HTTP/1.1 request needs a Host header");
        return;
    }
    if (s->loopback && !host_header_ok(conn)) {
        ui_reply_text(r, 403, "forbidden: this server answers only for localhost");
        return;
    }
    if (encoded_separator(rq->uri) || !path_ok(url)) {
        ui_reply_text(r, 400, "bad request: path '%s' is not allowed", url);
        return;
    }
    if (route_path(url, path, sizeof(path)) != 0) {
        ui_reply_text(r, 400, "bad request: path too long");
        return;
    }
    fn = ui_route_find(path);
    if (fn)
        fn(&q, r);
    else
        ui_site_reply(s->conf, path, r);
}

/*
 * MHD calls this first when the headers are in, then once per piece of
 * body, then once more with nothing: GET and HEAD are answered on that
 * last call, so the connection can be kept alive; other methods, and a GET
 * that sends a body, are answered at once (and the connection closed).
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    struct ui_server *s = cls;
    struct request *rq = *req_cls;
    struct connection *c = connection_of(conn);
    struct ui_reply r;
    const char *accept;
    int get;

    (void)upload_data;
    if (!rq || !c)
        return MHD_NO;
    if (rq->status) {
        *upload_data_size = 0; /* answered already: discard a body */
        return MHD_YES;
    }
    get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    if (!rq->seen) {
        rq->seen = 1;
        snprintf(rq->method, sizeof(rq->method), "%s", method);
        if (get)
            return MHD_YES;
    }
    ui_guard_answering(s->guard, &c->guard); /* no deadline while it answers */
    ui_reply_init(&r);
    if (!get) {
        ui_reply_text(&r, 405, "method not allowed: '%s'", method);
        r.allow = "GET, HEAD";
    } else if (*upload_data_size != 0) {
        ui_reply_text(&r, 400, "bad request: a %s has no body", method);
    } else {
        dispatch(s, conn, rq, url, version, &r);
    }
    accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    return ui_respond(conn, &r, ui_gzip_accepted(accept), &rq->status);
}

/* Returns 1 for 127.0.0.0/8 and ::1. */
static int is_loopback(const struct sockaddr_storage *ss)
{
    const struct sockaddr_in *v4 = (const struct sockaddr_in *)ss;
    const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)ss;

    if (ss->ss_family == AF_INET)
        return (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    return ss->ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
}

/* Resolves host:port into ss; 0 or -1 with a message. */
static int listen_addr(const char *host, unsigned int port, struct sockaddr_storage *ss, int *v6)
{
    struct addrinfo hints, *res;
    int rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "xprofs-ui: cannot resolve '%s': %s\n", host, gai_strerror(rc));
        return -1;
    }
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *v6 = res->ai_family == AF_INET6;
    if (*v6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    freeaddrinfo(res);
    return 0;
}

struct ui_server *ui_server_start(const struct ui_conf *conf, unsigned int *port)
{
    const union MHD_DaemonInfo *info;
    struct sockaddr_storage ss;
    struct ui_server *s;
    /*
     * select(), not poll(): with poll() libmicrohttpd 0.9.75 accepts past the
     * connection limit and resets the connection; with select() it leaves
     * the listening socket alone at the limit, so a new client waits in the
     * listen queue until the guard or a closing client frees a slot. 256
     * connections and their files stay far below FD_SETSIZE.
     */
    unsigned int flags =
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    int v6;

    if (listen_addr(conf->host, conf->port, &ss, &v6) != 0)
        return NULL;
    s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->conf = conf;
    s->loopback = is_loopback(&ss);
    s->guard = ui_guard_start(conf->request_timeout_s * 1000, CROWDED_GRACE_MS, CROWDED);
    if (!s->guard) {
        fprintf(stderr, "xprofs-ui: cannot start the request watchdog: %s\n", strerror(errno));
        free(s);
        return NULL;
    }
    if (v6)
        flags |= MHD_USE_IPv6;
    s->daemon = MHD_start_daemon(
        flags, (uint16_t)conf->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)PER_ADDRESS,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MAX_REQUEST_BYTES,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_TIMEOUT_S, MHD_OPTION_THREAD_STACK_SIZE,
        (size_t)THREAD_STACK, MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s,
        MHD_OPTION_URI_LOG_CALLBACK, uri_seen, s, MHD_OPTION_NOTIFY_COMPLETED, request_done, s,
        MHD_OPTION_END);
    if (!s->daemon) {
        fprintf(stderr, "xprofs-ui: cannot listen on %s port %u\n", conf->host, conf->port);
        ui_guard_stop(s->guard);
        free(s);
        return NULL;
    }
    info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    *port = info ? info->port : conf->port;
    return s;
}

void ui_server_stop(struct ui_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->daemon); /* closes every connection: the guard's list is empty */
    ui_guard_stop(s->guard);
    free(s);
}
