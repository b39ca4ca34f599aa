"""Fakes of everything outside the repository that .github/workflows/release.yml touches, for
the act rehearsal (tests/e2e/test_release_act.py): a folder per `uses:` action (actions/),
PATH shims for skopeo, docker and gh (bin/), and the public state they act on, kept in a folder
(fake_state.py): a fake GHCR, a fake PyPI, a fake GitHub (a bare repository as origin, its
releases, attestations and pull requests) and the run's artifacts.

Standard library only: the shims run under whatever python3 a job's PATH holds.
"""
