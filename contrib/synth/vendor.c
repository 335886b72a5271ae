/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Vendor tables. The AMD values copy the MI300X planes of the corpus
 * (jax08_*_rocm: device caps, "Stream #N(Kernel)", ".kd" kernels, Tensile
 * "Cijk_..." gemms, " grid:... private_mem:..." details); the NVIDIA values
 * follow the CUPTI spellings of tf_gpu_multiworker ("Stream #N(Compute)",
 * "MemcpyH2D", "regs:... grid:... block:...") on H100-class numbers.
 */
#include "vendor.h"

#include <string.h>

static const struct vendor vendors[] = {
    {
        .key = "amd",
        .device_vendor = "AMD",
        .clock_rate_khz = 2100000,
        .core_count = 304,
        .memory_bandwidth = 2662400000000ULL,
        .memory_size = 206141652992ULL,
        .cc_major = 9,
        .cc_minor = 4,
        .compute_stream = "Kernel",
        .kernel_suffix = ".kd",
        .launch_fusion = "hipModuleLaunchKernel",
        .launch_gemm = "hipExtModuleLaunchKernel",
        .launch_coll = "hipLaunchKernel",
        .memcpy_h2d_api = "hipMemcpyHtoDAsync",
        .memcpy_d2h_api = "hipMemcpyDtoHAsync",
        .memcpy_h2d_dev = "CopyHostToDevice",
        .memcpy_d2h_dev = "CopyDeviceToHost",
        .coll_kernel = "ncclKernel_AllReduce_RING_LL_Sum_bf16(ncclDevComm*, unsigned long, "
                       "ncclWork*)",
    },
    {
        .key = "nvidia",
        .device_vendor = "Nvidia",
        .clock_rate_khz = 1980000,
        .core_count = 132,
        .memory_bandwidth = 3352320000000ULL,
        .memory_size = 85520809984ULL,
        .cc_major = 9,
        .cc_minor = 0,
        .compute_stream = "Compute",
        .kernel_suffix = "",
        .launch_fusion = "cuLaunchKernel",
        .launch_gemm = "cudaLaunchKernel",
        .launch_coll = "cudaLaunchKernelExC",
        .memcpy_h2d_api = "cuMemcpyHtoDAsync_v2",
        .memcpy_d2h_api = "cuMemcpyDtoHAsync_v2",
        .memcpy_h2d_dev = "MemcpyH2D",
        .memcpy_d2h_dev = "MemcpyD2H",
        .coll_kernel = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    },
};

/* Tile shapes of the generated gemm kernels (macro tile M x N x K). */
static const struct gemm_tile {
    int m, n, k;
} tiles[] = {
    {256, 128, 64}, {128, 128, 64}, {256, 224, 64}, {128, 32, 64},
    {256, 128, 32}, {256, 240, 64}, {64, 256, 64},  {128, 256, 32},
};

/* Transposition codes of the Tensile names: NN, NT, TN for fwd, dgrad, wgrad. */
static const char *const amd_layout[] = {"Ailk_Bljk", "Ailk_Bjlk", "Alik_Bljk"};
static const char *const nv_layout[] = {"nn", "nt", "tn"};

const struct vendor *vendor_find(const char *key)
{
    size_t i;

    for (i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
        if (strcmp(vendors[i].key, key) == 0)
            return &vendors[i];
    return NULL;
}

int vendor_n_gemm_kernels(void)
{
    return (int)(sizeof(tiles) / sizeof(tiles[0])) * 3;
}

/* A Tensile (hipBLASLt) kernel name in the corpus' spelling, with its ".kd". */
static const char *amd_gemm(struct pool *p, const struct gemm_tile *t, int layout)
{
    return pool_printf(
        p,
        "Cijk_%s_BBS_BH_MT%dx%dx%d_MI16x16x16x1_SN_1LDSB%d_APM1_ABV0_ACED0_AF0EM1_AF1EM1_"
        "AMAS3_ASE_ASGT_ASLT_ASM_ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_CLR1_DTLA0_DTLB0_DTVA1_"
        "DTVB0_DVO0_ETSP_EPS1_ELFLR0_EMLL0_FSSC10_FL0_GLVWA2_GLVWB%d_GRCGA1_GRCGB1_GRPM1_"
        "GRVWn1_GSU1_GSUASB_GLS0_ISA942_IU1_K1_KLA_LBSPPA0_LBSPPB%d_LPA0_LPB4_LDL1_LRVW4_"
        "LWPMn1_LDW0_FMA_MIAV0_MDA2_MO40_MMFSC_MKFGSU256_NTA0_NTB0_NTC0_NTD0_NEPBS0_NLCA1_"
        "NLCB1_ONLL1_OPLV0_PK0_PAP0_PGR2_PLR1_PKA0_SIA3_SLW1_SS1_SU0_SUM0_SUS0_SCIUI1_SPO0_"
        "SRVW0_SSO0_SVW4_SNLL0_TSGRA0_TSGRB0_TT4_%d_TLDS1_UMLDSA0_UMLDSB1_U64SL1_USFGROn1_"
        "VAW1_VSn1_VW4_VWB1_VFLRP1_WSGRA0_WSGRB0_WS64_WG64_4_1_WGM%d.kd",
        amd_layout[layout], t->m, t->n, t->k, t->k == 32 ? 1 : 0, t->n >= 224 ? 2 : 4, t->m, t->n,
        t->m == 256 ? 16 : 8);
}

/* A cuBLAS/cuBLASLt sm90 kernel name. */
static const char *nv_gemm(struct pool *p, const struct gemm_tile *t, int layout)
{
    return pool_printf(p,
                       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_%s_n_tilesize%dx%dx%d_"
                       "warpgroupsize%dx1x1_execute_segment_k_off_kernel__5x_cublas",
                       nv_layout[layout], t->m, t->n, t->k, t->m == 256 ? 2 : 1);
}

const char *vendor_gemm_kernel(const struct vendor *v, struct pool *p, int i)
{
    int n_tiles = (int)(sizeof(tiles) / sizeof(tiles[0]));
    const struct gemm_tile *t = &tiles[i % n_tiles];
    int layout = (i / n_tiles) % 3;

    if (strcmp(v->key, "amd") == 0)
        return amd_gemm(p, t, layout);
    return nv_gemm(p, t, layout);
}

const char *vendor_kernel_details(const struct vendor *v, struct pool *p, int grid, int block,
                                  int shared)
{
    if (strcmp(v->key, "amd") == 0)
        return pool_printf(p, " grid:%d,1,1 block:%d,1,1 private_mem:0 group_mem:%d occ_pct:0",
                           grid, block, shared);
    return pool_printf(p,
                       "regs:%d static_shared:0 dynamic_shared:%d grid:%d,1,1 block:%d,1,1 "
                       "occ_pct:%d",
                       shared > 0 ? 168 : 32, shared, grid, block, shared > 0 ? 12 : 100);
}

const char *vendor_memcpy_details(const struct vendor *v, struct pool *p, int64_t bytes, int dest)
{
    if (strcmp(v->key, "amd") == 0)
        return pool_printf(p, "kind:Unknown size:%lld dest:%d async:1", (long long)bytes, dest);
    return pool_printf(p, "size:%lld dest:%d async:1", (long long)bytes, dest);
}
