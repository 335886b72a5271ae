/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /device:GPU:<n> stream lines: the compute stream (fusion and gemm kernels),
 * the input copy stream, the metrics copy stream and the collective stream.
 * Kernel stats follow the corpus' ROCm planes: correlation_id,
 * kernel_details, tf_op, name, hlo_op, hlo_module, program_id.
 */
#include "lines.h"
#include "synth.h"

int64_t lines_device_ts(const void *sy)
{
    return ((const struct synth *)sy)->t0_ns;
}

/* Kernels of one kind group (collectives or not) of every module on GPU g. */
static void kernels(struct emit *em, const struct synth *sy, const struct plan *pl, int g,
                    int collectives)
{
    int64_t ts = lines_device_ts(sy);
    size_t m, i, idx = 0;

    for (m = 0; m < sy->prog.n_mods; m++) {
        const struct module *mod = &sy->prog.mods[m];

        for (i = 0; i < mod->n_ops; i++, idx++) {
            const struct op *op = &mod->ops[i];
            const struct plan_op *p = plan_op_at(pl, idx, g);
            const struct op_ids *id = &sy->ids[idx];

            if (op->kind == OP_WAIT || (op->kind == OP_COLL) != collectives)
                continue;
            lines_span(em, ts, id->d_kernel, p->dev0, p->dev1);
            xev_uint(em, sy->ds[DS_CORR], p->corr);
            xev_ref(em, sy->ds[DS_KERNEL_DETAILS], id->d_details);
            xev_ref(em, sy->ds[DS_TF_OP], sy->d_xla_ref);
            xev_ref(em, sy->ds[DS_NAME], id->d_scope);
            xev_ref(em, sy->ds[DS_HLO_OP], id->d_hlo);
            xev_ref(em, sy->ds[DS_HLO_MODULE], sy->mids[m].d_module);
            xev_int(em, sy->ds[DS_PROGRAM_ID], mod->program_id);
            xev_end(em);
        }
    }
}

/* Writes the kernels of every step, collectives or the rest. */
static int kernel_line(struct synth *sy, int g, int collectives, struct emit *em)
{
    int64_t s;

    for (s = sy->s_begin; s < sy->s_end && em->err == 0; s++) {
        plan_step(sy, s, &sy->plan);
        kernels(em, sy, &sy->plan, g, collectives);
    }
    return em->err;
}

int lines_compute(void *ctx, int gpu, struct emit *em)
{
    return kernel_line(ctx, gpu, 0, em);
}

int lines_collective(void *ctx, int gpu, struct emit *em)
{
    return kernel_line(ctx, gpu, 1, em);
}

/* Writes one copy per step from the plan's h2d (d2h = 0) or d2h array. */
static int copy_line(struct synth *sy, int g, int d2h, struct emit *em)
{
    int64_t ts = lines_device_ts(sy);
    int64_t s;

    for (s = sy->s_begin; s < sy->s_end && em->err == 0; s++) {
        const struct plan_copy *c;

        plan_step(sy, s, &sy->plan);
        c = d2h ? &sy->plan.d2h[g] : &sy->plan.h2d[g];
        lines_span(em, ts, d2h ? sy->de_d2h : sy->de_h2d, c->dev0, c->dev1);
        xev_uint(em, sy->ds[DS_CORR], c->corr);
        xev_ref(em, sy->ds[DS_MEMCPY], d2h ? sy->d2h_ref_d[g] : sy->h2d_ref_d[g]);
        xev_end(em);
    }
    return em->err;
}

int lines_h2d(void *ctx, int gpu, struct emit *em)
{
    return copy_line(ctx, gpu, 0, em);
}

int lines_d2h(void *ctx, int gpu, struct emit *em)
{
    return copy_line(ctx, gpu, 1, em);
}
