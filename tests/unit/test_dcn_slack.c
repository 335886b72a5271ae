/*
 * test_dcn_slack.c - the DCN slack tracker (src/op_stats/dcn_slack.c) op by
 * op: the slack of interleaved collectives (every op's duration counted as
 * overlap), stalls, the done ops found by channel, a recv-done before any
 * send, an op of an unseen channel, XProf's truncations (the recv duration
 * divided once more by 1e6), the transmitted bytes of each transfer type,
 * the replica group size of DcnCollectiveInfoProto bytes (good, empty and
 * truncated) and the combiner's weighted averages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "op_stats/dcn_slack.h"

#define US 1000000ULL /* ps */

static int group4(const void *ctx)
{
    (void)ctx;
    return 4;
}

static int group2(const void *ctx)
{
    (void)ctx;
    return 2;
}

static struct dcn_instr instr(enum dcn_opcode op, uint64_t channel, const char *rdv,
                              const char *type, int64_t size)
{
    struct dcn_instr in = {op,  channel, rdv, rdv ? strlen(rdv) : 0, type, type ? strlen(type) : 0,
                           size};
    return in;
}

/* Visit at t_us for d_ps. */
static void visit(struct dcn_tracker *t, struct dcn_instr in, const char *name, uint64_t t_us,
                  uint64_t d_ps, dcn_group_size_fn g)
{
    assert_int_equal(dcn_tracker_visit(t, &in, name, t_us * US, t_us * 1000, d_ps, g, NULL), 0);
}

static const struct dcn_summary *row(const struct dcn_analysis *an, const char *rdv)
{
    uint32_t i;

    for (i = 0; i < an->nrows; i++) {
        if (strcmp(an->rows[i].rendezvous, rdv) == 0)
            return &an->rows[i];
    }
    fail_msg("no row %s", rdv);
    return NULL;
}

static void test_interleaved(void **state)
{
    struct dcn_analysis an;
    struct dcn_tracker t;
    const struct dcn_summary *a, *b;
    int step;

    (void)state;
    dcn_analysis_init(&an);
    assert_int_equal(dcn_tracker_init(&t, &an), 0);
    /* a recv-done of an unseen channel: dropped; one of a seen rendezvous
     * before its send: no slack */
    visit(&t, instr(DCN_RECV_DONE, 9, NULL, NULL, 8), "rd.x", 1, US, NULL);
    visit(&t, instr(DCN_RECV_DONE, 1, "A", NULL, 8), "rd.early", 2, US, NULL);
    for (step = 0; step < 2; step++) {
        uint64_t s = 100 + 1000 * (uint64_t)step;
        visit(&t, instr(DCN_SEND, 1, "A", "ALL_REDUCE", 0), "send.a", s, 2 * US, group4);
        visit(&t, instr(DCN_SEND, 2, "B", "ALL_GATHER", 0), "send.b", s + 3, US + US / 2, group2);
        visit(&t, instr(DCN_RECV, 1, "A", "ALL_REDUCE", 0), "recv.a", s + 5, 3 * US, NULL);
        visit(&t, instr(DCN_SEND_DONE, 1, NULL, NULL, 0), "sd.a", s + 9, 2 * US, NULL);
        /* slack A = 15 - (2 + 1.5 + 3 + 2) = 6.5 -> 6 us */
        visit(&t, instr(DCN_RECV_DONE, 1, NULL, NULL, 1000), "rd.a", s + 15, 4 * US + 999999, NULL);
        visit(&t, instr(DCN_RECV, 2, "B", NULL, 0), "recv.b", s + 21, US, NULL);
        visit(&t, instr(DCN_SEND_DONE, 2, NULL, NULL, 0), "sd.b", s + 23, US, NULL);
        /* slack B = 27 - 3 - (1.5 + 3 + 2 + 4.999999 + 1 + 1) -> 10.500001 -> 10 */
        visit(&t, instr(DCN_RECV_DONE, 2, NULL, NULL, 4096), "rd.b", s + 27, 3 * US, NULL);
    }
    assert_int_equal(dcn_tracker_finish(&t), 0);
    assert_int_equal(an.nrows, 2);
    assert_int_equal(an.nno_rendezvous, 1);
    a = row(&an, "A");
    b = row(&an, "B");
    assert_ptr_equal(a, &an.rows[0]); /* first completed first */
    assert_int_equal(a->occurrences, 2);
    assert_int_equal(a->slack_us, 6);
    /* stall: 2 + 3 + 2 + 4.999 (ns sums) = 11999 ns -> 11 us */
    assert_int_equal(a->stall_duration_us, 11);
    /* observed: recv-done end 119.999999 -> 119 us (ns truncation), start 100 */
    assert_int_equal(a->observed_duration_us, 19);
    assert_int_equal(a->send_duration_us, 2);
    assert_int_equal(a->recv_duration_us, 0); /* 3 us / 1e6 */
    assert_int_equal(a->send_done_duration_us, 2);
    assert_int_equal(a->recv_done_duration_us, 4);
    assert_int_equal(a->bytes_transmitted, 1500); /* 2 * 3/4 * 1000 */
    assert_string_equal(a->transfer_type, "ALL_REDUCE");
    assert_string_equal(a->send_op_name, "send.a");
    assert_string_equal(a->recv_op_name, "rd.a");
    assert_int_equal(b->slack_us, 10);
    assert_int_equal(b->bytes_transmitted, 2048); /* (2-1) * 4096 / 2 */
    /* stall B: 1.5 + 1 + 1 + 3 = 6.5 -> 6 */
    assert_int_equal(b->stall_duration_us, 6);
    assert_int_equal(b->send_duration_us, 1); /* 1.5 truncated */
    dcn_tracker_free(&t);
    dcn_analysis_free(&an);
}

static void test_bytes(void **state)
{
    int u;

    (void)state;
    assert_int_equal(dcn_transmitted_bytes(1000, 1, "ONE_TO_ONE", &u), 1000);
    assert_int_equal(dcn_transmitted_bytes(1000, 4, "ALL_TO_ALL", &u), 750);
    assert_int_equal(dcn_transmitted_bytes(1000, 4, "REDUCE_SCATTER", &u), 3000);
    assert_int_equal(dcn_transmitted_bytes(1000, 3, "ALL_GATHER", &u), 666);
    assert_int_equal(u, 0);
    assert_int_equal(dcn_transmitted_bytes(1000, 0, "ALL_GATHER", &u), 0);
    assert_int_equal(dcn_transmitted_bytes(1000, 4, "RAGGED_ALL_TO_ALL", &u), 0);
    assert_int_equal(u, 1);
    /* huge sizes wrap as XProf's int64 products do, without undefined
     * behaviour (UBSan aborts the sanitized build) */
    assert_true(dcn_transmitted_bytes(INT64_MAX, 4, "REDUCE_SCATTER", &u) == 0x7ffffffffffffffdULL);
    assert_true(dcn_transmitted_bytes(INT64_MAX, INT32_MAX, "ONE_TO_ONE", &u) ==
                (uint64_t)INT32_MAX * (uint64_t)INT64_MAX);
    assert_true(dcn_transmitted_bytes(INT64_MAX, 4, "ALL_GATHER", &u) > 0);
}

static void test_group_size(void **state)
{
    /* endpoint_groups { endpoints {1:0} endpoints {1:1} endpoints {1:2} } */
    static const uint8_t three[] = {0x08, 0x05, 0x12, 0x0c, 0x0a, 0x02, 0x08, 0x00,
                                    0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08, 0x02};
    /* one_to_one_groups {} after an endpoint group */
    static const uint8_t one[] = {0x12, 0x04, 0x0a, 0x02, 0x08, 0x00, 0x1a, 0x00};

    (void)state;
    assert_int_equal(dcn_group_size_of_info(three, sizeof(three)), 3);
    assert_int_equal(dcn_group_size_of_info(one, sizeof(one)), 1);
    assert_int_equal(dcn_group_size_of_info(NULL, 0), 0);
    assert_int_equal(dcn_group_size_of_info(three, sizeof(three) - 3), 0); /* truncated */
}

static void test_combine(void **state)
{
    struct dcn_analysis h0, h1, out;
    const struct dcn_analysis *hosts[2] = {&h0, &h1};
    struct dcn_summary r0 = {"A", "rd", "s", "ALL_GATHER", 10, 3, 100, 4, 20, 1, 0, 1, 2, 0, 0};
    struct dcn_summary r1 = {"A", "rd2", "s2", "ALL_GATHER", 7, 1, 200, 9, 30, 2, 0, 2, 3, 0, 0};
    struct dcn_summary r2 = {"B", "x", "y", "ONE_TO_ONE", 5, 2, 50, 1, 6, 0, 0, 0, 0, 0, 0};

    (void)state;
    dcn_analysis_init(&h0);
    dcn_analysis_init(&h1);
    dcn_analysis_init(&out);
    h0.rows = &r0;
    h0.nrows = 1;
    h1.rows = (struct dcn_summary[]){r2, r1};
    h1.nrows = 2;
    assert_int_equal(dcn_analysis_combine(hosts, 2, &out), 0);
    assert_int_equal(out.nrows, 2);
    assert_string_equal(out.rows[0].rendezvous, "A");
    assert_int_equal(out.rows[0].occurrences, 4);
    assert_int_equal(out.rows[0].slack_us, (10 * 3 + 7) / 4);
    assert_int_equal(out.rows[0].stall_duration_us, (4 * 3 + 9) / 4);
    assert_int_equal(out.rows[0].observed_duration_us, (20 * 3 + 30) / 4);
    assert_int_equal(out.rows[0].bytes_transmitted, 200); /* last wins */
    assert_string_equal(out.rows[0].recv_op_name, "rd2");
    assert_string_equal(out.rows[1].rendezvous, "B");
    assert_int_equal(out.rows[1].slack_us, 5);
    dcn_analysis_free(&out);
    h0.rows = NULL;
    h1.rows = NULL;
    dcn_analysis_free(&h0);
    dcn_analysis_free(&h1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaved),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_group_size),
        cmocka_unit_test(test_combine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
