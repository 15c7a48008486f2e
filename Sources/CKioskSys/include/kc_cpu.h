// SPDX-License-Identifier: Apache-2.0
#ifndef KC_CPU_H
#define KC_CPU_H
// The CPUs this process may run on, for the frame kernels' thread team (ParallelRows).

/// CPU_COUNT of sched_getaffinity(0, ...) (a _GNU_SOURCE interface: the CPUs a systemd
/// CPUAffinity= or a container leaves this process), or sysconf(_SC_NPROCESSORS_ONLN) when that
/// fails; at least 1.
int kc_available_cpus(void);

#endif
