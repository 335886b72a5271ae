/*
 * fuzz_tools.c - libFuzzer target of every tool: the input becomes the one
 * host file of a run (LOGDIR/plugins/profile/r/h.xplane.pb in a temporary
 * directory), and every file the run directory lists is made, as `xprofs
 * cat` makes it, plus a trace window, a down-sampled trace and the hosts/
 * copies. A file may fail with an error; nothing may crash, leak or hang.
 * Built by `make fuzz`, where undefined behaviour stops the run like a
 * crash (so that libFuzzer keeps the input): the first report, before that
 * was so, was a memcpy from a NULL module in the XLA Ops names
 * (test_derived.c's test_op_without_module); the second an event offset
 * near 2^63 whose start overflowed (test_xspace.c's test_time_out_of_range,
 * and test_fuzz_tools.c's test_time_out_of_range_tools, which builds that
 * profile). A crash input becomes such a test (profiles are not
 * committed; tests/fuzz/regressions/tools/ holds inputs under study, which
 * tests/unit/test_fuzz_tools.c makes every file of, as it does with
 * mutations of our generator's small profiles, which catch the first);
 * inputs of the reader's target likewise (tests/fuzz/regressions/,
 * test_fuzz_regressions.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char logdir[64], run[128], file[160];

    if (logdir[0] == '\0') {
        fuzz_run_dir("tools", logdir, run);
        snprintf(file, sizeof(file), "%s/h.xplane.pb", run);
    }
    fuzz_write_file(file, data, size);
    fuzz_make_run(logdir);
    return 0;
}
