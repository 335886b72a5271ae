/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --scenario tpu: a small fixed TPU profile (2 TensorCore planes with the
 * Steps / XLA Modules / XLA Ops lines the TPU runtime writes; see README.md);
 * --scenario tpu_sc adds two SparseCore planes; tpu_raw and tpu_sc_raw are
 * the same without any group_id stat, as the TPU runtime writes them.
 */
#ifndef SYNTH_TPU_H
#define SYNTH_TPU_H

#include <stdint.h>

#include "sink.h"
#include "synth.h"
#include "wire.h"
#include "xplane.h"

/* Writes the tpu XSpace of host h to sink (with --scenario tpu_sc also the
 * SparseCore planes): the small fixed profile when n_steps is 0, else
 * n_steps steps whose while ops repeat their body (a grown profile for
 * benchmarks). Returns 0 or a negative errno. */
int tpu_write(struct synth *sy, int h, struct sink *sink, int64_t n_steps);

/* The number of steps that makes a grown tpu profile about target_bytes
 * long. Returns 0 or a negative errno. */
int tpu_choose_steps(struct synth *sy, uint64_t target_bytes, int64_t *n_steps);

/* The stat metadata id of group_id on every TPU plane of the scenarios. */
#define TPU_STAT_GROUP_ID 1

/* An event's group_id stat k, unless *(int *)ungrouped is set. */
void tpu_put_group(const void *ungrouped, struct emit *em, int64_t k);

/* --scenario tpu_sc: the two SparseCore planes of chip 0, plane ids first_id
 * and first_id + 1 (tpu_sc.c), without group_id stats when ungrouped.
 * Returns 0 or a negative errno. */
int tpu_sc_write(struct sink *sink, int first_id, int ungrouped, uint64_t *bytes);

/* --scenario tpu_dcn (tpu_dcn.c): the DCN ops of every step, their
 * metadata, the HloProto and MegaScale host events. */
#define TPU_DCN_NOPS 12

/* The stat metadata ids the DCN op metadata uses. */
struct tpu_dcn_stats {
    int64_t program_id, symbol_id, category, dcn_info;
};

/* The TPU_DCN_NOPS op events of step k on core c of host h, metadata ids
 * first_meta.., the step starting at step_ps on the line. */
void tpu_dcn_events(struct emit *em, int64_t first_meta, int64_t step_ps, int64_t k, int c, int h,
                    const void *ungrouped);

/* Their event metadata into a TensorCore plane's tail. */
void tpu_dcn_metadata(struct wbuf *tail, int64_t first_meta, const struct tpu_dcn_stats *st);

/* The /host:metadata plane with jit_train_step's HloProto. 0 or -errno. */
int tpu_dcn_metadata_plane(struct sink *sink, uint64_t *bytes);

/* The /host:CPU plane with a MegaScale event per collective and step (step
 * k starting at step_ps(k) after ts_ns). 0 or -errno. */
int tpu_dcn_host_plane(struct sink *sink, int64_t n_steps, int64_t (*step_ps)(int64_t k),
                       int64_t ts_ns, uint64_t *bytes);

#endif
