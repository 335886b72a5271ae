/*
 * fuzz_reader.c - libFuzzer target of the .xplane.pb reader.
 *
 * Indexes and decodes the input as an XSpace, then touches everything a tool
 * could: every event's metadata and stats (string forms included) and the
 * plane stats. Built by `make fuzz`; inputs that ever crashed it are kept in
 * tests/fuzz/regressions/ and replayed by tests/unit/test_fuzz_regressions.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "reader/xspace.h"

static void touch_all(const struct xspace *xs)
{
    char buf[256];
    uint32_t p, l, e, s;

    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        for (s = 0; s < pl->nstats; s++)
            xp_stat_to_string(&pl->stats[s], buf, sizeof(buf));
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            for (e = 0; e < ln->nevents && ln->events != NULL; e++) {
                struct xp_stat_iter it;
                struct xp_stat st;
                const struct xp_event_meta *m = xp_event_meta(pl, &ln->events[e]);
                for (s = 0; s < m->nstats; s++)
                    xp_stat_to_string(&m->stats[s], buf, sizeof(buf));
                xp_stat_iter_init(&it, pl, ln, &ln->events[e]);
                while (xp_stat_next(&it, &st) == 1) {
                    xp_stat_to_string(&st, buf, sizeof(buf));
                    (void)xp_stat_name(pl, &st);
                }
                (void)xp_event_stat(pl, ln, &ln->events[e], XS_CORRELATION_ID, &st);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xspace *xs;
    struct xp_err err;

    if (xspace_open_buffer("fuzz", data, size, &xs, &err) != 0)
        return 0;
    if (xspace_decode(xs, 2, &err) == 0)
        touch_all(xs);
    xspace_close(xs);
    return 0;
}
