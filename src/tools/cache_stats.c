/*
 * cache_stats.c - cache_stats.json: what this process has decoded and what
 * its persistent cache (cache_dir=) answered, so that a user (and a test)
 * can tell that a file came from the cache without a profile being read.
 * Found by lookup only, recomputed on every open; the counts are the
 * process's, for every run.
 */
#include "tool.h"

#include "store/store.h"

static int cache_stats_produce(struct tool_ctx *ctx, struct out *o)
{
    struct store_counters c;

    (void)ctx;
    store_counters(&c);
    out_printf(o,
               "{\"profiles_decoded\": %llu, \"cache\": {\"hits\": %llu, \"misses\": %llu, "
               "\"stored\": %llu, \"dropped\": %llu, \"evicted\": %llu}}\n",
               (unsigned long long)snapshot_profiles_opened(), (unsigned long long)c.hits,
               (unsigned long long)c.misses, (unsigned long long)c.stored,
               (unsigned long long)c.dropped, (unsigned long long)c.evicted);
    return 0;
}

const struct tool tool_cache_stats_json = {
    .file = "cache_stats.json",
    .scope = TOOL_RUN | TOOL_HOST,
    .flags = TOOL_UNCACHED | TOOL_UNLISTED,
    .produce = cache_stats_produce,
};
