#!/bin/sh
# install_test.sh BUILD_DIR VAT_BINARY — `make install`'s tree in a
# temporary DESTDIR: a ten-line C program built with
# `pkg-config --cflags --libs vat` against the installed libvat scores a
# gold answer of a freshly built corpus 1.
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DESTDIR="$tmp/dest" cmake --install "$build" --prefix /opt/vat >/dev/null
prefix="$tmp/dest/opt/vat"
pc=$(dirname "$(find "$prefix" -name vat.pc)")
export PKG_CONFIG_PATH="$pc"
test -x "$prefix/bin/vat"
test -f "$prefix/include/libvat.h"
test -f "$prefix/share/man/man1/vat.1" # man vat
cat > "$tmp/score.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <libvat.h>
int main(int argc, char **argv) {
    vat_error err; vat_corpus *c; vat_result *r;
    if (argc != 4 || vat_corpus_open(&c, argv[1], &err) != 0) return 2;
    if (vat_corpus_score(c, argv[2], argv[3], strlen(argv[3]), VAT_EXTRACT_AUTO, &r, &err)) return 2;
    printf("%s %g %s\n", vat_version(), vat_result_score(r), vat_result_code(r));
    vat_result_free(r); vat_corpus_close(c); return 0; }
C
libdir=$(pkg-config --variable=libdir vat)
# shellcheck disable=SC2046
cc -o "$tmp/score" "$tmp/score.c" $(pkg-config --cflags --libs vat) -Wl,-rpath,"$libdir"
printf '[templates.grouped_sum]\ncount = 3\n' > "$tmp/seeds.toml"
"$prefix/bin/vat" build --config "$tmp/seeds.toml" --root "$tmp/corpus" >/dev/null
task=grouped_sum-00000
gold=$(grep -h "\"$task/gold\"" "$tmp"/corpus/out/rollouts/*.jsonl |
       /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["answer"])')
# A sanitizer build's library wants its runtime loaded first.
out=$(ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 "$tmp/score" "$tmp/corpus" "$task" "$gold")
echo "$out"
case "$out" in
*" 1 ok") ;;
*) echo "install_test: the gold answer did not score 1" >&2; exit 1 ;;
esac
