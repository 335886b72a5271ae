/*
 * version.h - the version every program prints for --version, and which
 * keys what xprofs produced (a new version computes its files anew).
 */
#ifndef XPROFS_VERSION_H
#define XPROFS_VERSION_H

#define XPROFS_VERSION "0.2.0"

#endif
