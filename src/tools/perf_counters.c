/*
 * perf_counters.c - perf_counters.json: XProf's perf counters tool (tag
 * "perf_counters"; xprof/convert/xplane_to_perf_counters.cc): one row per
 * event with a counter_value stat on the TPU and GPU planes of every host
 * of the call, with a chip id (the plane's global_chip_id stat, else its
 * device_id): host, chip, kernel (the line name), sample (the line id),
 * counter (the event name in lower case), value (formatted in hex), and
 * the performance_counter_description and performance_counter_sets stats.
 *
 * ?names_only=1&device_type=v6e|v7x answers, like XProf's plugin
 * (counter_extractor.py), the chip's counter table as JSON: name (lower
 * case) and id, in the table's order, whatever the run holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_facts.h"
#include "hw_common.h"
#include "out/datatable.h"
#include "tpu_sample.h"

static const struct query_key pc_keys[] = {
    {"host", Q_STRING, 0, 0},
    {"names_only", Q_STRING, 0, 0},
    {"device_type", Q_STRING, 0, 0},
    {NULL, 0, 0, 0},
};

static const char pc_cols[] =
    "{\"cols\":[{\"id\":\"Host\",\"label\":\"Host\",\"type\":\"string\"},"
    "{\"id\":\"Chip\",\"label\":\"Chip\",\"type\":\"number\"},"
    "{\"id\":\"Kernel\",\"label\":\"Kernel\",\"type\":\"string\"},"
    "{\"id\":\"Sample\",\"label\":\"Sample\",\"type\":\"number\"},"
    "{\"id\":\"Counter\",\"label\":\"Counter\",\"type\":\"string\"},"
    "{\"id\":\"Value\",\"label\":\"Value (Hex)\",\"type\":\"number\"},"
    "{\"id\":\"Description\",\"label\":\"Description\",\"type\":\"string\"},"
    "{\"id\":\"Set\",\"label\":\"Set\",\"type\":\"string\"}],\"rows\":[";

/* json.dumps of counter_extractor.get_all_counters(device_type). */
static int names_only(struct tool_ctx *ctx, struct out *o)
{
    const char *type = query_get(ctx->q, "device_type");
    const struct tpu_counter_name *t;
    enum tpu_chip chip;
    size_t n, i, k;

    if (type == NULL || *type == 0)
        return xp_err_set(ctx->err, -EINVAL,
                          "device_type is required for perf_counters with names_only");
    chip = tpu_chip_of_short_name(type);
    if (chip == TPU_CHIP_NONE)
        return xp_err_set(ctx->err, -EINVAL, "Unsupported device_type: %s (v6e or v7x)", type);
    t = tpu_counter_table(chip, &n);
    out_putc(o, '[');
    for (i = 0; i < n; i++) {
        char lower[160];
        size_t len = strlen(t[i].name);
        if (len >= sizeof(lower))
            len = sizeof(lower) - 1;
        for (k = 0; k < len; k++)
            lower[k] = (char)((t[i].name[k] >= 'A' && t[i].name[k] <= 'Z') ? t[i].name[k] + 32
                                                                           : t[i].name[k]);
        out_puts(o, i > 0 ? ", {\"name\": " : "{\"name\": ");
        out_json_str(o, lower, len);
        out_puts(o, ", \"val\": ");
        out_u64(o, t[i].id);
        out_putc(o, '}');
    }
    out_putc(o, ']');
    return 0;
}

/* A plane's chip: global_chip_id, else device_id (the last of each). */
static int64_t chip_id(const struct xp_plane *pl)
{
    int64_t global = xp_plane_stat_id_by_name(pl, "global_chip_id"), chip = -1;
    uint32_t i;

    for (i = 0; global != XP_NO_STAT && i < pl->nstats; i++)
        if (pl->stats[i].meta_id == global)
            chip = xp_stat_int(&pl->stats[i]);
    if (chip == -1) {
        struct hw_tpu_identity id;
        hw_tpu_identity(pl, &id);
        chip = id.device_id;
    }
    return chip;
}

/* A string stat's text (StrOrRefValue): "" for other kinds. */
static void str_cell(struct out *o, const struct xp_stat *st, int found)
{
    if (found && (st->kind == XP_STAT_STR || st->kind == XP_STAT_REF))
        hw_str_cell(o, st->str, st->len, 0);
    else
        hw_str_cell(o, "", 0, 0);
}

/* The first stat of id among an event metadata's stats. */
static int meta_stat(const struct xp_event_meta *em, int64_t id, struct xp_stat *st)
{
    uint32_t k;

    for (k = 0; id != XP_NO_STAT && k < em->nstats; k++) {
        if (em->stats[k].meta_id == id) {
            *st = em->stats[k];
            return 1;
        }
    }
    return 0;
}

static int plane_rows(struct tool_ctx *ctx, const char *host, const struct xp_plane *pl,
                      uint64_t *rows, struct out *o)
{
    int64_t chip = chip_id(pl), ids[3];
    struct xp_pick pk;
    char *lower = NULL;
    size_t cap = 0;
    uint32_t l, i;
    int rc = 0;

    if (chip == -1 || !tpu_plane_has_counters(pl))
        return 0;
    ids[0] = pl->stat_id[XS_COUNTER_VALUE];
    if (ids[0] == XP_NO_STAT)
        ids[0] = xp_plane_stat_id_by_name(pl, "counter_value");
    ids[1] = xp_plane_stat_id_by_name(pl, "performance_counter_description");
    ids[2] = xp_plane_stat_id_by_name(pl, "performance_counter_sets");
    if (xp_pick_init(&pk, pl, ids, 3, 0) != 0)
        return xp_err_set(ctx->err, -ENOMEM, "out of memory for perf counters");
    for (l = 0; l < pl->nlines && rc == 0; l++) {
        const struct xp_line *ln = &pl->lines[l];
        for (i = 0; i < ln->nevents; i++) {
            const struct xp_event *e = &ln->events[i];
            const struct xp_event_meta *em = &pl->emeta[e->meta];
            struct xp_stat st[3];
            uint32_t found = xp_pick_event(&pk, ln, e, st);
            size_t k, n;
            char hex[24], num[40];
            uint64_t value;
            int f;

            for (f = 0; f < 3; f++)
                if (!(found & (1u << f)) && meta_stat(em, ids[f], &st[f]))
                    found |= 1u << f;
            if (!(found & 1))
                continue;
            if (*rows >= HW_MAX_ROWS) {
                rc = xp_err_set(ctx->err, -EIO,
                                "perf_counters.json: more than %d counter samples (host %s, "
                                "plane %s): too many to answer",
                                HW_MAX_ROWS, host, pl->name);
                break;
            }
            value = (st[0].kind == XP_STAT_UINT || st[0].kind == XP_STAT_INT) ? st[0].v.u : 0;
            n = strlen(em->name);
            if (n + 1 > cap) {
                char *nl = realloc(lower, n + 1);
                if (nl == NULL) {
                    rc = xp_err_set(ctx->err, -ENOMEM, "out of memory for perf counters");
                    break;
                }
                lower = nl;
                cap = n + 1;
            }
            for (k = 0; k < n; k++)
                lower[k] = (char)((em->name[k] >= 'A' && em->name[k] <= 'Z') ? em->name[k] + 32
                                                                             : em->name[k]);
            out_puts(o, *rows > 0 ? ",{\"c\":[" : "{\"c\":[");
            hw_str_cell(o, host, strlen(host), 1);
            hw_num_cell(o, (double)chip, 0);
            hw_str_cell(o, ln->name, strlen(ln->name), 0);
            hw_num_cell(o, (double)ln->id, 0);
            hw_str_cell(o, lower, n, 0);
            snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)value);
            out_puts(o, ",{\"f\":\"");
            out_puts(o, hex);
            out_puts(o, "\",\"v\":");
            out_puts(o, dt_fmt_json_double((double)value, num));
            out_putc(o, '}');
            str_cell(o, &st[1], found & 2);
            str_cell(o, &st[2], found & 4);
            out_puts(o, "]}");
            (*rows)++;
        }
    }
    free(lower);
    xp_pick_free(&pk);
    return rc;
}

static int pc_produce(struct tool_ctx *ctx, struct out *o)
{
    const char *only = query_get(ctx->q, "names_only"), *want = query_get(ctx->q, "host");
    uint64_t rows = 0;
    int h, rc = 0;
    uint32_t p;

    if (only != NULL && strcmp(only, "1") == 0)
        return names_only(ctx, o);
    if (want != NULL && *want != 0 && snapshot_host_index(ctx->snap, want) < 0)
        return xp_err_set(ctx->err, -EINVAL, "host=%s: no such host in this run", want);
    out_puts(o, pc_cols);
    for (h = 0; h < tool_host_count(ctx) && rc == 0; h++) {
        const char *host = tool_host(ctx, h);
        const struct host_facts *f;
        struct xspace *xs;
        if (want != NULL && *want != 0 && strcmp(want, host) != 0)
            continue;
        if ((rc = host_facts_get(ctx->snap, host, &f, ctx->err)) != 0)
            return rc;
        if (!f->counter_stat) /* no plane of it has a row: not decoded */
            continue;
        if ((rc = snapshot_xspace_decoded(ctx->snap, host, &xs, ctx->err)) != 0)
            return rc;
        for (p = 0; p < xs->nplanes && rc == 0; p++) {
            const struct xp_plane *pl = &xs->planes[p];
            if (strncmp(pl->name, "/device:TPU:", 12) == 0 ||
                strncmp(pl->name, "/device:GPU:", 12) == 0)
                rc = plane_rows(ctx, host, pl, &rows, o);
        }
    }
    if (rc != 0)
        return rc;
    out_puts(o, "]}");
    if (rows == 0)
        snapshot_log(ctx->snap,
                     "perf_counters.json: empty, as XProf answers it: no TPU or GPU plane with a "
                     "chip id has counter_value stats (no counter planes)");
    return 0;
}

const struct tool tool_perf_counters_json = {
    .file = "perf_counters.json",
    .tag = "perf_counters",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = pc_keys,
    .listed = tool_listed_xplane,
    .produce = pc_produce,
};
