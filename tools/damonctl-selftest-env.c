/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* damonctl selftest: the workload, the private instance, the probes, and their cleanup. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "varlink-client.h"
#include "damonctl-selftest.h"
#include "damonctl.h"
#include "workload-core.h"
#include "time-util.h"

#define WORKLOAD_HOT_MIB 4
#define WORKLOAD_COLD_MIB 32
#define WORKLOAD_PASSES_PER_SECOND 50
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
/* How long a child may take to say where its areas are. */
#define WORKLOAD_START_TIMEOUT_MS 10000
/* How long a child has to exit after SIGTERM before SIGKILL. */
#define STOP_GRACE_MS 10000

static bool is_executable(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int try_path(const char *dir, const char *name, char *ret, size_t size) {
        if ((size_t) snprintf(ret, size, "%s/%s", dir, name) >= size || !is_executable(ret))
                return -ENOENT;
        return 0;
}

int selftest_find_program(const char *name, const char *build_subdir, char *ret, size_t size) {
        char self[PATH_MAX], dir[PATH_MAX + 32];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        const char *path = getenv("PATH");
        _cleanup_free_ char *search = NULL;

        if (n > 0) {
                self[n] = '\0';
                snprintf(dir, sizeof(dir), "%s", dirname(self));
                if (try_path(dir, name, ret, size) == 0)
                        return 0;
                /* The build tree: tools/damonctl beside daemon/damon-perfd. */
                snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/../%s", build_subdir);
                if (try_path(dir, name, ret, size) == 0)
                        return 0;
        }
        if (asprintf(&search, "%s:/usr/local/sbin:/usr/sbin:/sbin", path && *path ? path : "/usr/local/bin:/usr/bin:/bin") < 0)
                return -ENOMEM;
        for (char *save = NULL, *d = strtok_r(search, ":", &save); d; d = strtok_r(NULL, ":", &save))
                if (*d && try_path(d, name, ret, size) == 0)
                        return 0;
        return -ENOENT;
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

static double now_sec(void) {
        return (double) dp_now_ns(CLOCK_MONOTONIC) / 1e9;
}

/* In a child: die with damonctl, keep its terminal signals off damonctl's handlers. */
static void child_setup(pid_t parent) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
                _exit(127);
}

static volatile sig_atomic_t inline_stop;

static void on_inline_signal(int sig) {
        (void) sig;
        inline_stop = 1;
}

static _Noreturn void run_inline_workload(double seconds) {
        struct workload_areas a = {
                .page = (size_t) sysconf(_SC_PAGESIZE),
                .hot_bytes = (size_t) WORKLOAD_HOT_MIB << 20,
                .cold_bytes = (size_t) WORKLOAD_COLD_MIB << 20,
        };

        signal(SIGTERM, on_inline_signal);
        signal(SIGINT, on_inline_signal);
        if (workload_map(&a) < 0 || workload_describe(stdout, &a) < 0)
                _exit(EXIT_FAILURE);
        workload_run(&a, seconds, WORKLOAD_PASSES_PER_SECOND, &inline_stop);
        _exit(EXIT_SUCCESS);
}

/* One line from @fd within @timeout_ms. */
static int read_line(int fd, char *buf, size_t size, int timeout_ms) {
        size_t used = 0;
        double deadline = now_sec() + timeout_ms / 1000.0;

        while (used + 1 < size) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int left = (int) ((deadline - now_sec()) * 1000);
                ssize_t n;

                if (left <= 0)
                        return -ETIMEDOUT;
                if (poll(&p, 1, left) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                n = read(fd, buf + used, 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EPIPE;
                if (buf[used] == '\n')
                        break;
                used++;
        }
        buf[used] = '\0';
        return 0;
}

static void stop_child(pid_t pid, int *ret_status) {
        int status = 0;

        if (pid <= 0)
                return;
        (void) kill(pid, SIGTERM);
        for (unsigned waited = 0;; waited += 50) {
                pid_t r = waitpid(pid, &status, WNOHANG);

                if (r == pid || (r < 0 && errno != EINTR))
                        break;
                if (waited >= STOP_GRACE_MS) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, &status, 0);
                        status = -1;
                        break;
                }
                sleep_ms(50);
        }
        if (ret_status)
                *ret_status = status < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int selftest_workload_start(struct selftest_env *e, const char *path, double seconds) {
        json_int_t pid = 0, hot_start = 0, hot_end = 0, cold_start = 0, cold_end = 0;
        pid_t parent = getpid();
        char line[512], secs[32];
        int pipefd[2], r;
        json_t *j;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        fflush(NULL);
        e->workload_pid = fork();
        if (e->workload_pid < 0) {
                r = -errno;
                close(pipefd[0]);
                close(pipefd[1]);
                e->workload_pid = 0;
                return r;
        }
        if (e->workload_pid == 0) {
                child_setup(parent);
                if (dup2(pipefd[1], STDOUT_FILENO) < 0)
                        _exit(126);
                if (!path)
                        run_inline_workload(seconds);
                snprintf(secs, sizeof(secs), "%.0f", seconds);
                execl(path, path, "--hot-mib", STRINGIFY(WORKLOAD_HOT_MIB), "--cold-mib",
                      STRINGIFY(WORKLOAD_COLD_MIB), "--rate", STRINGIFY(WORKLOAD_PASSES_PER_SECOND), "--seconds",
                      secs, (char *) NULL);
                _exit(127);
        }
        e->workload_inline = !path;
        close(pipefd[1]);
        r = read_line(pipefd[0], line, sizeof(line), WORKLOAD_START_TIMEOUT_MS);
        close(pipefd[0]);
        if (r < 0) {
                fprintf(stderr, "the workload %s did not say where its areas are: %s\n", path ?: "(in damonctl)",
                        strerror(-r));
                return r;
        }
        j = json_loads(line, 0, NULL);
        r = j && json_unpack(j, "{s:I,s:[II],s:[II]}", "pid", &pid, "hot", &hot_start, &hot_end, "cold", &cold_start,
                             &cold_end) == 0 && pid == e->workload_pid && hot_start < hot_end ? 0 : -EBADMSG;
        json_decref(j);
        if (r < 0) {
                fprintf(stderr, "the workload %s printed '%s', not its pid and areas\n", path ?: "(in damonctl)", line);
                return r;
        }
        e->hot_start = (uint64_t) hot_start;
        e->hot_end = (uint64_t) hot_end;
        return 0;
}

int selftest_workload_pin(struct selftest_env *e, const int *cpus, size_t n) {
        cpu_set_t set;

        CPU_ZERO(&set);
        for (size_t i = 0; i < n; i++)
                if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE)
                        CPU_SET(cpus[i], &set);
        if (CPU_COUNT(&set) == 0)
                return -EINVAL;
        return sched_setaffinity(e->workload_pid, sizeof(set), &set) < 0 ? -errno : 0;
}

static int write_file(const char *path, const char *text) {
        _cleanup_fclose_ FILE *f = fopen(path, "wxe");

        if (!f)
                return -errno;
        if (fputs(text, f) < 0 || fflush(f) != 0)
                return -EIO;
        return 0;
}

int selftest_standalone_prepare(struct selftest_env *e, const char *config) {
        int r;

        snprintf(e->dir, sizeof(e->dir), "/tmp/damonctl-selftest-XXXXXX");
        if (!mkdtemp(e->dir)) {
                r = -errno;
                e->dir[0] = '\0';
                return r;
        }
        snprintf(e->log, sizeof(e->log), "%s/damon-perfd.log", e->dir);
        snprintf(e->address, sizeof(e->address), "unix:%s/io.damon.perfd", e->dir);
        if (config) {
                snprintf(e->config, sizeof(e->config), "%s", config);
                return 0;
        }
        snprintf(e->config, sizeof(e->config), "%s/damon-perfd.conf", e->dir);
        /* DAMON stays untouched unless the caller's own configuration says otherwise. */
        return write_file(e->config, "# damonctl selftest's private damon-perfd\n[DAMON]\nMode=off\n");
}

int selftest_daemon_start(struct selftest_env *e, const char *daemon, double seconds) {
        char config_arg[PATH_MAX + 16], varlink_arg[160], pid_arg[32], duration_arg[32];
        pid_t parent = getpid(), pid;

        snprintf(config_arg, sizeof(config_arg), "--config=%s", e->config);
        snprintf(varlink_arg, sizeof(varlink_arg), "--varlink=%s", e->address + strlen("unix:"));
        snprintf(pid_arg, sizeof(pid_arg), "--pid=%d", (int) e->workload_pid);
        snprintf(duration_arg, sizeof(duration_arg), "--duration=%.0f", seconds);
        fflush(NULL);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                int log = open(e->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

                child_setup(parent);
                if (null < 0 || log < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0 ||
                    dup2(log, STDERR_FILENO) < 0)
                        _exit(126);
                execl(daemon, daemon, config_arg, varlink_arg, pid_arg, duration_arg, (char *) NULL);
                _exit(127);
        }
        e->daemon_pid = pid;
        return 0;
}

/* The last line of the log that says "error", else its last line. */
static void last_log_line(const char *path, char *buf, size_t size) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char line[512];

        buf[0] = '\0';
        while (f && fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                if (line[0] && (strstr(line, "error") || !strstr(buf, "error"))) {
                        size_t n = strnlen(line, size - 1);

                        memcpy(buf, line, n);
                        buf[n] = '\0';
                }
        }
        if (!buf[0])
                snprintf(buf, size, "(nothing logged)");
}

/* Whether every CPU in a GetCPUs reply is RUNNING or in ERROR. */
static bool cpus_settled(json_t *reply) {
        json_t *cpus = json_object_get(reply, "cpus"), *cpu;
        size_t i;

        if (!json_is_array(cpus) || json_array_size(cpus) == 0)
                return false;
        json_array_foreach(cpus, i, cpu) {
                const char *state = json_string_value(json_object_get(cpu, "state"));

                if (!state || (strcmp(state, "running") != 0 && strcmp(state, "error") != 0))
                        return false;
        }
        return true;
}

int selftest_daemon_wait_ready(struct selftest_env *e, double timeout_sec, char *why, size_t size) {
        _cleanup_varlink_client_ struct dp_varlink_client *client = NULL;
        double deadline = now_sec() + timeout_sec;
        int status;

        for (;;) {
                pid_t r = waitpid(e->daemon_pid, &status, WNOHANG);

                if (r == e->daemon_pid) {
                        char line[400];

                        e->daemon_pid = 0;
                        last_log_line(e->log, line, sizeof(line));
                        snprintf(why, size, "the private damon-perfd exited with status %d: %s",
                                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), line);
                        return -ECHILD;
                }
                if (ctl_interrupted)
                        return -EINTR;
                if (!client && dp_varlink_client_connect(e->address, &client) < 0)
                        client = NULL;
                if (client) {
                        json_t *reply = NULL;
                        const char *error = NULL;
                        bool settled;

                        if (dp_varlink_client_call(client, CTL_INTERFACE ".GetCPUs", NULL, 0, &reply, &error) < 0)
                                client = dp_varlink_client_free(client);
                        settled = !error && cpus_settled(reply);
                        json_decref(reply);
                        if (settled)
                                return 0;
                }
                if (now_sec() > deadline) {
                        snprintf(why, size, "the private damon-perfd did not get every CPU to RUNNING or ERROR "
                                 "within %.0f s", timeout_sec);
                        return -ETIMEDOUT;
                }
                sleep_ms(100);
        }
}

int selftest_check_config(const char *daemon, const char *config, char *first_error, size_t size) {
        char config_arg[PATH_MAX + 16], text[4096];
        pid_t parent = getpid(), pid;
        size_t used = 0;
        int pipefd[2], status;
        ssize_t n;

        first_error[0] = '\0';
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        snprintf(config_arg, sizeof(config_arg), "--config=%s", config ?: "");
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                close(pipefd[0]);
                close(pipefd[1]);
                return -errno;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                child_setup(parent);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0 ||
                    dup2(pipefd[1], STDERR_FILENO) < 0)
                        _exit(126);
                execl(daemon, daemon, "--check-config", config ? config_arg : (char *) NULL, (char *) NULL);
                _exit(127);
        }
        close(pipefd[1]);
        /* Keep the start; read to the end so that the child never blocks on a full pipe. */
        for (;;) {
                char sink[512];

                n = used + 1 < sizeof(text) ? read(pipefd[0], text + used, sizeof(text) - 1 - used)
                                            : read(pipefd[0], sink, sizeof(sink));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                if (used + 1 < sizeof(text))
                        used += (size_t) n;
        }
        text[used] = '\0';
        close(pipefd[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                if (strstr(line, "error")) {
                        snprintf(first_error, size, "%s", line);
                        break;
                }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int selftest_probe_perf_event_open(void) {
        struct perf_event_attr attr = {
                .type = PERF_TYPE_SOFTWARE,
                .size = sizeof(attr),
                .config = PERF_COUNT_SW_PAGE_FAULTS,
                .disabled = 1,
                /* What perf_event_paranoid 2 still allows an unprivileged user. */
                .exclude_kernel = 1,
                .exclude_hv = 1,
        };
        long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

        if (fd < 0)
                return -errno;
        close((int) fd);
        return 0;
}

/* The private instance's log, for a failure that needs more than one line. */
static void print_log(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char line[512];

        fprintf(stderr, "--- %s\n", path);
        while (f && fgets(line, sizeof(line), f))
                fputs(line, stderr);
        fprintf(stderr, "---\n");
}

void selftest_env_cleanup(struct selftest_env *e, int *daemon_status) {
        int status = 0;

        if (e->daemon_pid > 0) {
                stop_child(e->daemon_pid, &status);
                if (status < 0)
                        fprintf(stderr, "the private damon-perfd (pid %d) did not stop within %d s and was killed\n",
                                (int) e->daemon_pid, STOP_GRACE_MS / 1000);
                else if (status > 0)
                        fprintf(stderr, "the private damon-perfd (pid %d) exited with status %d\n", (int) e->daemon_pid,
                                status);
                if (status != 0)
                        print_log(e->log);
        }
        if (daemon_status)
                *daemon_status = status;
        e->daemon_pid = 0;
        stop_child(e->workload_pid, NULL);
        e->workload_pid = 0;
        if (!e->dir[0])
                return;
        if (strncmp(e->config, e->dir, strlen(e->dir)) == 0)
                (void) unlink(e->config);
        (void) unlink(e->log);
        /* The daemon removes its socket; not when it was killed. */
        (void) unlink(e->address + strlen("unix:"));
        if (rmdir(e->dir) < 0)
                fprintf(stderr, "cannot remove %s: %s\n", e->dir, strerror(errno));
        e->dir[0] = '\0';
}
