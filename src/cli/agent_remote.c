/*
 * agent_remote.c - an agent command's session in a store: `xprofs
 * get_overview s3://bucket/logs` reads the local copy of that prefix. The
 * copy is laid out as the store is (a LOGDIR, a run directory), so the
 * engine's session rules (src/agent/agent_session.c) apply unchanged; the
 * files of the run it will pick (the prefix itself, the run named by
 * another word, and the latest run under plugins/profile/) are copied
 * before it looks.
 */
#include "agent_remote.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "remote/mirror.h"
#include "vfs/vfs.h"

static int is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void fetch(struct mirror *m, const char *dir)
{
    struct xp_err err = {0};
    int rc = mirror_fetch_dir(m, dir, &err);

    if (rc != 0)
        fprintf(stderr, "xprofs: %s%s\n", rc > 0 ? "warning: " : "", err.msg);
}

static int named_by_a_word(const char *name, int argc, char **argv, int first)
{
    int i;

    for (i = first; i < argc; i++) {
        if (strcmp(argv[i], name) == 0)
            return 1;
    }
    return 0;
}

/* The prefix's own files, then the runs under plugins/profile/ a word
 * names, and the last run in name order (a LOGDIR's latest). */
static void fetch_runs(struct mirror *m, int argc, char **argv, int first)
{
    char runs[4096], path[4096 + 256], *last = NULL;
    struct dirent *de;
    DIR *d;

    fetch(m, mirror_root(m));
    snprintf(runs, sizeof(runs), "%s/plugins/profile", mirror_root(m));
    d = is_dir(runs) ? opendir(runs) : NULL;
    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", runs, de->d_name);
        if (!is_dir(path))
            continue;
        if (named_by_a_word(de->d_name, argc, argv, first))
            fetch(m, path);
        if (last == NULL || strcmp(de->d_name, last) > 0) {
            free(last);
            last = strdup(de->d_name);
        }
    }
    closedir(d);
    if (last != NULL) {
        snprintf(path, sizeof(path), "%s/%s", runs, last);
        fetch(m, path);
        free(last);
    }
}

void agent_localize_urls(int argc, char **argv, int first, struct agent_remote *r)
{
    int i;

    memset(r, 0, sizeof(*r));
    for (i = first; i < argc && r->n < AGENT_REMOTE_MAX; i++) {
        const char *eq = strchr(argv[i], '=');
        const char *url = argv[i][0] == '-' && eq != NULL ? eq + 1 : argv[i];
        size_t head = (size_t)(url - argv[i]);
        struct xp_err err = {0};
        struct mirror *m;
        char *word;

        if (!mirror_is_url(url))
            continue;
        if (vfs_open_mirror(url, NULL, &m, &err) != 0) {
            fprintf(stderr, "xprofs: %s\n", err.msg);
            continue;
        }
        word = malloc(head + strlen(mirror_root(m)) + 1);
        if (word == NULL) {
            mirror_close(m);
            continue;
        }
        memcpy(word, argv[i], head);
        strcpy(word + head, mirror_root(m));
        fetch_runs(m, argc, argv, first);
        r->mirrors[r->n] = m;
        r->words[r->n++] = word;
        argv[i] = word;
    }
}

void agent_remote_close(struct agent_remote *r)
{
    int i;

    for (i = 0; i < r->n; i++) {
        mirror_close(r->mirrors[i]);
        free(r->words[i]);
    }
    r->n = 0;
}
