/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding the runs of the mount: every directory that holds a tools.json
 * is a run, named by its path below the mount ("a/b/run"). Listing never
 * opens a tool file, so it never starts a conversion.
 */
#ifndef UI_RUNS_H
#define UI_RUNS_H

#include "strv.h"

/*
 * Collects into out the run names below the directory mountfd, sorted
 * descending as XProf's runs list is. Does not descend into a run's
 * hosts/ and raw/ folders, follows no symlink, stops at depth 16.
 * Returns 0 or a negative errno.
 */
int ui_runs_find(int mountfd, struct ui_strv *out);

#endif
