// SPDX-License-Identifier: Apache-2.0
// Thread names; see include/kc_thread.h.
#define _GNU_SOURCE
#include "kc_thread.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

int kc_thread_set_name(const char *name) {
    char cut[16];
    strncpy(cut, name, sizeof cut - 1);
    cut[sizeof cut - 1] = '\0';
    return pthread_setname_np(pthread_self(), cut);
}

int kc_thread_id(void) { return (int)gettid(); }
