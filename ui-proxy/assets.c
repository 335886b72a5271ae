/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Looking up embedded files and content types (assets.h). The types
 * follow XProf's static_file_route (html, css, js, wasm; the rest
 * application/octet-stream) plus a few a frontend directory may hold.
 */
#include <string.h>

#include "assets.h"

static const struct {
    const char *ext;  /* extension with its dot */
    const char *type; /* Content-Type sent */
} mime_types[] = {
    {".css", "text/css"},
    {".html", "text/html"},
    {".ico", "image/x-icon"},
    {".js", "application/javascript"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".mjs", "application/javascript"},
    {".png", "image/png"},
    {".svg", "image/svg+xml"},
    {".txt", "text/plain"},
    {".wasm", "application/wasm"},
};

const struct ui_asset *ui_asset_find(const char *name)
{
    size_t i;

    for (i = 0; i < ui_n_assets; i++)
        if (strcmp(ui_assets[i].name, name) == 0)
            return &ui_assets[i];
    return NULL;
}

const char *ui_mime_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    size_t i;

    if (!dot || strchr(dot, '/'))
        return "application/octet-stream";
    for (i = 0; i < sizeof(mime_types) / sizeof(mime_types[0]); i++)
        if (strcmp(dot, mime_types[i].ext) == 0)
            return mime_types[i].type;
    return "application/octet-stream";
}
