/*
 * agent_session.h - which run an agent command reads, found as XProf's
 * LocalXprofClient finds it (get_run_dir, get_xspace_paths).
 */
#ifndef XPROFS_AGENT_SESSION_H
#define XPROFS_AGENT_SESSION_H

#include <stddef.h>

/* The run directory of session (a run directory, a log directory: its
 * latest run, a file: its directory, or with logdir a run name) into
 * *run_dir (malloc'd). 0, or AGENT_E_PATH / AGENT_E_VALUE with msg. */
int agent_resolve_run(const char *session, const char *logdir, char **run_dir, char *msg, size_t n);

/* The *.xplane.pb and *.xspace.pb files under dir (recursive, sorted):
 * *paths (free each and the array) and *n. 0 or -ENOMEM. */
int agent_find_traces(const char *dir, char ***paths, int *n);

/* XProf's check of a path-like argument: 0 when path exists and, being a
 * directory, holds a trace; else AGENT_E_PATH with XProf's message. */
int agent_check_path(const char *path, char *msg, size_t n);

/* path with a leading ~ expanded (malloc'd). */
char *agent_expand_user(const char *path);

#endif
