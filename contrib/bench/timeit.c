/*
 * timeit.c - the stopwatch of `make bench`: wall seconds and peak RSS of one
 * command.
 *
 *   xprofs-timeit CMD [ARG...]
 *
 * Runs CMD with its standard output sent to /dev/null and prints
 * "WALL_SECONDS PEAK_RSS_MB". The clock is read just before the fork and
 * just after the wait, so a row holds the command and its process start,
 * not the two `date` processes, `bc` and /usr/bin/time the shell would add
 * (10-15 ms on this VM, which flattered ratios of fast rows). Exits with
 * CMD's status: 128 + the signal when it was killed, 127 when it could not
 * be run.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

int main(int argc, char **argv)
{
    struct rusage ru;
    double start, wall;
    pid_t pid;
    int status, null;

    if (argc < 2) {
        fprintf(stderr, "usage: xprofs-timeit CMD [ARG...]\n");
        return 2;
    }
    null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0) {
        fprintf(stderr, "xprofs-timeit: /dev/null: %s\n", strerror(errno));
        return 127;
    }
    start = bench_now();
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "xprofs-timeit: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        if (dup2(null, STDOUT_FILENO) < 0)
            _exit(127);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "xprofs-timeit: %s: %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "xprofs-timeit: wait: %s\n", strerror(errno));
            return 127;
        }
    }
    wall = bench_now() - start;
    close(null);
    printf("%.4f %.0f\n", wall, (double)ru.ru_maxrss / 1024.0);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}
