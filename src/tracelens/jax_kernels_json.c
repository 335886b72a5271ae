/*
 * jax_kernels_json.c - the GPU kernels of a JAX Chrome trace in TraceLens's
 * trace order (jax_launchers_int.h): complete events on "Stream" threads of
 * /device:GPU processes, by (pid, tid, start, longer first), categorised by
 * name and hlo_op arg.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jax_launchers_int.h"
#include "base/sort.h"

/* JAX Chrome trace: GPU stream events, ordered by (pid, tid, ts, longer
 * first, file order) through an index array. */

/* (pid, tid, ts, longer first, file order) of two event indices of the
 * trace ctx. */
static int ct_order_cmp(const void *a, const void *b, void *ctx)
{
    const struct ctrace *ct = ctx;
    const struct ctrace_event *x = &ct->events[*(const uint32_t *)a];
    const struct ctrace_event *y = &ct->events[*(const uint32_t *)b];

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The kernels of ct's GPU streams in trace order, each with its hlo_op
 * category (the hlo_op arg, cut at JAX_HLO_OP_MAX bytes). */
int jax_visit_json(const struct ctrace *ct, int host, struct jax_visit_state *v)
{
    uint32_t *idx = malloc((ct->nevents ? ct->nevents : 1) * sizeof(*idx)), n = 0, i;
    int rc = 0;

    if (idx == NULL)
        return -ENOMEM;
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->ph == 'M' || !(ev->flags & CT_HAS_TS) || !(ev->flags & CT_HAS_DUR) ||
            (ev->flags & (CT_PID_STR | CT_TID_STR)))
            continue;
        if (strstr(ctrace_event_process_name(ct, ev), "/device:GPU") == NULL ||
            strncmp(ctrace_event_thread_name(ct, ev), "Stream", 6) != 0 ||
            !jax_is_kernel_name(ctrace_str(ct, ev->name)))
            continue;
        idx[n++] = i;
    }
    xp_qsort_r(idx, n, sizeof(*idx), ct_order_cmp, (void *)ct);
    for (i = 0; i < n && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[idx[i]];
        struct jax_kernel x;
        char hlo_op[JAX_HLO_OP_MAX + 1];
        cJSON *args = ctrace_event_args(ct, ev);
        cJSON *op = cJSON_GetObjectItemCaseSensitive(args, "hlo_op");
        hlo_op[0] = 0;
        if (cJSON_IsString(op)) {
            strncpy(hlo_op, op->valuestring, sizeof(hlo_op) - 1);
            hlo_op[sizeof(hlo_op) - 1] = 0;
        }
        cJSON_Delete(args);
        x.name = ctrace_str(ct, ev->name);
        x.name_len = strlen(x.name);
        x.name_plain = jax_csv_plain(x.name, x.name_len);
        x.category = jax_kernel_category(x.name, hlo_op);
        x.ts = ev->ts;
        x.dur = ev->dur;
        x.pid = ev->pid;
        x.tid = ev->tid;
        x.corr = ev->correlation;
        x.host = host;
        rc = jax_emit(v, &x);
    }
    free(idx);
    return rc;
}
