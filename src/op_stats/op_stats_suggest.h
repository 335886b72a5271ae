/*
 * op_stats_suggest.h - XProf's smart suggestions
 * (xprof/convert/smart_suggestion/): rules over the run's signals (the
 * overview's utilizations, the input-pipeline analysis, the step db's
 * per-step category times, the event time fractions of barrier-cores and
 * debug_print), each giving a suggestion with its numbers when its
 * conditions hold. XProf's open-source build applies only BarrierCoresRule
 * (RegisterAllRulesFor3P); SS_ALL_RULES applies its ten rules
 * (RegisterAllRules), in its order.
 */
#ifndef XPROFS_OP_STATS_SUGGEST_H
#define XPROFS_OP_STATS_SUGGEST_H

#include <stdint.h>

#include "base/err.h"
#include "op_stats.h"
#include "session/session.h"

enum ss_rule_set {
    SS_3P_RULES = 0, /* RegisterAllRulesFor3P: BarrierCoresRule */
    SS_ALL_RULES = 1 /* RegisterAllRules */
};

/* SmartSuggestion. */
struct ss_suggestion {
    const char *rule_name; /* "BarrierCoresRule" ... (static) */
    char *text;            /* suggestion_text (HTML), malloc'd */
};

/* SmartSuggestionReport. */
struct ss_report {
    struct ss_suggestion v[16];
    uint32_t n;
};

/* The suggestions for the hosts of hl, whose (combined) op_stats is os.
 * Returns 0 or a negative errno with err; free r with ss_free either way. */
int ss_run(const struct host_list *hl, const struct op_stats *os, enum ss_rule_set rules,
           struct ss_report *r, struct xp_err *err);
void ss_free(struct ss_report *r);

#endif
