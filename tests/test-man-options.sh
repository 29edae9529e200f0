#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A manual page against its program: every long option the program's --help
# lists is documented in the page (as \-\-NAME), and the page renders
# without a groff warning (skipped where groff is missing).
#
#   test-man-options.sh PROGRAM PAGE
set -euo pipefail

program=$1 page=$2
status=0

# The option column only: "  -h --help", "     --config=PATH", "     --dump-stats[=FORMAT]".
options=$("$program" --help | sed -n 's/^ \{2,\}\(-[a-zA-Z] \)\{0,1\}--\([a-z0-9][a-z0-9-]*\).*/\2/p' | sort -u)
[ -n "$options" ] || { echo "FAIL: no long options in $program --help"; exit 1; }

n=0
for option in $options; do
        n=$((n + 1))
        # \-\-NAME, and not just the start of a longer one (--varlink in --varlink-group).
        escaped=${option//-/\\\\-}
        if ! grep -qP -- "\\\\-\\\\-$escaped(?![a-z0-9]|\\\\-[a-z])" "$page"; then
                echo "FAIL: --$option ($program --help) is not in $page"
                status=1
        fi
done
echo "$n long options of $program --help checked against $page"

if command -v groff >/dev/null; then
        warnings=$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$page" 2>&1)
        if [ -n "$warnings" ]; then
                echo "FAIL: groff warns about $page:"
                echo "$warnings"
                status=1
        else
                echo "$page renders without groff warnings"
        fi
else
        echo "groff is missing: rendering not checked"
fi
exit $status
