// SPDX-License-Identifier: Apache-2.0
#ifndef KC_THREAD_H
#define KC_THREAD_H
// Thread names and ids for WorkerThread: pthread_setname_np(3) and gettid(2) are GNU
// extensions (_GNU_SOURCE), which Swift's Glibc module does not declare.

/// Names the calling thread (`/proc/self/task/TID/comm`, ps, top, gdb): at most 15 bytes are
/// kept (TASK_COMM_LEN is 16 with the NUL); longer names are cut. Returns 0 or an errno value.
int kc_thread_set_name(const char *name);

/// The calling thread's kernel thread id (gettid(2)): its `/proc/self/task/TID`.
int kc_thread_id(void);

#endif
