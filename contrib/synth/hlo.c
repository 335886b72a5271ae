/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xla.HloProto writer. Field numbers from openxla/xla xla/service/hlo.proto
 * and xla/xla_data.proto: HloProto.hlo_module = 1; HloModuleProto name = 1,
 * entry_computation_name = 2, computations = 3, id = 5,
 * entry_computation_id = 6; HloComputationProto name = 1, instructions = 2,
 * id = 5, root_id = 6, is_fusion_computation = 7; HloInstructionProto
 * name = 1, opcode = 2, shape = 3, metadata = 7, parameter_number = 9,
 * fusion_kind = 11, dimensions = 14, custom_call_target = 28, id = 35,
 * operand_ids = 36, called_computation_ids = 38; ShapeProto element_type = 2,
 * dimensions = 3, tuple_shapes = 4, layout = 5 (LayoutProto
 * minor_to_major = 1); OpMetadata op_name = 2, source_file = 3,
 * source_line = 4.
 */
#include "hlo.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PRIM_TUPLE 13
#define PRIM_S32 4

/* Shape of an instruction: an array, or a tuple of one array when tuple_of is set. */
struct hshape {
    int elem_type;              /* xla.PrimitiveType */
    int n_dims;                 /* rank */
    const int64_t *dims;        /* dimensions */
    const struct hshape *tuple; /* element of a one-element tuple, or NULL */
};

/* What one HloInstructionProto holds (unused fields are 0/NULL). */
struct hinstr {
    const char *name;        /* instruction name */
    const char *opcode;      /* HLO opcode */
    struct hshape shape;     /* result shape */
    const char *op_name;     /* metadata.op_name, or NULL */
    int source_line;         /* metadata.source_line */
    int64_t parameter;       /* parameter_number */
    const char *fusion_kind; /* fusion_kind, or NULL */
    const char *target;      /* custom_call_target, or NULL */
    int64_t id;              /* instruction id */
    int64_t operand;         /* single operand id, or 0 */
    int64_t called;          /* called computation id, or 0 */
    int reduce_dim;          /* 1: dimensions = {rank - 1} (reduce) */
};

/* Appends a ShapeProto (array, or tuple of one array) as field `field`. */
static void put_shape(struct wbuf *out, unsigned field, const struct hshape *sh)
{
    struct wbuf s = WBUF_INIT, layout = WBUF_INIT;
    int64_t minor_to_major[4];
    int i;

    if (sh->tuple != NULL) {
        pb_uint(&s, 2, PRIM_TUPLE);
        put_shape(&s, 4, sh->tuple);
    } else {
        pb_uint(&s, 2, (uint64_t)sh->elem_type);
        pb_packed(&s, 3, sh->dims, (size_t)sh->n_dims);
        for (i = 0; i < sh->n_dims; i++)
            minor_to_major[i] = sh->n_dims - 1 - i;
        pb_packed(&layout, 1, minor_to_major, (size_t)sh->n_dims);
        pb_msg(&s, 5, &layout);
    }
    pb_msg(out, field, &s);
    wb_release(&s);
    wb_release(&layout);
}

/* Appends one HloInstructionProto as field 2 of a computation. */
static void put_instr(struct wbuf *comp, const struct hinstr *in)
{
    struct wbuf b = WBUF_INIT, meta = WBUF_INIT;
    int64_t dim;

    pb_str(&b, 1, in->name);
    pb_str(&b, 2, in->opcode);
    put_shape(&b, 3, &in->shape);
    if (in->op_name != NULL) {
        pb_str(&meta, 2, in->op_name);
        pb_str(&meta, 3, "/workspace/train.py");
        pb_uint(&meta, 4, (uint64_t)in->source_line);
        pb_msg(&b, 7, &meta);
    }
    if (in->parameter != 0)
        pb_int(&b, 9, in->parameter);
    if (in->fusion_kind != NULL)
        pb_str(&b, 11, in->fusion_kind);
    if (in->reduce_dim && in->shape.n_dims > 0) {
        dim = in->shape.n_dims - 1;
        pb_packed(&b, 14, &dim, 1);
    }
    if (in->target != NULL)
        pb_str(&b, 28, in->target);
    pb_int(&b, 35, in->id);
    if (in->operand != 0)
        pb_packed(&b, 36, &in->operand, 1);
    if (in->called != 0)
        pb_packed(&b, 38, &in->called, 1);
    pb_msg(comp, 2, &b);
    wb_release(&b);
    wb_release(&meta);
}

/* Appends the fused computation of fusion op `op` (parameter -> root) as field 3. */
static void put_fused(struct wbuf *mod, const struct op *op, int64_t comp_id, int64_t *next_id,
                      int k)
{
    struct wbuf c = WBUF_INIT;
    char name[64], pname[64], rname[64];
    struct hinstr in;
    int64_t param_id = (*next_id)++;
    int64_t root_id = (*next_id)++;

    snprintf(name, sizeof(name), "fused_computation.%d", k);
    snprintf(pname, sizeof(pname), "param_0.%d", k);
    snprintf(rname, sizeof(rname), "%s.%d", op->root_opcode, k);
    pb_str(&c, 1, name);
    memset(&in, 0, sizeof(in));
    in.name = pname;
    in.opcode = "parameter";
    in.shape = (struct hshape){op->elem_type, op->n_dims, op->dims, NULL};
    in.id = param_id;
    put_instr(&c, &in);
    in.name = rname;
    in.opcode = op->root_opcode;
    in.op_name = op->scope;
    in.source_line = op->source_line;
    in.id = root_id;
    in.operand = param_id;
    in.reduce_dim = strcmp(op->root_opcode, "reduce") == 0;
    put_instr(&c, &in);
    pb_int(&c, 5, comp_id);
    pb_int(&c, 6, root_id);
    pb_uint(&c, 7, 1);
    pb_msg(mod, 3, &c);
    wb_release(&c);
}

/* Appends the entry parameters; returns the id of the last one. */
static int64_t put_params(struct wbuf *entry, int64_t *next_id)
{
    static const int64_t weights[2] = {2048, 8192};
    static const int64_t batch[2] = {8, 1024};
    struct hinstr in;

    memset(&in, 0, sizeof(in));
    in.name = "Arg_0.1";
    in.opcode = "parameter";
    in.shape = (struct hshape){11, 2, weights, NULL};
    in.op_name = "params";
    in.id = (*next_id)++;
    put_instr(entry, &in);
    in.name = "Arg_1.2";
    in.shape = (struct hshape){PRIM_S32, 2, batch, NULL};
    in.op_name = "batch";
    in.parameter = 1;
    in.id = (*next_id)++;
    put_instr(entry, &in);
    return in.id;
}

/* Appends the entry instruction of op i; ids[] maps ops to instruction ids. */
static void put_op(struct wbuf *entry, const struct module *m, size_t i, int64_t *ids,
                   int64_t operand, int64_t called)
{
    const struct op *op = &m->ops[i];
    struct hinstr in;

    memset(&in, 0, sizeof(in));
    in.name = op->hlo;
    in.opcode = op->opcode;
    in.shape = (struct hshape){op->elem_type, op->n_dims, op->dims, NULL};
    in.op_name = op->scope;
    in.source_line = op->source_line;
    in.fusion_kind = op->fusion_kind;
    if (op->kind == OP_GEMM)
        in.target = "__cublas$lt$matmul";
    in.id = ids[i];
    in.operand = op->kind == OP_WAIT ? ids[op->coll] : operand;
    in.called = called;
    put_instr(entry, &in);
}

int hlo_encode(const struct module *m, struct wbuf *out)
{
    struct wbuf mod = WBUF_INIT, entry = WBUF_INIT, proto = WBUF_INIT;
    int64_t ids[1024];
    int64_t next_id = 1, comp_id = 1, last, entry_id;
    const struct op *lastop;
    struct hinstr root;
    char entry_name[64];
    size_t i;
    int k = 0, rc;

    if (m->n_ops == 0 || m->n_ops > sizeof(ids) / sizeof(ids[0]))
        return -EINVAL;
    pb_str(&mod, 1, m->name);
    snprintf(entry_name, sizeof(entry_name), "main.%lld", (long long)m->n_ops + 3);
    pb_str(&mod, 2, entry_name);
    pb_str(&entry, 1, entry_name);
    last = put_params(&entry, &next_id);
    for (i = 0; i < m->n_ops; i++) {
        int64_t called = 0;

        ids[i] = next_id++;
        if (m->ops[i].kind == OP_FUSION) {
            called = comp_id++;
            put_fused(&mod, &m->ops[i], called, &next_id, k++);
        }
        put_op(&entry, m, i, ids, last, called);
        last = ids[i];
    }
    lastop = &m->ops[m->n_ops - 1];
    memset(&root, 0, sizeof(root));
    root.name = "tuple.0";
    root.opcode = "tuple";
    root.shape.tuple = &(struct hshape){lastop->elem_type, lastop->n_dims, lastop->dims, NULL};
    root.id = next_id++;
    root.operand = last;
    put_instr(&entry, &root);
    entry_id = comp_id++;
    pb_int(&entry, 5, entry_id);
    pb_int(&entry, 6, root.id);
    pb_msg(&mod, 3, &entry);
    pb_int(&mod, 5, m->program_id);
    pb_int(&mod, 6, entry_id);
    pb_msg(&proto, 1, &mod);
    wb_put(out, proto.data, proto.len);
    rc = wb_ok(&proto);
    if (rc == 0)
        rc = wb_ok(out);
    wb_release(&mod);
    wb_release(&entry);
    wb_release(&proto);
    return rc;
}
