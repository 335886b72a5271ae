/*
 * agent_flags.c - Python Fire's binding of words to parameters (see
 * agent_flags.h), following fire.core._ParseKeywordArgs and the
 * positional fill of fire.core._ParseArgs.
 */
#include "agent_flags.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const session_aliases[] = {"session_dir", "session_path", "source", NULL};

/* Fire's _IsFlag: --anything, or -x... with a letter. */
static int is_flag(const char *w)
{
    return strncmp(w, "--", 2) == 0 || (w[0] == '-' && isalpha((unsigned char)w[1]));
}

static int has_param(const struct agent_spec *spec, const char *name)
{
    const struct agent_param *p;

    for (p = spec->params; p->name != NULL; p++) {
        if (strcmp(p->name, name) == 0)
            return 1;
    }
    return 0;
}

static int add_arg(struct agent_args *a, const char *name, const char *text)
{
    int i;

    for (i = 0; i < a->n; i++) {
        if (strcmp(a->names[i], name) == 0) {
            /* a repeated keyword: the last wins */
            pyval_free(&a->vals[i]);
            return pylit_parse(text, &a->vals[i]);
        }
    }
    if (a->n >= AGENT_MAX_ARGS)
        return -E2BIG;
    a->names[a->n] = strdup(name);
    if (a->names[a->n] == NULL)
        return -ENOMEM;
    if (pylit_parse(text, &a->vals[a->n]) != 0) {
        free(a->names[a->n]);
        return -ENOMEM;
    }
    a->n++;
    return 0;
}

void agent_usage_line(const struct agent_spec *spec, char *buf, size_t n)
{
    const struct agent_param *p;
    size_t at;

    at = (size_t)snprintf(buf, n, "xprof %s", spec->command);
    for (p = spec->params; p->name != NULL && at < n; p++) {
        if (p->flags & AP_REQUIRED) {
            const char *c;
            at += (size_t)snprintf(buf + at, n - at, " ");
            for (c = p->name; *c && at + 1 < n; c++)
                buf[at++] = (char)toupper((unsigned char)*c);
            buf[at < n ? at : n - 1] = '\0';
        }
    }
    if (at < n)
        snprintf(buf + at, n - at, " <flags>");
}

static int fire_error(const struct agent_spec *spec, char *msg, size_t n, const char *what,
                      const char *arg)
{
    char usage[512];

    agent_usage_line(spec, usage, sizeof(usage));
    snprintf(msg, n,
             "%s%s\nUsage: %s\n\nFor detailed information on this command, run:\n  xprof %s --help",
             what, arg, usage, spec->command);
    return AGENT_FIRE_ERROR;
}

/* The keyword a flag's key names: the key itself, a no-prefixed key of a
 * boolean, or a one-letter shortcut. NULL when none; *ambiguous set when
 * a shortcut matches several. */
static const char *keyword_of(const struct agent_spec *spec, const char *key, int boolean,
                              int *ambiguous)
{
    const struct agent_param *p, *match = NULL;
    int nmatch = 0;

    *ambiguous = 0;
    if (has_param(spec, key) || spec->varkw)
        return key;
    if (boolean && strncmp(key, "no", 2) == 0 && has_param(spec, key + 2))
        return key;
    if (strlen(key) != 1)
        return NULL;
    for (p = spec->params; p->name != NULL; p++) {
        if (p->name[0] == key[0]) {
            match = p;
            nmatch++;
        }
    }
    if (nmatch > 1)
        *ambiguous = 1;
    return nmatch == 1 ? match->name : NULL;
}

/* The session given by an alias flag is the first word; others stay. */
static int take_aliases(const struct agent_spec *spec, int argc, char *const *argv,
                        const char **words, int *nwords)
{
    const char *alias = NULL;
    int i, k, n = 0;

    for (i = 0; i < argc; i++) {
        const char *w = argv[i], *eq = strchr(w, '=');
        size_t keylen = eq ? (size_t)(eq - w) : strlen(w);
        int is_alias = 0;
        for (k = 0; session_aliases[k] != NULL && strncmp(w, "--", 2) == 0; k++) {
            if (keylen - 2 == strlen(session_aliases[k]) &&
                strncmp(w + 2, session_aliases[k], keylen - 2) == 0 &&
                !has_param(spec, session_aliases[k]))
                is_alias = 1;
        }
        if (!is_alias) {
            words[n++] = w;
            continue;
        }
        if (eq != NULL)
            alias = eq + 1;
        else if (i + 1 < argc && argv[i + 1][0] != '-')
            alias = argv[++i];
        else
            alias = "";
    }
    if (alias != NULL) {
        memmove(words + 1, words, (size_t)n * sizeof(*words));
        words[0] = alias;
        n++;
    }
    *nwords = n;
    return 0;
}

int agent_bind(const struct agent_spec *spec, int argc, char *const *argv, struct agent_args *a,
               char *msg, size_t n)
{
    const char **words = calloc((size_t)argc + 2, sizeof(*words));
    const char **positional = calloc((size_t)argc + 2, sizeof(*positional));
    const struct agent_param *p;
    int nwords, npos = 0, used = 0, i, rc = 0;

    memset(a, 0, sizeof(*a));
    if (words == NULL || positional == NULL) {
        free(words);
        free(positional);
        return -ENOMEM;
    }
    take_aliases(spec, argc, argv, words, &nwords);
    for (i = 0; i < nwords && rc == 0; i++) {
        const char *w = words[i], *stripped, *eq, *keyword, *value;
        char key[256];
        int boolean, ambiguous;
        size_t k;

        if (!is_flag(w)) {
            positional[npos++] = w;
            continue;
        }
        stripped = w + strspn(w, "-");
        eq = strchr(stripped, '=');
        k = eq ? (size_t)(eq - stripped) : strlen(stripped);
        if (k >= sizeof(key))
            k = sizeof(key) - 1;
        memcpy(key, stripped, k);
        key[k] = '\0';
        for (k = 0; key[k]; k++)
            key[k] = key[k] == '-' ? '_' : key[k];
        boolean = eq == NULL && (i + 1 == nwords || is_flag(words[i + 1]));
        keyword = keyword_of(spec, key, boolean, &ambiguous);
        if (ambiguous) {
            snprintf(msg, n,
                     "The argument '%s' is ambiguous as it could refer to any of the following "
                     "arguments",
                     w);
            rc = AGENT_FIRE_ERROR;
            break;
        }
        if (keyword == NULL) {
            rc = fire_error(spec, msg, n, "Could not consume arg: ", w);
            break;
        }
        if (eq != NULL) {
            value = eq + 1;
        } else if (boolean) {
            /* Fire: a parameter's own name is True; no<name> is False */
            if (!has_param(spec, keyword) && strncmp(keyword, "no", 2) == 0) {
                keyword += 2;
                value = "False";
            } else {
                value = "True";
            }
        } else {
            value = words[++i];
        }
        rc = add_arg(a, keyword, value);
    }
    /* Positional parameters not given as keywords take the words in order. */
    for (p = spec->params; rc == 0 && p->name != NULL; p++) {
        if (!(p->flags & AP_POSITIONAL) || agent_arg(a, p->name) != NULL)
            continue;
        if (used < npos)
            rc = add_arg(a, p->name, positional[used++]);
        else if (p->flags & AP_REQUIRED)
            rc = fire_error(spec, msg, n,
                            "The function received no value for the required argument: ", p->name);
    }
    if (rc == 0 && used < npos)
        rc = fire_error(spec, msg, n, "Could not consume arg: ", positional[used]);
    free(words);
    free(positional);
    if (rc != 0)
        agent_args_free(a);
    return rc;
}

int agent_wants_help(int argc, char *const *argv)
{
    int i;

    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    }
    return 0;
}

const struct pyval *agent_arg(const struct agent_args *a, const char *name)
{
    int i;

    for (i = 0; i < a->n; i++) {
        if (strcmp(a->names[i], name) == 0)
            return &a->vals[i];
    }
    return NULL;
}

void agent_args_free(struct agent_args *a)
{
    int i;

    for (i = 0; i < a->n; i++) {
        free(a->names[i]);
        pyval_free(&a->vals[i]);
    }
    a->n = 0;
}
