"""requirements/action.lock carries hashes, and pip refuses a file whose bytes differ from them.

Every pin lists the sha256 of every wheel and sdist PyPI publishes for that version
(requirements/lock_hashes.py, called by update-action-lock.sh), so one lock serves the amd64 and
arm64 images; the Dockerfile installs it with --require-hashes. The refusal is shown with real
pip on a wheel made here, and on the lock's own wheels when .ci/build-image.sh has downloaded them.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from builders import REPO

LOCK = REPO / "requirements" / "action.lock"
WHEELS = REPO / "requirements" / "wheels"

_spec = importlib.util.spec_from_file_location("lock_hashes", REPO / "requirements" / "lock_hashes.py")
lock_hashes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lock_hashes)


def requirements(text: str) -> dict[str, list[str]]:
    """`name==version` -> its hashes, from a requirements file with backslash continuations."""
    joined = re.sub(r"\\\n", " ", text)
    found: dict[str, list[str]] = {}
    for line in joined.splitlines():
        if line.strip() and not line.startswith("#"):
            pin, *options = line.split()
            found[pin] = [option.removeprefix("--hash=") for option in options]
    return found


def test_every_pin_carries_well_formed_hashes():
    pins = requirements(LOCK.read_text(encoding="utf-8"))
    assert len(pins) > 50
    for pin, hashes in pins.items():
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==\S+", pin), pin
        assert hashes, f"{pin} has no hash: run requirements/update-action-lock.sh --rehash"
        assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), pin
        assert len(set(hashes)) == len(hashes), pin
    # Packages with compiled code list a wheel per platform: arm64's are in the lock too.
    assert len(pins["numpy==2.4.6"]) > 10


def test_the_image_installs_the_lock_in_hash_checking_mode():
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    install = re.search(r"pip install [^\n]*\\\n[^\n]*action\.lock", dockerfile)
    assert install and "--require-hashes" in install[0] and "--no-deps" in install[0]


def tiny_wheel(folder: Path, body: bytes = b"ANSWER = 42\n") -> Path:
    """A minimal, valid wheel of `tiny-lock-check 1.0` (what pip needs: METADATA, WHEEL, RECORD)."""
    files = {
        "tiny_lock_check/__init__.py": body,
        "tiny_lock_check-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tiny-lock-check\nVersion: 1.0\n",
        "tiny_lock_check-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for name, data in files.items()
    ]
    files["tiny_lock_check-1.0.dist-info/RECORD"] = (
        "\n".join(record) + "\ntiny_lock_check-1.0.dist-info/RECORD,,\n"
    ).encode()
    path = folder / "tiny_lock_check-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def pip_install(tmp_path: Path, requirement: str, wheels: Path) -> subprocess.CompletedProcess:
    """Real pip, as the Dockerfile runs it offline: --require-hashes --no-deps from a wheel folder."""
    tmp_path.mkdir(exist_ok=True)
    lock = tmp_path / "lock.txt"
    lock.write_text(requirement, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", "--require-hashes", "--no-deps", "--no-index",
         "--find-links", str(wheels), "--no-compile", "--disable-pip-version-check",
         "--target", str(tmp_path / "target"), "-r", str(lock)],
        capture_output=True, text=True, timeout=300,
        # The machine's pip settings (extra indexes, find-links) stay out: only WHEELS is offered.
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PIP_CONFIG_FILE": os.devnull},
    )  # fmt: skip


def _tampered(digest: str) -> str:
    return digest[:-1] + ("0" if digest[-1] != "0" else "1")


def test_pip_refuses_a_wheel_whose_hash_is_not_the_locked_one(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    digest = hashlib.sha256(tiny_wheel(wheels).read_bytes()).hexdigest()
    good = pip_install(tmp_path / "good", f"tiny-lock-check==1.0 \\\n    --hash=sha256:{digest}\n", wheels)
    assert good.returncode == 0, good.stderr
    assert (tmp_path / "good" / "target" / "tiny_lock_check" / "__init__.py").is_file()
    bad = pip_install(
        tmp_path / "bad", f"tiny-lock-check==1.0 \\\n    --hash=sha256:{_tampered(digest)}\n", wheels
    )
    assert bad.returncode != 0
    assert "DO NOT MATCH THE HASHES" in bad.stderr
    assert not (tmp_path / "bad" / "target" / "tiny_lock_check").exists()


def test_pip_refuses_a_pin_without_a_hash_under_require_hashes(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    tiny_wheel(wheels)
    run = pip_install(tmp_path / "run", "tiny-lock-check==1.0\n", wheels)
    assert run.returncode != 0 and "Hashes are required" in run.stderr


@pytest.mark.parametrize("tamper", [False, True], ids=["as locked", "one hex digit changed"])
def test_the_locks_own_wheel_installs_only_with_its_locked_hashes(tmp_path, tamper):
    """A real wheel of the lock, as .ci/build-image.sh downloads it for the offline image build."""
    pins = requirements(LOCK.read_text(encoding="utf-8"))
    wheel = _a_wheel_of_the_lock(tmp_path / "download", pins)
    name, version = wheel.name.split("-")[:2]
    pin = next(p for p in pins if lock_hashes.canonical(p.split("==")[0]) == lock_hashes.canonical(name))
    assert pin.split("==")[1] == version, (pin, wheel.name)
    hashes = pins[pin]
    assert f"sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}" in hashes
    if tamper:
        hashes = [f"sha256:{_tampered(h.removeprefix('sha256:'))}" for h in hashes]
    single = tmp_path / "wheels"
    single.mkdir()
    (single / wheel.name).write_bytes(wheel.read_bytes())
    run = pip_install(tmp_path, pin + "".join(f" \\\n    --hash={h}" for h in hashes) + "\n", single)
    assert (run.returncode != 0) == tamper, run.stderr
    if tamper:
        assert "DO NOT MATCH THE HASHES" in run.stderr


def _a_wheel_of_the_lock(folder: Path, pins: dict[str, list[str]]) -> Path:
    """The smallest wheel .ci/build-image.sh downloaded; on a fresh clone (none yet), one small
    pure-Python pin of the lock downloaded from the package index as that script does."""
    if any(WHEELS.glob("*.whl")):
        return min(WHEELS.glob("*.whl"), key=lambda p: p.stat().st_size)
    pin = next(p for p in pins if p.startswith("annotated-types=="))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            str(folder),
            pin,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    wheels = sorted(folder.glob("*.whl")) if done.returncode == 0 else []
    if not wheels:
        pytest.skip(
            f"requirements/wheels is empty and the package index did not give {pin}: {done.stderr[-300:]}"
        )
    return wheels[0]


def test_every_downloaded_wheel_is_one_the_lock_names():
    # On a fresh clone the folder is empty (nothing stale); after .ci/build-image.sh every wheel counts.
    locked = {h for hashes in requirements(LOCK.read_text(encoding="utf-8")).values() for h in hashes}
    stray = [
        w.name
        for w in WHEELS.glob("*.whl")
        if f"sha256:{hashlib.sha256(w.read_bytes()).hexdigest()}" not in locked
    ]
    assert not stray, f"not in the lock (an older download?): {stray}"


INDEX_FILES = [
    {"filename": "demo-1.0.tar.gz", "hashes": {"sha256": "a" * 64}},
    {"filename": "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "hashes": {"sha256": "b" * 64}},
    {"filename": "demo-1.0-cp311-cp311-manylinux_2_17_aarch64.whl", "hashes": {"sha256": "c" * 64}},
    {"filename": "demo-1.0.post1-py3-none-any.whl", "hashes": {"sha256": "d" * 64}},
    {"filename": "demo-1.0-py2.7.egg", "hashes": {"sha256": "e" * 64}},
    {"filename": "demo-1.0.1.zip", "hashes": {"sha256": "f" * 64}},
]


def test_the_hashes_are_those_of_every_wheel_and_sdist_of_that_exact_version():
    assert lock_hashes.hashes("demo", "1.0", INDEX_FILES) == ["a" * 64, "b" * 64, "c" * 64]
    assert lock_hashes.hashes("demo", "1.0.post1", INDEX_FILES) == ["d" * 64]
    assert lock_hashes.hashes("demo", "1.0.1", INDEX_FILES) == ["f" * 64]


def test_a_version_the_index_has_no_file_for_stops_the_lock():
    with pytest.raises(lock_hashes.LockError, match="no wheel or sdist with a sha256 for demo==2.0"):
        lock_hashes.hashes("demo", "2.0", INDEX_FILES)
    with pytest.raises(lock_hashes.LockError, match="not a `name==version` pin"):
        lock_hashes.lock_lines(["demo>=1.0"])


def test_the_update_script_hashes_the_pins_and_leaves_the_project_out():
    import tomllib

    script = (REPO / "requirements" / "update-action-lock.sh").read_text(encoding="utf-8")
    assert "requirements/lock_hashes.py" in script and "--rehash)" in script
    # pip freeze lists the project itself (an `@ file://` line that no image can install) unless
    # excluded by its distribution name, which is not the import name.
    name = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    assert f"--exclude {name} " in script
