/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hlo_proto_find.c - the HloProto bytes of one module of a run (see
 * hlo_proto_find.h): the run's <module>.hlo_proto.pb files by name, then the
 * Hlo Proto stats of the hosts' /host:metadata planes.
 */
#include "hlo_proto_find.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bigalloc.h"
#include "base/file_bytes.h"
#include "base/wire.h"
#include "reader/stats.h"
#include "reader/xspace.h"
#include "session/session.h"

#define HLO_FILE_MAX ((off_t)1 << 31) /* bytes of a .hlo_proto.pb we read */

/* A module found in a metadata plane. */
struct meta_module {
    const uint8_t *p; /* its HloProto */
    size_t n;         /* bytes */
    char xprof[512];  /* HloModuleProto.name(program_id) */
    char listed[512]; /* as module_list.json lists it */
};

/* The name field of the first hlo_module of HloProto bytes, as
 * (*s, *len); ("", 0) when there is none or the bytes are malformed. */
static void proto_module_name(const uint8_t *p, size_t n, const char **s, size_t *len)
{
    struct wire w, mw, v;

    *s = "";
    *len = 0;
    wire_init(&w, p, n);
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            return;
        if (f == 1 && t == WIRE_LEN)
            break;
        if (wire_skip(&w, t) != 0)
            return;
    }
    if (wire_eof(&w) || wire_bytes(&w, &mw) != 0)
        return;
    while (!wire_eof(&mw)) {
        uint32_t f;
        int t;
        if (wire_key(&mw, &f, &t) != 0)
            return;
        if (f == 1 && t == WIRE_LEN) {
            if (wire_bytes(&mw, &v) != 0)
                return;
            *s = (const char *)v.p;
            *len = (size_t)(v.end - v.p);
        } else if (wire_skip(&mw, t) != 0) {
            return;
        }
    }
}

/* The module of event metadata em of plane pl into *mm; 0 when em has no
 * HloProto bytes. */
static int meta_module_of(const struct xp_plane *pl, int64_t proto_id,
                          const struct xp_event_meta *em, struct meta_module *mm)
{
    const struct xp_stat *proto = NULL;
    int64_t pid = em->id;
    const char *name;
    size_t len;
    uint32_t k;

    for (k = 0; k < em->nstats; k++) {
        const struct xp_stat *st = &em->stats[k];
        if (st->meta_id == proto_id && proto == NULL)
            proto = st;
        else if (pl->stat_id[XS_PROGRAM_ID] != XP_NO_STAT &&
                 st->meta_id == pl->stat_id[XS_PROGRAM_ID])
            pid = xp_stat_int(st);
    }
    if (proto == NULL || proto->kind != XP_STAT_BYTES)
        return 0;
    mm->p = (const uint8_t *)proto->str;
    mm->n = proto->len;
    proto_module_name(mm->p, mm->n, &name, &len);
    snprintf(mm->xprof, sizeof(mm->xprof), "%.*s(%lld)", (int)(len < 400 ? len : 400), name,
             (long long)pid);
    if (strchr(em->name, '(') != NULL)
        snprintf(mm->listed, sizeof(mm->listed), "%s", em->name);
    else
        snprintf(mm->listed, sizeof(mm->listed), "%s(%lld)", em->name, (long long)pid);
    return 1;
}

/* Whether mm answers the request: named module_name, else a name holding
 * program_id and (for the first match in name order) before *best. */
static int meta_better(const struct meta_module *mm, const char *module_name,
                       const char *program_id, const char *best)
{
    if (module_name != NULL)
        return strcmp(mm->xprof, module_name) == 0 || strcmp(mm->listed, module_name) == 0;
    if (strstr(mm->xprof, program_id) == NULL && strstr(mm->listed, program_id) == NULL)
        return 0;
    return best == NULL || strcmp(mm->listed, best) < 0;
}

/* Search the metadata planes of host. Returns 0 (found or not: b->p set
 * when found) or a negative errno with err. */
static int find_in_host(struct snapshot *snap, const char *host, const char *module_name,
                        const char *program_id, struct hlo_proto_bytes *b, struct xp_err *err)
{
    struct xspace *xs;
    struct meta_module mm;
    uint32_t p, i;
    int rc = snapshot_xspace(snap, host, &xs, err);

    if (rc != 0)
        return rc;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int64_t proto_id = pl->stat_id[XS_HLO_PROTO];
        if (strcmp(pl->name, "/host:metadata") != 0)
            continue;
        if (proto_id == XP_NO_STAT)
            proto_id = xp_plane_stat_id_by_name(pl, "HLO Proto");
        if (proto_id == XP_NO_STAT)
            continue;
        for (i = 1; i < pl->nemeta; i++) {
            if (!meta_module_of(pl, proto_id, &pl->emeta[i], &mm) ||
                !meta_better(&mm, module_name, program_id, b->p != NULL ? b->name : NULL))
                continue;
            b->p = mm.p;
            b->n = mm.n;
            snprintf(b->name, sizeof(b->name), "%s", module_name ? module_name : mm.listed);
            if (module_name != NULL)
                return 0;
        }
    }
    return 0;
}

/* Read the run's file f into b. Returns 0 or a negative errno with err. */
static int read_file(const struct source_file *f, struct hlo_proto_bytes *b, struct xp_err *err)
{
    struct stat st;
    size_t len;
    int rc, fd = open(f->path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return xp_err_set(err, -EIO, "%s: %s", f->path, strerror(errno));
    if (fstat(fd, &st) != 0 || st.st_size > HLO_FILE_MAX) {
        close(fd);
        return xp_err_set(err, -EIO, "%s: not readable or larger than 2 GiB", f->path);
    }
    rc = file_read_all(f->path, fd, (size_t)st.st_size, &b->owned, &len, err);
    close(fd);
    if (rc != 0)
        return rc;
    b->p = b->owned;
    b->n = len;
    snprintf(b->name, sizeof(b->name), "%s", f->host);
    return 0;
}

/* The first of the run's files that answers the request, or NULL. */
static const struct source_file *find_file(const struct snapshot *snap, const char *module_name,
                                           const char *program_id)
{
    uint32_t i;

    for (i = 0; i < snap->nfiles; i++) {
        const struct source_file *f = &snap->files[i];
        if (f->kind != SRC_HLO_PROTO)
            continue;
        if (module_name != NULL ? strcmp(f->host, module_name) == 0
                                : strstr(f->host, program_id) != NULL)
            return f;
    }
    return NULL;
}

int hlo_proto_find(struct snapshot *snap, const char *const *hosts, int nhosts,
                   const char *module_name, const char *program_id, struct hlo_proto_bytes *b,
                   struct xp_err *err)
{
    const struct source_file *f;
    int h, rc;

    memset(b, 0, sizeof(*b));
    if (module_name != NULL && module_name[0] == '\0')
        module_name = NULL;
    if (program_id != NULL && program_id[0] == '\0')
        program_id = NULL;
    if (module_name == NULL && program_id == NULL)
        return xp_err_set(err, -EINVAL, "no module_name or program_id given");
    f = find_file(snap, module_name, program_id);
    if (f != NULL)
        return read_file(f, b, err);
    for (h = 0; h < nhosts; h++) {
        if (snapshot_host_file(snap, hosts[h], SRC_XPLANE) == NULL)
            continue;
        rc = find_in_host(snap, hosts[h], module_name, program_id, b, err);
        if (rc != 0)
            return rc;
        if (b->p != NULL && module_name != NULL)
            return 0;
    }
    if (b->p != NULL)
        return 0;
    if (module_name != NULL)
        return xp_err_set(err, -ENOENT, "no HLO module '%s' in this run (see module_list.json)",
                          module_name);
    return xp_err_set(err, -ENOENT,
                      "no HLO module whose name contains program id '%s' (see module_list.json)",
                      program_id);
}

void hlo_proto_bytes_release(struct hlo_proto_bytes *b)
{
    if (b == NULL)
        return;
    big_free(b->owned);
    memset(b, 0, sizeof(*b));
}
