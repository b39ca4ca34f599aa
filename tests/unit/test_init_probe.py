"""What `rag-ci init` reads of an app's code: the routes it declares, none made up (issue 55)."""

from __future__ import annotations

from rag_ci.cli.init_probe import Route, health_path, question_route


def test_a_status_field_is_no_health_route_but_a_django_path_is():
    # before: `{"status": "ok"}` in a handler read as the route /status
    assert health_path(['@app.post("/ask")\ndef ask(q):\n    return {"status": "ok"}\n']) is None
    assert health_path(['urlpatterns = [path("healthz/", views.health)]\n']) == "/healthz"
    assert health_path(['@app.get("/api/ready")\n']) == "/api/ready"


def test_the_question_route_is_the_post_route_whose_name_or_handler_reads_a_question():
    code = (
        '@router.post("/upload")\ndef upload(file):\n    ...\n\n'
        '@router.post("/v1/chat/completions")\nasync def chat(body: ChatRequest):\n    return complete(body.messages)\n'
    )
    assert question_route({"api.py": code}) == Route("/v1/chat/completions", "api.py")
    # a POST route that looks like no question endpoint is none: the user fills it in
    assert question_route({"api.py": '@app.post("/upload")\ndef upload(file):\n    ...\n'}) is None


def test_express_and_aiohttp_routes_and_an_http_server_answering_every_path():
    assert question_route({"index.js": "app.post('/ask', (req, res) => res.json({}))\n"}) == Route(
        "/ask", "index.js"
    )
    # a Python client calling a route declares none
    assert question_route({"client.py": 'httpx.post("/ask", json={"question": q})\n'}) is None
    assert question_route({"srv.py": 'app.router.add_post("/query", handle)\n'}) == Route("/query", "srv.py")
    handler = "class H(BaseHTTPRequestHandler):\n    def do_POST(self):\n        body = json.loads(self.rfile.read())\n"
    assert question_route({"serve.py": handler}) == Route("/", "serve.py")


def test_a_question_word_counts_whole_not_inside_another_word():
    code = (
        '@app.post("/tasks")\ndef tasks(job):\n    ...\n\n@app.post("/storage")\ndef store(blob):\n    ...\n'
    )
    assert question_route({"api.py": code}) is None  # `/tasks` holds `ask`, `/storage` holds `rag`
    assert question_route({"api.py": '@app.post("/rag/invoke")\ndef invoke(x):\n    ...\n'}) == Route(
        "/rag/invoke", "api.py"
    )


def test_an_http_server_route_is_what_do_post_compares_the_request_path_with():
    handler = (
        "class H(BaseHTTPRequestHandler):\n"
        "    def do_POST(self):\n"
        '        index = os.path.join("/data", "index.pkl")\n'
        '        if urlparse(self.path).path != "/ask":\n'
        "            return self.send_error(404)\n"
        "\n\n"
        "    def do_GET(self):\n"
        '        if self.path == "/search-page":\n'
        "            ...\n"
    )
    assert question_route({"serve.py": handler}) == Route("/ask", "serve.py")
