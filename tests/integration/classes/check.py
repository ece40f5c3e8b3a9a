#!/usr/bin/python3
"""check.py JSON PATH ASSERTION...: assert what `iohint analyze --json --all`
says about one file, found by its path (files[].path).

An ASSERTION is FIELD OP VALUE, FIELD a dotted path into the file's record
(class, order, stride, small, evidence.window_ratio, window_stats.drift_per_read,
request_sizes.top.0.size, ...) and OP one of:
  =   equal (numbers compared as numbers; true/false/null as JSON)
  !=  not equal
  <  <=  >  >=   numeric comparisons
  ~   one of a comma-separated list (class~re-read,sparse)
  @   a list that contains the value (program_advice@random)

Prints one line with the class and its main evidence; on a failed assertion,
prints every failed one and the file's class evidence and phases to stderr and
exits 1. Exit 2 when the file is not in the report at all.
"""
import json
import sys


def get(rec, dotted):
    cur = rec
    for part in dotted.split('.'):
        if isinstance(cur, list):
            cur = cur[int(part)] if part.isdigit() and int(part) < len(cur) else None
        elif isinstance(cur, dict):
            cur = cur.get(part)
        else:
            return None
    return cur


def parse_value(s):
    try:
        return json.loads(s)
    except ValueError:
        return s


def check(rec, assertion):
    for op in ('!=', '<=', '>=', '=', '<', '>', '~', '@'):
        field, sep, want = assertion.partition(op)
        if sep and field and all(c not in field for c in '!<>=~@'):
            break
    else:
        raise SystemExit('check.py: bad assertion %r' % assertion)
    have = get(rec, field)
    if op == '~':
        ok = have in [parse_value(w) for w in want.split(',')]
    elif op == '@':
        ok = isinstance(have, list) and parse_value(want) in have
    elif op in ('=', '!='):
        w = parse_value(want)
        eq = have == w if not (isinstance(have, (int, float)) and isinstance(w, (int, float))) \
            else float(have) == float(w)
        ok = eq if op == '=' else not eq
    else:
        if not isinstance(have, (int, float)) or isinstance(have, bool):
            return False, '%s is %r, not a number (wanted %s %s)' % (field, have, op, want)
        w = float(want)
        ok = {'<': have < w, '<=': have <= w, '>': have > w, '>=': have >= w}[op]
    return ok, '%s is %r, wanted %s %s' % (field, have, op, want)


def summary(rec):
    e = rec.get('evidence') or {}
    bits = ['%s (confidence %.2f)' % (rec.get('class'), rec.get('confidence') or 0)]
    if rec.get('small'):
        bits.append('small')
    for k in ('order', 'stride', 'window', 'hot_set'):
        if rec.get(k) is not None:
            bits.append('%s=%s' % (k, rec[k]))
    if rec.get('class') in ('windowed', 'sparse'):
        bits.append('window_ratio=%.3f' % (e.get('window_ratio') or 0))
        bits.append('drift/read=%s (samples: %s)' % (rec.get('drift_per_read'),
                    (rec.get('window_stats') or {}).get('drift_per_read')))
    bits.append('%d reads' % rec.get('reads', 0))
    phases = rec.get('phases') or []
    if len(phases) > 1:
        bits.append('phases ' + ' -> '.join('%s(%d)' % (p['class'], p['reads']) for p in phases))
    return ', '.join(bits)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    doc, path = json.load(open(sys.argv[1])), sys.argv[2]
    recs = [f for f in doc.get('files', []) if f.get('path') == path]
    if not recs:
        print('check.py: %s is not in the report; files: %s' %
              (path, ', '.join(f.get('path', '?') for f in doc.get('files', [])[:20])),
              file=sys.stderr)
        sys.exit(2)
    rec = recs[0]
    failed = []
    for a in sys.argv[3:]:
        ok, msg = check(rec, a)
        if not ok:
            failed.append(msg)
    print('  %s: %s' % (path, summary(rec)))
    if failed:
        for m in failed:
            print('    FAILED: ' + m, file=sys.stderr)
        e = rec.get('evidence') or {}
        keys = ('window_reads', 'frac_sequential', 'frac_reverse', 'frac_forward',
                'frac_backward', 'frac_overlap', 'frac_reread', 'frac_stride', 'stride',
                'request_size', 'streams', 'order', 'window', 'window_ratio',
                'drift_per_read', 'density', 'extent', 'passes')
        print('    evidence: ' + ', '.join('%s=%s' % (k, e.get(k)) for k in keys), file=sys.stderr)
        print('    steps: %s; footprint %s of %s bytes; window_stats %s' %
              (rec.get('steps'), rec.get('footprint'), rec.get('size'), rec.get('window_stats')),
              file=sys.stderr)
        for p in rec.get('phases') or []:
            print('    phase %s: %d reads, confidence %.2f' %
                  (p['class'], p['reads'], p['confidence'] or 0), file=sys.stderr)
        sys.exit(1)


main()
