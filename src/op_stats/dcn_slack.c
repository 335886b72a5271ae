/*
 * dcn_slack.c - XProf's DcnTracker (xspace_to_dcn_slack_analysis.cc) fed op
 * by op, its summary, and the combiner of hosts
 * (dcn_slack_analysis_combiner.cc). See dcn_slack.h.
 *
 * XProf adds every visited op's duration to the "overlapping duration" of
 * every rendezvous it has seen; here one running total stands for all of
 * them and each rendezvous keeps the total it started from, which gives the
 * same numbers (mod 2^64, as XProf's sums wrap) in constant time per op.
 */
#include "dcn_slack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/wire.h"

struct dcn_instance {
    uint64_t start_ps;
    uint64_t dur_ps;
};

struct dcn_state {
    uint64_t start_ns;     /* send's start, 0 = no send yet */
    uint64_t overlap_base; /* total_dur_ns when the overlap was last reset */
    uint64_t stall_ns;     /* durations of the collective's ops since its send */
    uint32_t transfer;     /* transfer type (names id, 0 = "") */
    uint32_t send_name;    /* send's display name (names id) */
    int group_size;        /* replica group size, once known */
    int group_known;       /* group_size was asked for */
    struct dcn_instance send, recv, send_done, recv_done;
    uint32_t row; /* summary row + 1, 0 = none yet */
    /* the summary being summed (DcnSlackSummary before the averages) */
    uint32_t s_transfer, s_recv_name, s_send_name;
    uint64_t s_slack, s_occ, s_bytes, s_stall, s_observed;
    uint64_t s_send, s_recv, s_send_done, s_recv_done;
};

/* A double stored in a uint64 proto field: truncation, clamped where C
 * leaves the conversion undefined. */
static uint64_t u64_of(double v)
{
    if (!(v > 0))
        return 0;
    if (v >= 18446744073709551615.0)
        return UINT64_MAX;
    return (uint64_t)v;
}

/* tsl::profiler::SafeDivide. */
static double safe_div(double a, double b)
{
    if (b > -1e-10 && b < 1e-10)
        return 0.0;
    return a / b;
}

void dcn_analysis_init(struct dcn_analysis *an)
{
    memset(an, 0, sizeof(*an));
    arena_init(&an->arena);
}

void dcn_analysis_free(struct dcn_analysis *an)
{
    free(an->rows);
    arena_free(&an->arena);
    memset(an, 0, sizeof(*an));
}

int dcn_tracker_init(struct dcn_tracker *t, struct dcn_analysis *an)
{
    memset(t, 0, sizeof(*t));
    t->an = an;
    return intern_init(&t->names);
}

void dcn_tracker_free(struct dcn_tracker *t)
{
    intern_free(&t->names);
    free(t->states);
    free(t->row_rids);
    idmap_free(&t->channel);
    memset(t, 0, sizeof(*t));
}

static int name_id(struct dcn_tracker *t, const char *s, size_t n, uint32_t *id)
{
    int rc = intern_add(&t->names, s, n, id);

    if (rc != 0)
        t->oom = 1;
    return rc;
}

/* The state of rendezvous id (1..), created as XProf's operator[] does. */
static struct dcn_state *state_of(struct dcn_tracker *t, uint32_t id)
{
    while (t->nstates < id) {
        if (xp_grow((void **)&t->states, &t->states_cap, t->nstates, sizeof(*t->states)) != 0) {
            t->oom = 1;
            return NULL;
        }
        memset(&t->states[t->nstates], 0, sizeof(*t->states));
        /* a new state's overlap starts at 0: before this op is added */
        t->states[t->nstates].overlap_base = t->total_dur_ns;
        t->nstates++;
    }
    return &t->states[id - 1];
}

uint64_t dcn_transmitted_bytes(int64_t recv_size, int group_size, const char *type,
                               int *unsupported)
{
    double g = group_size;
    /* XProf's int64 products, wrapping as they do in practice (signed
     * overflow is undefined in C) */
    uint64_t size = (uint64_t)recv_size, gm1 = (uint64_t)(int64_t)(group_size - 1);

    *unsupported = 0;
    if (group_size == 0)
        return 0;
    if (strcmp(type, "ONE_TO_ONE") == 0)
        return (uint64_t)(int64_t)group_size * size;
    if (strcmp(type, "ALL_GATHER") == 0)
        return u64_of(safe_div((double)(int64_t)(gm1 * size), g));
    if (strcmp(type, "ALL_REDUCE") == 0)
        return u64_of(2 * safe_div(g - 1, g) * (double)recv_size);
    if (strcmp(type, "ALL_TO_ALL") == 0)
        return u64_of(safe_div(g - 1, g) * (double)recv_size);
    if (strcmp(type, "REDUCE_SCATTER") == 0)
        return size * gm1;
    *unsupported = 1;
    return 0;
}

/* The DcnSlack entry of a recv-done, summed into its rendezvous' summary. */
static int add_slack(struct dcn_tracker *t, struct dcn_state *st, uint32_t rid,
                     const struct dcn_instr *in, uint32_t recv_name, uint64_t ts_ns,
                     uint64_t end_ns)
{
    struct dcn_analysis *an = t->an;
    uint64_t overlap = t->total_dur_ns - st->overlap_base;
    uint64_t send_start_us = u64_of(st->start_ns / 1e3);
    uint64_t recv_done_end_us = u64_of(end_ns / 1e3);
    int unsupported = 0;
    uint64_t bytes =
        dcn_transmitted_bytes(in->size, st->group_size, t->names.text[st->transfer], &unsupported);

    if (st->row == 0) {
        if (xp_grow((void **)&an->rows, &an->rows_cap, an->nrows, sizeof(*an->rows)) != 0) {
            t->oom = 1;
            return -ENOMEM;
        }
        if (xp_grow((void **)&t->row_rids, &t->row_rids_cap, an->nrows, sizeof(*t->row_rids)) !=
            0) {
            t->oom = 1;
            return -ENOMEM;
        }
        memset(&an->rows[an->nrows], 0, sizeof(*an->rows));
        t->row_rids[an->nrows] = rid;
        st->row = ++an->nrows;
    }
    if (st->group_size == 0)
        an->nzero_group++;
    an->nunsupported_type += (uint64_t)unsupported;
    an->nslacks++;
    st->s_slack += u64_of((ts_ns - st->start_ns - overlap) / 1e3);
    st->s_occ++;
    st->s_transfer = st->transfer;
    st->s_bytes = bytes;
    st->s_stall += u64_of(st->stall_ns / 1e3);
    st->s_observed += recv_done_end_us - send_start_us;
    st->s_recv_name = recv_name;
    st->s_send_name = st->send_name;
    st->s_send = u64_of((double)st->s_send + st->send.dur_ps / 1e6);
    /* XProf divides the recv duration by 1e6 once more */
    st->s_recv = u64_of((double)st->s_recv + st->recv.dur_ps / 1e6 / 1e6);
    st->s_send_done = u64_of((double)st->s_send_done + st->send_done.dur_ps / 1e6);
    st->s_recv_done = u64_of((double)st->s_recv_done + st->recv_done.dur_ps / 1e6);
    return 0;
}

int dcn_tracker_visit(struct dcn_tracker *t, const struct dcn_instr *in, const char *name,
                      uint64_t ts_ps, uint64_t ts_ns, uint64_t dur_ps, dcn_group_size_fn group_size,
                      const void *group_ctx)
{
    uint64_t dur_ns = dur_ps / 1000;
    struct dcn_state *st;
    uint32_t rid = 0, nid = 0;
    int rc = 0;

    if (t->oom)
        return -ENOMEM;
    t->an->nops++;
    if (in->rendezvous != NULL) {
        if ((rc = name_id(t, in->rendezvous, in->rendezvous_len, &rid)) != 0)
            return rc;
        if (idmap_set(&t->channel, (int64_t)in->channel_id, rid) != 0) {
            t->oom = 1;
            return -ENOMEM;
        }
    } else {
        rid = idmap_get(&t->channel, (int64_t)in->channel_id);
        if (rid == IDMAP_NONE) {
            t->an->nno_rendezvous++;
            return 0; /* no send / recv of this channel seen yet */
        }
    }
    if ((st = state_of(t, rid)) == NULL)
        return -ENOMEM;
    st->stall_ns += dur_ns;
    switch (in->opcode) {
    case DCN_SEND:
        st->start_ns = ts_ns;
        st->transfer = 0;
        if (in->transfer_type != NULL &&
            (rc = name_id(t, in->transfer_type, in->transfer_type_len, &st->transfer)) != 0)
            return rc;
        st->overlap_base = t->total_dur_ns;
        st->stall_ns = dur_ns;
        if ((rc = name_id(t, name, strlen(name), &st->send_name)) != 0)
            return rc;
        st->send = (struct dcn_instance){ts_ps, dur_ps};
        if (!st->group_known) {
            st->group_size = group_size != NULL ? group_size(group_ctx) : 0;
            st->group_known = 1;
        }
        break;
    case DCN_RECV:
        st->recv = (struct dcn_instance){ts_ps, dur_ps};
        break;
    case DCN_SEND_DONE:
        st->send_done = (struct dcn_instance){ts_ps, dur_ps};
        break;
    case DCN_RECV_DONE:
        st->recv_done = (struct dcn_instance){ts_ps, dur_ps};
        if (st->start_ns != 0) {
            if ((rc = name_id(t, name, strlen(name), &nid)) != 0 ||
                (rc = add_slack(t, st, rid, in, nid, ts_ns, ts_ns + dur_ns)) != 0)
                return rc;
        }
        break;
    default:
        break; /* XProf logs "unexpected op" and goes on */
    }
    t->total_dur_ns += dur_ns;
    return 0;
}

static const char *copy(struct dcn_analysis *an, const char *s, int *oom)
{
    char *c = arena_strndup(&an->arena, s, strlen(s));

    if (c == NULL) {
        *oom = 1;
        return "";
    }
    return c;
}

int dcn_tracker_finish(struct dcn_tracker *t)
{
    struct dcn_analysis *an = t->an;
    uint32_t r;
    int oom = t->oom;

    for (r = 0; r < an->nrows && !oom; r++) {
        struct dcn_summary *s = &an->rows[r];
        uint32_t rid = t->row_rids[r];
        const struct dcn_state *st = &t->states[rid - 1];
        double occ = (double)st->s_occ;

        s->rendezvous = copy(an, t->names.text[rid], &oom);
        s->transfer_type = copy(an, t->names.text[st->s_transfer], &oom);
        s->recv_op_name = copy(an, t->names.text[st->s_recv_name], &oom);
        s->send_op_name = copy(an, t->names.text[st->s_send_name], &oom);
        s->occurrences = st->s_occ;
        s->bytes_transmitted = st->s_bytes;
        s->slack_us = u64_of(safe_div((double)st->s_slack, occ));
        s->stall_duration_us = u64_of(safe_div((double)st->s_stall, occ));
        s->observed_duration_us = u64_of(safe_div((double)st->s_observed, occ));
        s->send_done_duration_us = u64_of(safe_div((double)st->s_send_done, occ));
        s->recv_done_duration_us = u64_of(safe_div((double)st->s_recv_done, occ));
        s->send_duration_us = u64_of(safe_div((double)st->s_send, occ));
        s->recv_duration_us = u64_of(safe_div((double)st->s_recv, occ));
        s->host_stall_us = 0;
        s->host_events_count = 0;
    }
    return oom ? -ENOMEM : 0;
}

int dcn_analysis_combine(const struct dcn_analysis *const *hosts, uint32_t n,
                         struct dcn_analysis *out)
{
    struct intern names;
    uint32_t h, r, id;
    int oom = 0;

    if (intern_init(&names) != 0)
        return -ENOMEM;
    for (h = 0; h < n && !oom; h++) {
        for (r = 0; r < hosts[h]->nrows && !oom; r++) {
            const struct dcn_summary *in = &hosts[h]->rows[r];
            struct dcn_summary *s;
            uint64_t k = in->occurrences;
            if (intern_add(&names, in->rendezvous, strlen(in->rendezvous), &id) != 0) {
                oom = 1;
                break;
            }
            while (out->nrows < id) {
                if (xp_grow((void **)&out->rows, &out->rows_cap, out->nrows, sizeof(*out->rows)) !=
                    0) {
                    oom = 1;
                    break;
                }
                memset(&out->rows[out->nrows++], 0, sizeof(*out->rows));
            }
            if (oom)
                break;
            s = &out->rows[id - 1];
            s->slack_us += in->slack_us * k;
            s->observed_duration_us += in->observed_duration_us * k;
            s->stall_duration_us += in->stall_duration_us * k;
            s->send_done_duration_us += in->send_done_duration_us * k;
            s->recv_done_duration_us += in->recv_done_duration_us * k;
            s->send_duration_us += in->send_duration_us * k;
            s->recv_duration_us += in->recv_duration_us * k;
            s->host_stall_us =
                (int64_t)((uint64_t)s->host_stall_us + (uint64_t)in->host_stall_us * k);
            s->occurrences += k;
            s->bytes_transmitted = in->bytes_transmitted;
            s->recv_op_name = in->recv_op_name;
            s->send_op_name = in->send_op_name;
            s->transfer_type = in->transfer_type;
            s->host_events_count += in->host_events_count * k;
        }
    }
    for (r = 0; r < out->nrows && !oom; r++) {
        struct dcn_summary *s = &out->rows[r];
        double occ = (double)s->occurrences;
        s->rendezvous = copy(out, names.text[r + 1], &oom);
        s->recv_op_name = copy(out, s->recv_op_name, &oom);
        s->send_op_name = copy(out, s->send_op_name, &oom);
        s->transfer_type = copy(out, s->transfer_type, &oom);
        s->slack_us = u64_of(safe_div((double)s->slack_us, occ));
        s->observed_duration_us = u64_of(safe_div((double)s->observed_duration_us, occ));
        s->stall_duration_us = u64_of(safe_div((double)s->stall_duration_us, occ));
        s->send_done_duration_us = u64_of(safe_div((double)s->send_done_duration_us, occ));
        s->recv_done_duration_us = u64_of(safe_div((double)s->recv_done_duration_us, occ));
        s->send_duration_us = u64_of(safe_div((double)s->send_duration_us, occ));
        s->recv_duration_us = u64_of(safe_div((double)s->recv_duration_us, occ));
        /* an int64 field: SafeDivide's double truncated toward zero */
        {
            double hs = safe_div((double)s->host_stall_us, occ);
            s->host_stall_us = hs >= 9.2e18 ? INT64_MAX : hs <= -9.2e18 ? INT64_MIN : (int64_t)hs;
        }
    }
    intern_free(&names);
    return oom ? -ENOMEM : 0;
}

/* DcnCollectiveInfoProto: endpoint_groups = 2 (EndpointGroup.endpoints =
 * 1), one_to_one_groups = 3. */
int dcn_group_size_of_info(const uint8_t *p, size_t n)
{
    struct wire w, g;
    uint32_t field;
    int type, first = 1, one_to_one = 0, endpoints = 0;

    wire_init(&w, p, n);
    while (!wire_eof(&w)) {
        if (wire_key(&w, &field, &type) != 0)
            return 0;
        if (field == 3 && type == WIRE_LEN) {
            if (wire_bytes(&w, &g) != 0)
                return 0;
            one_to_one = 1;
        } else if (field == 2 && type == WIRE_LEN) {
            if (wire_bytes(&w, &g) != 0)
                return 0;
            if (first) {
                uint32_t f2;
                int t2;
                first = 0;
                while (!wire_eof(&g)) {
                    if (wire_key(&g, &f2, &t2) != 0)
                        return 0;
                    if (f2 == 1 && endpoints < INT32_MAX)
                        endpoints++;
                    if (wire_skip(&g, t2) != 0)
                        return 0;
                }
            }
        } else if (wire_skip(&w, type) != 0) {
            return 0;
        }
    }
    if (one_to_one)
        return 1;
    return endpoints;
}
