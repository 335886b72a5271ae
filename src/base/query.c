/*
 * query.c - parsing and checking `?k=v&...` options; see query.h.
 */
#include "sort.h"
#include "query.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "hexval.h"

char *query_unescape(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    size_t i, j = 0;

    if (d == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi, lo;
            if (i + 2 >= n) {
                free(d);
                return NULL;
            }
            hi = hexval(s[i + 1]);
            lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                free(d);
                return NULL;
            }
            d[j++] = (char)(hi * 16 + lo);
            i += 2;
        } else if (s[i] == '+') {
            d[j++] = ' ';
        } else {
            d[j++] = s[i];
        }
    }
    d[j] = '\0';
    return d;
}

static const struct query_key *find_key(const struct query_key *keys, const char *name)
{
    for (; keys != NULL && keys->name != NULL; keys++) {
        if (strcmp(keys->name, name) == 0)
            return keys;
    }
    return NULL;
}

/* Check and convert one value. */
static int check_value(const struct query_key *k, struct query_param *p, struct xp_err *err)
{
    char *end;
    double v;

    switch (k->type) {
    case Q_STRING:
        return 0;
    case Q_BOOL:
        if (strcmp(p->value, "true") == 0 || strcmp(p->value, "1") == 0)
            p->num = 1;
        else if (strcmp(p->value, "false") == 0 || strcmp(p->value, "0") == 0)
            p->num = 0;
        else
            return xp_err_set(err, -EINVAL, "option %s: '%s' is not true or false", k->name,
                              p->value);
        return 0;
    case Q_DOUBLE:
    case Q_INT:
        if (p->value[0] == '\0')
            return xp_err_set(err, -EINVAL, "option %s: empty value", k->name);
        errno = 0;
        v = strtod(p->value, &end);
        if (*end != '\0' || strncasecmp(p->value, "0x", 2) == 0 || p->value[0] == ' ')
            return xp_err_set(err, -EINVAL, "option %s: '%s' is not a number", k->name, p->value);
        if (!isfinite(v) || errno == ERANGE)
            return xp_err_set(err, -EINVAL, "option %s: '%s' is not a finite number", k->name,
                              p->value);
        if (k->type == Q_INT && v != floor(v))
            return xp_err_set(err, -EINVAL, "option %s: '%s' is not an integer", k->name, p->value);
        if (v < k->min || v > k->max)
            return xp_err_set(err, -EINVAL, "option %s: %s is out of range [%g, %g]", k->name,
                              p->value, k->min, k->max);
        p->num = v;
        return 0;
    }
    return xp_err_set(err, -EINVAL, "option %s: bad type", k->name);
}

static int param_cmp(const void *a, const void *b)
{
    return strcmp(((const struct query_param *)a)->name, ((const struct query_param *)b)->name);
}

int query_parse(const char *s, const struct query_key *keys, struct query *q, struct xp_err *err)
{
    const char *p = s;
    int i, rc = 0;

    memset(q, 0, sizeof(*q));
    while (rc == 0 && p != NULL && *p != '\0') {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        struct query_param *qp;
        const struct query_key *k;

        if (len == 0) {
            rc = xp_err_set(err, -EINVAL, "empty option in query string");
            break;
        }
        if (q->n == QUERY_MAX_PARAMS) {
            rc = xp_err_set(err, -EINVAL, "too many options (at most %d)", QUERY_MAX_PARAMS);
            break;
        }
        qp = &q->params[q->n];
        qp->name = query_unescape(p, eq ? (size_t)(eq - p) : len);
        qp->value = eq ? query_unescape(eq + 1, len - (size_t)(eq - p) - 1) : strdup("");
        if (qp->name == NULL || qp->value == NULL) {
            free(qp->name);
            free(qp->value);
            qp->name = qp->value = NULL;
            rc = xp_err_set(err, -EINVAL, "bad %%-escape in query string");
            break;
        }
        q->n++;
        k = find_key(keys, qp->name);
        if (k == NULL) {
            rc = xp_err_set(err, -EINVAL, "unknown option '%s'", qp->name);
            break;
        }
        for (i = 0; i < q->n - 1; i++) {
            if (strcmp(q->params[i].name, qp->name) == 0) {
                rc = xp_err_set(err, -EINVAL, "option '%s' given twice", qp->name);
                break;
            }
        }
        if (rc == 0)
            rc = check_value(k, qp, err);
        p = amp ? amp + 1 : NULL;
        if (amp != NULL && *p == '\0')
            rc = rc ? rc : xp_err_set(err, -EINVAL, "query string ends with '&'");
    }
    if (rc != 0) {
        query_free(q);
        return rc;
    }
    xp_qsort(q->params, (size_t)q->n, sizeof(q->params[0]), param_cmp);
    return 0;
}

void query_free(struct query *q)
{
    int i;

    for (i = 0; i < q->n; i++) {
        free(q->params[i].name);
        free(q->params[i].value);
    }
    q->n = 0;
}

const char *query_get(const struct query *q, const char *name)
{
    int i;

    for (i = 0; q != NULL && i < q->n; i++) {
        if (strcmp(q->params[i].name, name) == 0)
            return q->params[i].value;
    }
    return NULL;
}

int query_num(const struct query *q, const char *name, double *v)
{
    int i;

    for (i = 0; q != NULL && i < q->n; i++) {
        if (strcmp(q->params[i].name, name) == 0) {
            *v = q->params[i].num;
            return 1;
        }
    }
    return 0;
}

/* Append s percent-encoded (all but unreserved characters). */
static size_t put_escaped(char *buf, size_t n, size_t at, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == '~';
        if (plain) {
            if (at + 1 < n)
                buf[at] = (char)c;
            at++;
        } else {
            if (at + 3 < n) {
                buf[at] = '%';
                buf[at + 1] = hex[c >> 4];
                buf[at + 2] = hex[c & 15];
            }
            at += 3;
        }
    }
    return at;
}

void query_canonical(const struct query *q, char *buf, size_t n)
{
    size_t at = 0;
    int i;

    if (n == 0)
        return;
    for (i = 0; i < q->n; i++) {
        if (i > 0) {
            if (at + 1 < n)
                buf[at] = '&';
            at++;
        }
        at = put_escaped(buf, n, at, q->params[i].name);
        if (at + 1 < n)
            buf[at] = '=';
        at++;
        at = put_escaped(buf, n, at, q->params[i].value);
    }
    buf[at < n ? at : n - 1] = '\0';
}
