// SPDX-License-Identifier: Apache-2.0
#include "kc_malloc.h"
#include <limits.h>
#include <malloc.h>

int kc_malloc_set_mmap_threshold(size_t bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes > INT_MAX ? INT_MAX : (int)bytes);
}
