/*
 * op_stats_pod.c - XProf's pod stats records (see op_stats_pod.h): each
 * generic type sums its EventTypes' step-breakdown times (device compute:
 * 16 and 32 bit; device to device: also waits on devices; input: host
 * input waits, host to device, device waits on the host), in us; the
 * bottleneck is the last of the (time, name) pairs sorted ascending.
 */
#include "op_stats_pod.h"

#include <string.h>

static const char *const type_names[POD_NTYPES] = {
    "Device compute", "Device to device", "Device collective communication",
    "Host compute",   "Kernel launch",    "Input",
    "Output",         "Compilation",      "All others",
};

/* The EventTypes of each generic type, 0-terminated (EV_UNKNOWN_TIME is 0:
 * kAllOthers lists it alone). */
static const int type_events[POD_NTYPES][4] = {
    {EV_DEVICE_COMPUTE_32, EV_DEVICE_COMPUTE_16, -1},
    {EV_DEVICE_TO_DEVICE, EV_DEVICE_WAIT_DEVICE, -1},
    {EV_DEVICE_COLLECTIVES, -1},
    {EV_HOST_COMPUTE, -1},
    {EV_HOST_PREPARE, -1},
    {EV_HOST_WAIT_INPUT, EV_HOST_TO_DEVICE, EV_DEVICE_WAIT_HOST, -1},
    {EV_DEVICE_TO_HOST, -1},
    {EV_HOST_COMPILE, -1},
    {EV_UNKNOWN_TIME, -1},
};

const char *pod_event_type_name(int type)
{
    return type >= 1 && type <= POD_NTYPES ? type_names[type - 1] : "";
}

static const char *host_of(const struct op_stats *os, uint32_t core_id)
{
    uint32_t i;

    for (i = 0; i < os->ncore_details; i++) {
        if (os->core_details[i].core_id == core_id)
            return os->core_details[i].hostname;
    }
    return NULL;
}

void pod_record(const struct op_stats *os, const struct step_core *c, struct pod_record *r)
{
    uint64_t best_ps = 0;
    int t, k, best = -1;

    r->host_name = host_of(os, c->core_id);
    r->step_num = c->step_num;
    r->total_duration_us = (double)c->duration_ps / 1e6;
    for (t = 0; t < POD_NTYPES; t++) {
        uint64_t ps = 0;
        for (k = 0; type_events[t][k] >= 0; k++)
            ps += c->type_ps[type_events[t][k] / 10];
        r->breakdown_us[t] = (double)ps / 1e6;
        if (best < 0 || ps > best_ps ||
            (ps == best_ps && strcmp(type_names[t], type_names[best]) > 0)) {
            best = t;
            best_ps = ps;
        }
    }
    r->bottleneck = type_names[best];
}
