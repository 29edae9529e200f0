#!/bin/sh
# The qemu guest's /init (busybox sh): runs damon-perfd against the guest
# kernel's real DAMON and checks what the daemon did there, from DAMON's own
# sysfs.  Prints one line per assertion,
#   DP-QEMU: PASS <case>: <assertion>
#   DP-QEMU: FAIL <case>: <assertion>: <detail>
# then "DP-QEMU: DONE", and powers the guest off.  tests/qemu/run counts them.
#
# This script writes DAMON sysfs freely: it must only ever run inside the
# throw-away guest, never on a real machine (whose kdamonds are not ours).

if [ "$$" -ne 1 ] || [ ! -e /etc/damon-perfd-qemu-guest ]; then
        echo "guest-test.sh: refusing to run: this is the qemu guest's /init only" >&2
        exit 1
fi

/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t devtmpfs devtmpfs /dev
# The initramfs has no /dev/console of its own (building it needs no root), so
# the kernel started us without stdio.
exec </dev/console >/dev/console 2>&1
# The firmware's last output has no line end: start our first line afresh.
echo
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
# Keep kernel messages from splitting our lines on the serial console.
echo 1 > /proc/sys/kernel/printk

ADMIN=/sys/kernel/mm/damon/admin
KD=$ADMIN/kdamonds
CTX=$KD/0/contexts/0
CONF=/etc/damon-perfd-test
export DAMON_PERFD_ADDRESS=unix:/run/dp.sock
# 4 pages: how far a committed region boundary may be from the hot area's.
SLACK=16384
# TCG is slow: how long hints get to settle before the checks give up.
# (Kernel parameters such as DP_OWN_WAIT=60 reach us as environment.)
OWN_WAIT=${DP_OWN_WAIT:-30}
FOREIGN_WAIT=${DP_FOREIGN_WAIT:-5}

case_failed=0

pass() {
        echo "DP-QEMU: PASS $case: $1"
}

fail() {
        echo "DP-QEMU: FAIL $case: $1: $2"
        case_failed=1
}

# expect ASSERTION DETAIL COMMAND...: PASS if COMMAND succeeds, else FAIL with DETAIL.
expect() {
        assertion=$1 detail=$2
        shift 2
        if "$@"; then pass "$assertion"; else fail "$assertion" "$detail"; fi
}

info() {
        echo "DP-QEMU: INFO $case: $*"
}

# show_log NAME [FILE]: FILE's lines (standard input's without one) prefixed,
# so that a CI log shows what the daemon said.
show_log() {
        sed "s/^/DP-QEMU: LOG $case: $1: /" ${2:+"$2"}
}

# DAMON's sysfs answers EBUSY while a kdamond command (the daemon's commit or
# read-back) is in flight, so reads and writes get a second chance, and more.
read_file() {
        for _ in 1 2 3 4 5 6 7 8 9 10; do
                cat "$1" 2>/dev/null && return 0
                [ -e "$1" ] || break
                sleep 0.1
        done
        echo "<unreadable>"
}

# write_file VALUE FILE: on failure, says why on stdout.
write_file() {
        for _ in 1 2 3 4 5 6 7 8 9 10; do
                err=$( (echo "$1" > "$2") 2>&1 ) && return 0
                [ -e "$2" ] || break
                sleep 0.1
        done
        echo "cannot write '$1' to ${2#"$ADMIN"/}: ${err:-no such file}"
        return 1
}

# Turns every kdamond off and removes them, so that each case starts from
# a kernel without kdamonds whatever the last one left behind.  The daemon's
# state file goes too: it would make the next daemon recover the last one's
# kdamond instead of meeting the situation the case sets up.
# A kdamond can take a while to stop, and while one is left the next daemon
# rightly finds a foreign kdamond and only observes.
damon_reset() {
        for state in "$KD"/[0-9]*/state; do
                [ "$(read_file "$state")" = on ] && write_file off "$state"
        done
        for _ in $(seq 30); do
                [ "$(read_file "$KD/nr_kdamonds")" = 0 ] && break
                write_file 0 "$KD/nr_kdamonds" > /dev/null
        done
        [ "$(read_file "$KD/nr_kdamonds")" = 0 ] || info "a kdamond is left: $(read_file "$KD/0/state")"
        rm -f /run/damon-perfd/damon.state
}

# start_workload: the workload in the background; sets wl_pid, hot_start, hot_end.
start_workload() {
        # Removed first: the shell may look before the child has truncated
        # what an earlier workload left, and read the old line, or none.
        wl_out=/run/workload-$case.json
        rm -f "$wl_out" "$wl_out.err"
        damon-perfd-workload --hot-mib 4 --cold-mib 16 > "$wl_out" 2> "$wl_out.err" &
        wl_job=$!
        # It prints once its cold area is touched: seconds under a busy TCG.
        for _ in $(seq 300); do
                [ -s "$wl_out" ] && break
                sleep 0.1
        done
        # shellcheck disable=SC2046 # split into pid, start, end on purpose
        set -- $(sed -n 's/.*"pid": *\([0-9]*\),.*"hot": *\[\([0-9]*\), *\([0-9]*\)\].*/\1 \2 \3/p' "$wl_out")
        wl_pid=${1:-0} hot_start=${2:-0} hot_end=${3:-0}
        expect "the workload reports its pid and hot area" "got '$(cat "$wl_out" "$wl_out.err")'" \
                [ "$wl_pid" = "$wl_job" -a "$hot_end" -gt "$hot_start" ]
}

stop_workload() {
        kill "$wl_job" 2>/dev/null
        wait "$wl_job" 2>/dev/null
}

# start_daemon CONFIG [OPTION...]: the daemon in the background, logging to /run/dp-<case>.log.
start_daemon() {
        daemon_log=/run/dp-$case.log
        daemon_conf=$1
        shift
        damon-perfd --config="$daemon_conf" "$@" > "$daemon_log" 2>&1 &
        daemon_pid=$!
}

# stop_daemon: SIGTERM by pid, then its exit status in daemon_status; a daemon
# that does not exit within 20 s is killed (status 137).
stop_daemon() {
        kill -TERM "$daemon_pid" 2>/dev/null
        (sleep 20; kill -KILL "$daemon_pid" 2>/dev/null) &
        watchdog=$!
        wait "$daemon_pid"
        daemon_status=$?
        kill "$watchdog" 2>/dev/null
        wait "$watchdog" 2>/dev/null
}

# stop_daemon, and the assertion that it exited cleanly.
stop_daemon_cleanly() {
        stop_daemon
        expect "the daemon exits with status 0 on SIGTERM" "status $daemon_status" [ "$daemon_status" = 0 ]
}

# /proc/PID/stat's fields after the command's name, state first, into
# stat_fields; false if PID is gone.  The shell's own read: the loops that
# watch a workload start no process each second, whose page faults the
# daemon under test would sample (in the tiering case most of what it saw).
read_stat() {
        stat_fields=
        read -r stat_fields 2>/dev/null < "/proc/$1/stat" || return 1
        stat_fields=${stat_fields##*) }
}

# Alive, not a zombie: a child that died stays visible to kill -0 until it
# is waited for.
running() {
        read_stat "$1" && [ "${stat_fields%% *}" != Z ]
}

# damon_alone_start PID MAX_REGIONS [ACTION NR_ACCESSES_MAX AGE_MIN]: DAMON
# alone, as a user would run it for the benchmark cases: kdamond 0, vaddr on
# PID, their attributes (sample 5 ms, aggregation 100 ms, update 1 s, regions
# 10 to MAX_REGIONS) and one scheme (default: stat, on every region).
damon_alone_start() {
        write_file 1 "$KD/nr_kdamonds" &&
        write_file 1 "$KD/0/contexts/nr_contexts" &&
        write_file vaddr "$CTX/operations" &&
        write_file 5000 "$CTX/monitoring_attrs/intervals/sample_us" &&
        write_file 100000 "$CTX/monitoring_attrs/intervals/aggr_us" &&
        write_file 1000000 "$CTX/monitoring_attrs/intervals/update_us" &&
        write_file 10 "$CTX/monitoring_attrs/nr_regions/min" &&
        write_file "$2" "$CTX/monitoring_attrs/nr_regions/max" &&
        write_file 1 "$CTX/targets/nr_targets" &&
        write_file "$1" "$CTX/targets/0/pid_target" &&
        write_file 1 "$CTX/schemes/nr_schemes" &&
        write_file "${3:-stat}" "$CTX/schemes/0/action" &&
        # sysfs creates a scheme whose size range matches nothing.
        write_file 18446744073709551615 "$CTX/schemes/0/access_pattern/sz/max" &&
        write_file "${4:-4294967295}" "$CTX/schemes/0/access_pattern/nr_accesses/max" &&
        write_file "${5:-0}" "$CTX/schemes/0/access_pattern/age/min" &&
        write_file 4294967295 "$CTX/schemes/0/access_pattern/age/max" &&
        write_file on "$KD/0/state"
}

# own_conf FILE TARGETS MAX_REGIONS [DAMON-LINE...]: the daemon's configuration
# for the benchmark cases (value.sh, tier.sh): the DAMON attributes of their
# DAMON-alone arms (sample 5 ms, aggregation 100 ms, update 1 s, regions 10
# to MAX_REGIONS), its own kdamond, hints every 500 ms, and the [DAMON] lines
# given (Scheme=, MaxTargets=).
own_conf() {
        conf_file=$1 conf_targets=$2 conf_max=$3
        shift 3
        {
                printf '[Sampling]\nSource=pagefault\n[Tracking]\nTargets=%s\nMinRegions=10\nMaxRegions=%s\n' \
                        "$conf_targets" "$conf_max"
                printf 'SampleIntervalSec=5ms\nAggregationIntervalSec=100ms\nMapsRefreshSec=1s\n'
                printf '[DAMON]\nMode=own\nHintIntervalSec=500ms\n'
                for conf_line in "$@"; do
                        printf '%s\n' "$conf_line"
                done
                printf '[API]\nSocket=/run/dp.sock\n'
        } > "$conf_file"
}

# wait_output FILE: until a started workload has written its first line
# (its layout) into FILE, at most 60 s.
wait_output() {
        for _ in $(seq 600); do
                [ -s "$1" ] && return 0
                sleep 0.1
        done
        return 1
}

abs_diff() {
        d=$(($1 - $2))
        echo $((d < 0 ? -d : d))
}

# find_target: the directory of the own kdamond's target whose pid_target is
# the workload's, in target_dir (empty if none).
find_target() {
        target_dir=
        for t in "$CTX"/targets/[0-9]*; do
                [ "$(read_file "$t/pid_target")" = "$wl_pid" ] && target_dir=$t
        done
}

find_target_found() {
        find_target
        [ -n "$target_dir" ]
}

# near_boundary ADDRESS: is some committed region of target_dir starting or
# ending within SLACK bytes of ADDRESS?
near_boundary() {
        [ -n "$target_dir" ] || return 1
        for r in "$target_dir"/regions/[0-9]*; do
                for b in "$(read_file "$r/start")" "$(read_file "$r/end")"; do
                        case $b in *[!0-9]*|'') continue ;; esac
                        [ "$(abs_diff "$b" "$1")" -le "$SLACK" ] && return 0
                done
        done
        return 1
}

# Every file of kdamond 0 with its value (tried regions aside: there may be
# thousands), for a failure's log: what the daemon left in DAMON, before its
# stop takes it away.
show_kdamond() {
        [ -d "$KD/0" ] || return 0
        find "$KD/0" -type f | grep -v '/tried_regions/[0-9]' | sort | while read -r f; do
                echo "DP-QEMU: LOG $case: sysfs: ${f#"$ADMIN"/}=$(read_file "$f" | head -n 1)"
        done
}

# The committed regions of target_dir, for a failure's detail.
regions_of_target() {
        [ -n "$target_dir" ] || { echo "no target"; return; }
        for r in "$target_dir"/regions/[0-9]*; do
                [ -e "$r/start" ] && printf '[%s,%s) ' "$(read_file "$r/start")" "$(read_file "$r/end")"
        done
        echo "nr_regions=$(read_file "$target_dir/regions/nr_regions")"
}

# target_near ADDRESS: the workload's target, looked up afresh, has a
# committed region boundary near ADDRESS.
target_near() {
        find_target
        near_boundary "$1"
}

hints_settled() {
        [ "$(read_file "$KD/nr_kdamonds")" = 1 ] && [ "$(read_file "$KD/0/state")" = on ] || return 1
        target_near "$hot_start" && target_near "$hot_end"
}

# eventually COMMAND...: COMMAND succeeds within 3 s.  The daemon rewrites
# its targets and regions every HintIntervalSec (writing nr_regions recreates
# the region directories, empty) and each read-back empties tried_regions
# before filling it again: one look may fall in between.
eventually() {
        for _ in $(seq 30); do
                "$@" && return 0
                sleep 0.1
        done
        return 1
}

tried_regions_exist() {
        [ -f "$CTX/schemes/0/tried_regions/0/start" ]
}

case_boot() {
        case=boot
        expect "DAMON sysfs is present" "$KD/nr_kdamonds is missing: is CONFIG_DAMON_SYSFS on?" \
                [ -f "$KD/nr_kdamonds" ]
        expect "no kdamond exists at boot" "nr_kdamonds=$(read_file "$KD/nr_kdamonds")" \
                [ "$(read_file "$KD/nr_kdamonds")" = 0 ]
}

# The daemon creates its own kdamond, commits the workload's hot area as
# region hints, reads DAMON's view back, and removes the kdamond on stop.
case_own() {
        case=own case_failed=0
        damon_reset
        start_daemon "$CONF/own.conf"
        start_workload
        waited=0
        while [ "$waited" -lt "$OWN_WAIT" ] && running "$daemon_pid" && ! hints_settled; do
                sleep 1
                waited=$((waited + 1))
        done
        info "waited ${waited}s for the hints"
        expect "the daemon is running" "it exited early" running "$daemon_pid"

        nr=$(read_file "$KD/nr_kdamonds")
        expect "nr_kdamonds is 1" "nr_kdamonds=$nr" [ "$nr" = 1 ]
        state=$(read_file "$KD/0/state")
        expect "kdamonds/0/state is on" "state=$state" [ "$state" = on ]
        pids=$(for t in "$CTX"/targets/[0-9]*; do [ -e "$t" ] && read_file "$t/pid_target"; done | tr '\n' ' ')
        expect "a target's pid_target is the workload's pid" "workload pid $wl_pid, pid_targets: ${pids:-none}" \
                eventually find_target_found
        regions=$(find_target; regions_of_target)
        expect "a committed region boundary lies within 16 KiB of the hot area's start" \
                "hot area [$hot_start,$hot_end), regions $regions" eventually target_near "$hot_start"
        expect "a committed region boundary lies within 16 KiB of the hot area's end" \
                "hot area [$hot_start,$hot_end), regions $regions" eventually target_near "$hot_end"

        if damonctl damon > /run/damonctl.out 2>&1 || damonctl --json damon > /run/damonctl.out 2>&1; then
                pass "damonctl damon exits 0"
        else
                fail "damonctl damon exits 0" "status $?: $(head -n 1 /run/damonctl.out)"
                show_log damonctl /run/damonctl.out
        fi

        tried=no
        eventually tried_regions_exist && tried=yes
        if [ "$tried" = no ] && [ "$(read_file "$KD/0/state")" = on ]; then
                # The daemon reads back on its own schedule; ask DAMON directly.
                info "no tried_regions seen; writing update_schemes_tried_regions"
                why=$(write_file update_schemes_tried_regions "$KD/0/state") || info "$why"
                eventually tried_regions_exist && tried=yes
        fi
        expect "scheme 0 has tried regions" \
                "$CTX/schemes/0/tried_regions/0/start is missing (nr_schemes=$(read_file "$CTX/schemes/nr_schemes"))" \
                [ "$tried" = yes ]

        [ "$case_failed" = 0 ] || show_kdamond
        stop_daemon_cleanly
        nr=$(read_file "$KD/nr_kdamonds") state=$(read_file "$KD/0/state")
        expect "the kdamond is off or gone after stop" "nr_kdamonds=$nr, state=$state" \
                [ "$nr" = 0 -o "$state" = off ]

        stop_workload
        [ "$case_failed" = 0 ] || show_log daemon "$daemon_log"
}

# snapshot DIR: a copy of every regular file under DAMON's admin directory.
snapshot() {
        rm -rf "$1"
        find "$ADMIN" -type f | sort > "$1.list"
        while read -r f; do
                mkdir -p "$1${f%/*}"
                read_file "$f" > "$1$f"
        done < "$1.list"
}

# foreign_kdamond: kdamond 0 as some other tool would run it, on the
# physical address space of the first System RAM range.
foreign_kdamond() {
        # shellcheck disable=SC2046 # split into start and end on purpose
        set -- $(sed -n 's/^\([0-9a-f]*\)-\([0-9a-f]*\) : System RAM$/\1 \2/p' /proc/iomem | head -n 1)
        [ $# = 2 ] || { echo "no System RAM in /proc/iomem"; return 1; }
        write_file 1 "$KD/nr_kdamonds" &&
        write_file 1 "$KD/0/contexts/nr_contexts" &&
        write_file paddr "$CTX/operations" &&
        write_file 1 "$CTX/targets/nr_targets" &&
        write_file 1 "$CTX/targets/0/regions/nr_regions" &&
        write_file $((0x$1)) "$CTX/targets/0/regions/0/start" &&
        write_file $((0x$2 + 1)) "$CTX/targets/0/regions/0/end" &&
        write_file on "$KD/0/state"
}

# With a kdamond the daemon did not create, Mode=own must write nothing at all.
case_foreign() {
        case=foreign case_failed=0
        damon_reset
        why=$(foreign_kdamond 2>&1)
        expect "the foreign kdamond is on" "setup failed: $why, state=$(read_file "$KD/0/state")" \
                [ "$(read_file "$KD/0/state")" = on ]

        # Files that change by themselves (stats, for instance) are left out:
        # whatever differs between two reads before the daemon starts.
        snapshot /run/snap-before
        sleep 1
        snapshot /run/snap-again
        : > /run/volatile
        while read -r f; do
                cmp -s "/run/snap-before$f" "/run/snap-again$f" || echo "$f" >> /run/volatile
        done < /run/snap-before.list
        info "$(wc -l < /run/snap-before.list) files under $ADMIN, $(wc -l < /run/volatile) change by themselves"

        start_workload
        start_daemon "$CONF/foreign.conf"
        # Up first (start-up under TCG on a busy host can take seconds), then
        # FOREIGN_WAIT seconds of the daemon beside the foreign kdamond.
        wait_for 30 damonctl stats > /dev/null 2>&1 || true
        sleep "$FOREIGN_WAIT"
        if damonctl stats > /run/damonctl.out 2>&1; then
                pass "damonctl stats exits 0"
        else
                fail "damonctl stats exits 0" "status $?: $(head -n 1 /run/damonctl.out)"
                show_log damonctl /run/damonctl.out
        fi
        expect "the daemon's log says observe-only" "no 'observe' in its log" grep -qi observe "$daemon_log"
        stop_daemon_cleanly
        stop_workload

        snapshot /run/snap-after
        changed=
        if ! cmp -s /run/snap-before.list /run/snap-after.list; then
                changed="the set of files changed: $(diff /run/snap-before.list /run/snap-after.list | grep '^[-+]/' | head -n 5 | tr '\n' ' ')"
        else
                while read -r f; do
                        grep -qxF "$f" /run/volatile && continue
                        cmp -s "/run/snap-before$f" "/run/snap-after$f" && continue
                        changed="$changed${f#"$ADMIN"/}: '$(cat "/run/snap-before$f")' -> '$(cat "/run/snap-after$f")'; "
                done < /run/snap-before.list
        fi
        expect "DAMON sysfs is byte-identical after the daemon ran" "$changed" [ -z "$changed" ]
        state=$(read_file "$KD/0/state")
        expect "the foreign kdamond is still on" "state=$state" [ "$state" = on ]

        [ "$case_failed" = 0 ] || show_log daemon "$daemon_log"
        damon_reset
}

# admin_kdamond: kdamond 0 as an administrator would run it on the workload,
# letting DAMON derive the regions (nr_regions 0).
admin_kdamond() {
        write_file 1 "$KD/nr_kdamonds" &&
        write_file 1 "$KD/0/contexts/nr_contexts" &&
        write_file vaddr "$CTX/operations" &&
        write_file 1 "$CTX/targets/nr_targets" &&
        write_file "$wl_pid" "$CTX/targets/0/pid_target" &&
        write_file on "$KD/0/state"
}

# volatile_files: what changes by itself between two snapshots a second apart.
volatile_files() {
        snapshot /run/snap-before
        sleep 1
        snapshot /run/snap-again
        : > /run/volatile
        while read -r f; do
                cmp -s "/run/snap-before$f" "/run/snap-again$f" || echo "$f" >> /run/volatile
        done < /run/snap-before.list
}

# changed_files: what differs from /run/snap-before (volatile files aside).
changed_files() {
        snapshot /run/snap-after
        if ! cmp -s /run/snap-before.list /run/snap-after.list; then
                echo "the set of files changed: $(diff /run/snap-before.list /run/snap-after.list | grep '^[-+]/' | head -n 5 | tr '\n' ' ')"
                return
        fi
        while read -r f; do
                grep -qxF "$f" /run/volatile && continue
                cmp -s "/run/snap-before$f" "/run/snap-after$f" && continue
                printf "%s: '%s' -> '%s'; " "${f#"$ADMIN"/}" "$(cat "/run/snap-before$f")" "$(cat "/run/snap-after$f")"
        done < /run/snap-before.list
}

# Mode=attach: hints go into the administrator's kdamond, whose settings
# stay its own, and on stop every replaced value is written back.
case_attach() {
        case=attach case_failed=0
        damon_reset
        start_workload
        why=$(admin_kdamond 2>&1)
        expect "the administrator's kdamond is on" "setup failed: $why, state=$(read_file "$KD/0/state")" \
                [ "$(read_file "$KD/0/state")" = on ]
        volatile_files
        start_daemon "$CONF/attach.conf"
        target_dir=$CTX/targets/0
        waited=0
        while [ "$waited" -lt "$OWN_WAIT" ] && running "$daemon_pid" &&
              ! { near_boundary "$hot_start" && near_boundary "$hot_end"; }; do
                sleep 1
                waited=$((waited + 1))
        done
        info "waited ${waited}s for the hints"
        regions=$(regions_of_target)
        expect "a committed region boundary lies within 16 KiB of the hot area's start" \
                "hot area [$hot_start,$hot_end), regions $regions" eventually near_boundary "$hot_start"
        expect "a committed region boundary lies within 16 KiB of the hot area's end" \
                "hot area [$hot_start,$hot_end), regions $regions" eventually near_boundary "$hot_end"
        expect "the administrator's target is unchanged" "pid_target=$(read_file "$target_dir/pid_target")" \
                [ "$(read_file "$target_dir/pid_target")" = "$wl_pid" ]
        expect "the daemon's log says attached" "no 'attached' in its log" grep -q "DAMON: attached" "$daemon_log"
        [ "$case_failed" = 0 ] || show_kdamond
        stop_daemon_cleanly
        changed=$(changed_files)
        expect "every value the daemon replaced is back" "$changed" [ -z "$changed" ]
        stop_workload
        [ "$case_failed" = 0 ] || show_log daemon "$daemon_log"
        damon_reset
}

# ---- faults: CPU hotplug and DAMON under the daemon's feet ----

# wait_for SECONDS COMMAND...: COMMAND succeeds within SECONDS (tried every 0.2 s).
wait_for() {
        limit=$(($1 * 5))
        shift
        for _ in $(seq "$limit"); do
                "$@" && return 0
                sleep 0.2
        done
        return 1
}

# The daemon's counters now, one Prometheus line each, in /run/metrics.
snap_metrics() {
        damonctl stats --prometheus > /run/metrics 2> /run/metrics.err
}

# metric NAME CPU: a per-CPU value of the last snap_metrics (-1 if missing).
metric() {
        awk -v want="damon_perfd_$1{cpu=\"$2\"}" '$1 == want { print $2; found = 1 } END { if (!found) print -1 }' \
                /run/metrics
}

# cpu_state CPU: its state in the last snap_metrics.
cpu_state() {
        awk -v prefix="damon_perfd_cpu_state{cpu=\"$1\",state=\"" \
                'index($1, prefix) == 1 && $2 == 1 { s = substr($1, length(prefix) + 1); sub(/".*/, "", s); print s }' \
                /run/metrics
}

# What does not add up in the last snap_metrics, CPU by CPU (nothing when all
# does): the layer sums of the counters (README: "Pipeline and counters").
reconcile() {
        awk '
        $1 ~ /^damon_perfd_[a-z_]+\{cpu="[0-9]+"\}$/ {
                name = $1; sub(/^damon_perfd_/, "", name); sub(/\{.*/, "", name); sub(/_total$/, "", name)
                cpu = $1; sub(/.*cpu="/, "", cpu); sub(/".*/, "", cpu)
                v[cpu "," name] = $2; cpus[cpu] = 1
        }
        function at(c, n) { return v[c "," n] + 0 }
        END {
                for (c in cpus) {
                        n++
                        if (at(c, "valid") + at(c, "null") + at(c, "addr_zero") + at(c, "kernel") + at(c, "inv_phys") != at(c, "callback"))
                                print "CPU" c ": valid + null + addr_zero + kernel + inv_phys != callback"
                        if (at(c, "enqueue") + at(c, "overflow") != at(c, "valid"))
                                print "CPU" c ": enqueue + overflow != valid"
                        if (at(c, "dequeue") + at(c, "in_flight") != at(c, "enqueue"))
                                print "CPU" c ": dequeue + in_flight != enqueue"
                        if (at(c, "match") + at(c, "miss_tgid") + at(c, "miss_region") + at(c, "miss_bound") != at(c, "dequeue"))
                                print "CPU" c ": match + miss_tgid + miss_region + miss_bound != dequeue"
                }
                if (n == 0)
                        print "no per-CPU counters"
        }' /run/metrics
}

# expect_serving_and_reconciling WHEN: damonctl stats answers and its counters add up.
expect_serving_and_reconciling() {
        if snap_metrics; then
                pass "damonctl stats answers $1"
        else
                fail "damonctl stats answers $1" "$(head -n 1 /run/metrics.err)"
        fi
        broken=$(reconcile)
        expect "the counters reconcile $1" "$broken" [ -z "$broken" ]
}

# cpu1_is STATE [STEP]: CPU 1's state (and failed step) per damonctl cpus --json.
cpu1_is() {
        damonctl cpus --json 2>/dev/null | tr -d ' \n' > /run/cpus.json
        grep -qF "{\"cpu\":1,\"state\":\"$1\",\"failed_step\":${2:+\"$2\"}" /run/cpus.json
}

counter_above() {
        snap_metrics && [ "$(metric "$1" "$2")" -gt "$3" ]
}

cpu1_reopened() {
        snap_metrics && [ "$(metric create_total 1)" -ge "$1" ] && [ "$(cpu_state 1)" = running ]
}

set_cpu1_online() {
        write_file "$1" /sys/devices/system/cpu/cpu1/online
}

# The kernel breaks a pinned task's affinity when its CPU goes: pin the
# workload to CPU 1 again, so that CPU 1 has samples to count.
pin_workload_to_cpu1() {
        taskset -p 2 "$wl_pid" > /dev/null 2>&1
}

# CPU hotplug, in this guest only (never on a real machine): CPU 1 goes
# offline and comes back, once slowly and once faster than the daemon's
# once-a-second look at the online CPUs.
case_hotplug() {
        case=hotplug case_failed=0
        damon_reset
        start_daemon "$CONF/hotplug.conf"
        start_workload
        pin_workload_to_cpu1
        wait_for 10 counter_above callback_total 1 0
        expect "both CPUs are RUNNING, CPU 1 counting" "cpu0 $(cpu_state 0), cpu1 $(cpu_state 1) with $(metric callback_total 1) callbacks" \
                [ "$(cpu_state 0)" = running -a "$(cpu_state 1)" = running -a "$(metric callback_total 1)" -gt 0 ]

        why=$(set_cpu1_online 0)
        expect "CPU 1 goes offline" "$why; online: $(cat /sys/devices/system/cpu/online)" \
                [ "$(cat /sys/devices/system/cpu/online)" = 0 ]
        wait_for 5 cpu1_is error offline
        expect "CPU 1 leaves RUNNING: ERROR at offline, ENODEV" "$(cat /run/cpus.json)" \
                grep -q '"cpu":1,"state":"error","failed_step":"offline","errno":19' /run/cpus.json
        snap_metrics
        cb0=$(metric callback_total 0) cb1=$(metric callback_total 1)
        sleep 1.5
        snap_metrics
        expect "CPU 0 keeps RUNNING and counting" "cpu0 $(cpu_state 0), callbacks $cb0 -> $(metric callback_total 0)" \
                [ "$(cpu_state 0)" = running -a "$(metric callback_total 0)" -gt "$cb0" ]
        expect "CPU 1 counts nothing while offline" "callbacks $cb1 -> $(metric callback_total 1)" \
                [ "$(metric callback_total 1)" = "$cb1" ]
        expect_serving_and_reconciling "with CPU 1 offline"
        expect "the log names CPU 1 going offline once" "$(grep -c 'CPU1: .*ERROR at offline' "$daemon_log") lines" \
                [ "$(grep -c 'CPU1: .*ERROR at offline' "$daemon_log")" = 1 ]
        info "the log: $(grep 'CPU1: .*ERROR at offline' "$daemon_log")"

        why=$(set_cpu1_online 1)
        pin_workload_to_cpu1
        wait_for 5 cpu1_is running
        expect "CPU 1 returns to RUNNING" "$why; $(cat /run/cpus.json)" cpu1_is running
        wait_for 10 counter_above callback_total 1 "$cb1"
        expect "CPU 1's callbacks grow again, on from where they were" \
                "callbacks $cb1 -> $(metric callback_total 1), create $(metric create_total 1)" \
                [ "$(metric callback_total 1)" -gt "$cb1" -a "$(metric create_total 1)" = 2 ]
        expect "the log says once that CPU 1 is back" "$(grep -c 'CPU1 is online again' "$daemon_log") lines" \
                [ "$(grep -c 'CPU1 is online again' "$daemon_log")" = 1 ]

        # Offline and back in one go: the online list most likely never shows
        # it, the event's time_enabled standing still does.
        cb1=$(metric callback_total 1)
        why=$(set_cpu1_online 0 && set_cpu1_online 1)
        pin_workload_to_cpu1
        wait_for 10 cpu1_reopened 3
        expect "an offline-online flip between two looks: CPU 1 reopened and RUNNING" \
                "$why; create $(metric create_total 1), cpu1 $(cpu_state 1)" cpu1_reopened 3
        if grep -q "CPU1: its perf event stopped counting" "$daemon_log"; then
                info "the flip was noticed by CPU 1's reader: its event stopped counting"
        else
                info "the flip was noticed in the online list"
        fi
        wait_for 10 counter_above callback_total 1 "$cb1"
        expect "CPU 1's callbacks grow after the flip" "callbacks $cb1 -> $(metric callback_total 1)" \
                [ "$(metric callback_total 1)" -gt "$cb1" ]
        expect_serving_and_reconciling "after CPU 1 came back twice"

        stop_daemon_cleanly
        stop_workload
        [ "$case_failed" = 0 ] || show_log daemon "$daemon_log"
}

# The lines naming a DAMON failure or busy lock (one per step and errno, by design).
damon_causes() {
        grep -E 'DAMON: (.* (failed|busy): |kdamond [0-9]+ stopped without us)' "$daemon_log"
}

expect_each_cause_once() {
        twice=$(damon_causes | sort | uniq -d)
        expect "no DAMON failure is logged twice" "$twice" [ -z "$twice" ]
}

# damon_error_count STEP ERRNO: the daemon's count of that failure (0 if none).
damon_error_count() {
        n=$(damonctl --json damon 2>/dev/null | tr -d ' \n' |
            sed -n 's/.*{"step":"'"$1"'","errno":'"$2"',"count":\([0-9]*\)[,}].*/\1/p')
        echo "${n:-0}"
}

# damon_commits: the daemon's count of commits to DAMON.
damon_commits() {
        n=$(damonctl --json damon 2>/dev/null | tr -d ' \n' | sed -n 's/.*"commits":\([0-9]*\),.*/\1/p')
        echo "${n:-0}"
}

# wait_hints: until the workload's hot area is committed (OWN_WAIT at most).
wait_hints() {
        waited=0
        while [ "$waited" -lt "$OWN_WAIT" ] && running "$daemon_pid" && ! hints_settled; do
                sleep 1
                waited=$((waited + 1))
        done
        info "waited ${waited}s for the hints"
}

kdamond_state_is() {
        [ "$(read_file "$KD/0/state")" = "$1" ]
}

# Back on with a new kdamond thread and more commits than $1.
kdamond_restarted() {
        kdamond_state_is on && [ "$(read_file "$KD/0/pid")" != "$old_kdamond" ] && [ "$(damon_commits)" -gt "$1" ]
}

# Someone turns the daemon's own kdamond off, twice: the daemon notices,
# logs it once, turns it on again with its hints each time, and serves.
case_kdamond_off() {
        case=kdamond_off case_failed=0
        damon_reset
        start_daemon "$CONF/own.conf"
        start_workload
        wait_hints
        expect "the hints settled" "hot area [$hot_start,$hot_end), regions $(find_target; regions_of_target)" eventually hints_settled
        for round in 1 2; do
                commits=$(damon_commits)
                old_kdamond=$(read_file "$KD/0/pid")
                why=$(write_file off "$KD/0/state")
                info "round $round: kdamond $old_kdamond turned off ${why:-fine}, $commits commits so far"
                wait_for 15 kdamond_restarted "$commits"
                expect "round $round: the daemon turns its kdamond on again and commits afresh" \
                        "state $(read_file "$KD/0/state"), pid $old_kdamond -> $(read_file "$KD/0/pid"), commits $commits -> $(damon_commits)" \
                        eventually kdamond_restarted "$commits"
        done
        expect "the workload is its target again" "pid_targets: $(cat "$CTX"/targets/*/pid_target 2>/dev/null | tr '\n' ' ')" \
                eventually find_target_found
        expect "the log names the stop once, though it happened twice" \
                "$(grep -c 'kdamond 0 stopped without us' "$daemon_log") lines" \
                [ "$(grep -c 'kdamond 0 stopped without us' "$daemon_log")" = 1 ]
        count=$(damon_error_count kdamond-stopped 3)
        expect "damonctl damon counts both stops" "count $count" [ "$count" -ge 2 ]
        expect_each_cause_once
        expect_serving_and_reconciling "after the kdamond was turned off twice"
        stop_daemon_cleanly
        nr=$(read_file "$KD/nr_kdamonds") state=$(read_file "$KD/0/state")
        expect "the kdamond is off or gone after stop" "nr_kdamonds=$nr, state=$state" [ "$nr" = 0 -o "$state" = off ]
        stop_workload
        [ "$case_failed" = 0 ] || show_log daemon "$daemon_log"
}

# DAMON holds no exited process: the kdamond is off, or its target is alive
# and not the one that exited.
no_exited_target() {
        kdamond_state_is off && return 0
        pid=$(read_file "$CTX/targets/0/pid_target")
        [ "$pid" != "$exited_pid" ] && [ -d "/proc/$pid" ]
}

tracker_dropped_exited() {
        damonctl --json targets 2>/dev/null | tr -d ' \n' > /run/targets.json &&
        ! grep -q '"pid":'"$exited_pid"',' /run/targets.json
}

# The hinted workload, the kdamond's only target, exits: 6.12's kdamond
# stops by itself; the daemon drops the process, says so once, serves on,
# and the next workload gets its hints.
case_target_exit() {
        case=target_exit case_failed=0
        damon_reset
        start_daemon "$CONF/faults.conf"
        start_workload
        wait_hints
        expect "the hints settled" "hot area [$hot_start,$hot_end), regions $(find_target; regions_of_target)" eventually hints_settled
        exited_pid=$wl_pid
        stop_workload
        wait_for 10 tracker_dropped_exited
        expect "the tracker drops the exited workload" "$(cat /run/targets.json)" tracker_dropped_exited
        wait_for 5 no_exited_target
        expect "DAMON keeps no exited target" "state $(read_file "$KD/0/state"), pid_target $(read_file "$CTX/targets/0/pid_target")" \
                eventually no_exited_target
        # The daemon looks at its kdamond every hint interval.
        wait_for 5 grep -q 'kdamond 0 stopped without us' "$daemon_log"
        expect "the log says once that the kdamond stopped" "$(grep -c 'kdamond 0 stopped without us' "$daemon_log") lines" \
                [ "$(grep -c 'kdamond 0 stopped without us' "$daemon_log")" = 1 ]
        expect_serving_and_reconciling "after the target exited"

        start_workload
        wait_hints
        expect "the next workload gets its hints: kdamond on, its hot area committed" \
                "state $(read_file "$KD/0/state"), hot area [$hot_start,$hot_end), regions $(find_target; regions_of_target)" \
                eventually hints_settled
        expect_each_cause_once
        stop_daemon_cleanly
        stop_workload
        [ "$case_failed" = 0 ] || show_log daemon "$daemon_log"
}

min_one_and_off() {
        [ "$(read_file "$min_file")" = 1 ] && kdamond_state_is off
}

refused_at_least() {
        [ "$(damon_error_count commit 22)" -ge "$1" ]
}

# A real refusal by the kernel: with min_nr_regions 1 in the daemon's
# kdamond (DAMON wants at least 3), turning it on fails with EINVAL.  The
# daemon logs it once with the file and errno, backs off, and recovers once
# the value is fixed.
case_sysfs_error() {
        case=sysfs_error case_failed=0
        damon_reset
        start_daemon "$CONF/faults.conf"
        start_workload
        wait_hints
        expect "the hints settled" "hot area [$hot_start,$hot_end), regions $(find_target; regions_of_target)" eventually hints_settled
        min_file=$CTX/monitoring_attrs/nr_regions/min
        saved_min=$(read_file "$min_file")
        why=$(write_file 1 "$min_file" && write_file off "$KD/0/state")
        expect "min_nr_regions is 1 and the kdamond off" "${why:-min $(read_file "$min_file"), state $(read_file "$KD/0/state")}" \
                min_one_and_off
        refused="DAMON: commit failed: $KD/0/state: Invalid argument"
        tried=$(date +%s)
        wait_for 10 grep -qF "$refused" "$daemon_log"
        # A second try comes 2 s after the first, as the backoff has it.
        wait_for 8 refused_at_least 2
        count=$(damon_error_count commit 22) elapsed=$(($(date +%s) - tried))
        info "$count refusals in ${elapsed}s; the log: $(grep -F 'DAMON: commit failed' "$daemon_log")"
        expect "the kernel's refusal is logged once, with the file and errno" \
                "$(grep -cF "$refused" "$daemon_log") lines; DAMON lines: $(damon_causes | tr '\n' '|')" \
                [ "$(grep -cF "$refused" "$daemon_log")" = 1 ]
        expect "the daemon retries and counts every refusal" "count $count" [ "$count" -ge 2 ]
        shown=$(damonctl damon 2>&1 | grep -F "Failed: commit ($KD/0/state): Invalid argument")
        expect "damonctl damon names the refused file" "${shown:-$(damonctl damon 2>&1 | grep Failed)}" [ -n "$shown" ]
        # Without a backoff it would try every 500 ms.
        expect "the daemon backs off" "$count tries in ${elapsed}s" [ "$count" -le $((elapsed / 2 + 2)) ]
        expect "the kdamond stays off meanwhile" "state $(read_file "$KD/0/state")" kdamond_state_is off
        expect_serving_and_reconciling "while DAMON refuses"

        why=$(write_file "$saved_min" "$min_file")
        info "min_nr_regions back to $saved_min ${why}"
        wait_for 20 hints_settled
        expect "the daemon recovers once the value is fixed: kdamond on, hints committed" \
                "state $(read_file "$KD/0/state"), hot area [$hot_start,$hot_end), regions $(find_target; regions_of_target)" \
                eventually hints_settled
        expect_each_cause_once
        stop_daemon_cleanly
        stop_workload
        [ "$case_failed" = 0 ] || show_log daemon "$daemon_log"
        damon_reset
}

# shellcheck source=tests/qemu/value.sh
. "$CONF/value.sh"
# shellcheck source=tests/qemu/tier.sh
. "$CONF/tier.sh"

case_boot
# DP_VALUE=full (tools/bench --only value) or DP_VALUE_ONLY=1 runs the
# value benchmark alone, DP_TIER=full and DP_RECLAIM=full (tools/bench
# --only tier) the tiering and reclaim ones.
if [ "$VALUE_MODE" != full ] && [ -z "${DP_VALUE_ONLY:-}" ] && [ "$TIER_MODE" != full ] &&
   [ "$RECLAIM_MODE" != full ]; then
        case_own
        case_foreign
        case_attach
        case_hotplug
        case_kdamond_off
        case_target_exit
        case_sysfs_error
fi
[ "$TIER_MODE" = full ] || [ "$RECLAIM_MODE" = full ] || case_value
case_tier
case_reclaim
echo "DP-QEMU: DONE"
poweroff -f
