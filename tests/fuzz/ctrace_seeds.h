/*
 * ctrace_seeds.h - our two small hand-written Chrome traces, the seeds of
 * the Chrome-trace fuzzing: tests/unit/test_fuzz_tools.c makes every file
 * of each, whole and changed, on every `make test`, and `make fuzz` writes
 * them out for fuzz_ctrace (write_ctrace_seeds.c). Test-only data, kept as
 * source so that no trace file is committed.
 */
#ifndef XPROFS_TEST_CTRACE_SEEDS_H
#define XPROFS_TEST_CTRACE_SEEDS_H

/* A PyTorch-like trace: CPU ops, launches, a kernel and a memcpy with
 * their flows, a synchronize, a memory instant, a B/E pair, a counter. */
static const char ctrace_seed_pytorch_gpu[] =
    "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"H100\","
    "\"totalGlobalMem\":85000000000,\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}],\n"
    "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":1},\n"
    "\"traceEvents\":[\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":11,\"tid\":0,"
    "\"args\":{\"name\":\"python3\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,"
    "\"args\":{\"name\":\"CUDA GPU 0\"}},\n"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":11,\"tid\":11,"
    "\"args\":{\"name\":\"thread 11 (python3)\"}},\n"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":7,"
    "\"args\":{\"name\":\"stream 7\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":0,\"args\":{\"sort_index\":5}},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":11,"
    "\"tid\":11,\"ts\":100.0,\"dur\":900.0,\"args\":{\"External id\":1,"
    "\"Record function id\":0}},\n"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"model.py(10): forward\",\"pid\":11,"
    "\"tid\":11,\"ts\":110.0,\"dur\":800.0,\"args\":{\"Python parent id\":null,"
    "\"Python id\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":11,\"tid\":11,"
    "\"ts\":120.5,\"dur\":300.25,\"args\":{\"External id\":2,\"Sequence number\":5,"
    "\"Input Dims\":[[8,16],[32,16],[32]],\"Input type\":[\"float\",\"float\",\"float\"],"
    "\"Concrete Inputs\":[\"\",\"\",\"\"]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":11,\"tid\":11,"
    "\"ts\":130.0,\"dur\":200.0,\"args\":{\"External id\":3,\"Input Dims\":[[32],[8,16],[16,"
    "32],[],[]],\"Input type\":[\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":11,"
    "\"tid\":11,\"ts\":140.0,\"dur\":20.0,\"args\":{\"External id\":3,\"cbid\":211,"
    "\"correlation\":42}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"volta_sgemm_128x64_nn\",\"pid\":0,\"tid\":7,"
    "\"ts\":180.0,\"dur\":55.5,\"args\":{\"External id\":3,\"device\":0,\"stream\":7,"
    "\"correlation\":42,\"registers per thread\":128,\"shared memory\":16384,"
    "\"blocks per SM\":0.5,\"warps per SM\":2.0,\"grid\":[4,1,1],\"block\":[256,1,1],"
    "\"est. achieved occupancy %\":12}},\n"
    "{\"ph\":\"s\",\"id\":42,\"pid\":11,\"tid\":11,\"ts\":140.0,\"cat\":\"ac2g\","
    "\"name\":\"ac2g\"},\n"
    "{\"ph\":\"f\",\"id\":42,\"pid\":0,\"tid\":7,\"ts\":180.0,\"cat\":\"ac2g\","
    "\"name\":\"ac2g\",\"bp\":\"e\"},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::copy_\",\"pid\":11,\"tid\":11,"
    "\"ts\":500.0,\"dur\":100.0,\"args\":{\"External id\":4,\"Input Dims\":[[8,32],[8,32],"
    "[]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":11,"
    "\"tid\":11,\"ts\":510.0,\"dur\":30.0,\"args\":{\"External id\":4,\"correlation\":43}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\","
    "\"pid\":0,\"tid\":7,\"ts\":560.0,\"dur\":4.0,\"args\":{\"External id\":4,\"device\":0,"
    "\"stream\":7,\"correlation\":43,\"bytes\":1024,\"memory bandwidth (GB/s)\":0.25}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\",\"pid\":11,"
    "\"tid\":11,\"ts\":600.0,\"dur\":50.0,\"args\":{\"correlation\":44}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":11,\"tid\":11,"
    "\"ts\":620.0,\"s\":\"t\",\"args\":{\"Total Reserved\":2097152,\"Bytes\":512}},\n"
    "{\"ph\":\"B\",\"name\":\"open\",\"pid\":11,\"tid\":12,\"ts\":700},{\"ph\":\"E\","
    "\"pid\":11,\"tid\":12,\"ts\":750},\n"
    "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":11,\"ts\":710,\"args\":{\"a\":1,\"b\":2.5}},\n"
    "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\","
    "\"tid\":\"PyTorch Profiler\",\"ts\":90,\"dur\":1000}\n"
    "],\"traceName\":\"t.json\",\"displayTimeUnit\":\"ms\","
    "\"baseTimeNanoseconds\":1700000000000000000}\n";

/* A TensorFlow-like trace: a GPU stream and a host thread with a launch
 * and its kernel joined by a flow, an async pair, a counter, an instant. */
static const char ctrace_seed_tf_trace[] =
    "{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true},\"traceEvents\":[\n"
    "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\","
    "\"args\":{\"name\":\"/device:GPU:0\"}},\n"
    "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":1}},\n"
    "{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_name\","
    "\"args\":{\"name\":\"Stream #2(Compute)\"}},\n"
    "{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_sort_index\","
    "\"args\":{\"sort_index\":2}},\n"
    "{\"ph\":\"M\",\"pid\":701,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},\n"
    "{\"ph\":\"M\",\"pid\":701,\"tid\":-2231402715538937371,\"name\":\"thread_name\","
    "\"args\":{\"name\":\"python\"}},\n"
    "{\"pid\":701,\"tid\":-2231402715538937371,\"ts\":1000.5,\"dur\":40,\"ph\":\"X\","
    "\"name\":\"train_step\",\"args\":{\"group_id\":\"1\",\"step_num\":1}},\n"
    "{\"pid\":701,\"tid\":-2231402715538937371,\"ts\":1001,\"dur\":5,\"ph\":\"X\","
    "\"name\":\"cuLaunchKernel\",\"args\":{\"correlation_id\":7}},\n"
    "{\"pid\":1,\"tid\":2,\"ts\":1010,\"dur\":12.25,\"ph\":\"X\",\"name\":\"fusion_1\","
    "\"args\":{\"correlation_id\":7,\"hlo_op\":\"fusion.1\",\"hlo_module\":\"jit_f\","
    "\"kernel_details\":\"regs:32 grid:1,1,1 block:128,1,1\"}},\n"
    "{\"pid\":701,\"tid\":-2231402715538937371,\"ts\":1001,\"ph\":\"s\",\"id\":\"0x7\","
    "\"cat\":\"flow\",\"name\":\"flow\",\"bp\":\"e\"},\n"
    "{\"pid\":1,\"tid\":2,\"ts\":1010,\"ph\":\"f\",\"id\":\"0x7\",\"cat\":\"flow\","
    "\"name\":\"flow\",\"bp\":\"e\"},\n"
    "{\"pid\":701,\"tid\":5,\"ts\":1020,\"ph\":\"b\",\"id\":3,\"cat\":\"async\","
    "\"name\":\"wait\"},\n"
    "{\"pid\":701,\"tid\":5,\"ts\":1030,\"ph\":\"e\",\"id\":3,\"cat\":\"async\","
    "\"name\":\"wait\"},\n"
    "{\"pid\":1,\"ts\":1015,\"ph\":\"C\",\"name\":\"mem\",\"args\":{\"used\":1.5e9}},\n"
    "{\"pid\":1,\"tid\":2,\"ts\":1030,\"ph\":\"i\",\"s\":\"g\",\"name\":\"mark\"}\n"
    "]}\n";

/* The seeds by name. */
static const struct {
    const char *name;
    const char *text;
} ctrace_seeds[] = {
    {"pytorch_gpu.json", ctrace_seed_pytorch_gpu},
    {"tf_trace.json", ctrace_seed_tf_trace},
};

#define CTRACE_NSEEDS (sizeof(ctrace_seeds) / sizeof(ctrace_seeds[0]))

#endif
