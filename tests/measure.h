/* measure.h — runs one checker call in a forked child and reports its
 * verdict, wall and CPU time and the child's peak resident memory, so a
 * test can bound what one hostile answer costs (docs/limits.md: under 2 s and
 * 256 MB per check) without the attack touching the test process. */
#ifndef VAT_TEST_MEASURE_H
#define VAT_TEST_MEASURE_H

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vat.h"

/* Under AddressSanitizer, freed blocks wait in a quarantine of 256 MiB
 * before reuse, which a check that allocates and frees a lot (a string
 * grown by realloc) fills: the RSS would measure ASan, not the checker.
 * A smaller quarantine still catches use after free of recent blocks. */
const char *__asan_default_options(void);
__attribute__((used)) const char *__asan_default_options(void)
{
    return "quarantine_size_mb=16";
}

struct measured {
    char code[32];
    char reason[256];
    bool gate;
    double score;
    double wall, cpu; /* seconds */
    long rss_mib;     /* peak resident set of the child */
    int status;       /* waitpid status; 0 when it exited cleanly */
};

static inline struct measured measure_verdict(struct vat_verdict (*fn)(const void *),
                                              const void *arg, double wall_cap_s)
{
    struct measured m;
    memset(&m, 0, sizeof m);
    int fd[2];
    if (pipe(fd) != 0) {
        m.status = -1;
        return m;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        /* A runaway check is killed rather than left to hang the suite. */
        alarm((unsigned)wall_cap_s + 1);
        struct vat_verdict v = fn(arg);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        char line[512];
        int n = snprintf(line, sizeof line, "%d %.17g %.6f %ld %.31s\n%s", v.gate_passed ? 1 : 0,
                         v.score, cpu, ru.ru_maxrss / 1024, v.code, v.reason);
        if (write(fd[1], line, (size_t)n) != n)
            _exit(3);
        _exit(0);
    }
    close(fd[1]);
    char buf[512] = {0};
    size_t got = 0;
    ssize_t k;
    while (got < sizeof buf - 1 && (k = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)k;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    m.status = st;
    m.wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    int gate = 0;
    /* CPU and peak RSS are the child's own, read by it after the check
     * (the fork's copy of the parent counts only as far as it is touched). */
    if (sscanf(buf, "%d %lf %lf %ld %31s", &gate, &m.score, &m.cpu, &m.rss_mib, m.code) != 5)
        snprintf(m.code, sizeof m.code, "(no verdict)");
    m.gate = gate != 0;
    const char *nl = strchr(buf, '\n');
    if (nl)
        snprintf(m.reason, sizeof m.reason, "%s", nl + 1);
    return m;
}

#endif
