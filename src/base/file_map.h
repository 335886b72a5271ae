/*
 * file_map.h - a whole file mapped read-only, guarded against being cut
 * short while mapped.
 *
 * Mapping a profile costs no copy and no fresh memory: its pages are the
 * page cache's (on a virtual machine, the first touch of fresh memory costs
 * more than reading the file). But a file truncated while mapped raises
 * SIGBUS at the next read of a lost page. So every mapping is registered,
 * and a SIGBUS handler (put in place by every mapping if something replaced
 * it, and passing faults elsewhere on to the handler it replaced) puts zero
 * pages over the lost part: the reader sees zeros, which the decoders
 * reject as corrupt data, and file_map_cut tells what happened. The process
 * never dies of it.
 */
#ifndef XPROFS_FILE_MAP_H
#define XPROFS_FILE_MAP_H

#include <stddef.h>
#include <stdint.h>

/* Map the size bytes (from fstat) of the open file fd. Returns 0 and
 * *bufp, or -EAGAIN when it cannot be mapped (a file system without mmap,
 * no address space, every guard slot in use): read it instead. */
int file_map(int fd, size_t size, const uint8_t **bufp);

/* 1 if the file was cut short under the mapping at buf since file_map. */
int file_map_cut(const uint8_t *buf);

/* Let go of the pages of bytes [off, off + len) of the mapping at buf
 * (whole pages inside the range): they leave the process's resident memory
 * but stay in the page cache, and come back on the next read. */
void file_map_release(const uint8_t *buf, size_t off, size_t len);

/* Unmap what file_map mapped at buf (size as given to it). */
void file_unmap(const uint8_t *buf, size_t size);

#endif
