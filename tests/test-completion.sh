#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The bash completions of shell-completion/bash/: sourced into this bash, asked
# for completions as readline would ask (COMP_LINE, COMP_POINT, COMP_WORDS,
# COMP_CWORD, then the function), and their static lists checked against what
# damonctl --help and damon-perfd --help say.
#
#   test-completion.sh COMPLETION-DIR DAMONCTL DAMON-PERFD
set -uo pipefail
export LC_ALL=C

dir=$1 damonctl=$2 daemon=$3
failures=0 checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# shellcheck source=/dev/null
. "$dir/damonctl" || { echo "FAIL: cannot source $dir/damonctl"; exit 1; }
# shellcheck source=/dev/null
. "$dir/damon-perfd" || { echo "FAIL: cannot source $dir/damon-perfd"; exit 1; }
COMP_WORDBREAKS=${COMP_WORDBREAKS:-$' \t\n"\'><=;|&(:'}

# complete LINE: COMPREPLY for the cursor at the end of LINE, sorted, one a line
# (and whatever the function wrote to stderr, which must be nothing).
complete_line() {
        local line=$1 function
        COMP_LINE=$line
        COMP_POINT=${#line}
        # Words as readline splits them: at blanks, and "=" and ":" on their own.
        read -ra COMP_WORDS <<<"$(sed 's/\([=:]\)/ \1 /g' <<<"$line")"
        [[ $line == *' ' ]] && COMP_WORDS+=('')
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        function=$(complete -p "${line%% *}" 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
        function=${function:-$(complete -p "$(basename "${line%% *}")" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')}
        COMPREPLY=()
        "$function" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]:-}" 2>"$tmp/stderr"
        [ -s "$tmp/stderr" ] && fail "'$line': the completion wrote to stderr: $(cat "$tmp/stderr")"
        printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort
}

# expect LINE WORD...: the completions of LINE are exactly WORD...
expect() {
        local line=$1 got want
        shift
        checks=$((checks + 1))
        got=$(complete_line "$line" | tr '\n' ' ')
        want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
        [ "$got" = "$want" ] || fail "'$line': expected [${want% }], got [${got% }]"
}

# expect_has LINE WORD...: the completions of LINE include every WORD...
expect_has() {
        local line=$1 got w
        shift
        checks=$((checks + 1))
        got=$(complete_line "$line")
        for w in "$@"; do
                grep -qxF -- "$w" <<<"$got" || fail "'$line': expected $w among [$(tr '\n' ' ' <<<"$got")]"
        done
}

# --- The lists against --help.
lines() { tr ' \n' '\n\n' | sed '/^$/d' | sort -u; }
words() { lines | tr '\n' ' '; }
long_options() { sed -n 's/^ \{2,\}\(-[a-zA-Z] \)\{0,1\}\(--[a-z0-9][a-z0-9-]*\).*/\2/p'; }
same() {         # WHAT COMPLETION-WORDS HELP-WORDS
        local missing extra
        checks=$((checks + 1))
        [ "$2" = "$3" ] && return
        missing=$(comm -13 <(lines <<<"$2") <(lines <<<"$3") | tr '\n' ' ')
        extra=$(comm -23 <(lines <<<"$2") <(lines <<<"$3") | tr '\n' ' ')
        fail "$1: the completion lacks [${missing% }] and has [${extra% }] beyond --help"
}

help=$("$daemon" --help)
same "damon-perfd options" "$(words <<<"$__damon_perfd_options")" "$(long_options <<<"$help" | words)"

help=$("$damonctl" --help)
section() {     # the lines of one section of damonctl --help: "Commands:", "stats:", ...
        awk -v s="$1" '$0 == s { on = 1; next } /^[A-Za-z][A-Za-z ]*:$/ { on = 0 } on'
}
same "damonctl commands" "$(words <<<"$__damonctl_commands")" \
        "$(section Commands: <<<"$help" | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' | words)"
same "damonctl global options" "$(words <<<"$__damonctl_global_options")" \
        "$(section Options: <<<"$help" | long_options | words)"
for command in $__damonctl_commands; do
        # A section per command, and "(also for COMMAND)" on another's option.
        want=$( (section "$command:" <<<"$help" | long_options
                 grep "(also for $command)" <<<"$help" | long_options) | words)
        same "damonctl $command options" "$(words <<<"${__damonctl_command_options[$command]}")" "$want"
done
value_taking() { grep -oE -- '--[a-z0-9-]+=' | tr -d = | words; }
same "damonctl options that take a value" "$(words <<<"$__damonctl_value_options")" \
        "$(value_taking <<<"$help")"
same "damon-perfd options that take a value" "$(words <<<"$__damon_perfd_value_options")" \
        "$("$daemon" --help | value_taking)"

# --- damonctl: commands, options per command, values.
expect "damonctl " $__damonctl_commands
expect "damonctl s" stats selftest
expect "damonctl --json re" regions reload
expect "damonctl --address unix:/x m" monitor
expect "damonctl --" --help --version --address --json
expect "damonctl stats --" --help --version --address --json --interval --count --prometheus --textfile
expect "damonctl regions --t" --target --top
expect "damonctl damon --t" --top
expect "damonctl monitor --s" --samples
expect "damonctl decode --format " spe ibs perf.data
expect "damonctl decode --format=s" spe
expect "damonctl decode --format=" spe ibs perf.data
expect "damonctl decode --format=p" perf.data
expect "damonctl stats --interval " ""
expect "damonctl --address " unix:/run/damon-perfd/io.damon.perfd
expect "damonctl --address=un" unix:/run/damon-perfd/io.damon.perfd
# Paths: from where the completion runs.
mkdir -p "$tmp/files/captures" && touch "$tmp/files/cap.data" "$tmp/files/heat.svg"
cd "$tmp/files" || exit 1
expect "damonctl heatmap --replay c" cap.data captures
expect "damonctl heatmap --svg=h" heat.svg
expect "damonctl stats --textfile " captures
expect "damonctl decode " cap.data captures heat.svg
expect "damonctl --address=unix:ca" cap.data captures
cd - >/dev/null || exit 1

# --target: the daemon's targets.  A stand-in damonctl answers as the daemon
# would; the real one with nothing listening must leave just "phys", silently.
cat >"$tmp/damonctl" <<'EOF'
#!/bin/sh
[ "$*" = "--address=unix:/stand-in --json targets" ] || exit 3
cat <<'JSON'
{
    "targets": [
        { "pid": 1234, "kind": "process", "start": 4096, "end": 8192, "nr_regions": 10 },
        { "pid": 5678, "kind": "process", "start": 4096, "end": 8192, "nr_regions": 10 }
    ],
    "max_nr_accesses": 20,
    "aggregations": 3
}
JSON
EOF
chmod +x "$tmp/damonctl"
expect "$tmp/damonctl --address=unix:/stand-in heatmap --target " phys 1234 5678
expect "$tmp/damonctl --address unix:/stand-in regions --target=12" 1234
expect "$tmp/damonctl --address unix:/stand-in regions --target p" phys
expect "$damonctl --address=unix:$tmp/nothing-listens regions --target " phys
DAMON_PERFD_ADDRESS=unix:$tmp/nothing-listens expect "$damonctl heatmap --target=" phys

# --- damon-perfd.
expect "damon-perfd --so" --source
expect "damon-perfd --check" --check-config
expect "damon-perfd --varlink" --varlink --varlink-group
expect "damon-perfd --source " auto ibs pebs spe pagefault event:
expect "damon-perfd --source=p" pebs pagefault
expect "damon-perfd --dump-stats=" text json
expect_has "damon-perfd --pid $$" $$
expect "damon-perfd --cpus " "$(cat /sys/devices/system/cpu/online)"
expect_has "damon-perfd --varlink-group " root
expect_has "damon-perfd " --help --replay --no-varlink
cd "$tmp/files" || exit 1
expect "damon-perfd --config c" cap.data captures
expect "damon-perfd --replay=cap." cap.data
cd - >/dev/null || exit 1

echo "$checks checks, $failures failed"
[ $failures -eq 0 ]
