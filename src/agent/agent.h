/*
 * agent.h - the engine of XProf's agent CLI: XProf's commands, their
 * parameters (bound as Python Fire binds them), stdout JSON, error object
 * and exit codes (docs/agent-cli.md), for both front ends: `xprofs
 * <command> <session> [--flag=value ...]` (src/cli/agent_main.c) and the
 * mount's <run>/cli/<command>.json?flag=value (agent_tools.c).
 *
 * Each command is a function of an agent_ctx that leaves its answer in
 * ctx->out (text as XProf prints it, without the newline Fire adds) or
 * fails with one of the AGENT_E_* exits and a message. agent_render runs
 * one into exactly the bytes the CLI prints on stdout.
 */
#ifndef XPROFS_AGENT_H
#define XPROFS_AGENT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "agent_flags.h"
#include "base/err.h"
#include "session/session.h"

/* Exit codes and the reasons XProf's main() prints with them. */
enum agent_exit {
    AGENT_OK = 0,
    AGENT_E_INTERNAL = 1, /* INTERNAL_ERROR */
    AGENT_E_USAGE = 2,    /* USAGE_ERROR (FireError, TypeError) */
    AGENT_E_PATH = 3,     /* PATH_ERROR (FileNotFoundError) */
    AGENT_E_VALUE = 4,    /* INVALID_VALUE (ValueError) */
};

struct agent_ctx {
    const struct agent_args *args; /* the bound flags */
    const char *command;           /* its name */
    const char *logdir;            /* --logdir, or NULL (points into args) */
    char *session_id;              /* the session as given (str() of the value) */
    char *run_dir;                 /* resolved run directory */
    char **xplanes;                /* the run's *.xplane.pb files, sorted */
    int nxplanes;                  /* entries in xplanes */
    struct session *session;       /* the engine's session of run_dir */
    struct snapshot *snap;         /* its snapshot */
    char *out;                     /* the answer (malloc'd) */
    size_t out_len;                /* its length */
    int out_is_bytes;              /* 1: raw bytes, printed as Python's bytes repr */
    char msg[1024];                /* failure message */
};

/* A command: 0 with ctx->out set, or an enum agent_exit with ctx->msg. */
typedef int (*agent_fn)(struct agent_ctx *ctx);

struct agent_command {
    const char *name;
    const struct agent_param *params;
    int varkw;         /* takes **kwargs */
    int needs_session; /* 1: the session is resolved and opened first */
    agent_fn run;
    const char *help; /* one line */
};

/* The table (agent_commands.c), ending with a {NULL} entry. */
extern const struct agent_command agent_commands[];

const struct agent_command *agent_find(const char *name);

/* 1 if name is an agent command. */
int agent_is_command(const char *name);

/* What a command prints: text (malloc'd, stdout's bytes: the answer or
 * the error object, and the newline), code (the exit code), and on
 * failure errline (stderr's line) and message (the reason alone). */
struct agent_output {
    char *text;
    size_t len;
    int code;
    char errline[2304];
    char message[1024];
};

/* Run cmd with args into *res. With snap NULL the session is resolved from
 * args as XProf's CLI does; else the command reads snap, whose run
 * directory is run_dir (also its session id). 0 (res->code says how the
 * command ended), or -ENOMEM. */
int agent_render(const struct agent_command *cmd, const struct agent_args *args,
                 struct snapshot *snap, const char *run_dir, struct agent_output *res);

/* Run a command with args into ctx (ctx->out), the way agent_main does
 * before it prints: the session resolved, XProf's checks of the result
 * applied. Returns the exit code; ctx->msg on failure. */
int agent_execute(const struct agent_command *cmd, const struct agent_args *args,
                  struct agent_ctx *ctx);
/* Resolve ctx->session_id (with ctx->logdir), list its traces and open
 * it, as agent_execute does for a command that needs its session. */
int agent_open_run(struct agent_ctx *ctx);
/* The same on the run of snap (run_dir: its directory and session id). */
int agent_execute_on(const struct agent_command *cmd, const struct agent_args *args,
                     struct snapshot *snap, const char *run_dir, struct agent_ctx *ctx);
void agent_ctx_free(struct agent_ctx *ctx);

/* --- helpers for the commands (agent_util.c) --- */

/* Fail with exit code and message; returns code. */
int agent_fail(struct agent_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Set the answer: json.dumps(v, indent) (v is freed), or a string. 0 or
 * AGENT_E_INTERNAL. */
int agent_answer_json(struct agent_ctx *ctx, cJSON *v, int indent);
int agent_answer_text(struct agent_ctx *ctx, const char *s);

/* Typed flags: the default when absent or None; AGENT_E_VALUE for a value
 * of another type (Python's int()/float() message). */
int agent_int(struct agent_ctx *ctx, const char *name, long long dflt, long long *v);
int agent_float(struct agent_ctx *ctx, const char *name, double dflt, double *v);
int agent_bool(struct agent_ctx *ctx, const char *name, int dflt);
/* str() of the value, or NULL when absent or None (points into args or a
 * static default; valid while args live). */
const char *agent_str(struct agent_ctx *ctx, const char *name, const char *dflt);

/* A run file the engine makes (a tool file of src/tools/, query after '?'
 * as the mount takes it), parsed as JSON into *v. 0; AGENT_E_* with msg;
 * -ENOENT (nothing returned) when the tool has no data for the run. */
int agent_tool_json(struct agent_ctx *ctx, const char *file, const char *query, cJSON **v);
/* The same file's bytes (malloc'd, NUL-terminated). */
int agent_tool_bytes(struct agent_ctx *ctx, const char *file, const char *query, char **data,
                     size_t *len);

/* The error answer XProf's tools return: {"error": msg} as json.dumps
 * with indent 2. */
int agent_answer_error(struct agent_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

struct xspace;
struct xp_stat;
/* Open and decode a trace: 0, or AGENT_E_VALUE (CORRUPT_TRACE: ...). */
int agent_open_xspace(struct agent_ctx *ctx, const char *path, struct xspace **xs);
/* A stat's value as XProf's profile_data API spells it (a ref: its id,
 * bytes: "<bytes>", a double: "%f"), in buf or a constant. */
const char *agent_stat_text(const struct xp_stat *st, char *buf, size_t n);

/* Python's float(v) of a JSON value (a number, a bool, a numeric
 * string): 1 and *out, or 0 where float() would raise. */
int agent_py_float(const cJSON *v, double *out);
/* safe_float of XProf's tools: float(v), or dflt when it raises. */
double agent_safe_float(const cJSON *v, double dflt);
/* dict(zip(col ids, cell values)) of a DataTable row (its "c" cells, or
 * an array of values); NULL when out of memory. */
cJSON *agent_row_dict(const cJSON *cols, const cJSON *row);
/* The length of Python's list[:stop] of a list of n. */
long agent_py_slice(long n, long long stop);

#endif
