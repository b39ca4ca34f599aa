"""A fake Docker engine behind the Docker SDK's client surface (an outer-edge fake).

`FakeDockerClient` stands in for `docker.DockerClient` in the docker target's tests: the
image list, a classic build (`api.build`, scripted by `build_output`), and containers whose
process is a real HTTP server on 127.0.0.1 (a thread), so the HttpTarget the docker target
delegates to is exercised for real; killing the container stops that server.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from docker.errors import NotFound


class FakeImage:
    def __init__(self, image_id: str, labels: dict[str, str]):
        self.id, self.short_id, self.labels = image_id, image_id[:19], labels


class FakeContainer:
    """A container whose process is an HTTP server thread. `behaviour` scripts it:
    healthy (default), "never_healthy", "exit_at_start", "dies_while_loading"."""

    def __init__(self, client: FakeDockerClient, name: str, kwargs: dict):
        self.client, self.name, self.kwargs = client, name, kwargs
        self.labels = kwargs.get("labels", {})
        self.env = kwargs.get("environment", {})
        self.status, self.exit_code = "created", None
        self.log_lines: list[str] = []
        self.server: ThreadingHTTPServer | None = None
        self.starts = 0
        self.attrs: dict = {}

    # SDK surface
    def reload(self) -> None:
        if self.name not in self.client.containers.by_name:
            raise NotFound("gone")

    def start(self) -> None:
        self.starts += 1
        self.log_lines.append(f"server starting (start #{self.starts}), key={self.env.get('API_KEY', '')}")
        if self.client.behaviour == "exit_at_start":
            self.log_lines.append("Traceback: ImportError: no module named numpy")
            self.status, self.exit_code = "exited", 1
            # What docker reports for an exited container: no published port, no address.
            self.attrs = {
                "NetworkSettings": {"Networks": {"bridge": {"IPAddress": ""}}, "Ports": {}},
                "State": {"ExitCode": 1},
            }
            return
        network = self.kwargs.get("network")
        port = self.client.network_port if network else 0  # a published port is random, like docker's
        self.server = _serve(self, port)
        self.status, self.exit_code = "running", None
        bound = str(self.server.server_address[1])
        if network:
            self.attrs = {"NetworkSettings": {"Networks": {network: {"IPAddress": "127.0.0.1"}}, "Ports": {}}}
        else:
            self.attrs = {
                "NetworkSettings": {
                    "Networks": {"bridge": {"IPAddress": "172.17.0.9"}},
                    "Ports": {"8000/tcp": [{"HostIp": "127.0.0.1", "HostPort": bound}]},
                }
            }
        self.attrs["State"] = {"ExitCode": self.exit_code}
        if self.client.behaviour == "dies_while_loading":
            self.log_lines.append("loading the index...")
            threading.Timer(0.3, self.die, args=(3,)).start()

    def logs(self, stdout=True, stderr=True, tail=50) -> bytes:
        return ("\n".join(self.log_lines[-tail:]) + "\n").encode()

    def remove(self, force: bool = False) -> None:
        self.die(137)
        self.client.containers.by_name.pop(self.name, None)
        self.client.removed.append(self.name)

    # test controls
    def die(self, code: int) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        if self.status == "running":
            self.log_lines.append(f"killed, exit {code}")
            self.status, self.exit_code = "exited", code
            self.attrs.setdefault("State", {})["ExitCode"] = code


def _serve(container: FakeContainer, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def reply(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            healthy = container.client.behaviour not in ("never_healthy", "dies_while_loading")
            self.reply(200 if healthy else 503, {"status": "ok" if healthy else "loading"})

        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            container.log_lines.append(f"answering {request['id']}")
            if "echo the key" in request["question"]:
                self.reply(500, {"error": f"bad key {container.env.get('API_KEY')}"})
            elif "crash" in request["question"]:
                container.die(137)  # the process dies before it answers: the connection just closes
                self.close_connection = True
            else:
                self.reply(200, {"answer": "10 ms", "contexts": [{"text": "10 ms", "doc_id": "a"}]})

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server


class FakeContainers:
    def __init__(self, client: FakeDockerClient):
        self.client = client
        self.by_name: dict[str, FakeContainer] = {}
        self.run_calls: list[dict] = []
        self.me: dict | None = None  # attrs of the container rag-ci runs in, when the engine knows it

    def get(self, name: str):
        if self.me is not None and name == "ci-job-1234":
            me = FakeContainer(self.client, name, {})
            me.attrs = self.me
            return me
        raise NotFound(f"No such container: {name}")

    def run(self, image: str, **kwargs) -> FakeContainer:
        self.client.creating.set()
        if self.client.run_gate is not None:  # the test says when the engine has created it
            self.client.run_gate.wait(60)
        self.run_calls.append({"image": image, **kwargs})
        container = FakeContainer(self.client, kwargs["name"], kwargs)
        self.by_name[container.name] = container
        container.start()
        return container

    def list(self, all: bool = False, filters: dict | None = None) -> list[FakeContainer]:
        key, _, value = filters["label"].partition("=")
        found = [c for c in self.by_name.values() if c.labels.get(key) == value]
        self.client.listed.set()  # after the listing: what is created from now on was not in it
        return found


class FakeImages:
    def __init__(self):
        self.images: list[FakeImage] = []
        self.named: dict[str, FakeImage] = {}  # images the engine has by name (base images)

    def get(self, name: str) -> FakeImage:
        if name not in self.named:
            raise NotFound(f"No such image: {name}")
        return self.named[name]

    def list(self, filters: dict) -> list[FakeImage]:
        wanted = dict(item.split("=", 1) for item in filters["label"])
        return [i for i in self.images if all(i.labels.get(k) == v for k, v in wanted.items())]


class FakeApi:
    def __init__(self, client: FakeDockerClient):
        self.client = client
        self.build_calls: list[dict] = []

    def build(self, **kwargs):
        self.build_calls.append(kwargs)
        yield from self.client.build_output
        if not any("error" in chunk for chunk in self.client.build_output):
            image_id = f"sha256:{len(self.build_calls):064d}"
            self.client.images.images.append(FakeImage(image_id, kwargs["labels"]))
            yield {"aux": {"ID": image_id}}


class FakeDockerClient:
    def __init__(
        self, behaviour: str = "healthy", network_port: int = 0, run_gate: threading.Event | None = None
    ):
        self.behaviour, self.network_port, self.run_gate = behaviour, network_port, run_gate
        self.creating = threading.Event()  # set when containers.run is called
        self.listed = threading.Event()  # set when containers are listed (a clean-up's sweep)
        self.images = FakeImages()
        self.containers = FakeContainers(self)
        self.api = FakeApi(self)
        self.removed: list[str] = []
        self.build_output = [
            {"stream": "Step 1/2 : FROM base\n"},
            {"stream": " ---> abc\n"},
            {"stream": "Step 2/2 : COPY . /app\n"},
        ]

    def ping(self) -> bool:
        return True
