#!/usr/bin/python3
"""docs/wirekit.1 covers the CLI: every module, command and option, and every exit status.

The list is not written here: it is read from the CLI's own --help output. `wirekit --help` names
the modules; `wirekit MODULE --help` lists `wirekit MODULE WORD ...` lines, and a WORD whose own
--help lists `wirekit MODULE WORD WORD2 ...` lines is a group (eth snappy, moqt int) whose
commands are those; the rest are commands (a module that lists no words, such as blake3, is a
command itself). A command's options are the --names its --help text mentions. The man page
must have a subsection `.SS "wirekit MODULE COMMAND"` for each command, mention each of its
options inside that subsection, have a section for each module, and list every exit status the
top-level help gives. A command or option added to the CLI without its man page entry fails
here.

Usage: man_test.py WIREKIT MANPAGE
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
import wktest  # noqa: E402
from wktest import check  # noqa: E402

WIREKIT, MAN = sys.argv[1], sys.argv[2]


def helptext(path):
    r = subprocess.run([WIREKIT] + path + ["--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    check("wirekit %s --help: exit 0, usage on stdout" % " ".join(path),
          r.returncode == 0 and r.stdout.startswith(b"usage:"), r.stderr.decode(errors="replace"))
    return r.stdout.decode("utf-8", "replace")


def listed_words(text, path):
    """The words W of the lines `  wirekit PATH W ...` of a command list (in order, once)."""
    prefix = " ".join(["wirekit"] + path) + " "
    words = []
    for line in text.splitlines():
        s = line.strip()
        if line[:1].isspace() and s.startswith(prefix):
            w = s[len(prefix):].split(" ", 1)[0]
            if re.fullmatch(r"[a-z][a-z0-9-]*", w) and w not in words:
                words.append(w)
    return words


OPTION = re.compile(r"(?<![\w-])--[a-z0-9][a-z0-9-]*")


def commands():
    """[(path, options)] for every command of the CLI, from the --help texts."""
    top = helptext([])
    first = top.split("\n\n")[1] if "\n\n" in top else top  # "modules and commands:" block
    modules = [w for w in listed_words(first, []) if w]
    check("wirekit --help names modules", len(modules) >= 6, top[:300])
    out = []

    def walk(path, text):
        words = listed_words(text, path)
        if not words:
            out.append((path, sorted(set(OPTION.findall(text)) - {"--help"})))
            return
        for w in words:
            sub = helptext(path + [w])
            # a group's words are listed again one level down; a command's help does not list
            # `wirekit PATH W X` lines (its usage line starts with "usage:")
            walk(path + [w], sub)
    for m in modules:
        walk([m], helptext([m]))
    return modules, out


def unroff(s):
    """Man source text as a reader sees it, near enough: escapes and font changes removed."""
    s = s.replace("\\-", "-").replace("\\e", "\\").replace("\\(lq", '"').replace("\\(rq", '"')
    s = s.replace("\\(em", "-")
    s = re.sub(r"\\f[BIRP]", "", s)
    s = re.sub(r"\\\(..", "", s)
    return s


def man_sections(src):
    """{.SH title: text} and [(.SS title, text)] from the man page source (unescaped)."""
    sh, ss = {}, []
    cur_sh = cur_ss = None
    for raw in src.splitlines():
        line = unroff(raw)
        if raw.startswith('.\\"'):
            continue
        m = re.match(r'\.(SH|SS)\s+"?([^"]*)"?\s*$', line)
        if m:
            if m.group(1) == "SH":
                cur_sh, cur_ss = m.group(2), None
                sh[cur_sh] = ""
            else:
                cur_ss = [m.group(2), ""]
                ss.append(cur_ss)
            continue
        if cur_sh is not None:
            sh[cur_sh] += line + "\n"
        if cur_ss is not None:
            cur_ss[1] += line + "\n"
    return sh, ss


def main():
    with open(MAN, encoding="utf-8") as f:
        src = f.read()
    sh, ss = man_sections(src)
    sub = {}
    for title, body in ss:
        sub.setdefault(title, "")
        sub[title] += body
    for need in ("NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "ERRORS", "EXAMPLES",
                 "SEE ALSO"):
        check("man page has section %s" % need, need in sh, ", ".join(sh))
    modules, cmds = commands()
    check("the CLI has commands (%d found)" % len(cmds), len(cmds) >= 30,
          ", ".join(" ".join(p) for p, _ in cmds))
    for m in modules:
        check("man page has a section for module %s" % m,
              any(re.search(r"\b%s\b" % m.upper(), t) for t in sh), ", ".join(sh))
    for path, opts in cmds:
        title = "wirekit " + " ".join(path)
        body = sub.get(title)
        if not check("man page: subsection %r" % title, body is not None,
                     "add `.SS \"%s\"` to %s" % (title, MAN)):
            continue
        missing = [o for o in opts if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(o),
                                                    body)]
        check("man page: %s documents %s" % (title, " ".join(opts) or "(no options)"),
              not missing, "missing in its subsection: %s" % " ".join(missing))
    listed = {"wirekit " + " ".join(p) for p, _ in cmds}
    extra = [t for t, _ in ss if t.startswith("wirekit ") and t not in listed]
    check("man page: no subsection for a command the CLI does not have", not extra,
          ", ".join(extra))
    # exit statuses: the top-level help's list, each a .TP entry of EXIT STATUS
    top = helptext([])
    codes = re.findall(r"(\d) [a-z]", top.split("Exit status:", 1)[1]) if "Exit status:" in top \
        else []
    check("wirekit --help lists exit statuses 0..4", sorted(set(codes)) == list("01234"),
          str(codes))
    exits = sh.get("EXIT STATUS", "")
    for c in sorted(set(codes)):
        check("man page EXIT STATUS documents %s" % c,
              re.search(r"^\.B %s$" % c, exits, re.M) is not None, exits[:200])
    for o in ("--help", "--version"):
        check("man page documents %s" % o, o in unroff(src))
    return wktest.summary("cli_man")


if __name__ == "__main__":
    sys.exit(main())
