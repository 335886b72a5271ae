/*
 * ctrace.c - loading a Chrome-trace JSON file into the compact event model
 * of ctrace.h: reading the file (copied when plain, inflated when gzip),
 * the walk over its text (ctrace_events.c) and the metadata tables
 * (ctrace_meta.c); the args and top-level values parsed again on
 * demand.
 */
#include "ctrace_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/bigalloc.h"
#include "base/file_bytes.h"

#define CT_MAX_INFLATED ((size_t)32 << 30) /* decompression bomb guard */

/* ---- loading ------------------------------------------------------------- */

static int inflate_mem(const char *name, const unsigned char *data, size_t len, char **out,
                       size_t *outlen, struct xp_err *err)
{
    z_stream zs;
    size_t cap = len * 4 + 4096, n = 0;
    char *buf = big_malloc(cap);
    int zrc;

    if (buf == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", name);
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 15 + 32) != Z_OK) {
        big_free(buf);
        return xp_err_set(err, -ENOMEM, "%s: cannot start gzip reader", name);
    }
    zs.next_in = (unsigned char *)data;
    zs.avail_in = 0;
    for (;;) {
        size_t in_left = len - (size_t)((const unsigned char *)zs.next_in - data);
        if (zs.avail_in == 0)
            zs.avail_in = in_left > (1u << 30) ? (1u << 30) : (unsigned)in_left;
        if (n == cap) {
            size_t ncap = cap * 2;
            char *nb;
            if (ncap > CT_MAX_INFLATED) {
                inflateEnd(&zs);
                big_free(buf);
                return xp_err_set(err, -EIO, "%s: inflates to more than 32 GiB", name);
            }
            nb = big_realloc(buf, ncap);
            if (nb == NULL) {
                inflateEnd(&zs);
                big_free(buf);
                return xp_err_set(err, -ENOMEM, "%s: out of memory", name);
            }
            buf = nb;
            cap = ncap;
        }
        zs.next_out = (unsigned char *)buf + n;
        zs.avail_out = (cap - n) > (1u << 30) ? (1u << 30) : (unsigned)(cap - n);
        {
            unsigned before = zs.avail_out;
            zrc = inflate(&zs, Z_NO_FLUSH);
            n += before - zs.avail_out;
        }
        if (zrc == Z_STREAM_END) {
            /* Concatenated gzip members continue; anything else ends here. */
            in_left = len - (size_t)((const unsigned char *)zs.next_in - data);
            if (in_left >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
                inflateReset(&zs);
                continue;
            }
            break;
        }
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
            inflateEnd(&zs);
            big_free(buf);
            return xp_err_set(err, -EIO, "%s: bad gzip data: %s", name,
                              zs.msg ? zs.msg : "inflate failed");
        }
        if (zrc == Z_BUF_ERROR && zs.avail_in == 0 &&
            (size_t)((const unsigned char *)zs.next_in - data) >= len && zs.avail_out > 0) {
            inflateEnd(&zs);
            big_free(buf);
            return xp_err_set(err, -EIO, "%s: truncated gzip data", name);
        }
    }
    inflateEnd(&zs);
    *out = buf;
    *outlen = n;
    return 0;
}

static int finish_load(struct ctrace *ct, struct ctrace **ctp, struct xp_err *err)
{
    int rc;

    ct->strings = calloc(1, sizeof(*ct->strings));
    if (ct->strings == NULL || intern_init(ct->strings) != 0) {
        ctrace_free(ct);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    rc = ctr_read_document(ct, err);
    if (rc == 0) {
        rc = ctr_build_metadata(ct);
        if (rc != 0)
            xp_err_set(err, rc, "%s: out of memory", ct->path);
    }
    if (rc != 0) {
        ctrace_free(ct);
        return rc;
    }
    if (ct->nevents > 0) {
        /* Give back the unused tail of the events array. */
        struct ctrace_event *v = realloc(ct->events, (size_t)ct->nevents * sizeof(*v));
        if (v != NULL)
            ct->events = v;
    }
    *ctp = ct;
    return 0;
}

int ctrace_load_mem(const char *name, const void *data, size_t len, struct ctrace **ctp,
                    struct xp_err *err)
{
    struct ctrace *ct = calloc(1, sizeof(*ct));
    char *text = NULL;
    size_t text_len = 0;
    int rc;

    *ctp = NULL;
    if (ct == NULL || (ct->path = strdup(name)) == NULL) {
        free(ct);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    if (len >= 2 && ((const unsigned char *)data)[0] == 0x1f &&
        ((const unsigned char *)data)[1] == 0x8b) {
        rc = inflate_mem(name, data, len, &text, &text_len, err);
        if (rc != 0) {
            ctrace_free(ct);
            return rc;
        }
    } else {
        text = big_malloc(len ? len : 1);
        if (text == NULL) {
            ctrace_free(ct);
            return xp_err_set(err, -ENOMEM, "out of memory");
        }
        memcpy(text, data, len);
        text_len = len;
    }
    ct->text = text;
    ct->text_len = text_len;
    return finish_load(ct, ctp, err);
}

int ctrace_load(const char *path, struct ctrace **ctp, struct xp_err *err)
{
    struct ctrace *ct;
    struct stat st;
    uint8_t *data = NULL;
    size_t len = 0;
    int fd, rc;

    *ctp = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return xp_err_set(err, -errno, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        close(fd);
        return xp_err_set(err, rc, "%s: %s", path, strerror(-rc));
    }
    if (st.st_size == 0) {
        close(fd);
        return xp_err_set(err, -EIO, "%s: empty file", path);
    }
    /* Read, not mapped (file_map.h is for xplanes): most Chrome traces
     * are gzip, inflated into memory anyway. */
    rc = file_read_all(path, fd, (size_t)st.st_size, &data, &len, err);
    close(fd);
    if (rc != 0)
        return rc;
    if (len == 0) {
        big_free(data);
        return xp_err_set(err, -EIO, "%s: empty file", path);
    }
    if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        rc = ctrace_load_mem(path, data, len, ctp, err);
        big_free(data);
        return rc;
    }
    ct = calloc(1, sizeof(*ct));
    if (ct == NULL || (ct->path = strdup(path)) == NULL) {
        free(ct);
        big_free(data);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    ct->text = (const char *)data;
    ct->text_len = len;
    return finish_load(ct, ctp, err);
}

void ctrace_free(struct ctrace *ct)
{
    if (ct == NULL)
        return;
    big_free((void *)ct->text);
    free(ct->events);
    free(ct->processes);
    free(ct->threads);
    intern_free(ct->strings);
    free(ct->strings);
    free(ct->path);
    free(ct);
}

/* ---- args and top-level values ------------------------------------------ */

const char *ctrace_event_args_text(const struct ctrace *ct, const struct ctrace_event *ev,
                                   size_t *len)
{
    if (ev->args_len == 0) {
        *len = 0;
        return NULL;
    }
    *len = ev->args_len;
    return ct->text + ev->args_off;
}

cJSON *ctrace_event_args(const struct ctrace *ct, const struct ctrace_event *ev)
{
    if (ev->args_len == 0)
        return NULL;
    return cJSON_ParseWithLength(ct->text + ev->args_off, ev->args_len);
}

cJSON *ctrace_top_value(const struct ctrace *ct, const char *key)
{
    struct xp_err err;
    struct scan sc = {ct->text, ct->text_len, ct->top_off, ct->path, &err};

    if (ct->bare_array || sc.i >= sc.n || sc.s[sc.i] != '{')
        return NULL;
    sc.i++;
    for (;;) {
        size_t ka, kb, va;
        int esc;
        ctr_skip_ws(&sc);
        if (sc.i >= sc.n || sc.s[sc.i] != '"')
            return NULL;
        ka = sc.i;
        if (ctr_skip_string(&sc, &esc) != 0)
            return NULL;
        kb = sc.i;
        ctr_skip_ws(&sc);
        sc.i++;
        ctr_skip_ws(&sc);
        va = sc.i;
        if (ctr_json_skip(&sc) != 0)
            return NULL;
        if (!esc && ctr_key_is(&sc, ka, kb, key))
            return cJSON_ParseWithLength(sc.s + va, sc.i - va);
        ctr_skip_ws(&sc);
        if (sc.i >= sc.n || sc.s[sc.i] != ',')
            return NULL;
        sc.i++;
    }
}
