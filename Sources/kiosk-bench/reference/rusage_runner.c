// SPDX-License-Identifier: Apache-2.0
/*
 * rusage_runner.c: kiosk-bench's launcher for the processes it measures.
 *
 * usage: rusage_runner REPORT PROGRAM ARGS...
 * Runs PROGRAM (searched in PATH) with this process's stdin, stdout and stderr, waits for it
 * with wait4() and writes "<wall ms> <ru_maxrss KiB> <exit status> <ru_minflt> <CPU ms>" to the
 * file REPORT (exit status 128 + N when killed by signal N; ru_minflt = minor page faults; CPU
 * ms = ru_utime + ru_stime, all threads).
 *
 * Why it exists: glibc's posix_spawn starts a child with CLONE_VM | CLONE_VFORK, and at execve
 * Linux folds the peak RSS of the mm the child leaves (the parent's) into the child's
 * ru_maxrss. Spawned straight from kiosk-bench (a Swift program of ~10 MiB), every child would
 * report at least ~10 MiB. Spawned from this small C program, the floor is its own ~1 MiB.
 * kiosk-bench compiles it at run time with `gcc -O2` and prints the floor it measures.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s REPORT PROGRAM ARGS...\n", argv[0]);
        return 64;
    }
    FILE *report = fopen(argv[1], "w");
    if (!report) { perror(argv[1]); return 73; }
    pid_t pid;
    double t0 = now_ms();
    int rc = posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ);
    if (rc != 0) {
        fprintf(stderr, "cannot start %s: errno %d\n", argv[2], rc);
        fprintf(report, "0 0 127 0 0\n");
        fclose(report);
        return 127;
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {}
    double wall = now_ms() - t0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
    double cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    fprintf(report, "%.3f %ld %d %ld %.3f\n", wall, ru.ru_maxrss, code, ru.ru_minflt, cpu);
    fclose(report);
    return 0;
}
