/*
 * op_stats_env.c - run environment, peak performance (PerfEnv), diagnostics
 * and performance counters of one host.
 *
 * Ports of SetRunEnvironment / GetPerfEnvFromXPlane and MakePerfEnvForTpu
 * (xprof/convert/xplane_to_op_stats.cc), GetDeviceCaps
 * (xprof/utils/device_caps_utils.cc) and the NVIDIA / AMD tables of
 * xprof/utils/{cuda,rocm}_type_utils.cc.
 */
#include "op_stats_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct device_caps {
    double clock_ghz;          /* clock_rate (kHz) / 1e6 */
    uint64_t num_cores;        /* core_count */
    uint64_t memory_bandwidth; /* bytes/s */
    int major, minor;          /* compute capability */
    char vendor[64];           /* device_vendor */
    char device_name[64];      /* gpu_device_name */
};

static void stat_str(const struct xp_stat *st, char *buf, size_t n)
{
    size_t len = 0;

    if (st->kind == XP_STAT_STR || st->kind == XP_STAT_REF)
        len = st->len < n - 1 ? st->len : n - 1;
    memcpy(buf, st->str ? st->str : "", len);
    buf[len] = '\0';
}

static void get_caps(const struct xp_plane *pl, struct device_caps *c)
{
    uint32_t i;

    memset(c, 0, sizeof(*c));
    for (i = 0; i < pl->nstats; i++) {
        const struct xp_stat *st = &pl->stats[i];
        const char *name = xp_stat_name(pl, st);
        if (strcmp(name, "clock_rate") == 0)
            c->clock_ghz = (double)(uint64_t)xp_stat_int(st) / 1000000.0;
        else if (strcmp(name, "core_count") == 0)
            c->num_cores = (uint64_t)xp_stat_int(st);
        else if (strcmp(name, "memory_bandwidth") == 0)
            c->memory_bandwidth = (uint64_t)xp_stat_int(st);
        else if (strcmp(name, "compute_cap_major") == 0)
            c->major = (int)xp_stat_int(st);
        else if (strcmp(name, "compute_cap_minor") == 0)
            c->minor = (int)xp_stat_int(st);
        else if (strcmp(name, "device_vendor") == 0)
            stat_str(st, c->vendor, sizeof(c->vendor));
        else if (strcmp(name, "gpu_device_name") == 0)
            stat_str(st, c->device_name, sizeof(c->device_name));
    }
}

static double plane_double(const struct xp_plane *pl, const char *name)
{
    uint32_t i;

    for (i = 0; i < pl->nstats; i++) {
        if (strcmp(xp_stat_name(pl, &pl->stats[i]), name) == 0)
            return xp_stat_double(&pl->stats[i]);
    }
    return 0.0;
}

/* The AMD gfx version: gpu_device_name when well formed, else from the
 * compute capability. */
static const char *amd_gfx(const struct device_caps *c)
{
    const char *s = c->device_name;
    size_t i, n = strlen(s);

    if (n >= 6 && strncmp(s, "gfx", 3) == 0) {
        for (i = 3; i < n && isxdigit((unsigned char)s[i]); i++)
            ;
        if (i == n)
            return s;
    }
    if (c->major == 9 && c->minor == 4)
        return "gfx942";
    if (c->major == 9 && c->minor == 5)
        return "gfx950";
    return "";
}

/* Per CU per cycle: max(vector fp32, vector fp16, matrix fp32, matrix fp16)
 * and LDS bytes. */
static void amd_table(const char *gfx, double *flops, double *lds)
{
    *flops = 0;
    *lds = 0;
    if (strcmp(gfx, "gfx908") == 0 || strcmp(gfx, "gfx90a") == 0) {
        *flops = 1024;
        *lds = 128;
    } else if (strcmp(gfx, "gfx942") == 0) {
        *flops = 2048;
        *lds = 128;
    } else if (strcmp(gfx, "gfx950") == 0) {
        *flops = 4096;
        *lds = 256;
    }
}

/* Per SM per cycle, largest table entry <= the capability (else the oldest). */
static double nvidia_flops(int major, int minor)
{
    static const struct {
        int cc;
        double flops; /* max of cuda/tensor fp32/fp16 */
    } table[] = {
        {2000, 64},   {3000, 384},  {5000, 256},  {6000, 256},  {6010, 256},  {7000, 1024},
        {7050, 1024}, {8000, 2048}, {8060, 1024}, {8090, 1024}, {9000, 4096}, {10000, 8192},
    };
    int cc = major * 1000 + minor * 10, i;
    double best = table[0].flops;

    for (i = 0; i < (int)(sizeof(table) / sizeof(table[0])); i++) {
        if (table[i].cc <= cc)
            best = table[i].flops;
    }
    return best;
}

static const char *gpu_model_name(const struct device_caps *c, char *buf, size_t n)
{
    if (strcmp(c->vendor, "Nvidia") == 0) {
        switch (c->major) {
        case 2:
            return "Nvidia GPU (Fermi)";
        case 3:
            return "Nvidia GPU (Kepler)";
        case 5:
            return "Nvidia GPU (Maxwell)";
        case 6:
            return "Nvidia GPU (Pascal)";
        case 7:
            return c->minor < 5 ? "Nvidia GPU (Volta)" : "Nvidia GPU (Turing)";
        case 8:
            return c->minor < 9 ? "Nvidia GPU (Ampere)" : "Nvidia GPU (Ada Lovelace)";
        case 9:
            return "Nvidia GPU (Hopper)";
        case 10:
            return "Nvidia GPU (Blackwell)";
        default:
            return "Nvidia GPU";
        }
    }
    if (strcmp(c->vendor, "AMD") == 0) {
        const char *gfx = amd_gfx(c);
        if (gfx[0] != '\0') {
            snprintf(buf, n, "AMD GPU - %s", gfx);
            return buf;
        }
        switch (c->major) {
        case 9:
            return "AMD GPU - gfx-9XX series";
        case 10:
            return "AMD GPU - gfx-10XX series";
        case 11:
            return "AMD GPU - gfx-11XX series";
        default:
            return "AMD GPU";
        }
    }
    return "";
}

/* GetPerfEnvFromXPlane for a GPU plane. */
static void perf_env_gpu(const struct xp_plane *pl, struct op_stats *os)
{
    struct device_caps c;
    double per_core_gflops = 0, shm_per_core = 0, shm, rd, wr;

    get_caps(pl, &c);
    if (strcmp(c.vendor, "Nvidia") == 0) {
        per_core_gflops = c.clock_ghz * nvidia_flops(c.major, c.minor);
        shm_per_core = (c.major <= 2 ? 64.0 : 256.0) * c.clock_ghz * 1e9;
    } else if (strcmp(c.vendor, "AMD") == 0) {
        double flops, lds;
        amd_table(amd_gfx(&c), &flops, &lds);
        per_core_gflops = c.clock_ghz * flops;
        shm_per_core = lds > 0 ? lds * c.clock_ghz * 1e9 : 0;
    }
    os->peak_tflops = plane_double(pl, "peak_teraflops_per_second");
    if (os->peak_tflops <= 0.0)
        os->peak_tflops = (double)c.num_cores * (per_core_gflops / 1e3);
    shm = (double)c.num_cores * (shm_per_core / 1e9);
    rd = plane_double(pl, "peak_sram_rd_bw_gigabytes_per_second");
    wr = plane_double(pl, "peak_sram_wr_bw_gigabytes_per_second");
    os->peak_bws[0] = (double)c.memory_bandwidth / 1e9;
    os->peak_bws[1] = rd > 0.0 ? rd : shm;
    os->peak_bws[2] = wr > 0.0 ? wr : shm;
    os->npeak_bws = 3;
    os->ridge_point = os->peak_tflops * 1e3 / os->peak_bws[0];
}

/* A bool plane stat (BoolValue reads int64_value: an int stat != 0); 0 when
 * absent or of another kind. */
static int plane_bool(const struct xp_plane *pl, const char *name)
{
    uint32_t i;

    for (i = 0; i < pl->nstats; i++) {
        const struct xp_stat *st = &pl->stats[i];
        if (strcmp(xp_stat_name(pl, st), name) == 0)
            return st->kind == XP_STAT_INT && st->v.i != 0;
    }
    return 0;
}

/* GetPerfEnvFromXPlane for a TPU plane: every value from the plane stats
 * libtpu writes (0 when absent), seven bandwidths (MakePerfEnvForTpu). */
static void perf_env_tpu(const struct xp_plane *pl, struct op_stats *os)
{
    static const char *const bw_stats[7] = {
        "peak_hbm_bw_gigabytes_per_second",     "peak_sram_rd_bw_gigabytes_per_second",
        "peak_sram_wr_bw_gigabytes_per_second", "peak_cmem_rd_bw_gigabytes_per_second",
        "peak_cmem_wr_bw_gigabytes_per_second", "peak_vmem_rd_bw_gigabytes_per_second",
        "peak_vmem_wr_bw_gigabytes_per_second"};
    uint32_t i;

    os->peak_tflops = plane_double(pl, "peak_teraflops_per_second");
    for (i = 0; i < 7; i++)
        os->peak_bws[i] = plane_double(pl, bw_stats[i]);
    os->npeak_bws = 7;
    os->ridge_point = os->peak_tflops * 1e3 / os->peak_bws[0];
    os->has_cmem = os->peak_bws[3] > 0 || os->peak_bws[4] > 0;
    os->has_merged_vmem = plane_bool(pl, "has_merged_vmem");
    os->has_megacore = plane_bool(pl, "has_megacore");
}

int op_stats_add_string(struct op_stats *os, const char ***v, uint32_t *n, const char *s, int dedup)
{
    const char **nv;
    char *c;
    uint32_t i;

    for (i = 0; dedup && i < *n; i++) {
        if (strcmp((*v)[i], s) == 0)
            return 0;
    }
    nv = arena_alloc(&os->arena, (*n + 1) * sizeof(*nv));
    c = arena_strndup(&os->arena, s, strlen(s));
    if (nv == NULL || c == NULL)
        return -ENOMEM;
    if (*n > 0)
        memcpy(nv, *v, *n * sizeof(*nv));
    nv[(*n)++] = c;
    *v = nv;
    return 0;
}

int op_stats_env(struct host_ctx *ctx)
{
    const struct xspace *xs = ctx->xs;
    struct op_stats *os = ctx->os;
    const struct xp_plane *first_gpu = NULL, *first_tpu = NULL;
    uint32_t p, ngpu = 0, ntpu = 0, i;
    char buf[128];
    int rc;

    os->host_count = 1;
    os->task_count = 1;
    if ((rc = op_stats_add_string(os, &os->hostnames, &os->nhostnames,
                                  xs->nhostnames > 0 ? xs->hostnames[0] : "localhost", 1)) != 0)
        return rc;
    for (p = 0; p < xs->nplanes; p++) {
        const char *name = xs->planes[p].name;
        if (strncmp(name, "/device:GPU:", 12) == 0) {
            if (first_gpu == NULL)
                first_gpu = &xs->planes[p];
            ngpu++;
        } else if (strncmp(name, "/device:TPU:", 12) == 0 && strstr(name, "SparseCore") == NULL) {
            if (first_tpu == NULL)
                first_tpu = &xs->planes[p];
            ntpu++;
        }
    }
    if (ngpu > 0) {
        struct device_caps c;
        const char *model;
        get_caps(first_gpu, &c);
        model = gpu_model_name(&c, buf, sizeof(buf));
        os->device_type =
            arena_strndup(&os->arena, model[0] ? model : "GPU", strlen(model[0] ? model : "GPU"));
        os->device_core_count = (int32_t)ngpu;
        os->hardware_type = HW_GPU;
        perf_env_gpu(first_gpu, os);
    } else if (ntpu > 0) {
        struct xp_stat st;
        os->device_type = "";
        if (xp_plane_stat(first_tpu, XS_DEVICE_TYPE_STRING, &st) &&
            (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF))
            os->device_type = arena_strndup(&os->arena, st.str, st.len);
        os->device_core_count = (int32_t)ntpu;
        os->hardware_type = HW_TPU;
        perf_env_tpu(first_tpu, os);
    } else {
        os->device_type = "CPU";
        os->device_core_count = 0;
        os->hardware_type = HW_CPU_ONLY;
    }
    if (os->device_type == NULL)
        return -ENOMEM;
    os->is_training = ctx->hlo != NULL && ctx->hlo->is_training;
    for (i = 0; i < xs->nerrors; i++) {
        if ((rc = op_stats_add_string(os, &os->errors, &os->nerrors, xs->errors[i], 1)) != 0)
            return rc;
    }
    for (p = 0; p < xs->nplanes; p++) {
        if (strcmp(xs->planes[p].name, "/host:CPU") == 0) {
            os->mxu_utilization_percent =
                plane_double(&xs->planes[p], "matrix_unit_utilization_percent");
            os->hbm_utilization_percent = plane_double(&xs->planes[p], "hbm_utilization_percent");
            break;
        }
    }
    return 0;
}
