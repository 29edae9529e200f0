/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tiering and reclaim workloads (workload-tier.h).  Every --report-ms
 * it prints a line, and at the end a summary:
 *   TIER-AT t=S hot_fast=F cold_fast=N
 *   TIER hot_pages=N cold_pages=N to90_s=S hot_fast=F cold_fast=N cold_fast_max=N reports=N wp=N
 *   RECLAIM-AT t=S majflt=N hot_out=N cold_out=N
 *   RECLAIM hot_pages=N cold_pages=N majflt=N hot_out_max=N cold_out=N reports=N wp=N
 * hot_fast: the fraction of the hot pages on the fast node; cold_fast: cold
 * pages on it (all start on the slow node); to90_s: from the start of the
 * hot phase to the first report with hot_fast >= 0.9 (-1: never).  majflt:
 * the process's major faults since the hot phase began (the cold area is
 * never touched again, so they are the hot area's); *_out: pages swapped
 * out (the area's Swap: in /proc/self/smaps), cold_out at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "workload-core.h"
#include "workload-tier.h"

/* Linux 6.7's asynchronous write protection, newer than some build hosts' headers. */
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

#define TIER_GOAL 0.9

static bool tiering(const struct tier_workload *w) {
        return strcmp(w->mode, "tier") == 0;
}

static int bind_to_node(int node) {
        unsigned long mask = 1ul << node;

        if (syscall(SYS_set_mempolicy, node < 0 ? MPOL_DEFAULT : MPOL_BIND, node < 0 ? NULL : &mask,
                    node < 0 ? 0 : 8 * sizeof(mask)) < 0)
                return -errno;
        return 0;
}

/* Registers the hot area for asynchronous write protection: a protected
 * page's next store faults once and the kernel lifts the protection itself. */
static int setup_uffd(struct tier_workload *w) {
        struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
        struct uffdio_register reg = {
                .range = { (uint64_t) (uintptr_t) w->hot, w->hot_bytes }, .mode = UFFDIO_REGISTER_MODE_WP,
        };
        int fd = (int) syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

        if (fd < 0)
                return -errno;
        if (ioctl(fd, UFFDIO_API, &api) < 0 || ioctl(fd, UFFDIO_REGISTER, &reg) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        w->uffd = fd;
        return 0;
}

static int clear_accessed_bits(void) {
        _cleanup_close_ int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return write(fd, "1", 1) == 1 ? 0 : -errno;
}

/* The first touch places the pages: cold then hot puts the hot area in one
 * stretch of physical memory, above the cold one (as far as the allocator
 * keeps to order).  In @pieces pieces, a piece of cold then one of hot, the
 * hot area's pieces lie scattered through the cold one, as a long-running
 * heap's hot objects would: DAMON's regions of a few MiB then mix them with
 * cold pages. */
static unsigned nr_pieces(const struct tier_workload *w) {
        return DP_MAX(w->pieces, 1u);
}

/* Piece @i of an area of @bytes: whole pages, the last one taking the rest. */
static void piece(const struct tier_workload *w, size_t bytes, unsigned i, size_t *ret_offset, size_t *ret_len) {
        size_t each = bytes / nr_pieces(w) / w->page * w->page;

        *ret_offset = i * each;
        *ret_len = i + 1 < nr_pieces(w) ? each : bytes - i * each;
}

static void first_touch(const struct tier_workload *w) {
        for (unsigned i = 0; i < nr_pieces(w); i++) {
                size_t offset, len;

                piece(w, w->cold_bytes, i, &offset, &len);
                workload_touch(w->cold + offset, len, w->page);
                piece(w, w->hot_bytes, i, &offset, &len);
                workload_touch(w->hot + offset, len, w->page);
        }
}

int tier_map(struct tier_workload *w) {
        size_t total;
        char *base;
        int r;

        if (!tiering(w) && strcmp(w->mode, "reclaim") != 0) {
                fprintf(stderr, "workload: --tier wants tier or reclaim, got '%s'\n", w->mode);
                return -EINVAL;
        }
        if (tiering(w) && (w->slow_node < 0 || w->slow_node >= 64 || w->fast_node < 0 || w->fast_node >= 64 ||
                           w->slow_node == w->fast_node)) {
                fprintf(stderr, "workload: --slow-node and --fast-node want two different nodes below 64\n");
                return -EINVAL;
        }
        w->page = (size_t) sysconf(_SC_PAGESIZE);
        w->uffd = -1;
        /* [guard][cold][guard][hot][guard]: each area its own VMA. */
        total = w->cold_bytes + w->hot_bytes + 3 * w->page;
        base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
                return -errno;
        w->cold = base + w->page;
        w->hot = w->cold + w->cold_bytes + w->page;
        if (mprotect(w->cold, w->cold_bytes, PROT_READ | PROT_WRITE) < 0 ||
            mprotect(w->hot, w->hot_bytes, PROT_READ | PROT_WRITE) < 0)
                return -errno;
        /* Base pages: DAMON migrates and pages out, and we count, page by page. */
        madvise(base, total, MADV_NOHUGEPAGE);
        if (tiering(w) && (r = bind_to_node(w->slow_node)) < 0) {
                fprintf(stderr, "workload: binding to node %d: %s\n", w->slow_node, strerror(-r));
                return r;
        }
        first_touch(w);
        /* Placed: from now on DAMON decides where pages go. */
        if (tiering(w) && (r = bind_to_node(-1)) < 0)
                return r;
        /* The first touch left every page's accessed bit set, which a
         * long-running process's cold memory would not have: cleared, or
         * DAMON's first checks of each cold page would count an access. */
        r = clear_accessed_bits();
        if (r < 0) {
                fprintf(stderr, "workload: clearing the accessed bits (/proc/self/clear_refs): %s\n", strerror(-r));
                return r;
        }
        r = setup_uffd(w);
        if (r < 0) {
                fprintf(stderr, "workload: userfaultfd write protection (Linux 6.7): %s\n", strerror(-r));
                return r;
        }
        return 0;
}

/* The page frames of an area's present pages, sorted, into @ret (room for
 * one per page; /proc/self/pagemap, root only: none otherwise); their count. */
static size_t area_frames(const struct tier_workload *w, const char *area, size_t bytes, uint64_t *ret) {
        _cleanup_close_ int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
        size_t n = 0;

        for (size_t off = 0; fd >= 0 && off < bytes; off += w->page) {
                uint64_t e, pfn;

                if (pread(fd, &e, sizeof(e), (off_t) (((uintptr_t) area + off) / w->page * sizeof(e))) != sizeof(e))
                        break;
                pfn = e & ((1ull << 55) - 1);
                if ((e >> 63) && pfn != 0)
                        ret[n++] = pfn;
        }
        qsort(ret, n, sizeof(*ret), dp_cmp_u64);
        return n;
}

/* The lowest and highest page frame of an area (0 0 without any): where the
 * physical hints should fall. */
static void frame_span(const struct tier_workload *w, const char *area, size_t bytes, uint64_t *lo, uint64_t *hi) {
        _cleanup_free_ uint64_t *pfns = calloc(bytes / w->page + 1, sizeof(*pfns));
        size_t n = pfns ? area_frames(w, area, bytes, pfns) : 0;

        *lo = n ? pfns[0] : 0;
        *hi = n ? pfns[n - 1] : 0;
}

/* The first RUNS_SHOWN runs of the @n sorted @frames, in MiB: a trace sets
 * them beside the daemon's hot filters. */
#define RUNS_SHOWN 16
static void print_runs(const struct tier_workload *w, const uint64_t *frames, size_t n) {
        char text[RUNS_SHOWN * 32] = "";
        size_t len = 0, start = 0, shown = 0;

        for (size_t i = 1; i <= n && shown < RUNS_SHOWN; i++) {
                if (i < n && frames[i] == frames[i - 1] + 1)
                        continue;
                len += (size_t) snprintf(text + len, sizeof(text) - len, " %.1f-%.1f",
                                         (double) (frames[start] * w->page) / (1 << 20),
                                         (double) ((frames[i - 1] + 1) * w->page) / (1 << 20));
                start = i;
                shown++;
        }
        fprintf(stderr, "workload: physical: hot runs (MiB):%s%s\n", text, start < n ? " ..." : "");
}

/* How the hot pages lie among the cold ones: in how many runs of adjacent
 * frames (the median run, the longest), and how many cold pages lie between
 * their first and last frame.  Long runs region edges can part; pages mixed
 * one by one no region layout can (DAMON's check of a region mixing them
 * counts an access only as often as it picks a hot page, and migrate_hot
 * moves the cold ones with them). */
static void describe_runs(const struct tier_workload *w) {
        size_t nh = w->hot_bytes / w->page, nc = w->cold_bytes / w->page, runs = 0, cold_inside = 0;
        _cleanup_free_ uint64_t *hot = calloc(nh + 1, sizeof(*hot)), *cold = calloc(nc + 1, sizeof(*cold)),
                                *lengths = calloc(nh + 1, sizeof(*lengths));

        if (!hot || !cold || !lengths)
                return;
        nh = area_frames(w, w->hot, w->hot_bytes, hot);
        nc = area_frames(w, w->cold, w->cold_bytes, cold);
        if (nh == 0)
                return;
        for (size_t i = 0; i < nh; i++) {
                if (i == 0 || hot[i] != hot[i - 1] + 1)
                        lengths[runs++] = 0;
                lengths[runs - 1]++;
        }
        for (size_t i = 0; i < nc; i++)
                cold_inside += cold[i] > hot[0] && cold[i] < hot[nh - 1];
        print_runs(w, hot, nh);
        qsort(lengths, runs, sizeof(*lengths), dp_cmp_u64);
        fprintf(stderr, "workload: physical: hot pages in %zu runs of adjacent frames (median %llu pages, longest "
                "%llu); %zu cold pages between the first and last\n", runs,
                (unsigned long long) lengths[runs / 2], (unsigned long long) lengths[runs - 1], cold_inside);
}

void tier_describe(const struct tier_workload *w) {
        uint64_t hot_lo, hot_hi, cold_lo, cold_hi;

        frame_span(w, w->hot, w->hot_bytes, &hot_lo, &hot_hi);
        frame_span(w, w->cold, w->cold_bytes, &cold_lo, &cold_hi);
        for (unsigned i = 0; nr_pieces(w) > 1 && i < nr_pieces(w); i++) {
                size_t offset, len;

                piece(w, w->hot_bytes, i, &offset, &len);
                frame_span(w, w->hot + offset, len, &hot_lo, &hot_hi);
                fprintf(stderr, "workload: physical: hot piece %u 0x%llx-0x%llx\n", i,
                        (unsigned long long) hot_lo * w->page, (unsigned long long) (hot_hi + 1) * w->page);
        }
        frame_span(w, w->hot, w->hot_bytes, &hot_lo, &hot_hi);
        fprintf(stderr, "workload: physical: hot 0x%llx-0x%llx, cold 0x%llx-0x%llx\n",
                (unsigned long long) hot_lo * w->page, (unsigned long long) (hot_hi + 1) * w->page,
                (unsigned long long) cold_lo * w->page, (unsigned long long) (cold_hi + 1) * w->page);
        describe_runs(w);
        printf("{\"pid\": %ld, \"hot\": [%lu, %lu], \"cold\": [%lu, %lu]}\n", (long) getpid(),
               (unsigned long) (uintptr_t) w->hot, (unsigned long) (uintptr_t) (w->hot + w->hot_bytes),
               (unsigned long) (uintptr_t) w->cold, (unsigned long) (uintptr_t) (w->cold + w->cold_bytes));
        fflush(stdout);
}

struct tally {
        void **pages;           /* the page addresses move_pages() is asked about */
        int *status;
};

/* Pages of [@area, +@bytes) on @node (move_pages(2): nodes NULL only asks). */
static long pages_on_node(struct tally *t, char *area, size_t bytes, size_t page, int node) {
        size_t n = bytes / page;
        long count = 0;

        for (size_t i = 0; i < n; i++)
                t->pages[i] = area + i * page;
        if (syscall(SYS_move_pages, 0, (unsigned long) n, t->pages, NULL, t->status, 0) < 0)
                return -errno;
        for (size_t i = 0; i < n; i++)
                count += t->status[i] == node;
        return count;
}

/* Pages of the area swapped out: its VMA's Swap: in /proc/self/smaps (mincore
 * would count a page written out but still in the swap cache as resident). */
static long pages_out(char *area, size_t page) {
        _cleanup_free_ char *text = NULL;
        char head[32];
        const char *vma, *swap;
        unsigned long kib;
        size_t len;
        int r;

        r = dp_read_file("/proc/self/smaps", &text, &len);
        if (r < 0)
                return r;
        snprintf(head, sizeof(head), "%lx-", (unsigned long) (uintptr_t) area);
        vma = strstr(text, head);
        if (!vma || (vma != text && vma[-1] != '\n'))
                return -ENOENT;
        swap = strstr(vma, "\nSwap:");
        if (!swap || sscanf(swap, "\nSwap: %lu kB", &kib) != 1)
                return -EBADMSG;
        return (long) (kib * 1024 / page);
}

static long major_faults(void) {
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_majflt;
}

static uint64_t next_random(uint64_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* Write-protects one random hot page: its next store is a sample. */
static int protect_one(const struct tier_workload *w, uint64_t *seed) {
        size_t pages = w->hot_bytes / w->page;
        struct uffdio_writeprotect wp = {
                .range = { (uint64_t) (uintptr_t) (w->hot + (next_random(seed) % pages) * w->page), w->page },
                .mode = UFFDIO_WRITEPROTECT_MODE_WP,
        };

        return ioctl(w->uffd, UFFDIO_WRITEPROTECT, &wp) < 0 ? -errno : 0;
}

struct progress {
        double to90_s, hot_fast;
        long cold_fast, cold_fast_max, majflt0, majflt, hot_out_max, cold_out;
        unsigned reports;
        uint64_t wp;
};

/* With the hot area in pieces, " pieces_fast=F/F/...": each piece's
 * fraction on the fast node, from the hot area's statuses that
 * pages_on_node() just left in @t (which pieces lag); "" otherwise. */
static void format_pieces(const struct tier_workload *w, const struct tally *t, char *buf, size_t size) {
        size_t used = 0;

        buf[0] = '\0';
        for (unsigned i = 0; nr_pieces(w) > 1 && i < nr_pieces(w); i++) {
                size_t offset, len, fast = 0;
                int n;

                piece(w, w->hot_bytes, i, &offset, &len);
                for (size_t k = offset / w->page; k < (offset + len) / w->page; k++)
                        fast += t->status[k] == w->fast_node;
                n = snprintf(buf + used, size - used, "%s%.2f", i ? "/" : " pieces_fast=",
                             (double) fast / (double) (len / w->page));
                if (n < 0 || (size_t) n >= size - used)
                        return;
                used += (size_t) n;
        }
}

static int report(const struct tier_workload *w, struct tally *t, double at, struct progress *p) {
        size_t hot_pages = w->hot_bytes / w->page;
        char pieces[512] = "";
        long a, b;

        if (tiering(w)) {
                a = pages_on_node(t, w->hot, w->hot_bytes, w->page, w->fast_node);
                if (a >= 0)
                        format_pieces(w, t, pieces, sizeof(pieces));
                b = pages_on_node(t, w->cold, w->cold_bytes, w->page, w->fast_node);
                if (a < 0 || b < 0)
                        return (int) (a < 0 ? a : b);
                p->hot_fast = (double) a / (double) hot_pages;
                p->cold_fast = b;
                p->cold_fast_max = DP_MAX(p->cold_fast_max, b);
                if (p->to90_s < 0 && p->hot_fast >= TIER_GOAL)
                        p->to90_s = at;
                printf("TIER-AT t=%.2f hot_fast=%.3f cold_fast=%ld%s\n", at, p->hot_fast, b, pieces);
        } else {
                a = pages_out(w->hot, w->page);
                b = pages_out(w->cold, w->page);
                if (a < 0 || b < 0)
                        return (int) (a < 0 ? a : b);
                p->majflt = major_faults() - p->majflt0;
                p->hot_out_max = DP_MAX(p->hot_out_max, a);
                p->cold_out = b;
                printf("RECLAIM-AT t=%.2f majflt=%ld hot_out=%ld cold_out=%ld\n", at, p->majflt, a, b);
        }
        p->reports++;
        fflush(stdout);
        return 0;
}

static void summarize(const struct tier_workload *w, const struct progress *p) {
        size_t hot = w->hot_bytes / w->page, cold = w->cold_bytes / w->page;

        if (tiering(w))
                printf("TIER hot_pages=%zu cold_pages=%zu to90_s=%.2f hot_fast=%.3f cold_fast=%ld cold_fast_max=%ld "
                       "reports=%u wp=%lu\n", hot, cold, p->to90_s, p->hot_fast, p->cold_fast, p->cold_fast_max,
                       p->reports, (unsigned long) p->wp);
        else
                printf("RECLAIM hot_pages=%zu cold_pages=%zu majflt=%ld hot_out_max=%ld cold_out=%ld reports=%u "
                       "wp=%lu\n", hot, cold, p->majflt, p->hot_out_max, p->cold_out, p->reports,
                       (unsigned long) p->wp);
        fflush(stdout);
}

static void sleep_until(double t) {
        double left = t - workload_now();

        if (left > 0) {
                struct timespec ts = { (time_t) left, (long) ((left - (time_t) left) * 1e9) };

                nanosleep(&ts, NULL);
        }
}

int tier_run(struct tier_workload *w, volatile sig_atomic_t *stop) {
        size_t max = DP_MAX(w->hot_bytes, w->cold_bytes) / w->page;
        _cleanup_free_ void **pages = calloc(max, sizeof(void *));
        _cleanup_free_ int *status = calloc(max, sizeof(int));
        struct tally t = { pages, status };
        struct progress p = { .to90_s = -1, .majflt0 = major_faults() };
        uint64_t seed = 0x2545f4914f6cdd1dull;
        double t0 = workload_now(), last = t0, owed = 0, next_report = t0;
        int r;

        if (!pages || !status)
                return -ENOMEM;
        while (!*stop) {
                double tick = workload_now();

                if (w->seconds > 0 && tick - t0 >= w->seconds)
                        break;
                if (tick >= next_report) {
                        r = report(w, &t, tick - t0, &p);
                        if (r < 0)
                                return r;
                        next_report += w->report_ms / 1e3;
                }
                owed += w->faults_per_s * (tick - last);
                last = tick;
                for (; owed >= 1; owed--, p.wp++)
                        if ((r = protect_one(w, &seed)) < 0)
                                return r;
                workload_touch(w->hot, w->hot_bytes, w->page);
                sleep_until(DP_MIN(tick + w->touch_ms / 1e3, next_report));
        }
        summarize(w, &p);
        return 0;
}
