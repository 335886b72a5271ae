/*
 * stats.c - names of the well-known stats; see stats.h.
 */
#include "stats.h"

#include <string.h>

static const char *const stat_names[XS__COUNT] = {
    [XS_STEP_NUM] = "step_num",
    [XS_ITER_NUM] = "iter_num",
    [XS_IS_ROOT] = "_r",
    [XS_PRODUCER_TYPE] = "_pt",
    [XS_PRODUCER_ID] = "_p",
    [XS_CONSUMER_TYPE] = "_ct",
    [XS_CONSUMER_ID] = "_c",
    [XS_IS_ASYNC] = "_a",
    [XS_STEP_ID] = "id",
    [XS_GROUP_ID] = "group_id",
    [XS_STEP_NAME] = "step_name",
    [XS_FLOW] = "flow",
    [XS_CORRELATION_ID] = "correlation_id",
    [XS_KERNEL_DETAILS] = "kernel_details",
    [XS_MEMCPY_DETAILS] = "memcpy_details",
    [XS_MEMSET_DETAILS] = "memset_details",
    [XS_DEVICE_ID] = "device_id",
    [XS_CONTEXT_ID] = "context_id",
    [XS_STREAM_ID] = "stream_id",
    [XS_HLO_OP] = "hlo_op",
    [XS_HLO_MODULE] = "hlo_module",
    [XS_PROGRAM_ID] = "program_id",
    [XS_SYMBOL_ID] = "symbol_id",
    [XS_HLO_CATEGORY] = "hlo_category",
    [XS_FLOPS] = "flops",
    [XS_MODEL_FLOPS] = "model_flops",
    [XS_BYTES_ACCESSED] = "bytes_accessed",
    [XS_RAW_BYTES_ACCESSED] = "raw_bytes_accessed",
    [XS_SHAPE_WITH_LAYOUT] = "shape_with_layout",
    [XS_TF_OP] = "tf_op",
    [XS_TF_OP_NAME] = "tf_op_name",
    [XS_DEDUPLICATED_NAME] = "deduplicated_name",
    [XS_SOURCE] = "source",
    [XS_SOURCE_STACK] = "source_stack",
    [XS_LONG_NAME] = "long_name",
    [XS_HLO_PROTO] = "Hlo Proto",
    [XS_IS_EAGER] = "is_eager",
    [XS_GRAPH_TYPE] = "graph_type",
    [XS_DEVICE_OFFSET_PS] = "device_offset_ps",
    [XS_DEVICE_DURATION_PS] = "device_duration_ps",
    [XS_LEVEL] = "level",
    [XS_PROCESS_ID] = "_pid",
    [XS_CLOCK_RATE] = "clock_rate",
    [XS_CORE_COUNT] = "core_count",
    [XS_MEMORY_BANDWIDTH] = "memory_bandwidth",
    [XS_MEMORY_SIZE] = "memory_size",
    [XS_COMPUTE_CAP_MAJOR] = "compute_cap_major",
    [XS_COMPUTE_CAP_MINOR] = "compute_cap_minor",
    [XS_PEAK_TFLOPS] = "peak_teraflops_per_second",
    [XS_PEAK_HBM_BW] = "peak_hbm_bw_gigabytes_per_second",
    [XS_DEVICE_VENDOR] = "device_vendor",
    [XS_DEVICE_TYPE_STRING] = "device_type_string",
    [XS_PROFILE_START_TIME] = "profile_start_time",
    [XS_PROFILE_STOP_TIME] = "profile_stop_time",
    [XS_COUNTER_VALUE] = "counter_value",
};

const char *xp_stat_type_name(enum xp_stat_type t)
{
    if ((int)t < 0 || t >= XS__COUNT)
        return "";
    return stat_names[t];
}

int xp_stat_type_find(const char *s, size_t n)
{
    int t;

    for (t = 0; t < XS__COUNT; t++) {
        if (strlen(stat_names[t]) == n && memcmp(stat_names[t], s, n) == 0)
            return t;
    }
    return -1;
}

int xp_event_is_internal(const char *name)
{
    static const char *const internal[] = {
        "MemoryAllocation",
        "MemoryDeallocation",
        "PrefetchProduce",
        "PrefetchConsume",
        "ParallelInterleaveProduce",
        "ParallelInterleaveConsume",
        "ParallelInterleaveInitializeInput",
        "ParallelMapProduce",
        "ParallelMapConsume",
        "MapAndBatchProduce",
        "MapAndBatchConsume",
        "ParseExampleProduce",
        "ParseExampleConsume",
        NULL,
    };
    int i;

    for (i = 0; internal[i] != NULL; i++) {
        if (strcmp(internal[i], name) == 0)
            return 1;
    }
    return 0;
}

int xp_stat_is_internal(const char *name)
{
    static const char *const internal[] = {"_pt",   "_p",         "_ct",       "_c", "_r",
                                           "flops", "program_id", "symbol_id", NULL};
    int i;

    for (i = 0; internal[i] != NULL; i++) {
        if (strcmp(internal[i], name) == 0)
            return 1;
    }
    return 0;
}
