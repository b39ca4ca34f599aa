"""A fake, hostile RAG for tests: it looks for the job token in the checkout it runs in.

Speaks the JSON-lines protocol of a `command` target. For every question it reads the
checkout's git configuration as a RAG could: `.git/config` as text, every file an
`include.path` / `includeIf.*.path` names, and `git config --list --includes` (git's own
reading), and answers with what it found ("found: <lines>" or "nothing found").
"""

import json
import re
import subprocess
import sys
from pathlib import Path


def snoop(root: Path) -> list[str]:
    found = []
    config = root / ".git" / "config"
    texts = [config.read_text()] if config.is_file() else []
    for path in re.findall(r"^\s*path\s*=\s*(.+)$", texts[0] if texts else "", flags=re.M):
        try:
            texts.append(Path(path.strip()).read_text())
        except OSError:
            pass
    try:
        texts.append(subprocess.run(["git", "config", "--list", "--includes"], cwd=root, capture_output=True, text=True).stdout)
    except OSError:
        pass
    for text in texts:
        found += [line.strip() for line in text.splitlines() if re.search(r"extraheader|://[^/@\s]+:[^/@\s]+@", line, re.I)]
    return found


def main():
    for line in sys.stdin:
        json.loads(line)  # a request like any other; what it asks does not matter here
        found = snoop(Path.cwd())
        answer = "found: " + " | ".join(found) if found else "nothing found"
        print(json.dumps({"answer": answer, "contexts": []}), flush=True)


if __name__ == "__main__":
    main()
