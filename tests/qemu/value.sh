# shellcheck shell=sh
# The value benchmark (issue #15), sourced by guest-test.sh: DAMON alone
# and DAMON with damon-perfd on the same workloads, the arms alternating,
# with the same DAMON attributes in both (vaddr, sample 5 ms, aggregation
# 100 ms, update 1 s, regions 10 to MAX, one stat scheme).  The workload
# (damon-perfd-workload --shape) keeps its hot memory busy with plain stores,
# which DAMON sees, plus a sparse stream of re-faults inside it, which the
# page-fault control samples in place of a hardware PMU; its --observe
# thread reads DAMON's own tried_regions every 200 ms and judges them
# against the true hot set.  One line per scenario, arm and phase:
#   DP-QEMU: VALUE scenario=S arm=damon|daemon|filter rep=N phase=P ... kdamond_cpu_s=X daemon_cpu_s=X
# (the fields: tools/workload-observe.c), read by tools/bench-run.py.
#
# The physical address space is left out: the page-fault control gives no
# physical addresses, so the daemon's hints there would be guesses.
#
# DP_VALUE (a kernel parameter): short (the default: every scenario once,
# briefly, after the other cases), full (only these, at full length,
# DP_VALUE_REPS times), off.  DP_VALUE_SCENARIOS and DP_VALUE_ARMS (names
# separated by commas) pick scenarios and arms; DP_VALUE_TRACE=1 prints every
# snapshot's regions and the daemon's hints and commits; DP_VALUE_SEED lays
# the chunks out otherwise (the workload's --seed, 1 by default): in TCG how
# many of them DAMON undercounts depends on the layout (README, "The chunks
# and the emulator's TLB").

VALUE_MODE=${DP_VALUE:-short}
VALUE_REPS=${DP_VALUE_REPS:-1}
# The arms (value_arm); the filter arm only when asked for (DP_VALUE_ARMS=
# damon,daemon,filter): it costs half as much again, and its first runs are
# not understood yet (see README).
VALUE_ARMS=$(echo "${DP_VALUE_ARMS:-damon daemon}" | tr ',' ' ')

# CPU time (user + system) of process $1 so far in hundredths of a second
# (USER_HZ is 100 on x86), into cpu_cs; 0 if it is gone.
cpu_of() {
        cpu_cs=0
        read_stat "$1" || return 0
        # shellcheck disable=SC2086 # the fields, split
        set -- $stat_fields
        cpu_cs=$((${12} + ${13}))
}

# Hundredths of a second $1 as seconds, "12.07".
seconds_of() {
        set -- $(($1 / 100)) $(($1 % 100))
        [ "$2" -lt 10 ] && set -- "$1" "0$2"
        echo "$1.$2"
}

# CPU seconds (user + system) of process $1 so far, or 0 if it is gone.
cpu_s() {
        cpu_of "$1"
        seconds_of "$cpu_cs"
}

# The pid of kdamond 0: the guest runs no other, so the kernel thread named
# kdamond.N is it.  Not DAMON's pid file: reading it needs DAMON's sysfs lock,
# which the daemon's commits and read-backs hold for an aggregation or more
# each, so read_file's second of retries can miss it every time (a daemon arm
# whose kdamond paged out 25000 pages read 0 s of kdamond CPU).
# Into kd_now, empty when there is none; read_stat's builtins only.
kdamond_pid() {
        kd_now=
        for comm in /proc/[0-9]*/comm; do
                name=
                read -r name 2>/dev/null < "$comm"
                case $name in
                kdamond.[0-9]*) kd_now=${comm#/proc/} kd_now=${kd_now%/comm}; return 0 ;;
                esac
        done
        return 1
}

# watch_cpu PID: until PID exits, the kdamonds' CPU seconds (a kdamond the
# daemon restarts gets a new pid: each one's last reading is added) and the
# daemon's, in kdamond_cpu and daemon_cpu.  Read while the workload runs:
# its kdamond ends with it.
watch_cpu() {
        kd_sum=0 kd_pid= kd_last=0 daemon_cs=0
        while running "$1"; do
                if kdamond_pid; then
                        if [ "$kd_now" != "$kd_pid" ]; then
                                kd_sum=$((kd_sum + kd_last))
                                kd_pid=$kd_now kd_last=0
                        fi
                        # 0 when the kdamond exited between the look and the read.
                        cpu_of "$kd_now"
                        [ "$cpu_cs" -gt 0 ] && kd_last=$cpu_cs
                fi
                if [ -n "$daemon_pid" ] && running "$daemon_pid"; then
                        cpu_of "$daemon_pid"
                        daemon_cs=$cpu_cs
                fi
                sleep 1
        done
        kdamond_cpu=$(seconds_of $((kd_sum + kd_last)))
        daemon_cpu=$(seconds_of "$daemon_cs")
}

# "name=seconds ..." for each thread of process $1.
thread_cpu() {
        for task in /proc/"$1"/task/[0-9]*; do
                printf '%s=%s ' "$(cat "$task/comm" 2>/dev/null)" "$(cpu_s "${task#/proc/}")"
        done
}

# value_conf MAX_NR_REGIONS [SCHEME]: the daemon's configuration for the same
# attributes, with SCHEME (a Scheme= value) as DAMON's scheme 1.
value_conf() {
        own_conf /run/value.conf all "$1" MaxTargets=1 ${2:+"Scheme=$2"}
}

# value_arm SCENARIO ARM REP MAX_NR_REGIONS SECONDS WORKLOAD_OPTION...
# ARM: damon (DAMON alone), daemon (DAMON with the daemon's hints), filter
# (the same plus a stat scheme with reject=hot: addr filters at the PMU's hot
# ranges, which DAMON splits its regions at each time it applies the scheme,
# and which the observer judges as what that scheme spares).
value_arm() {
        scenario=$1 arm=$2 rep=$3 max_regions=$4 seconds=$5
        shift 5
        damon_reset
        out=/run/value-$scenario-$arm.out
        rm -f "$out" "$out.err"
        daemon_pid='' spared=''
        case $arm in
        daemon) value_conf "$max_regions" ;;
        filter) value_conf "$max_regions" "${DP_VALUE_FILTER_SCHEME:-stat reject=hot}" && spared="--observe-spared 1" ;;
        esac
        # shellcheck disable=SC2086 # optional words on purpose
        [ "$arm" != damon ] && start_daemon /run/value.conf ${DP_VALUE_TRACE:+--verbose}
        # shellcheck disable=SC2086
        damon-perfd-workload "$@" --seconds "$seconds" --seed "${DP_VALUE_SEED:-1}" --observe "$KD/0" $spared \
                > "$out" 2> "$out.err" &
        wl_job=$!
        wait_output "$out" || true     # judged below, by what the workload printed
        if [ "$arm" = damon ]; then
                why=$(damon_alone_start "$wl_job" "$max_regions") || info "DAMON alone did not start: $why"
        fi
        watch_cpu "$wl_job"
        wait "$wl_job"
        if [ "$arm" != damon ]; then
                info "$scenario, $arm: the daemon's $(damonctl damon 2>&1 | grep -i -E 'commit|read-back|error|agreement' | tr -s ' ' | tr '\n' ';')"
                info "$scenario, $arm: the daemon's CPU seconds by thread: $(thread_cpu "$daemon_pid")"
        fi
        grep '^VALUE ' "$out" | while read -r _ fields; do
                echo "DP-QEMU: VALUE scenario=$scenario arm=$arm rep=$rep $fields kdamond_cpu_s=$kdamond_cpu daemon_cpu_s=$daemon_cpu"
        done
        [ -n "${DP_VALUE_TRACE:-}" ] && sed "s/^/DP-QEMU: LOG value $scenario $arm: /" "$out.err"
        [ -n "${DP_VALUE_TRACE:-}" ] && [ "$arm" != damon ] &&
                grep -i 'hint\|DAMON' "$daemon_log" | sed "s/^/DP-QEMU: LOG value $scenario $arm log: /"
        # Every phase had snapshots in which DAMON answered.
        measured=$(grep -c '^VALUE .* up=[1-9]' "$out")
        phases=$(grep -c '^VALUE ' "$out")
        expect "$scenario, $arm: DAMON's regions were judged in every phase" \
                "$measured of $phases phases; workload: $(tail -n 3 "$out.err" | tr '\n' '|')" \
                [ "$phases" -ge 1 -a "$measured" = "$phases" ]
        if [ "$arm" != damon ]; then
                stop_daemon_cleanly
                [ "$case_failed" = 0 ] || show_log daemon "$daemon_log"
        fi
        damon_reset
}

# value_scenario NAME REP MAX_NR_REGIONS SECONDS WORKLOAD_OPTION...: every arm
# of VALUE_ARMS, in reverse order every other REP so that a drift in the
# host's load does not always favour the same arm.
value_scenario() {
        name=$1 rep=$2
        shift 2
        arms=$VALUE_ARMS
        if [ $((rep % 2)) = 0 ]; then
                arms=
                for arm in $VALUE_ARMS; do
                        arms="$arm $arms"
                done
        fi
        for arm in $arms; do
                value_arm "$name" "$arm" "$rep" "$@"
        done
}

# value_wanted NAME: whether scenario NAME runs; DP_VALUE_SCENARIOS (a
# kernel parameter, names separated by commas) picks some, all by default.
value_wanted() {
        case ",${DP_VALUE_SCENARIOS:-window,chunks,chunks-max100}," in
        *",$1,"*) return 0 ;;
        *) return 1 ;;
        esac
}

# Assertions made per scenario and repetition: one per arm, and one for the
# daemon's clean exit in each arm that runs it.
value_assertions() {
        per=0
        for arm in $VALUE_ARMS; do
                per=$((per + 1))
                [ "$arm" != damon ] && per=$((per + 1))
        done
        case $VALUE_MODE in
        off) echo 0 ;;
        short) echo $((3 * per)) ;;
        *) echo $((3 * per * VALUE_REPS)) ;;
        esac
}

case_value() {
        case=value case_failed=0
        [ "$VALUE_MODE" = off ] && return 0
        if [ "$VALUE_MODE" = short ]; then
                window="--move-after 7" window_s=12 chunks_s=10
        else
                window="--move-after 20" window_s=35 chunks_s=30
        fi
        rep=1
        while [ "$rep" -le "$VALUE_REPS" ]; do
                # shellcheck disable=SC2086 # $window is two words on purpose
                value_wanted window && value_scenario window "$rep" 1000 "$window_s" --shape window $window
                value_wanted chunks &&
                        value_scenario chunks "$rep" 1000 "$chunks_s" --shape chunks --span-mib 16384
                value_wanted chunks-max100 &&
                        value_scenario chunks-max100 "$rep" 100 "$chunks_s" --shape chunks --span-mib 16384
                [ "$VALUE_MODE" = short ] && break
                rep=$((rep + 1))
        done
}
