/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The website part: every path that is not an API route is a file of the
 * frontend (--static DIR, or the bundled page), and an unknown path gets
 * index.html, as XProf's server answers (single-page app fallback).
 */
#ifndef UI_SITE_H
#define UI_SITE_H

#include "conf.h"
#include "reply.h"

/* Fills r for URL path (decoded, checked, starting with '/'). */
void ui_site_reply(const struct ui_conf *conf, const char *path, struct ui_reply *r);

#endif
