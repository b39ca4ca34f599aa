"""A fake `docker` CLI (an outer-edge fake): `fake_docker_cli.install(folder)` writes a `docker`
that runs this file, for the tests to put first on PATH.

Only `docker buildx ...` is answered. FAKE_BUILDX chooses the machine:
  absent   (default) `docker buildx version` fails like a CLI without the plugin
  present  `buildx version` answers; `buildx build` appends its argv (JSON) to
           FAKE_BUILDX_LOG, prints BuildKit-style progress and writes --iidfile:
           with FAKE_BUILDX_ENGINE=1 it really builds, through the Docker SDK's classic
           builder on the engine (labels, build args, stage and tag taken from the argv),
           otherwise it writes a made-up id. FAKE_BUILDX_FAIL=1 makes the build fail.
"""

import json
import os
import sys


def build(argv):
    options, context = {"--build-arg": [], "--label": []}, argv[-1]
    i = 0
    while i < len(argv) - 1:
        flag = argv[i]
        if flag in ("--load",):
            i += 1
            continue
        value = argv[i + 1]
        if flag in options and isinstance(options[flag], list):
            options[flag].append(value)
        else:
            options[flag] = value
        i += 2
    for n in range(1, 4):
        print(f"#{n} [internal] load build definition from Dockerfile", flush=True)
        print(f"#{n} DONE 0.{n}s", flush=True)
    if os.environ.get("FAKE_BUILDX_FAIL"):
        print(
            "#4 [2/2] RUN --mount=type=cache,target=/root/.cache pip install -r requirements.txt", flush=True
        )
        print(
            '#4 ERROR: process "/bin/sh -c pip install" did not complete successfully: exit code: 1',
            flush=True,
        )
        return 1
    if os.environ.get("FAKE_BUILDX_ENGINE"):
        import docker

        client = docker.from_env()
        dockerfile = os.path.relpath(options["-f"], context)
        image, _ = client.images.build(
            path=context,
            dockerfile=dockerfile,
            tag=options["-t"],
            target=options.get("--target"),
            rm=True,
            forcerm=True,
            buildargs=dict(a.split("=", 1) for a in options["--build-arg"]) or None,
            labels=dict(a.split("=", 1) for a in options["--label"]),
        )
        image_id = image.id
    else:
        image_id = "sha256:" + "f" * 64
    with open(options["--iidfile"], "w") as handle:
        handle.write(image_id)
    print("#9 exporting to docker image format", flush=True)
    print("#9 DONE 0.5s", flush=True)
    return 0


def main():
    args = sys.argv[1:]
    if args[:1] != ["buildx"]:
        print(f"fake docker CLI: only `docker buildx` is faked, not {args[:1]}", file=sys.stderr)
        return 2
    if os.environ.get("FAKE_BUILDX", "absent") != "present":
        print("docker: 'buildx' is not a docker command.\nSee 'docker --help'", file=sys.stderr)
        return 1
    if args[1:2] == ["version"]:
        print("github.com/docker/buildx v0.12.1 fake")
        return 0
    if args[1:2] == ["build"]:
        if os.environ.get("FAKE_BUILDX_LOG"):
            with open(os.environ["FAKE_BUILDX_LOG"], "a") as log:
                log.write(json.dumps(args) + "\n")
        return build(args[2:])
    return 2


def install(folder):
    """Write `folder/docker`, running this fake with the current interpreter; return the folder."""
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "docker"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} {Path(__file__).resolve()} "$@"\n')
    script.chmod(0o755)
    return folder


if __name__ == "__main__":
    sys.exit(main())
