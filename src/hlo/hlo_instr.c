/*
 * hlo_instr.c - one HloInstructionProto into a struct hlo_node and its raw
 * operand and called-computation ids. Bad framing of the instruction, its
 * names, opcode or metadata makes the module corrupt; bad bytes inside a
 * field only the cost model reads are noted in the read status instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module_int.h"

/* The result rc of reading a field only the cost model reads: bad bytes
 * inside it are noted in st and cleared; -ENOMEM and framing_rc (the result
 * that means the field itself was badly framed: -1 from hlo_read_i64s, 0 for a
 * sub-message whose bytes were already taken) are returned. */
static int graph_field(int rc, int framing_rc, struct hlo_read_status *st)
{
    if (rc == 0 || rc == -ENOMEM || rc == framing_rc)
        return rc;
    st->graph_bad = 1;
    return 0;
}

/* One HloInstructionProto into nd (strings in the arena) and its raw ids. */
int hlo_read_instr(struct arena *a, struct wire w, struct hlo_node *nd, struct hlo_raw_ids *ids,
                   struct hlo_read_status *st)
{
    struct i64vec dims = {0}, fft = {0};
    int rc = 0, ok = 1;

    memset(nd, 0, sizeof(*nd));
    nd->name = nd->opcode = nd->fusion_kind = nd->custom_call_target = "";
    nd->op_type = nd->op_name = nd->dedup_name = nd->source_file = "";
    nd->stack_frame = nd->text = "";
    nd->backend_config = "";
    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        switch (f) {
        case 9:
            rc = hlo_read_varint(&w, t, &nd->parameter_number);
            continue;
        case 13:
            rc = hlo_read_varint(&w, t, &nd->tuple_index);
            continue;
        case 14:
            rc = graph_field(hlo_read_i64s(&w, t, &dims), -1, st);
            continue;
        case 26:
            rc = hlo_read_varint(&w, t, &nd->channel_id);
            continue;
        case 32:
            rc = graph_field(hlo_read_i64s(&w, t, &fft), -1, st);
            continue;
        case 35:
            rc = hlo_read_varint(&w, t, &ids->id);
            continue;
        case 36:
            rc = graph_field(hlo_read_i64s(&w, t, &ids->operands), -1, st);
            continue;
        case 38:
            rc = graph_field(hlo_read_i64s(&w, t, &ids->called), -1, st);
            continue;
        case 50:
            rc = hlo_read_varint(&w, t, &nd->feature_group_count);
            continue;
        case 58:
            rc = hlo_read_varint(&w, t, &nd->batch_group_count);
            continue;
        case 71: {
            int64_t v = 0;
            rc = hlo_read_varint(&w, t, &v);
            nd->use_global_device_ids = v != 0;
            continue;
        }
        default:
            break;
        }
        if (t != WIRE_LEN ||
            (f != 1 && f != 2 && f != 3 && f != 7 && f != 11 && f != 15 && f != 16 && f != 28 &&
             f != 30 && f != 43 && f != 49 && f != 87 && f != 90)) {
            if (wire_skip(&w, t) != 0)
                rc = -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0) {
            rc = -1;
            break;
        }
        if (f == 1 || f == 2 || f == 11 || f == 28 || f == 43) {
            const char *v = hlo_keep_str(a, s);
            if (v == NULL) {
                rc = -ENOMEM;
                break;
            }
            if (f == 1) {
                nd->name = v;
                nd->name_len = (size_t)(s.end - s.p);
            } else if (f == 2) {
                nd->opcode = v;
            } else if (f == 11) {
                nd->fusion_kind = v;
            } else if (f == 28) {
                nd->custom_call_target = v;
            } else {
                nd->backend_config = v;
                nd->backend_config_len = (size_t)(s.end - s.p);
            }
        } else if (f == 7) {
            rc = hlo_read_metadata(a, s, nd, &ids->stack_frame_id);
        } else if (f == 3) {
            rc = graph_field(hlo_read_shape(a, s, &nd->shape, 0), 0, st);
        } else if (f == 15) {
            rc = hlo_read_window(a, s, nd);
            if (rc != 0 && rc != -ENOMEM) {
                st->window_corrupt = 1;
                rc = graph_field(rc, 0, st);
            }
        } else if (f == 16) {
            rc = graph_field(hlo_read_conv_dims(a, s, nd), 0, st);
        } else if (f == 30) {
            rc = graph_field(hlo_read_dot_dims(a, s, nd), 0, st);
        } else if (f == 90) {
            rc = graph_field(hlo_read_ragged_dims(a, s, nd), 0, st);
        } else if (f == 49) {
            int64_t size;
            rc = graph_field(hlo_group_size(s, &size), 0, st);
            nd->group_list_given = 1;
            if (size > nd->largest_group)
                nd->largest_group = size;
        } else {
            rc = graph_field(hlo_read_device_list(s, nd), 0, st);
        }
    }
    if (rc == 0) {
        nd->ndims = dims.n;
        nd->dims = hlo_vec_keep(a, &dims, &ok);
        nd->nfft = fft.n;
        nd->fft_length = hlo_vec_keep(a, &fft, &ok);
        if (!ok)
            rc = -ENOMEM;
    }
    if (nd->feature_group_count < 1)
        nd->feature_group_count = 1;
    if (nd->batch_group_count < 1)
        nd->batch_group_count = 1;
    free(dims.v);
    free(fft.v);
    return rc;
}
