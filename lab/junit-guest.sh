#!/bin/sh
# Guest script of lab/run-junit.sh (runs inside each rxe guest via lab/rxe-lab.sh).
# Usage: junit-guest.sh <module-dir> <launcher-jar> <jvm-argfile> <launcher-argfile>
# Runs the JUnit Platform console launcher with the host-built classpath; JUnit XML
# reports go to $LAB_OUT/junit-reports.
set -u
module_dir=$1 launcher=$2 jvm_args=$3 launcher_args=$4
cd "$module_dir" || exit 2
"$JAVA_HOME/bin/java" -version 2>&1
mkdir -p "$LAB_OUT/junit-reports"
exec "$JAVA_HOME/bin/java" -XX:-UsePerfData -Djava.io.tmpdir="$TMPDIR" @"$jvm_args" \
  -jar "$launcher" execute @"$launcher_args" --reports-dir "$LAB_OUT/junit-reports"
