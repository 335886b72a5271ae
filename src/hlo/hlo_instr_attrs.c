/*
 * hlo_instr_attrs.c - the sub-messages of an HloInstructionProto that the
 * cost model and op_stats read: the window, convolution / dot / ragged-dot
 * dimension numbers, replica groups and collective device lists, and the
 * OpMetadata names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module_int.h"

/* Window: its dimensions into nd->window (arena), noting window / base
 * dilations other than 1. */
int hlo_read_window(struct arena *a, struct wire w, struct hlo_node *nd)
{
    struct wire scan = w;
    uint32_t n = 0;

    while (!wire_eof(&scan)) {
        uint32_t f;
        int t;
        if (wire_key(&scan, &f, &t) != 0 || wire_skip(&scan, t) != 0)
            return -1;
        n += f == 1 && t == WIRE_LEN;
    }
    nd->nwindow = 0;
    nd->window = n ? arena_alloc(a, n * sizeof(*nd->window)) : NULL;
    if (n && nd->window == NULL)
        return -ENOMEM;
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire dw;
        struct hlo_window_dim *d;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f != 1 || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &dw) != 0)
            return -1;
        d = &nd->window[nd->nwindow++];
        memset(d, 0, sizeof(*d));
        while (!wire_eof(&dw)) {
            uint32_t df;
            int dt;
            int64_t *dst = NULL;
            if (wire_key(&dw, &df, &dt) != 0)
                return -1;
            if (df == 1)
                dst = &d->size;
            else if (df == 2)
                dst = &d->stride;
            else if (df == 3)
                dst = &d->pad_low;
            else if (df == 4)
                dst = &d->pad_high;
            else if (df == 5)
                dst = &d->window_dilation;
            else if (df == 6)
                dst = &d->base_dilation;
            if (dst != NULL) {
                if (hlo_read_varint(&dw, dt, dst) != 0)
                    return -1;
                if (dt == WIRE_VARINT && df == 5 && *dst != 1)
                    nd->window_dilated = 1;
                if (dt == WIRE_VARINT && df == 6 && *dst != 1)
                    nd->base_dilated = 1;
            } else if (wire_skip(&dw, dt) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* ConvolutionDimensionNumbers: batch / feature dimensions and the spatial
 * lists (nspatial = the shortest of the three). */
int hlo_read_conv_dims(struct arena *a, struct wire w, struct hlo_node *nd)
{
    struct i64vec in = {0}, ker = {0}, out = {0};
    int rc = 0, ok = 1;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        if (f == 6)
            rc = hlo_read_i64s(&w, t, &ker);
        else if (f == 11)
            rc = hlo_read_i64s(&w, t, &in);
        else if (f == 12)
            rc = hlo_read_i64s(&w, t, &out);
        else if (f == 7)
            rc = hlo_read_varint(&w, t, &nd->in_batch_dim);
        else if (f == 8)
            rc = hlo_read_varint(&w, t, &nd->in_feature_dim);
        else if (f == 10)
            rc = hlo_read_varint(&w, t, &nd->out_feature_dim);
        else if (wire_skip(&w, t) != 0)
            rc = -1;
    }
    if (rc == 0) {
        uint32_t n = in.n;
        if (ker.n < n)
            n = ker.n;
        if (out.n < n)
            n = out.n;
        nd->nspatial = n;
        nd->in_spatial = hlo_vec_keep(a, &in, &ok);
        nd->kernel_spatial = hlo_vec_keep(a, &ker, &ok);
        nd->out_spatial = hlo_vec_keep(a, &out, &ok);
        if (!ok)
            rc = -ENOMEM;
    }
    free(in.v);
    free(ker.v);
    free(out.v);
    return rc;
}

/* The lhs_contracting_dimensions of a DotDimensionNumbers, appended to c.
 * Returns 0, -1 / -2 (bad bytes) or -ENOMEM. */
static int read_contracting(struct wire w, struct i64vec *c)
{
    int rc = 0;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1)
            rc = hlo_read_i64s(&w, t, c);
        else if (wire_skip(&w, t) != 0)
            rc = -1;
    }
    return rc;
}

/* DotDimensionNumbers: the lhs contracting dimensions. */
int hlo_read_dot_dims(struct arena *a, struct wire w, struct hlo_node *nd)
{
    struct i64vec c = {0};
    int rc, ok = 1;

    rc = read_contracting(w, &c);
    if (rc == 0) {
        nd->ncontracting = c.n;
        nd->contracting = hlo_vec_keep(a, &c, &ok);
        if (!ok)
            rc = -ENOMEM;
    }
    free(c.v);
    return rc;
}

/* RaggedDotDimensionNumbers: the contracting dimensions of its
 * dot_dimension_numbers and the number of rhs_group_dimensions. */
int hlo_read_ragged_dims(struct arena *a, struct wire w, struct hlo_node *nd)
{
    struct i64vec c = {0}, groups = {0};
    int rc = 0, ok = 1;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        if (f == 1 && t == WIRE_LEN) {
            if (wire_bytes(&w, &s) != 0)
                rc = -1;
            else
                rc = read_contracting(s, &c);
        } else if (f == 3) {
            rc = hlo_read_i64s(&w, t, &groups);
        } else if (wire_skip(&w, t) != 0) {
            rc = -1;
        }
    }
    if (rc == 0) {
        nd->ragged_ncontracting = c.n;
        nd->ragged_contracting = hlo_vec_keep(a, &c, &ok);
        nd->ragged_ngroups = groups.n;
        if (!ok)
            rc = -ENOMEM;
    }
    free(c.v);
    free(groups.v);
    return rc;
}

/* Size of one ReplicaGroup (count of replica_ids). */
int hlo_group_size(struct wire w, int64_t *size)
{
    struct i64vec ids = {0};
    int rc = 0;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            rc = -1;
        else if (f == 1)
            rc = hlo_read_i64s(&w, t, &ids);
        else if (wire_skip(&w, t) != 0)
            rc = -1;
    }
    *size = ids.n;
    free(ids.v);
    return rc;
}

/* CollectiveDeviceListProto: the largest group, from explicit groups or the
 * iota list. */
int hlo_read_device_list(struct wire w, struct hlo_node *nd)
{
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if ((f != 1 && f != 2) || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        if (f == 1) {
            int64_t size;
            int rc = hlo_group_size(s, &size);
            if (rc != 0)
                return rc;
            nd->group_list_given = 1;
            if (size > nd->largest_group)
                nd->largest_group = size;
        } else {
            int64_t ngroups = 0, per_group = 0;
            while (!wire_eof(&s)) {
                uint32_t sf;
                int st;
                if (wire_key(&s, &sf, &st) != 0)
                    return -1;
                if (sf == 1) {
                    if (hlo_read_varint(&s, st, &ngroups) != 0)
                        return -1;
                } else if (sf == 2) {
                    if (hlo_read_varint(&s, st, &per_group) != 0)
                        return -1;
                } else if (wire_skip(&s, st) != 0) {
                    return -1;
                }
            }
            if (ngroups > 0) {
                nd->group_list_given = 1;
                if (per_group > nd->largest_group)
                    nd->largest_group = per_group;
            }
        }
    }
    return 0;
}

/* OpMetadata into nd, its stack_frame_id into *frame_id. Returns 0, -1 (bad
 * wire data) or -ENOMEM. */
int hlo_read_metadata(struct arena *a, struct wire w, struct hlo_node *nd, int32_t *frame_id)
{
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        const char *v;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 4 && t == WIRE_VARINT) {
            uint64_t line;
            if (wire_varint(&w, &line) != 0)
                return -1;
            nd->source_line = (int32_t)(uint32_t)line;
            continue;
        }
        if (f == 15 && t == WIRE_VARINT) {
            uint64_t id;
            if (wire_varint(&w, &id) != 0)
                return -1;
            *frame_id = (int32_t)(uint32_t)id;
            continue;
        }
        if (t != WIRE_LEN || (f != 1 && f != 2 && f != 3 && f != 12)) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        v = hlo_keep_str(a, s);
        if (v == NULL)
            return -ENOMEM;
        if (f == 1) {
            nd->op_type = v;
            nd->op_type_len = (size_t)(s.end - s.p);
        } else if (f == 2) {
            nd->op_name = v;
            nd->op_name_len = (size_t)(s.end - s.p);
        } else if (f == 3) {
            nd->source_file = v;
            nd->source_file_len = (size_t)(s.end - s.p);
        } else {
            nd->dedup_name = v;
        }
    }
    return 0;
}
