/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --scenario tpu_dcn: the tpu profile with Megascale (multi-slice DCN)
 * collectives, as XProf's megascale_stats reads them: every step of every
 * TensorCore runs three collectives as send / recv / send-done / recv-done
 * ops on the XLA Ops line (hlo_category "host send" ... "host recv-done"),
 * the ops' HLO instructions are in the HloProto of jit_train_step (program
 * 5) on a /host:metadata plane (channel ids, the rendezvous and transfer
 * type frontend attributes, shapes), the sends' metadata carry a
 * dcn_collective_info stat (DcnCollectiveInfoProto), and a /host:CPU plane
 * has one "MegaScale: <rendezvous>" event per collective and step. Times:
 * see README.md.
 */
#include <stdio.h>
#include <string.h>

#include "tpu.h"
#include "xplane.h"

#define US 1000000LL /* ps */

/* One collective. */
static const struct dcn_coll {
    const char *rendezvous;
    const char *type;    /* _xla_megascale_transfer_type */
    int64_t channel;     /* channel_id */
    int group;           /* endpoints of its endpoint group; -1: one-to-one */
    int64_t elem_type;   /* PrimitiveType of the data */
    int64_t dims[2];     /* its dimensions (0: none) */
    int done_rendezvous; /* the done ops carry the rendezvous attribute too */
} colls[3] = {
    {"dcn_all_reduce_a", "ALL_REDUCE", 1, 4, 11 /* F32 */, {256, 1024}, 1},
    {"dcn_all_gather_b", "ALL_GATHER", 2, 2, 16 /* BF16 */, {4096, 0}, 0},
    {"dcn_send_recv_c", "ONE_TO_ONE", 3, -1, 2 /* S8 */, {1000, 0}, 1},
};

enum { OP_SEND, OP_RECV, OP_SEND_DONE, OP_RECV_DONE };
static const char *const opcodes[4] = {"send", "recv", "send-done", "recv-done"};
static const char *const categories[4] = {"host send", "host recv", "host send-done",
                                          "host recv-done"};

/* The ops in time order: collective, op, start and length in ps from the
 * step start; the length grows by m_ps per k mod 8, c_ps per core and h_ps
 * per host mod 4. */
static const struct dcn_op {
    int coll, op;
    int64_t t0, len, m_ps, c_ps, h_ps;
} dcn_ops[TPU_DCN_NOPS] = {
    {0, OP_SEND, 776 * US, 2 * US, 0, 0, 0},
    {1, OP_SEND, 779 * US, 1 * US + US / 2, 0, 0, 0},
    {0, OP_RECV, 781 * US, 2 * US, 0, 0, 0},
    {1, OP_RECV, 784 * US, 1 * US, 0, 0, 0},
    {0, OP_SEND_DONE, 787 * US, 2 * US, 0, 0, 0},
    {0, OP_RECV_DONE, 791 * US, 5 * US + US / 4, US, 0, 0},
    {2, OP_SEND, 805 * US, 1 * US, 0, 0, 0},
    {2, OP_RECV, 807 * US, 1 * US, 0, 0, 0},
    {1, OP_SEND_DONE, 810 * US, 1 * US, 0, 0, 0},
    {1, OP_RECV_DONE, 813 * US, 5 * US, 0, US, 0},
    {2, OP_SEND_DONE, 821 * US, 1 * US, 0, 0, 0},
    {2, OP_RECV_DONE, 824 * US, 6 * US, 0, 0, US},
};

/* Instruction ids: 18 the data parameter, 19 the token, then four per
 * collective (send, recv, send-done, recv-done). */
static int64_t instr_id(int coll, int op)
{
    return 20 + 4 * coll + op;
}

static void instr_name(int coll, int op, char *buf, size_t n)
{
    snprintf(buf, n, "%s.%lld", opcodes[op], (long long)instr_id(coll, op));
}

void tpu_dcn_events(struct emit *em, int64_t first_meta, int64_t step_ps, int64_t k, int c, int h,
                    const void *ungrouped)
{
    int i;

    for (i = 0; i < TPU_DCN_NOPS; i++) {
        const struct dcn_op *op = &dcn_ops[i];
        int64_t len = op->len + op->m_ps * (k % 8) + op->c_ps * c + op->h_ps * (h % 4);
        xev_begin(em, first_meta + i, step_ps + op->t0, len);
        tpu_put_group(ungrouped, em, k);
        xev_end(em);
    }
}

/* DcnCollectiveInfoProto of a collective. */
static void collective_info(const struct dcn_coll *cl, struct wbuf *out)
{
    struct wbuf group = WBUF_INIT, ep = WBUF_INIT, ep2 = WBUF_INIT;
    int i;

    pb_int(out, 1, cl->group < 0 ? 2 : strcmp(cl->type, "ALL_REDUCE") == 0 ? 5 : 4);
    if (cl->group < 0) {
        pb_int(&ep, 1, 0); /* source slice 0 device 0, destination slice 1 */
        pb_int(&ep2, 1, 1);
        pb_msg(&group, 1, &ep);
        pb_msg(&group, 2, &ep2);
        pb_msg(out, 3, &group);
    } else {
        for (i = 0; i < cl->group; i++) {
            wb_reset(&ep);
            pb_int(&ep, 1, i);
            pb_int(&ep, 2, 0);
            pb_msg(&group, 1, &ep);
        }
        pb_msg(out, 2, &group);
    }
    if (group.failed || ep.failed || ep2.failed)
        out->failed = 1;
    wb_release(&group);
    wb_release(&ep);
    wb_release(&ep2);
}

void tpu_dcn_metadata(struct wbuf *tail, int64_t first_meta, const struct tpu_dcn_stats *st)
{
    char name[64], text[160];
    int i;

    for (i = 0; i < TPU_DCN_NOPS; i++) {
        const struct dcn_op *op = &dcn_ops[i];
        struct wbuf v = WBUF_INIT, info = WBUF_INIT;
        instr_name(op->coll, op->op, name, sizeof(name));
        pb_int(&v, 1, first_meta + i);
        if (op->coll == 0) { /* the HLO text, as the TPU runtime names ops */
            snprintf(text, sizeof(text), "%%%s = %s(...), channel_id=%lld", name, opcodes[op->op],
                     (long long)colls[op->coll].channel);
            pb_str(&v, 2, text);
            pb_str(&v, 4, name);
        } else {
            pb_str(&v, 2, name);
        }
        pb_stat_varint(&v, 5, st->program_id, PB_STAT_INT64, 5);
        pb_stat_varint(&v, 5, st->symbol_id, PB_STAT_INT64, (uint64_t)instr_id(op->coll, op->op));
        pb_stat_bytes(&v, 5, st->category, PB_STAT_STR, categories[op->op],
                      strlen(categories[op->op]));
        if (op->op == OP_SEND) {
            collective_info(&colls[op->coll], &info);
            pb_stat_bytes(&v, 5, st->dcn_info, PB_STAT_BYTES, info.data, info.len);
        }
        pb_map_entry(tail, 4, first_meta + i, &v);
        if (v.failed || info.failed)
            tail->failed = 1;
        wb_release(&v);
        wb_release(&info);
    }
}

/* ShapeProto of an array (dims[0..1], 0 = none), a token or a tuple. */
static void array_shape(struct wbuf *s, int64_t type, const int64_t *dims)
{
    struct wbuf lay = WBUF_INIT;
    int64_t mtm[2] = {1, 0};
    size_t n = dims == NULL ? 0 : dims[1] != 0 ? 2 : dims[0] != 0 ? 1 : 0;

    pb_int(s, 2, type);
    if (n > 0) {
        pb_packed(s, 3, dims, n);
        pb_packed(&lay, 1, n == 2 ? mtm : mtm + 1, n);
        pb_msg(s, 5, &lay);
    }
    if (lay.failed)
        s->failed = 1;
    wb_release(&lay);
}

static void tuple_shape(struct wbuf *s, const struct wbuf *const *parts, int n)
{
    int i;

    pb_int(s, 2, 13 /* TUPLE */);
    for (i = 0; i < n; i++)
        pb_msg(s, 4, parts[i]);
}

static void attr(struct wbuf *fa, const char *key, const char *value)
{
    struct wbuf e = WBUF_INIT;

    pb_str(&e, 1, key);
    pb_str(&e, 2, value);
    pb_msg(fa, 1, &e);
    if (e.failed)
        fa->failed = 1;
    wb_release(&e);
}

/* One HloInstructionProto into the computation. */
static void instr(struct wbuf *comp, const char *name, const char *opcode, const struct wbuf *shape,
                  int64_t id, const int64_t *operands, size_t nops, int64_t channel,
                  const struct wbuf *fa)
{
    struct wbuf in = WBUF_INIT;

    pb_str(&in, 1, name);
    pb_str(&in, 2, opcode);
    pb_msg(&in, 3, shape);
    if (channel != 0)
        pb_int(&in, 26, channel);
    pb_int(&in, 35, id);
    pb_packed(&in, 36, operands, nops);
    if (fa != NULL && fa->len > 0)
        pb_msg(&in, 68, fa);
    pb_msg(comp, 2, &in);
    if (in.failed)
        comp->failed = 1;
    wb_release(&in);
}

/* The HloProto of jit_train_step: a parameter, a token and the ops. */
static int encode_hlo(struct wbuf *out)
{
    struct wbuf comp = WBUF_INIT, mod = WBUF_INIT, token = WBUF_INIT, u32 = WBUF_INIT;
    struct wbuf data = WBUF_INIT, shape = WBUF_INIT, fa = WBUF_INIT;
    static const int64_t param_dims[2] = {256, 1024};
    int64_t ops[2];
    char name[64];
    int cl, op, rc;

    array_shape(&token, 17 /* TOKEN */, NULL);
    array_shape(&u32, 8 /* U32 */, NULL);
    array_shape(&shape, 11, param_dims);
    {
        struct wbuf p = WBUF_INIT;
        pb_str(&p, 1, "p0.18");
        pb_str(&p, 2, "parameter");
        pb_msg(&p, 3, &shape);
        pb_int(&p, 35, 18);
        pb_msg(&comp, 2, &p);
        if (p.failed)
            comp.failed = 1;
        wb_release(&p);
    }
    instr(&comp, "after-all.19", "after-all", &token, 19, NULL, 0, 0, NULL);
    for (cl = 0; cl < 3; cl++) {
        const struct dcn_coll *c = &colls[cl];
        wb_reset(&data);
        array_shape(&data, c->elem_type, c->dims);
        for (op = 0; op < 4; op++) {
            const struct wbuf *three[3] = {&data, &u32, &token}, *two[2] = {&data, &token};
            size_t nops = 0;
            wb_reset(&shape);
            wb_reset(&fa);
            if (op == OP_SEND || op == OP_RECV)
                tuple_shape(&shape, three, 3);
            else if (op == OP_RECV_DONE)
                tuple_shape(&shape, two, 2);
            else
                array_shape(&shape, 17, NULL);
            if (op == OP_SEND || op == OP_RECV || c->done_rendezvous)
                attr(&fa, "_xla_host_transfer_rendezvous", c->rendezvous);
            if (op == OP_SEND || op == OP_RECV)
                attr(&fa, "_xla_megascale_transfer_type", c->type);
            if (op == OP_SEND) {
                ops[nops++] = 18;
                ops[nops++] = 19;
            } else if (op == OP_RECV) {
                ops[nops++] = 19;
            } else {
                ops[nops++] = instr_id(cl, op - 2);
            }
            instr_name(cl, op, name, sizeof(name));
            instr(&comp, name, opcodes[op], &shape, instr_id(cl, op), ops, nops, c->channel, &fa);
        }
    }
    pb_str(&comp, 1, "main.1");
    pb_int(&comp, 5, 1);
    pb_int(&comp, 6, instr_id(2, OP_RECV_DONE));
    pb_str(&mod, 1, "jit_train_step");
    pb_str(&mod, 2, "main.1");
    pb_msg(&mod, 3, &comp);
    pb_int(&mod, 5, 5);
    pb_int(&mod, 6, 1);
    pb_msg(out, 1, &mod);
    rc = comp.failed || mod.failed || token.failed || u32.failed || data.failed || shape.failed ||
                 fa.failed
             ? -12
             : wb_ok(out);
    wb_release(&comp);
    wb_release(&mod);
    wb_release(&token);
    wb_release(&u32);
    wb_release(&data);
    wb_release(&shape);
    wb_release(&fa);
    return rc;
}

int tpu_dcn_metadata_plane(struct sink *sink, uint64_t *bytes)
{
    struct wbuf tail = WBUF_INIT, hlo = WBUF_INIT, meta = WBUF_INIT;
    struct xplane_desc pd = {0, "/host:metadata", NULL, 0, &tail, NULL};
    int rc = encode_hlo(&hlo);

    if (rc == 0) {
        pb_int(&meta, 1, 5);
        pb_str(&meta, 2, "jit_train_step(5)");
        pb_stat_bytes(&meta, 5, 1, PB_STAT_BYTES, hlo.data, hlo.len);
        pb_map_entry(&tail, 4, 5, &meta);
        pb_named_entry(&tail, 5, 1, "Hlo Proto");
        rc = wb_ok(&tail);
    }
    if (rc == 0)
        rc = xplane_write(sink, &pd, bytes);
    else
        fprintf(stderr, "xprofs-synth: cannot encode the DCN HLO module\n");
    wb_release(&tail);
    wb_release(&hlo);
    wb_release(&meta);
    return rc;
}

struct host_gen {
    int64_t n_steps;
    int64_t (*step_ps)(int64_t k);
};

/* One MegaScale event per collective and step: from its send's start to its
 * recv-done's end on core 0 of host 0's times. */
static int gen_megascale(void *ctx, int arg, struct emit *em)
{
    const struct host_gen *g = ctx;
    int64_t k;
    int cl, i;

    (void)arg;
    for (k = 0; k < g->n_steps; k++) {
        for (cl = 0; cl < 3; cl++) {
            int64_t b = -1, e = 0;
            for (i = 0; i < TPU_DCN_NOPS; i++) {
                if (dcn_ops[i].coll != cl)
                    continue;
                if (b < 0)
                    b = dcn_ops[i].t0;
                e = dcn_ops[i].t0 + dcn_ops[i].len;
            }
            xev_begin(em, 1 + cl, g->step_ps(k) + b, e - b);
            xev_end(em);
        }
    }
    return em->err;
}

int tpu_dcn_host_plane(struct sink *sink, int64_t n_steps, int64_t (*step_ps)(int64_t k),
                       int64_t ts_ns, uint64_t *bytes)
{
    struct host_gen g = {n_steps, step_ps};
    struct xline_desc line = {1, "megascale_client", ts_ns, gen_megascale, &g, 0};
    struct wbuf tail = WBUF_INIT;
    struct xplane_desc pd = {100, "/host:CPU", &line, 1, &tail, NULL};
    char name[96];
    int cl, rc;

    for (cl = 0; cl < 3; cl++) {
        snprintf(name, sizeof(name), "MegaScale: %s", colls[cl].rendezvous);
        pb_named_entry(&tail, 4, 1 + cl, name);
    }
    rc = wb_ok(&tail);
    if (rc == 0)
        rc = xplane_write(sink, &pd, bytes);
    wb_release(&tail);
    return rc;
}
