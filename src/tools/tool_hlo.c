/*
 * tool_hlo.c - what the HLO tools (hlo_stats, roofline_model, op_profile,
 * memory_viewer, graph_viewer) share: whether the hosts of a call have HLO
 * modules, the errors.txt line for a tool whose answer is empty because
 * they have none, and the one for a tool whose HLO op texts are partly empty
 * because a host's texts outgrew their budget. They read the hosts' module
 * names and counts (hlo_names.h), which the persistent cache keeps.
 */
#include "tool.h"

#include "hlo/hlo_names.h"

int tool_hlo_module_count(struct tool_ctx *ctx, uint32_t *n)
{
    int i, rc;

    *n = 0;
    for (i = 0; i < tool_host_count(ctx); i++) {
        const struct hlo_names *m;
        rc = snapshot_hlo_names(ctx->snap, tool_host(ctx, i), &m, ctx->err);
        if (rc != 0)
            return rc;
        *n += m->nmods;
    }
    return 0;
}

void tool_note_no_hlo(struct tool_ctx *ctx, const char *file)
{
    struct xp_err err = {0};
    struct tool_ctx c = *ctx;
    uint32_t n;

    /* a failure to read the modules is not this tool's: its own err stays */
    c.err = &err;
    if (tool_hlo_module_count(&c, &n) == 0 && n == 0)
        snapshot_log(ctx->snap,
                     "%s: no HLO modules in this run (no `Hlo Proto` on /host:metadata): "
                     "XProf's HLO views have no HLO ops to show",
                     file);
}

void tool_note_hlo_texts(struct tool_ctx *ctx, const char *file)
{
    struct xp_err err = {0};
    int i;

    /* the modules were read for the answer: a failure here is not news */
    for (i = 0; i < tool_host_count(ctx); i++) {
        const struct hlo_names *m;
        if (snapshot_hlo_names(ctx->snap, tool_host(ctx, i), &m, &err) != 0 ||
            m->texts_truncated == 0)
            continue;
        snapshot_log(ctx->snap,
                     "%s: host %s: %u HLO op texts and stack frames left empty: the texts of "
                     "a host's HLO modules may take 1 MiB plus 4 times the modules' bytes",
                     file, tool_host(ctx, i), m->texts_truncated);
    }
}
