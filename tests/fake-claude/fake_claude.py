#!/usr/bin/env python3
# Scripted stand-in for the Claude Code CLI in stream-json mode: replays a captured transcript to its host (askpane claude) and checks, in shape, every line the host writes back.
"""fake_claude.py: the Claude Code CLI as a host sees it, from a captured transcript.

Started by the host the way it starts Claude Code (`--output-format stream-json --verbose
--input-format stream-json --permission-prompt-tool stdio`, then any extra arguments). Which
transcript to replay and where to write the report come from arguments or the environment:

    --transcript PATH   or  FAKE_CLAUDE_TRANSCRIPT=PATH   (required)
    --report PATH       or  FAKE_CLAUDE_REPORT=PATH       (optional; no report without it)

Transcript records, one JSON object per line (`tests/fixtures/session.*.replay.jsonl`):

    {"dir":"cmd","line":[...]}     how the captured CLI was started: ignored
    {"dir":"<<","line":{...}}      written to stdout as one compact line (non-ASCII raw)
    {"dir":">>","line":{...}}      one line is read from stdin and compared, in shape, with it
    {"dir":"exit","line":N}        wait for stdin to close, then exit with N
  and, in transcripts the tests write themselves:
    {"dir":"<<","raw":"text"}      the text written to stdout as it is (a malformed line)
    {"dir":"stderr","line":"text"} the text written to stderr
    {"dir":"wait","line":PATH}     wait until PATH exists (the test says "go on")
    {"dir":"die","line":N}         exit with N at once, without waiting for stdin (a crash)
    {"dir":"spawn","line":PATH}    start a long-running child (`sleep 1000`) that inherits stdout
                                   and stderr (as a shell or MCP server would), and write its pid
                                   and the fake's own pid to PATH as "child fake"
    {"dir":"hang","line":{"ignore_term":bool}}
                                   stop reading stdin and sleep until killed; with ignore_term,
                                   SIGTERM is ignored (a CLI that never reads stdin)
    {"dir":"linger","line":null}   read stdin until it closes, report "lingering", then sleep
                                   until killed (a CLI slow to exit once its input closed)

In shape means (a host's own ids and texts are its own business):
  * every line: the same `type`;
  * control_request: the same `request.subtype`; `request_id` is the host's choice. The CLI answers
    with the host's id: a later `<<` control_response whose `response.request_id` is the recorded
    id carries the host's id instead (so `initialize` and `interrupt` are answered as the real CLI
    answers them);
  * control_response: the same `response.subtype` and `response.request_id` (the CLI's own id);
    in `response.response` the same `behavior`, the same presence (and value) of `interrupt`,
    `toolUseID` equal, `message` a non-empty string where one was recorded, and `updatedInput`
    present where recorded, with the same keys: `questions` equal to the recorded ones exactly,
    `answers` with the same keys, `response` present only where recorded;
  * user: `message.role` "user" and text content (a string, or text blocks); the text is not
    compared.

Extra host lines: after the transcript's last `>>` line, while waiting for stdin to close, the
host may still send `control_request` `interrupt` (a host stopping "the turn" as it shuts down):
harmless, since the turn is over and there is nothing left to stop; it is reported as an extra
line with ok=true and not answered. Any other extra line (a reply nobody asked for, a user turn)
is reported with ok=false. A host line that arrives while a `<<` line is due does not exist here:
the fake reads stdin only where the transcript has a `>>` line or at the end.

The report (JSON, rewritten after every step so a killed fake still leaves one):
    {"transcript", "argv", "comparisons": [{"step", "expected", "got", "got_text", "ok",
     "problems"}], "written": [every stdout line, as written, without its newline],
     "status": "running" | "done" | "died" | "stdin closed early" | "timed out" | ..., "exit",
     "all_ok"}

Bounded: each read from stdin waits at most FAKE_CLAUDE_WAIT seconds (default 20). If stdin
closes before a `>>` line, or nothing arrives in time, the fake reports it and exits with 1.
"""

import json
import os
import select
import signal
import subprocess
import sys
import time

WAIT = float(os.environ.get("FAKE_CLAUDE_WAIT", "20"))

# The flags a stream-json host must pass (protocol.md §1), flag -> value (None: no value).
HOST_FLAGS = {
    "--output-format": "stream-json",
    "--input-format": "stream-json",
    "--verbose": None,
    "--permission-prompt-tool": "stdio",
}


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Report:
    def __init__(self, path, transcript, argv):
        self.path = path
        self.data = {
            "transcript": transcript,
            "argv": argv,
            "comparisons": [],
            "written": [],
            "status": "running",
            "exit": None,
            "all_ok": True,
        }

    def compare(self, step, expected, got, got_text, problems):
        ok = not problems
        self.data["comparisons"].append(
            {
                "step": step,
                "expected": expected,
                "got": got,
                "got_text": got_text,
                "ok": ok,
                "problems": problems,
            }
        )
        if not ok:
            self.data["all_ok"] = False
        self.save()

    def wrote(self, text):
        self.data["written"].append(text)

    def finish(self, status, code):
        self.data["status"] = status
        self.data["exit"] = code
        if status not in ("done", "died"):
            self.data["all_ok"] = False
        self.save()

    def save(self):
        if not self.path:
            return
        temporary = self.path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(self.data, file, ensure_ascii=False, indent=1)
        os.replace(temporary, self.path)


class Stdin:
    """Lines from fd 0 with a time limit per line (no buffering behind select's back)."""

    def __init__(self):
        self.buffer = b""
        self.closed = False

    def line(self, limit):
        """The next line (bytes, without the newline); None at end of input; raises TimeoutError."""
        deadline = time.monotonic() + limit
        while b"\n" not in self.buffer:
            if self.closed:
                if self.buffer:
                    line, self.buffer = self.buffer, b""
                    return line
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([0], [], [], left)
            if not ready:
                continue
            chunk = os.read(0, 1 << 16)
            if chunk:
                self.buffer += chunk
            else:
                self.closed = True
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line


def arguments(argv):
    """(transcript, report, the host's flags as flag -> value, the rest)."""
    transcript = os.environ.get("FAKE_CLAUDE_TRANSCRIPT")
    report = os.environ.get("FAKE_CLAUDE_REPORT")
    flags, rest = {}, []
    index = 0
    while index < len(argv):
        arg = argv[index]
        value = argv[index + 1] if index + 1 < len(argv) else None
        if arg == "--transcript":
            transcript, index = value, index + 2
        elif arg == "--report":
            report, index = value, index + 2
        elif arg in HOST_FLAGS and HOST_FLAGS[arg] is None:
            flags[arg], index = None, index + 1
        elif arg in HOST_FLAGS:
            flags[arg], index = value, index + 2
        elif arg.startswith("--") and "=" in arg and arg.split("=", 1)[0] in HOST_FLAGS:
            name, value = arg.split("=", 1)
            flags[name], index = value, index + 1
        else:
            rest.append(arg)
            index += 1
    return transcript, report, flags, rest


def text_content(content):
    if isinstance(content, str):
        return True
    return (
        isinstance(content, list)
        and len(content) > 0
        and all(
            isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
            for block in content
        )
    )


def shape_problems(expected, got):
    """What differs in shape between the recorded host line and the host's line."""
    if not isinstance(got, dict):
        return ["not a JSON object"]
    kind = expected.get("type")
    if got.get("type") != kind:
        return [f"type {got.get('type')!r}, recorded {kind!r}"]
    problems = []
    if kind == "control_request":
        request = got.get("request")
        recorded = expected.get("request") or {}
        if not isinstance(got.get("request_id"), str) or not got["request_id"]:
            problems.append("no request_id")
        if not isinstance(request, dict):
            problems.append("no request object")
        elif request.get("subtype") != recorded.get("subtype"):
            problems.append(f"request.subtype {request.get('subtype')!r}, recorded {recorded.get('subtype')!r}")
    elif kind == "control_response":
        response = got.get("response")
        recorded = expected.get("response") or {}
        if not isinstance(response, dict):
            return ["no response object"]
        for key in ("subtype", "request_id"):
            if response.get(key) != recorded.get(key):
                problems.append(f"response.{key} {response.get(key)!r}, recorded {recorded.get(key)!r}")
        problems += result_problems(recorded.get("response"), response.get("response"))
    elif kind == "user":
        message = got.get("message")
        if not isinstance(message, dict) or message.get("role") != "user":
            problems.append("message.role is not user")
        elif not text_content(message.get("content")):
            problems.append("message.content is not text")
    return problems


def result_problems(recorded, got):
    """The permission result inside a control_response (protocol.md §5.1)."""
    if not isinstance(recorded, dict):
        return [] if recorded == got else ["response.response differs"]
    if not isinstance(got, dict):
        return ["no response.response object"]
    problems = []
    if got.get("behavior") != recorded.get("behavior"):
        problems.append(f"behavior {got.get('behavior')!r}, recorded {recorded.get('behavior')!r}")
    if ("interrupt" in got) != ("interrupt" in recorded) or got.get("interrupt") != recorded.get("interrupt"):
        problems.append(f"interrupt {got.get('interrupt')!r}, recorded {recorded.get('interrupt')!r}")
    if got.get("toolUseID") != recorded.get("toolUseID"):
        problems.append(f"toolUseID {got.get('toolUseID')!r}, recorded {recorded.get('toolUseID')!r}")
    if "message" in recorded and not (isinstance(got.get("message"), str) and got["message"]):
        problems.append("no message")
    if ("updatedInput" in got) != ("updatedInput" in recorded):
        problems.append(f"updatedInput {'present' if 'updatedInput' in got else 'missing'}, recorded otherwise")
    elif "updatedInput" in recorded:
        mine, theirs = got["updatedInput"], recorded["updatedInput"]
        if not isinstance(mine, dict):
            return problems + ["updatedInput is not an object"]
        if sorted(mine) != sorted(theirs):
            problems.append(f"updatedInput keys {list(mine)}, recorded {list(theirs)}")
        if mine.get("questions") != theirs.get("questions"):
            problems.append("updatedInput.questions are not the questions as asked")
        if "answers" in theirs:
            answers = mine.get("answers")
            if not isinstance(answers, dict) or sorted(answers) != sorted(theirs["answers"]):
                keys = list(answers) if isinstance(answers, dict) else answers
                problems.append(f"answers keys {keys}, recorded {list(theirs['answers'])}")
        if ("response" in mine) != ("response" in theirs):
            problems.append("updatedInput.response present where not recorded, or missing")
    return problems


def harmless_extra(got):
    """A host line after the transcript's last one that changes nothing: an interrupt."""
    return (
        isinstance(got, dict)
        and got.get("type") == "control_request"
        and isinstance(got.get("request"), dict)
        and got["request"].get("subtype") == "interrupt"
    )


def main():
    transcript, report_path, flags, _rest = arguments(sys.argv[1:])
    report = Report(report_path, transcript, sys.argv[1:])
    expected_flags = {flag: value for flag, value in HOST_FLAGS.items()}
    flag_problems = [
        f"{flag} {'missing' if flag not in flags else repr(flags[flag])}"
        for flag, value in HOST_FLAGS.items()
        if flags.get(flag, "missing") != value
    ]
    report.compare("argv", expected_flags, flags, " ".join(sys.argv[1:]), flag_problems)
    if not transcript:
        print("fake_claude: no transcript (--transcript or FAKE_CLAUDE_TRANSCRIPT)", file=sys.stderr)
        report.finish("no transcript", 2)
        return 2
    with open(transcript, encoding="utf-8") as file:
        records = [json.loads(line) for line in file if line.strip()]

    stdin = Stdin()
    out = sys.stdout.buffer
    # Recorded host request id -> the id this host used.
    renamed = {}
    last_host_line = max((i for i, r in enumerate(records) if r.get("dir") == ">>"), default=-1)

    def write(text):
        out.write(text.encode("utf-8") + b"\n")
        out.flush()
        report.wrote(text)

    def read():
        """The host's next line (text, parsed); (why, None) if it does not come."""
        try:
            raw = stdin.line(WAIT)
        except TimeoutError:
            return "timed out", None
        if raw is None:
            return "stdin closed early", None
        text = raw.decode("utf-8", errors="replace")
        try:
            return text, json.loads(text)
        except ValueError:
            return text, {"not json": text}

    try:
        for index, record in enumerate(records):
            direction = record.get("dir")
            line = record.get("line")
            if direction == "<<":
                if "raw" in record:
                    write(record["raw"])
                    continue
                response = line.get("response") if line.get("type") == "control_response" else None
                if isinstance(response, dict) and response.get("request_id") in renamed:
                    line = json.loads(json.dumps(line))
                    line["response"]["request_id"] = renamed[response["request_id"]]
                write(compact(line))
            elif direction == ">>":
                # Before waiting for the host: what was written so far is on disk for the test.
                report.save()
                step = f">> record {index + 1}: {line.get('type')}"
                text, got = read()
                if got is None:
                    report.compare(step, line, None, None, [text])
                    report.finish(text, 1)
                    return 1
                report.compare(step, line, got, text, shape_problems(line, got))
                if line.get("type") == "control_request" and isinstance(got.get("request_id"), str):
                    renamed[line.get("request_id")] = got["request_id"]
            elif direction == "stderr":
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
            elif direction == "wait":
                deadline = time.monotonic() + WAIT
                while not os.path.exists(line):
                    if time.monotonic() > deadline:
                        report.finish(f"waited {WAIT} s for {line}", 1)
                        return 1
                    time.sleep(0.01)
            elif direction == "spawn":
                child = subprocess.Popen(["sleep", "1000"], stdin=subprocess.DEVNULL)
                with open(line + ".tmp", "w", encoding="utf-8") as file:
                    file.write(f"{child.pid} {os.getpid()}\n")
                os.replace(line + ".tmp", line)
            elif direction == "hang":
                report.finish("hanging", None)
                if line.get("ignore_term"):
                    signal.signal(signal.SIGTERM, signal.SIG_IGN)
                while True:
                    time.sleep(1000)
            elif direction == "linger":
                while True:
                    try:
                        raw = stdin.line(WAIT)
                    except TimeoutError:
                        report.finish("timed out waiting for stdin to close", 1)
                        return 1
                    if raw is None:
                        break
                report.finish("lingering", None)
                while True:
                    time.sleep(1000)
            elif direction == "die":
                report.finish("died", line)
                return line
            elif direction == "exit":
                return finish(report, stdin, index > last_host_line, line)
        return finish(report, stdin, True, 0)
    except BrokenPipeError:
        report.finish("stdout closed by the host", 1)
        return 1


def finish(report, stdin, turn_over, code):
    """Reads what the host still sends until it closes stdin; then exits with `code`."""
    while True:
        try:
            raw = stdin.line(WAIT)
        except TimeoutError:
            report.finish("timed out waiting for stdin to close", 1)
            return 1
        if raw is None:
            report.finish("done", code)
            return code
        text = raw.decode("utf-8", errors="replace")
        if not text.strip():
            continue
        try:
            got = json.loads(text)
        except ValueError:
            got = {"not json": text}
        problems = [] if turn_over and harmless_extra(got) else ["an extra host line the transcript does not have"]
        report.compare("extra host line", None, got, text, problems)


if __name__ == "__main__":
    sys.exit(main())
