#!/usr/bin/python3
"""CLI contract tests for `wirekit moqt` (MoQT draft-20 data plane), over every vector.

    /usr/bin/python3 cli_test.py path/to/wirekit VECTORS_DIR TESTS_DIR

VECTORS_DIR is the folder holding moqt/ (CMake's WK_VECTORS_DIR, tests/vectors); TESTS_DIR is the
repository's tests/ folder (our own vectors are every tests/moqt/vectors/*.json). Covers:
  1. --help at every level, usage errors (exit 1);
  2. every shipped vector (all 89: subgroup, datagram, fetch, varint) and every one of ours
     through the CLI: `decode` prints JSON equal to `decoded` (values and key order), or exits 2/3
     with one stderr line `CATEGORY NAME at offset N: ...` (CATEGORY = the vector's error; our
     vectors' error_name / error_offset checked too); every canonical vector `encode`s from its
     `decoded` back to its exact hex, a non-canonical one to a shorter form that decodes the same;
     varints through `moqt int decode|encode`; `inspect` on every valid vector (one line per
     header and object); every prefix of every valid stream ends cleanly or exits 3 at its end;
  3. options: --group-order descending, --end-of-range absolute, --strict-padding change the
     result where they should and nowhere else;
  4. streaming: payloads larger than one 64 KiB read, many objects; properties maps (unknown
     even/odd types, repeated types as object_properties_hex); encode refusals and JSON errors.
Exit statuses: 0 ok, 1 usage or local failure, 2 invalid input, 3 input ended early. Ends with
`moqt_cli: N passed, M failed`.
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
import wktest  # noqa: E402
from wktest import check, err_lines, text  # noqa: E402

WIREKIT, _vectors, _tests = wktest.args("cli_test.py WIREKIT_CLI VECTORS_DIR TESTS_DIR",
                                         ["wirekit", "vectors", "tests"])
SHIPPED = os.path.join(_vectors, "moqt", "transport", "draft20", "codec")
OWN = os.path.join(_tests, "moqt", "vectors")

CARRIER_OF_ID = {"0x10": "subgroup", "0x00": "datagram", "0x05": "fetch"}
CATEGORIES = {"incomplete", "invalid_type", "invalid_value", "payload_not_permitted"}


def run(args, data=b""):
    return wktest.run([WIREKIT, "moqt"] + args, data, timeout=300)


def ordered(s):
    """JSON text parsed with every object as its list of (key, value) pairs: equal only when the
    values and the key order are."""
    return json.loads(s, object_pairs_hook=lambda pairs: pairs)


def parse_json(r):
    try:
        return json.loads(r.stdout)
    except ValueError:
        return None


def opt_flags(v):
    """Our vectors' per-case "options" as CLI flags."""
    o = v.get("options", {})
    flags = []
    if "group_order" in o:
        flags += ["--group-order", o["group_order"]]
    if "end_of_range" in o:
        flags += ["--end-of-range", o["end_of_range"]]
    if o.get("strict_padding"):
        flags.append("--strict-padding")
    return flags


def expect_decoded(label, r, want, want_text=None):
    """Exit 0, nothing on stderr, stdout one JSON line equal to want (values and key order)."""
    got = parse_json(r)
    ok = r.returncode == 0 and got == want and r.stderr == b"" and r.stdout.count(b"\n") == 1
    if ok and want_text is not None:
        ok = ordered(r.stdout) == ordered(want_text)
        return check(label + ": decoded (values and key order)", ok,
                     "key order differs:\n  got  %s\n  want %s" % (text(r.stdout), want_text))
    return check(label + ": decoded", ok, "rc=%d\n  got  %s\n  want %s\n  stderr %s" % (
        r.returncode, text(r.stdout), json.dumps(want), text(r.stderr)))


def unterminated(out):
    """What a failed decode may leave on stdout (wirekit(1), PARTIAL OUTPUT): nothing, or the
    document as far as it was decoded, left unterminated (no closing brackets, no newline), so
    it never parses as a complete document."""
    if out == b"":
        return True
    if not out.startswith(b'{"stream_type":') or out.endswith(b"\n"):
        return False
    try:
        json.loads(out)
        return False
    except ValueError:
        return True


def expect_error(label, r, category, name=None, offset=None, stdout_empty=True):
    """Exit 3 (incomplete) or 2, one stderr line `CATEGORY NAME at offset N: ...`; with
    stdout_empty, no complete document on stdout (at most an unterminated partial one)."""
    lines = err_lines(r)
    rc = 3 if category == "incomplete" else 2
    ok = r.returncode == rc and len(lines) == 1
    if ok:
        parts = lines[0].split(" ")
        ok = (len(parts) >= 5 and parts[0] == category and parts[1].startswith("MOQT_ERR_")
              and parts[2:4] == ["at", "offset"] and parts[4].rstrip(":").isdigit())
        if ok and name is not None:
            ok = parts[1] == name
        if ok and offset is not None:
            ok = int(parts[4].rstrip(":")) == int(offset)
    if ok and stdout_empty:
        ok = unterminated(r.stdout)
    desc = category + ("" if name is None else " " + name) + (
        "" if offset is None else " at offset %s" % offset)
    return check("%s: exit %d, one stderr line %s" % (label, rc, desc), ok,
                 "rc=%d stderr=%r stdout=%s" % (r.returncode, text(r.stderr), text(r.stdout)))


def expect_usage(label, r, prefix="WK_ERR_USAGE"):
    lines = err_lines(r)
    return check(label + ": exit 1, one stderr line " + prefix,
                 r.returncode == 1 and len(lines) == 1 and lines[0].startswith(prefix)
                 and r.stdout == b"", "rc=%d stderr=%r" % (r.returncode, text(r.stderr)))


def inspect_lines(r):
    return r.stdout.decode("utf-8", "replace").splitlines()


# ------------------------------------------------------------------------------------------------
# 1. help and usage
# ------------------------------------------------------------------------------------------------
def help_tests():
    r = subprocess.run([WIREKIT, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = r.stdout.decode()
    check("wirekit --help lists the moqt module and its commands",
          r.returncode == 0 and "wirekit moqt" in out and "wirekit moqt decode" in out)
    r = run(["--help"])
    lines = r.stdout.decode().splitlines()
    for verb in ("decode", "encode", "inspect", "int"):
        mine = [l for l in lines if l.strip().startswith("wirekit moqt %s " % verb)]
        check("moqt --help: one line for %s" % verb, r.returncode == 0 and len(mine) == 1,
              text(r.stdout))
    r = run([])
    check("moqt without a command: exit 1, usage on stderr",
          r.returncode == 1 and b"usage" in r.stderr and r.stdout == b"")
    expect_usage("moqt frobnicate", run(["frobnicate"]))
    for args in (["decode"], ["encode"], ["inspect"], ["int"], ["int", "decode"], ["int", "encode"]):
        r = run(args + ["--help"])
        check("moqt %s --help: exit 0, usage on stdout" % " ".join(args),
              r.returncode == 0 and r.stdout.startswith(b"usage: wirekit moqt") and r.stderr == b"",
              "rc=%d %s" % (r.returncode, text(r.stdout)))
    for opt in ("--carrier", "--group-order", "--end-of-range", "--strict-padding"):
        check("decode --help mentions " + opt, opt.encode() in run(["decode", "--help"]).stdout)
    expect_usage("decode without --carrier", run(["decode"], b"\x05\x00"))
    expect_usage("encode without --carrier", run(["encode"], b"{}"))
    expect_usage("decode --carrier stream", run(["decode", "--carrier", "stream"], b"\x05\x00"))
    expect_usage("decode --carrier (no value)", run(["decode", "--carrier"], b"\x05\x00"))
    expect_usage("decode --group-order sideways",
                 run(["decode", "--carrier", "fetch", "--group-order", "sideways"], b"\x05\x00"))
    expect_usage("decode --end-of-range both",
                 run(["decode", "--carrier", "fetch", "--end-of-range", "both"], b"\x05\x00"))
    expect_usage("decode --bogus", run(["decode", "--carrier", "fetch", "--bogus"], b"\x05\x00"))
    r = run(["decode", "--carrier=fetch", "--group-order=descending"], b"\x05\x07")
    expect_decoded("decode --carrier=fetch --group-order=descending (= forms)", r,
                   {"stream_type": "fetch", "request_id": "7", "objects": []})
    expect_usage("int encode 2^64", run(["int", "encode", "18446744073709551616"]))


# ------------------------------------------------------------------------------------------------
# 2. vectors
# ------------------------------------------------------------------------------------------------
def load(path):
    with open(path) as f:
        raw = f.read()
    doc = json.loads(raw)
    # The `decoded` texts with their key order, in file order.
    doc_ordered = json.loads(raw, object_pairs_hook=lambda pairs: pairs)
    vec_pairs = dict(doc_ordered)["vectors"]
    return doc, [dict(p).get("decoded") for p in vec_pairs]


def n_objects(decoded):
    return len(decoded.get("objects", [])) if isinstance(decoded, dict) else 0


def run_stream_vector(label, carrier, v, want_pairs):
    data = bytes.fromhex(v["hex"])
    flags = opt_flags(v)
    r = run(["decode", "--carrier", carrier] + flags, data)
    if "decoded" in v:
        want = v["decoded"]
        got_ok = expect_decoded(label + " decode", r, want)
        if got_ok:
            check(label + " decode: key order as in the vector",
                  ordered(r.stdout) == want_pairs,
                  "\n  got  %s\n  want %s" % (text(r.stdout), want_pairs))
        # encode
        e = run(["encode", "--carrier", carrier] + flags, json.dumps(want).encode())
        if v.get("canonical", True):
            check(label + " encode: exact hex", e.returncode == 0 and e.stdout.hex() == v["hex"]
                  and e.stderr == b"", "rc=%d got %s want %s stderr %s" % (
                      e.returncode, e.stdout.hex(), v["hex"], text(e.stderr)))
        else:
            # The minimal form (shorter) or, for non-zero padding, the zero bytes (same length).
            ok = e.returncode == 0 and e.stdout != data and len(e.stdout) <= len(data)
            if ok:
                again = run(["decode", "--carrier", carrier] + flags, e.stdout)
                ok = again.returncode == 0 and parse_json(again) == want
            check(label + " encode (non-canonical): another form that decodes the same", ok,
                  "rc=%d got %s stderr %s" % (e.returncode, e.stdout.hex(), text(e.stderr)))
        # inspect: one line per header and object (a padding stream: type line + total line;
        # a datagram: one line)
        i = run(["inspect", "--carrier", carrier] + flags, data)
        lines = inspect_lines(i)
        if want.get("stream_type") == "padding":
            n_want = 1 if carrier == "datagram" else 2
        elif carrier == "datagram":
            n_want = 1
        else:
            n_want = 1 + n_objects(want)
        check(label + " inspect: exit 0, %d lines" % n_want,
              i.returncode == 0 and len(lines) == n_want and i.stderr == b"",
              "rc=%d out=%s err=%s" % (i.returncode, text(i.stdout), text(i.stderr)))
        if carrier != "datagram":
            i2 = run(["inspect"] + flags, data)
            check(label + " inspect without --carrier: the same lines",
                  i2.returncode == 0 and i2.stdout == i.stdout, text(i2.stderr))
            prefix_tests(label, carrier, flags, data, want)
    else:
        expect_error(label + " decode", r, v["error"], v.get("error_name"), v.get("error_offset"))
        i = run(["inspect", "--carrier", carrier] + flags, data)
        expect_error(label + " inspect", i, v["error"], v.get("error_name"),
                     v.get("error_offset"), stdout_empty=False)


def prefix_tests(label, carrier, flags, data, want):
    """Every proper prefix of a valid stream either ends cleanly between objects (then its
    objects are the first ones of the whole) or is cut: exit 3, incomplete, offset = its length,
    and stdout a byte prefix of the whole stream's document (streamed, left unterminated)."""
    bad = []
    objects = want.get("objects", [])
    whole = run(["decode", "--carrier", carrier] + flags, data).stdout
    for k in range(0, len(data)):
        r = run(["decode", "--carrier", carrier] + flags, data[:k])
        if r.returncode == 0:
            got = parse_json(r)
            if (got is None or got.get("objects", []) != objects[:len(got.get("objects", []))]
                    or want.get("stream_type") == "padding" and got.get("stream_type") != "padding"):
                bad.append("%d: %s" % (k, text(r.stdout, 120)))
        else:
            lines = err_lines(r)
            if not (r.returncode == 3 and len(lines) == 1 and
                    lines[0].startswith("incomplete MOQT_ERR_TRUNCATED at offset %d:" % k)):
                bad.append("%d: rc=%d %s" % (k, r.returncode, text(r.stderr, 120)))
            elif not (whole.startswith(r.stdout) and unterminated(r.stdout)):
                bad.append("%d: stdout is not an unterminated prefix of the whole document: %s"
                           % (k, text(r.stdout, 120)))
    check(label + " every prefix (%d): clean end or exit 3 at its length" % len(data), not bad,
          "; ".join(bad[:5]))


def run_datagram_vector(label, v, want_pairs):
    run_stream_vector(label, "datagram", v, want_pairs)


def run_varint_vector(label, v):
    data = bytes.fromhex(v["hex"])
    r = run(["int", "decode"], data)
    if "decoded" in v:
        expect_decoded(label + " int decode", r, v["decoded"])
        e = run(["int", "encode"], json.dumps(v["decoded"]).encode())
        e2 = run(["int", "encode", v["decoded"]["value"]])
        if v.get("canonical", True):
            check(label + " int encode (JSON on stdin and argument): exact hex",
                  e.returncode == 0 and e.stdout.hex() == v["hex"] and e2.stdout == e.stdout,
                  "got %s / %s" % (e.stdout.hex(), e2.stdout.hex()))
        else:
            ok = e.returncode == 0 and len(e.stdout) < len(data) and e2.stdout == e.stdout
            ok = ok and parse_json(run(["int", "decode"], e.stdout)) == v["decoded"]
            check(label + " int encode (non-canonical): shorter, same value", ok, e.stdout.hex())
    else:
        expect_error(label + " int decode", r, v["error"], "MOQT_ERR_TRUNCATED", len(data))


def vector_files():
    shipped = [os.path.join(SHIPPED, "data-streams", f)
               for f in ("subgroup.json", "datagram.json", "fetch-header.json")]
    shipped.append(os.path.join(SHIPPED, "varint.json"))
    own = sorted(glob.glob(os.path.join(OWN, "*.json")))
    return shipped, own


def vector_tests():
    shipped, own = vector_files()
    counts = {}
    for path in shipped + own:
        try:
            doc, decoded_pairs = load(path)
        except (OSError, ValueError) as e:
            check("read " + path, False, str(e))
            continue
        name = os.path.basename(path)
        if path in own:
            name = "own/" + name
        if doc.get("message_type") == "varint":
            carrier = "varint"
        else:
            carrier = CARRIER_OF_ID.get(doc.get("message_type_id"))
        if not check(name + ": carrier known", carrier is not None, str(doc.get("message_type_id"))):
            continue
        counts[path] = len(doc["vectors"])
        for v, want_pairs in zip(doc["vectors"], decoded_pairs):
            label = "%s %s" % (name, v["id"])
            if "error" in v and v["error"] not in CATEGORIES:
                check(label + ": known error category", False, v["error"])
                continue
            if carrier == "varint":
                run_varint_vector(label, v)
            else:
                run_stream_vector(label, carrier, v, want_pairs)
    n_shipped = sum(counts.get(p, 0) for p in shipped)
    check("all 89 shipped vectors ran", n_shipped == 89, "%d" % n_shipped)
    check("our own vectors found under tests/moqt/vectors/", len(own) > 0 and
          sum(counts.get(p, 0) for p in own) > 0, OWN)


# ------------------------------------------------------------------------------------------------
# 3. options
# ------------------------------------------------------------------------------------------------
def option_tests():
    # Group order: a Group ID Delta of 0 moves up one group ascending, down one descending.
    stream = bytes.fromhex("05041c05008001aa0c000001bb")
    asc = parse_json(run(["decode", "--carrier", "fetch"], stream))
    asc2 = parse_json(run(["decode", "--carrier", "fetch", "--group-order", "ascending"], stream))
    desc_r = run(["decode", "--carrier", "fetch", "--group-order", "descending"], stream)
    desc = parse_json(desc_r)
    check("group order: ascending is the default", asc is not None and asc == asc2)
    check("group order ascending: groups 5 then 6",
          asc is not None and [o["group_id"] for o in asc["objects"]] == ["5", "6"], str(asc))
    check("group order descending: groups 5 then 4",
          desc is not None and [o["group_id"] for o in desc["objects"]] == ["5", "4"], str(desc))
    if desc is not None:
        e = run(["encode", "--carrier", "fetch", "--group-order", "descending"],
                json.dumps(desc).encode())
        check("group order descending: encode gives the same bytes",
              e.returncode == 0 and e.stdout == stream, e.stdout.hex() + text(e.stderr))
        e = run(["encode", "--carrier", "fetch"], json.dumps(desc).encode())
        # streamed: the header and the first object (group 5) are out when the second is refused
        check("group order: the descending document does not encode ascending (group 4 after 5)",
              e.returncode != 0 and e.stdout == stream[:8], "rc=%d %s" % (e.returncode,
                                                                         e.stdout.hex()))
    # Descending below group 0: a Group ID Delta past the prior group is an overflow.
    under = bytes.fromhex("05041c01008001aa0c050001bb")
    check("group order ascending: 1 then 7",
          [o["group_id"] for o in (parse_json(run(["decode", "--carrier", "fetch"], under)) or
                                   {"objects": []})["objects"]] == ["1", "7"])
    expect_error("group order descending below 0", run(["decode", "--carrier", "fetch",
                                                        "--group-order", "descending"], under),
                 "invalid_value", "MOQT_ERR_GROUP_ID_OVERFLOW")
    # The option changes nothing on a subgroup stream.
    sg = bytes.fromhex("100100800004deadbeef0002cafe")
    check("group order: no effect on a subgroup stream",
          run(["decode", "--carrier", "subgroup", "--group-order", "descending"], sg).stdout ==
          run(["decode", "--carrier", "subgroup"], sg).stdout)

    # End of Range readings.
    first = bytes.fromhex("0504808c050a00")  # reading A: delta slots then length 0
    a = run(["decode", "--carrier", "fetch"], first)
    expect_decoded("end of range delta (default), first record", a,
                   {"stream_type": "fetch", "request_id": "4", "objects": [
                       {"serialization_flags": "0x8c", "group_id": "5", "object_id": "10",
                        "payload_length": "0"}]})
    # The same bytes read as B: {5,10} then a record starting with 0x00 (a first record without
    # the deltas: refused).
    b = run(["decode", "--carrier", "fetch", "--end-of-range", "absolute"], first)
    check("end of range absolute: reading A's trailing length byte is a new record",
          b.returncode == 2 and unterminated(b.stdout), "rc=%d %s" % (b.returncode, text(b.stderr)))
    bbytes = bytes.fromhex("0504808c050a")  # reading B: two absolute IDs, nothing else
    b = run(["decode", "--carrier", "fetch", "--end-of-range", "absolute"], bbytes)
    expect_decoded("end of range absolute, first record", b,
                   {"stream_type": "fetch", "request_id": "4", "objects": [
                       {"serialization_flags": "0x8c", "group_id": "5", "object_id": "10"}]})
    expect_error("end of range delta on reading-B bytes", run(["decode", "--carrier", "fetch"],
                                                              bbytes),
                 "incomplete", "MOQT_ERR_TRUNCATED", len(bbytes))
    # After an object: A resolves the delta slots ({5,0} then 0,9 -> {6,9}), B takes them as
    # they are ({6,9} written as 06 09).
    after_a = bytes.fromhex("05041c05008001aa820c000900")
    after_b = bytes.fromhex("05041c05008001aa820c0609")
    da = parse_json(run(["decode", "--carrier", "fetch"], after_a))
    db = parse_json(run(["decode", "--carrier", "fetch", "--end-of-range", "absolute"], after_b))
    check("end of range after an object: A {6,9} with deltas and length",
          da is not None and da["objects"][1] == {"serialization_flags": "0x20c",
                                                   "group_id_delta": "0", "group_id": "6",
                                                   "object_id_delta": "9", "object_id": "9",
                                                   "payload_length": "0"}, str(da))
    check("end of range after an object: B {6,9}, no deltas, no length",
          db is not None and db["objects"][1] == {"serialization_flags": "0x20c",
                                                   "group_id": "6", "object_id": "9"}, str(db))
    da_as_b = run(["decode", "--carrier", "fetch", "--end-of-range", "absolute"], after_a)
    check("end of range: A's bytes read as B differ (group 0, then a stray record)",
          da_as_b.returncode != 0 or parse_json(da_as_b) != da, text(da_as_b.stdout))
    for doc, flags, want in ((da, [], after_a), (db, ["--end-of-range", "absolute"], after_b)):
        if doc is None:
            continue
        e = run(["encode", "--carrier", "fetch"] + flags, json.dumps(doc).encode())
        check("end of range %s: encode gives the same bytes" % (flags or ["delta"])[-1],
              e.returncode == 0 and e.stdout == want, e.stdout.hex() + text(e.stderr))
    # An object after a marker (both readings): prior IDs are the marker's.
    tail = bytes.fromhex("0002cafe")
    for flags, base in (([], after_a), (["--end-of-range", "absolute"], after_b)):
        d = parse_json(run(["decode", "--carrier", "fetch"] + flags, base + tail))
        check("end of range %s: the next object is {6,10}" % (flags or ["delta"])[-1],
              d is not None and d["objects"][2]["group_id"] == "6" and
              d["objects"][2]["object_id"] == "10", str(d))
    # A reading-A marker must carry length 0.
    expect_error("end of range delta with length 1",
                 run(["decode", "--carrier", "fetch"], bytes.fromhex("0504808c050a01")),
                 "invalid_value", "MOQT_ERR_END_OF_RANGE_LENGTH")

    # Padding: discarded unchecked by default; --strict-padding refuses a non-zero byte.
    for carrier, typ in (("subgroup", "f0132b3e28"), ("fetch", "f0132b3e28"),
                         ("datagram", "f0132b3e29")):
        zeros = bytes.fromhex(typ + "000000")
        dirty = bytes.fromhex(typ + "000100")
        want = {"stream_type": "padding", "padding_length": "3"}
        expect_decoded("padding %s, zeros" % carrier, run(["decode", "--carrier", carrier], zeros),
                       want)
        expect_decoded("padding %s, zeros, --strict-padding" % carrier,
                       run(["decode", "--carrier", carrier, "--strict-padding"], zeros), want)
        expect_decoded("padding %s, a non-zero byte, default" % carrier,
                       run(["decode", "--carrier", carrier], dirty), want)
        expect_error("padding %s, a non-zero byte, --strict-padding" % carrier,
                     run(["decode", "--carrier", carrier, "--strict-padding"], dirty),
                     "invalid_value", "MOQT_ERR_PADDING_NONZERO", 6)
        e = run(["encode", "--carrier", carrier], json.dumps(want).encode())
        check("padding %s: encode writes the type and 3 zero bytes" % carrier,
              e.returncode == 0 and e.stdout == zeros, e.stdout.hex() + text(e.stderr))
        expect_decoded("padding %s, type only" % carrier,
                       run(["decode", "--carrier", carrier], bytes.fromhex(typ)),
                       {"stream_type": "padding", "padding_length": "0"})
    # --strict-padding leaves non-padding input alone.
    check("--strict-padding: no effect on a subgroup stream",
          run(["decode", "--carrier", "subgroup", "--strict-padding"], sg).stdout ==
          run(["decode", "--carrier", "subgroup"], sg).stdout)


# ------------------------------------------------------------------------------------------------
# 4. streaming, properties, refusals
# ------------------------------------------------------------------------------------------------
def mint(v):
    """The minimal MoQT integer (the test's own encoder, independent of the library)."""
    if v < 0x80:
        return bytes([v])
    for n in range(2, 9):
        if v < 1 << (7 * n):
            b = bytearray(v.to_bytes(n, "big"))
            b[0] |= (0xFF << (9 - n)) & 0xFF
            return bytes(b)
    return b"\xff" + v.to_bytes(8, "big")


def streaming_tests():
    # Subgroup: three objects whose payloads straddle 64 KiB reads.
    sizes = [100000, 1, 70000]
    payloads = [bytes((i * 7 + k) & 0xFF for i in range(n)) for k, n in enumerate(sizes)]
    stream = bytes.fromhex("10010080")
    for k, p in enumerate(payloads):
        stream += mint(0) + mint(len(p)) + p
    r = run(["decode", "--carrier", "subgroup"], stream)
    d = parse_json(r)
    check("large subgroup payloads across 64 KiB reads: decoded",
          r.returncode == 0 and d is not None and
          [o["payload_hex"] for o in d["objects"]] == [p.hex() for p in payloads] and
          [o["object_id"] for o in d["objects"]] == ["0", "1", "2"],
          "rc=%d %s" % (r.returncode, text(r.stderr)))
    if d is not None:
        e = run(["encode", "--carrier", "subgroup"], json.dumps(d).encode())
        check("large subgroup payloads: encode gives the same bytes", e.stdout == stream)
    i = run(["inspect"], stream)
    lines = inspect_lines(i)
    check("large subgroup payloads: inspect shows 4 lines, previews of 16 bytes",
          i.returncode == 0 and len(lines) == 4 and payloads[0][:16].hex() + "..." in lines[1]
          and lines[2].endswith("payload=" + payloads[1].hex()), text(i.stdout))
    # Cut inside the second large payload: exit 3 at the cut, inspect still shows the lines read.
    cut = len(stream) - 1000
    expect_error("large subgroup stream cut inside a payload", run(["decode", "--carrier",
                                                                   "subgroup"], stream[:cut]),
                 "incomplete", "MOQT_ERR_TRUNCATED", cut)
    i = run(["inspect"], stream[:cut])
    check("inspect of a cut stream: the lines so far, then exit 3",
          i.returncode == 3 and len(inspect_lines(i)) == 4, text(i.stdout) + text(i.stderr))

    # Many small objects with gaps in the IDs.
    n = 5000
    s = bytes.fromhex("1405640340")
    want_ids = []
    oid = -1
    for k in range(n):
        delta = k % 3
        oid = delta if oid < 0 else oid + delta + 1
        want_ids.append(str(oid))
        p = bytes([k & 0xFF]) * (k % 5 + 1)
        s += mint(delta) + mint(len(p)) + p
    r = run(["decode", "--carrier", "subgroup"], s)
    d = parse_json(r)
    check("5000 small objects: IDs resolved", d is not None and
          [o["object_id"] for o in d["objects"]] == want_ids and d["subgroup_id"] == "3",
          text(r.stderr))
    if d is not None:
        e = run(["encode", "--carrier", "subgroup"], json.dumps(d).encode())
        check("5000 small objects: encode gives the same bytes", e.stdout == s)
    check("5000 small objects: inspect has 5001 lines",
          len(inspect_lines(run(["inspect"], s))) == n + 1)

    # Fetch: one 1 MiB object, then a small one; a datagram of 200 KiB.
    big = bytes(range(256)) * 4096
    f = bytes.fromhex("05041c030080") + mint(len(big)) + big + \
        bytes.fromhex("0002cafe")
    d = parse_json(run(["decode", "--carrier", "fetch"], f))
    check("fetch with a 1 MiB object: decoded", d is not None and
          d["objects"][0]["payload_hex"] == big.hex() and d["objects"][1]["object_id"] == "1")
    if d is not None:
        check("fetch with a 1 MiB object: encode gives the same bytes",
              run(["encode", "--carrier", "fetch"], json.dumps(d).encode()).stdout == f)
    dg = bytes.fromhex("0001020080") + big[:200000]
    d = parse_json(run(["decode", "--carrier", "datagram"], dg))
    check("datagram of 200000 payload bytes", d is not None and d["payload_hex"] == big[:200000].hex())
    if d is not None:
        check("datagram of 200000 payload bytes: encode",
              run(["encode", "--carrier", "datagram"], json.dumps(d).encode()).stdout == dg)

    # Fetch encode without serialization_flags: the writer picks the smallest.
    two = bytes.fromhex("05041c00008004deadbeef0002cafe")
    d = parse_json(run(["decode", "--carrier", "fetch"], two))
    if d is not None:
        for o in d["objects"]:
            for k in ("serialization_flags", "group_id_delta", "object_id_delta"):
                o.pop(k, None)
        e = run(["encode", "--carrier", "fetch"], json.dumps(d).encode())
        check("fetch encode without serialization_flags: the smallest flags (0x1c, 0x00)",
              e.returncode == 0 and e.stdout == two, e.stdout.hex() + text(e.stderr))

    # A mode-0b01 subgroup stream with no objects: accepted, no subgroup_id.
    expect_decoded("mode 0b01 subgroup header then FIN", run(["decode", "--carrier", "subgroup"],
                                                             bytes.fromhex("12010080")),
                   {"stream_type": "subgroup", "header_type": "0x12", "track_alias": "1",
                    "group_id": "0", "publisher_priority": "128", "objects": []})
    expect_error("empty stdin as a stream", run(["decode", "--carrier", "subgroup"], b""),
                 "incomplete", "MOQT_ERR_TRUNCATED", 0)
    expect_error("empty stdin as a datagram", run(["decode", "--carrier", "datagram"], b""),
                 "incomplete", "MOQT_ERR_TRUNCATED", 0)
    expect_error("a fetch stream where a subgroup stream is expected",
                 run(["decode", "--carrier", "subgroup"], bytes.fromhex("0504")), "invalid_type",
                 "MOQT_ERR_WRONG_STREAM_TYPE", 0)
    expect_error("a subgroup stream where a fetch stream is expected",
                 run(["decode", "--carrier", "fetch"], bytes.fromhex("100100800004deadbeef")),
                 "invalid_type", "MOQT_ERR_WRONG_STREAM_TYPE", 0)


def properties_tests():
    # Unknown even and odd types round trip through the map; keys "0x<hex>".
    doc = {"stream_type": "subgroup", "header_type": "0x11", "track_alias": "1", "group_id": "0",
           "subgroup_id": "0", "publisher_priority": "128", "objects": [
               {"object_id_delta": "0", "object_id": "0",
                "object_properties": {"0x2": "1000", "0xb": "c0ffee", "prior_group_id_gap": "7",
                                      "0x4d": "", "0x100": "300"},
                "payload_length": "1", "payload_hex": "aa"}]}
    e = run(["encode", "--carrier", "subgroup"], json.dumps(doc).encode())
    # pairs: 0x02=1000 (47e8), 0x0b len 3 c0ffee, 0x3c=7, 0x4d len 0, 0x100=300 (812c)
    pairs = (mint(2) + mint(1000) + mint(9) + mint(3) + bytes.fromhex("c0ffee") + mint(0x31) +
             mint(7) + mint(0x11) + mint(0) + mint(0x100 - 0x4d) + mint(300))
    want = bytes.fromhex("11010080") + mint(0) + mint(len(pairs)) + pairs + bytes.fromhex("01aa")
    check("properties map with unknown even/odd types: encoded in ascending type order",
          e.returncode == 0 and e.stdout == want, "got %s want %s %s" % (e.stdout.hex(), want.hex(),
                                                                        text(e.stderr)))
    d = parse_json(run(["decode", "--carrier", "subgroup"], want))
    check("properties map with unknown types: decode gives the map back",
          d is not None and d["objects"][0]["object_properties"] == doc["objects"][0]["object_properties"],
          str(d))
    i = run(["inspect"], want)
    check("properties in inspect", i.returncode == 0 and "0x2=1000" in i.stdout.decode() and
          "prior_group_id_gap=7" in i.stdout.decode(), text(i.stdout))
    # A repeated type cannot be a map: object_properties_hex, which encode takes back.
    rep = mint(0x3c) + mint(1) + mint(0) + mint(2)
    sg = bytes.fromhex("11010080") + mint(0) + mint(len(rep)) + rep + bytes.fromhex("01aa")
    d = parse_json(run(["decode", "--carrier", "subgroup"], sg))
    check("repeated property type: object_properties_hex",
          d is not None and d["objects"][0].get("object_properties_hex") == rep.hex() and
          "object_properties" not in d["objects"][0], str(d))
    if d is not None:
        check("repeated property type: encode from object_properties_hex",
              run(["encode", "--carrier", "subgroup"], json.dumps(d).encode()).stdout == sg)
    # Pairs overrunning their block: refused by default, shown as hex with
    # --properties-length-only.
    over = mint(0x3d) + mint(5) + b"ab"
    sg = bytes.fromhex("11010080") + mint(0) + mint(len(over)) + over + bytes.fromhex("01aa")
    expect_error("property pair overrunning its block", run(["decode", "--carrier", "subgroup"], sg),
                 "invalid_value", "MOQT_ERR_PROPERTY_OVERRUN", 6)
    d = parse_json(run(["decode", "--carrier", "subgroup", "--properties-length-only"], sg))
    check("--properties-length-only: the unparsed block as object_properties_hex",
          d is not None and d["objects"][0].get("object_properties_hex") == over.hex(), str(d))
    # --max-properties bounds the block.
    ok_block = mint(0x3c) + mint(1)
    sg = bytes.fromhex("11010080") + mint(0) + mint(len(ok_block)) + ok_block + bytes.fromhex("01aa")
    check("--max-properties 2: a 2-byte block fits",
          run(["decode", "--carrier", "subgroup", "--max-properties", "2"], sg).returncode == 0)
    expect_error("--max-properties 1: a 2-byte block is refused",
                 run(["decode", "--carrier", "subgroup", "--max-properties", "1"], sg),
                 "invalid_value", "MOQT_ERR_PROPERTIES_TOO_LARGE")


def refusal_tests():
    def enc(carrier, doc, *flags):
        return run(["encode", "--carrier", carrier] + list(flags), json.dumps(doc).encode())

    base = {"stream_type": "subgroup", "header_type": "0x10", "track_alias": "1", "group_id": "0",
            "subgroup_id": "0", "publisher_priority": "128", "objects": []}
    # The writer refuses a status whose registry entry forbids the payload.
    doc = dict(base, objects=[{"object_id": "0", "payload_length": "2", "status": "3",
                               "payload_hex": "cafe"}])
    expect_error_noofs("encode: End of Group status with a payload", enc("subgroup", doc), 2,
                       "payload_not_permitted MOQT_ERR_PAYLOAD_NOT_PERMITTED")
    # encode_checked refuses reserved Type Flags.
    for t, name in (("0x16", "MOQT_ERR_SUBGROUP_ID_MODE_RESERVED"),
                    ("0x20", "MOQT_ERR_SUBGROUP_BIT4_CLEAR"), ("0x90", "MOQT_ERR_SUBGROUP_TYPE_TOO_LARGE")):
        doc = dict(base, header_type=t)
        if int(t, 16) & 0x20:
            doc.pop("publisher_priority")
        expect_error_noofs("encode: subgroup header_type " + t, enc("subgroup", doc), 2,
                           "invalid_type " + name)
    dg = {"stream_type": "datagram", "datagram_type": "0x20", "track_alias": "1", "group_id": "0",
          "object_id": "5", "publisher_priority": "128", "object_status": "3"}
    check("encode: status datagram", enc("datagram", dg).stdout.hex() == "200100058003")
    expect_error_noofs("encode: status datagram with a payload",
                       enc("datagram", dict(dg, payload_hex="dead")), 2,
                       "payload_not_permitted MOQT_ERR_PAYLOAD_NOT_PERMITTED")
    expect_error_noofs("encode: datagram type 0x22", enc("datagram", dict(dg, datagram_type="0x22",
                                                                          end_of_group=True)), 2,
                       "invalid_type MOQT_ERR_DATAGRAM_STATUS_END_OF_GROUP")
    expect_error_noofs("encode: non-Normal status datagram with properties",
                       enc("datagram", dict(dg, datagram_type="0x21",
                                            object_properties={"prior_group_id_gap": "2"})), 2,
                       "invalid_value MOQT_ERR_STATUS_PROPERTIES")
    # JSON that disagrees with itself or is not JSON: usage errors, nothing written.
    expect_usage("encode: not JSON", run(["encode", "--carrier", "subgroup"], b"{nope"))
    expect_usage("encode: payload_length disagrees with payload_hex",
                 enc("subgroup", dict(base, objects=[{"object_id": "0", "payload_length": "3",
                                                      "payload_hex": "cafe"}])))
    expect_usage("encode: missing track_alias",
                 enc("subgroup", {k: v for k, v in base.items() if k != "track_alias"}))
    expect_usage("encode: publisher_priority with DEFAULT_PRIORITY",
                 enc("subgroup", dict(base, header_type="0x30")))
    expect_usage("encode: end_of_group true but the bit clear",
                 enc("subgroup", dict(base, end_of_group=True)))
    expect_usage("encode: stream_type fetch with --carrier subgroup",
                 enc("subgroup", dict(base, stream_type="fetch")))
    expect_usage("encode: odd hex", enc("datagram", dict(dg, datagram_type="0x00",
                                                         payload_hex="abc")))
    expect_usage("encode: an integer above 2^64-1",
                 enc("subgroup", dict(base, group_id="18446744073709551616")))
    # Object IDs must increase (writer refusal, WK_ERR_ARG: exit 1).
    r = enc("subgroup", dict(base, objects=[
        {"object_id": "5", "payload_length": "1", "payload_hex": "aa"},
        {"object_id": "5", "payload_length": "1", "payload_hex": "bb"}]))
    # streamed: the header and object 5 are written before the second object 5 is refused
    first = enc("subgroup", dict(base, objects=[
        {"object_id": "5", "payload_length": "1", "payload_hex": "aa"}])).stdout
    check("encode: a repeated Object ID is refused after the objects before it",
          r.returncode in (1, 2) and r.stdout == first and len(first) > 0 and
          len(err_lines(r)) == 1, "rc=%d %s" % (r.returncode, text(r.stderr)))
    # a header field after "objects" is refused (streamed: the header comes first)
    late = json.dumps(dict(base, objects=[]))[:-1] + ', "publisher_priority": "1"}'
    expect_usage("encode: a header field after \"objects\"",
                 run(["encode", "--carrier", "subgroup"], late.encode()))
    # A fetch first record that cannot express its IDs without a prior object.
    fd = {"stream_type": "fetch", "request_id": "4", "objects": [
        {"serialization_flags": "0x00", "group_id": "0", "subgroup_id": "0", "object_id": "0",
         "publisher_priority": "128", "payload_length": "0", "payload_hex": ""}]}
    r = enc("fetch", fd)
    check("encode: fetch first record with flags 0x00 refused, nothing written",
          r.returncode != 0 and r.stdout == b"" and len(err_lines(r)) == 1, text(r.stderr))
    # int decode: several integers back to back; a cut one.
    r = run(["int", "decode"], bytes.fromhex("258025c04000"))
    check("int decode: three integers, one line each",
          r.returncode == 0 and r.stdout.decode().splitlines() ==
          ['{"value":"37"}', '{"value":"37"}', '{"value":"16384"}'], text(r.stdout))
    expect_error("int decode: a cut integer after a whole one", run(["int", "decode"],
                                                                     bytes.fromhex("25c040")),
                 "incomplete", "MOQT_ERR_TRUNCATED", 3, stdout_empty=False)
    r = run(["int", "encode", "0", "127", "128", "18446744073709551615"])
    check("int encode: several values", r.stdout.hex() == "007f8080ffffffffffffffffff",
          r.stdout.hex())


def expect_error_noofs(label, r, rc, prefix):
    lines = err_lines(r)
    return check("%s: exit %d, one stderr line %s, nothing written" % (label, rc, prefix),
                 r.returncode == rc and len(lines) == 1 and lines[0].startswith(prefix) and
                 lines[0][len(prefix):len(prefix) + 1] in (" ", ":") and
                 r.stdout == b"", "rc=%d stderr=%r stdout=%s" % (r.returncode, text(r.stderr),
                                                                r.stdout.hex()))


def main():
    help_tests()
    vector_tests()
    option_tests()
    streaming_tests()
    properties_tests()
    refusal_tests()
    return wktest.summary("moqt_cli")


if __name__ == "__main__":
    sys.exit(main())
