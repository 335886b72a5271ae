/*
 * gt_int.h - what the GPU timeline files share: the per-device accumulators
 * (gt_devices.c), the three sources that fill them (gt_xspace.c,
 * gt_jax_trace.c, gt_pt_trace.c) and a name test of gt_classify.c that
 * gt_pt_links.c uses too. Not for other modules: see gpu_timeline.h.
 */
#ifndef XPROFS_GT_INT_H
#define XPROFS_GT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_timeline.h"
#include "base/err.h"

struct ctrace;
struct xspace;

/* Growable interval lists of one device. */
struct gt_acc {
    int64_t pid;
    char *name;
    struct gt_interval *v[3];
    size_t n[3], cap[3];
    uint64_t nevents;
};

/* Room for n more intervals of class c. Returns 0 or -ENOMEM. */
int gt_acc_reserve(struct gt_acc *a, enum gt_class c, size_t n);

/* Append [ts, ts + dur] to class c and count the event. 0 or -ENOMEM. */
int gt_acc_add(struct gt_acc *a, enum gt_class c, double ts, double dur);

/* Free what a holds (not a itself). */
void gt_acc_free(struct gt_acc *a);

/* Put accumulators in the iteration order of the Python set built from the
 * pids seen[0..nseen) (first-appearance order of the events); those not in
 * it keep their order after. Returns 0 or -ENOMEM. */
int gt_acc_order(struct gt_acc *acc, size_t nacc, const int64_t *seen, size_t nseen);

/* Turn accumulators (in Python set order) into the host's devices, taking
 * their names. Devices without counted events are left out (TraceLens stops
 * with an error there); -ENOENT if none is left. */
int gt_host_finish(struct gt_acc *acc, size_t nacc, int pytorch, struct gt_host **gp,
                   struct xp_err *err);

/* The end of a source with one device per pid: after rc (its gathering's
 * result), the accumulators acc[0..nacc) in the order of the pids seen,
 * then the host's devices into *gp; acc and seen are freed either way. */
int gt_devices_finish(struct gt_acc *acc, size_t nacc, int64_t *seen, size_t nseen, int rc,
                      struct gt_host **gp, struct xp_err *err);

/* Free a host's timeline (NULL is fine); a snapshot part's free function. */
void gt_host_free(void *value);

/* The host's timeline from each source. */
int gt_from_xspace(struct xspace *xs, struct gt_host **gp, struct xp_err *err);
int gt_from_jax_trace(const struct ctrace *ct, struct gt_host **gp, struct xp_err *err);
int gt_from_pt_trace(const struct ctrace *ct, struct gt_host **gp, struct xp_err *err);

/* 1 if s holds p, ignoring case. */
int gt_contains_nocase(const char *s, const char *p);

#endif
