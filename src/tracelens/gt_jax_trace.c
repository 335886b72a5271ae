/*
 * gt_jax_trace.c - the GPU timeline of a JAX Chrome trace (see
 * gpu_timeline.h): the processes named /device:GPU... are the devices, the
 * events of their stream threads count, classified by the JAX rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "gt_int.h"
#include "reader/ctrace.h"

/* The device of pid among acc[0..nacc), or NULL. */
static struct gt_acc *find_device(struct gt_acc *acc, size_t nacc, int64_t pid)
{
    size_t k;

    for (k = 0; k < nacc; k++) {
        if (acc[k].pid == pid)
            return &acc[k];
    }
    return NULL;
}

/* An event on a stream thread: one named "Stream #...", or an unnamed one
 * with a numeric id below 100. */
static int on_stream_thread(const struct ctrace *ct, const struct ctrace_event *ev)
{
    const char *tname = ctrace_event_thread_name(ct, ev);

    if (tname[0] != 0)
        return strncmp(tname, "Stream #", 8) == 0;
    return !(ev->tid == CT_NONE || (ev->flags & CT_TID_STR) || ev->tid >= 100);
}

int gt_from_jax_trace(const struct ctrace *ct, struct gt_host **gp, struct xp_err *err)
{
    struct gt_acc *acc = calloc(ct->nprocesses ? ct->nprocesses : 1, sizeof(*acc));
    int64_t *seen = malloc((ct->nprocesses ? ct->nprocesses : 1) * sizeof(*seen));
    size_t nacc = 0, nseen = 0, i;
    int rc = 0;

    if (acc == NULL || seen == NULL) {
        free(acc);
        free(seen);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < ct->nevents && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        const char *pname;
        struct gt_acc *a;
        if (ev->ph == 'M' || (ev->flags & CT_PID_STR))
            continue;
        pname = ctrace_event_process_name(ct, ev);
        if (strstr(pname, "/device:GPU") == NULL)
            continue;
        a = find_device(acc, nacc, ev->pid);
        if (a == NULL) {
            if (nacc == ct->nprocesses)
                continue; /* cannot happen: the process is named */
            a = &acc[nacc++];
            a->pid = ev->pid;
            a->name = strdup(pname);
            if (a->name == NULL) {
                rc = -ENOMEM;
                break;
            }
            seen[nseen++] = ev->pid;
        }
        if (!(ev->flags & CT_HAS_TS) || !(ev->flags & CT_HAS_DUR))
            continue;
        if (!on_stream_thread(ct, ev))
            continue;
        rc = gt_acc_add(a, gt_classify_jax(ctrace_str(ct, ev->name)), ev->ts, ev->dur);
    }
    return gt_devices_finish(acc, nacc, seen, nseen, rc, gp, err);
}
