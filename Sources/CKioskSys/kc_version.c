// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include "kc_version.h"
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

// The VERSION file's bytes, NUL terminated.
#ifdef __has_embed
#if __has_embed("../../VERSION")
#define KC_VERSION_EMBEDDED 1
#endif
#endif
#ifdef KC_VERSION_EMBEDDED
static const char version_file[] = {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc23-extensions"
#embed "../../VERSION"
#pragma clang diagnostic pop
    , 0
};
#else
// Package.swift defines KC_VERSION_MANIFEST from the same file (clang before 19 has no #embed:
// Swift 6.0's clang 17).
static const char version_file[] = KC_VERSION_MANIFEST;
#endif

const char *kc_version(void) {
    return version_file;
}

struct kc_library_search {
    const char *prefix;
    const char *found;
};

static int kc_library_visit(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct kc_library_search *search = data;
    const char *path = info->dlpi_name;
    if (path == NULL || path[0] == 0) return 0;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (strncmp(name, search->prefix, strlen(search->prefix)) != 0) return 0;
    search->found = path;
    return 1;
}

int kc_loaded_library(const char *prefix, char *out, size_t capacity) {
    if (capacity == 0) return 0;
    struct kc_library_search search = { prefix, NULL };
    dl_iterate_phdr(kc_library_visit, &search);
    if (search.found == NULL) return 0;
    char resolved[PATH_MAX];
    const char *path = realpath(search.found, resolved) ? resolved : search.found;
    strncpy(out, path, capacity - 1);
    out[capacity - 1] = 0;
    return 1;
}
