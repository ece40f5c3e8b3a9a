#!/bin/bash
# Coherence under the policies that serve reads from a block cache
# (INTERPOSITION.md section 8, docs/policies.md "Coherence"):
#  1. writes by the process itself through another descriptor or the path -
#     pwrite, write, pwritev, writev, fallocate, copy_file_range and sendfile
#     into the file, ftruncate, truncate, an open with O_TRUNC, creat, fopen
#     "w" - are seen by the next read (and pread); so are stores through
#     shared writable mappings, and writes through stdio streams, which come
#     from inside libc (coherence.c);
#  2. another process: the documented promise - a block may serve bytes
#     another process changed since it was filled, never anything else, and
#     after a refill the file as it is; truncation: EOF at the new size, or at
#     the end of the cached block at the latest, then the file as it is;
#  3. a growing file read like `tail -f` (our loop, and tail -f itself): the
#     reader sees every appended byte;
#  4. sqlite3: a long-lived session reads a row, another process commits an
#     UPDATE, the session reads the new value (its lock calls empty the
#     blocks), read-only (coalesced) and read-write, under auto and coalesce.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/coherence
policies=(none auto coalesce coalesce=4K sequential,coalesce,prefetch)

under() {   # under POLICY CMD...: CMD with the shim and POLICY ("" = no shim)
    local policy=$1
    shift
    if [[ -z $policy ]]; then
        timeout -k 5 40 "$@"
    else
        timeout -k 5 40 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy" IOHINT_STATS=1 "$@"
    fi
}
# The same in the background, as one process ($! is timeout itself, which
# passes a kill on to CMD).
under_bg() {
    local policy=$1
    shift
    if [[ -z $policy ]]; then
        exec timeout -k 5 40 "$@"
    else
        exec timeout -k 5 40 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy" IOHINT_STATS=1 "$@"
    fi
}

# --- 1. the process's own writes ---------------------------------------------
for mode in inproc inproc-maps stdiowrite; do
    under "" "$prog" "$mode" "$T/in.bin" >"$T/$mode.plain" || fail "$mode: failed without the shim"
    grep -q '^0 stale$' "$T/$mode.plain" || { show "$T/$mode.plain"; fail "$mode: stale without the shim?"; }
    for policy in "${policies[@]}"; do
        under "$policy" "$prog" "$mode" "$T/in.bin" >"$T/$mode.out" 2>"$T/$mode.err" ||
            { show "$T/$mode.err"; fail "$mode under $policy: exit status"; }
        cmp -s "$T/$mode.plain" "$T/$mode.out" ||
            { grep STALE "$T/$mode.out" | sed 's/^/    | /' >&2 || true
              fail "$mode under $policy: the process's own change was not seen"; }
        # The cache must really have served (else this tested nothing).
        if [[ ($mode == inproc && $policy == *coalesce*) ||
              ($mode == stdiowrite && $policy != none) ]]; then
            grep -Eq 'coalesce: [0-9]+ reads, [1-9][0-9]* served' "$T/$mode.err" ||
                { show "$T/$mode.err"; fail "$mode under $policy: no read was served from a block"; }
        fi
        CASES=$((CASES + 1))
    done
done

# Emptied by an open (O_TRUNC, creat, fopen "w") of the process itself.
for policy in "${policies[@]}"; do
    for i in 0 1 2 3; do make_bin "$T/tr.bin.$i" 65536; done
    under "$policy" "$prog" truncopen "$T/tr.bin" >"$T/tr.out" 2>"$T/tr.err" ||
        { show "$T/tr.err"; fail "truncopen under $policy: exit status"; }
    [[ $(grep -c ': ok ' "$T/tr.out") -eq 4 ]] ||
        { show "$T/tr.out"; fail "truncopen under $policy: a read after the file was emptied got data"; }
    CASES=$((CASES + 1))
done

# Writing another file (and stdout, a pipe) empties nothing of this one's:
# 64-byte reads of a 4 MiB file, each written to another file, are served
# from blocks (each used to refill a 256 KiB block: 4096 times the I/O).
make_bin "$T/of.bin" $((4 << 20))
for policy in coalesce auto; do
    under "$policy" "$prog" otherfile "$T/of.bin" "$T/of.out" >"$T/of.txt" 2>"$T/of.err" ||
        { show "$T/of.err"; fail "otherfile under $policy: exit status"; }
    cmp -s "$T/of.bin" "$T/of.out" || fail "otherfile under $policy: the copy differs"
    refills=$(sed -n 's/.*coalesce: .* \([0-9]*\) block reads.*/\1/p' "$T/of.err")
    [[ -n $refills && $refills -lt 100 ]] ||
        { show "$T/of.err"; fail "otherfile under $policy: ${refills:-no} block reads for 65536 reads of 64 bytes"; }
    CASES=$((CASES + 1))
done

# The same traced: `iohint dump` names the policy's actions and marks the
# reads coalescing answered (it printed neither).
mkdir -p "$T/of.trace"
timeout -k 5 40 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY=coalesce IOHINT_TRACE_DIR="$T/of.trace" \
    "$prog" otherfile "$T/of.bin" "$T/of.out" >/dev/null || fail "otherfile traced: exit status"
dump_has ' policy .*action=refill' "$T/of.trace" || fail "dump: no 'action=refill' on a policy event"
dump_has ' read .* served ' "$T/of.trace" || fail "dump: no read marked 'served'"
CASES=$((CASES + 1))

# --- 2. another process ------------------------------------------------------
block_of() {
    case $1 in *coalesce=4K*) echo 4096 ;; *coalesce*|auto) echo 262144 ;; *) echo 262144 ;; esac
}
under "" "$prog" other "$T/other.bin" 262144 >"$T/other.plain" || fail "other: failed without the shim"
grep -q '^stale-bytes in-block 0$' "$T/other.plain" && grep -q '^stale-bytes past-eof 0$' "$T/other.plain" ||
    { show "$T/other.plain"; fail "other: stale bytes without the shim?"; }
for policy in "${policies[@]}"; do
    block=$(block_of "$policy")
    under "" "$prog" other "$T/other.bin" "$block" >"$T/other.want" || fail "other: failed without the shim"
    under "$policy" "$prog" other "$T/other.bin" "$block" >"$T/other.out" 2>"$T/other.err" ||
        { show "$T/other.err"; fail "other under $policy: exit status"; }
    # Everything but the stale-byte counts (and the EOF line, checked below)
    # is what the kernel gives.
    grep -v -e '^stale-bytes' -e '^after truncation: EOF' "$T/other.want" >"$T/a"
    grep -v -e '^stale-bytes' -e '^after truncation: EOF' "$T/other.out" >"$T/b"
    cmp -s "$T/a" "$T/b" || { diff "$T/a" "$T/b" | sed 's/^/    | /' >&2 || true
        fail "other under $policy: broke the promise toward other processes' writes"; }
    grep -Eq '^after truncation: EOF (at the new size|within the cached block)$' "$T/other.out" ||
        { show "$T/other.out"; fail "other under $policy: EOF after truncation beyond the cached block"; }
    read -r _ _ stale <<<"$(grep '^stale-bytes in-block' "$T/other.out")"
    [[ $stale -le 100 ]] || fail "other under $policy: $stale stale bytes, only 100 changed"
    note "other under $policy: $stale stale bytes in the block, EOF $(sed -n 's/^after truncation: EOF //p' "$T/other.out")"
    CASES=$((CASES + 1))
done

# --- 3. a growing file -------------------------------------------------------
# writer FILE: append 3000 lines in bursts of varied sizes, then "END".
writer() {
    /usr/bin/python3 - "$1" <<'PY'
import os, random, sys, time
random.seed(5)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
for i in range(3000):
    line = ('%06d ' % i) + 'x' * random.randrange(0, 120) + '\n'
    # Partial lines too: the reader must not lose the rest.
    cut = random.randrange(0, len(line) + 1)
    os.write(fd, line[:cut].encode())
    if random.random() < 0.05:
        time.sleep(0.002)
    os.write(fd, line[cut:].encode())
os.write(fd, b'END\n')
PY
}
for policy in "" "${policies[@]}"; do
    f=$T/grow.txt
    : >"$f"
    (under_bg "$policy" "$prog" follow "$f") >"$T/follow.out" 2>"$T/follow.err" &
    reader=$!
    writer "$f"
    wait "$reader" || { show "$T/follow.err"; fail "follow under '$policy': the reader failed (or hung)"; }
    cmp -s "$f" "$T/follow.out" || fail "follow under '$policy': the reader did not see the file as written"
    CASES=$((CASES + 1))
done
# tail -f itself (inotify or polling, its own reads and lseeks).
n=0
for policy in "" auto coalesce coalesce=4K; do
    n=$((n + 1))
    f=$T/tail.$n.txt out=$T/tail.$n.out
    printf 'first line\n' >"$f"
    (under_bg "$policy" tail -n +1 -s 0.05 -f "$f") >"$out" 2>"$T/tail.err" &
    reader=$!
    writer "$f"
    # Wait until tail printed END (at most 20 s), then stop it.
    for _ in $(seq 1 400); do
        [[ $(tail -c 4 "$out" 2>/dev/null) == END ]] && break
        sleep 0.05
    done
    kill "$reader" 2>/dev/null || true
    wait "$reader" 2>/dev/null || true
    cmp -s "$f" "$out" ||
        fail "tail -f under '$policy': printed $(fsize "$out") bytes of $(fsize "$f")"
    CASES=$((CASES + 1))
done

# --- 4. sqlite3: a long-lived session and another process's UPDATE -----------
command -v sqlite3 >/dev/null || skip "no sqlite3"
db0=$T/base.db
sqlite3 "$db0" "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
INSERT INTO t SELECT x, printf('value-%d-%s', x, hex(randomblob(20))) FROM c;"
session() {   # session POLICY DB [OPTION]: the transcript of a session with an update between
    local policy=$1 db=$2 opt=${3:-}
    local cmd=(sqlite3 -batch)
    [[ -n $opt ]] && cmd+=("$opt")
    if [[ -n $policy ]]; then
        cmd=(env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy" IOHINT_STATS=1 "${cmd[@]}")
    fi
    coproc SQ { exec timeout -k 5 40 "${cmd[@]}" "$db" 2>"$T/sq.err"; }
    ask() {
        echo "$1" >&"${SQ[1]}"
        echo "SELECT 'DONE';" >&"${SQ[1]}"
        local l
        while IFS= read -r -t 20 l <&"${SQ[0]}"; do
            [[ $l == DONE ]] && return 0
            echo "$l"
        done
        echo "(no answer)"
    }
    ask "SELECT v FROM t WHERE id = 5000;"
    ask "SELECT count(*), sum(length(v)) FROM t;"
    # Another process commits while the session is open (and its blocks full).
    sqlite3 "$db" "UPDATE t SET v = 'changed-by-another-process' WHERE id = 5000;
                   UPDATE t SET v = v || '!' WHERE id % 97 = 0;"
    ask "SELECT v FROM t WHERE id = 5000;"
    ask "SELECT count(*), sum(length(v)) FROM t;"
    ask "SELECT v FROM t WHERE id = 9700;"
    exec {SQ[1]}>&-
    wait "$SQ_PID" 2>/dev/null || true
}
for opt in -readonly ""; do
    cp "$db0" "$T/plain.db"
    session "" "$T/plain.db" $opt >"$T/sq.plain"
    grep -q '^changed-by-another-process$' "$T/sq.plain" || { show "$T/sq.plain"; fail "sqlite: the update is not seen without the shim?"; }
    for policy in auto coalesce coalesce=4K; do
        cp "$db0" "$T/pol.db"
        session "$policy" "$T/pol.db" $opt >"$T/sq.out"
        cmp -s "$T/sq.plain" "$T/sq.out" ||
            { diff "$T/sq.plain" "$T/sq.out" | sed 's/^/    | /' >&2 || true
              fail "sqlite3 ${opt:-read-write} under $policy: the session did not see the other process's update"; }
        # Read-only sessions are coalesced: the test must have served bytes
        # from blocks. (Its page reads go to the kernel: each into a page
        # buffer the kernel has not written yet, docs/policies.md. They were
        # counted as served until the statistics counted only reads that
        # made no system call; what blocks serve are the header reads that
        # check for another process's changes.)
        if [[ $opt == -readonly && $policy == coalesce* ]]; then
            grep -Eq 'bytes read into blocks, [1-9][0-9]* served$' "$T/sq.err" ||
                { show "$T/sq.err"; fail "sqlite3 -readonly under $policy: nothing served from a block"; }
        fi
        CASES=$((CASES + 1))
    done
done

done_ok
