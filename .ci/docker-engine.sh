#!/usr/bin/env bash
# Prepare a Docker engine and a local base image for the docker e2e test.
#
# Idempotent: reuses a reachable engine, an existing image and a cached root file
# system. It never fails the CI run: when no engine can start it says why, writes
# `status=unavailable` to the status file and exits 0; the docker tests read that
# file and skip with the reason.
#
# Why a home-made base image: no container registry is reachable on the CI
# machines, but the Debian mirror is. debootstrap builds a minimal root file
# system with python3 + python3-numpy + python3-venv that `docker import` turns into
# an image: the stand-in for python:3.11-slim-bookworm that rag-ci's own Dockerfile
# builds FROM (python3-venv: rag-ci's image keeps its own packages in one virtual
# environment and the user's RAG in another).
#
# Environment (all optional):
#   RAG_CI_DOCKER_STATUS  status file the tests read (default /tmp/rag-ci/docker-engine.status)
#   RAG_CI_CACHE_DIR      where the rootfs tarball is cached (default /var/cache/rag-ci)
#   RAG_CI_LOG_DIR        where dockerd logs go (default /var/log/rag-ci)
#   RAG_CI_DOCKER_STORAGE_DRIVER  overlay2 or vfs, instead of probing (see storage_driver)
set -uo pipefail

STATUS_FILE=${RAG_CI_DOCKER_STATUS:-/tmp/rag-ci/docker-engine.status}
CACHE_DIR=${RAG_CI_CACHE_DIR:-/var/cache/rag-ci}
LOG_DIR=${RAG_CI_LOG_DIR:-/var/log/rag-ci}
DOCKERD_LOG="$LOG_DIR/dockerd.log"
DOCKERD_PIDFILE=/var/run/rag-ci-dockerd.pid
DATA_ROOT=/var/lib/docker  # dockerd's default, where the storage driver keeps its layers
SUITE=bookworm
# The tag and the tarball name change with the package list, so an older cache is not reused.
BASE_IMAGE="rag-ci-base:${SUITE}-python-venv"
ROOTFS_TAR="$CACHE_DIR/${SUITE}-python-venv-rootfs.tar"
# python:3.12-slim is only a fallback for machines that reach Docker Hub but have no Debian mirror.
REGISTRY_FALLBACK_IMAGE=python:3.12-slim

say() { echo "docker-engine: $*" >&2; }

write_status() {  # key=value lines, read by tests/e2e/test_docker_target.py
    mkdir -p "$(dirname "$STATUS_FILE")"
    printf '%s\n' "$@" > "$STATUS_FILE.tmp" && mv "$STATUS_FILE.tmp" "$STATUS_FILE"
}

unavailable() {
    write_status "status=unavailable" "reason=$*"
    say "UNAVAILABLE: $* (docker tests will be skipped)"
    exit 0
}

engine_up() { docker info >/dev/null 2>&1; }

start_engine() {
    engine_up && { say "engine already reachable"; return 0; }
    [ "$(id -u)" = 0 ] || unavailable "no Docker engine is reachable and we are not root, so none can be started"
    if ! command -v dockerd >/dev/null 2>&1; then
        say "installing docker.io"
        export DEBIAN_FRONTEND=noninteractive
        { apt-get update -q && apt-get install -y -q docker.io; } >"$LOG_DIR/apt-docker.log" 2>&1 \
            || unavailable "apt-get install docker.io failed: $(tail -n 3 "$LOG_DIR/apt-docker.log" | tr '\n' ' ')"
    fi
    command -v docker >/dev/null 2>&1 || unavailable "no docker CLI on PATH"
    # A dockerd still starting or shutting down holds the pid file: wait for it either way.
    local existing
    existing=$(cat /var/run/docker.pid 2>/dev/null || true)
    if [ -n "$existing" ] && kill -0 "$existing" 2>/dev/null; then
        say "a dockerd (pid $existing) is already there: waiting for it to answer or exit"
        for _ in $(seq 1 30); do
            engine_up && { say "engine up"; return 0; }
            kill -0 "$existing" 2>/dev/null || break
            sleep 1
        done
        kill -0 "$existing" 2>/dev/null && unavailable "dockerd (pid $existing) is running but does not answer; see $DOCKERD_LOG"
    fi
    local driver
    driver=$(storage_driver)
    launch_dockerd "$driver" && return 0
    if [ "$driver" != vfs ]; then
        say "dockerd did not come up with $driver; falling back to vfs"
        launch_dockerd vfs && return 0
    fi
    unavailable "dockerd did not come up: $(tail -n 5 "$DOCKERD_LOG" | tr '\n' ' ')"
}

# overlay2 (copy-on-write: committing a layer stores only the files it changed) when the
# kernel mounts overlayfs on the data root's file system; vfs (every layer and every
# container start is a full copy of the file system: a one-file code change took a minute)
# when it does not, e.g. a data root that is itself on overlayfs. The probe is the check
# dockerd's overlay2 makes, done first so that a refusal costs no start-up time.
# RAG_CI_DOCKER_STORAGE_DRIVER forces one.
storage_driver() {
    if [ -n "${RAG_CI_DOCKER_STORAGE_DRIVER:-}" ]; then echo "$RAG_CI_DOCKER_STORAGE_DRIVER"; return; fi
    local probe
    mkdir -p "$DATA_ROOT" && probe=$(mktemp -d "$DATA_ROOT/rag-ci-overlay-probe.XXXXXX") || { echo vfs; return; }
    mkdir -p "$probe/lower" "$probe/upper" "$probe/work" "$probe/merged"
    if mount -t overlay overlay -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" "$probe/merged" 2>/dev/null; then
        umount "$probe/merged"
        echo overlay2
    else
        echo vfs
    fi
    rm -rf "$probe"
}

launch_dockerd() {  # DRIVER: 0 when the engine answers, 1 when dockerd exited or never answered
    # A dockerd killed earlier leaves its pid file behind and the next one refuses to start.
    rm -f /var/run/docker.pid
    say "starting dockerd ($1 storage driver), log: $DOCKERD_LOG"
    # setsid: the daemon must outlive this script (and .ci/run) so later runs reuse its image cache.
    setsid nohup dockerd --storage-driver="$1" --pidfile /var/run/docker.pid >>"$DOCKERD_LOG" 2>&1 </dev/null &
    echo $! >"$DOCKERD_PIDFILE"
    for _ in $(seq 1 60); do
        engine_up && { say "engine up ($1)"; return 0; }
        kill -0 "$(cat "$DOCKERD_PIDFILE")" 2>/dev/null || return 1
        sleep 1
    done
    kill "$(cat "$DOCKERD_PIDFILE")" 2>/dev/null
    for _ in $(seq 1 15); do kill -0 "$(cat "$DOCKERD_PIDFILE")" 2>/dev/null || break; sleep 1; done
    return 1
}

# The first Debian archive URI in the apt sources (one-line or deb822 format), not the security one.
debian_mirror() {
    local files
    files=$(ls /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null)
    [ -n "$files" ] || return 1
    # shellcheck disable=SC2086
    awk '
        /^deb[ \t]/ { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { print $i; break } }
        /^URIs:/    { for (i = 2; i <= NF; i++) print $i }
    ' $files | grep -E '/debian/?$' | grep -v -- '-security' | head -n 1
}

make_rootfs_tarball() {
    local mirror rootfs
    mirror=$(debian_mirror) || true
    [ -n "$mirror" ] || return 1
    if ! command -v debootstrap >/dev/null 2>&1; then
        say "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >"$LOG_DIR/apt-debootstrap.log" 2>&1 || return 1
    fi
    rootfs=$(mktemp -d /tmp/rag-ci-rootfs.XXXXXX)
    say "debootstrap $SUITE from $mirror (about a minute; cached afterwards in $ROOTFS_TAR)"
    if ! debootstrap --variant=minbase --include=python3,python3-numpy,python3-venv,ca-certificates "$SUITE" "$rootfs" "$mirror" \
            >"$LOG_DIR/debootstrap.log" 2>&1; then
        say "debootstrap failed: $(tail -n 3 "$LOG_DIR/debootstrap.log" | tr '\n' ' ')"
        rm -rf "$rootfs"
        return 1
    fi
    # Keep the image small: the vfs driver copies the whole root file system per layer.
    rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc \
        "$rootfs"/usr/share/man "$rootfs"/usr/share/info "$rootfs"/usr/share/locale
    chmod 755 "$rootfs"  # mktemp -d made it 0700: a non-root USER could not even reach /usr/bin
    mkdir -p "$CACHE_DIR"
    tar -C "$rootfs" -cf "$ROOTFS_TAR.tmp" . && mv "$ROOTFS_TAR.tmp" "$ROOTFS_TAR"
    local rc=$?
    rm -rf "$rootfs"
    return $rc
}

prepare_base_image() {
    if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
        say "base image $BASE_IMAGE present"; echo "$BASE_IMAGE"; return 0
    fi
    if [ -s "$ROOTFS_TAR" ] || make_rootfs_tarball; then
        say "importing $ROOTFS_TAR as $BASE_IMAGE"
        if docker import \
                --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
                --change 'ENV LANG=C.UTF-8' \
                --change 'CMD ["python3"]' \
                "$ROOTFS_TAR" "$BASE_IMAGE" >/dev/null; then
            echo "$BASE_IMAGE"; return 0
        fi
        say "docker import failed; dropping the cached tarball"
        rm -f "$ROOTFS_TAR"
    fi
    if docker pull -q "$REGISTRY_FALLBACK_IMAGE" >/dev/null 2>&1; then
        say "no Debian mirror/debootstrap; using $REGISTRY_FALLBACK_IMAGE from the registry"
        echo "$REGISTRY_FALLBACK_IMAGE"; return 0
    fi
    return 1
}

main() {
    mkdir -p "$LOG_DIR" "$(dirname "$STATUS_FILE")"
    local started base
    started=$(date +%s)
    start_engine
    base=$(prepare_base_image) || unavailable "engine is up but no base image could be made (no Debian mirror for debootstrap, no registry)"
    write_status "status=ready" "base_image=$base" "docker_host=${DOCKER_HOST:-unix:///var/run/docker.sock}" \
        "storage_driver=$(docker info -f '{{.Driver}}' 2>/dev/null)"
    say "ready in $(( $(date +%s) - started ))s: base image $base, storage driver $(docker info -f '{{.Driver}}' 2>/dev/null)"
}

# Sourced (tests), only the functions are defined.
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
