/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs-synth: writes synthetic XProf profiles
 * (LOGDIR/plugins/profile/<run>/<host>.xplane.pb[.gz]) shaped like a
 * jax.profiler.trace of a GPU training loop. Command line parsing and the
 * loop over hosts.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learner_plan.h"
#include "profile.h"
#include "sink.h"
#include "inference.h"
#include "steps4.h"
#include "tpu.h"
#include "tpu_counters.h"
#include "synth.h"

#define MB 1000000.0

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xprofs-synth [--out LOGDIR] [--run NAME] [--size-mb N | --steps N]\n"
            "                    [--seed S] [--hosts H] [--gpus G] [--gz]\n"
            "                    [--vendor amd|nvidia]\n"
            "                    [--scenario "
            "train|steps4|compare|tpu|tpu_sc|tpu_raw|tpu_sc_raw|tpu_dcn|\n"
            "                     inference]\n"
            "                    [--slow-region NAME:US] [--drop-op HLO] [--slow-op HLO:F]\n"
            "                    [--cold-first-step US]\n"
            "                    [--plan FILE]\n"
            "                    [--counters v6e|v7x [--counter-samples N] [--counter-width W]]\n"
            "                    [--alloc-events N]\n"
            "\n"
            "Writes LOGDIR/plugins/profile/NAME/synth-host-<i>.xplane.pb, one XSpace per\n"
            "host, shaped like a jax.profiler.trace of a GPU training loop.\n"
            "\n"
            "  --out LOGDIR     log directory (default synth-logdir)\n"
            "  --run NAME       run directory (default 2025_01_01_00_00_00)\n"
            "  --size-mb N      about N MB (10^6 bytes, uncompressed) per host file\n"
            "  --steps N        number of training steps (default 10)\n"
            "  --seed S         PRNG seed, same seed = same bytes (default 1)\n"
            "  --hosts H        number of host files (default 1, at most %d)\n"
            "  --gpus G         GPU planes per host (default 2, at most %d)\n"
            "  --gz             write .xplane.pb.gz (gzip level 1)\n"
            "  --vendor V       amd (ROCm names, default) or nvidia (CUDA names)\n"
            "  --scenario S     train (default), steps4, compare, tpu, tpu_sc, tpu_raw,\n"
            "                   tpu_sc_raw, tpu_dcn or inference (small fixed profiles; tpu_sc:\n"
            "                   tpu with two SparseCores; *_raw: without group_id stats;\n"
            "                   tpu_dcn: tpu with Megascale DCN collectives; tpu, tpu_raw\n"
            "                   and tpu_dcn grow with --steps or --size-mb; compare: steps4's\n"
            "                   shape with --steps steps and seeded jitter)\n"
            "  --slow-region NAME:US  compare: region NAME (input_wait, model_and_wait) US\n"
            "                   microseconds longer in every step\n"
            "  --drop-op HLO    compare: the kernel of HLO op HLO never runs\n"
            "  --slow-op HLO:F  compare: the kernel of HLO op HLO F times longer\n"
            "  --cold-first-step US  compare: the first step's input_wait US longer (a warm-up)\n"
            "  --plan FILE      steps4, compare: write every step's times as JSON to FILE\n"
            "  --counters CHIP  tpu scenarios: TPU v6e or v7x counter samples on each core\n"
            "  --counter-samples N  sample lines per core (default 2, at most 10^6)\n"
            "  --counter-width W    counters per sample (default: the chip's whole table)\n"
            "  --alloc-events N train: N allocator events on /host:CPU (line \"allocator\")\n",
            SYNTH_MAX_HOSTS, SYNTH_MAX_GPUS);
}

/* Parses a whole decimal integer in [lo, hi]; 0 or -1 after printing a message. */
static int parse_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "xprofs-synth: bad value '%s' for %s (want an integer in %lld..%lld)\n", s,
                opt, (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses a seed: any unsigned 64-bit decimal or 0x-prefixed number. */
static int parse_seed(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-') {
        fprintf(stderr, "xprofs-synth: bad value '%s' for --seed\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses the MB target: a positive number up to 10^6. */
static int parse_size(const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v > 0) || v > 1e6) {
        fprintf(stderr, "xprofs-synth: bad value '%s' for --size-mb (want 0 < N <= 1000000)\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Rejects run names that would leave the profile directory. */
static int check_run(const char *run)
{
    if (run[0] == '\0' || strchr(run, '/') != NULL || strcmp(run, ".") == 0 ||
        strcmp(run, "..") == 0) {
        fprintf(stderr, "xprofs-synth: bad run name '%s'\n", run);
        return -1;
    }
    return 0;
}

enum {
    O_OUT = 1,
    O_RUN,
    O_SIZE,
    O_STEPS,
    O_SEED,
    O_HOSTS,
    O_GPUS,
    O_GZ,
    O_VENDOR,
    O_SCENARIO,
    O_SLOW_REGION,
    O_DROP_OP,
    O_SLOW_OP,
    O_COLD_FIRST,
    O_PLAN,
    O_COUNTERS,
    O_COUNTER_SAMPLES,
    O_COUNTER_WIDTH,
    O_ALLOC_EVENTS,
    O_HELP
};

static const struct option long_opts[] = {
    {"drop-op", required_argument, NULL, O_DROP_OP},
    {"cold-first-step", required_argument, NULL, O_COLD_FIRST},
    {"gpus", required_argument, NULL, O_GPUS},
    {"gz", no_argument, NULL, O_GZ},
    {"help", no_argument, NULL, O_HELP},
    {"hosts", required_argument, NULL, O_HOSTS},
    {"out", required_argument, NULL, O_OUT},
    {"plan", required_argument, NULL, O_PLAN},
    {"counters", required_argument, NULL, O_COUNTERS},
    {"counter-samples", required_argument, NULL, O_COUNTER_SAMPLES},
    {"counter-width", required_argument, NULL, O_COUNTER_WIDTH},
    {"alloc-events", required_argument, NULL, O_ALLOC_EVENTS},
    {"run", required_argument, NULL, O_RUN},
    {"scenario", required_argument, NULL, O_SCENARIO},
    {"seed", required_argument, NULL, O_SEED},
    {"size-mb", required_argument, NULL, O_SIZE},
    {"slow-op", required_argument, NULL, O_SLOW_OP},
    {"slow-region", required_argument, NULL, O_SLOW_REGION},
    {"steps", required_argument, NULL, O_STEPS},
    {"vendor", required_argument, NULL, O_VENDOR},
    {NULL, 0, NULL, 0},
};

/* Splits "NAME:N" into *name (arg, cut at the colon) and N in [lo, hi];
 * 0 or -1 after printing a message. */
static int parse_named_int(const char *opt, char *arg, int64_t lo, int64_t hi, const char **name,
                           int64_t *n)
{
    char *colon = strrchr(arg, ':');

    if (colon == NULL || colon == arg) {
        fprintf(stderr, "xprofs-synth: bad value '%s' for %s (want NAME:N)\n", arg, opt);
        return -1;
    }
    *colon = '\0';
    *name = arg;
    return parse_int(opt, colon + 1, lo, hi, n);
}

/* Applies one option; returns 0, 1 (help printed) or -1 (error printed). */
static int apply_opt(struct synth_opts *o, int c, char *arg, int *given)
{
    int64_t v;

    switch (c) {
    case O_OUT:
        o->out_dir = arg;
        return 0;
    case O_RUN:
        o->run = arg;
        return check_run(arg);
    case O_SIZE:
        return parse_size(arg, &o->size_mb);
    case O_STEPS:
        *given |= 1;
        /* 10^7 steps of ~50 ms keep offsets far below 2^63 ps */
        return parse_int("--steps", arg, 1, 10000000, &o->n_steps);
    case O_SEED:
        return parse_seed(arg, &o->seed);
    case O_HOSTS:
        if (parse_int("--hosts", arg, 1, SYNTH_MAX_HOSTS, &v) != 0)
            return -1;
        o->n_hosts = (int)v;
        return 0;
    case O_GPUS:
        *given |= 2;
        if (parse_int("--gpus", arg, 1, SYNTH_MAX_GPUS, &v) != 0)
            return -1;
        o->n_gpus = (int)v;
        return 0;
    case O_GZ:
        o->gzip = 1;
        return 0;
    case O_VENDOR:
        o->vendor = vendor_find(arg);
        if (o->vendor != NULL)
            return 0;
        fprintf(stderr, "xprofs-synth: unknown vendor '%s' (amd, nvidia)\n", arg);
        return -1;
    case O_SCENARIO:
        if (strcmp(arg, "train") == 0 || strcmp(arg, "steps4") == 0 ||
            strcmp(arg, "compare") == 0 || strncmp(arg, "tpu", 3) == 0 ||
            strcmp(arg, "inference") == 0) {
            o->compare = strcmp(arg, "compare") == 0;
            o->steps4 = o->compare || strcmp(arg, "steps4") == 0;
            o->tpu_sc = strcmp(arg, "tpu_sc") == 0 || strcmp(arg, "tpu_sc_raw") == 0;
            o->tpu_raw = strcmp(arg, "tpu_raw") == 0 || strcmp(arg, "tpu_sc_raw") == 0;
            o->tpu_dcn = strcmp(arg, "tpu_dcn") == 0;
            o->tpu = o->tpu_sc || o->tpu_raw || o->tpu_dcn || strcmp(arg, "tpu") == 0;
            o->inference = strcmp(arg, "inference") == 0;
            if (strncmp(arg, "tpu", 3) != 0 || o->tpu)
                return 0;
        }
        fprintf(
            stderr,
            "xprofs-synth: unknown scenario '%s' (train, steps4, compare, tpu, tpu_sc, tpu_raw, "
            "tpu_sc_raw, tpu_dcn, inference)\n",
            arg);
        return -1;
    case O_SLOW_REGION:
        *given |= 4;
        return parse_named_int("--slow-region", arg, 1, 1000000, &o->slow_region,
                               &o->slow_region_us);
    case O_DROP_OP:
        *given |= 4;
        o->drop_op = arg;
        return 0;
    case O_SLOW_OP:
        *given |= 4;
        return parse_named_int("--slow-op", arg, 1, 100, &o->slow_op, &o->slow_op_factor);
    case O_COLD_FIRST:
        *given |= 4;
        return parse_int("--cold-first-step", arg, 1, 100000000, &o->cold_first_us);
    case O_PLAN:
        o->plan_path = arg;
        return 0;
    case O_COUNTERS:
        o->counters = tpu_counters_chip(arg);
        if (o->counters >= 0)
            return 0;
        fprintf(stderr, "xprofs-synth: unknown counter chip '%s' (v6e, v7x)\n", arg);
        return -1;
    case O_COUNTER_SAMPLES:
        *given |= 8;
        return parse_int("--counter-samples", arg, 1, 1000000, &o->counter_samples);
    case O_ALLOC_EVENTS:
        *given |= 16;
        return parse_int("--alloc-events", arg, 1, 100000000, &o->alloc_events);
    case O_COUNTER_WIDTH:
        *given |= 8;
        return parse_int("--counter-width", arg, 1, 100000, &o->counter_width);
    case O_HELP:
        usage(stdout);
        return 1;
    default:
        usage(stderr);
        return -1;
    }
}

/* Fills o from argv; returns 0, 1 (help printed) or -1 (error printed). */
static int parse_args(int argc, char **argv, struct synth_opts *o)
{
    int c, rc, given = 0;

    memset(o, 0, sizeof(*o));
    o->out_dir = "synth-logdir";
    o->run = "2025_01_01_00_00_00";
    o->seed = 1;
    o->n_hosts = 1;
    o->n_gpus = 2;
    o->n_steps = 10;
    o->vendor = vendor_find("amd");
    o->counters = -1;
    o->counter_samples = 2;
    opterr = 1;
    while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
        rc = apply_opt(o, c, optarg, &given);
        if (rc != 0)
            return rc;
    }
    if (optind < argc) {
        fprintf(stderr, "xprofs-synth: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (o->size_mb > 0 && (given & 1)) {
        fprintf(stderr, "xprofs-synth: --size-mb and --steps exclude each other\n");
        return -1;
    }
    if (o->steps4 && !o->compare && (o->size_mb > 0 || given != 0)) {
        fprintf(stderr, "xprofs-synth: --scenario steps4 has fixed steps and one GPU\n");
        return -1;
    }
    if (o->compare && (o->size_mb > 0 || (given & 2))) {
        fprintf(stderr, "xprofs-synth: --scenario compare takes --steps and one GPU\n");
        return -1;
    }
    if ((given & 4) && !o->compare) {
        fprintf(stderr, "xprofs-synth: --slow-region, --drop-op, --slow-op and "
                        "--cold-first-step need --scenario compare\n");
        return -1;
    }
    if (o->plan_path != NULL && !o->steps4) {
        fprintf(stderr, "xprofs-synth: --plan needs --scenario steps4 or compare\n");
        return -1;
    }
    if (o->tpu_sc && (o->size_mb > 0 || given != 0)) {
        fprintf(stderr, "xprofs-synth: --scenario tpu_sc has fixed steps and two TPU cores\n");
        return -1;
    }
    if (o->counters >= 0 && !o->tpu) {
        fprintf(stderr, "xprofs-synth: --counters needs a tpu scenario\n");
        return -1;
    }
    if ((given & 8) && o->counters < 0) {
        fprintf(stderr, "xprofs-synth: --counter-samples and --counter-width need --counters\n");
        return -1;
    }
    given &= ~8;
    if ((given & 16) && (o->tpu || o->steps4 || o->inference)) {
        fprintf(stderr, "xprofs-synth: --alloc-events needs the train scenario\n");
        return -1;
    }
    given &= ~16;
    if (o->tpu && (given & 2)) {
        fprintf(stderr, "xprofs-synth: --scenario tpu has two TPU cores\n");
        return -1;
    }
    o->tpu_grown = o->tpu && (o->size_mb > 0 || (given & 1));
    if (o->inference && (o->size_mb > 0 || given != 0)) {
        fprintf(stderr, "xprofs-synth: --scenario inference has fixed requests and TPU cores\n");
        return -1;
    }
    if (o->steps4)
        o->n_gpus = 1;
    return 0;
}

/* Writes host h's file into dir; 0 or a negative errno. */
static int write_host(struct synth *sy, const char *dir, int h, int64_t n_steps)
{
    const struct synth_opts *o = sy->opt;
    struct sink sink;
    uint64_t bytes = 0;
    char *path;
    int rc, crc;

    synth_set_host(sy, h);
    if (asprintf(&path, "%s/%s.xplane.pb%s", dir, sy->hostname, o->gzip ? ".gz" : "") < 0) {
        fprintf(stderr, "xprofs-synth: out of memory\n");
        return -ENOMEM;
    }
    rc = sink_open(&sink, path, o->gzip);
    if (rc != 0)
        goto out;
    if (o->inference) {
        rc = inference_write(sy, h, &sink);
    } else if (o->tpu) {
        rc = tpu_write(sy, h, &sink, o->tpu_grown ? n_steps : 0);
    } else if (o->steps4) {
        rc = steps4_write(sy, h, &sink);
    } else {
        sy->s_begin = 0;
        sy->s_end = n_steps;
        rc = profile_write(sy, &sink, &bytes);
    }
    bytes = sink.bytes;
    crc = sink_close(&sink, rc);
    if (rc == 0)
        rc = crc;
    if (rc == 0)
        printf("%s\t%llu bytes%s\n", path, (unsigned long long)bytes,
               o->gzip ? " before compression" : "");
out:
    free(path);
    return rc;
}

/* Creates the run directory and writes every host; 0 or a negative errno. */
static int run(struct synth *sy)
{
    const struct synth_opts *o = sy->opt;
    int64_t n_steps = o->n_steps;
    char *dir;
    int h, rc;

    if (asprintf(&dir, "%s/plugins/profile/%s", o->out_dir, o->run) < 0) {
        fprintf(stderr, "xprofs-synth: out of memory\n");
        return -ENOMEM;
    }
    rc = sink_mkdirs(dir);
    if (rc == 0 && o->tpu && o->size_mb > 0) {
        rc = tpu_choose_steps(sy, (uint64_t)(o->size_mb * MB), &n_steps);
    } else if (rc == 0 && !o->steps4 && o->size_mb > 0) {
        synth_set_host(sy, 0);
        rc = profile_choose_steps(sy, (uint64_t)(o->size_mb * MB), &n_steps);
    }
    for (h = 0; h < o->n_hosts && rc == 0; h++)
        rc = write_host(sy, dir, h, n_steps);
    free(dir);
    if (rc == 0 && o->plan_path != NULL) {
        struct learner_plan lp;
        rc = learner_plan_build(&lp, o, &sy->prog);
        if (rc == 0)
            rc = learner_plan_write_json(&lp, o, &sy->prog, o->plan_path);
        learner_plan_release(&lp);
    }
    return rc;
}

int main(int argc, char **argv)
{
    struct synth_opts opts;
    struct synth sy;
    int rc;

    rc = parse_args(argc, argv, &opts);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (synth_init(&sy, &opts) != 0)
        return 1;
    rc = run(&sy);
    synth_release(&sy);
    if (fflush(stdout) != 0) {
        perror("xprofs-synth: stdout");
        return 1;
    }
    return rc == 0 ? 0 : 1;
}
