#!/bin/bash
# sqlite3 reads every database page with pread64 and takes fcntl64 locks
# (INTERPOSITION.md section 0). Point lookups by primary key on a generated
# database: identical output, pread events on the database file, and exactly
# the pages the kernel saw read (strace) - a few, not the whole file.
source "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

db=$T/test.db
sqlite3 "$db" "
    PRAGMA page_size = 4096;
    CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30000)
    INSERT INTO t SELECT x, printf('value-%08d-%s', x, hex(randomblob(24))) FROM c;
    CREATE INDEX tv ON t(v);"
size=$(fsize "$db")
[[ $size -gt 1000000 ]] || fail "the generated database is only $size bytes"

q="SELECT v FROM t WHERE id = 17; SELECT v FROM t WHERE id = 12345; SELECT v FROM t WHERE id = 29999;"
same_output lookups -- sqlite3 "$db" "$q"
[[ $(wc -l <"$T/lookups/shim.out") -eq 3 ]] || fail "lookups: expected 3 rows"
tc -p "$db" --op pread --includes 0:100
tc_strace "$db"
covered=$("$TRACECHECK" "$TRACE" | awk -v p="$db" '$1 == p { sub("covered=", "", $4); print $4 }')
[[ $covered -lt $((size / 10)) ]] ||
    fail "lookups: the trace covers $covered of $size bytes: point lookups should touch a few pages"

# Through the index (a range on v), opened read-only.
same_output index_lookup -- sqlite3 -readonly "$db" "SELECT id FROM t WHERE v >= 'value-00020000-' AND v < 'value-00020001';"
tc -p "$db" --op pread
tc_strace "$db"

# A full scan reads every page of the table.
same_output scan -- sqlite3 "$db" "SELECT count(*), sum(length(v)) FROM t;"
tc -p "$db" --op pread
tc_strace "$db"

# Two processes (INTERPOSITION.md section 8): a connection reads a row, a
# second sqlite3 process updates it, the first reads it again and must see
# the new value (sqlite re-reads its pages under fcntl locks; a cache that
# ignores the locks serves the old row).
cat >"$T/two.py" <<'PY'
import sqlite3, subprocess, sys
db = sys.argv[1]
con = sqlite3.connect(db)
print(con.execute("SELECT v FROM t WHERE id = 4242").fetchone()[0][:15])
subprocess.run(["sqlite3", db, "UPDATE t SET v = 'changed' || id WHERE id = 4242;"], check=True)
print(con.execute("SELECT v FROM t WHERE id = 4242").fetchone()[0])
PY
same_output two_processes -- bash -c 'cp "$1" two.db && /usr/bin/python3 "$2" two.db' _ "$db" "$T/two.py"
grep -qx "changed4242" "$T/two_processes/shim.out" ||
    { show "$T/two_processes/shim.out"; fail "two_processes: the reader did not see the other process's update"; }

done_ok
