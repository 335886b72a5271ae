/*
 * hw_common.c - shared parts of the hardware tools (hw_common.h).
 */
#include "hw_common.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "out/datatable.h"

int hw_one_host(struct tool_ctx *ctx, const char *what, const char **hostp)
{
    const char *host = query_get(ctx->q, "host");

    if (host != NULL && *host != 0) {
        if (snapshot_host_index(ctx->snap, host) < 0)
            return xp_err_set(ctx->err, -EINVAL, "host=%s: no such host in this run", host);
        if (ctx->host != NULL && strcmp(ctx->host, host) != 0)
            return xp_err_set(ctx->err, -EINVAL, "host=%s: this file is of host %s", host,
                              ctx->host);
        *hostp = host;
        return 0;
    }
    if (tool_host_count(ctx) != 1)
        return xp_err_set(ctx->err, -EINVAL,
                          "%s expects only 1 XSpace path but gets %d (XProf): add ?host=<host> "
                          "or read hosts/<host>/",
                          what, tool_host_count(ctx));
    *hostp = tool_host(ctx, 0);
    return 0;
}

void hw_tpu_identity(const struct xp_plane *pl, struct hw_tpu_identity *id)
{
    int64_t dev = pl->stat_id[XS_DEVICE_ID], type = pl->stat_id[XS_DEVICE_TYPE_STRING];
    uint32_t i;

    id->device_id = -1;
    id->device_type = "";
    id->device_type_len = 0;
    for (i = 0; i < pl->nstats; i++) {
        const struct xp_stat *st = &pl->stats[i];
        if (dev != XP_NO_STAT && st->meta_id == dev) {
            id->device_id = st->kind == XP_STAT_UINT  ? (int64_t)st->v.u
                            : st->kind == XP_STAT_INT ? st->v.i
                                                      : 0;
        } else if (type != XP_NO_STAT && st->meta_id == type) {
            if (st->kind == XP_STAT_STR || st->kind == XP_STAT_REF) {
                id->device_type = st->str;
                id->device_type_len = st->len;
            } else {
                id->device_type = "";
                id->device_type_len = 0;
            }
        }
    }
    id->chip = tpu_chip_of_device_type(id->device_type, id->device_type_len);
}

int hw_is_tensor_core(const char *name)
{
    const char *p = name + strlen("/device:TPU:");

    if (strncmp(name, "/device:TPU:", strlen("/device:TPU:")) != 0 || *p == 0)
        return 0;
    for (; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    return 1;
}

void hw_num_cell(struct out *o, double v, int first)
{
    char buf[40];

    out_puts(o, first ? "{\"v\":" : ",{\"v\":");
    out_puts(o, dt_fmt_json_double(v, buf));
    out_putc(o, '}');
}

void hw_str_cell(struct out *o, const char *s, size_t n, int first)
{
    out_puts(o, first ? "{\"v\":" : ",{\"v\":");
    dt_json_string(o, s, n);
    out_putc(o, '}');
}
