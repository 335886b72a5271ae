/*
 * group_types.c - the role of every event metadata in the grouping
 * (TfXPlaneVisitor's event types), and the scan that tells whether a profile
 * can hold a group at all.
 */
#include "group_int.h"

#include <stdlib.h>
#include <string.h>

#include "tfop.h"
#include "reader/tpu_planes.h"

static const struct {
    const char *name;
    enum ev_type type;
} known_types[] = {
    {"UnknownHostEventType", ET_NAMED},
    {"TraceContext", ET_TRACE_CONTEXT},
    {"SessionRun", ET_SESSION_RUN},
    {"FunctionRun", ET_FUNCTION_RUN},
    {"RunGraph", ET_RUN_GRAPH},
    {"RunGraphDone", ET_NAMED},
    {"TfOpRun", ET_NAMED},
    {"EagerExecute", ET_EAGER_EXECUTE},
    {"ExecutorState::Process", ET_EXECUTOR},
    {"ExecutorDoneCallback", ET_NAMED},
    {"MemoryAllocation", ET_NAMED},
    {"MemoryDeallocation", ET_NAMED},
    {"RemotePerfCounter", ET_NAMED},
    {"InstantiatedCapturedFunction::Run", ET_TFDATA_RUN},
    {"InstantiatedCapturedFunction::RunWithBorrowedArgs", ET_TFDATA_RUN},
    {"InstantiatedCapturedFunction::RunInstantiated", ET_TFDATA_RUN},
    {"InstantiatedCapturedFunction::RunAsync", ET_TFDATA_RUN},
    {"ParallelForOp", ET_LOOP_OP},
    {"ForeverOp", ET_LOOP_OP},
    {"WhileOp-EvalCond", ET_LOOP_OP},
    {"WhileOp-StartBody", ET_LOOP_OP},
    {"ForOp", ET_LOOP_OP},
    {"IteratorGetNextOp::DoCompute", ET_ITER_GET_NEXT},
    {"IteratorGetNextAsOptionalOp::DoCompute", ET_ITER_GET_NEXT_O},
    {"Iterator", ET_NAMED},
    {"Iterator::Prefetch::Generator", ET_NAMED},
    {"PrefetchProduce", ET_NAMED},
    {"PrefetchConsume", ET_NAMED},
    {"ParallelInterleaveProduce", ET_NAMED},
    {"ParallelInterleaveConsume", ET_NAMED},
    {"ParallelInterleaveInitializeInput", ET_NAMED},
    {"ParallelMapProduce", ET_NAMED},
    {"ParallelMapConsume", ET_NAMED},
    {"MapAndBatchProduce", ET_NAMED},
    {"MapAndBatchConsume", ET_NAMED},
    {"ParseExampleProduce", ET_NAMED},
    {"ParseExampleConsume", ET_NAMED},
    {"ParallelBatchProduce", ET_NAMED},
    {"ParallelBatchConsume", ET_NAMED},
    {"BatchingSessionRun", ET_BATCHING_RUN},
    {"ProcessBatch", ET_PROCESS_BATCH},
    {"OrbaxServing::ProcessBatch", ET_PROCESS_BATCH},
    {"BrainSessionRun", ET_NAMED},
    {"ConcatInputTensors", ET_NAMED},
    {"MergeInputTensors", ET_NAMED},
    {"ScheduleWithoutSplit", ET_NAMED},
    {"ScheduleWithSplit", ET_NAMED},
    {"ScheduleWithEagerSplit", ET_NAMED},
    {"ASBSQueue::Schedule", ET_NAMED},
    {"TfrtModelRun", ET_NAMED},
    {"ServingModelRun", ET_NAMED},
    {"KernelLaunch", ET_NAMED},
    {"KernelExecute", ET_NAMED},
    {"EnqueueRequestLocked", ET_NAMED},
    {"RunProgramRequest", ET_NAMED},
    {"HostCallbackRequest", ET_NAMED},
    {"TransferH2DRequest", ET_NAMED},
    {"TransferPreprocessedH2DRequest", ET_NAMED},
    {"TransferD2HRequest", ET_NAMED},
    {"OnDeviceSendRequest", ET_NAMED},
    {"OnDeviceRecvRequest", ET_NAMED},
    {"OnDeviceSendRecvLocalRequest", ET_NAMED},
    {"CustomWait", ET_NAMED},
    {"OnDeviceSendRequestMulti", ET_NAMED},
    {"OnDeviceRecvRequestMulti", ET_NAMED},
    {"PjrtAsyncWait", ET_NAMED},
    {"DoEnqueueProgram", ET_ENQUEUE_PROGRAM},
    {"DoEnqueueContinuationProgram", ET_NAMED},
    {"WriteHbm", ET_NAMED},
    {"ReadHbm", ET_NAMED},
    {"TpuExecuteOp", ET_NAMED},
    {"CompleteCallbacks", ET_COMPLETE_CALLBACKS},
    {"TPUPartitionedCallOp-InitializeVarOnTPU", ET_NAMED},
    {"TPUPartitionedCallOp-ExecuteRemote", ET_NAMED},
    {"TPUPartitionedCallOp-ExecuteLocal", ET_NAMED},
    {"Linearize", ET_NAMED},
    {"Delinearize", ET_NAMED},
    {"TransferBufferFromDevice-FastPath", ET_NAMED},
    {"tpu::System::TransferToDevice=>IssueEvent", ET_NAMED},
    {"tpu::System::TransferToDevice=>IssueEvent=>Done", ET_NAMED},
    {"tpu::System::TransferFromDevice=>IssueEvent", ET_NAMED},
    {"tpu::System::TransferFromDevice=>IssueEvent=>Done", ET_NAMED},
    {"tpu::System::Execute", ET_NAMED},
};

/* The type of an event metadata name (TfXPlaneVisitor's type getters). */
static enum ev_type name_type(const char *name)
{
    size_t i;
    struct tfop op;

    for (i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++) {
        if (strcmp(known_types[i].name, name) == 0)
            return known_types[i].type;
    }
    tfop_parse(name, strlen(name), &op);
    if (op.category == TFOP_TENSORFLOW)
        return ET_TFOP_RUN;
    if (op.category == TFOP_TFDATA)
        return ET_NAMED; /* Iterator */
    return ET_NONE;
}

/* The type of every event metadata ([plane][metadata], one block). */
uint8_t **gr_metadata_types(const struct xspace *xs)
{
    size_t total = 0, off;
    uint32_t p, i;
    uint8_t **mt;

    for (p = 0; p < xs->nplanes; p++)
        total += xs->planes[p].nemeta;
    off = (xs->nplanes ? xs->nplanes : 1) * sizeof(uint8_t *);
    mt = malloc(off + (total ? total : 1));
    if (mt == NULL)
        return NULL;
    total = 0;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        mt[p] = (uint8_t *)mt + off + total;
        for (i = 0; i < pl->nemeta; i++)
            mt[p][i] = (uint8_t)name_type(pl->emeta[i].name);
        total += pl->nemeta;
    }
    return mt;
}

/* Does anything in the profile make a root or a loop op possible? */
int gr_scan_metadata(const struct xspace *xs, uint8_t *const *mtype, int *loop_op)
{
    uint32_t p, i;
    int possible = 0;

    *loop_op = 0;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (pl->stat_id[XS_IS_ROOT] != XP_NO_STAT)
            possible = 1;
        /* the TPU lock step groups a TensorCore's steps or modules */
        if (tpu_plane_core(pl->name) == TPU_TENSOR_CORE && gr_tpu_grouping_line(pl) >= 0)
            possible = 1;
        for (i = 0; i < pl->nemeta; i++) {
            enum ev_type t = (enum ev_type)mtype[p][i];
            if (t == ET_LOOP_OP)
                *loop_op = 1;
            if (t == ET_TRACE_CONTEXT || t == ET_EXECUTOR || t == ET_PROCESS_BATCH ||
                t == ET_BATCHING_RUN)
                possible = 1;
        }
    }
    return possible;
}
