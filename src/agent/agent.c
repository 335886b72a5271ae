/*
 * agent.c - the agent CLI's front door (see agent.h): XProf's main() and
 * _wrap_with_logdir in C. Binds the flags, checks a path-like session,
 * resolves and opens the run, runs the command, turns an error answer
 * into XProf's exit codes, spills an answer past 10 MB to $TMPDIR, and
 * prints the answer or the error object.
 */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_pyjson.h"
#include "agent_session.h"

#define AGENT_SPILL_BYTES ((size_t)10 * 1024 * 1024)

const struct agent_command *agent_find(const char *name)
{
    int i;

    for (i = 0; agent_commands[i].name != NULL; i++) {
        if (strcmp(agent_commands[i].name, name) == 0)
            return &agent_commands[i];
    }
    return NULL;
}

int agent_is_command(const char *name)
{
    return agent_find(name) != NULL;
}

static const char *reason_of(int code)
{
    switch (code) {
    case AGENT_E_USAGE:
        return "USAGE_ERROR";
    case AGENT_E_PATH:
        return "PATH_ERROR";
    case AGENT_E_VALUE:
        return "INVALID_VALUE";
    default:
        return "INTERNAL_ERROR";
    }
}

/* XProf's _emit_error: the object on stdout (f), "REASON: msg" on stderr
 * (errline). Returns code. */
static int emit_error(FILE *f, char *errline, size_t n, int code, const char *msg)
{
    char full[2048];
    cJSON *o = cJSON_CreateObject();
    char *text;

    if (code == AGENT_E_INTERNAL)
        snprintf(full, sizeof(full), "%s\nPlease report to b/547935083", msg);
    else
        snprintf(full, sizeof(full), "%s", msg);
    if (o != NULL && pyj_add_str(o, "status", "ERROR") == 0 &&
        pyj_add_str(o, "reason", reason_of(code)) == 0 && pyj_add_str(o, "error", full) == 0 &&
        (text = pyj_dumps(o, 2)) != NULL) {
        fprintf(f, "%s\n", text);
        free(text);
    }
    cJSON_Delete(o);
    snprintf(errline, n, "%s: %s", reason_of(code), full);
    return code;
}

void agent_ctx_free(struct agent_ctx *ctx)
{
    int i;

    if (ctx->snap != NULL)
        snapshot_unref(ctx->snap);
    if (ctx->session != NULL)
        session_unref(ctx->session);
    for (i = 0; i < ctx->nxplanes; i++)
        free(ctx->xplanes[i]);
    free(ctx->xplanes);
    free(ctx->session_id);
    free(ctx->run_dir);
    free(ctx->out);
    memset(ctx, 0, sizeof(*ctx));
}

/* The first positional parameter: the session (session_id or source). */
static const char *session_param(const struct agent_command *cmd)
{
    const struct agent_param *p;

    for (p = cmd->params; p->name != NULL; p++) {
        if (p->flags & AP_POSITIONAL)
            return p->name;
    }
    return NULL;
}

static int has_param(const struct agent_command *cmd, const char *name)
{
    const struct agent_param *p;

    for (p = cmd->params; p->name != NULL; p++) {
        if (strcmp(p->name, name) == 0)
            return 1;
    }
    return 0;
}

/* Resolve the run, list its traces and open the engine's session. */
int agent_open_run(struct agent_ctx *ctx)
{
    const char *logdir = ctx->logdir;
    struct xp_err err = {0};
    const char *name;
    int rc;

    rc = agent_resolve_run(ctx->session_id, logdir, &ctx->run_dir, ctx->msg, sizeof(ctx->msg));
    if (rc != 0)
        return rc;
    if (agent_find_traces(ctx->run_dir, &ctx->xplanes, &ctx->nxplanes) != 0)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    if (ctx->nxplanes == 0)
        return agent_fail(ctx, AGENT_E_PATH, "No .xplane.pb or .xspace.pb files found in %s",
                          ctx->run_dir);
    name = strrchr(ctx->run_dir, '/');
    name = name != NULL && name[1] != '\0' ? name + 1 : ctx->run_dir;
    ctx->session = session_new(name, ctx->run_dir, ctx->run_dir);
    if (ctx->session == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    rc = session_snapshot(ctx->session, &ctx->snap, &err);
    if (rc != 0)
        return agent_fail(ctx, rc == -ENOENT ? AGENT_E_PATH : AGENT_E_VALUE, "%s", err.msg);
    return 0;
}

/* _wrap_with_logdir's look at a JSON answer with an "error" key. */
static int check_error_answer(struct agent_ctx *ctx)
{
    cJSON *v, *e;
    char lower[1024];
    size_t i;
    int rc = 0;

    if (ctx->out_is_bytes || ctx->out_len < 2 || ctx->out[0] != '{' ||
        ctx->out[ctx->out_len - 1] != '}')
        return 0;
    v = cJSON_ParseWithLength(ctx->out, ctx->out_len);
    e = v ? cJSON_GetObjectItemCaseSensitive(v, "error") : NULL;
    if (e != NULL && cJSON_IsString(e)) {
        for (i = 0; e->valuestring[i] && i + 1 < sizeof(lower); i++)
            lower[i] =
                (char)(e->valuestring[i] >= 'A' && e->valuestring[i] <= 'Z' ? e->valuestring[i] + 32
                                                                            : e->valuestring[i]);
        lower[i] = '\0';
        if (strstr(lower, "no .xplane.pb or .xspace.pb files found") ||
            strstr(lower, "data_absent"))
            rc = agent_fail(ctx, AGENT_E_PATH, "%s", e->valuestring);
        else if (strstr(lower, "corrupt") || strstr(lower, "invalid wire type") ||
                 strstr(lower, "error parsing message") || strstr(lower, "failed to parse") ||
                 strstr(lower, "cannot load hlo proto") ||
                 strstr(lower, "no overview data returned for the session"))
            rc = agent_fail(ctx, AGENT_E_VALUE, "CORRUPT_TRACE: %s", e->valuestring);
    }
    cJSON_Delete(v);
    return rc;
}

/* Python's tempfile.gettempdir(): $TMPDIR, $TEMP, $TMP, then /tmp. */
static const char *temp_dir(void)
{
    const char *names[] = {"TMPDIR", "TEMP", "TMP"};
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *d = getenv(names[i]);
        if (d != NULL && d[0] != '\0' && access(d, W_OK) == 0)
            return d;
    }
    return "/tmp";
}

/* An answer past 10 MB goes to $TMPDIR/xprof_spill_<cmd>_<8 hex>.json and
 * is replaced by XProf's SAVED_TO_FILE object. */
static int spill(struct agent_ctx *ctx)
{
    char path[4096], mib_text[40], msg[256];
    struct timespec ts;
    unsigned hex;
    double mib;
    FILE *f;
    cJSON *o;

    if (ctx->out_len <= AGENT_SPILL_BYTES)
        return 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    hex = (unsigned)(((unsigned long long)ts.tv_nsec * 2654435761u) ^ (unsigned)getpid() ^
                     (unsigned)ts.tv_sec);
    snprintf(path, sizeof(path), "%s/xprof_spill_%s_%08x.json", temp_dir(), ctx->command, hex);
    f = fopen(path, "wb");
    if (f == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "%s: %s", path, strerror(errno));
    if (fwrite(ctx->out, 1, ctx->out_len, f) != ctx->out_len || fclose(f) != 0)
        return agent_fail(ctx, AGENT_E_INTERNAL, "%s: write failed", path);
    mib = py_round((double)ctx->out_len / (1024.0 * 1024.0), 2);
    py_float_repr(mib, mib_text, sizeof(mib_text));
    snprintf(msg, sizeof(msg),
             "Output payload (%s MB) exceeded 10 MB threshold. Saved to file to prevent "
             "terminal buffer overflow.",
             mib_text);
    o = cJSON_CreateObject();
    if (o == NULL || pyj_add_str(o, "status", "SAVED_TO_FILE") != 0 ||
        pyj_add_int(o, "size_bytes", (double)ctx->out_len) != 0 ||
        pyj_add_float(o, "size_mib", mib) != 0 || pyj_add_str(o, "file_path", path) != 0 ||
        pyj_add_str(o, "message", msg) != 0) {
        cJSON_Delete(o);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    return agent_answer_json(ctx, o, 2);
}

/* The command on an opened run, XProf's checks of the result, the spill. */
static int run_command(const struct agent_command *cmd, struct agent_ctx *ctx)
{
    int rc = cmd->run(ctx);

    if (rc != 0)
        return rc;
    rc = check_error_answer(ctx);
    if (rc != 0)
        return rc;
    return spill(ctx);
}

int agent_execute(const struct agent_command *cmd, const struct agent_args *args,
                  struct agent_ctx *ctx)
{
    const char *sp = session_param(cmd);
    const struct pyval *logdir_v = agent_arg(args, "logdir");
    const struct pyval *session_v = sp ? agent_arg(args, sp) : NULL;
    const char *logdir = NULL, *target = NULL;
    int rc;

    memset(ctx, 0, sizeof(*ctx));
    ctx->args = args;
    ctx->command = cmd->name;
    if (logdir_v != NULL && logdir_v->kind == PY_BOOL)
        return agent_fail(ctx, AGENT_E_USAGE, "The --logdir flag requires a value.");
    if (logdir_v != NULL && logdir_v->kind != PY_NONE)
        logdir = agent_str(ctx, "logdir", NULL);
    ctx->logdir = logdir;
    if (session_v != NULL && session_v->kind != PY_NONE) {
        ctx->session_id = pyval_str(session_v);
        if (ctx->session_id == NULL)
            return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    /* The wrapper's check of a path-like first argument or of --logdir. */
    if (logdir != NULL)
        target = logdir;
    else if (ctx->session_id != NULL && session_v->kind == PY_STR && has_param(cmd, "session_id") &&
             strpbrk(ctx->session_id, "/\\.") != NULL)
        target = ctx->session_id;
    if (target != NULL && strncmp(target, "gs://", 5) != 0 && !has_param(cmd, "run_name")) {
        rc = agent_check_path(target, ctx->msg, sizeof(ctx->msg));
        if (rc != 0)
            return rc;
    }
    if (logdir != NULL && ctx->session_id == NULL && has_param(cmd, "session_id")) {
        ctx->session_id = strdup(logdir);
        if (ctx->session_id == NULL)
            return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    if (cmd->needs_session) {
        rc = agent_open_run(ctx);
        if (rc != 0)
            return rc;
    }
    return run_command(cmd, ctx);
}

int agent_execute_on(const struct agent_command *cmd, const struct agent_args *args,
                     struct snapshot *snap, const char *run_dir, struct agent_ctx *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->args = args;
    ctx->command = cmd->name;
    ctx->session_id = strdup(run_dir);
    ctx->run_dir = strdup(run_dir);
    if (ctx->session_id == NULL || ctx->run_dir == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    ctx->snap = snapshot_ref(snap);
    if (agent_find_traces(ctx->run_dir, &ctx->xplanes, &ctx->nxplanes) != 0)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    if (cmd->needs_session && ctx->nxplanes == 0)
        return agent_fail(ctx, AGENT_E_PATH, "No .xplane.pb or .xspace.pb files found in %s",
                          ctx->run_dir);
    return run_command(cmd, ctx);
}

/* Python's repr of bytes, as Fire prints a bytes answer. */
static void print_bytes_repr(FILE *f, const char *p, size_t n)
{
    int has_sq = memchr(p, '\'', n) != NULL, has_dq = memchr(p, '"', n) != NULL;
    char quote = has_sq && !has_dq ? '"' : '\'';
    size_t i;

    fputc('b', f);
    fputc(quote, f);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\\')
            fputs("\\\\", f);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c == (unsigned char)quote)
            fprintf(f, "\\%c", quote);
        else if (c >= 0x20 && c < 0x7f)
            fputc(c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
    fputc(quote, f);
}

int agent_render(const struct agent_command *cmd, const struct agent_args *args,
                 struct snapshot *snap, const char *run_dir, struct agent_output *res)
{
    struct agent_ctx ctx;
    FILE *f;
    int rc;

    memset(res, 0, sizeof(*res));
    f = open_memstream(&res->text, &res->len);
    if (f == NULL)
        return -ENOMEM;
    if (snap != NULL)
        rc = agent_execute_on(cmd, args, snap, run_dir, &ctx);
    else
        rc = agent_execute(cmd, args, &ctx);
    if (rc != 0) {
        snprintf(res->message, sizeof(res->message), "%s", ctx.msg);
        rc = emit_error(f, res->errline, sizeof(res->errline), rc, ctx.msg);
    } else {
        if (ctx.out_is_bytes)
            print_bytes_repr(f, ctx.out, ctx.out_len);
        else
            fwrite(ctx.out, 1, ctx.out_len, f);
        fputc('\n', f);
    }
    agent_ctx_free(&ctx);
    if (fclose(f) != 0 || res->text == NULL) {
        free(res->text);
        memset(res, 0, sizeof(*res));
        return -ENOMEM;
    }
    res->code = rc;
    return 0;
}
