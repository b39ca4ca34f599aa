# The rag-ci GitHub Action image (action.yml: runs.using docker, image Dockerfile).
#
# Layers go from least to most often changed: the pinned dependencies are installed
# from requirements/action.lock before any project file is copied, so a code change
# rebuilds only the last two small layers. Regenerate the lock with
# requirements/update-action-lock.sh after changing dependencies in pyproject.toml.
#
# The runner builds this image on each job and runs it as root (as Docker actions
# must), with the workspace mounted at /github/workspace and the Docker socket at
# /var/run/docker.sock for `target.kind: docker`.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
FROM ${PYTHON_IMAGE}

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DEEPEVAL_TELEMETRY_OPT_OUT=1 \
    DEEPEVAL_DISABLE_DOTENV=1 \
    RAG_CI_IMAGE=1

WORKDIR /opt/rag-ci

# 1. Dependencies, exactly as locked (the extras deepeval, anthropic, gemini, ollama, github, docker).
COPY requirements/action.lock requirements/action.lock
RUN pip install --no-deps -r requirements/action.lock && pip check

# 2. The project itself, without touching the dependencies installed above.
COPY pyproject.toml README.md* ./
COPY rag_ci ./rag_ci
RUN pip install --no-deps . && python -c "import rag_ci.action, github, docker"

COPY entrypoint.py /opt/rag-ci/entrypoint.py
ENTRYPOINT ["python", "/opt/rag-ci/entrypoint.py"]
