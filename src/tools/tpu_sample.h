/*
 * tpu_sample.h - one TPU counter sample: the counter events of one line of
 * a TPU plane read into a dense array by counter-table index, as XProf's
 * utilization viewer reads them (xplane_to_utilization_viewer.cc): the
 * counter id is the performance_counter_id stat (of the event, else of its
 * metadata; 0 means the event's metadata id), the value the counter_value
 * stat (a nonzero double converted with saturation, NaN as 0, else the
 * integer), events without a value or with id 0 skipped. Stats that are
 * missing, of another kind or unreadable count as absent.
 */
#ifndef XPROFS_TPU_SAMPLE_H
#define XPROFS_TPU_SAMPLE_H

#include "reader/xspace.h"
#include "tpu_counters.h"

enum tpu_sample_mode {
    TPU_SAMPLE_LAST,    /* a counter's last event in file order wins */
    TPU_SAMPLE_ORDERED, /* its last event in start order (longer first on ties) wins,
                           as after XProf's sort of an ungrouped TensorCore plane */
    TPU_SAMPLE_SUM,     /* the values of a counter add up (kernel_utilization) */
};

struct tpu_sampler {
    const struct tpu_plan *plan;
    const struct xp_plane *pl;
    struct xp_pick pick;    /* performance_counter_id, counter_value */
    int64_t *meta_id;       /* per event metadata: its counter id stat, or -1 */
    int64_t *meta_val_kind; /* per event metadata: 1 if it has a value */
    uint64_t *meta_val;     /* its value */
    uint64_t *v;            /* plan->ntable + 1 values */
    int64_t *off, *dur;     /* TPU_SAMPLE_ORDERED: the winner's start and duration */
    uint32_t *touched;      /* indexes set since the last reset */
    uint8_t *seen;          /* 1 for those */
    uint32_t ntouched;
};

/* 1 if the plane has a counter_value stat metadata at all. */
int tpu_plane_has_counters(const struct xp_plane *pl);

/* Prepare for the lines of pl. 0 or -ENOMEM with err. */
int tpu_sampler_init(struct tpu_sampler *s, const struct tpu_plan *plan, const struct xp_plane *pl,
                     struct xp_err *err);
void tpu_sampler_free(struct tpu_sampler *s);

/* Read line l (decoded) into s->v (cleared first). Returns the number of
 * counter events kept; *longest_ps gets the longest event's duration. */
uint64_t tpu_sample_line(struct tpu_sampler *s, const struct xp_line *l, enum tpu_sample_mode mode,
                         int64_t *longest_ps);

/* XProf's conversion of a counter_value stat to uint64 for the metrics. */
uint64_t tpu_counter_value(const struct xp_stat *st);

#endif
