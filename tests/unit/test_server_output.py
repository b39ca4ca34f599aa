"""A started server's output in the diagnostics: its errors (a traceback whole) ahead of the
access-log lines that scrolled them away (rag_ci.targets.server_process.errors_first)."""

from rag_ci.targets.processes import OutputTail
from rag_ci.targets.server_process import errors_first

ACCESS = '127.0.0.1 - - "POST /search HTTP/1.1" 200 -'


def tail(*lines: str) -> OutputTail:
    out = OutputTail()
    for line in lines:
        out.add(line)
    return out


def test_a_traceback_under_access_log_lines_comes_first_whole():
    output = tail(
        "Uvicorn running on http://127.0.0.1:8000",
        "Traceback (most recent call last):",
        '  File "app.py", line 3, in search',
        "    cursor.execute(q)",
        "sqlite3.ProgrammingError: Recursive use of cursors not allowed.",
        *[ACCESS] * 30,
    )
    lines = errors_first(output, last=10).splitlines()
    assert lines[:4] == [
        "Traceback (most recent call last):",
        '  File "app.py", line 3, in search',
        "    cursor.execute(q)",
        "sqlite3.ProgrammingError: Recursive use of cursors not allowed.",
    ]
    assert lines[4] == "--- the server's last other lines ---" and lines[5:] == [ACCESS] * 5


def test_output_without_errors_is_its_last_lines():
    output = tail("starting", *[ACCESS] * 3)
    assert errors_first(output, last=2) == f"{ACCESS}\n{ACCESS}"


def test_error_lines_alone_fill_the_space_when_there_are_many():
    output = tail(*[f"ERROR: request {i} failed" for i in range(5)], ACCESS)
    assert errors_first(output, last=3).splitlines() == [f"ERROR: request {i} failed" for i in (2, 3, 4)]
