/*
 * hlo_kernel_metadata.h - XProf's ExtractXprofKernelMetadata
 * (xprof/utils/xla_op_utils.cc): the "xprof_metadata" member of the JSON in
 * the kernel_metadata frontend attribute of an HLO expression, as
 * nlohmann's dump() writes it; op_profile's xla.xprofKernelMetadata.
 */
#ifndef XPROFS_HLO_KERNEL_METADATA_H
#define XPROFS_HLO_KERNEL_METADATA_H

#include <stddef.h>

/* JSON nesting followed, at most (deeper documents count as invalid). */
#define HLO_KMETA_MAX_DEPTH 512

/* The kernel metadata of expression s[0..n) (an instruction as XLA prints
 * it): *out gets a malloc'ed NUL-terminated string, or NULL for XProf's ""
 * (no "xprof_metadata" in s, no kernel_metadata frontend attribute, JSON
 * that does not parse, or no "xprof_metadata" member). Returns 0 or
 * -ENOMEM. */
int hlo_kernel_metadata(const char *s, size_t n, char **out);

#endif
