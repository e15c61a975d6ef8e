"""Helpers shared by the Python CLI and interop tests (tests/*/*.py): pass/fail counting with
one PASS/FAIL line per check, running the CLI, short text for failure details, the LEB128
varint. A test script imports it with

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
    import wktest

and ends with `sys.exit(wktest.summary("name"))`, which prints `name: N passed, M failed`.
"""
import subprocess
import sys

# Set to False to print only failures (suites with thousands of checks).
PRINT_PASSES = True

_passed = 0
_failed = 0


def check(name, ok, detail=""):
    """Counts one check; prints `PASS name` or `FAIL name: detail`. Returns ok."""
    global _passed, _failed
    if ok:
        _passed += 1
        if not PRINT_PASSES:
            return ok
        print("PASS " + name)
    else:
        _failed += 1
        print("FAIL " + name + (": " + detail if detail else ""))
    sys.stdout.flush()
    return ok


def failed():
    return _failed


def summary(label):
    """Prints `label: N passed, M failed`; returns the exit status (1 when any check failed)."""
    print("%s: %d passed, %d failed" % (label, _passed, _failed))
    sys.stdout.flush()
    return 1 if _failed else 0


def args(usage, names):
    """The command line's first len(names) arguments, in order; prints `usage: USAGE` and exits 1
    when there are fewer."""
    if len(sys.argv) <= len(names):
        print("usage: " + usage)
        sys.exit(1)
    return sys.argv[1:1 + len(names)]


def run(argv, data=b"", timeout=300):
    """Runs argv with data on stdin; returns the CompletedProcess with stdout and stderr bytes."""
    return subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)


def text(b, n=300):
    """b (bytes or anything printable) as text, cut to n characters."""
    s = b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b)
    return s if len(s) <= n else s[:n] + "..."


def err_lines(r):
    """The stderr lines of a CompletedProcess."""
    return r.stderr.decode("utf-8", "replace").splitlines()


def uvarint(n):
    """n as an unsigned LEB128 varint."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)
