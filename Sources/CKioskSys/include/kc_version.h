// SPDX-License-Identifier: Apache-2.0
// kc_version.h: the program's version (the repository's top-level VERSION file, compiled in)
// and the files of the shared libraries the running process loaded.
#ifndef KC_VERSION_H
#define KC_VERSION_H
#include <stddef.h>

/// The top-level VERSION file's text, e.g. "0.2.0\n" (its first line is the version of
/// kiosk-carousel), embedded when this file is compiled (C23 #embed, so a change to VERSION rebuilds it; with a
/// compiler that lacks #embed, the copy Package.swift read). Static storage, never freed.
const char *kc_version(void);

/// Looks among the shared objects loaded into this process (dl_iterate_phdr(3)) for the first
/// whose file name (after the last '/') starts with `prefix`, e.g. "libpng16.so". Writes its
/// path, with symbolic links resolved (realpath(3)), into `out` (`capacity` bytes, NUL
/// terminated, cut if longer). Returns 1 when found, 0 when no loaded object matches.
int kc_loaded_library(const char *prefix, char *out, size_t capacity);

#endif
