/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bundled page (ui-proxy/static/), embedded at build time by
 * embed.sh into a generated assets_data.c, and the content types of the
 * files the proxy serves as a website.
 */
#ifndef UI_ASSETS_H
#define UI_ASSETS_H

#include <stddef.h>

struct ui_asset {
    const char *name;          /* file name in ui-proxy/static/ */
    const unsigned char *data; /* its bytes */
    size_t len;                /* their number */
};

/* Defined in the generated assets_data.c. */
extern const struct ui_asset ui_assets[];
extern const size_t ui_n_assets;

/* Returns the embedded file called name, or NULL. */
const struct ui_asset *ui_asset_find(const char *name);

/* Returns the content type for a file name, by its extension. */
const char *ui_mime_type(const char *name);

#endif
