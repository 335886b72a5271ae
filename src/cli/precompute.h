/*
 * precompute.h - `xprofs precompute`: fill a persistent cache directory
 * with one host's (or one task's share of the hosts') files, for a batch
 * engine to run across machines (contrib/slurm, contrib/k8s).
 */
#ifndef XPROFS_PRECOMPUTE_H
#define XPROFS_PRECOMPUTE_H

#include <stddef.h>

/* argv[0] is "precompute"; cache_dir is --cache-dir's (required), cache_bytes
 * --cache-bytes' (0: unbounded). Returns the exit code. */
int cmd_precompute(int argc, char **argv, const char *cache_dir, size_t cache_bytes);

#endif
