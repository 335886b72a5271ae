/*
 * hosts.c - hosts.json: the hosts of a run, as XProf's hosts route lists them
 * ([{"hostname": "..."}], sorted).
 */
#include "tool.h"

static int hosts_produce(struct tool_ctx *ctx, struct out *o)
{
    uint32_t i;

    out_putc(o, '[');
    for (i = 0; i < ctx->snap->nhosts; i++) {
        if (i > 0)
            out_puts(o, ", ");
        out_puts(o, "{\"hostname\": ");
        out_json_cstr(o, ctx->snap->hosts[i]);
        out_putc(o, '}');
    }
    out_puts(o, "]\n");
    return 0;
}

const struct tool tool_hosts_json = {
    .file = "hosts.json",
    .scope = TOOL_RUN,
    .produce = hosts_produce,
};
