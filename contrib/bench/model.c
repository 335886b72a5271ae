/*
 * model.c - the trace viewer's floor, for `make bench`: the session model it
 * reads before it does any work of its own.
 *
 *   xprofs-model FILE.xplane.pb
 *
 * Opens FILE, decodes every event on every core (xspace_decode), groups the
 * events as XProf's preprocessing does when the file is not saved grouped
 * (xp_groups_build) and derives XProf's GPU lines from them (derived_build:
 * Steps, XLA Modules, XLA Ops, Framework Ops and Name Scope, Source code,
 * Launch Stats), as tv_build_xplane does before it fills its index, with
 * the allocator set up as the xprofs command sets it (malloc_tune). Prints
 * "EVENTS DERIVED_EVENTS SECONDS", the seconds of each step and the anonymous
 * memory the model holds (its resident size less the mapped profile's
 * pages, which are the page cache's, not fresh memory): the time is
 * what trace_viewer.json cannot go below as built, since every trace event
 * and every derived line comes out of this model.
 */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "xplane/derived.h"
#include "base/err.h"
#include "xplane/group.h"
#include "base/malloc_tune.h"
#include "reader/xspace.h"

/* The process's resident anonymous memory in MB (RssAnon), or -1. */
static long rss_anon_mb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "RssAnon:", 8) == 0 && sscanf(line + 8, "%ld", &kb) == 1)
            break;
    }
    fclose(f);
    return kb < 0 ? -1 : kb / 1024;
}

int main(int argc, char **argv)
{
    struct xp_err err = {0};
    struct xspace *xs = NULL;
    struct xp_groups *g = NULL;
    struct derived *dv = NULL;
    unsigned long long derived_events = 0;
    double t0, t1, t2, t3;
    uint32_t i;
    int rc;

    malloc_tune(argv); /* the allocator set-up of xprofs and xprofs-mount */
    if (argc != 2) {
        fprintf(stderr, "usage: xprofs-model FILE.xplane.pb\n");
        return 2;
    }
    t0 = bench_now();
    rc = xspace_open(argv[1], &xs, &err);
    if (rc == 0)
        rc = xspace_decode(xs, 0, &err);
    t1 = bench_now();
    if (rc == 0 && !xspace_is_grouped(xs))
        rc = xp_groups_build(xs, &g, &err);
    t2 = bench_now();
    if (rc == 0 && g != NULL)
        rc = derived_build(xs, g, NULL, &dv, &err);
    t3 = bench_now();
    if (rc != 0) {
        fprintf(stderr, "xprofs-model: %s\n", err.msg[0] != '\0' ? err.msg : "out of memory");
        derived_free(dv);
        xp_groups_free(g);
        xspace_close(xs);
        return 1;
    }
    if (dv != NULL) {
        for (i = 0; i < dv->nlines; i++)
            derived_events += dv->lines[i].nev;
    }
    printf("%llu %llu %.4f (open and decode %.4f, grouping %.4f, derived lines %.4f; "
           "%ld MB anonymous)\n",
           (unsigned long long)xs->nevents, derived_events, t3 - t0, t1 - t0, t2 - t1, t3 - t2,
           rss_anon_mb());
    derived_free(dv);
    xp_groups_free(g);
    xspace_close(xs);
    return 0;
}
