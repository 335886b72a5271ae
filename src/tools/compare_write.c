/*
 * compare_write.c - compare.md (one page for a person) and compare.json
 * (the same numbers typed: numbers as numbers, units in the keys) of a
 * comparison (compare.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"

#define MD_ROWS 10

static const char test_statement[] =
    "Mann-Whitney U test of the two runs' step times: two-sided, normal approximation with "
    "tie and continuity corrections; a difference is significant when p < 0.05";

/* ---- compare.json ---------------------------------------------------------------- */

static void key(struct out *o, const char *k, int *first)
{
    out_puts(o, *first ? "" : ",");
    *first = 0;
    out_json_cstr(o, k);
    out_putc(o, ':');
}

static void str_or_null(struct out *o, const char *s)
{
    if (s == NULL)
        out_puts(o, "null");
    else
        out_json_cstr(o, s);
}

static void stat_json(struct out *o, const char *k, const struct stat5 *s, int *first)
{
    int f = 1;

    key(o, k, first);
    out_putc(o, '{');
    key(o, "count", &f);
    out_u64(o, s->n);
    key(o, "median", &f);
    out_number(o, s->n ? s->median : NAN);
    key(o, "p90", &f);
    out_number(o, s->n ? s->p90 : NAN);
    key(o, "mean", &f);
    out_number(o, s->n ? s->mean : NAN);
    key(o, "min", &f);
    out_number(o, s->n ? s->min : NAN);
    key(o, "max", &f);
    out_number(o, s->n ? s->max : NAN);
    out_putc(o, '}');
}

static void json_test(struct out *o, const struct compare *c, int *first)
{
    int f = 1;

    key(o, "test", first);
    out_putc(o, '{');
    key(o, "name", &f);
    out_json_cstr(o, "Mann-Whitney U");
    key(o, "definition", &f);
    out_json_cstr(o, test_statement);
    key(o, "alpha", &f);
    out_number(o, COMPARE_ALPHA);
    key(o, "tested", &f);
    out_puts(o, c->tested ? "true" : "false");
    key(o, "u", &f);
    out_number(o, c->tested ? c->mw.u : NAN);
    key(o, "z", &f);
    out_number(o, c->tested ? c->mw.z : NAN);
    key(o, "p_value", &f);
    out_number(o, c->tested ? c->mw.p : NAN);
    key(o, "significant", &f);
    out_puts(o, !c->tested ? "null" : c->mw.p < COMPARE_ALPHA ? "true" : "false");
    out_putc(o, '}');
}

static void json_region(struct out *o, const struct cmp_region *g)
{
    int f = 1;

    out_putc(o, '{');
    key(o, "region", &f);
    out_json_cstr(o, g->name);
    key(o, "min_depth", &f);
    out_u64(o, g->min_depth);
    key(o, "base_count", &f);
    out_u64(o, g->base ? g->base->count : 0);
    key(o, "count", &f);
    out_u64(o, g->run ? g->run->count : 0);
    key(o, "base_incl_median_us", &f);
    out_number(o, g->base ? g->base->incl[1] / 1e6 : NAN);
    key(o, "incl_median_us", &f);
    out_number(o, g->run ? g->run->incl[1] / 1e6 : NAN);
    key(o, "base_self_median_us", &f);
    out_number(o, g->base ? g->base->self[1] / 1e6 : NAN);
    key(o, "self_median_us", &f);
    out_number(o, g->run ? g->run->self[1] / 1e6 : NAN);
    key(o, "base_self_per_step_us", &f);
    out_number(o, g->base_self_per_step);
    key(o, "self_per_step_us", &f);
    out_number(o, g->run_self_per_step);
    key(o, "self_per_step_delta_us", &f);
    out_number(o, g->run_self_per_step - g->base_self_per_step);
    key(o, "share_of_step_change", &f);
    out_number(o, g->share);
    key(o, "status", &f);
    out_json_cstr(o, g->status);
    out_putc(o, '}');
}

static void json_rows(struct out *o, const char *k, const struct cmp_row *v, size_t n, int *first)
{
    size_t i;

    key(o, k, first);
    out_putc(o, '[');
    for (i = 0; i < n; i++) {
        const struct cmp_row *w = &v[i];
        int f = 1;
        out_puts(o, i ? ",{" : "{");
        key(o, "kind", &f);
        out_json_cstr(o, w->kind);
        key(o, "name", &f);
        out_json_cstr(o, w->name);
        key(o, strcmp(w->kind, "kernel") == 0 ? "op" : "category", &f);
        out_json_cstr(o, w->detail);
        key(o, "base_us_per_step", &f);
        out_number(o, w->base_us);
        key(o, "us_per_step", &f);
        out_number(o, w->run_us);
        key(o, "delta_us_per_step", &f);
        out_number(o, w->delta_us);
        key(o, "ratio", &f);
        out_number(o, w->base_us > 0 ? w->run_us / w->base_us : NAN);
        key(o, "share_of_change", &f);
        out_number(o, w->share);
        key(o, "base_count_per_step", &f);
        out_number(o, w->base_count);
        key(o, "count_per_step", &f);
        out_number(o, w->run_count);
        key(o, "status", &f);
        out_json_cstr(o, w->status);
        out_putc(o, '}');
    }
    out_putc(o, ']');
}

static void json_gpu_side(struct out *o, const char *k, const struct run_gpu *g, int *first)
{
    int f = 1;

    key(o, k, first);
    if (g == NULL) {
        out_puts(o, "null");
        return;
    }
    out_putc(o, '{');
    key(o, "host", &f);
    out_json_cstr(o, g->host);
    key(o, "busy_us", &f);
    out_number(o, g->busy_us);
    key(o, "idle_us", &f);
    out_number(o, g->idle_us);
    key(o, "exposed_comm_us", &f);
    out_number(o, g->exposed_comm_us);
    key(o, "exposed_memcpy_us", &f);
    out_number(o, g->exposed_memcpy_us);
    out_putc(o, '}');
}

static void json_gpus(struct out *o, const struct compare *c, int *first)
{
    size_t i;

    key(o, "gpus", first);
    out_putc(o, '[');
    for (i = 0; i < c->ngpus; i++) {
        const struct cmp_gpu *g = &c->gpus[i];
        int f = 1;
        out_puts(o, i ? ",{" : "{");
        key(o, "device", &f);
        out_json_cstr(o, g->run ? g->run->device : g->base->device);
        json_gpu_side(o, "base", g->base, &f);
        json_gpu_side(o, "run", g->run, &f);
        key(o, "busy_delta_us", &f);
        out_number(o, g->base && g->run ? g->run->busy_us - g->base->busy_us : NAN);
        key(o, "idle_delta_us", &f);
        out_number(o, g->base && g->run ? g->run->idle_us - g->base->idle_us : NAN);
        key(o, "exposed_comm_delta_us", &f);
        out_number(o, g->base && g->run ? g->run->exposed_comm_us - g->base->exposed_comm_us : NAN);
        key(o, "exposed_memcpy_delta_us", &f);
        out_number(o, g->base && g->run ? g->run->exposed_memcpy_us - g->base->exposed_memcpy_us
                                        : NAN);
        key(o, "status", &f);
        out_json_cstr(o, g->status);
        out_putc(o, '}');
    }
    out_putc(o, ']');
}

void cmp_write_json(struct out *o, const struct compare *c)
{
    char verdict[1024];
    int first = 1, f = 1, i;
    size_t k;

    cmp_verdict(c, verdict, sizeof(verdict));
    out_putc(o, '{');
    key(o, "run", &first);
    out_json_cstr(o, c->run.name);
    key(o, "base", &first);
    out_json_cstr(o, c->base.name);
    key(o, "source", &first);
    out_json_cstr(o, c->run.kind);
    key(o, "base_source", &first);
    out_json_cstr(o, c->base.kind);
    key(o, "verdict", &first);
    out_json_cstr(o, verdict);
    json_test(o, c, &first);
    key(o, "step_name", &first);
    str_or_null(o, c->run.step_name);
    key(o, "base_step_name", &first);
    str_or_null(o, c->base.step_name);
    key(o, "step_time_us", &first);
    out_putc(o, '{');
    stat_json(o, "base", &c->base.step_us, &f);
    stat_json(o, "run", &c->run.step_us, &f);
    key(o, "median_delta", &f);
    out_number(o, c->base.nsteps && c->run.nsteps ? c->median_delta_us : NAN);
    key(o, "median_ratio", &f);
    out_number(o, c->base.nsteps && c->run.nsteps ? c->median_ratio : NAN);
    key(o, "mean_delta", &f);
    out_number(o, c->base.nsteps && c->run.nsteps ? c->mean_delta_us : NAN);
    out_putc(o, '}');
    key(o, "region_changed_most", &first);
    if (c->most == NULL)
        out_puts(o, "null");
    else
        json_region(o, c->most);
    key(o, "regions", &first);
    out_putc(o, '[');
    for (k = 0; k < c->nregions; k++) {
        out_puts(o, k ? "," : "");
        json_region(o, &c->regions[k]);
    }
    out_putc(o, ']');
    json_rows(o, "ops", c->ops, c->nops, &first);
    json_rows(o, "kernels", c->kernels, c->nkernels, &first);
    json_gpus(o, c, &first);
    key(o, "warnings", &first);
    out_putc(o, '[');
    for (i = 0; i < c->warnings.n; i++) {
        out_puts(o, i ? "," : "");
        out_json_cstr(o, c->warnings.msg[i]);
    }
    out_puts(o, "]}\n");
}

/* ---- compare.md ------------------------------------------------------------------ */

/* Text for a Markdown table cell: '|' and line breaks would end it; past
 * 80 bytes its start and end. */
static void md_cell(struct out *o, const char *s)
{
    size_t n = strlen(s), i;

    for (i = 0; i < n; i++) {
        if (n > 80 && i == 50) {
            out_puts(o, "...");
            i = n - 27;
        }
        out_putc(o, s[i] == '|' || s[i] == '\n' ? ' ' : s[i]);
    }
}

static void md_num(struct out *o, double v)
{
    if (isfinite(v))
        out_printf(o, "%.3f", v);
    else
        out_puts(o, "-");
}

static void md_signed(struct out *o, double v)
{
    if (isfinite(v))
        out_printf(o, "%+.3f", v);
    else
        out_puts(o, "-");
}

static void md_pct(struct out *o, double share)
{
    if (isfinite(share))
        out_printf(o, "%.1f%%", share * 100);
    else
        out_puts(o, "-");
}

static void md_steps(struct out *o, const struct compare *c)
{
    const struct stat5 *b = &c->base.step_us, *r = &c->run.step_us;
    const char *step = c->run.step_name ? c->run.step_name : c->base.step_name;

    out_printf(o, "\n## Step time (`%s`)\n\n", step ? step : "no steps");
    out_puts(o,
             "| | steps | median µs | p90 µs | mean µs |\n| --- | ---: | ---: | ---: | ---: |\n");
    out_printf(o, "| base %s | %u | ", c->base.name, b->n);
    md_num(o, b->n ? b->median : NAN);
    out_puts(o, " | ");
    md_num(o, b->n ? b->p90 : NAN);
    out_puts(o, " | ");
    md_num(o, b->n ? b->mean : NAN);
    out_printf(o, " |\n| run %s | %u | ", c->run.name, r->n);
    md_num(o, r->n ? r->median : NAN);
    out_puts(o, " | ");
    md_num(o, r->n ? r->p90 : NAN);
    out_puts(o, " | ");
    md_num(o, r->n ? r->mean : NAN);
    out_puts(o, " |\n| delta | | ");
    md_signed(o, b->n && r->n ? c->median_delta_us : NAN);
    out_puts(o, " | ");
    md_signed(o, b->n && r->n ? r->p90 - b->p90 : NAN);
    out_puts(o, " | ");
    md_signed(o, b->n && r->n ? c->mean_delta_us : NAN);
    out_puts(o, " |\n\n");
    out_printf(o, "Test: %s.", test_statement);
    if (c->tested)
        out_printf(o, " U = %.1f, z = %.3f, p = %.3g.\n", c->mw.u, c->mw.z, c->mw.p);
    else
        out_puts(o, " Not run (too few steps).\n");
}

static void md_regions(struct out *o, const struct compare *c)
{
    size_t i;

    out_puts(o, "\n## Regions (steps.csv, regions.csv)\n\n");
    if (c->most != NULL) {
        out_printf(o, "Changed most: `%s`, self time per step ", c->most->name);
        md_num(o, c->most->base_self_per_step);
        out_puts(o, " → ");
        md_num(o, c->most->run_self_per_step);
        out_puts(o, " µs (");
        md_signed(o, c->most->run_self_per_step - c->most->base_self_per_step);
        out_puts(o, " µs), ");
        md_pct(o, c->most->share);
        out_puts(o, " of the change of the mean step time.\n\n");
    }
    if (c->nregions == 0) {
        out_puts(o, "No regions.\n");
        return;
    }
    out_puts(o, "| region | depth | incl median µs (base → run) | self median µs (base → run) | "
                "self µs/step delta | share of step change |\n"
                "| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (i = 0; i < c->nregions && i < MD_ROWS; i++) {
        const struct cmp_region *g = &c->regions[i];
        out_puts(o, "| ");
        md_cell(o, g->name);
        out_printf(o, " | %u | ", g->min_depth);
        md_num(o, g->base ? g->base->incl[1] / 1e6 : NAN);
        out_puts(o, " → ");
        md_num(o, g->run ? g->run->incl[1] / 1e6 : NAN);
        out_puts(o, " | ");
        md_num(o, g->base ? g->base->self[1] / 1e6 : NAN);
        out_puts(o, " → ");
        md_num(o, g->run ? g->run->self[1] / 1e6 : NAN);
        out_puts(o, " | ");
        md_signed(o, g->run_self_per_step - g->base_self_per_step);
        out_puts(o, " | ");
        md_pct(o, g->share);
        out_puts(o, " |\n");
    }
}

static void md_rows(struct out *o, const char *title, const struct cmp_row *v, size_t n)
{
    size_t i, shown = 0;

    out_printf(o, "\n## %s (time per step, largest change first)\n\n", title);
    if (n == 0) {
        out_puts(o, "None.\n");
        return;
    }
    out_puts(o, "| kind | name | base µs | run µs | delta µs | share of change | status |\n"
                "| --- | --- | ---: | ---: | ---: | ---: | --- |\n");
    for (i = 0; i < n && shown < MD_ROWS; i++) {
        const struct cmp_row *w = &v[i];
        if (w->delta_us == 0 && strcmp(w->status, "both") == 0)
            continue;
        out_printf(o, "| %s | ", w->kind);
        md_cell(o, w->name);
        out_puts(o, " | ");
        md_num(o, w->base_us);
        out_puts(o, " | ");
        md_num(o, w->run_us);
        out_puts(o, " | ");
        md_signed(o, w->delta_us);
        out_puts(o, " | ");
        md_pct(o, w->share);
        out_printf(o, " | %s |\n", w->status);
        shown++;
    }
    if (shown == 0)
        out_puts(o, "| | no change | | | | | |\n");
}

static void md_gpus(struct out *o, const struct compare *c)
{
    size_t i;

    out_puts(o, "\n## GPUs (gpu_timeline.csv, µs over the run)\n\n");
    if (c->ngpus == 0) {
        out_puts(o, "No GPU timeline.\n");
        return;
    }
    out_puts(o, "| device | busy (base → run) | idle (base → run) | exposed comm delta | "
                "exposed memcpy delta | status |\n| --- | ---: | ---: | ---: | ---: | --- |\n");
    for (i = 0; i < c->ngpus; i++) {
        const struct cmp_gpu *g = &c->gpus[i];
        const struct run_gpu *any = g->run ? g->run : g->base;
        int both = g->base && g->run;
        out_printf(o, "| %s %s | ", any->host, any->device);
        md_num(o, g->base ? g->base->busy_us : NAN);
        out_puts(o, " → ");
        md_num(o, g->run ? g->run->busy_us : NAN);
        out_puts(o, " | ");
        md_num(o, g->base ? g->base->idle_us : NAN);
        out_puts(o, " → ");
        md_num(o, g->run ? g->run->idle_us : NAN);
        out_puts(o, " | ");
        md_signed(o, both ? g->run->exposed_comm_us - g->base->exposed_comm_us : NAN);
        out_puts(o, " | ");
        md_signed(o, both ? g->run->exposed_memcpy_us - g->base->exposed_memcpy_us : NAN);
        out_printf(o, " | %s |\n", g->status);
    }
}

void cmp_write_md(struct out *o, const struct compare *c)
{
    char verdict[1024];
    int i;

    cmp_verdict(c, verdict, sizeof(verdict));
    out_printf(o, "# Run %s against base %s\n\n%s\n", c->run.name, c->base.name, verdict);
    md_steps(o, c);
    md_regions(o, c);
    md_rows(o, "Ops", c->ops, c->nops);
    md_rows(o, "Kernels", c->kernels, c->nkernels);
    md_gpus(o, c);
    if (c->warnings.n > 0)
        out_puts(o, "\n## Warnings\n\n");
    for (i = 0; i < c->warnings.n; i++)
        out_printf(o, "- %s\n", c->warnings.msg[i]);
}
