// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include "kc_cpu.h"
#include <sched.h>
#include <unistd.h>

int kc_available_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
