/*
 * query.h - the `?name=value&...` options of a virtual file.
 *
 * Names and values are percent-decoded. Each tool declares the keys it takes
 * with a type and a range (struct query_key); anything else is an error, never
 * a silent default: unknown keys, repeated keys, values that are not numbers,
 * NaN, infinities and out-of-range numbers all give -EINVAL and a reason.
 */
#ifndef XPROFS_QUERY_H
#define XPROFS_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum query_type {
    Q_STRING, /* any text */
    Q_DOUBLE, /* finite number within [min, max] */
    Q_INT,    /* integer within [min, max] */
    Q_BOOL,   /* true/false/1/0 */
};

struct query_key {
    const char *name;     /* key */
    enum query_type type; /* value type */
    double min;           /* Q_DOUBLE, Q_INT: smallest allowed */
    double max;           /* Q_DOUBLE, Q_INT: largest allowed */
};

#define QUERY_MAX_PARAMS 32

struct query_param {
    char *name;  /* decoded key */
    char *value; /* decoded value */
    double num;  /* numeric value for Q_DOUBLE / Q_INT / Q_BOOL */
};

struct query {
    struct query_param params[QUERY_MAX_PARAMS]; /* sorted by name */
    int n;                                       /* entries in params */
};

/* Parse s (without the '?') against keys (terminated by a {NULL} entry; NULL
 * keys accepts no option). Returns 0 or -EINVAL with err. An empty string is
 * an empty query. */
int query_parse(const char *s, const struct query_key *keys, struct query *q, struct xp_err *err);

/* Release the strings of q. */
void query_free(struct query *q);

/* The value of name, or NULL if absent. */
const char *query_get(const struct query *q, const char *name);

/* The numeric value of name into *v; 1 if present, 0 if absent. */
int query_num(const struct query *q, const char *name, double *v);

/* Canonical text of q (sorted, re-encoded) into buf; for cache keys. */
void query_canonical(const struct query *q, char *buf, size_t n);

/* Percent-decode s[0..n) into a malloc'd string; NULL on a bad escape or %00. */
char *query_unescape(const char *s, size_t n);

#endif
