#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The daemon's static probes (lib/basic/probes.h).
#
#   test-usdt.sh notes DAEMON USDT SRCDIR
#       readelf -n lists every damon_perfd probe with its number of arguments;
#       with the usdt option off (USDT=0) the daemon has none at all.
#   test-usdt.sh live DAEMON USDT WORKLOAD
#       as root: perf probe adds the probes, perf record counts them while the
#       daemon samples page faults for ~3 s against the demo workload (every
#       probe but damon_commit fires).  The probes are always deleted again,
#       also on failure.
#
# Exit 77 (skipped) when the option is off (live) or without root or perf.
set -euo pipefail

mode=$1 daemon=$2 usdt=$3

# Name and number of arguments of every probe.
declare -A arity=(
        [sample]=5 [report_missed]=3 [ring_overflow]=2 [drain]=2 [state_change]=4 [damon_commit]=4
)

skip() {
        echo "SKIP: $*"
        exit 77
}

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

# "name nr_args" per probe site of provider damon_perfd.
list_probes() {
        readelf -n "$1" | awk '
                /^ *Provider: / { provider = $2 }
                /^ *Name: / { name = $2 }
                /^ *Arguments:/ && provider == "damon_perfd" { print name, NF - 1 }'
}

check_notes() {
        local srcdir=$1 sites name n
        sites=$(list_probes "$daemon")

        if [ "$usdt" != 1 ]; then
                [ -z "$sites" ] || fail "usdt option off, yet the daemon has probes: $sites"
                echo "usdt option off: no damon_perfd probes in $daemon, as expected"
                return
        fi
        [ -n "$sites" ] || fail "no damon_perfd probes in $daemon"
        while read -r name n; do
                [ -n "${arity[$name]:-}" ] || fail "unknown probe damon_perfd:$name"
                [ "$n" -eq "${arity[$name]}" ] || fail "damon_perfd:$name has $n arguments, not ${arity[$name]}"
        done <<< "$sites"
        for name in "${!arity[@]}"; do
                # damon_commit appears once the DAMON thread calls it.
                if [ "$name" = damon_commit ] && ! grep -rqs 'DP_PROBE4(damon_commit' "$srcdir/daemon"; then
                        echo "damon_perfd:damon_commit: not called yet in $srcdir/daemon, not required"
                        continue
                fi
                grep -q "^$name " <<< "$sites" || fail "probe damon_perfd:$name is missing"
        done
        echo "probe sites (name, arguments):"
        sort <<< "$sites" | uniq -c
}

tmp="" wpid=""

check_live() {
        local workload=$1 count
        [ "$usdt" = 1 ] || skip "the usdt option is off: the daemon has no probes"
        [ "$(id -u)" -eq 0 ] || skip "perf probe needs root"
        command -v perf > /dev/null || skip "perf is not installed (linux-perf)"
        [ -d /sys/bus/event_source/devices/uprobe ] || skip "the kernel has no uprobe PMU"

        tmp=$(mktemp -d)
        # Trace events are global: one run at a time, and the group is ours alone.
        exec 9> /run/lock/damon-perfd-usdt-test.lock
        flock -w 300 9 || fail "another test-usdt run holds /run/lock/damon-perfd-usdt-test.lock"
        cleanup() {
                perf probe -q -d 'sdt_damon_perfd:*' 2> /dev/null || true
                [ -z "$wpid" ] || kill "$wpid" 2> /dev/null || true
                [ -z "$wpid" ] || wait "$wpid" 2> /dev/null || true
                [ -z "$tmp" ] || rm -rf "$tmp"
        }
        trap cleanup EXIT
        export PERF_BUILDID_DIR=$tmp/debug
        perf probe -q -d 'sdt_damon_perfd:*' 2> /dev/null || true   # a stale run's

        perf probe -x "$daemon" -a 'sdt_damon_perfd:*' > "$tmp/probe.log" 2>&1 ||
                { cat "$tmp/probe.log"; fail "perf probe could not add the probes"; }
        grep -q 'sdt_damon_perfd:sample' "$tmp/probe.log" || { cat "$tmp/probe.log"; fail "no sample probe added"; }

        "$workload" --hot-mib 4 --cold-mib 8 --rate 40 --seconds 20 > "$tmp/workload.json" &
        wpid=$!
        for _ in $(seq 50); do [ -s "$tmp/workload.json" ] && break; sleep 0.1; done
        [ -s "$tmp/workload.json" ] || fail "the workload did not start"

        # Page faults on every CPU, this workload the one target; no varlink
        # socket and no DAMON, whatever /etc says.  A 64-sample queue cannot
        # take a reader's wakeup of the workload's ~1000 faults: overflows.
        printf '[DAMON]\nMode=off\n' > "$tmp/damon-perfd.conf"
        perf record -q -e 'sdt_damon_perfd:*' -o "$tmp/perf.data" -- \
                "$daemon" --config="$tmp/damon-perfd.conf" --source=pagefault --pid="$wpid" \
                --queue-size=64 --duration=3 --no-varlink > "$tmp/daemon.log" 2>&1 ||
                { cat "$tmp/daemon.log"; fail "perf record or the daemon failed"; }
        perf script -i "$tmp/perf.data" -F event,trace > "$tmp/events" 2> /dev/null

        for name in sample state_change drain ring_overflow; do
                count=$(grep -c "sdt_damon_perfd:$name:" "$tmp/events" || true)
                echo "damon_perfd:$name: $count events"
                [ "$count" -gt 0 ] || { head -20 "$tmp/events"; fail "no damon_perfd:$name event recorded"; }
        done
        echo "damon_perfd:report_missed: $(grep -c 'sdt_damon_perfd:report_missed:' "$tmp/events" || true) events"
        # arg3 of sample is the pid: the workload's faults were filed.
        count=$(grep -c "sdt_damon_perfd:sample:.* arg3=$wpid " "$tmp/events" || true)
        echo "damon_perfd:sample with the workload's pid $wpid: $count events"
        [ "$count" -gt 0 ] || fail "no sample event carries the workload's pid $wpid"
        # arg2 of ring_overflow is the queue's depth: full.
        grep -q "sdt_damon_perfd:ring_overflow:.* arg2=64\$" "$tmp/events" ||
                { grep -m3 ring_overflow "$tmp/events"; fail "ring_overflow does not report the full queue's depth 64"; }
}

case $mode in
notes) check_notes "$4" ;;
live) check_live "$4" ;;
*) fail "usage: test-usdt.sh notes|live DAEMON USDT SRCDIR|WORKLOAD" ;;
esac
