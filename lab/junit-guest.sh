#!/bin/sh
# Guest script of lab/run-junit.sh (runs inside each rxe guest via lab/rxe-lab.sh).
# Usage: junit-guest.sh <module-dir> <launcher-jar> <jvm-argfile> <launcher-argfile>
# Runs the JUnit Platform console launcher with the host-built classpath; JUnit XML
# reports go to $LAB_OUT/junit-reports. @GUEST@ in <launcher-argfile> becomes this
# guest's index (run-junit.sh --class-on writes one argument file per guest).
set -u
module_dir=$1 launcher=$2 jvm_args=$3
launcher_args=$(printf '%s' "$4" | sed "s/@GUEST@/$LAB_GUEST_INDEX/g")
cd "$module_dir" || exit 2
"$JAVA_HOME/bin/java" -version 2>&1
mkdir -p "$LAB_OUT/junit-reports"
exec "$JAVA_HOME/bin/java" -XX:-UsePerfData -Djava.io.tmpdir="$TMPDIR" @"$jvm_args" \
  -jar "$launcher" execute @"$launcher_args" --reports-dir "$LAB_OUT/junit-reports"
