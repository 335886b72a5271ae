/*
 * module_list.c - module_list.json: the HLO modules of a run, as a JSON array
 * of names. Taken from the `<module>.hlo_proto.pb` files when the run has
 * them (XProf's module_list route lists those), else from the `/host:metadata`
 * planes, where each event metadata carrying an `Hlo Proto` stat is one
 * module, named `name(program_id)` as XProf names the files it extracts.
 * A host's names are kept in the cache (host_piece.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "host_piece.h"

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append name to the list unless present. Returns 0 or -1 when out of memory. */
static int add_name(char ***names, size_t *n, const char *name)
{
    size_t i;
    char **v;

    for (i = 0; i < *n; i++) {
        if (strcmp((*names)[i], name) == 0)
            return 0;
    }
    v = realloc(*names, (*n + 1) * sizeof(*v));
    if (v == NULL)
        return -1;
    *names = v;
    v[*n] = strdup(name);
    if (v[*n] == NULL)
        return -1;
    (*n)++;
    return 0;
}

/* Modules described in the /host:metadata plane of one host. */
static int metadata_modules(struct tool_ctx *ctx, const char *host, char ***names, size_t *n)
{
    const struct xp_plane *pl;
    struct xspace *xs;
    uint32_t i;
    int rc = snapshot_xspace(ctx->snap, host, &xs, ctx->err);

    if (rc != 0)
        return rc;
    pl = xspace_find_plane(xs, "/host:metadata");
    if (pl == NULL || pl->stat_id[XS_HLO_PROTO] == XP_NO_STAT)
        return 0;
    for (i = 1; i < pl->nemeta; i++) {
        const struct xp_event_meta *m = &pl->emeta[i];
        char name[1024];
        uint32_t k;
        int has_proto = 0;
        int64_t program_id = m->id;

        for (k = 0; k < m->nstats; k++) {
            if (m->stats[k].meta_id == pl->stat_id[XS_HLO_PROTO])
                has_proto = 1;
            if (m->stats[k].meta_id == pl->stat_id[XS_PROGRAM_ID])
                program_id = xp_stat_int(&m->stats[k]);
        }
        if (!has_proto)
            continue;
        if (strchr(m->name, '(') != NULL)
            snprintf(name, sizeof(name), "%s", m->name);
        else
            snprintf(name, sizeof(name), "%s(%lld)", m->name, (long long)program_id);
        if (add_name(names, n, name) != 0)
            return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    }
    return 0;
}

/* host's metadata module names, each ended by a NUL. */
static int host_part(struct tool_ctx *ctx, const char *host, struct out *o, int64_t *a, int64_t *b)
{
    char **names = NULL;
    size_t n = 0, i;
    int rc = metadata_modules(ctx, host, &names, &n);

    *a = *b = 0;
    for (i = 0; i < n; i++) {
        if (rc == 0)
            out_write(o, names[i], strlen(names[i]) + 1);
        free(names[i]);
    }
    free(names);
    return rc;
}

/* The names of host's part (from the cache or its profile) into the list. */
static int host_modules(struct tool_ctx *ctx, const char *host, char ***names, size_t *n)
{
    struct out part;
    struct blob *b;
    int64_t x, y;
    size_t at;
    int rc;

    out_init(&part);
    if ((rc = host_piece(ctx, "module_list", host, host_part, &part, &x, &y)) != 0) {
        out_discard(&part);
        return rc;
    }
    if (out_finish(&part, &b) != 0)
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    for (at = 0; rc == 0 && at < b->size;) {
        char name[1024];
        size_t len = 0;
        ssize_t got = blob_read(b, at, name, sizeof(name));
        if (got <= 0)
            break;
        while (len < (size_t)got && name[len] != '\0')
            len++;
        if (len == (size_t)got) /* no NUL: a name of 1 KiB is not one we wrote */
            break;
        if (add_name(names, n, name) != 0)
            rc = xp_err_set(ctx->err, -ENOMEM, "out of memory");
        at += len + 1;
    }
    blob_unref(b);
    return rc;
}

static int module_list_produce(struct tool_ctx *ctx, struct out *o)
{
    char **names = NULL;
    size_t n = 0, i;
    uint32_t f;
    int rc = 0, h;

    for (f = 0; f < ctx->snap->nfiles && rc == 0; f++) {
        if (ctx->snap->files[f].kind == SRC_HLO_PROTO &&
            add_name(&names, &n, ctx->snap->files[f].host) != 0)
            rc = xp_err_set(ctx->err, -ENOMEM, "out of memory");
    }
    if (rc == 0 && n == 0) {
        for (h = 0; h < tool_host_count(ctx) && rc == 0; h++) {
            if (snapshot_host_file(ctx->snap, tool_host(ctx, h), SRC_XPLANE) != NULL)
                rc = host_modules(ctx, tool_host(ctx, h), &names, &n);
        }
    }
    if (rc == 0) {
        xp_qsort(names, n, sizeof(*names), name_cmp);
        out_putc(o, '[');
        for (i = 0; i < n; i++) {
            if (i > 0)
                out_puts(o, ", ");
            out_json_cstr(o, names[i]);
        }
        out_puts(o, "]\n");
    }
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

const struct tool tool_module_list_json = {
    .file = "module_list.json",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = module_list_produce,
};
