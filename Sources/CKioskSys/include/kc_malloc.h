// SPDX-License-Identifier: Apache-2.0
#ifndef KC_MALLOC_H
#define KC_MALLOC_H
#include <stddef.h>
// glibc's allocator settings (mallopt(3)), which Swift's Glibc module does not export.

/// mallopt(M_MMAP_THRESHOLD, bytes): blocks of at least `bytes` are mapped on their own and
/// unmapped when freed. Setting it also turns off glibc's dynamic threshold, which otherwise
/// rises to the size of each mapped block freed (up to 32 MiB on 64-bit) and then serves frames
/// from the heaps of the threads that made them, where freed ones stay resident. Returns 1 on
/// success, 0 on error (mallopt's convention).
int kc_malloc_set_mmap_threshold(size_t bytes);
#endif
