/*
 * pt_launchers.h - TraceLens's kernel launchers of a PyTorch trace
 * (TreePerf/tree_perf.py get_kernel_launchers with its defaults, then
 * get_df_kernel_launchers, get_df_kernel_launchers_summary and
 * get_df_kernel_launchers_summary_by_category), served as
 * kernel_launchers.csv, kernel_launchers_summary.csv and
 * kernel_launchers_summary_by_category.csv.
 *
 * Each GPU event that a runtime launch reaches (pt_tree.h), except
 * communication kernels (nccl / rccl / cross_device_reduce in the name), is
 * a direct kernel of its launcher: the nearest cpu_op above the launch,
 * passing python_function nodes and cpu_ops named "execute"; the launch
 * itself when there is none. Per launcher: total_direct_kernel_time = busy
 * time (interval union) of its direct kernels, total_subtree_kernel_time =
 * busy time of every GPU event under it, the op category (pt_op_category),
 * the GPU events on other streams overlapping its kernels by 1 µs or more,
 * its Input Dims / Input type / Input Strides / Concrete Inputs args, and
 * the process / thread names of its (pid, tid). Rows are in launcher start
 * order. Summaries group by name / op category with pandas' arithmetic.
 */
#ifndef XPROFS_PT_LAUNCHERS_H
#define XPROFS_PT_LAUNCHERS_H

#include "base/err.h"
#include "out/out.h"
#include "session/session.h"

/* 1 when the hosts of hl are a PyTorch run's (its first host has a PyTorch
 * trace), so the pt_* writers below serve them. */
int pt_launchers_serves(const struct host_list *hl);

/* The three files of the hosts of hl. Return 0 or a negative errno with err
 * set (-ENOENT when no GPU kernel is launched). */
int pt_kernel_launchers_csv(const struct host_list *hl, struct out *o, struct xp_err *err);
int pt_kernel_launchers_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err);
int pt_kernel_launchers_by_category_csv(const struct host_list *hl, struct out *o,
                                        struct xp_err *err);

/* TraceLens's categorize_torch_op for an op name and the name of its first
 * kernel (by start; NULL if none): a static string (pt_opcat.c). */
const char *pt_op_category(const char *name, const char *first_kernel);

#endif
