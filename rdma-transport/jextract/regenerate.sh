#!/bin/sh
# Regenerates the FFM bindings in io.rdmabus.rdma.verbs.ffm from the installed
# rdma-core headers (Debian: libibverbs-dev, librdmacm-dev) using the symbol list
# verbs-symbols.txt. Nobody edits the generated package by hand: change the list, rerun.
#
# Usage: JEXTRACT=/path/to/jextract ./regenerate.sh
#   JEXTRACT     a jextract launcher (see README.md for building one outside this tree)
#   CLANG_INCLUDE  clang builtin headers (default /usr/lib/llvm-19/lib/clang/19/include,
#                  Debian package libclang-common-19-dev)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
module=$(cd "$here/.." && pwd)
: "${JEXTRACT:?set JEXTRACT to a jextract launcher, see $here/README.md}"
clang_include=${CLANG_INCLUDE:-/usr/lib/llvm-19/lib/clang/19/include}
header=/usr/include/rdma/rdma_cma.h
pkg=io.rdmabus.rdma.verbs.ffm
out_src="$module/src/main/java"
pkg_dir="$out_src/io/rdmabus/rdma/verbs/ffm"

[ -f "$header" ] || { echo "missing $header: apt-get install libibverbs-dev librdmacm-dev" >&2; exit 1; }
[ -d "$clang_include" ] || { echo "missing $clang_include: apt-get install libclang-common-19-dev (or set CLANG_INCLUDE)" >&2; exit 1; }

rm -rf "$pkg_dir"
"$JEXTRACT" -I "$clang_include" -I /usr/include \
  --target-package "$pkg" --header-class-name RdmaCm \
  --library :libibverbs.so.1 --library :librdmacm.so.1 \
  --output "$out_src" \
  @"$here/verbs-symbols.txt" \
  "$header"

# Post-processing: the generated code is compiled with the module's -Xlint:all -Werror;
# mark every top-level generated class so lint findings in it do not fail the build.
for f in "$pkg_dir"/*.java; do
  sed -i -E '0,/^(public |)(final |)(class|interface) /s//@SuppressWarnings("all")\n&/' "$f"
done
echo "regenerated $(ls "$pkg_dir" | wc -l) files in $pkg_dir"
