#!/bin/bash
# Policy errors (issue 5, item 1): a bad IOHINT_POLICY value or policy file
# gives exactly one warning line, naming the value (or the file and line), and
# the program runs unchanged - same stdout, same everything it observes (the
# differential program's log), nothing else on stderr. `iohint run -p BAD`
# refuses to start (status 2) with the same message. A good policy file's
# path rules apply to the files they match and only to those.
source "$(dirname "$0")/../lib.sh"

f=$T/data.txt
make_text "$f" 300000
cat "$f" >"$T/want.out"

# check_bad NAME POLICY PATTERN: cat under LD_PRELOAD with IOHINT_POLICY=POLICY
# prints the file unchanged and exactly one stderr line, matching PATTERN
# (grep -E), which also says no policy was applied.
check_bad() {
    local name=$1 policy=$2 pat=$3 rc=0
    timeout 20 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy" cat "$f" \
        >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [[ $rc -eq 0 ]] || fail "$name: cat exited $rc under IOHINT_POLICY='$policy'"
    cmp -s "$T/want.out" "$T/$name.out" || fail "$name: output changed under IOHINT_POLICY='$policy'"
    [[ $(wc -l <"$T/$name.err") -eq 1 ]] ||
        { show "$T/$name.err"; fail "$name: expected exactly one warning line for IOHINT_POLICY='$policy'"; }
    grep -Eq "^iohint\[[0-9]+\]: .*$pat.*; no policy applied$" "$T/$name.err" ||
        { show "$T/$name.err"; fail "$name: the warning does not name '$pat' and say no policy applied"; }
    CASES=$((CASES + 1))
}

check_bad unknown bogus "policy 'bogus': unknown action 'bogus'"
check_bad unknown2 'sequential,coalesce,frob' "unknown action 'frob'"
check_bad badsize 'coalesce=12Q' "bad size '12Q'"
check_bad range 'coalesce=1K' "coalesce block 1K out of range"
check_bad contra 'sequential,random' "'random' contradicts"
check_bad nonecombo 'none,auto' "'none' cannot be combined"
check_bad novalue 'auto=3' "'auto' takes no value"
check_bad nofile "$T/missing.policy" "policy file $T/missing.policy: No such file"
check_bad dir "$T/" "policy file $T/: Is a directory"
check_bad prefetch_range 'prefetch=1' "prefetch distance 1 out of range \\(4K-1G\\)"
check_bad window_range 'sequential,window=100G' "window size 100G out of range"
check_bad repeated 'coalesce=4K,coalesce=8K' "'coalesce' given twice"

# Policy files: the warning names the file, the line and the value.
printf '# comment\ndefault auto\n\npath /data/* sequential\nclass strided prefetch=8Q\n' >"$T/size.policy"
check_bad file_size "$T/size.policy" "$T/size.policy line 5: bad size '8Q' for prefetch"
printf 'default coalesce\nclass bogus coalesce\n' >"$T/class.policy"
check_bad file_class "$T/class.policy" "$T/class.policy line 2: unknown class 'bogus'"
printf 'default coalesce\nfrobnicate * coalesce\n' >"$T/rule.policy"
check_bad file_rule "$T/rule.policy" "$T/rule.policy line 2: unknown rule 'frobnicate'"
printf 'path * sequential,random\n' >"$T/contra.policy"
check_bad file_contra "$T/contra.policy" "$T/contra.policy line 1: 'random' contradicts"
printf 'default auto\nclass small coalesce\n\nclass small coalesce=1M\n' >"$T/twice.policy"
check_bad file_twice "$T/twice.policy" "$T/twice.policy line 4: a second rule for class 'small' \\(line 2"
printf 'path /data/* none\nclass sequential sequential\n' >"$T/noauto.policy"
check_bad file_noauto "$T/noauto.policy" "$T/noauto.policy line 2: 'class' rules act only under auto"
printf 'default auto\npath data/* coalesce\n' >"$T/relative.policy"
check_bad file_relative "$T/relative.policy" "$T/relative.policy line 2: relative glob 'data/\\*' never matches"
printf 'path "/data/x none\n' >"$T/quote.policy"
check_bad file_quote "$T/quote.policy" "$T/quote.policy line 1: no closing quote"
{ printf 'default auto\npath /'; head -c 3000 /dev/zero | tr '\0' a; printf ' coalesce\n'; } >"$T/long.policy"
check_bad file_long "$T/long.policy" "$T/long.policy line 2: line too long"

# One warning per process image: a child made by fork does not warn again.
rc=0
timeout 20 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY=bogus /usr/bin/python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.read(fd, 10)
pid = os.fork()
if pid == 0:
    os.read(fd, 10); os._exit(0)
os.waitpid(pid, 0)
print(os.lseek(fd, 0, os.SEEK_CUR))' "$f" >"$T/fork.out" 2>"$T/fork.err" || rc=$?
[[ $rc -eq 0 && $(cat "$T/fork.out") == 20 ]] || fail "fork: python under a bad policy went wrong (rc $rc)"
[[ $(grep -c 'no policy applied' "$T/fork.err") -eq 1 && $(wc -l <"$T/fork.err") -eq 1 ]] ||
    { show "$T/fork.err"; fail "fork: expected one warning for parent and forked child together"; }
CASES=$((CASES + 1))

# The program runs unchanged: everything the differential program observes
# is the same as without the shim.
"$DIFFOPS" --make "$T/d.orig" 1000000 3
cp "$T/d.orig" "$T/d.plain"
"$DIFFOPS" 3 "$T/d.plain" 300 >"$T/d.plain.log"
cp "$T/d.orig" "$T/d.bad"
timeout 30 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY='coalesce,bogus' "$DIFFOPS" 3 "$T/d.bad" 300 \
    >"$T/d.bad.log" 2>"$T/d.bad.err" || fail "diffops under a bad policy failed"
cmp -s "$T/d.plain.log" "$T/d.bad.log" ||
    { diff "$T/d.plain.log" "$T/d.bad.log" | head -5 >&2 || true; fail "diffops observed a difference under a bad policy"; }
cmp -s "$T/d.plain" "$T/d.bad" || fail "diffops left a different file under a bad policy"
# diffops execs itself for some children: one warning per process image.
grep -v 'no policy applied$' "$T/d.bad.err" | grep -q . &&
    { show "$T/d.bad.err"; fail "diffops: stderr has more than the policy warnings"; }
CASES=$((CASES + 1))

# The launcher refuses a bad policy before running anything.
rc=0
"$IOHINT" run -p 'coalesce=12Q' -- touch "$T/ran" >"$T/run.out" 2>"$T/run.err" || rc=$?
[[ $rc -eq 2 ]] || fail "iohint run -p with a bad policy exited $rc, expected 2"
[[ ! -e $T/ran ]] || fail "iohint run -p with a bad policy ran the program"
grep -q "bad size '12Q'" "$T/run.err" || { show "$T/run.err"; fail "iohint run: the message does not name the value"; }
rc=0
"$IOHINT" run -p "$T/class.policy" -- touch "$T/ran" >"$T/run.out" 2>"$T/run.err" || rc=$?
[[ $rc -eq 2 && ! -e $T/ran ]] || fail "iohint run -p with a bad policy file: status $rc"
grep -q "$T/class.policy line 2: unknown class 'bogus'" "$T/run.err" ||
    { show "$T/run.err"; fail "iohint run: the message does not name the file and line"; }
rc=0
"$IOHINT" run -p "$T/noauto.policy" -- touch "$T/ran" >"$T/run.out" 2>"$T/run.err" || rc=$?
[[ $rc -eq 2 && ! -e $T/ran ]] || fail "iohint run -p with class rules and no auto: status $rc"
grep -q "$T/noauto.policy line 2: 'class' rules act only under auto" "$T/run.err" ||
    { show "$T/run.err"; fail "iohint run: class rules without auto not named"; }
CASES=$((CASES + 3))

# IOHINT_POLICY set but empty is no policy, silently, as for `iohint run`
# (the shim warned "empty policy; no policy applied").
timeout 20 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY= cat "$f" >"$T/empty.out" 2>"$T/empty.err" ||
    fail "cat under IOHINT_POLICY= failed"
cmp -s "$T/want.out" "$T/empty.out" || fail "output changed under IOHINT_POLICY="
[[ ! -s $T/empty.err ]] || { show "$T/empty.err"; fail "IOHINT_POLICY= (empty) warned"; }
IOHINT_POLICY= "$IOHINT" run -q --no-trace -- cat "$f" >"$T/empty_run.out" 2>"$T/empty_run.err" ||
    { show "$T/empty_run.err"; fail "iohint run under IOHINT_POLICY= failed"; }
cmp -s "$T/want.out" "$T/empty_run.out" && [[ ! -s $T/empty_run.err ]] ||
    { show "$T/empty_run.err"; fail "iohint run under IOHINT_POLICY= warned or changed the output"; }
CASES=$((CASES + 2))

# A good policy file: path rules apply to what they match (IOHINT_STATS
# counts coalesced reads), the first match wins, the default to the rest.
mkdir -p "$T/pf"
head -c 200000 /dev/urandom >"$T/pf/a.bin"
cp "$T/pf/a.bin" "$T/pf/b.dat"
printf 'path %s/pf/*.bin coalesce\npath %s/pf/* none\ndefault coalesce=64K\n' "$T" "$T" >"$T/good.policy"
small_reads() {
    # head reads 8 KiB at a time with read() on a description of its own and
    # opens no other file (dd would dup2 its input onto fd 0: shared, and not
    # served by read(); python opens its modules, which the default matches).
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$T/good.policy IOHINT_STATS=1 \
        head -c 300000 "$1" >/dev/null 2>"$T/stats.err" ||
        { show "$T/stats.err"; fail "head under a good policy file failed"; }
}
small_reads "$T/pf/a.bin"
grep -Eq 'stats: coalesce: [0-9]+ reads, [1-9][0-9]* served' "$T/stats.err" ||
    { show "$T/stats.err"; fail "a.bin matches 'coalesce' but nothing was served from a block"; }
grep -q "policy file $T/good.policy" "$T/stats.err" || { show "$T/stats.err"; fail "stats do not name the policy file"; }
small_reads "$T/pf/b.dat"
grep -q 'stats: coalesce:' "$T/stats.err" &&
    { show "$T/stats.err"; fail "b.dat matches 'none' (first match) but was coalesced"; }
small_reads "$f"
grep -Eq 'stats: coalesce: [0-9]+ reads, [1-9][0-9]* served' "$T/stats.err" ||
    { show "$T/stats.err"; fail "data.txt falls to 'default coalesce' but was not coalesced"; }
CASES=$((CASES + 3))

# A glob in double quotes holds blanks, and a '#' inside a glob is no
# comment. Globs match the resolved path: one written through a symlinked
# directory does not match the files read through it.
mkdir -p "$T/my data #1"
cp "$T/pf/a.bin" "$T/my data #1/c.bin"
ln -s "$T/my data #1" "$T/link"
printf 'path "%s/my data #1/*" coalesce # quoted\n' "$T" >"$T/good.policy"
small_reads "$T/my data #1/c.bin"
grep -Eq 'stats: coalesce: [0-9]+ reads, [1-9][0-9]* served' "$T/stats.err" ||
    { show "$T/stats.err"; fail "a quoted glob with a blank and a '#' did not match"; }
small_reads "$T/link/c.bin"      # resolved: it is the same file
grep -Eq 'stats: coalesce: [0-9]+ reads, [1-9][0-9]* served' "$T/stats.err" ||
    { show "$T/stats.err"; fail "the file read through a symlink was not matched by its real path"; }
printf 'path %s/link/* coalesce\n' "$T" >"$T/good.policy"
small_reads "$T/link/c.bin"
grep -q 'stats: coalesce:' "$T/stats.err" &&
    { show "$T/stats.err"; fail "a glob through a symlinked directory matched"; }
CASES=$((CASES + 3))

done_ok
