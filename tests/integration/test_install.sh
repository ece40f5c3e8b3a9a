#!/bin/bash
# `meson install` to a prefix puts bin/iohint and libiohint.so under it, and
# the installed iohint finds the library it was built with (no IOHINT_LIB),
# wherever the prefix is moved to: it looks beside its own executable.
source "$(dirname "$0")/lib.sh"

[[ -n ${MESON_BUILD_ROOT:-} && -f $MESON_BUILD_ROOT/build.ninja ]] ||
    skip "needs the meson build directory (MESON_BUILD_ROOT)"
dest=$T/dest
DESTDIR=$dest meson install -C "$MESON_BUILD_ROOT" --no-rebuild --quiet >"$T/install.log" 2>&1 ||
    { show "$T/install.log"; fail "meson install failed"; }
bin=$(find "$dest" -path '*/bin/iohint' -type f | head -n 1)
lib=$(find "$dest" -name libiohint.so -type f | head -n 1)
[[ -x $bin ]] || fail "no bin/iohint under the install prefix"
[[ -f $lib ]] || fail "no libiohint.so under the install prefix"

# Move the whole prefix elsewhere: relocatable.
mv "$dest" "$T/moved"
bin=${bin/$dest/$T/moved}
lib=${lib/$dest/$T/moved}
f=$T/in.txt
seq 1 1000 > "$f"
out=$(env -u IOHINT_LIB "$bin" run -q -o "$T/traces" -- cat "$f" | md5sum)
[[ $out == "$(md5sum < "$f")" ]] || fail "installed iohint run changed cat's output"
# To a file first: `| grep -q` fails under pipefail when grep leaves early.
"$bin" dump --no-header "$T/traces" >"$T/dump.txt"
grep -q "in.txt" "$T/dump.txt" || fail "the installed shim traced nothing"
# And the library it preloaded was the installed one.
env -u IOHINT_LIB "$bin" run -q --no-trace -- sh -c 'echo "$LD_PRELOAD"' | grep -qF "$lib" ||
    fail "installed iohint did not preload the installed library"
note "installed to a prefix, moved, and found its library: $lib"
