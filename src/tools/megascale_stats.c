/*
 * megascale_stats.c - megascale_stats.json: XProf's Megascale (multi-slice
 * DCN) collective statistics (tag "megascale_stats";
 * xprof/convert/xplane_to_dcn_collective_stats.cc, process_megascale_dcn.cc
 * GetMegaScaleDataTable): one DataTable in a list, a row per rendezvous of
 * the DCN slack summary (src/op_stats/dcn_slack.h).
 *
 * hosts/<host>/megascale_stats.json is that host's analysis (XProf's
 * host_name=<host>); the run-level file is XProf's ALL_HOSTS entry, the
 * hosts' summaries combined. As XProf converts, the answer is the empty
 * table when some host of the call has no "MegaScale:" event on its
 * /host:CPU plane (told by the hosts' facts, host_facts.h, without a
 * profile once cached); the reason goes to errors.txt. tools.json lists the tool
 * when the first host has them (xplane_to_tool_names.cc).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_facts.h"
#include "op_stats/dcn_slack.h"
#include "out/datatable.h"

#define MS "megascale_stats.json"

/* convertBytesToHumanReadableFormat (data_table_utils.cc). */
static void human_bytes(uint64_t value, char *buf, size_t n)
{
    static const char units[] = "KMGTPE";
    int64_t b = (int64_t)value;
    const char *neg = "";
    const char *unit = units;

    if (b == INT64_MIN) {
        snprintf(buf, n, "-8E");
        return;
    }
    if (b < 0) {
        b = -b;
        neg = "-";
    }
    if (b < 1024) {
        snprintf(buf, n, "%s%lldB", neg, (long long)b);
        return;
    }
    while (b >= 1024LL * 1024 && unit[1] != '\0') {
        b /= 1024;
        unit++;
    }
    snprintf(buf, n, "%s%.*f%c", neg, *unit == 'K' ? 1 : 2, b / 1024.0, *unit);
}

static double ms(uint64_t us)
{
    return us / 1000.0;
}

/* GetMegaScaleDataTable. */
static void build_table(const struct dcn_analysis *an, struct dt_table *t)
{
    static const double bandwidth_factor = 8E-9 / 1E-6;
    uint32_t r;
    char buf[64];

    dt_col(t, "rendezvous_name", "string", "Rendezvous Name");
    dt_col(t, "recv_op_name", "string", "Recv Op Name");
    dt_col(t, "send_op_name", "string", "Send Op Name");
    dt_col(t, "transfer_type", "string", "Transfer Type");
    dt_col(t, "slack_time", "number", "Slack Time (ms)");
    dt_col(t, "host_stall", "string", "Host Stall (ms)");
    dt_col(t, "observed_duration", "number", "Observed Duration (ms)");
    dt_col(t, "send_stall", "number", "Send Stall (ms)");
    dt_col(t, "send_done_stall", "number", "SendDone Stall (ms)");
    dt_col(t, "recv_stall", "number", "Recv Stall (ms)");
    dt_col(t, "recv_done_stall", "number", "RecvDone Stall (ms)");
    dt_col(t, "stall_duration", "number", "Stall Duration (ms)");
    dt_col(t, "total_stall", "number", "Aggregated Total Stall (ms)");
    dt_col(t, "occurrences", "number", "Occurrences");
    dt_col(t, "net_tx_bytes", "number", "Data Transmitted Size");
    dt_col(t, "required_bandwidth", "number", "Required Bandwidth (Gbps)");
    for (r = 0; r < an->nrows; r++) {
        const struct dcn_summary *s = &an->rows[r];
        dt_row(t);
        dt_str(t, s->rendezvous);
        dt_str(t, s->recv_op_name);
        dt_str(t, s->send_op_name);
        dt_str(t, s->transfer_type);
        dt_num(t, ms(s->slack_us));
        if (s->host_events_count > 0) {
            snprintf(buf, sizeof(buf), "%.6g", s->host_stall_us / 1000.0); /* StrCat(double) */
            dt_str(t, buf);
        } else {
            dt_str(t, "-");
        }
        dt_num(t, ms(s->observed_duration_us));
        dt_num(t, ms(s->send_duration_us));
        dt_num(t, ms(s->send_done_duration_us));
        dt_num(t, ms(s->recv_duration_us));
        dt_num(t, ms(s->recv_done_duration_us));
        dt_num(t, ms(s->stall_duration_us));
        dt_num(t, ms(s->stall_duration_us * s->occurrences));
        dt_num(t, (double)s->occurrences);
        human_bytes(s->bytes_transmitted, buf, sizeof(buf));
        dt_num_fmt(t, (double)s->bytes_transmitted, buf);
        if (s->slack_us == 0)
            dt_num(t, INT_MAX);
        else
            dt_num(t, (double)s->bytes_transmitted / (double)s->slack_us * bandwidth_factor);
    }
}

/* The first xplane host of the call (its host, else every host of the run)
 * without MegaScale events, into *missing (NULL when every host has them),
 * from the hosts' facts: no profile is read for a run without them. */
static int find_host_without(struct tool_ctx *ctx, const char **missing)
{
    uint32_t h;
    int rc;

    *missing = NULL;
    for (h = 0; h < ctx->snap->nhosts; h++) {
        const char *host = ctx->snap->hosts[h];
        const struct host_facts *f;
        if (ctx->host != NULL && strcmp(ctx->host, host) != 0)
            continue;
        if ((rc = host_facts_get(ctx->snap, host, &f, ctx->err)) != 0)
            return rc;
        if (f->xplane && !f->megascale) {
            *missing = host;
            return 0;
        }
    }
    return 0;
}

/* One host's analysis into an, its notes into errors.txt. */
static int host_analysis(struct tool_ctx *ctx, const char *host, struct dcn_analysis *an)
{
    const char *why;
    int rc = dcn_host_analysis(ctx->snap, host, an, &why, ctx->err);

    if (rc != 0)
        return rc;
    if (why != NULL)
        snapshot_log(ctx->snap, MS ": host %s gives no DCN collectives: %s", host, why);
    if (an->nunknown_instr > 0)
        snapshot_log(ctx->snap,
                     MS ": host %s: %llu host send/recv ops name no instruction of their HLO "
                        "module; left out as XProf does",
                     host, (unsigned long long)an->nunknown_instr);
    if (an->nunsupported_type > 0)
        snapshot_log(ctx->snap,
                     MS ": host %s: %llu collectives of a transfer type XProf does not size "
                        "count 0 bytes",
                     host, (unsigned long long)an->nunsupported_type);
    return 0;
}

/* The call's host, or every xplane host combined (XProf's ALL_HOSTS). */
static int analyse(struct tool_ctx *ctx, struct dcn_analysis *out)
{
    int n = tool_host_count(ctx), i, nused = 0, rc = 0;
    struct dcn_analysis *per;
    const struct dcn_analysis **ptrs;

    if (ctx->host != NULL)
        return host_analysis(ctx, ctx->host, out);
    per = calloc((size_t)n + 1, sizeof(*per));
    ptrs = calloc((size_t)n + 1, sizeof(*ptrs));
    if (per == NULL || ptrs == NULL) {
        free(per);
        free(ptrs);
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < n && rc == 0; i++) {
        const char *host = tool_host(ctx, i);
        if (snapshot_host_file(ctx->snap, host, SRC_XPLANE) == NULL)
            continue;
        dcn_analysis_init(&per[nused]);
        ptrs[nused] = &per[nused];
        rc = host_analysis(ctx, host, &per[nused++]);
    }
    if (rc == 0 && (rc = dcn_analysis_combine(ptrs, (uint32_t)nused, out)) != 0)
        xp_err_set(ctx->err, rc, "out of memory");
    for (i = 0; i < nused; i++)
        dcn_analysis_free(&per[i]);
    free(per);
    free(ptrs);
    return rc;
}

static int megascale_produce(struct tool_ctx *ctx, struct out *o)
{
    struct dcn_analysis an;
    struct dt_table t;
    const char *missing;
    int rc;

    dcn_analysis_init(&an);
    if ((rc = find_host_without(ctx, &missing)) != 0)
        return rc;
    if (missing != NULL)
        snapshot_log(ctx->snap,
                     MS ": host %s has no MegaScale: events on /host:CPU, so XProf gives no "
                        "DCN collective stats for this run (an empty table)",
                     missing);
    else if ((rc = analyse(ctx, &an)) != 0)
        return rc;
    dt_init(&t);
    build_table(&an, &t);
    dcn_analysis_free(&an);
    if (dt_failed(&t)) {
        dt_free(&t);
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    }
    dt_write_json_list(&t, 1, o);
    dt_free(&t);
    return 0;
}

const struct tool tool_megascale_stats_json = {
    .file = "megascale_stats.json",
    .tag = "megascale_stats",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = megascale_produce,
};
