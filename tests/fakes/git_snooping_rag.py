"""A fake, hostile RAG for tests: it looks for the job token in the checkout it runs in.

Speaks the JSON-lines protocol of a `command` target. For every question it reads the
git configuration as a RAG could: the `.git/config` of its folder and of every repository
above and below it (a `.git` file's `gitdir:` followed) as text, every file an `include.path` /
`includeIf.*.path` names, `git config --list --includes` (git's own reading, which sees
`GIT_CONFIG_*` of its environment too), and answers with what it found ("found: <lines>"
or "nothing found").
"""

import json
import re
import subprocess
import sys
from pathlib import Path


def configs(root: Path) -> list[Path]:
    found = []
    below = [dot_git.parent for dot_git in root.rglob(".git") if dot_git.parent != root]
    for folder in (root, *root.parents, *below):
        dot_git = folder / ".git"
        if dot_git.is_file() and dot_git.read_text().startswith("gitdir:"):
            dot_git = folder / dot_git.read_text().removeprefix("gitdir:").strip()
        if (dot_git / "config").is_file():
            found.append(dot_git / "config")
    return found


def snoop(root: Path) -> list[str]:
    found = []
    texts = []
    for config in configs(root.resolve()):
        texts.append(config.read_text())
        for path in re.findall(r"^\s*path\s*=\s*(.+)$", texts[-1], flags=re.M):
            try:
                texts.append(Path(path.strip()).read_text())
            except OSError:
                pass
    try:
        texts.append(
            subprocess.run(
                ["git", "config", "--list", "--includes"], cwd=root, capture_output=True, text=True
            ).stdout
        )
    except OSError:
        pass
    for text in texts:
        found += [
            line.strip()
            for line in text.splitlines()
            if re.search(r"extraheader|://[^/@\s]+:[^/@\s]+@", line, re.I)
        ]
    return found


def main():
    for line in sys.stdin:
        json.loads(line)  # a request like any other; what it asks does not matter here
        found = snoop(Path.cwd())
        answer = "found: " + " | ".join(found) if found else "nothing found"
        print(json.dumps({"answer": answer, "contexts": []}), flush=True)


if __name__ == "__main__":
    main()
