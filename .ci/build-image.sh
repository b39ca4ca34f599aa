#!/usr/bin/env bash
# Build rag-ci's own image from the Dockerfile, offline-capable, for tests/e2e/test_image.py.
#
#   bash .ci/build-image.sh [TAG]        (default rag-ci:dev)
#
# The base is the one .ci/docker-engine.sh made (its status file names it; no registry
# is reachable on the CI machines). The lock's wheels are downloaded on the host, whose
# pip reaches PyPI (or its mirror), into requirements/wheels/, and the build installs
# from there only (WHEELS_ONLY=1): a container's network may not reach PyPI.
# The lock's hashes are checked twice: by `pip download` here, and by the build's
# `pip install --require-hashes` on the downloaded files (they are PyPI's, so they match).
# PIP: the pip to download with (default `pip` on PATH; any pip >= 22 will do).
# Prints `build_seconds=N` last. Exit 0 built, 3 no engine/base (the test skips), else failed.
set -euo pipefail
cd "$(dirname "$0")/.."
TAG=${1:-rag-ci:dev}
STATUS_FILE=${RAG_CI_DOCKER_STATUS:-/tmp/rag-ci/docker-engine.status}

base=$(sed -n 's/^base_image=//p' "$STATUS_FILE" 2>/dev/null || true)
if [ -z "$base" ] || ! docker image inspect "$base" >/dev/null 2>&1; then
    echo "build-image: no base image (run .ci/docker-engine.sh; status: $(cat "$STATUS_FILE" 2>/dev/null | tr '\n' ' '))" >&2
    exit 3
fi
# The base's Python decides which wheels fit (cp311 on bookworm, whatever the host runs);
# asked once per base image (starting a container copies its whole file system under vfs).
base_id=$(docker image inspect -f '{{.Id}}' "$base")
pyver_cache=requirements/wheels/.python-of-base
mkdir -p requirements/wheels
pyver=$(sed -n "s|^$base_id ||p" "$pyver_cache" 2>/dev/null || true)
if [ -z "$pyver" ]; then
    pyver=$(docker run --rm --entrypoint python3 "$base" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
    echo "$base_id $pyver" > "$pyver_cache"
fi
arch=$(docker image inspect -f '{{.Architecture}}' "$base")
case "$arch" in amd64) machine=x86_64 ;; arm64) machine=aarch64 ;; *) machine=$arch ;; esac
started=$(date +%s)
stamp=requirements/wheels/.downloaded-for
want="$(sha256sum requirements/action.lock | cut -c1-16) cp$pyver $machine"
[ "$(cat "$stamp" 2>/dev/null)" = "$want" ] || "${PIP:-pip}" download --quiet --no-deps --only-binary=:all: --dest requirements/wheels \
    --python-version "$pyver" --implementation cp --abi "cp$pyver" --abi abi3 --abi none \
    --platform "manylinux_2_36_$machine" --platform "manylinux_2_28_$machine" --platform "manylinux_2_17_$machine" \
    --platform "manylinux2014_$machine" --platform "manylinux_2_5_$machine" --platform linux_"$machine" --platform any \
    -r requirements/action.lock 2> >(grep -v "is ignored: it is neither" >&2) && echo "$want" > "$stamp"
echo "build-image: wheels ready in $(( $(date +%s) - started ))s" >&2
started=$(date +%s)
# The Dockerfile's literal `FROM <image> AS python-base` (for Dependabot) is a stage the build
# does not use when PYTHON_IMAGE names another base, but Docker's classic builder (no buildx
# here) still resolves every stage, and no registry is reachable: the local base stands in
# under that name, only when nothing by that name is present.
literal=$(sed -n 's/^FROM \([^ ]*\) AS python-base$/\1/p' Dockerfile)
if [ -n "$literal" ] && ! docker image inspect "$literal" >/dev/null 2>&1; then
    docker tag "$base" "$literal"
fi
docker build --quiet --build-arg PYTHON_IMAGE="$base" --build-arg WHEELS_ONLY=1 -t "$TAG" . >&2
echo "build_seconds=$(( $(date +%s) - started ))"
