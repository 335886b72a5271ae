/*
 * compare_csv.c - compare_steps.csv, compare_ops.csv, compare_kernels.csv
 * and compare_gpu_timeline.csv: the matched rows of a comparison
 * (compare.h), largest change first; base_* columns are the base run's, the
 * unprefixed ones this run's; times in µs; an empty cell is no value.
 */
#include <math.h>
#include <string.h>

#include "compare.h"

static void cell_str(struct out *o, const char *s)
{
    out_csv_str(o, s ? s : "", s ? strlen(s) : 0);
    out_putc(o, ',');
}

static void cell_num(struct out *o, double v)
{
    if (isfinite(v))
        out_number(o, v);
    out_putc(o, ',');
}

/* The last cell of a row. */
static void cell_end(struct out *o, const char *s)
{
    out_puts(o, s);
    out_putc(o, '\n');
}

void cmp_write_steps_csv(struct out *o, const struct compare *c)
{
    size_t i;

    out_puts(o, "region,min_depth,base_count,count,base_incl_median_us,incl_median_us,"
                "incl_median_delta_us,base_self_median_us,self_median_us,self_median_delta_us,"
                "base_self_per_step_us,self_per_step_us,self_per_step_delta_us,"
                "share_of_step_change,status\n");
    for (i = 0; i < c->nregions; i++) {
        const struct cmp_region *g = &c->regions[i];
        double bi = g->base ? g->base->incl[1] / 1e6 : NAN,
               ri = g->run ? g->run->incl[1] / 1e6 : NAN;
        double bs = g->base ? g->base->self[1] / 1e6 : NAN,
               rs = g->run ? g->run->self[1] / 1e6 : NAN;
        cell_str(o, g->name);
        cell_num(o, g->min_depth);
        cell_num(o, g->base ? (double)g->base->count : 0);
        cell_num(o, g->run ? (double)g->run->count : 0);
        cell_num(o, bi);
        cell_num(o, ri);
        cell_num(o, ri - bi);
        cell_num(o, bs);
        cell_num(o, rs);
        cell_num(o, rs - bs);
        cell_num(o, g->base_self_per_step);
        cell_num(o, g->run_self_per_step);
        cell_num(o, g->run_self_per_step - g->base_self_per_step);
        cell_num(o, g->share);
        cell_end(o, g->status);
    }
}

static void write_rows(struct out *o, const struct cmp_row *v, size_t n, int kernels)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const struct cmp_row *w = &v[i];
        if (!kernels)
            cell_str(o, w->kind);
        cell_str(o, w->name);
        cell_str(o, w->detail);
        cell_num(o, w->base_us);
        cell_num(o, w->run_us);
        cell_num(o, w->delta_us);
        cell_num(o, w->base_us > 0 ? w->run_us / w->base_us : NAN);
        cell_num(o, w->share);
        cell_num(o, w->base_count);
        cell_num(o, w->run_count);
        cell_end(o, w->status);
    }
}

void cmp_write_ops_csv(struct out *o, const struct compare *c)
{
    out_puts(o, "kind,name,category,base_us_per_step,us_per_step,delta_us_per_step,ratio,"
                "share_of_change,base_count_per_step,count_per_step,status\n");
    write_rows(o, c->ops, c->nops, 0);
}

void cmp_write_kernels_csv(struct out *o, const struct compare *c)
{
    out_puts(o, "kernel,op,base_us_per_step,us_per_step,delta_us_per_step,ratio,"
                "share_of_change,base_count_per_step,count_per_step,status\n");
    write_rows(o, c->kernels, c->nkernels, 1);
}

void cmp_write_gpus_csv(struct out *o, const struct compare *c)
{
    size_t i;

    out_puts(o, "host,device,base_host,base_busy_us,busy_us,busy_delta_us,base_idle_us,idle_us,"
                "idle_delta_us,base_exposed_comm_us,exposed_comm_us,exposed_comm_delta_us,"
                "base_exposed_memcpy_us,exposed_memcpy_us,exposed_memcpy_delta_us,status\n");
    for (i = 0; i < c->ngpus; i++) {
        const struct run_gpu *b = c->gpus[i].base, *r = c->gpus[i].run;
        const struct run_gpu *any = r ? r : b;
        double bv[4] = {NAN, NAN, NAN, NAN}, rv[4] = {NAN, NAN, NAN, NAN};
        int k;
        if (b != NULL) {
            bv[0] = b->busy_us, bv[1] = b->idle_us;
            bv[2] = b->exposed_comm_us, bv[3] = b->exposed_memcpy_us;
        }
        if (r != NULL) {
            rv[0] = r->busy_us, rv[1] = r->idle_us;
            rv[2] = r->exposed_comm_us, rv[3] = r->exposed_memcpy_us;
        }
        cell_str(o, r ? r->host : "");
        cell_str(o, any->device);
        cell_str(o, b ? b->host : "");
        for (k = 0; k < 4; k++) {
            cell_num(o, bv[k]);
            cell_num(o, rv[k]);
            cell_num(o, rv[k] - bv[k]);
        }
        cell_end(o, c->gpus[i].status);
    }
}
