/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One JSON line per request on stderr, in the shape XProf's server logs:
 * {"httpRequest": {"requestMethod", "requestUrl", "status", "latency"}}.
 */
#ifndef UI_ACCESS_LOG_H
#define UI_ACCESS_LOG_H

/* Writes the line; seconds is the request's latency. Never fails loudly. */
void ui_access_log(const char *method, const char *url, unsigned int status, double seconds);

#endif
