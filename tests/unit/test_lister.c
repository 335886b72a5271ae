/*
 * test_lister.c - the store's lister (src/remote/lister.c): a job done
 * again only when asked and older than max_age_ms, and askers that wait
 * for a hanging job no longer than wait_ms from when it began.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <unistd.h>

#include "remote/lister.h"

struct job {
    int runs;    /* runs made (atomic) */
    int hang_ms; /* each run takes this long */
};

static void job_run(void *arg)
{
    struct job *j = arg;

    if (j->hang_ms > 0)
        usleep((useconds_t)j->hang_ms * 1000);
    __atomic_add_fetch(&j->runs, 1, __ATOMIC_RELAXED);
}

static void test_runs_only_when_old_and_asked(void **state)
{
    struct job j = {0, 0};
    struct lister l;

    (void)state;
    assert_int_equal(lister_start(&l, job_run, &j, 200, 1000, lister_now_ms()), 0);
    /* Fresh: no run. */
    assert_int_equal(lister_ask(&l), 1);
    assert_int_equal(lister_ask(&l), 1);
    usleep(300 * 1000);
    assert_int_equal(__atomic_load_n(&j.runs, __ATOMIC_RELAXED), 0); /* nobody asked */
    /* Old: one run, waited for; the asks right after it make none. */
    assert_int_equal(lister_ask(&l), 1);
    assert_int_equal(lister_ask(&l), 1);
    assert_int_equal(__atomic_load_n(&j.runs, __ATOMIC_RELAXED), 1);
    lister_stop(&l);
}

static void test_a_hanging_job_holds_askers_briefly(void **state)
{
    struct job j = {0, 1500};
    struct lister l;
    int64_t t0;

    (void)state;
    assert_int_equal(lister_start(&l, job_run, &j, 100, 300, lister_now_ms() - 1000), 0);
    t0 = lister_now_ms();
    assert_int_equal(lister_ask(&l), 0); /* not done within wait_ms */
    assert_in_range(lister_now_ms() - t0, 250, 700);
    /* The run under way began over wait_ms ago: the next asker waits not at all. */
    t0 = lister_now_ms();
    assert_int_equal(lister_ask(&l), 0);
    assert_in_range(lister_now_ms() - t0, 0, 100);
    usleep(1400 * 1000);
    assert_int_equal(__atomic_load_n(&j.runs, __ATOMIC_RELAXED), 1);
    /* Old again: a new run; stopping waits for it to end. */
    t0 = lister_now_ms();
    assert_int_equal(lister_ask(&l), 0);
    lister_stop(&l);
    assert_true(lister_now_ms() - t0 >= 1400);
    assert_int_equal(__atomic_load_n(&j.runs, __ATOMIC_RELAXED), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_only_when_old_and_asked),
        cmocka_unit_test(test_a_hanging_job_holds_askers_briefly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
