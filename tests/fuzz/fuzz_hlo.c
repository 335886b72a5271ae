/*
 * fuzz_hlo.c - libFuzzer target of the HLO module reader: the input is an
 * HloProto as profiles store it (its hlo_module, field 1), read into a graph (every instruction
 * outside fusions printed as XLA's text while it is read) and priced by the cost model, as op_stats
 * does for each module of a host. Hostile modules (cycles in the call graph, ids out of range, huge
 * shapes, bad wire data) may be refused; nothing may crash, leak or hang. Built by `make fuzz`;
 * seeds are the corpus's *.hlo_proto.pb files (tests/unit/test_hlo_text.c and test_hlo_cost.c build
 * hostile modules by hand).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/wire.h"
#include "hlo/hlo_cost.h"
#include "hlo/hlo_module.h"

/* The HloModuleProto of an HloProto: 0 and *m, or -1. */
static int module_of(const uint8_t *p, size_t n, struct wire *m)
{
    struct wire w;
    uint32_t f;
    int t;

    wire_init(&w, p, n);
    while (!wire_eof(&w)) {
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1 && t == WIRE_LEN)
            return wire_bytes(&w, m) != 0 ? -1 : 0;
        if (wire_skip(&w, t) != 0)
            return -1;
    }
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hlo_graph g;
    struct hlo_cost *cost;
    struct wire m;

    if (module_of(data, size, &m) != 0 || hlo_graph_read(m.p, (size_t)(m.end - m.p), &g) != 0)
        return 0;
    if (g.linked && g.nnodes > 0) {
        cost = calloc(g.nnodes, sizeof(*cost));
        if (cost != NULL)
            hlo_cost_analyze(&g, cost);
        free(cost);
    }
    hlo_graph_free(&g);
    return 0;
}
