"""The release's registry login, read by the code the attestation runs: release.yml's push-image job
logs in with `skopeo login --authfile ~/.docker/config.json`, checks the file with
`release_files.py docker-auth`, and then actions/attest-build-provenance v4.1.0 pushes the
attestation with the credentials @sigstore/oci 0.6.0's getRegistryCredentials finds.

Each credentials file below is given to both: the real @sigstore/oci from the npm registry
(.ci/sigstore-oci, pinned as the action pins it, installed by .ci/run) and release_files.py.
They must agree: the check accepts exactly the files the action can log in with, with the same
user and password, and refuses the ones it cannot (a credential helper, skopeo's own auth path).
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from builders import REPO

_spec = importlib.util.spec_from_file_location(
    "release_files", REPO / ".github" / "scripts" / "release_files.py"
)
release_files = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release_files)

LOOKUP = REPO / ".ci" / "sigstore-oci"
IMAGE = "ghcr.io/rag-ci/rag-ci"  # the subject-name push-image passes: ghcr.io/${GITHUB_REPOSITORY,,}


# actions/attest-build-provenance's version in release.yml -> the @sigstore/oci its actions/attest
# locks (package-lock.json at that tag): .ci/sigstore-oci must install that one.
SIGSTORE_OCI_OF = {"v4.1.0": "0.6.0"}


@pytest.fixture
def lookup() -> Path:
    """The installed lookup script, or a skip that says what is missing."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the action's credential lookup runs on node)")
    installed = LOOKUP / "node_modules" / "@sigstore" / "oci" / "package.json"
    if not installed.is_file() and shutil.which("npm") is not None:
        # what .ci/run does, for a clone that has not run it: the lock pins the version
        done = subprocess.run(
            ["npm", "ci", "--prefix", str(LOOKUP), "--no-audit", "--no-fund"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            pytest.skip(f"npm ci --prefix .ci/sigstore-oci failed: {done.stderr.strip()[-300:]}")
    if not installed.is_file():
        pytest.skip("@sigstore/oci is not installed and npm is absent: npm ci --prefix .ci/sigstore-oci")
    return LOOKUP / "registry-credentials.js"


def test_the_lookup_is_the_version_the_release_workflow_runs():
    workflow = (REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    action = re.search(r"actions/attest-build-provenance@[0-9a-f]{40} # (v[\d.]+)", workflow)
    assert action, "release.yml no longer attests with actions/attest-build-provenance"
    assert action[1] in SIGSTORE_OCI_OF, (
        f"release.yml runs actions/attest-build-provenance {action[1]}: pin the @sigstore/oci of its "
        "actions/attest (package-lock.json) in .ci/sigstore-oci, then add it to SIGSTORE_OCI_OF"
    )
    wanted = SIGSTORE_OCI_OF[action[1]]
    package = json.loads((LOOKUP / "package.json").read_text(encoding="utf-8"))
    locked = json.loads((LOOKUP / "package-lock.json").read_text(encoding="utf-8"))
    assert package["dependencies"]["@sigstore/oci"] == wanted
    assert locked["packages"]["node_modules/@sigstore/oci"]["version"] == wanted


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _skopeo_login(user: str, password: str, host: str = "ghcr.io") -> str:
    # What `skopeo login --authfile FILE` writes (containers/image: tab-indented JSON, one `auth`).
    return json.dumps({"auths": {host: {"auth": _b64(f"{user}:{password}")}}}, indent="\t")


# name -> {path under HOME: content}: the files a release runner's HOME could hold.
HOMES = {
    "skopeo login --authfile ~/.docker/config.json": {
        ".docker/config.json": _skopeo_login("release-bot", "ghs_token")
    },
    "a password with colons": {".docker/config.json": _skopeo_login("release-bot", "a:b:c")},
    "docker login's URL key": {
        ".docker/config.json": json.dumps({"auths": {"https://ghcr.io": {"auth": _b64("bot:pw")}}})
    },
    "an identity token in place of the password": {
        ".docker/config.json": json.dumps(
            {"auths": {"ghcr.io": {"auth": _b64("bot:"), "identitytoken": "id-token"}}}
        )
    },
    "base64 without its padding": {
        ".docker/config.json": json.dumps({"auths": {"ghcr.io": {"auth": _b64("bot:pwd").rstrip("=")}}})
    },
    "a credential helper only": {".docker/config.json": json.dumps({"credsStore": "desktop"})},
    "skopeo's default auth path only": {
        ".config/containers/auth.json": _skopeo_login("release-bot", "ghs_token")
    },
    "a login for another registry": {
        ".docker/config.json": _skopeo_login("release-bot", "ghs_token", host="docker.io")
    },
    "an entry without auth": {".docker/config.json": json.dumps({"auths": {"ghcr.io": {}}})},
    "an empty password": {".docker/config.json": _skopeo_login("release-bot", "")},
    "not base64": {".docker/config.json": json.dumps({"auths": {"ghcr.io": {"auth": "not base64!"}}})},
    "not JSON": {".docker/config.json": "{auths"},
    "no file at all": {},
}


def _home(folder: Path, files: dict[str, str]) -> Path:
    home = folder / "home"
    home.mkdir(parents=True)
    for relative, content in files.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(content, encoding="utf-8")
    return home


def action_reads(lookup: Path, home: Path) -> dict:
    """getRegistryCredentials(IMAGE) of the real @sigstore/oci, with HOME=home."""
    run = subprocess.run(
        ["node", str(lookup), IMAGE],
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(run.stdout)


def check_reads(home: Path) -> tuple[str, str] | str:
    """What release_files.py docker-auth makes of the file the workflow passes it."""
    try:
        return release_files.docker_login(home / ".docker" / "config.json", "ghcr.io")
    except release_files.ReleaseFileError as exc:
        return str(exc)


@pytest.mark.parametrize("name", list(HOMES))
def test_the_check_accepts_exactly_the_logins_the_attestation_can_push_with(lookup, tmp_path, name):
    home = _home(tmp_path, HOMES[name])
    action = action_reads(lookup, home)
    check = check_reads(home)
    # The action "finds" a login with an empty password in a malformed entry (Node decodes any
    # string as base64): the registry would refuse it, so the check refuses it before the push.
    usable = action["ok"] and bool(action["username"]) and bool(action["password"])
    if usable:
        assert check == (action["username"], action["password"]), (name, action)
    else:
        assert isinstance(check, str), (name, action, check)


def test_the_release_login_is_read_alike_and_a_helper_is_refused_alike(lookup, tmp_path):
    """The comparison above is not vacuous: the release's own login is read, by both, as written,
    and a credential helper is refused by both."""
    home = _home(tmp_path / "login", HOMES["skopeo login --authfile ~/.docker/config.json"])
    assert action_reads(lookup, home) == {"ok": True, "username": "release-bot", "password": "ghs_token"}
    assert check_reads(home) == ("release-bot", "ghs_token")
    helper = _home(tmp_path / "helper", HOMES["a credential helper only"])
    assert action_reads(lookup, helper) == {"ok": False, "error": "No credentials found for registry ghcr.io"}
    assert "holds no login for ghcr.io" in check_reads(helper)
