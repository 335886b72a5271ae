/*
 * s3_conf.c - where an S3 client's endpoint, region and credentials come
 * from: the environment and ~/.aws/credentials; see s3.h.
 */
#include "s3.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *env_dup(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? strdup(v) : NULL;
}

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Keys of [profile] in an INI file of AWS's shape (~/.aws/config names it
 * [profile NAME], but [default]; config set). 0 if found; -ENOENT. */
static int read_credentials(const char *path, const char *profile, int config, struct s3_conf *c)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int in = 0, found = 0;

    if (f == NULL)
        return -ENOENT;
    while (fgets(line, sizeof(line), f) != NULL) {
        char *s = trim(line), *eq;
        if (s[0] == '#' || s[0] == ';' || s[0] == '\0')
            continue;
        if (s[0] == '[') {
            char *end = strchr(s, ']');
            if (end != NULL)
                *end = '\0';
            s = trim(s + 1);
            if (config && strcmp(profile, "default") != 0) {
                in = strncmp(s, "profile", 7) == 0 && isspace((unsigned char)s[7]) &&
                     strcmp(trim(s + 8), profile) == 0;
            } else {
                in = strcmp(s, profile) == 0;
            }
            continue;
        }
        if (!in || (eq = strchr(s, '=')) == NULL)
            continue;
        *eq = '\0';
        char *k = trim(s), *v = trim(eq + 1), **dst = NULL;
        if (config && strcmp(k, "region") != 0)
            continue; /* keys come from the credentials file */
        if (strcmp(k, "aws_access_key_id") == 0)
            dst = &c->access_key;
        else if (strcmp(k, "aws_secret_access_key") == 0)
            dst = &c->secret;
        else if (strcmp(k, "aws_session_token") == 0)
            dst = &c->token;
        else if (strcmp(k, "region") == 0 && c->region == NULL)
            dst = &c->region;
        if (dst != NULL && *dst == NULL) {
            *dst = strdup(v);
            found = 1;
        }
    }
    fclose(f);
    return found ? 0 : -ENOENT;
}

/* 1 if s is a DNS-safe bucket name (virtual-host-style needs one). */
static int bucket_ok(const char *s)
{
    size_t n = strlen(s), i;

    if (n < 3 || n > 63)
        return 0;
    for (i = 0; i < n; i++) {
        char ch = s[i];
        if (!(islower((unsigned char)ch) || isdigit((unsigned char)ch) || ch == '-' || ch == '.' ||
              ch == '_'))
            return 0;
    }
    return 1;
}

/* 1 if endpoint's host is AWS's (s3.REGION.amazonaws.com and the like),
 * which serves buckets virtual-host-style. */
static int aws_endpoint(const char *endpoint)
{
    const char *h = strstr(endpoint, "://"), *e;
    size_t n;

    h = h != NULL ? h + 3 : endpoint;
    e = h + strcspn(h, ":/");
    n = (size_t)(e - h);
    return (n == 13 && strncmp(h, "amazonaws.com", 13) == 0) ||
           (n > 14 && strncmp(e - 14, ".amazonaws.com", 14) == 0);
}

int s3_conf_init(struct s3_conf *c, const char *bucket, const char *endpoint, const char *style,
                 struct xp_err *err)
{
    char path[4096];
    const char *home = getenv("HOME"), *file = getenv("AWS_SHARED_CREDENTIALS_FILE");
    const char *config = getenv("AWS_CONFIG_FILE");
    const char *profile = getenv("AWS_PROFILE");

    memset(c, 0, sizeof(*c));
    c->scheme = "s3";
    c->retries = 3;
    c->range_mb = 8;
    c->parallel = 8;
    c->timeout_s = 60;
    if (!bucket_ok(bucket))
        return xp_err_set(err, -EINVAL, "'%s': not a bucket name", bucket);
    if (style != NULL && strcmp(style, "path") != 0 && strcmp(style, "virtual") != 0)
        return xp_err_set(err, -EINVAL, "s3_style=%s: path or virtual", style);
    if (endpoint != NULL && strncmp(endpoint, "http://", 7) != 0 &&
        strncmp(endpoint, "https://", 8) != 0)
        return xp_err_set(err, -EINVAL, "endpoint=%s: an http:// or https:// URL", endpoint);
    c->bucket = strdup(bucket);
    c->region = env_dup("AWS_REGION");
    if (c->region == NULL)
        c->region = env_dup("AWS_DEFAULT_REGION");
    c->access_key = env_dup("AWS_ACCESS_KEY_ID");
    c->secret = env_dup("AWS_SECRET_ACCESS_KEY");
    c->token = env_dup("AWS_SESSION_TOKEN");
    if (c->access_key == NULL || c->secret == NULL) {
        free(c->access_key);
        free(c->secret);
        free(c->token);
        c->access_key = c->secret = c->token = NULL;
        if (file == NULL && home != NULL) {
            snprintf(path, sizeof(path), "%s/.aws/credentials", home);
            file = path;
        }
        if (file != NULL)
            read_credentials(file, profile ? profile : "default", 0, c);
        if (c->access_key == NULL || c->secret == NULL) {
            free(c->access_key);
            free(c->secret);
            c->access_key = c->secret = NULL;
        }
    }
    if (c->region == NULL) {
        char cpath[4096];
        if (config == NULL && home != NULL) {
            snprintf(cpath, sizeof(cpath), "%s/.aws/config", home);
            config = cpath;
        }
        if (config != NULL)
            read_credentials(config, profile ? profile : "default", 1, c);
    }
    if (c->region == NULL)
        c->region = strdup("us-east-1");
    if (endpoint != NULL) {
        c->endpoint = strdup(endpoint);
        if (c->endpoint != NULL) {
            size_t n = strlen(c->endpoint);
            while (n > 0 && c->endpoint[n - 1] == '/')
                c->endpoint[--n] = '\0';
        }
        c->path_style = style != NULL ? strcmp(style, "path") == 0
                                      : c->endpoint == NULL || !aws_endpoint(c->endpoint);
    } else {
        snprintf(path, sizeof(path), "https://s3.%s.amazonaws.com", c->region ? c->region : "");
        c->endpoint = strdup(path);
        c->path_style = style != NULL && strcmp(style, "path") == 0;
    }
    if (c->bucket == NULL || c->region == NULL || c->endpoint == NULL) {
        s3_conf_free(c);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    return 0;
}

void s3_conf_free(struct s3_conf *c)
{
    free(c->endpoint);
    free(c->bucket);
    free(c->region);
    free(c->access_key);
    if (c->secret != NULL)
        memset(c->secret, 0, strlen(c->secret));
    free(c->secret);
    free(c->token);
    memset(c, 0, sizeof(*c));
}
