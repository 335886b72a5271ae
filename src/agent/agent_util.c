/*
 * agent_util.c - what the agent commands share: typed flags, answers and
 * failures, and the tool files of the engine read as JSON.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_pyjson.h"
#include "base/query.h"
#include "out/out.h"
#include "reader/xspace.h"
#include "tools/tool.h"

int agent_fail(struct agent_ctx *ctx, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ctx->msg, sizeof(ctx->msg), fmt, ap);
    va_end(ap);
    return code;
}

int agent_answer_text(struct agent_ctx *ctx, const char *s)
{
    free(ctx->out);
    ctx->out = strdup(s);
    if (ctx->out == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    ctx->out_len = strlen(s);
    ctx->out_is_bytes = 0;
    return 0;
}

int agent_answer_json(struct agent_ctx *ctx, cJSON *v, int indent)
{
    char *s = v ? pyj_dumps(v, indent) : NULL;

    cJSON_Delete(v);
    if (s == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    free(ctx->out);
    ctx->out = s;
    ctx->out_len = strlen(s);
    ctx->out_is_bytes = 0;
    return 0;
}

int agent_answer_error(struct agent_ctx *ctx, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    cJSON *o = cJSON_CreateObject();

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (o == NULL || pyj_add_str(o, "error", msg) != 0) {
        cJSON_Delete(o);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    return agent_answer_json(ctx, o, 2);
}

static const struct pyval *given(struct agent_ctx *ctx, const char *name)
{
    const struct pyval *v = agent_arg(ctx->args, name);
    return v != NULL && v->kind != PY_NONE ? v : NULL;
}

int agent_int(struct agent_ctx *ctx, const char *name, long long dflt, long long *out)
{
    const struct pyval *v = given(ctx, name);

    *out = dflt;
    if (v == NULL)
        return 0;
    if (v->kind == PY_INT || v->kind == PY_BOOL) {
        *out = v->i;
        return 0;
    }
    if (v->kind == PY_FLOAT && v->f == floor(v->f) && fabs(v->f) < 9e18) {
        *out = (long long)v->f;
        return 0;
    }
    if (v->kind == PY_STR)
        return agent_fail(ctx, AGENT_E_VALUE, "invalid literal for int() with base 10: '%s'",
                          v->text);
    return agent_fail(ctx, AGENT_E_VALUE, "--%s: expected an int, got %s", name, pyval_type(v));
}

int agent_float(struct agent_ctx *ctx, const char *name, double dflt, double *out)
{
    const struct pyval *v = given(ctx, name);

    *out = dflt;
    if (v == NULL)
        return 0;
    if (v->kind == PY_INT || v->kind == PY_BOOL) {
        *out = (double)v->i;
        return 0;
    }
    if (v->kind == PY_FLOAT) {
        *out = v->f;
        return 0;
    }
    if (v->kind == PY_STR)
        return agent_fail(ctx, AGENT_E_VALUE, "could not convert string to float: '%s'", v->text);
    return agent_fail(ctx, AGENT_E_VALUE, "--%s: expected a float, got %s", name, pyval_type(v));
}

int agent_bool(struct agent_ctx *ctx, const char *name, int dflt)
{
    const struct pyval *v = given(ctx, name);

    if (v == NULL)
        return agent_arg(ctx->args, name) != NULL ? 0 : dflt; /* None is falsy */
    switch (v->kind) {
    case PY_BOOL:
    case PY_INT:
        return v->i != 0;
    case PY_FLOAT:
        return v->f != 0;
    case PY_STR:
    case PY_OTHER:
        return v->text != NULL && v->text[0] != '\0' && strcmp(v->text, "()") != 0 &&
               strcmp(v->text, "[]") != 0 && strcmp(v->text, "{}") != 0;
    case PY_NONE:
        return 0;
    }
    return dflt;
}

const char *agent_str(struct agent_ctx *ctx, const char *name, const char *dflt)
{
    const struct pyval *v = given(ctx, name);
    static char buf[8][64];
    static int next;

    if (v == NULL)
        return agent_arg(ctx->args, name) != NULL ? NULL : dflt;
    if (v->text != NULL)
        return v->text;
    /* bool, float: str() into a small rotating buffer */
    next = (next + 1) % 8;
    if (v->kind == PY_BOOL)
        snprintf(buf[next], sizeof(buf[next]), "%s", v->i ? "True" : "False");
    else
        py_float_repr(v->f, buf[next], sizeof(buf[next]));
    return buf[next];
}

int agent_tool_bytes(struct agent_ctx *ctx, const char *file, const char *query, char **data,
                     size_t *len)
{
    const struct tool *t = tool_find(file, TOOL_RUN);
    struct xp_err err = {0};
    struct tool_ctx tc;
    struct query q;
    struct out o;
    struct blob *b = NULL;
    char *buf;
    int rc;

    *data = NULL;
    *len = 0;
    if (t == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "no tool file %s", file);
    rc = query_parse(query ? query : "", t->keys, &q, &err);
    if (rc != 0)
        return agent_fail(ctx, AGENT_E_VALUE, "%s", err.msg);
    memset(&tc, 0, sizeof(tc));
    tc.snap = ctx->snap;
    tc.q = &q;
    tc.err = &err;
    out_init(&o);
    rc = t->produce(&tc, &o);
    query_free(&q);
    if (rc == 0 && snapshot_sources_cut(ctx->snap, &err) != 0)
        rc = err.code ? err.code : -EIO;
    if (rc != 0) {
        out_discard(&o);
        if (rc == -ENOENT) {
            snprintf(ctx->msg, sizeof(ctx->msg), "%s", err.msg);
            return -ENOENT;
        }
        if (rc == -EIO)
            return agent_fail(ctx, AGENT_E_VALUE, "CORRUPT_TRACE: %s", err.msg);
        if (rc == -EINVAL)
            return agent_fail(ctx, AGENT_E_VALUE, "%s", err.msg);
        return agent_fail(ctx, AGENT_E_INTERNAL, "%s: %s", file,
                          err.msg[0] ? err.msg : strerror(-rc));
    }
    rc = out_finish(&o, &b);
    if (rc != 0)
        return agent_fail(ctx, AGENT_E_INTERNAL, "%s: %s", file, strerror(-rc));
    buf = malloc(b->size + 1);
    if (buf == NULL || blob_read(b, 0, buf, b->size) != (ssize_t)b->size) {
        free(buf);
        blob_unref(b);
        return agent_fail(ctx, AGENT_E_INTERNAL, "%s: cannot read what was made", file);
    }
    buf[b->size] = '\0';
    *len = b->size;
    blob_unref(b);
    *data = buf;
    return 0;
}

int agent_tool_json(struct agent_ctx *ctx, const char *file, const char *query, cJSON **v)
{
    char *data;
    size_t len;
    int rc = agent_tool_bytes(ctx, file, query, &data, &len);

    *v = NULL;
    if (rc != 0)
        return rc;
    *v = cJSON_ParseWithLength(data, len);
    free(data);
    if (*v == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "%s: not JSON", file);
    return 0;
}

int agent_py_float(const cJSON *v, double *out)
{
    const char *s;
    char *end;
    double d;

    if (v == NULL)
        return 0;
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return 1;
    }
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return 1;
    }
    if (!cJSON_IsString(v))
        return 0;
    s = v->valuestring;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (*s == '\0')
        return 0;
    d = strtod(s, &end);
    if (end == s)
        return 0;
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    if (*end != '\0')
        return 0;
    *out = d;
    return 1;
}

double agent_safe_float(const cJSON *v, double dflt)
{
    double d;

    return agent_py_float(v, &d) ? d : dflt;
}

cJSON *agent_row_dict(const cJSON *cols, const cJSON *row)
{
    const cJSON *cells = cJSON_IsObject(row) ? cJSON_GetObjectItemCaseSensitive(row, "c") : row;
    cJSON *dict = cJSON_CreateObject();
    const cJSON *col;
    int i = 0, ncells = cJSON_GetArraySize(cells);

    /* dict(zip(cols, vals)): as many as the shorter has */
    cJSON_ArrayForEach(col, cols)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(col, "id");
        const cJSON *cell, *v;
        if (i >= ncells || dict == NULL)
            break;
        cell = cJSON_GetArrayItem(cells, i++);
        v = cJSON_IsObject(cell) ? cJSON_GetObjectItemCaseSensitive(cell, "v") : cell;
        if (pyj_set(dict, cJSON_IsString(id) ? id->valuestring : "",
                    v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull()) != 0) {
            cJSON_Delete(dict);
            return NULL;
        }
    }
    return dict;
}

long agent_py_slice(long n, long long stop)
{
    if (stop >= 0)
        return stop < n ? (long)stop : n;
    return n + stop > 0 ? (long)(n + stop) : 0;
}

int agent_open_xspace(struct agent_ctx *ctx, const char *path, struct xspace **xs)
{
    struct xp_err err = {0};

    if (xspace_open(path, xs, &err) != 0)
        return agent_fail(ctx, AGENT_E_VALUE, "CORRUPT_TRACE: %s", err.msg);
    if (xspace_decode(*xs, 0, &err) != 0) {
        xspace_close(*xs);
        return agent_fail(ctx, AGENT_E_VALUE, "CORRUPT_TRACE: %s", err.msg);
    }
    return 0;
}

const char *agent_stat_text(const struct xp_stat *st, char *buf, size_t n)
{
    switch (st->kind) {
    case XP_STAT_STR:
        snprintf(buf, n, "%.*s", (int)st->len, st->str);
        return buf;
    case XP_STAT_BYTES:
        return "<bytes>";
    case XP_STAT_INT:
        snprintf(buf, n, "%lld", (long long)st->v.i);
        return buf;
    case XP_STAT_UINT:
    case XP_STAT_REF:
        snprintf(buf, n, "%llu", (unsigned long long)st->v.u);
        return buf;
    case XP_STAT_DOUBLE:
        snprintf(buf, n, "%f", st->v.d);
        return buf;
    default:
        return "";
    }
}
