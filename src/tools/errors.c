/*
 * errors.c - errors.txt: one line per reason a file of this run could not be
 * made (corrupt source, unsupported content, a run without steps ...).
 * Recomputed on every open, since it grows as files are read.
 */
#include "tool.h"

#include <pthread.h>

static int errors_produce(struct tool_ctx *ctx, struct out *o)
{
    struct snapshot *snap = ctx->snap;
    uint32_t i;

    pthread_mutex_lock(&snap->lock);
    for (i = 0; i < snap->nerrors; i++) {
        out_puts(o, snap->errors[i]);
        out_putc(o, '\n');
    }
    pthread_mutex_unlock(&snap->lock);
    return 0;
}

const struct tool tool_errors_txt = {
    .file = "errors.txt",
    .scope = TOOL_RUN,
    .flags = TOOL_UNCACHED | TOOL_NO_SOURCES,
    .produce = errors_produce,
};
