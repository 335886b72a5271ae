/*
 * gt_pt_trace.c - the GPU timeline of a PyTorch trace (see gpu_timeline.h):
 * one device over all kernel / gpu_memcpy / gpu_memset events that a runtime
 * launch reaches (gt_pt_links.c), classified by the PyTorch rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "gt_int.h"
#include "reader/ctrace.h"

/* The GPU events a runtime launch reaches (gt_pt_links), PyTorch rules. */
int gt_from_pt_trace(const struct ctrace *ct, struct gt_host **gp, struct xp_err *err)
{
    struct gt_acc acc;
    uint32_t *linked = NULL;
    uint32_t cat_kernel = ctrace_str_find(ct, "kernel");
    uint32_t cat_memcpy = ctrace_str_find(ct, "gpu_memcpy");
    uint32_t cat_memset = ctrace_str_find(ct, "gpu_memset");
    uint32_t i;
    int rc;

    memset(&acc, 0, sizeof(acc));
    rc = gt_pt_links(ct, &linked);
    if (rc != 0)
        return xp_err_set(err, rc, "out of memory");
    acc.pid = -1;
    acc.name = strdup("all GPUs");
    if (acc.name == NULL) {
        free(linked);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < ct->nevents && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        enum gt_class cls;
        if (ev->cat == 0 ||
            (ev->cat != cat_kernel && ev->cat != cat_memcpy && ev->cat != cat_memset))
            continue;
        if (linked[i] == UINT32_MAX)
            continue;
        cls = gt_classify_pytorch(ctrace_str(ct, ev->cat), ctrace_str(ct, ev->name));
        rc = gt_acc_add(&acc, cls, ev->ts, ev->dur);
    }
    free(linked);
    if (rc == 0)
        rc = gt_host_finish(&acc, 1, 1, gp, err);
    else
        xp_err_set(err, rc, "out of memory");
    gt_acc_free(&acc);
    return rc;
}
