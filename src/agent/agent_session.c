/*
 * agent_session.c - session resolution of the agent CLI (see
 * agent_session.h): the same order of tries as XProf's get_run_dir.
 */
#include "agent_session.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

char *agent_expand_user(const char *path)
{
    const char *home = getenv("HOME");
    char *out;

    if (path[0] != '~' || (path[1] != '\0' && path[1] != '/') || home == NULL)
        return strdup(path);
    out = malloc(strlen(home) + strlen(path) + 1);
    if (out != NULL)
        sprintf(out, "%s%s", home, path + 1);
    return out;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The last subdirectory of dir in name order, malloc'd, or NULL. */
static char *last_subdir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char *best = NULL, path[4096];

    if (d == NULL)
        return NULL;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (!is_dir(path))
            continue;
        if (best == NULL || strcmp(de->d_name, best) > 0) {
            free(best);
            best = strdup(de->d_name);
        }
    }
    closedir(d);
    if (best == NULL)
        return NULL;
    snprintf(path, sizeof(path), "%s/%s", dir, best);
    free(best);
    return strdup(path);
}

/* dir, or its latest run when it holds plugins/profile/<run>/. */
static char *dir_or_latest(const char *dir)
{
    char plugins[4096], *latest;

    snprintf(plugins, sizeof(plugins), "%s/plugins/profile", dir);
    if (is_dir(plugins) && (latest = last_subdir(plugins)) != NULL)
        return latest;
    return strdup(dir);
}

static int path_fail(char *msg, size_t n, const char *fmt, const char *a, const char *b)
{
    snprintf(msg, n, fmt, a, b);
    return AGENT_E_PATH;
}

int agent_resolve_run(const char *session, const char *logdir, char **run_dir, char *msg, size_t n)
{
    char *sp, *ld, path[4096];
    int rc = 0;

    *run_dir = NULL;
    if (session != NULL && session[0] != '\0') {
        sp = agent_expand_user(session);
        if (sp == NULL)
            return AGENT_E_INTERNAL;
        if (is_file(sp)) {
            char *slash = strrchr(sp, '/');
            if (slash == NULL)
                *run_dir = strdup(".");
            else if (slash == sp)
                *run_dir = strdup("/");
            else {
                *slash = '\0';
                *run_dir = strdup(sp);
            }
            free(sp);
            return *run_dir ? 0 : AGENT_E_INTERNAL;
        }
        if (is_dir(sp)) {
            *run_dir = dir_or_latest(sp);
            free(sp);
            return *run_dir ? 0 : AGENT_E_INTERNAL;
        }
        free(sp);
    }
    if (logdir == NULL) {
        if (session != NULL && session[0] != '\0')
            return path_fail(msg, n, "Path not found: %s%s", session, "");
        snprintf(msg, n, "Logdir not set. Please configure logdir first.");
        return AGENT_E_VALUE;
    }
    ld = agent_expand_user(logdir);
    if (ld == NULL)
        return AGENT_E_INTERNAL;
    if (session == NULL || session[0] == '\0') {
        *run_dir = dir_or_latest(ld);
        free(ld);
        return *run_dir ? 0 : AGENT_E_INTERNAL;
    }
    /* <logdir>/plugins/profile/<id>, its 14-digit date form, <logdir>/<id> */
    snprintf(path, sizeof(path), "%s/plugins/profile/%s", ld, session);
    if (access(path, F_OK) != 0) {
        size_t len = strlen(session);
        int digits = len == 14 && strspn(session, "0123456789") == 14;
        rc = AGENT_E_PATH;
        if (digits) {
            snprintf(path, sizeof(path), "%s/plugins/profile/%.4s_%.2s_%.2s_%.2s_%.2s_%.2s", ld,
                     session, session + 4, session + 6, session + 8, session + 10, session + 12);
            rc = access(path, F_OK) == 0 ? 0 : AGENT_E_PATH;
        }
        if (rc != 0) {
            snprintf(path, sizeof(path), "%s/%s", ld, session);
            rc = access(path, F_OK) == 0 ? 0 : AGENT_E_PATH;
        }
        if (rc != 0) {
            snprintf(msg, n, "Run directory not found for session '%s' in %s", session, ld);
            free(ld);
            return rc;
        }
    }
    free(ld);
    *run_dir = strdup(path);
    return *run_dir ? 0 : AGENT_E_INTERNAL;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

struct found {
    char **paths;
    int n, cap;
};

static int walk(const char *dir, struct found *f, int depth)
{
    DIR *d;
    struct dirent *de;
    char path[4096];
    int rc = 0;

    if (depth > 32 || (d = opendir(dir)) == NULL)
        return 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            rc = walk(path, f, depth + 1);
            continue;
        }
        if (!ends_with(de->d_name, ".xplane.pb") && !ends_with(de->d_name, ".xspace.pb"))
            continue;
        if (f->n == f->cap) {
            int cap = f->cap ? f->cap * 2 : 8;
            char **p = realloc(f->paths, (size_t)cap * sizeof(*p));
            if (p == NULL) {
                rc = -ENOMEM;
                break;
            }
            f->paths = p;
            f->cap = cap;
        }
        f->paths[f->n] = strdup(path);
        if (f->paths[f->n] == NULL)
            rc = -ENOMEM;
        else
            f->n++;
    }
    closedir(d);
    return rc;
}

int agent_find_traces(const char *dir, char ***paths, int *n)
{
    struct found f = {0};
    int rc = walk(dir, &f, 0), i;

    if (rc != 0) {
        for (i = 0; i < f.n; i++)
            free(f.paths[i]);
        free(f.paths);
        return rc;
    }
    if (f.n > 1)
        qsort(f.paths, (size_t)f.n, sizeof(*f.paths), str_cmp);
    *paths = f.paths;
    *n = f.n;
    return 0;
}

int agent_check_path(const char *path, char *msg, size_t n)
{
    char *p = agent_expand_user(path), **found = NULL;
    struct stat st;
    int nfound = 0, i;

    if (p == NULL)
        return AGENT_E_INTERNAL;
    if (stat(p, &st) != 0) {
        free(p);
        return path_fail(msg, n, "Trace path '%s' does not exist.%s", path, "");
    }
    if (S_ISDIR(st.st_mode)) {
        if (agent_find_traces(p, &found, &nfound) != 0) {
            free(p);
            return AGENT_E_INTERNAL;
        }
        for (i = 0; i < nfound; i++)
            free(found[i]);
        free(found);
        if (nfound == 0) {
            free(p);
            return path_fail(msg, n,
                             "No .xplane.pb or .xspace.pb files found in directory '%s' "
                             "(DATA_ABSENT).%s",
                             path, "");
        }
    }
    free(p);
    return 0;
}
