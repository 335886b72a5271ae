/*
 * smart_suggestion.c - smart_suggestion.json: XProf's smart suggestions
 * (tag "smart_suggestion"; src/op_stats/op_stats_suggest.h computes them)
 * as protobuf's JSON printer writes the SmartSuggestionReport with every
 * field: {"suggestions":[{"ruleName":...,"suggestionText":...}]}.
 *
 * XProf's open-source build applies BarrierCoresRule only, so that is the
 * default; ?rules=all (ours) applies the ten rules of XProf's full set.
 * XProf's refresh_suggestion is accepted: nothing is cached across
 * snapshots here. XProf does not list the tool in run_tools.
 */
#include <errno.h>
#include <string.h>

#include "op_stats/op_stats_suggest.h"
#include "out/pbjson.h"
#include "tool.h"

static const struct query_key suggestion_keys[] = {
    {"refresh_suggestion", Q_STRING, 0, 0},
    {"rules", Q_STRING, 0, 0},
    {NULL, 0, 0, 0},
};

static int suggestion_produce(struct tool_ctx *ctx, struct out *o)
{
    const char *rules = query_get(ctx->q, "rules");
    struct host_list hl = tool_hosts(ctx);
    const struct op_stats *os;
    struct ss_report r;
    enum ss_rule_set set = SS_3P_RULES;
    uint32_t i;
    int rc;

    if (rules != NULL && strcmp(rules, "all") == 0)
        set = SS_ALL_RULES;
    else if (rules != NULL && strcmp(rules, "3p") != 0)
        return xp_err_set(ctx->err, -EINVAL,
                          "rules=%s: use rules=3p (XProf's open-source rules, the default) or "
                          "rules=all (XProf's full rule set)",
                          rules);
    if ((rc = snapshot_op_stats(ctx->snap, ctx->host, &os, ctx->err)) != 0)
        return rc;
    rc = ss_run(&hl, os, set, &r, ctx->err);
    if (rc == 0) {
        out_puts(o, "{\"suggestions\":[");
        for (i = 0; i < r.n; i++) {
            if (i > 0)
                out_putc(o, ',');
            out_puts(o, "{\"ruleName\":");
            pbjson_str(o, r.v[i].rule_name, strlen(r.v[i].rule_name));
            out_puts(o, ",\"suggestionText\":");
            pbjson_str(o, r.v[i].text, strlen(r.v[i].text));
            out_putc(o, '}');
        }
        out_puts(o, "]}");
    }
    ss_free(&r);
    return rc;
}

const struct tool tool_smart_suggestion_json = {
    .file = "smart_suggestion.json",
    .tag = "smart_suggestion",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = suggestion_keys,
    .listed = tool_listed_xplane,
    .produce = suggestion_produce,
};
