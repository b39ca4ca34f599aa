"""FakeGhcr: ghcr.io, as reached through an HTTPS proxy (HTTPS_PROXY), for tests only.

The workflow's own pull check (.github/scripts/pull_anonymously.py) asks https://ghcr.io for a
manifest with no credentials; with HTTPS_PROXY pointing here and SSL_CERT_FILE holding this
fake's throwaway certificate authority, it reaches this server over real TLS, unchanged. The
registry answers from the fake state's registry folder (fake_state.Registry) with GHCR's
anonymous token flow: a token for anyone, the manifest refused (403 DENIED) while the package
is private. CONNECT to any other host is refused (403): nothing leaves the machine that way.
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

from fakes.release.fake_state import FakeError, Registry

HOST = "ghcr.io"
SYSTEM_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a certificate for ghcr.io it signed: (bundle, cert, key); the bundle is
    the system's CAs plus this one, so other TLS clients of the run are unaffected."""
    folder.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=rag-ci rehearsal fake CA",
    )
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ghcr.key",
        "-out",
        "ghcr.csr",
        "-subj",
        f"/CN={HOST}",
    )
    (folder / "ext.cnf").write_text(f"subjectAltName=DNS:{HOST}\nbasicConstraints=CA:FALSE\n")
    openssl(
        "x509",
        "-req",
        "-in",
        "ghcr.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "ghcr.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    )
    bundle = folder / "bundle.pem"
    shutil.copyfile(SYSTEM_BUNDLE, bundle) if SYSTEM_BUNDLE.is_file() else bundle.write_text("")
    with bundle.open("a") as stream:
        stream.write((folder / "ca.pem").read_text())
    return bundle, folder / "ghcr.pem", folder / "ghcr.key"


class FakeGhcr:
    def __init__(self, state: Path, certificates: Path) -> None:
        self.bundle, cert, key = make_certificates(certificates)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.requests: list[tuple[str, int]] = []  # (path, status) of what reached the registry
        fake = self

        class Registry_(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                status, body, headers = fake.answer(
                    url.path, self.headers.get("Authorization", ""), self.headers
                )
                fake.requests.append((url.path, status))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Proxy(BaseHTTPRequestHandler):
            def log_message(self, *_args) -> None:
                pass

            def do_CONNECT(self) -> None:
                host, _, port = self.path.partition(":")
                if host != HOST or port != "443":
                    self.send_error(403, f"the rehearsal's network reaches {HOST} only")
                    return
                self.send_response(200, "Connection established")
                self.end_headers()
                try:
                    with fake.context.wrap_socket(self.connection, server_side=True) as tls:
                        Registry_(tls, self.client_address, self.server)
                except (ssl.SSLError, OSError):
                    pass  # the client hung up: its own error says more than ours would
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
        self.proxy = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.state = state

    def answer(self, path: str, authorization: str, _headers) -> tuple[int, bytes, dict[str, str]]:
        if path == "/token":
            return 200, b'{"token": "anonymous"}', {"Content-Type": "application/json"}
        parts = path.split("/")
        if len(parts) < 5 or parts[1] != "v2" or parts[-2] != "manifests":
            return 404, b'{"errors":[{"code":"NAME_UNKNOWN"}]}', {}
        name, reference = "/".join(parts[2:-2]), parts[-1]
        if authorization != "Bearer anonymous":
            challenge = f'Bearer realm="https://{HOST}/token",service="{HOST}",scope="repository:{name}:pull"'
            return 401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', {"WWW-Authenticate": challenge}
        registry = Registry(self.state, f"{HOST}/{name}")
        if registry.exists() and registry.private():
            return 403, b'{"errors":[{"code":"DENIED"}]}', {}
        try:
            body = registry.blob(registry.resolve(reference))
        except FakeError:
            return 404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}', {}
        kind = json.loads(body).get("mediaType", "application/vnd.oci.image.index.v1+json")
        return 200, body, {"Content-Type": kind, "Docker-Content-Digest": reference}

    def __enter__(self) -> FakeGhcr:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.server.shutdown()
        self.server.server_close()
