/*
 * fuzz_ctrace.c - libFuzzer target of every tool on a Chrome-trace run: the
 * input is the run's one file, named as run_ctrace_name says (a first byte
 * 0 or 1 picks h.trace.json, read by the trace viewer, or h.pt.trace.json,
 * read by the PyTorch tools too; plain JSON, as the seeds `make fuzz`
 * writes from ctrace_seeds.h are, is h.trace.json). Every file the run
 * directory and its hosts/ copy list is made, as `xprofs cat` makes it,
 * plus a trace window, a down-sampled trace and a search (run_files.h). A
 * file may fail with an error; nothing may crash, leak or hang. Built by
 * `make fuzz`; an input that crashes it becomes a test in
 * tests/unit/test_fuzz_tools.c (inputs are not committed).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char logdir[64], run[128];
    static const char *const names[2] = {"h.trace.json", "h.pt.trace.json"};
    char file[192];
    size_t skip;
    const char *name = run_ctrace_name(data, size, &skip);
    int i;

    if (logdir[0] == '\0')
        fuzz_run_dir("ctrace", logdir, run);
    for (i = 0; i < 2; i++) {
        snprintf(file, sizeof(file), "%s/%s", run, names[i]);
        unlink(file);
    }
    snprintf(file, sizeof(file), "%s/%s", run, name);
    fuzz_write_file(file, data + skip, size - skip);
    fuzz_make_run(logdir);
    return 0;
}
