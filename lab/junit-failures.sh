#!/usr/bin/env bash
# Prints one line per failed or errored test case in the given JUnit XML reports (surefire's or the JUnit console
# launcher's): "<class>.<test>: <failure type>: <message, first 200 chars>". Prints nothing when every test passed.
# Used by lab/run-junit.sh and scripts/test.sh so that the end of a long CI log names what failed.
#   junit-failures.sh REPORT.xml...
set -uo pipefail
[ $# -gt 0 ] || exit 0
awk '
  function attr(s, n,   m) {
    if (match(s, " " n "=\"[^\"]*\"")) { m = substr(s, RSTART + length(n) + 3, RLENGTH - length(n) - 4); return m }
    return ""
  }
  /<testcase / { cls = attr($0, "classname"); name = attr($0, "name") }
  /<(failure|error)[ >]/ {
    type = attr($0, "type"); msg = attr($0, "message")
    gsub(/&quot;/, "\"", msg); gsub(/&lt;/, "<", msg); gsub(/&gt;/, ">", msg); gsub(/&#10;/, " ", msg); gsub(/&amp;/, "\\&", msg)
    printf "%s.%s: %s: %s\n", cls, name, type, substr(msg, 1, 200)
  }
' "$@"
