#!/bin/bash
# Signal handlers made to run (under gdb) at the worst moments of a lazy
# read: right after the main loop's read claimed its range of the logical
# offset (claimrace.c). gdb stops the program after its 600th read (a stream
# under auto is in the quiet lane by then), watches the description's
# offset, and checks from the stack that the stop is the claim it means to
# test: the quiet lane's (auto), the full path's (sequential), the
# coalescing fast lane's (coalesce). Every byte must be read exactly once.
# - dup, close, seekclose: the handler reads 8 KiB, then dups the
#   descriptor, closes it, or seeks and closes it. Before 4195e25 the dup
#   synced the kernel offset past both reads, the main read's claim looked
#   void, its give-back failed, and its bytes were lost (found by review).
# - hipri: one handler makes pinned calls (preadv2 at the current offset
#   with RWF_HIPRI, 0 bytes: the shim syncs) inside the main read's pread,
#   another reads 8 KiB the same way right after the claim. The sync had
#   marked the private description exact while the claim was still to
#   come: the second handler read the claim's bytes again, and a gap
#   followed (found by review). The first handler's three calls must not
#   each wait 200 ms for the read they interrupted.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/claimrace
f=$T/words.bin
"$POLPROGS/sigunion" --make "$f" $((8 * 1024 * 1024))

# Threads, no gdb: two read() a 4 KiB at a time while a third makes pinned
# reads at the current offset (preadv2 with RWF_HIPRI). A lazy read that
# began after the pinned call's sync got the same bytes as the pinned call
# (14 runs in 20 before 6c93074, 1 in 40 after it; review): such a call
# now shares the description first, and the kernel orders every read.
# directflip: the file is opened O_DIRECT and a third thread clears and
# sets O_DIRECT again and again: cleared, the description became lazy while
# a read through the kernel was in flight, whose bytes a lazy read then
# read again (every run; review); it is now shared for good instead.
"$POLPROGS/sigunion" --make "$T/words64.bin" $((64 * 1024 * 1024))
for mode in threads directflip; do
    # (direct reads of 4 KiB are slow: fewer, of the 8 MiB file)
    file=$T/words64.bin rounds=24
    [[ $mode == threads ]] || { file=$f; rounds=6; }
    for policy in sequential auto; do
        for round in $(seq 1 $rounds); do
            rc=0
            LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy timeout -k 5 60 "$prog" "$file" $mode 0 \
                >"$T/out" 2>&1 || rc=$?
            grep -q '^OK reads=' "$T/out" || { show "$T/out"; fail "$mode under $policy, round $round: exit status $rc"; }
        done
        CASES=$((CASES + 1))
    done
done
# hflip, one thread: O_DIRECT set after lazy reads, then a 32 MiB read in
# which a timer's handler clears O_DIRECT and asks lseek(SEEK_CUR) (the
# signal comes as the kernel's read returns, before the shim counts it): a
# sync there put the kernel offset back over the big read (every run under
# sequential; review); the handler must see the offset before or after it,
# the program after it.
for policy in sequential auto coalesce; do
    during=0
    for round in 1 2 3 4; do
        rc=0
        LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy timeout -k 5 60 "$prog" "$T/words64.bin" hflip 0 \
            >"$T/out" 2>&1 || rc=$?
        grep -q '^OK reads=6' "$T/out" || { show "$T/out"; fail "hflip under $policy, round $round: exit status $rc"; }
        ! grep -q 'during the big read' "$T/out" || during=$((during + 1))
    done
    [[ $during -gt 0 ]] || fail "hflip under $policy: the timer never fired during the big read (nothing tested)"
    CASES=$((CASES + 1))
done
command -v gdb >/dev/null || { note "gdb is not installed (apt-get install gdb): the cases that need it are skipped"; done_ok; exit 0; }

# gdb_start POLICY: the gdb commands every case begins with: the program
# under the shim and POLICY, run to claimrace_ready (breakpoint 1).
gdb_start() {
    echo "set pagination off"
    echo "set confirm off"
    echo "handle SIGUSR1 SIGUSR2 nostop noprint pass"
    echo "set environment LD_PRELOAD=$IOHINT_LIB"
    echo "set environment IOHINT_POLICY=$1"
    echo "break claimrace_ready"
    echo "run"
}

# gdb_run POLICY MODE AT: claimrace MODE AT under gdb with $T/gdb.cmd, its
# output in $T/out.
gdb_run() {
    local rc=0
    timeout -k 5 120 gdb -q -batch -nx -x "$T/gdb.cmd" --args "$prog" "$f" "$2" "$3" >"$T/out" 2>&1 || rc=$?
    [[ $rc -ne 124 && $rc -ne 137 ]] || { show "$T/out"; fail "$1 $2: gdb timed out"; }
}

# stopped_in POLICY MODE FRAME WHAT: the stack gdb printed shows FRAME, or
# the case did not stop at WHAT it tests.
stopped_in() {
    grep -Eq "^#[0-9]+ .*\\b$3\\b" "$T/out" ||
        { show "$T/out"; fail "$1 $2: gdb did not stop in $3: not $4"; }
}

one() {
    local policy=$1 mode=$2 frame=$3 pread_frame=${4:-} out=$T/out
    {
        gdb_start "$policy"
        echo "set \$fd = fd"
        if [[ $mode == hipri ]]; then
            # A stop at the system call of the pread of the read this case
            # tests, before the kernel runs it (the quiet lane makes it
            # itself, without libc's pread64: shim/interpose.c, lane_pread).
            # gdb finds the instruction from the first such call it catches
            # (the pc at a system call's entry is right after the 2-byte
            # syscall instruction) and stops there at the next one.
            echo "catch syscall pread64"
            echo "continue"
            echo "while !\$_any_caller_is(\"$pread_frame\", 8)"
            echo "continue"
            echo "end"
            echo "break *(\$pc - 2)"
            echo "delete 2"
            echo "continue"
            echo "bt 8"
            echo "watch -l ((struct ioh_ofd *) ioh__fd_page0[\$fd].ofd)->offset"
            echo "delete 3"
            echo "signal SIGUSR1"
            echo "bt 8"
            echo "signal SIGUSR2"
        else
            echo "watch -l ((struct ioh_ofd *) ioh__fd_page0[\$fd].ofd)->offset"
            echo "continue"
            echo "bt 8"
            echo "signal SIGUSR1"
        fi
        echo "delete"
        echo "continue"
    } >"$T/gdb.cmd"
    gdb_run "$policy" "$mode" 600
    grep -q '^Hardware watchpoint [0-9]*: -location' "$out" ||
        { show "$out"; fail "$policy $mode: no hardware watchpoint on the offset (debug info?)"; }
    stopped_in "$policy" "$mode" "$frame" "the claim this case tests"
    local want=1
    if [[ $mode == hipri ]]; then
        want=2
        stopped_in "$policy" "$mode" "$pread_frame" "the main read's pread, where the first handler runs"
        local ms
        ms=$(sed -n 's/^pinned calls in the handler: \([0-9]*\) ms$/\1/p' "$out")
        [[ -n $ms && $ms -lt 150 ]] ||
            { show "$out"; fail "$policy $mode: three pinned calls in the handler took ${ms:-?} ms (each waited for the read it interrupted?)"; }
    fi
    grep -q "^OK reads=[0-9]* handler=$want\$" "$out" || { show "$out"; fail "$policy $mode: lost or doubled bytes"; }
    CASES=$((CASES + 1))
}

for mode in dup close seekclose hipri; do
    one auto "$mode" private_quiet_read private_quiet_read
    one sequential "$mode" lazy_consume lazy_pread
done
for mode in dup close seekclose; do
    one coalesce "$mode" ioh_coalesce_read_fast_st
done

# window MODE BREAK FINISH: a read of 4 KiB (claimrace.c, sharewin and
# syncsig), gdb stopping at BREAK (then out of it if FINISH) to send
# SIGUSR1, whose handler reads 4 KiB. sharewin: right after the main read
# found the description fit for a lazy read, the handler shares it
# (O_DIRECT set and cleared) and reads; syncsig: inside the sync of the
# main loop's F_SETFL O_DIRECT, the handler reads. Both gave the first 4 KiB
# twice (found by review): the share left the description's kernel offset
# to be synced back over the handler's read; the handler's read found the
# sync its own and read at the offset not yet synced. Now the share settles
# the description, and a sync blocks signals until done.
window() {
    local policy=$1 mode=$2 brk=$3 finish=$4 frame=$5 out=$T/out
    {
        gdb_start "$policy"
        echo "break $brk"
        echo "continue"
        [[ -z $finish ]] || echo "finish"
        echo "bt 6"
        echo "signal SIGUSR1"
        echo "delete"
        echo "continue"
    } >"$T/gdb.cmd"
    gdb_run "$policy" "$mode" 0
    grep -Eq "^Breakpoint 2(\.[0-9]+)?," "$out" || { show "$out"; fail "$policy $mode: gdb never stopped at $brk"; }
    stopped_in "$policy" "$mode" "$frame" "the window this case tests"
    grep -q '^OK reads=2 handler=1$' "$out" || { show "$out"; fail "$policy $mode: the first 4 KiB twice, or the offset off"; }
    CASES=$((CASES + 1))
}
for policy in sequential auto coalesce; do
    window "$policy" sharewin fd_enter_read finish do_read
    window "$policy" syncsig sync_kernel "" do_fcntl
    window "$policy" syncfion sync_kernel "" ioh_ofd_sync_for_call    # (review)
done

done_ok
