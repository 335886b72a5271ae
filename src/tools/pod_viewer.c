/*
 * pod_viewer.c - pod_viewer.json: XProf's pod viewer (tag "pod_viewer";
 * xprof/convert/op_stats_to_pod_viewer.cc) over the run's combined
 * op_stats, as protobuf's JSON printer writes the PodViewerDatabase with
 * every field without presence: per step of the step db and per core its
 * pod stats record (src/op_stats/op_stats_pod.h), the step diagnostics, the
 * nine step-breakdown event types and the device type. Fields in number
 * order, maps by key; the unset summary and topology are left out.
 *
 * A core without core details gets an empty host name here and a line in
 * errors.txt (XProf drops its record, which misaligns the records of the
 * cores after it). XProf does not list the tool in run_tools.
 */
#include <errno.h>
#include <string.h>

#include "op_stats/op_stats_pod.h"
#include "out/pbjson.h"
#include "tool.h"

static void str(struct out *o, const char *s)
{
    pbjson_str(o, s, strlen(s));
}

static void write_record(struct out *o, const struct pod_record *r)
{
    int t;

    out_puts(o, "{\"hostName\":");
    str(o, r->host_name != NULL ? r->host_name : "");
    out_puts(o, ",\"chipId\":0,\"nodeId\":0,\"stepNum\":");
    out_i64(o, r->step_num);
    out_puts(o, ",\"totalDurationUs\":");
    pbjson_double(o, r->total_duration_us);
    out_puts(o, ",\"bottleneck\":");
    str(o, r->bottleneck);
    out_puts(o, ",\"stepBreakdownUs\":{");
    for (t = 1; t <= POD_NTYPES; t++) {
        if (t > 1)
            out_putc(o, ',');
        out_putc(o, '"');
        out_i64(o, t);
        out_puts(o, "\":");
        pbjson_double(o, r->breakdown_us[t - 1]);
    }
    out_puts(o, "}}");
}

static void write_diagnostics(struct out *o, const struct op_stats *os)
{
    const char *w = NULL;

    /* PopulateStepDiagnostics */
    if (os->use_incomplete_step)
        w = op_msg_incomplete_step;
    else if (os->nsteps == 0)
        w = os->empty_intersect ? op_msg_empty_intersect : op_msg_no_step_marker;
    out_puts(o, "{\"info\":[],\"warnings\":[");
    if (w != NULL)
        str(o, w);
    out_puts(o, "],\"errors\":[]}");
}

static int pod_produce(struct tool_ctx *ctx, struct out *o)
{
    const struct op_stats *os;
    uint32_t s, c, missing = 0, missing_core = 0;
    int t, rc;

    if ((rc = snapshot_op_stats(ctx->snap, ctx->host, &os, ctx->err)) != 0)
        return rc;
    out_puts(o, "{\"podStatsSequence\":{\"podStatsMap\":[");
    for (s = 0; s < os->nsteps; s++) {
        const struct step_entry *se = &os->steps[s];
        if (s > 0)
            out_putc(o, ',');
        out_puts(o, "{\"stepNum\":");
        out_i64(o, se->step_num);
        out_puts(o, ",\"podStatsPerCore\":{");
        for (c = 0; c < se->ncores; c++) {
            struct pod_record r;
            pod_record(os, &se->cores[c], &r);
            if (r.host_name == NULL && missing++ == 0)
                missing_core = se->cores[c].core_id;
            if (c > 0)
                out_putc(o, ',');
            out_putc(o, '"');
            out_i64(o, se->cores[c].core_id);
            out_puts(o, "\":");
            write_record(o, &r);
        }
        out_puts(o, "},\"channelDb\":[],\"coreIdToReplicaIdMap\":{},\"allReduceOpDb\":[]}");
    }
    out_puts(o, "]},\"diagnostics\":");
    write_diagnostics(o, os);
    out_puts(o, ",\"stepBreakdownEvents\":[");
    for (t = 1; t <= POD_NTYPES; t++) {
        if (t > 1)
            out_putc(o, ',');
        out_puts(o, "{\"id\":");
        out_i64(o, t);
        out_puts(o, ",\"name\":");
        str(o, pod_event_type_name(t));
        out_putc(o, '}');
    }
    out_puts(o, "],\"deviceType\":");
    str(o, os->device_type);
    out_putc(o, '}');
    if (missing > 0)
        snapshot_log(ctx->snap,
                     "pod_viewer.json: %u step records of cores without core details (the "
                     "first: core %u) have no host name; XProf drops them",
                     missing, missing_core);
    if (os->nsteps == 0)
        snapshot_log(ctx->snap, "pod_viewer.json: the step database is empty: %s",
                     os->empty_intersect ? op_msg_empty_intersect : op_msg_no_step_marker);
    return 0;
}

const struct tool tool_pod_viewer_json = {
    .file = "pod_viewer.json",
    .tag = "pod_viewer",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = pod_produce,
};
