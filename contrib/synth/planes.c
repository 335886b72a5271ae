/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /host:metadata and Task Environment planes. As in the jax08 corpus files,
 * a module's event metadata has id = program id, name = "<module>(<id>)" and
 * one stat "Hlo Proto" (bytes_value = serialized xla.HloProto).
 */
#include "planes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hlo.h"
#include "xplane.h"

#define WALL_2025 1735689600000000000ULL

uint64_t planes_wall_start(int host)
{
    return WALL_2025 + (uint64_t)host * 1237;
}

/* Appends event_metadata entry {id, {id, name, stats: [Hlo Proto]}} for module m. */
static int metadata_entry(struct wbuf *tail, const struct module *m)
{
    struct wbuf hlo = WBUF_INIT, meta = WBUF_INIT;
    char name[256];
    int rc;

    snprintf(name, sizeof(name), "%s(%lld)", m->name, (long long)m->program_id);
    rc = hlo_encode(m, &hlo);
    if (rc == 0) {
        pb_int(&meta, 1, m->program_id);
        pb_str(&meta, 2, name);
        pb_stat_bytes(&meta, 5, 1, PB_STAT_BYTES, hlo.data, hlo.len);
        pb_map_entry(tail, 4, m->program_id, &meta);
        rc = wb_ok(tail);
    }
    wb_release(&hlo);
    wb_release(&meta);
    return rc;
}

int planes_write_metadata(struct sink *sink, const struct program *pr, uint64_t *bytes)
{
    struct wbuf tail = WBUF_INIT, sm = WBUF_INIT, entry = WBUF_INIT;
    struct xplane_desc pd = {0, "/host:metadata", NULL, 0, &tail, NULL};
    size_t m;
    int rc = 0;

    for (m = 0; m < pr->n_mods && rc == 0; m++)
        rc = metadata_entry(&tail, &pr->mods[m]);
    /* stat_metadata {1: {1, "Hlo Proto"}} */
    pb_int(&sm, 1, 1);
    pb_str(&sm, 2, "Hlo Proto");
    pb_int(&entry, 1, 1);
    pb_msg(&entry, 2, &sm);
    pb_msg(&tail, 5, &entry);
    if (rc == 0)
        rc = wb_ok(&tail);
    if (rc == 0)
        rc = xplane_write(sink, &pd, bytes);
    else
        fprintf(stderr, "xprofs-synth: cannot encode the HLO metadata: %s\n", strerror(-rc));
    wb_release(&tail);
    wb_release(&sm);
    wb_release(&entry);
    return rc;
}

int planes_write_task_env(struct sink *sink, uint64_t start_ns, uint64_t stop_ns, uint64_t *bytes)
{
    static const char *const names[2] = {"profile_start_time", "profile_stop_time"};
    struct wbuf tail = WBUF_INIT, sm = WBUF_INIT, entry = WBUF_INIT;
    struct xplane_desc pd = {0, "Task Environment", NULL, 0, &tail, NULL};
    int rc, i;

    for (i = 0; i < 2; i++) {
        wb_reset(&sm);
        wb_reset(&entry);
        pb_int(&sm, 1, i + 1);
        pb_str(&sm, 2, names[i]);
        pb_int(&entry, 1, i + 1);
        pb_msg(&entry, 2, &sm);
        pb_msg(&tail, 5, &entry);
    }
    pb_stat_varint(&tail, 6, 1, PB_STAT_UINT64, start_ns);
    pb_stat_varint(&tail, 6, 2, PB_STAT_UINT64, stop_ns);
    rc = wb_ok(&tail);
    if (rc == 0)
        rc = xplane_write(sink, &pd, bytes);
    else
        fprintf(stderr, "xprofs-synth: out of memory\n");
    wb_release(&tail);
    wb_release(&sm);
    wb_release(&entry);
    return rc;
}
