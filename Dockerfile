# The rag-ci image: the GitHub Action (action.yml: runs.using docker) and the CLI.
#
#   docker run --rm -v "$PWD:/src" -w /src IMAGE run --config rag-ci.yml   the CLI (any command, --help, --version)
#   no arguments, inside GitHub Actions                                     the action (rag_ci/__main__.py)
#
# Two stages. `deps` installs requirements/action.lock into rag-ci's own virtual
# environment (/opt/rag-ci/venv), without byte-code caches, test folders or pip; the
# final stage copies that one folder and then the project's source, which is the only
# layer a code change rebuilds (a COPY: seconds). rag-ci's source is found through a
# .pth file, so no pip runs after a code change. Regenerate the lock with
# requirements/update-action-lock.sh after changing dependencies in pyproject.toml.
# The lock carries the sha256 of every file PyPI publishes for each pin: pip checks each file
# it installs against them (hash-checking mode, which hashes in a requirements file turn on by
# themselves; --require-hashes says so, and refuses a lock line that has none), the offline
# wheels of .ci/build-image.sh included.
#
# The user's RAG never runs in rag-ci's environment: inside this image (RAG_CI_IMAGE=1)
# its build steps and commands get a virtual environment of their own, created once per
# job from the base image's python3 (rag_ci/targets/venv.py). PATH holds only the
# `rag-ci` launcher of /opt/rag-ci/bin, so `python` and `pip` in a CI script are the base's.
#
# Offline builds (no PyPI from inside the build): put the lock's wheels in
# requirements/wheels/ and pass --build-arg WHEELS_ONLY=1 (.ci/build-image.sh does both).
# The runner runs the image as root (as Docker actions must), with the workspace at
# /github/workspace and the Docker socket at /var/run/docker.sock for `target.kind: docker`.
# The base image: a literal FROM that Dependabot (docker ecosystem) reads and updates, named
# as a stage; PYTHON_IMAGE names that stage by default, and `--build-arg PYTHON_IMAGE=IMAGE`
# still replaces it (.ci/build-image.sh: a local base). BuildKit skips the unused stage; Docker's
# classic builder still resolves it, so offline it needs an image by that name (build-image.sh tags one).
ARG PYTHON_IMAGE=python-base
FROM python:3.11-slim-bookworm AS python-base

FROM ${PYTHON_IMAGE} AS deps
ARG WHEELS_ONLY=
COPY requirements/ /tmp/requirements/
RUN set -eu; \
    python3 -m venv /opt/rag-ci/venv; \
    venv=/opt/rag-ci/venv; \
    PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install --quiet --no-compile --no-deps --require-hashes \
        ${WHEELS_ONLY:+--no-index --find-links /tmp/requirements/wheels} -r /tmp/requirements/action.lock; \
    "$venv/bin/python" -m pip uninstall --quiet --yes pip setuptools; \
    purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
    echo /opt/rag-ci/src > "$purelib/rag_ci_source.pth"; \
    find "$venv" -depth \( -name __pycache__ -o -name tests -o -name '*.pyc' \) -exec rm -rf {} +; \
    rm -f "$venv"/bin/activate* "$venv"/bin/Activate.ps1 "$venv"/bin/pip*; \
    mkdir -p /opt/rag-ci/bin; \
    printf '#!/bin/sh\nexec /opt/rag-ci/venv/bin/python -m rag_ci.cli "$@"\n' > /opt/rag-ci/bin/rag-ci; \
    chmod 755 /opt/rag-ci/bin/rag-ci

FROM ${PYTHON_IMAGE}
# The image's OCI labels; the release passes the three ARGs (.github/scripts/release.py labels).
ARG RAG_CI_VERSION=dev
ARG RAG_CI_SOURCE=https://github.com/rag-ci/rag-ci
ARG RAG_CI_REVISION=unknown
LABEL org.opencontainers.image.title="rag-ci" \
      org.opencontainers.image.description="Gate pull requests on the quality of a RAG application" \
      org.opencontainers.image.version="${RAG_CI_VERSION}" \
      org.opencontainers.image.source="${RAG_CI_SOURCE}" \
      org.opencontainers.image.revision="${RAG_CI_REVISION}" \
      org.opencontainers.image.licenses="MIT"
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DEEPEVAL_TELEMETRY_OPT_OUT=1 \
    DEEPEVAL_DISABLE_DOTENV=1 \
    RAG_CI_IMAGE=1 \
    PATH=/opt/rag-ci/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY --from=deps /opt/rag-ci /opt/rag-ci
# The only layer a code change rebuilds (.dockerignore lets rag_ci/ through without caches).
COPY rag_ci /opt/rag-ci/src/rag_ci
ENTRYPOINT ["/opt/rag-ci/venv/bin/python", "-m", "rag_ci"]
