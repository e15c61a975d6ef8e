#!/usr/bin/python3
"""CLI contract tests for `wirekit colloq` (the Colloq plan codec, RFC-0005; spec
shared/specs/colloq.md "CLI details").

    /usr/bin/python3 cli_test.py path/to/wirekit TESTS_DIR

TESTS_DIR is the repository's tests/ folder; the library's fixtures under tests/colloq/fixtures/
are picked up by glob at run time. Besides them the test writes its own conversations and
transcripts, and carries an independent model of the envelopes (transition ids, the binary frame
and payload layout) so that what the CLI writes is checked against the spec, not only against
itself. Covers:
  1. --help at every level, usage errors (exit 1), unreadable files (exit 1);
  2. compile: canonical plan JSON (sorted keys, no whitespace) that hashes (BLAKE3) to the
     identity printed as `plan <identity>` on stderr, stable across runs and across key order and
     whitespace of the conversation; transition ids in (from, message, sender) order; schedules;
     compile errors exit 2 naming the error and the JSON path; the plan file accepted as --plan;
  3. run: every transcript (ours and the fixtures'), valid and invalid, in all three encodings
     gives the same trace (criterion 1); our transcripts' traces equal the model's, with the exact
     failure kind, its seq and the exit status (0 clean end, 2 failure, 3 truncated);
  4. convert: every encoding pair, byte-exact round trips; the binary frames equal the model's
     bytes; frames that cannot be re-encoded are refused;
  5. verify: every produced trace is accepted, tampered ones are rejected;
  6. prefaces: another plan identity (incl. plans differing only in a payload schedule, criterion
     6), another wire, a malformed preface and an unknown role are refused before frame zero;
  7. truncation at every byte of binary transcripts: exit 3 or a clean earlier end; streaming of
     transcripts larger than one 64 KiB read and of frames larger than it;
  8. gen: the two files for every fixture conversation (and default names, --out-dir), both
     compiled on their own with -std=c17 -Wall -Wextra -Werror (-pedantic); an invalid plan exits 2
     with the compile error and its JSON path and writes no file; a bad prefix or a missing
     directory exits 1 and writes no file.
Ends with `colloq_cli: N passed, M failed`.
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
import wktest  # noqa: E402
wktest.PRINT_PASSES = False  # thousands of checks: print failures only
from wktest import check, err_lines, text, uvarint  # noqa: E402

if len(sys.argv) < 3:
    print("usage: cli_test.py WIREKIT_CLI TESTS_DIR")
    sys.exit(1)
WIREKIT = sys.argv[1]
FIXTURES = os.path.join(sys.argv[2], "colloq", "fixtures")
TMP = tempfile.mkdtemp(prefix="colloq_cli_")
WIRES = ["reference", "compact", "binary"]


def run(args, data=b""):
    return wktest.run([WIREKIT, "colloq"] + args, data, timeout=300)


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def jdump(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def trace_of(out):
    """Parsed trace lines; None when a line is not JSON."""
    try:
        return [json.loads(l) for l in out.decode().splitlines() if l.strip()]
    except ValueError:
        return None


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def norm(model, lines):
    """lines (trace or envelope objects) with every f32 value rounded to binary32: the CLI writes
    the shortest decimal that reads back to the same f32, which as a double may differ."""
    if lines is None:
        return None
    out = json.loads(json.dumps(lines))
    for l in out:
        msg = l.get("message")
        if msg is None and "t" in l and l["t"] < len(model.transitions):
            msg = model.transitions[l["t"]]["message"]
        for f in model.messages.get(msg, []):
            if f["type"] == "f32" and f["name"] in l.get("payload", {}):
                v = l["payload"][f["name"]]
                if isinstance(v, (int, float)):
                    l["payload"][f["name"]] = f32(v)
    return out


# ---------------------------------------------------------------------------------------------
# The model: transition ids, payload schedules and the three encodings, straight from the spec.
# ---------------------------------------------------------------------------------------------
FIXED = {"bool": ("<B", 1), "u8": ("<B", 1), "u16": ("<H", 2), "u32": ("<I", 4),
         "u64": ("<Q", 8), "i8": ("<b", 1), "i16": ("<h", 2), "i32": ("<i", 4),
         "i64": ("<q", 8), "f32": ("<f", 4), "f64": ("<d", 8)}


def bkey(s):
    return s.encode("utf-8")


class Model:
    def __init__(self, conv):
        self.conv = conv
        self.messages = {}
        for name, m in conv["messages"].items():
            fields = m["fields"] if isinstance(m, dict) else m
            self.messages[name] = fields
        ts = sorted(conv["transitions"],
                    key=lambda t: (bkey(t["from"]), bkey(t["message"]), bkey(t["sender"])))
        self.transitions = ts  # index = id
        self.identity = None

    def tid(self, state, message, sender=None):
        for i, t in enumerate(self.transitions):
            if t["from"] == state and t["message"] == message and sender in (None, t["sender"]):
                return i
        raise KeyError((state, message, sender))

    def payload_bin(self, message, payload):
        fields = self.messages[message]
        opts = [f for f in fields if f.get("optional")]
        bitmap = bytearray((len(opts) + 7) // 8)
        body = b""
        oi = 0
        for f in fields:
            present = f["name"] in payload
            if f.get("optional"):
                if present:
                    bitmap[oi // 8] |= 1 << (oi % 8)
                oi += 1
            if not present:
                continue
            v = payload[f["name"]]
            t = f["type"]
            if t in FIXED:
                body += struct.pack(FIXED[t][0], int(v) if t == "bool" else v)
            elif t == "string":
                b = v.encode("utf-8")
                body += uvarint(len(b)) + b
            else:
                b = bytes.fromhex(v)
                body += uvarint(len(b)) + b
        return bytes(bitmap) + body

    def frame(self, wire, seq, state, message, payload, tid=None):
        if tid is None:
            tid = self.tid(state, message)
        if wire == "reference":  # names the transition by (state, message, sender)
            return (jdump({"seq": seq, "state": state, "message": message,
                           "sender": self.transitions[tid]["sender"], "payload": payload})
                    + "\n").encode()
        if wire == "compact":
            return (jdump({"t": tid, "seq": seq, "payload": payload}) + "\n").encode()
        p = self.payload_bin(message, payload)
        return uvarint(tid) + uvarint(seq) + uvarint(len(p)) + p

    def preface(self, wire, role, plan=None):
        return (jdump({"colloq": "wire/v0", "plan": plan or self.identity, "wire": wire,
                       "role": role}) + "\n").encode()

    def trace_line(self, seq, tid, payload):
        t = self.transitions[tid]
        # payload keys in schedule order
        order = [f["name"] for f in self.messages[t["message"]]]
        p = {k: payload[k] for k in order if k in payload}
        return {"seq": seq, "transition": tid, "from": t["from"], "to": t["to"],
                "message": t["message"], "payload": p}


TOKEN_STREAM = {
    "colloq": "conversation/v0",
    "name": "token-stream",
    "roles": ["client", "server"],
    "states": ["Idle", "Streaming", "Done"],
    "initial": "Idle", "final": ["Done"],
    "messages": {
        "Prompt": [{"name": "text", "type": "string"}, {"name": "max_tokens", "type": "u32"}],
        "Token": [{"name": "index", "type": "u32"}, {"name": "text", "type": "string"},
                  {"name": "logprob", "type": "f32", "optional": True}],
        "End": [{"name": "reason", "type": "string", "optional": True}]},
    "transitions": [
        {"from": "Idle", "message": "Prompt", "sender": "client", "to": "Streaming"},
        {"from": "Streaming", "message": "Token", "sender": "server", "to": "Streaming"},
        {"from": "Streaming", "message": "End", "sender": "server", "to": "Done"}]}

# Every type, two bitmap bytes (nine optional fields), a small ceiling and a large one.
ALL_FIELDS = [
    {"name": "b", "type": "bool"}, {"name": "u8v", "type": "u8"}, {"name": "u16v", "type": "u16"},
    {"name": "u32v", "type": "u32"}, {"name": "u64v", "type": "u64"},
    {"name": "i8v", "type": "i8"}, {"name": "i16v", "type": "i16"},
    {"name": "i32v", "type": "i32"}, {"name": "i64v", "type": "i64"},
    {"name": "f32v", "type": "f32"}, {"name": "f64v", "type": "f64"},
    {"name": "s", "type": "string"}, {"name": "by", "type": "bytes"}]
ALL_TYPES = {
    "colloq": "conversation/v0",
    "name": "all types",
    "roles": ["zeta", "alpha"],
    "states": ["S0", "S1", "End"],
    "initial": "S0", "final": ["End"],
    "messages": {
        "All": ALL_FIELDS + [dict(f, name="o_" + f["name"], optional=True)
                             for f in ALL_FIELDS[:9]],
        "Small": {"fields": [{"name": "data", "type": "bytes"}], "max_payload": 8},
        "Blob": {"fields": [{"name": "data", "type": "bytes"},
                            {"name": "note", "type": "string", "optional": True}],
                 "max_payload": 1048576},
        "Fin": []},
    "transitions": [
        {"from": "S1", "message": "Fin", "sender": "alpha", "to": "End"},
        {"from": "S0", "message": "All", "sender": "zeta", "to": "S1"},
        {"from": "S1", "message": "All", "sender": "alpha", "to": "S1"},
        {"from": "S1", "message": "Small", "sender": "zeta", "to": "S1"},
        {"from": "S1", "message": "Blob", "sender": "zeta", "to": "S1"}]}

ALL_MIN = {"b": False, "u8v": 0, "u16v": 0, "u32v": 0, "u64v": 0, "i8v": -128, "i16v": -32768,
           "i32v": -2147483648, "i64v": -9223372036854775808, "f32v": -0.5, "f64v": 0.1,
           "s": "", "by": ""}
ALL_MAX = {"b": True, "u8v": 255, "u16v": 65535, "u32v": 4294967295,
           "u64v": 18446744073709551615, "i8v": 127, "i16v": 32767, "i32v": 2147483647,
           "i64v": 9223372036854775807, "f32v": 3.4028234663852886e+38, "f64v": -1.5e-300,
           "s": "h\u00e9llo \u2603 \U0001F600 \"q\" \\ \n\t", "by": "00ff10ab"}
ALL_OPT = dict(ALL_MAX, **{"o_" + k: v for k, v in ALL_MIN.items()
                           if k in [f["name"] for f in ALL_FIELDS[:9]]})


def compile_model(conv, name):
    path = write(name + ".json", jdump(conv))
    r = run(["compile", path])
    m = Model(conv)
    m.path = path
    lines = err_lines(r)
    if r.returncode == 0 and lines and lines[0].startswith("plan "):
        m.identity = lines[0][5:]
    m.canonical = r.stdout
    return m


# ---------------------------------------------------------------------------------------------
# 1. help and usage
# ---------------------------------------------------------------------------------------------
def test_help():
    r = subprocess.run([WIREKIT, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check("wirekit --help lists colloq", r.returncode == 0 and b"wirekit colloq" in r.stdout)
    r = run(["--help"])
    check("colloq --help", r.returncode == 0 and all(
        ("wirekit colloq " + v).encode() in r.stdout
        for v in ["compile", "run", "convert", "verify", "gen"]), text(r.stdout))
    r = run(["bench"])
    check("colloq bench is gone (bench/colloq_bench is the report): exit 1",
          r.returncode == 1 and b"bench" in r.stderr, text(r.stderr))
    r = run([])
    check("colloq without a command: exit 1", r.returncode == 1)
    for verb in ["compile", "run", "convert", "verify", "gen"]:
        r = run([verb, "--help"])
        check("colloq %s --help" % verb, r.returncode == 0 and r.stdout.startswith(b"usage:"),
              text(r.stdout + r.stderr))
    r = run(["nosuch"])
    check("unknown command: exit 1", r.returncode == 1 and err_lines(r)[0].startswith("WK_ERR_USAGE"))
    cases = [(["compile"], "compile without a file"),
             (["compile", "a", "b"], "compile with two files"),
             (["run", "--wire", "binary"], "run without --plan"),
             (["run", "--plan", TMP + "/x"], "run without --wire"),
             (["run", "--plan", TMP + "/x", "--wire", "json"], "run with a bad wire"),
             (["convert", "--plan", TMP + "/x", "--from", "binary"], "convert without --to"),
             (["convert", "--plan", TMP + "/x", "--from", "binary", "--to", "x"], "convert bad --to"),
             (["verify", "--plan", TMP + "/x"], "verify without a trace"),
             (["run", "--plan", TMP + "/x", "--wire", "binary", "--bogus"], "unknown option")]
    for args, what in cases:
        r = run(args)
        check("usage: " + what, r.returncode == 1 and len(err_lines(r)) == 1,
              "exit %d %s" % (r.returncode, text(r.stderr)))
    r = run(["compile", os.path.join(TMP, "missing.json")])
    check("compile: missing file exit 1", r.returncode == 1 and len(err_lines(r)) == 1)
    r = run(["run", "--plan", os.path.join(TMP, "missing.json"), "--wire", "binary"])
    check("run: missing plan file exit 1", r.returncode == 1 and len(err_lines(r)) == 1)


# ---------------------------------------------------------------------------------------------
# 2. compile
# ---------------------------------------------------------------------------------------------
def blake3(data):
    r = subprocess.run([WIREKIT, "blake3"], input=data, stdout=subprocess.PIPE)
    return r.stdout.decode().strip()


def test_compile(m, label):
    conv = m.conv
    r = run(["compile", m.path])
    ok = check(label + ": compile exit 0", r.returncode == 0, text(r.stderr))
    if not ok:
        return False
    lines = err_lines(r)
    check(label + ": one stderr line `plan <identity>`",
          len(lines) == 1 and lines[0].startswith("plan ") and len(lines[0]) == 69 and
          all(c in "0123456789abcdef" for c in lines[0][5:]), text(r.stderr))
    ident = lines[0][5:]
    check(label + ": identity = BLAKE3(canonical plan)", blake3(r.stdout) == ident)
    try:
        plan = json.loads(r.stdout)
    except ValueError:
        return check(label + ": plan is JSON", False, text(r.stdout))
    canon = json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    check(label + ": plan canonical (sorted keys, no whitespace)", canon == r.stdout,
          text(r.stdout))
    # stable: again, and from a reordered, re-indented conversation
    r2 = run(["compile", m.path])
    check(label + ": compile stable", r2.stdout == r.stdout and r2.stderr == r.stderr)
    rev = {k: conv[k] for k in reversed(list(conv.keys()))}
    path = write(label + "_reordered.json", json.dumps(rev, indent=3))
    r3 = run(["compile", path])
    check(label + ": key order and whitespace do not change the plan",
          r3.stdout == r.stdout and r3.stderr == r.stderr)
    r4 = run(["compile", "-"], jdump(conv).encode())
    check(label + ": compile - reads stdin", r4.stdout == r.stdout)
    # transition ids
    want = [(t["from"], t["message"], t["sender"], t["to"]) for t in m.transitions]
    got = [(t.get("from"), t.get("message"), t.get("sender"), t.get("to"))
           for t in plan.get("transitions", [])]
    check(label + ": transitions sorted by (from, message, sender)", got == want,
          "%r vs %r" % (got, want))
    check(label + ": transition ids dense",
          [t.get("id") for t in plan.get("transitions", [])] == list(range(len(want))))
    sched = plan.get("wire", {}).get("payload_schedules", {})
    for name, fields in m.messages.items():
        s = sched.get(name, {})
        nopt = sum(1 for f in fields if f.get("optional"))
        mp = conv["messages"][name].get("max_payload", 65536) \
            if isinstance(conv["messages"][name], dict) else 65536
        check(label + ": schedule of " + name,
              [f.get("name") for f in s.get("fields", [])] == [f["name"] for f in fields] and
              [f.get("width") for f in s.get("fields", [])] ==
              [FIXED[f["type"]][1] if f["type"] in FIXED else None for f in fields] and
              s.get("optional_count") == nopt and s.get("bitmap_bytes") == (nopt + 7) // 8 and
              s.get("max_payload") == mp, jdump(s))
    # the compiled plan is accepted as --plan and keeps its identity
    ppath = write(label + ".plan.json", r.stdout)
    m.plan_path = ppath
    r5 = run(["compile", ppath])
    check(label + ": compile refuses a plan file (conversations only)", r5.returncode == 2)
    return True


def test_compile_errors():
    base = TOKEN_STREAM

    def variant(f):
        c = json.loads(json.dumps(base))
        f(c)
        return c

    def t_unknown_to(c):
        c["transitions"][1]["to"] = "Nowhere"

    def t_unknown_from(c):
        c["transitions"][2]["from"] = "Nowhere"

    def t_dup(c):
        c["transitions"].append(dict(c["transitions"][1], to="Done"))

    def t_type(c):
        c["messages"]["Token"][1]["type"] = "str"

    def t_role(c):
        c["transitions"][0]["sender"] = "nobody"

    def t_msg(c):
        c["transitions"][0]["message"] = "Nope"

    def t_name(c):
        c["messages"]["Token"][0]["name"] = "1index"

    def t_initial(c):
        c["initial"] = "Start"

    def t_dupfield(c):
        c["messages"]["Token"][1]["name"] = "index"

    def t_version(c):
        c["colloq"] = "conversation/v9"

    def t_maxp(c):
        c["messages"]["End"] = {"fields": [], "max_payload": 0}

    cases = [
        (t_unknown_to, "COLLOQ_ERR_UNKNOWN_STATE", "$.transitions[1].to"),
        (t_unknown_from, "COLLOQ_ERR_UNKNOWN_STATE", "$.transitions[2].from"),
        (t_dup, "COLLOQ_ERR_DUPLICATE", "$.transitions[3]"),
        (t_type, "COLLOQ_ERR_UNKNOWN_TYPE", "$.messages.Token"),
        (t_role, "COLLOQ_ERR_UNKNOWN_ROLE", "$.transitions[0].sender"),
        (t_msg, "COLLOQ_ERR_UNKNOWN_MESSAGE", "$.transitions[0].message"),
        (t_name, "COLLOQ_ERR_NAME", "$.messages.Token"),
        (t_initial, "COLLOQ_ERR_UNKNOWN_STATE", "$.initial"),
        (t_dupfield, "COLLOQ_ERR_DUPLICATE", "$.messages.Token"),
        (t_version, "COLLOQ_ERR_SCHEMA", "$.colloq"),
        (t_maxp, "COLLOQ_ERR_LIMIT", "$.messages.End"),
    ]
    for i, (f, name, path) in enumerate(cases):
        p = write("bad%d.json" % i, jdump(variant(f)))
        r = run(["compile", p])
        lines = err_lines(r)
        check("compile error %s %s" % (name, path),
              r.returncode == 2 and r.stdout == b"" and len(lines) == 1 and
              lines[0].startswith(name) and path in lines[0],
              "exit %d: %s" % (r.returncode, text(r.stderr)))
        # the same file as --plan: refused the same way, before reading any input
        r = run(["run", "--plan", p, "--wire", "reference"], b"")
        check("--plan with a compile error: exit 2 " + name,
              r.returncode == 2 and err_lines(r)[:1] and err_lines(r)[0].startswith(name))
    p = write("notjson.json", '{"colloq": "conversation/v0", ')
    r = run(["compile", p])
    check("compile: not JSON", r.returncode == 2 and err_lines(r)[0].startswith("COLLOQ_ERR_JSON"),
          text(r.stderr))


# ---------------------------------------------------------------------------------------------
# 3-5. transcripts: run, convert, verify
# ---------------------------------------------------------------------------------------------
class Case:
    """A transcript built from logical frames. frames: (seq, state, message, payload[, tid]);
    `raw` entries are per-wire bytes given literally (for frames no encoder would write)."""

    def __init__(self, name, model, role, frames, accepted, failure=None, exit_code=0,
                 tail=None, convertible=True, wires=None):
        self.name, self.model, self.role = name, model, role
        self.wires = wires or WIRES  # the encodings the case exists in
        self.frames, self.accepted = frames, accepted
        self.failure, self.exit_code = failure, exit_code
        self.tail = tail or {}  # wire -> bytes appended after the frames
        self.convertible = convertible

    def transcript(self, wire):
        out = self.model.preface(wire, self.role)
        for fr in self.frames:
            if isinstance(fr, dict):
                out += fr[wire]
            else:
                out += self.model.frame(wire, *fr)
        return out + self.tail.get(wire, b"")

    def expected_trace(self):
        m = self.model
        lines = []
        for fr in self.frames[:self.accepted]:
            seq, state, message, payload = fr[:4]
            lines.append(m.trace_line(seq, m.tid(state, message), payload))
        if self.failure:
            lines.append({"failure": self.failure, "seq": self.accepted})
        return lines


def raw(reference, compact, binary):
    return {"reference": reference, "compact": compact, "binary": binary}


def token_cases(ts):
    P = ("Idle", "Prompt")
    T = ("Streaming", "Token")
    E = ("Streaming", "End")

    def f(seq, st, payload, tid=None):
        return (seq, st[0], st[1], payload) + ((tid,) if tid is not None else ())

    prompt = {"text": "Say hi", "max_tokens": 3}
    toks = [{"index": 0, "text": "Hi", "logprob": -0.25},
            {"index": 1, "text": " there"},
            {"index": 2, "text": "!", "logprob": 0.0}]
    valid = [f(0, P, prompt)] + [f(i + 1, T, t) for i, t in enumerate(toks)]
    end = f(4, E, {"reason": "stop"})
    c = []
    c.append(Case("ts-valid", ts, "client", valid + [end], 5))
    c.append(Case("ts-valid-end-noreason", ts, "server", valid + [f(4, E, {})], 5))
    c.append(Case("ts-clean-partial", ts, "client", valid[:2], 2))
    c.append(Case("ts-empty", ts, "client", [], 0))
    c.append(Case("ts-bad-sequence", ts, "client", valid[:2] + [f(5, T, toks[1])], 2,
                  "bad-sequence", 2))
    c.append(Case("ts-bad-sequence-zero", ts, "client", [f(1, P, prompt)], 0, "bad-sequence", 2))
    c.append(Case("ts-wrong-state", ts, "client", [f(0, T, toks[0])], 0, "wrong-state", 2))
    c.append(Case("ts-wrong-state-late", ts, "client", valid + [f(4, P, prompt)], 4,
                  "wrong-state", 2))
    c.append(Case("ts-after-final", ts, "client", valid + [end, f(5, T, toks[0])], 5,
                  "after-final", 2))
    # after-final wins over every other check, even an unreadable frame
    c.append(Case("ts-after-final-garbage", ts, "client", valid + [end], 5, "after-final", 2,
                  tail=raw(b"nonsense\n", b"nonsense\n", b"\xff\xff"), convertible=False))
    c.append(Case("ts-after-final-partial", ts, "client", valid + [end], 5, "after-final", 2,
                  tail=raw(b'{"seq":5', b'{"t":1', b"\x01\x05\x10"), convertible=False))
    # unknown transitions: (Idle, Token) is no transition; id 3 is outside the table
    unk = raw(b'{"seq":0,"state":"Idle","message":"Token","sender":"server",'
              b'"payload":{"index":0,"text":"x"}}\n',
              b'{"t":3,"seq":0,"payload":{"index":0,"text":"x"}}\n',
              uvarint(3) + uvarint(0) + uvarint(3) + b"\x00\x01x")
    c.append(Case("ts-unknown-transition", ts, "client", [unk], 0, "unknown-transition", 2,
                  convertible=False))
    unk2 = raw(b'{"seq":1,"state":"Streaming","message":"Nope","sender":"server","payload":{}}\n',
               b'{"t":1000000,"seq":1,"payload":{}}\n',
               uvarint(1000000) + uvarint(1) + uvarint(0))
    c.append(Case("ts-unknown-transition-late", ts, "client", valid[:1] + [unk2], 1,
                  "unknown-transition", 2, convertible=False))
    # malformed payloads, each in all three encodings
    pre = valid[:1]
    tok_t = ts.tid("Streaming", "Token")

    def mal(name, ref_payload, bin_payload):
        r_ = ('{"seq":1,"state":"Streaming","message":"Token","sender":"server","payload":%s}\n'
              % ref_payload)
        c_ = ('{"t":%d,"seq":1,"payload":%s}\n' % (tok_t, ref_payload))
        b_ = uvarint(tok_t) + uvarint(1) + uvarint(len(bin_payload)) + bin_payload
        c.append(Case("ts-malformed-" + name, ts, "client",
                      pre + [raw(r_.encode(), c_.encode(), b_)], 1, "malformed-payload", 2,
                      convertible=False))

    mal("missing-field", '{"index":1}', b"\x00" + struct.pack("<I", 1))
    mal("u32-range", '{"index":4294967296,"text":"a"}',
        b"\x00" + struct.pack("<I", 1) + b"\x01a\x00")  # binary: a trailing byte
    mal("unknown-key", '{"index":1,"text":"a","extra":1}',
        b"\x02" + struct.pack("<I", 1) + b"\x01a")  # binary: a bitmap bit beyond the optionals
    mal("wrong-type", '{"index":"1","text":"a"}',
        b"\x00" + struct.pack("<I", 1) + b"\x01\xff")  # binary: invalid UTF-8
    mal("null-optional", '{"index":1,"text":"a","logprob":null}',
        b"\x00" + struct.pack("<I", 1) + b"\x05a")  # binary: string length past the payload
    mal("fraction", '{"index":1.5,"text":"a"}',
        b"\x01" + struct.pack("<I", 1) + b"\x01a" + struct.pack("<f", float("nan")))  # NaN
    # duplicate keys (json-c would keep the last): in the payload a payload problem, in the
    # envelope an unreadable frame; reference and compact agree (binary: trailing byte / a
    # non-minimal header varint)
    mal("duplicate-key", '{"index":1,"text":"a","text":"b"}',
        b"\x00" + struct.pack("<I", 1) + b"\x01a\x00")
    mal("duplicate-escaped-key", '{"index":1,"text":"a","\\u0069ndex":2}',
        b"\x00" + struct.pack("<I", 1) + b"\x01a\x00")
    c.append(Case("ts-duplicate-envelope-key", ts, "client", pre, 1, "malformed-payload", 2,
                  tail=raw(b'{"seq":1,"seq":1,"state":"Streaming","message":"Token",'
                           b'"sender":"server","payload":{"index":1,"text":"a"}}\n',
                           b'{"t":%d,"seq":1,"t":%d,"payload":{"index":1,"text":"a"}}\n'
                           % (tok_t, tok_t), b"\x82\x00\x01"), convertible=False))
    # a reference frame's sender must name a transition from its state on its message
    c.append(Case("ts-reference-sender", ts, "client", pre, 1, "wrong-sender", 2,
                  tail=raw(b'{"seq":1,"state":"Streaming","message":"Token","sender":"client",'
                           b'"payload":{"index":1,"text":"a"}}\n', None, None),
                  convertible=False, wires=["reference"]))
    # the last line ends without '\n' / the last frame is cut: truncated, exit 3
    cut = ts.frame("binary", *valid[1])
    c.append(Case("ts-truncated", ts, "client", valid[:1], 1, "truncated", 3,
                  tail=raw(ts.frame("reference", *valid[1])[:-1],
                           ts.frame("compact", *valid[1])[:-1], cut[:-1])))
    return c


def all_cases(at):
    A = at.tid
    frames = [(0, "S0", "All", ALL_MIN), (1, "S1", "All", ALL_MAX), (2, "S1", "All", ALL_OPT),
              (3, "S1", "Small", {"data": "0102030405060708"[:14]}),
              (4, "S1", "Blob", {"data": "ab" * 1000, "note": "n"}),
              (5, "S1", "Fin", {})]
    c = [Case("at-valid", at, "alpha", frames, 6)]
    # Small: payload 1 + 8 bytes = 9 > 8
    big = {"data": "00" * 8}
    c.append(Case("at-payload-too-large", at, "zeta", frames[:3] + [(3, "S1", "Small", big)], 3,
                  "payload-too-large", 2, convertible=False))
    # u8 out of range in JSON / bool 2 in binary
    bad = dict(ALL_MIN, u8v=256)
    tid = A("S0", "All")
    binp = bytearray(at.payload_bin("All", ALL_MIN))
    binp[2] = 2  # bitmap (2 bytes) then bool
    c.append(Case("at-malformed-range", at, "zeta", [raw(
        at.frame("reference", 0, "S0", "All", bad), at.frame("compact", 0, "S0", "All", bad),
        uvarint(tid) + uvarint(0) + uvarint(len(binp)) + bytes(binp))], 0, "malformed-payload", 2,
        convertible=False))
    return c


RESULTS = {}  # case name -> trace bytes (the reference run), for verify


def run_case(case):
    exp = case.expected_trace()
    traces = {}
    for wire in case.wires:
        data = case.transcript(wire)
        write("%s.%s" % (case.name, wire), data)
        r = run(["run", "--plan", case.model.path, "--wire", wire], data)
        got = trace_of(r.stdout)
        traces[wire] = r.stdout
        check("run %s %s: exit %d" % (case.name, wire, case.exit_code),
              r.returncode == case.exit_code, "exit %d: %s" % (r.returncode, text(r.stderr)))
        check("run %s %s: trace" % (case.name, wire), norm(case.model, got) == norm(case.model, exp),
              "got %s\nwant %s" % (text(r.stdout, 2000), text(jdump(exp), 2000)))
        lines = err_lines(r)
        if case.failure:
            want = "COLLOQ_ERR_" + case.failure.upper().replace("-", "_")
            check("run %s %s: one stderr line %s" % (case.name, wire, want),
                  len(lines) == 1 and lines[0].startswith(want), text(r.stderr))
        else:
            check("run %s %s: quiet" % (case.name, wire), lines == [], text(r.stderr))
    if case.wires == WIRES:
        check("run %s: same trace bytes in all encodings (criterion 1)" % case.name,
              traces["reference"] == traces["compact"] == traces["binary"])
    # the compiled plan as --plan gives the same
    w0 = case.wires[-1]
    r = run(["run", "--plan", case.model.plan_path, "--wire", w0], case.transcript(w0))
    check("run %s with the compiled plan file" % case.name, r.stdout == traces[w0] and
          r.returncode == case.exit_code)
    RESULTS[case.name] = (case.model, traces["reference"])
    if case.convertible:
        test_convert(case)


def test_convert(case):
    m = case.model
    ref = case.transcript("reference")
    conv = {}
    for w in WIRES:
        r = run(["convert", "--plan", m.path, "--from", "reference", "--to", w], ref)
        conv[w] = r.stdout
        check("convert %s reference->%s exit %d" % (case.name, w, 3 if case.exit_code == 3 else 0),
              r.returncode == (3 if case.exit_code == 3 else 0),
              "exit %d %s" % (r.returncode, text(r.stderr)))
    if case.exit_code == 3:
        return
    # the binary frames are exactly the model's bytes; JSON ones read back to the same values
    check("convert %s: binary bytes = model" % case.name, conv["binary"] == case.transcript("binary"),
          "%r\nvs %r" % (conv["binary"][:200], case.transcript("binary")[:200]))
    for w in ["reference", "compact"]:
        want = [json.loads(l) for l in case.transcript(w).decode().splitlines()]
        got = [json.loads(l) for l in conv[w].decode().splitlines()]
        check("convert %s: %s values = model" % (case.name, w), norm(m, got) == norm(m, want))
    for a in WIRES:
        for b in WIRES:
            r = run(["convert", "--plan", m.path, "--from", a, "--to", b], conv[a])
            check("convert %s %s->%s byte-exact" % (case.name, a, b),
                  r.returncode == 0 and r.stdout == conv[b],
                  "exit %d %s" % (r.returncode, text(r.stderr)))


def test_convert_refusals(ts, cases):
    for case in cases:
        if case.convertible or case.name.startswith("ts-after-final"):
            continue  # (after-final is the checker's: convert sees garbage / a cut frame there)
        for w in case.wires:
            data = case.transcript(w)
            r = run(["convert", "--plan", case.model.path,
                     "--from", w, "--to", "binary" if w != "binary" else "reference"], data)
            want = "COLLOQ_ERR_" + case.failure.upper().replace("-", "_")
            check("convert refuses %s %s" % (case.name, w),
                  r.returncode == 2 and len(err_lines(r)) == 1 and
                  err_lines(r)[0].startswith(want), "exit %d %s" % (r.returncode, text(r.stderr)))
    # the preface is checked against --from
    case = cases[0]
    r = run(["convert", "--plan", ts.path, "--from", "compact", "--to", "binary"],
            case.transcript("reference"))
    check("convert: preface wire differs from --from", r.returncode == 2 and r.stdout == b"" and
          err_lines(r)[0].startswith("COLLOQ_ERR_WIRE_MISMATCH"), text(r.stderr))


def test_verify():
    n = 0
    for name, (m, trace) in sorted(RESULTS.items()):
        p = write(name + ".trace", trace)
        r = run(["verify", "--plan", m.path, p])
        check("verify accepts %s" % name, r.returncode == 0 and r.stdout.startswith(b"ok "),
              "exit %d %s" % (r.returncode, text(r.stderr)))
        r = run(["verify", "--plan", m.plan_path, "-"], trace)
        check("verify accepts %s (plan file, stdin)" % name, r.returncode == 0)
        lines = [json.loads(l) for l in trace.decode().splitlines()]
        for tname, t in tamperings(m, lines):
            n += 1
            data = "".join(jdump(l) + "\n" for l in t).encode()
            r = run(["verify", "--plan", m.path, "-"], data)
            check("verify rejects %s: %s" % (name, tname),
                  r.returncode == 2 and len(err_lines(r)) == 1 and
                  err_lines(r)[0].startswith("COLLOQ_ERR_"),
                  "exit %d %s" % (r.returncode, text(r.stderr)))
    check("verify: tampered traces exercised", n > 40, str(n))
    p = write("garbage.trace", b"not a trace\n")
    ts = RESULTS["ts-valid"][0]
    r = run(["verify", "--plan", ts.path, p])
    check("verify rejects a non-trace", r.returncode == 2 and
          err_lines(r)[0].startswith("COLLOQ_ERR_TRACE"), text(r.stderr))
    r = run(["verify", "--plan", ts.path, os.path.join(TMP, "missing.trace")])
    check("verify: missing trace file exit 1", r.returncode == 1)


def tamperings(m, lines):
    """Variants of a trace that must not verify."""
    frames = [l for l in lines if "failure" not in l]
    fail = [l for l in lines if "failure" in l]
    out = []

    def cp():
        return json.loads(json.dumps(lines))

    if frames:
        t = cp(); t[0]["seq"] = 1; out.append(("seq off", t))
        t = cp(); t[-1 if not fail else -2]["seq"] += 5; out.append(("last seq off", t))
        t = cp(); t[0]["transition"] = (t[0]["transition"] + 1) % len(m.transitions)
        out.append(("other transition", t))
        t = cp(); t[0]["to"] = t[0]["from"] if t[0]["to"] != t[0]["from"] else "Nowhere"
        out.append(("wrong to", t))
        t = cp(); t[0]["message"] = "Nope"; out.append(("wrong message", t))
        t = cp(); t[0]["payload"]["zz_extra"] = 1; out.append(("extra payload key", t))
        t = cp(); t[0]["transition"] = 99; out.append(("transition outside the table", t))
        req = [k for k in t[0]["payload"]]
        if req:
            t = cp(); k = req[0]; t[0]["payload"][k] = "x" if not isinstance(
                t[0]["payload"][k], str) else 12; out.append(("payload type", t))
        if len(frames) > 1:
            t = cp(); del t[0]; out.append(("first frame dropped", t))
            t = cp(); t[0], t[1] = t[1], t[0]; out.append(("frames swapped", t))
        if not fail:
            t = cp() + [{"failure": "wrong-state", "seq": len(frames) + 1}]
            out.append(("failure at the wrong seq", t))
    if fail:
        t = cp(); t[-1]["seq"] += 1; out.append(("failure seq off", t))
        t = cp(); t.append(t[0] if frames else {"failure": "truncated", "seq": 0})
        out.append(("entry after the failure", t))
        t = cp()
        t[-1]["failure"] = "after-final" if t[-1]["failure"] != "after-final" else "bad-sequence"
        out.append(("after-final iff finished", t))
        t = cp(); t[-1]["failure"] = "no-such-kind"; out.append(("unknown kind", t))
    return out


# ---------------------------------------------------------------------------------------------
# 6. prefaces
# ---------------------------------------------------------------------------------------------
def test_prefaces(ts, cases):
    valid = cases[0]
    data = valid.transcript("binary")
    body = data[data.index(b"\n") + 1:]
    # plans differing only in a payload schedule (criterion 6)
    variants = []
    v = json.loads(json.dumps(TOKEN_STREAM))
    v["messages"]["Token"][2]["type"] = "f64"
    variants.append(("Token.logprob f32 -> f64", v))
    v = json.loads(json.dumps(TOKEN_STREAM))
    v["messages"]["Token"] = {"fields": v["messages"]["Token"], "max_payload": 1024}
    variants.append(("Token max_payload 1024", v))
    v = json.loads(json.dumps(TOKEN_STREAM))
    v["messages"]["Token"][0], v["messages"]["Token"][1] = \
        v["messages"]["Token"][1], v["messages"]["Token"][0]
    variants.append(("Token fields reordered", v))
    for i, (what, conv) in enumerate(variants):
        other = compile_model(conv, "ts_variant%d" % i)
        check("schedule-only variant has another identity (%s)" % what,
              other.identity and other.identity != ts.identity)
        plan = json.loads(other.canonical)
        base = json.loads(ts.canonical)
        check("variant differs only in messages/schedules (%s)" % what,
              {k: v for k, v in plan.items() if k not in ("messages", "wire")} ==
              {k: v for k, v in base.items() if k not in ("messages", "wire")} and
              plan["transitions"] == base["transitions"])
        for wire in WIRES:
            # our transcript against their plan, and theirs against ours
            r = run(["run", "--plan", other.path, "--wire", wire], valid.transcript(wire))
            check("preface refused: %s, %s (plan mismatch)" % (what, wire),
                  r.returncode == 2 and r.stdout == b"" and len(err_lines(r)) == 1 and
                  err_lines(r)[0].startswith("COLLOQ_ERR_PLAN_MISMATCH"), text(r.stderr))
            r = run(["run", "--plan", ts.path, "--wire", wire],
                    other.preface(wire, "client") + valid.transcript(wire).split(b"\n", 1)[1])
            check("preface refused: our plan, theirs in the preface (%s, %s)" % (what, wire),
                  r.returncode == 2 and r.stdout == b"" and
                  err_lines(r)[0].startswith("COLLOQ_ERR_PLAN_MISMATCH"), text(r.stderr))
    for wire in WIRES:
        for other in WIRES:
            if other == wire:
                continue
            r = run(["run", "--plan", ts.path, "--wire", other], valid.transcript(wire))
            check("preface refused: %s transcript, --wire %s" % (wire, other),
                  r.returncode == 2 and r.stdout == b"" and
                  err_lines(r)[0].startswith("COLLOQ_ERR_WIRE_MISMATCH"), text(r.stderr))
    bad = [
        ("not JSON", b"hello\n", "COLLOQ_ERR_PREFACE", 2),
        ("wrong version", jdump({"colloq": "wire/v1", "plan": ts.identity, "wire": "binary",
                                 "role": "client"}).encode() + b"\n", "COLLOQ_ERR_PREFACE", 2),
        ("extra key", jdump({"colloq": "wire/v0", "plan": ts.identity, "wire": "binary",
                             "role": "client", "x": 1}).encode() + b"\n", "COLLOQ_ERR_PREFACE", 2),
        ("missing role", jdump({"colloq": "wire/v0", "plan": ts.identity,
                                "wire": "binary"}).encode() + b"\n", "COLLOQ_ERR_PREFACE", 2),
        ("identity not hex", jdump({"colloq": "wire/v0", "plan": "X" * 64, "wire": "binary",
                                    "role": "client"}).encode() + b"\n", "COLLOQ_ERR_PREFACE", 2),
        ("unknown wire", jdump({"colloq": "wire/v0", "plan": ts.identity, "wire": "cbor",
                                "role": "client"}).encode() + b"\n", "COLLOQ_ERR_PREFACE", 2),
        ("unknown role", ts.preface("binary", "router"), "COLLOQ_ERR_PREFACE_ROLE", 2),
        ("no newline", ts.preface("binary", "client")[:-1], "COLLOQ_ERR_TRUNCATED", 3),
        ("empty input", b"", "COLLOQ_ERR_TRUNCATED", 3),
        ("nothing after a cut preface", b'{"colloq":"wire/v0","pl', "COLLOQ_ERR_TRUNCATED", 3),
        ("endless line", b"{" + b" " * 10000, "COLLOQ_ERR_PREFACE", 2),
    ]
    for what, pre, name, code in bad:
        # (no body after an unterminated preface: a binary body may hold a '\n' byte)
        r = run(["run", "--plan", ts.path, "--wire", "binary"],
                pre + (body if pre.endswith(b"\n") else b""))
        check("preface refused: %s" % what,
              r.returncode == code and r.stdout == b"" and len(err_lines(r)) == 1 and
              err_lines(r)[0].startswith(name), "exit %d %s" % (r.returncode, text(r.stderr)))


# ---------------------------------------------------------------------------------------------
# 7. truncation and streaming
# ---------------------------------------------------------------------------------------------
def frame_ends(data):
    """Offsets where the preface and each binary frame end (by walking the varint headers)."""
    p = data.index(b"\n") + 1
    ends = [p]

    def rd(i):
        v, s = 0, 0
        while True:
            b = data[i]
            v |= (b & 0x7F) << s
            s += 7
            i += 1
            if not b & 0x80:
                return v, i

    while p < len(data):
        _, p = rd(p)
        _, p = rd(p)
        n, p = rd(p)
        p += n
        ends.append(p)
    return ends


def test_truncation(case, plan_path, label, full_out=None, step=1):
    data = case if isinstance(case, bytes) else case.transcript("binary")
    r = run(["run", "--plan", plan_path, "--wire", "binary"], data)
    if not check("truncation %s: whole transcript clean" % label, r.returncode == 0, text(r.stderr)):
        return
    full = trace_of(r.stdout)
    ends = frame_ends(data)
    bad = []
    for cut in list(range(0, len(data), step)) + [len(data) - 1]:
        if cut < 0:
            continue
        r = run(["run", "--plan", plan_path, "--wire", "binary"], data[:cut])
        got = trace_of(r.stdout)
        if cut in ends:
            k = ends.index(cut)
            ok = r.returncode == 0 and got == full[:k]
        elif cut < ends[0]:
            ok = r.returncode == 3 and r.stdout == b""
        else:
            k = sum(1 for e in ends[1:] if e <= cut)
            ok = r.returncode == 3 and got == full[:k] + [{"failure": "truncated", "seq": k}] \
                and err_lines(r)[0].startswith("COLLOQ_ERR_TRUNCATED")
        if not ok:
            bad.append("%d:exit %d" % (cut, r.returncode))
    check("truncation %s at every byte (%d bytes): exit 3 or a clean earlier end" %
          (label, len(data)), not bad, " ".join(bad[:10]))


def test_streaming(ts, at):
    # many frames: more than one 64 KiB read, a frame across every read boundary
    n = 20000
    frames = [(0, "Idle", "Prompt", {"text": "go", "max_tokens": n})]
    for i in range(n):
        p = {"index": i, "text": "tok%d" % i}
        if i % 3 == 0:
            p["logprob"] = -float(i % 7) / 4
        frames.append((i + 1, "Streaming", "Token", p))
    frames.append((n + 1, "Streaming", "End", {"reason": "length"}))
    case = Case("ts-long", ts, "client", frames, n + 2)
    exp = case.expected_trace()
    outs = {}
    for wire in WIRES:
        data = case.transcript(wire)
        r = run(["run", "--plan", ts.path, "--wire", wire], data)
        outs[wire] = r.stdout
        check("streaming %d frames (%d bytes) %s" % (n + 2, len(data), wire),
              r.returncode == 0 and norm(ts, trace_of(r.stdout)) == norm(ts, exp),
              "exit %d %s" % (r.returncode, text(r.stderr)))
    check("streaming: same trace in all encodings",
          outs["reference"] == outs["compact"] == outs["binary"])
    data = case.transcript("binary")
    r = run(["convert", "--plan", ts.path, "--from", "binary", "--to", "compact"], data)
    r2 = run(["convert", "--plan", ts.path, "--from", "compact", "--to", "binary"], r.stdout)
    check("streaming: convert binary->compact->binary", r2.returncode == 0 and r2.stdout == data)
    # frames larger than one read: Blob up to its 1 MiB ceiling, and one byte above it
    big = "5a" * (1048576 - 4 - 1 - 2)  # bitmap 1, varint 4 -> 1048576 - 1... stays under
    frames = [(0, "S0", "All", ALL_MIN), (1, "S1", "Blob", {"data": big[:2 * 300000]}),
              (2, "S1", "Blob", {"data": "", "note": "x" * 200000}), (3, "S1", "Fin", {})]
    case = Case("at-big-frames", at, "zeta", frames, 4)
    outs = {}
    for wire in WIRES:
        data = case.transcript(wire)
        r = run(["run", "--plan", at.path, "--wire", wire], data)
        outs[wire] = r.stdout
        check("streaming: frames above 64 KiB, %s" % wire,
              r.returncode == 0 and norm(at, trace_of(r.stdout)) == norm(at, case.expected_trace()),
              "exit %d %s" % (r.returncode, text(r.stderr)))
    check("streaming big frames: same trace", outs["reference"] == outs["compact"] == outs["binary"])
    payload = at.payload_bin("Blob", {"data": "00" * 1048576})
    tid = at.tid("S1", "Blob")
    data = at.preface("binary", "zeta") + at.frame("binary", 0, "S0", "All", ALL_MIN) + \
        uvarint(tid) + uvarint(1) + uvarint(len(payload)) + payload
    r = run(["run", "--plan", at.path, "--wire", "binary"], data)
    check("binary frame above its ceiling: payload-too-large",
          r.returncode == 2 and trace_of(r.stdout)[-1:] == [{"failure": "payload-too-large",
                                                               "seq": 1}], text(r.stderr))
    # a declared payload_len far beyond the ceiling, with no payload sent: refused at once
    data = at.preface("binary", "zeta") + at.frame("binary", 0, "S0", "All", ALL_MIN) + \
        uvarint(tid) + uvarint(1) + uvarint(1 << 40)
    r = run(["run", "--plan", at.path, "--wire", "binary"], data)
    check("binary payload_len 2^40: payload-too-large without the payload",
          r.returncode == 2 and trace_of(r.stdout)[-1:] == [{"failure": "payload-too-large",
                                                               "seq": 1}], text(r.stderr))
    # a non-minimal varint header and an 11-byte varint: malformed
    for what, hdr in [("non-minimal varint", b"\x80\x00"), ("11-byte varint", b"\xff" * 10 + b"\x01")]:
        data = ts.preface("binary", "client") + hdr + uvarint(0) + uvarint(0)
        r = run(["run", "--plan", ts.path, "--wire", "binary"], data)
        check("binary header %s: malformed-payload" % what,
              r.returncode == 2 and trace_of(r.stdout) == [{"failure": "malformed-payload",
                                                            "seq": 0}], text(r.stderr))


# ---------------------------------------------------------------------------------------------
# Fixtures (tests/colloq/fixtures/, written by gen_fixtures.py, an implementation independent of
# the library): conversations and their canonical plans (plans/NAME.plan.json, NAME.identity);
# transcripts/index.txt (scenario, conversation, expected exit status or "live:N", and optionally
# "wires=W,..." when the scenario exists only in those encodings) with
# SCENARIO.{reference,compact,binary} and the expected SCENARIO.trace; traces/index.txt (deliberately
# wrong traces with the entry and reason verify must report). Picked up by glob and index.
# ---------------------------------------------------------------------------------------------
def load_json(path):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None


def read(path):
    with open(path, "rb") as f:
        return f.read()


def read_index(path):
    rows = []
    if not os.path.isfile(path):
        return rows
    for line in read(path).decode().splitlines():
        if line.strip() and not line.startswith("#"):
            rows.append(line.split())
    return rows


def test_fixtures():
    if not check("fixtures directory %s exists" % FIXTURES, os.path.isdir(FIXTURES)):
        return
    convs = {}
    for p in sorted(glob.glob(os.path.join(FIXTURES, "*.json"))):
        j = load_json(p)
        if not (isinstance(j, dict) and j.get("colloq") == "conversation/v0"):
            continue
        name = os.path.basename(p)[:-5]
        convs[os.path.basename(p)] = j
        r = run(["compile", p])
        if not check("fixture %s compiles" % name, r.returncode == 0, text(r.stderr)):
            continue
        plan = os.path.join(FIXTURES, "plans", name + ".plan.json")
        ident = os.path.join(FIXTURES, "plans", name + ".identity")
        if os.path.isfile(plan):
            check("fixture %s: compile = plans/%s.plan.json byte for byte" % (name, name),
                  r.stdout == read(plan), text(r.stdout))
        if os.path.isfile(ident):
            check("fixture %s: identity = plans/%s.identity" % (name, name),
                  err_lines(r) == ["plan " + read(ident).decode().strip()], text(r.stderr))
    check("fixtures: token-stream and moe-router conversations",
          "token-stream.json" in convs and "moe-router.json" in convs, " ".join(sorted(convs)))
    tdir = os.path.join(FIXTURES, "transcripts")
    rows = read_index(os.path.join(tdir, "index.txt"))
    check("fixtures: transcripts/index.txt lists scenarios", len(rows) >= 10, str(len(rows)))
    kinds = set()
    for row in rows:
        scen, conv = row[0], os.path.join(FIXTURES, row[1])
        model = Model(convs.get(row[1], {"messages": {}, "transitions": []}))
        want = read(os.path.join(tdir, scen + ".trace"))
        v = run(["verify", "--plan", conv, os.path.join(tdir, scen + ".trace")])
        check("fixture %s: verify accepts the expected trace" % scen, v.returncode == 0,
              text(v.stderr))
        wt = trace_of(want) or []
        if wt and "failure" in wt[-1]:
            kinds.add(wt[-1]["failure"])
        if row[2].startswith("live"):
            continue  # a live session (the .senders file): the library tests run these
        code = int(row[2])
        wires = WIRES
        if len(row) > 3 and row[3].startswith("wires="):
            wires = row[3][6:].split(",")
        conv_out = {}
        for wire in wires:
            data = read(os.path.join(tdir, "%s.%s" % (scen, wire)))
            r = run(["run", "--plan", conv, "--wire", wire], data)
            check("fixture %s %s: exit %d" % (scen, wire, code), r.returncode == code,
                  "exit %d %s" % (r.returncode, text(r.stderr)))
            check("fixture %s %s: trace = %s.trace byte for byte (criterion 1)" % (scen, wire, scen),
                  r.stdout == want, "%s\nvs %s" % (text(r.stdout, 1000), text(want, 1000)))
            lines = err_lines(r)
            if code:
                kind = wt[-1].get("failure", "") if wt else ""
                check("fixture %s %s: one stderr line naming %s" % (scen, wire, kind),
                      len(lines) == 1 and lines[0].startswith(
                          "COLLOQ_ERR_" + kind.upper().replace("-", "_")), text(r.stderr))
            else:
                check("fixture %s %s: quiet" % (scen, wire), lines == [], text(r.stderr))
            plan = os.path.join(FIXTURES, "plans", row[1][:-5] + ".plan.json")
            if os.path.isfile(plan):
                r2 = run(["run", "--plan", plan, "--wire", wire], data)
                check("fixture %s %s: same with the plan file" % (scen, wire),
                      r2.stdout == r.stdout and r2.returncode == r.returncode)
            # convert from this wire into every other; compare with the fixture's own files
            for to in WIRES:
                c = run(["convert", "--plan", conv, "--from", wire, "--to", to], data)
                if code != 0 and c.returncode != 0:
                    check("fixture %s: convert %s->%s refuses with exit 2/3" % (scen, wire, to),
                          c.returncode in (2, 3) and len(err_lines(c)) == 1, text(c.stderr))
                    continue
                other = read(os.path.join(tdir, "%s.%s" % (scen, to)))
                if to == "binary":
                    ok = c.stdout == other
                else:
                    try:
                        ok = norm(model, [json.loads(l) for l in c.stdout.decode().splitlines()]) \
                            == norm(model, [json.loads(l) for l in other.decode().splitlines()])
                    except ValueError:
                        ok = False
                check("fixture %s: convert %s->%s = %s.%s" % (scen, wire, to, scen, to),
                      c.returncode == 0 and ok, "exit %d %s" % (c.returncode, text(c.stderr)))
                if wire == "reference" and c.returncode == 0 and wires == WIRES:
                    conv_out[to] = c.stdout
        for a in conv_out:
            for b in conv_out:
                r = run(["convert", "--plan", conv, "--from", a, "--to", b], conv_out[a])
                check("fixture %s: convert %s->%s byte-exact" % (scen, a, b),
                      r.returncode == 0 and r.stdout == conv_out[b], text(r.stderr))
        if code == 0:
            test_truncation(read(os.path.join(tdir, scen + ".binary")), conv, "fixture " + scen)
    check("fixtures: every failure kind has a transcript fixture",
          kinds >= {"unknown-transition", "wrong-state", "wrong-sender", "bad-sequence",
                    "malformed-payload", "payload-too-large", "truncated", "after-final"},
          " ".join(sorted(kinds)))
    # deliberately wrong traces: verify names the first wrong entry and the reason
    trdir = os.path.join(FIXTURES, "traces")
    rows = read_index(os.path.join(trdir, "index.txt"))
    check("fixtures: traces/index.txt lists wrong traces", len(rows) >= 5, str(len(rows)))
    for f, conv, entry, reason in rows:
        r = run(["verify", "--plan", os.path.join(FIXTURES, conv), os.path.join(trdir, f)])
        lines = err_lines(r)
        check("fixture trace %s: verify rejects with %s at entry %s" % (f, reason, entry),
              r.returncode == 2 and r.stdout == b"" and len(lines) == 1 and
              lines[0].startswith(reason) and ("entry %s:" % entry) in lines[0], text(r.stderr))


# ---------------------------------------------------------------------------------------------
# 8. gen
# ---------------------------------------------------------------------------------------------
def test_gen(ts):
    include = os.path.join(os.path.dirname(os.path.abspath(FIXTURES)), "..", "..", "include")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    flags = ["-std=c17", "-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wstrict-prototypes",
             "-Wmissing-prototypes", "-Wvla", "-Wformat=2", "-pedantic", "-Wno-overlength-strings",
             "-O1", "-I", include, "-c"]
    convs = sorted(glob.glob(os.path.join(FIXTURES, "*.json")))
    check("gen: fixture conversations", len(convs) >= 5, str(convs))
    for conv in convs + [ts.path, ts.plan_path]:
        name = os.path.basename(conv)
        out = os.path.join(TMP, "gen-" + name)
        os.mkdir(out)
        r = run(["gen", "--plan", conv, "--prefix", "g_x", "--out-dir", out])
        files = sorted(os.listdir(out))
        check("gen %s: exit 0, two files, their paths on stdout" % name,
              r.returncode == 0 and files == ["g_x.c", "g_x.h"] and err_lines(r) == [] and
              r.stdout.decode().split() == [os.path.join(out, "g_x.h"), os.path.join(out, "g_x.c")],
              "exit %d %s %s" % (r.returncode, files, text(r.stderr)))
        if r.returncode != 0:
            continue
        h = read(os.path.join(out, "g_x.h")).decode()
        c = read(os.path.join(out, "g_x.c")).decode()
        check("gen %s: the header includes only wirekit/colloq.h, the source only its header and "
              "string.h" % name,
              [l for l in h.splitlines() if l.startswith("#include")] == ["#include <wirekit/colloq.h>"] and
              [l for l in c.splitlines() if l.startswith("#include")] == ['#include "g_x.h"',
                                                                         "#include <string.h>"])
        ident = run(["compile", conv])
        want = err_lines(ident)[0][5:] if ident.returncode == 0 else "?"
        if name.endswith(".plan.json"):
            want = err_lines(run(["compile", ts.path]))[0][5:]
        check("gen %s: the plan identity constant" % name,
              ('#define G_X_PLAN_IDENTITY "%s"' % want) in h)
        again = os.path.join(out, "again")
        os.mkdir(again)
        r2 = run(["gen", "--plan", conv, "--prefix", "g_x", "--out-dir", again])
        check("gen %s: the same bytes twice" % name, r2.returncode == 0 and
              read(os.path.join(again, "g_x.h")) == h.encode() and
              read(os.path.join(again, "g_x.c")) == c.encode())
        if cc:  # the project's warnings and -pedantic (a superset), once
            k = subprocess.run([cc] + flags + [os.path.join(out, "g_x.c"), "-o",
                                               os.path.join(out, "g_x.o")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            check("gen %s: compiles with %s %s" % (name, os.path.basename(cc), " ".join(flags[:4])),
                  k.returncode == 0, text(k.stdout, 3000))
    # the default prefix and directory
    out = os.path.join(TMP, "gen-default")
    os.mkdir(out)
    r = subprocess.run([WIREKIT, "colloq", "gen", "--plan", ts.path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60, cwd=out)
    check("gen: default prefix from the plan's name, in the current directory",
          r.returncode == 0 and sorted(os.listdir(out)) == ["token_stream.c", "token_stream.h"],
          text(r.stderr))
    # refusals write nothing
    bad = write("gen-bad.json", jdump(dict(TOKEN_STREAM, transitions=[
        {"from": "Idle", "message": "Prompt", "sender": "client", "to": "Streaming"},
        {"from": "Streaming", "message": "Token", "sender": "server", "to": "Nowhere"}])))
    out = os.path.join(TMP, "gen-refused")
    os.mkdir(out)
    r = run(["gen", "--plan", bad, "--out-dir", out])
    lines = err_lines(r)
    check("gen: an invalid plan exits 2 with the compile error and its JSON path, no file",
          r.returncode == 2 and r.stdout == b"" and len(lines) == 1 and
          lines[0].startswith("COLLOQ_ERR_UNKNOWN_STATE") and "$.transitions[1].to" in lines[0] and
          os.listdir(out) == [], text(r.stderr))
    dup = write("gen-dup.json", jdump(TOKEN_STREAM).replace('"initial"', '"final":["Done"],"initial"', 1))
    r = run(["gen", "--plan", dup, "--out-dir", out])
    lines = err_lines(r)
    check("gen: a duplicate key is a compile error with its path, no file",
          r.returncode == 2 and len(lines) == 1 and lines[0].startswith("COLLOQ_ERR_DUPLICATE") and
          "$.final" in lines[0] and os.listdir(out) == [], text(r.stderr))
    for prefix in ["1x", "a-b", "x" * 65, ""]:
        r = run(["gen", "--plan", ts.path, "--prefix", prefix, "--out-dir", out])
        check("gen: prefix %r refused with exit 1, no file" % prefix[:10],
              r.returncode == 1 and len(err_lines(r)) == 1 and os.listdir(out) == [], text(r.stderr))
    r = run(["gen", "--plan", ts.path, "--out-dir", os.path.join(TMP, "no-such-dir")])
    check("gen: a missing directory exits 1", r.returncode == 1 and len(err_lines(r)) == 1,
          text(r.stderr))
    for args in (["gen"], ["gen", "--plan"], ["gen", "--plan", ts.path, "--bogus"],
                 ["gen", "--plan", ts.path, "extra"]):
        r = run(args)
        check("gen usage error %s: exit 1" % " ".join(args[1:]), r.returncode == 1 and
              os.listdir(out) == [], text(r.stderr))
    r = run(["gen", "--plan", os.path.join(TMP, "missing.json")])
    check("gen: unreadable plan exits 1", r.returncode == 1)


def main():
    test_help()
    ts = compile_model(TOKEN_STREAM, "token_stream")
    at = compile_model(ALL_TYPES, "all_types")
    for m, label in [(ts, "token-stream"), (at, "all-types")]:
        if not test_compile(m, label):
            print("colloq_cli: compile failed, stopping")
            return
    test_compile_errors()
    cases = token_cases(ts) + all_cases(at)
    for case in cases:
        run_case(case)
    test_convert_refusals(ts, cases)
    test_verify()
    test_prefaces(ts, cases)
    for case in cases:
        if case.name in ("ts-valid", "ts-valid-end-noreason", "at-valid"):
            test_truncation(case, case.model.path, case.name,
                            step=1 if len(case.transcript("binary")) < 600 else 7)
    test_streaming(ts, at)
    test_fixtures()
    test_gen(ts)


try:
    main()
finally:
    shutil.rmtree(TMP, ignore_errors=True)
sys.exit(wktest.summary("colloq_cli"))
