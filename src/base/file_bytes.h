/*
 * file_bytes.h - a whole file read into memory: Chrome-trace JSON, and an
 * xplane under XS_MAP_FROM bytes or one that cannot be mapped (file_map.h).
 *
 * The copy sits on huge pages (bigalloc.h). Pieces are read by every core
 * at once, since the first touch of fresh memory costs as much as the copy
 * there.
 */
#ifndef XPROFS_FILE_BYTES_H
#define XPROFS_FILE_BYTES_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Read the size bytes (from fstat) of the open file fd, named path in
 * messages, into *bufp (big_malloc'd: release with big_free). A file that
 * shrank while being read keeps the bytes up to the first gap: *lenp may be
 * less than size, even 0. Returns 0, or -ENOMEM / -errno of the failed read
 * with err. */
int file_read_all(const char *path, int fd, size_t size, uint8_t **bufp, size_t *lenp,
                  struct xp_err *err);

#endif
