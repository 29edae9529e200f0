# shellcheck shell=sh
# shellcheck disable=SC2034,SC2154 # sourced: guest-test.sh and value.sh set and read these
# The tiering benchmark (issue #19), sourced by guest-test.sh after value.sh
# (whose watch_cpu it uses): the guest has two NUMA nodes, node 1 without
# CPUs standing for the slow tier (tests/qemu/run).  The workload
# (damon-perfd-workload --tier tier) places a busy hot area and a cold one
# on node 1 and reports every 200 ms, from move_pages(2), the fraction of
# its hot pages on node 0 and its cold pages there.  Three arms, in turns,
# with the same DAMON attributes (paddr, sample 5 ms, aggregation 100 ms,
# update 1 s, regions 10 to 1000) and the same two schemes:
#   migrate_hot  target_nid=0 nr_accesses 2-max          quota 32 MiB/s
#   migrate_cold target_nid=1 nr_accesses 0-0 age >= 5 s quota 16 MiB/s
# each rejecting its target node's memory (an address filter over it, the
# daemon's a reject=node:N it turns into one; DP_TIER_SKIP_TARGET_NODE=1,
# the default), as a careful user writes them:
# DAMOS charges a region's size to the quota however few of its pages it
# moved, and pages already on the target node are not moved.  Without it,
# the hot pages moved up took migrate_hot's quota every second (quota
# exceeded 41 times in 50 s, 16-19 MiB moved of 1.4 GiB tried) and the last
# ones on node 1 waited their turn; migrate_cold's went to node 1's idle
# memory (nothing moved of 670 MiB tried).
#   damon:  DAMON alone, written through sysfs as a user would;
#   daemon: damon-perfd, [DAMON] Mode=own, Targets=physical, the schemes as
#           Scheme= lines, migrate_hot limited to the sampled hot ranges
#           (reject=!hot: Linux 6.12 has no allow filters, 6.14) and those
#           spared from migrate_cold (reject=hot), region hints from the
#           page-fault samples;
#   daemon-wide: the same with migrate_hot on any access count (nr_accesses
#           0-max), so that it moves what the PMU saw even where DAMON's own
#           checks saw nothing (damon-perfd.conf(5)'s advice for allow=hot);
#   numab:  no DAMON, the kernel's automatic NUMA balancing on for the arm
#           (only when DP_TIER_ARMS names it): Linux's own way of moving
#           pages to the node that uses them.
# Linux 6.12 migrates only physical memory (vaddr's migrate_* came with
# 6.17), hence paddr in both arms.
#
# Each arm: the workload lays its areas out (first touches on node 1) and
# waits (--wait-go); the arm's mover starts (DAMON alone, the daemon and its
# kdamond, or NUMA balancing), and DP_TIER_SETTLE_S (1) later the workload
# starts using its hot area, and its clock.  So no arm sees the first
# touches' sweep, which is not use: with DAMON running through it, DAMON
# alone moved up whatever regions the sweep crossed, cold ones with them,
# often before the clock started (a piece of the hot set at t=0, or all of
# it within 0.4 s, with 4600 cold pages).  DP_TIER_DAMON_FIRST=1 starts the
# mover before the workload, as this case did before.
#
# No PMU in TCG: the page-fault software event samples instead, on the
# workload's sparse stream of userfaultfd write-protected stores in the hot
# area (the page stays put and is present when sampled, so the sample has
# the physical address a paddr hint needs).  One line per arm and rep:
#   DP-QEMU: TIER arm=damon|daemon|daemon-wide rep=N hot_pages=N ... to90_s=S hot_fast=F
#            cold_fast=N cold_fast_max=N ... kdamond_cpu_s=X daemon_cpu_s=X
#            hot_span_mib=N (the hot pages' physical spread, first to last)
#            hot_runs=N hot_run_median=N cold_between=N (the runs of adjacent
#            frames they lie in, the median run in pages, and the cold pages
#            between the first and last)
#            samples_per_s=N (daemon arms: the daemon's sample rate halfway)
#   DP-QEMU: TIER-SERIES arm=A rep=N hot_fast/cold_fast=F/N@S,... (each second)
# read by tools/bench_tier.py.
#
# Kernel parameters: DP_TIER=off (the default: it needs a guest with two
# nodes, which tests/qemu/run boots with DP_QEMU_NUMA=1), short (once, 20 s
# an arm), full (only this: DP_TIER_REPS times, DP_TIER_SECONDS an arm);
# DP_TIER_TRACE=1 adds the workload's reports, the hot filters at each
# second of DP_TIER_TRACE_AT (a comma-separated list: 1,2,...,8), damonctl
# damon at those of DP_TIER_TRACE_DAMONCTL_AT (2,4), and the daemon's log;
# DP_TIER_KTRACE=1 adds DAMON's own tracepoints over the slow node for the
# first DP_TIER_KTRACE_S (2) seconds of each arm's use: each aggregation's
# regions with accesses, and each region a scheme is applied to;
# DP_TIER_FAULTS_PER_S the sampled stores a second (200: what a page fault
# costs in TCG allows without starving the workload; a hardware PMU takes
# thousands); DP_TIER_TOUCH_MS how often
# the workload stores to each hot page (20; DAMON's 5 ms checks see a page
# stored to every 200 ms in one check of 40); DP_TIER_COLD_MIB the cold
# area (64); DP_TIER_PIECES how many pieces the hot area's pages lie in
# among the cold ones (1: one stretch above them; see the workload's
# --pieces); DP_TIER_ARMS a comma-separated subset of the arms (damon,
# daemon and daemon-wide; numab too, the kernel's own NUMA balancing with
# no DAMON at all, as a further peer);
# DP_TIER_SKIP_TARGET_NODE (1) whether each migrate scheme rejects its
# target node's memory (0: the schemes as above without the filter);
# DP_TIER_WARM_UP (1) whether a workload is laid out and ended before the
# first arm (tier_warm_up; 0: the first arm meets the fresh boot's memory);
# DP_TIER_NUMA_BALANCING the kernel's automatic NUMA balancing during the
# case (0, off: with it on, its hinting faults move the hot set to the node
# the workload runs on in every arm alike, a few seconds in, and it is no
# longer DAMON that is measured; 1 to see it).  Each arm's TIER line
# carries numab_migrated, the pages NUMA balancing moved in that arm.
# Assertions: 5 per repetition (one per arm, the daemon's clean exits), 6 with numab.

TIER_MODE=${DP_TIER:-off}
TIER_REPS=${DP_TIER_REPS:-1}
TIER_HOT_MIB=16
TIER_COLD_MIB=${DP_TIER_COLD_MIB:-64}
TIER_PIECES=${DP_TIER_PIECES:-1}
TIER_FAULTS_PER_S=${DP_TIER_FAULTS_PER_S:-200}
TIER_TOUCH_MS=${DP_TIER_TOUCH_MS:-20}
TIER_NUMA_BALANCING=${DP_TIER_NUMA_BALANCING:-0}
NUMAB=/proc/sys/kernel/numa_balancing
TIER_DAMON_FIRST=${DP_TIER_DAMON_FIRST:-0}
TIER_SETTLE_S=${DP_TIER_SETTLE_S:-1}
TIER_SKIP_TARGET_NODE=${DP_TIER_SKIP_TARGET_NODE:-1}
TIER_WARM_UP=${DP_TIER_WARM_UP:-1}

# no_kdamond_yet: what the daemon saw when it had no kdamond on after 30 s
# (a reclaim run in the session-20 bench, and one in six of a guest's: the
# daemon logged no commit while its target ran; its counters tell whether
# any sample of the target reached the tracker).
no_kdamond_yet() {
        info "the daemon has no kdamond on after 30 s"
        { damonctl stats; damonctl damon; } 2>&1 | head -n 80 | sed "s/^/DP-QEMU: LOG $arm no kdamond: /"
}

# Until kdamond 0 is on (at most 30 s): the daemon's arms start measuring
# once the daemon has its kdamond.
wait_kdamond_on() {
        for _ in $(seq 300); do
                [ "$(read_file "$KD/0/state")" = on ] && return 0
                sleep 0.1
        done
        return 1
}

# Whether kdamond 0 took CPU while the workload ran (watch_cpu's
# kdamond_cpu): an arm whose kdamond never ran measured nothing.  Its state
# at the end would not say: a vaddr kdamond stops by itself once its
# process has exited.
kdamond_ran() {
        awk -v s="$kdamond_cpu" 'BEGIN { exit !(s > 0) }'
}

# vmstat NAME: the counter from /proc/vmstat (0 if this kernel lacks it).
vmstat() {
        awk -v name="$1" '$1 == name { v = $2 } END { print v + 0 }' /proc/vmstat
}

# The top-level System RAM ranges, "START END" in bytes, end exclusive: the
# regions DAMON alone monitors, as the daemon takes them from /proc/iomem.
system_ram() {
        grep '^[0-9a-f]*-[0-9a-f]* : System RAM$' /proc/iomem | while IFS='- ' read -r start end _; do
                echo "$((0x$start)) $((0x$end + 1))"
        done
}

# node_span NODE: the node's memory as "START END" (bytes, end exclusive),
# from its memory blocks (this guest's nodes are one run of blocks each);
# nothing without memory blocks in sysfs.
node_span() {
        [ -r /sys/devices/system/memory/block_size_bytes ] || return 0
        read -r ns_bs < /sys/devices/system/memory/block_size_bytes
        ns_lo='' ns_hi=''
        for ns_m in /sys/devices/system/node/node"$1"/memory[0-9]*; do
                [ -e "$ns_m" ] || continue
                ns_i=${ns_m##*memory}
                if [ -z "$ns_lo" ] || [ "$ns_i" -lt "$ns_lo" ]; then ns_lo=$ns_i; fi
                if [ -z "$ns_hi" ] || [ "$ns_i" -gt "$ns_hi" ]; then ns_hi=$ns_i; fi
        done
        [ -n "$ns_lo" ] && echo "$((ns_lo * 0x$ns_bs)) $(((ns_hi + 1) * 0x$ns_bs))"
}

# skip_node_filter DIR NODE: the scheme at DIR rejects the node's memory
# (an address filter), with DP_TIER_SKIP_TARGET_NODE=1.
skip_node_filter() {
        [ "$TIER_SKIP_TARGET_NODE" = 1 ] || return 0
        # shellcheck disable=SC2046 # START END, two words
        set -- "$1" $(node_span "$2")
        [ $# = 3 ] || return 0
        write_file 1 "$1/filters/nr_filters" &&
        write_file addr "$1/filters/0/type" &&
        write_file Y "$1/filters/0/matching" &&
        write_file "$2" "$1/filters/0/addr_start" &&
        write_file "$3" "$1/filters/0/addr_end"
}

# skip_node_word NODE: the same as a Scheme= filter word (the daemon finds
# the node's memory blocks itself), or nothing.
skip_node_word() {
        if [ "$TIER_SKIP_TARGET_NODE" = 1 ]; then echo "reject=node:$1"; fi
}

KTRACE=/sys/kernel/tracing

# ktrace_start: DAMON's tracepoints recorded afresh (DP_TIER_KTRACE=1), on
# the clock /proc/uptime reads.
ktrace_start() {
        [ "${DP_TIER_KTRACE:-0}" = 1 ] || return 0
        if ! [ -d "$KTRACE/events/damon" ] && ! mount -t tracefs nodev "$KTRACE" 2>/dev/null; then
                info "DP_TIER_KTRACE: no tracefs at $KTRACE, so no DAMON trace"
                return 0
        fi
        write_file 0 "$KTRACE/tracing_on" &&
        write_file boot "$KTRACE/trace_clock" &&
        write_file 8192 "$KTRACE/buffer_size_kb" &&
        write_file 1 "$KTRACE/events/damon/damon_aggregated/enable" &&
        write_file 1 "$KTRACE/events/damon/damos_before_apply/enable" &&
        : > "$KTRACE/trace" &&
        write_file 1 "$KTRACE/tracing_on"
}

# ktrace_show FROM: what the tracepoints saw over the slow node in the
# DP_TIER_KTRACE_S seconds after uptime FROM, a line an aggregation (the
# regions with accesses, MiB:accesses/age) and one per scheme applied.
ktrace_show() {
        [ "${DP_TIER_KTRACE:-0}" = 1 ] && [ -r "$KTRACE/trace" ] || return 0
        write_file 0 "$KTRACE/tracing_on"
        # shellcheck disable=SC2046 # START END, two words
        set -- "$1" $(node_span 1)
        [ $# = 3 ] || return 0
        awk -v from="$1" -v span="${DP_TIER_KTRACE_S:-2}" -v lo="$2" -v hi="$3" '
                function flush() { if (line != "") print "DP-QEMU: LOG tier ktrace: " line; line = "" }
                /damon_aggregated:|damos_before_apply:/ {
                        for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) t = substr($i, 1, length($i) - 1) - from
                        if (t < 0 || t > span) next
                        for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+-[0-9]+:$/) break
                        split(substr($i, 1, length($i) - 1), a, "-")
                        if (a[2] <= lo || a[1] >= hi) next
                        if (/damon_aggregated:/) {
                                if ($(i + 1) == 0)
                                        next
                                kind = "regions"
                        } else {
                                kind = $0
                                sub(/.*scheme_idx=/, "", kind)
                                sub(/ .*/, "", kind)
                                kind = "apply " kind
                        }
                        key = sprintf("%.2f %s", t, kind)
                        if (key != last) { flush(); line = key ":"; last = key }
                        line = line sprintf(" %.1f-%.1f:%d/%d", a[1] / 1048576, a[2] / 1048576, $(i + 1), $(i + 2))
                }
                END { flush() }' "$KTRACE/trace" | head -n "${DP_TIER_KTRACE_LINES:-120}"
        : > "$KTRACE/trace"
}

# tier_scheme DIR ACTION NID NR_MIN NR_MAX AGE_MIN QUOTA_BYTES
tier_scheme() {
        skip_node_filter "$1" "$3" &&
        write_file "$2" "$1/action" &&
        write_file "$3" "$1/target_nid" &&
        write_file 0 "$1/access_pattern/sz/min" &&
        write_file 18446744073709551615 "$1/access_pattern/sz/max" &&
        write_file "$4" "$1/access_pattern/nr_accesses/min" &&
        write_file "$5" "$1/access_pattern/nr_accesses/max" &&
        write_file "$6" "$1/access_pattern/age/min" &&
        write_file 4294967295 "$1/access_pattern/age/max" &&
        write_file "$7" "$1/quotas/bytes" &&
        write_file 1000 "$1/quotas/reset_interval_ms"
}

# DAMON alone, as a user would run it: kdamond 0 on the physical space.
tier_damon_start() {
        write_file 1 "$KD/nr_kdamonds" &&
        write_file 1 "$KD/0/contexts/nr_contexts" &&
        write_file paddr "$CTX/operations" &&
        write_file 5000 "$CTX/monitoring_attrs/intervals/sample_us" &&
        write_file 100000 "$CTX/monitoring_attrs/intervals/aggr_us" &&
        write_file 1000000 "$CTX/monitoring_attrs/intervals/update_us" &&
        write_file 10 "$CTX/monitoring_attrs/nr_regions/min" &&
        write_file 1000 "$CTX/monitoring_attrs/nr_regions/max" &&
        write_file 1 "$CTX/targets/nr_targets" || return 1
        ranges=$(system_ram)
        write_file "$(echo "$ranges" | wc -l)" "$CTX/targets/0/regions/nr_regions" || return 1
        i=0
        echo "$ranges" | while read -r start end; do
                write_file "$start" "$CTX/targets/0/regions/$i/start" &&
                write_file "$end" "$CTX/targets/0/regions/$i/end" || exit 1
                i=$((i + 1))
        done || return 1
        write_file 2 "$CTX/schemes/nr_schemes" &&
        tier_scheme "$CTX/schemes/0" migrate_hot 0 2 4294967295 0 33554432 &&
        tier_scheme "$CTX/schemes/1" migrate_cold 1 0 0 50 16777216 &&
        write_file on "$KD/0/state"
}

# daemon_arm [ARM]: whether the arm (the current one) runs the daemon.
daemon_arm() {
        case ${1:-$arm} in daemon|daemon-wide) return 0 ;; esac
        return 1
}

# end_arm ARM: the daemon's arms stop it (and show its log if the case
# failed); every arm leaves DAMON as it found it.
end_arm() {
        if daemon_arm "$1"; then
                stop_daemon_cleanly
                [ "$case_failed" = 0 ] || show_log daemon "$daemon_log"
        fi
        damon_reset
}

# tier_conf MIGRATE_HOT_NR_ACCESSES
tier_conf() {
        own_conf /run/tier.conf physical 1000 \
                "Scheme=migrate_hot target_nid=0 nr_accesses=$1 quota_bytes=32M quota_reset=1s reject=!hot $(skip_node_word 0)" \
                "Scheme=migrate_cold target_nid=1 nr_accesses=0-0 age=5s-max quota_bytes=16M quota_reset=1s reject=hot $(skip_node_word 1)"
}

# filter_ranges SCHEME_DIR: each address filter as MATCHING:START-END in MiB.
filter_ranges() {
        fr_n=$(read_file "$1/filters/nr_filters") || return 0
        fr_i=0
        while [ "$fr_i" -lt "$fr_n" ]; do
                fr_f=$1/filters/$fr_i
                [ "$(read_file "$fr_f/type")" = addr ] &&
                        printf '%s:%s-%s ' "$(read_file "$fr_f/matching")" \
                                $(($(read_file "$fr_f/addr_start") >> 20)) $(($(read_file "$fr_f/addr_end") >> 20))
                fr_i=$((fr_i + 1))
        done
}

# tier_start_arm: what moves pages in this arm, started.
tier_start_arm() {
        if [ "$arm" = numab ]; then
                write_file 1 "$NUMAB" > /dev/null
        elif daemon_arm; then
                # daemon-wide: migrate_hot on every access count, so that
                # what the PMU saw hot moves even where DAMON saw nothing.
                if [ "$arm" = daemon ]; then tier_conf 2-max; else tier_conf 0-max; fi
                # Traced, its debug log too: when each commit went in.
                start_daemon /run/tier.conf ${DP_TIER_TRACE:+"--verbose"}
                # Every arm's kdamond runs before the use starts.
                wait_kdamond_on || no_kdamond_yet
        else
                why=$(tier_damon_start) || info "DAMON alone did not start: $why"
        fi
}

# tier_warm_up: one workload laid out and ended before the first arm, so
# that no arm meets a fresh boot's free memory.  There the first workload
# gets its hot set in one stretch of frames (16 MiB first to last); the
# later ones get theirs among the frames earlier ones freed (16-128 MiB).
# DAMON alone, first in rep 1, found that first one in 0.2-0.6 s in 8 boots
# of 8, and in under a second in 4 of its 25 later runs: the boot, not the
# arm, decided.  A host that has run for a while has no such stretch.
tier_warm_up() {
        wu_out=/run/tier-warm-up.out
        damon-perfd-workload --tier tier --hot-mib "$TIER_HOT_MIB" --cold-mib "$TIER_COLD_MIB" \
                --pieces "$TIER_PIECES" --wait-go --seconds 1 > "$wu_out" 2> "$wu_out.err" &
        wu_job=$!
        wait_output "$wu_out" || info "the warm-up workload printed no layout in 60 s"
        kill "$wu_job" 2> /dev/null
        wait "$wu_job" 2> /dev/null
        info "warm-up: a workload laid out and ended first ($(sed -n 's/^workload: physical: //p' "$wu_out.err"))"
}

# tier_arm ARM REP SECONDS
tier_arm() {
        arm=$1 rep=$2 seconds=$3
        damon_reset
        out=/run/tier-$arm.out
        rm -f "$out" "$out.err"
        daemon_pid=
        [ "$TIER_DAMON_FIRST" = 1 ] && tier_start_arm
        damon-perfd-workload --tier tier --hot-mib "$TIER_HOT_MIB" --cold-mib "$TIER_COLD_MIB" \
                --touch-ms "$TIER_TOUCH_MS" --faults-per-s "$TIER_FAULTS_PER_S" --pieces "$TIER_PIECES" \
                --wait-go --seconds "$seconds" > "$out" 2> "$out.err" &
        wl_job=$!
        wait_output "$out" || true     # judged below, by what the workload printed
        if [ "$TIER_DAMON_FIRST" != 1 ]; then
                tier_start_arm
                sleep "$TIER_SETTLE_S"
        fi
        numab0=$(vmstat numa_pages_migrated)
        [ -n "${DP_TIER_TRACE:-}" ] && info "$arm: the use starts at $(cut -d' ' -f1 /proc/uptime) s of uptime"
        ktrace_start
        use_start=$(cut -d' ' -f1 /proc/uptime)
        kill -USR1 "$wl_job"
        # The daemon's sample rate halfway: the workload's 200 a second and
        # whatever else faults (the guest's own scripts: keep them quiet).
        rm -f /run/tier-rate
        if daemon_arm; then
                (sleep $((seconds / 2)); damonctl stats 2>&1 | sed -n 's/.*sample rate: \([0-9]*\).*/\1/p' > /run/tier-rate) &
                rate_job=$!
        fi
        trace_job=
        if [ -n "${DP_TIER_TRACE:-}" ] && daemon_arm; then
                (last=0
                for t in $(echo "${DP_TIER_TRACE_AT:-1,2,3,4,5,6,7,8}" | tr ',' ' '); do
                        sleep $((t - last))
                        last=$t
                        info "trace $t s: filters $(read_file "$CTX/schemes/1/filters/nr_filters")" \
                                "$(read_file "$CTX/schemes/2/filters/nr_filters"); $(tail -n 1 "$out");" \
                                "migrate_hot's address filters (MiB): $(filter_ranges "$CTX/schemes/1")"
                        case ",${DP_TIER_TRACE_DAMONCTL_AT:-2,4}," in *",$t,"*)
                                damonctl damon 2>&1 | head -n 80 | sed "s/^/DP-QEMU: LOG tier damonctl at $t s: /" ;;
                        esac
                done
                damonctl stats 2>&1 | head -n 40 | sed "s/^/DP-QEMU: LOG tier stats at $last s: /") &
                trace_job=$!
        fi
        # The trace in the background: watch_cpu reads from the start.
        watch_cpu "$wl_job"
        wait "$wl_job" ${trace_job:+"$trace_job"}
        daemon_arm && wait "$rate_job"
        if [ -n "${DP_TIER_TRACE:-}" ]; then
                sed "s/^/DP-QEMU: LOG tier $arm: /" "$out.err"
                daemon_arm && grep -v 'debug' "$daemon_log" | head -n 40 | show_log daemon
                daemon_arm && grep -E 'DAMON commit at|hot filters|DAMON pass early|DAMON hint at' "$daemon_log" | head -n 60 | show_log daemon
                grep 'System RAM' /proc/iomem | sed "s/^/DP-QEMU: LOG tier iomem: /"
                grep '^TIER-AT ' "$out" | head -n 30 | sed "s/^/DP-QEMU: LOG tier $arm: /"
        fi
        ktrace_show "$use_start"
        damon_ran=$(kdamond_ran && echo 1 || echo 0)
        if [ "$arm" = numab ]; then
                # No DAMON: what counts is that NUMA balancing was on.
                damon_ran=$([ "$(cat "$NUMAB")" = 1 ] && echo 1 || echo 0)
                write_file "$TIER_NUMA_BALANCING" "$NUMAB" > /dev/null
        fi
        write_file update_schemes_stats "$KD/0/state" > /dev/null
        if daemon_arm; then
                info "the daemon's $(damonctl damon 2>&1 | grep -i -E 'scheme|migrate|commit|error' | tr -s ' ' | tr '\n' ';')"
                info "$arm, rep $rep: the daemon's CPU seconds by thread: $(thread_cpu "$daemon_pid")"
        elif [ "$arm" = damon ]; then
                for s in 0 1; do
                        info "DAMON alone's scheme $s: $(read_file "$CTX/schemes/$s/action"):" \
                                "sz_applied=$(read_file "$CTX/schemes/$s/stats/sz_applied")"
                done
        fi
        summary=$(grep '^TIER ' "$out" | cut -d' ' -f2-)
        # How far apart in physical memory the hot pages lie, first to last
        # (a fresh boot's first workload gets them in one stretch; later
        # ones, among the frames earlier workloads freed).
        # shellcheck disable=SC2046 # LO HI, two words
        set -- $(sed -n 's/^workload: physical: hot 0x\([0-9a-f]*\)-0x\([0-9a-f]*\),.*/\1 \2/p' "$out.err")
        hot_span=$([ $# = 2 ] && echo $(((0x$2 - 0x$1) >> 20)) || echo -1)
        # And how they lie among the cold ones: in how many runs of adjacent
        # frames, the median run, and the cold pages between first and last.
        # shellcheck disable=SC2046 # RUNS MEDIAN COLD, three words
        set -- $(sed -n 's/^workload: physical: hot pages in \([0-9]*\) runs .*median \([0-9]*\) pages.*; \([0-9]*\) cold pages.*/\1 \2 \3/p' "$out.err")
        [ $# = 3 ] || set -- -1 -1 -1
        echo "DP-QEMU: TIER arm=$arm rep=$rep $summary kdamond_cpu_s=$kdamond_cpu daemon_cpu_s=$daemon_cpu" \
                "numab_migrated=$(($(vmstat numa_pages_migrated) - numab0)) damon_ran=$damon_ran hot_span_mib=$hot_span" \
                "hot_runs=$1 hot_run_median=$2 cold_between=$3" \
                "samples_per_s=$(cat /run/tier-rate 2>/dev/null || echo 0)"
        echo "DP-QEMU: TIER-SERIES arm=$arm rep=$rep hot_fast/cold_fast=$(awk '/^TIER-AT / {
                split($2, t, "="); split($3, f, "="); split($4, c, "=");
                if (t[2] + 0 >= next_s) { printf "%s%s/%s@%d", sep, f[2], c[2], t[2]; sep = ","; next_s = int(t[2]) + 1 } }' "$out")"
        # (for numab, "DAMON" is NUMA balancing)
        expect "tier, $arm: the workload reported where its pages are, DAMON ran" \
                "workload: $(tail -n 3 "$out.err" | tr '\n' '|'); DAMON ran: $damon_ran" \
                [ -n "$summary" -a "$damon_ran" = 1 ]
        end_arm "$arm"
}

case_tier() {
        case=tier case_failed=0
        [ "$TIER_MODE" = off ] && return 0
        if [ ! -d /sys/devices/system/node/node1 ]; then
                fail "the guest has two NUMA nodes" "no node1: boot with DP_QEMU_NUMA=1"
                return 0
        fi
        numab_before=
        if [ -e "$NUMAB" ]; then
                numab_before=$(cat "$NUMAB")
                write_file "$TIER_NUMA_BALANCING" "$NUMAB" >/dev/null
        fi
        info "automatic NUMA balancing during the case: $(cat "$NUMAB" 2>/dev/null || echo "not in this kernel")" \
                "(was ${numab_before:-absent})"
        info "the page-fault software event samples in place of a PMU (write-protected stores in the hot area)"
        info "node 0's memory: $(node_span 0); node 1's: $(node_span 1);" \
                "each migrate scheme rejects its target node's: $TIER_SKIP_TARGET_NODE"
        [ "$TIER_MODE" = short ] && seconds=20 || seconds=${DP_TIER_SECONDS:-60}
        [ "$TIER_WARM_UP" = 1 ] && tier_warm_up
        rep=1
        while [ "$rep" -le "$TIER_REPS" ]; do
                if [ $((rep % 2)) = 1 ]; then
                        arms="damon daemon daemon-wide numab"
                else
                        arms="numab daemon-wide daemon damon"
                fi
                for arm in $arms; do
                        case ",${DP_TIER_ARMS:-damon,daemon,daemon-wide}," in *",$arm,"*) ;; *) continue ;; esac
                        tier_arm "$arm" "$rep" "$seconds"
                done
                [ "$TIER_MODE" = short ] && break
                rep=$((rep + 1))
        done
        [ -z "$numab_before" ] || write_file "$numab_before" "$NUMAB" >/dev/null
}

# ---- reclaim ----
# The reclaim benchmark (issue #19), on the same workload without nodes
# (--tier reclaim: a hot area stored to every RECLAIM_TOUCH_MS, a cold one
# touched once), with a swap disk (tests/qemu/run's DP_QEMU_SWAP_MIB) for
# DAMOS pageout, the same scheme in both arms:
#   pageout nr_accesses 0-0 age >= 2 s, no quota
# (with a bytes quota and no weights, DAMON spends it in address order on
# vaddr's regions over unmapped gaps, tried but with nothing to page out,
# and never reaches the cold area: seen in the guest, nr_applied 0)
#   damon:  DAMON alone on the workload's pid (vaddr), through sysfs;
#   daemon: damon-perfd Mode=own, Targets=PID, MaxTargets=1, the scheme as a
#           Scheme= line with the sampled hot ranges spared (reject=hot).
# Proactive reclaim, as DAMON_RECLAIM does it, not the kernel's own under a
# limit: that would page out for both arms alike.  One line per arm and rep:
#   DP-QEMU: RECLAIM arm=A rep=N hot_pages=N cold_pages=N majflt=N
#            hot_out_max=N cold_out=N ... kdamond_cpu_s=X daemon_cpu_s=X
# majflt: the workload's major faults (all in the hot area: the cold one is
# never touched again); cold_out: cold pages swapped out at the end;
# pswpout: pages the guest wrote to swap during the arm.
# DP_RECLAIM (a kernel parameter): off (the default), full (only this,
# DP_RECLAIM_REPS times, DP_RECLAIM_SECONDS an arm).  Assertions: 3 a rep.

RECLAIM_MODE=${DP_RECLAIM:-off}
RECLAIM_REPS=${DP_RECLAIM_REPS:-1}
RECLAIM_TOUCH_MS=${DP_RECLAIM_TOUCH_MS:-200}

# The swap disk: virtio_blk from the initramfs, the whole disk as swap.
swap_on() {
        [ -b /dev/vda ] || insmod /lib/modules/virtio_blk.ko 2>&1 || return 1
        for _ in $(seq 50); do
                [ -b /dev/vda ] && break
                sleep 0.1
        done
        mkswap /dev/vda > /dev/null 2>&1 && swapon /dev/vda 2>&1
}

# reclaim_conf PID
reclaim_conf() {
        own_conf /run/reclaim.conf "$1" 1000 MaxTargets=1 "Scheme=pageout nr_accesses=0-0 age=2s-max reject=hot"
}

# reclaim_arm ARM REP SECONDS
reclaim_arm() {
        arm=$1 rep=$2 seconds=$3
        damon_reset
        swapoff /dev/vda 2>/dev/null
        swap_on > /dev/null
        out=/run/reclaim-$arm.out
        rm -f "$out" "$out.err"
        daemon_pid=
        trace_job=
        pswpout0=$(awk '/^pswpout / { print $2 }' /proc/vmstat)
        damon-perfd-workload --tier reclaim --hot-mib "$TIER_HOT_MIB" --cold-mib 128 --touch-ms "$RECLAIM_TOUCH_MS" \
                --faults-per-s 200 --seconds "$seconds" > "$out" 2> "$out.err" &
        wl_job=$!
        wait_output "$out" || true     # judged below, by what the workload printed
        # Both arms start on the workload's pid once it is laid out: the
        # daemon's Targets=all would pick whichever process faults most,
        # which in this guest is as likely the test's own shell.
        if [ "$arm" = daemon ]; then
                reclaim_conf "$wl_job"
                start_daemon /run/reclaim.conf ${DP_TIER_TRACE:+"--verbose"}
                wait_kdamond_on || no_kdamond_yet
        else
                why=$(damon_alone_start "$wl_job" 1000 pageout 0 20) || info "DAMON alone did not start: $why"
        fi
        if [ -n "${DP_TIER_TRACE:-}" ]; then
                (sleep 10
                write_file update_schemes_stats "$KD/0/state" > /dev/null
                for f in "$CTX"/schemes/*/stats/*; do
                        echo "DP-QEMU: LOG reclaim $arm at 10 s: ${f#"$CTX"/}=$(read_file "$f")"
                done
                echo "DP-QEMU: LOG reclaim $arm at 10 s: $(grep pswp /proc/vmstat | tr '\n' ' ') $(tail -n 1 "$out")") &
                trace_job=$!
        fi
        watch_cpu "$wl_job"
        wait "$wl_job" ${trace_job:+"$trace_job"}
        if [ -n "${DP_TIER_TRACE:-}" ]; then
                sed "s/^/DP-QEMU: LOG reclaim $arm: /" "$out.err"
                grep '^RECLAIM-AT ' "$out" | awk 'NR % 5 == 1' | sed "s/^/DP-QEMU: LOG reclaim $arm: /"
                [ "$arm" = daemon ] && show_log daemon "$daemon_log" | head -n 40
        fi
        damon_ran=$(kdamond_ran && echo 1 || echo 0)
        summary=$(grep '^RECLAIM ' "$out" | cut -d' ' -f2-)
        echo "DP-QEMU: RECLAIM arm=$arm rep=$rep $summary pswpout=$(($(awk '/^pswpout / { print $2 }' /proc/vmstat) - pswpout0)) kdamond_cpu_s=$kdamond_cpu daemon_cpu_s=$daemon_cpu damon_ran=$damon_ran"
        expect "reclaim, $arm: the workload reported its faults and resident pages, DAMON ran" \
                "workload: $(tail -n 3 "$out.err" | tr '\n' '|'); DAMON ran: $damon_ran" \
                [ -n "$summary" -a "$damon_ran" = 1 ]
        end_arm "$arm"
}

case_reclaim() {
        case=reclaim case_failed=0
        [ "$RECLAIM_MODE" = off ] && return 0
        if ! why=$(swap_on); then
                fail "the guest has a swap disk" "${why:-no /dev/vda}: boot with DP_QEMU_SWAP_MIB=N"
                return 0
        fi
        info "the page-fault software event samples in place of a PMU (write-protected stores in the hot area)"
        seconds=${DP_RECLAIM_SECONDS:-30}
        rep=1
        while [ "$rep" -le "$RECLAIM_REPS" ]; do
                if [ $((rep % 2)) = 1 ]; then
                        reclaim_arm damon "$rep" "$seconds"
                        reclaim_arm daemon "$rep" "$seconds"
                else
                        reclaim_arm daemon "$rep" "$seconds"
                        reclaim_arm damon "$rep" "$seconds"
                fi
                rep=$((rep + 1))
        done
}
