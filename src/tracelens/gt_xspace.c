/*
 * gt_xspace.c - the GPU timeline of an .xplane.pb (see gpu_timeline.h):
 * every /device:GPU:N plane is a device, the events of its stream lines
 * count, classified by the JAX rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "gt_int.h"
#include "reader/xspace.h"

/* The name an event shows in the trace viewer: display name, else name. */
static const char *xp_shown_name(const struct xp_event_meta *m)
{
    return m->display_name[0] ? m->display_name : m->name;
}

/* A line whose events count: named "Stream #...", or unnamed with an id
 * below 100. */
static int counted_line(const struct xp_line *ln)
{
    const char *lname = ln->display_name[0] ? ln->display_name : ln->name;

    if (lname[0] != 0)
        return strncmp(lname, "Stream #", 8) == 0;
    return (uint32_t)(ln->display_id ? ln->display_id : ln->id) < 100;
}

/* 1 if a line of the plane, counted or not, has events. */
static int plane_has_events(const struct xp_plane *pl)
{
    uint32_t l;

    for (l = 0; l < pl->nlines; l++) {
        if (pl->lines[l].nevents > 0)
            return 1;
    }
    return 0;
}

/* The class of each event metadata of the plane (names repeat, classifying
 * is not free); NULL if out of memory. Caller frees. */
static uint8_t *plane_classes(const struct xp_plane *pl)
{
    uint8_t *cls = malloc(pl->nemeta ? pl->nemeta : 1);
    uint32_t e;

    if (cls == NULL)
        return NULL;
    for (e = 0; e < pl->nemeta; e++)
        cls[e] = (uint8_t)gt_classify_jax(xp_shown_name(&pl->emeta[e]));
    return cls;
}

/* The number of counted events of each class. */
static void count_classes(const struct xp_plane *pl, const uint8_t *cls, size_t count[3])
{
    uint32_t l, e;

    memset(count, 0, 3 * sizeof(*count));
    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        if (!counted_line(ln))
            continue;
        for (e = 0; e < ln->nevents; e++)
            count[cls[ln->events[e].meta]]++;
    }
}

/* The counted events of the plane into a, in line order. */
static int add_events(const struct xp_plane *pl, const uint8_t *cls, struct gt_acc *a)
{
    uint32_t l, e;
    int rc;

    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        if (!counted_line(ln))
            continue;
        for (e = 0; e < ln->nevents; e++) {
            const struct xp_event *ev = &ln->events[e];
            double ts = (double)xp_event_start_ps(ln, ev) / 1e6;
            double dur = (double)(ev->duration_ps > 0 ? ev->duration_ps : 1) / 1e6;
            rc = gt_acc_add(a, (enum gt_class)cls[ev->meta], ts, dur);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* The device of a GPU plane into a (zeroed): its pid (TraceLens's gpu_pid),
 * name and intervals. */
static int device_from_plane(const struct xp_plane *pl, struct gt_acc *a)
{
    uint8_t *cls = plane_classes(pl);
    size_t count[3];
    int rc = 0, c;

    if (cls == NULL)
        return -ENOMEM;
    a->pid = 1 + pl->id > 500 || 1 + pl->id < 1 ? 1 : 1 + pl->id;
    a->name = strdup(pl->name);
    if (a->name == NULL) {
        free(cls);
        return -ENOMEM;
    }
    /* Count each class first: the arrays are allocated once. */
    count_classes(pl, cls, count);
    for (c = 0; c < 3 && rc == 0; c++)
        rc = gt_acc_reserve(a, (enum gt_class)c, count[c]);
    if (rc == 0)
        rc = add_events(pl, cls, a);
    free(cls);
    return rc;
}

int gt_from_xspace(struct xspace *xs, struct gt_host **gp, struct xp_err *err)
{
    struct gt_acc *acc = calloc(xs->nplanes ? xs->nplanes : 1, sizeof(*acc));
    int64_t *seen = malloc((xs->nplanes ? xs->nplanes : 1) * sizeof(*seen));
    size_t nacc = 0, nseen = 0;
    uint32_t p;
    int rc = 0;

    if (acc == NULL || seen == NULL) {
        free(acc);
        free(seen);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (p = 0; p < xs->nplanes && rc == 0; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (strncmp(pl->name, "/device:GPU:", 12) != 0)
            continue;
        /* Counted even when it fails: what it holds is freed below. */
        rc = device_from_plane(pl, &acc[nacc++]);
        if (rc == 0 && plane_has_events(pl))
            seen[nseen++] = acc[nacc - 1].pid;
    }
    return gt_devices_finish(acc, nacc, seen, nseen, rc, gp, err);
}
