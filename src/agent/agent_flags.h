/*
 * agent_flags.h - the command line of an agent command bound to its
 * parameters as Python Fire binds it (XProf's CLI is a Fire program):
 *
 *   --name=value, --name value    a keyword (value read by agent_pylit.h)
 *   --name / --noname             True / False when no value follows
 *   -n                            a unique parameter starting with n
 *   positional words              the positional parameters, in order
 *   --session_dir, --session_path, --source
 *                                 the session (first positional parameter),
 *                                 where the command has no such parameter
 *
 * Keywords repeated: the last wins. A leftover word or flag, or a missing
 * required parameter, is Fire's own usage error.
 */
#ifndef XPROFS_AGENT_FLAGS_H
#define XPROFS_AGENT_FLAGS_H

#include <stddef.h>

#include "agent_pylit.h"

enum agent_param_flags {
    AP_POSITIONAL = 1, /* may be given by position (else keyword-only) */
    AP_REQUIRED = 2,   /* Fire refuses the call without it */
};

struct agent_param {
    const char *name;
    unsigned flags; /* enum agent_param_flags */
};

struct agent_spec {
    const char *command;
    const struct agent_param *params; /* ends with a {NULL} entry */
    int varkw;                        /* takes **kwargs: any keyword binds */
};

#define AGENT_MAX_ARGS 48

struct agent_args {
    int n;
    char *names[AGENT_MAX_ARGS];
    struct pyval vals[AGENT_MAX_ARGS];
};

/* agent_bind's result for Fire's own errors: msg holds Fire's text. */
#define AGENT_FIRE_ERROR 1

/* Bind argv[0..argc) (the words after the command name) to spec's
 * parameters. 0 and *a (agent_args_free), AGENT_FIRE_ERROR with msg, or
 * -ENOMEM. */
int agent_bind(const struct agent_spec *spec, int argc, char *const *argv, struct agent_args *a,
               char *msg, size_t n);

/* 1 if the words ask for help (-h or --help among them). */
int agent_wants_help(int argc, char *const *argv);

/* The bound value of name, or NULL when it was not given. */
const struct pyval *agent_arg(const struct agent_args *a, const char *name);

void agent_args_free(struct agent_args *a);

/* Fire's usage line of a command: "xprof CMD SESSION_ID <flags>". */
void agent_usage_line(const struct agent_spec *spec, char *buf, size_t n);

#endif
