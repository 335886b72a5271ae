/*
 * agent_cmd_nodata.c - agent commands whose data XProf itself cannot make
 * from an open-source profile of this kind (hardware counters, LLO) or
 * that need Python (verify_numerical_parity): they answer what XProf's
 * open-source build answers then; and upload_trace, which copies a trace
 * into the log directory as XProf's does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "agent_cmds.h"
#include "agent_pyjson.h"
#include "agent_session.h"

/* utilization_viewer needs the TPU performance counters XProf's
 * utilization_viewer tool reads; no file here: XProf's answer for a
 * session that returns none. */
int agent_get_utilization_viewer(struct agent_ctx *ctx)
{
    cJSON *o = cJSON_CreateObject();
    char msg[1200];

    snprintf(msg, sizeof(msg), "No data returned for session %s", ctx->session_id);
    pyj_add_str(o, "status", "NO_DATA");
    pyj_add_str(o, "message", msg);
    return agent_answer_json(ctx, o, 2);
}

/* kernel_utilization: XProf's converter reports the kernels of the TPU
 * planes' performance counters, device by device; a profile without them
 * (every GPU profile) gives no device, and XProf prints that list back
 * (json.dumps, indent 2) after its checks, which need a device. */
int agent_get_kernel_utilization(struct agent_ctx *ctx)
{
    const struct pyval *raw = agent_arg(ctx->args, "raw_bytes");
    cJSON *o;

    /* a str where XProf's converter binding takes bytes: its TypeError */
    if (raw != NULL && raw->kind != PY_NONE)
        return agent_fail(ctx, AGENT_E_USAGE,
                          "xspace_to_tools_data_from_byte_string(): incompatible function "
                          "arguments (raw_bytes must be bytes, not %s)",
                          pyval_type(raw));
    o = cJSON_CreateObject();
    if (o == NULL || pyj_set(o, "devices", cJSON_CreateArray()) != 0 ||
        pyj_add_str(o, "status", "SUCCESS") != 0) {
        cJSON_Delete(o);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    return agent_answer_json(ctx, o, 2);
}

int agent_get_llo_analysis(struct agent_ctx *ctx)
{
    cJSON *o = cJSON_CreateObject();

    pyj_add_str(o, "status", "UNAVAILABLE");
    pyj_add_str(o, "reason", "LLO_ANALYSIS_UNSUPPORTED_IN_OSS");
    pyj_add_str(o, "message", "LLO analysis is not available in the open-source build of XProf.");
    return agent_answer_json(ctx, o, 2);
}

/* XProf imports numpy and ml_dtypes (and the kernels' modules) for it:
 * its answer where they are missing. */
int agent_verify_numerical_parity(struct agent_ctx *ctx)
{
    return agent_fail(ctx, AGENT_E_INTERNAL,
                      "Required numerical dependencies are not installed in current environment: "
                      "No module named 'numpy'. Please install numpy and ml_dtypes (e.g. 'pip "
                      "install numpy ml_dtypes') to use verify_numerical_parity.");
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char buf[4096], *p;

    snprintf(buf, sizeof(buf), "%s", path);
    for (p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -errno;
            *p = c;
        }
        if (*p == '\0')
            return 0;
    }
}

/* shutil.copy: the bytes and the permission bits. 0, -ENOENT (no
 * source), or another -errno. */
static int copy_file(const char *src, const char *dst)
{
    char buf[1 << 16];
    struct stat st;
    ssize_t n;
    int in, out, rc = 0;

    in = open(src, O_RDONLY);
    if (in < 0)
        return -errno;
    if (fstat(in, &st) != 0 || S_ISDIR(st.st_mode)) {
        close(in);
        return S_ISDIR(st.st_mode) ? -EISDIR : -errno;
    }
    out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (out < 0) {
        rc = -errno;
        close(in);
        return rc;
    }
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        if (write(out, buf, (size_t)n) != n) {
            rc = -EIO;
            break;
        }
    }
    if (n < 0)
        rc = -errno;
    if (fchmod(out, st.st_mode & 07777) != 0 && rc == 0)
        rc = -errno;
    if (close(out) != 0 && rc == 0)
        rc = -errno;
    close(in);
    return rc;
}

/* pathlib's str() of a path: no trailing or doubled slashes. */
static void clean_path(char *p)
{
    char *r = p, *w = p;

    while (*r) {
        *w++ = *r;
        if (*r == '/')
            while (r[1] == '/')
                r++;
        r++;
    }
    *w = '\0';
    while (w - p > 1 && w[-1] == '/')
        *--w = '\0';
}

int agent_upload_trace(struct agent_ctx *ctx)
{
    const char *file = agent_str(ctx, "file_path", NULL);
    const char *run = agent_str(ctx, "run_name", NULL);
    char dir[4096], dest[4096], msg[4400], *logdir;
    const char *base;
    cJSON *o;
    int rc;

    if (ctx->logdir == NULL || ctx->logdir[0] == '\0') {
        o = cJSON_CreateObject();
        pyj_add_str(o, "error", "Logdir not set in client. Provide logdir.");
        return agent_answer_json(ctx, o, -1);
    }
    if (run == NULL || run[0] == '\0')
        run = "imported_trace";
    if (file == NULL)
        file = "None";
    logdir = agent_expand_user(ctx->logdir);
    if (logdir == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    snprintf(dir, sizeof(dir), "%s/plugins/profile/%s", logdir, run);
    free(logdir);
    clean_path(dir);
    base = strrchr(file, '/');
    base = base ? base + 1 : file;
    snprintf(dest, sizeof(dest), "%s/%s", dir, base);
    rc = make_dirs(dir);
    if (rc == 0)
        rc = copy_file(file, dest);
    if (rc == -ENOENT)
        return agent_answer_error(ctx, "Source trace file '%s' does not exist.", file);
    if (rc != 0) {
        char repr[1200], inner[1300];
        snprintf(inner, sizeof(inner), "[Errno %d] %s: '%s'", -rc, strerror(-rc), file);
        py_str_repr(inner, repr, sizeof(repr));
        return agent_answer_error(ctx, "Failed to import trace: OSError(%d, %s)", -rc, repr);
    }
    o = cJSON_CreateObject();
    snprintf(msg, sizeof(msg), "Successfully imported trace to run '%s'", run);
    pyj_add_str(o, "status", "success");
    pyj_add_str(o, "message", msg);
    pyj_add_str(o, "run_name", run);
    pyj_add_str(o, "run_path", dir);
    pyj_add_str(o, "imported_file", dest);
    return agent_answer_json(ctx, o, 2);
}
