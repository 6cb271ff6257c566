"""The apps part without a running app: specs, generated content and its digest, pictures, the
front's TLS and routing in front of a real HTTP server, and the command line's listing."""

from __future__ import annotations

import http.client
import io
import json
import socket
import ssl
import sys
import threading
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image

from susbench.apps import AppError, AppFront, find_spec, load_specs, site_content
from susbench.apps.base import run_command
from susbench.apps.content import ContentDigest
from susbench.apps.pictures import picture
from susbench.apps.serve import check_free
from susbench.apps.spec import AppSpec
from susbench.core.errors import SusbenchError
from susbench.core.models import SiteCategory
from tests.support.cli import run_cli

DAY = date(2026, 12, 7)


def test_every_app_spec_loads_and_names_its_folder() -> None:
    specs = load_specs()
    assert "oscar" in [spec.name for spec in specs]
    oscar = find_spec("oscar")
    assert (oscar.title, oscar.source, oscar.stack, oscar.hosts) == (
        "django-oscar",
        "pypi",
        "python",
        ("oscarshop.test",),
    )
    assert all(spec.category in SiteCategory.__args__ for spec in specs)  # type: ignore[attr-defined]
    hosts = [host for spec in specs for host in spec.hosts]
    assert len(hosts) == len(set(hosts)), "two apps share a hostname"


def test_an_unknown_app_is_named_with_the_known_ones() -> None:
    with pytest.raises(SusbenchError, match=r"app 'nope': no such app; expected one of .*oscar"):
        find_spec("nope")


def test_content_is_a_function_of_date_and_seed() -> None:
    first, again = site_content(DAY, 0), site_content(DAY, 0)
    assert first == again and first.digest() == again.digest()
    assert len(first.products) == 24 and len(first.articles) == 12 and len(first.plans) == 3
    assert len(first.trips) == 6
    assert site_content(DAY, 1).digest() != first.digest()


def test_content_drifts_by_date_in_named_places() -> None:
    today, next_day, next_week = (
        site_content(DAY, 0),
        site_content(date(2026, 12, 8), 0),
        site_content(date(2026, 12, 14), 0),
    )
    daily = next_day.changes_since(today)
    assert daily and all(line.startswith(("product:", "article:", "trip:")) for line in daily)
    # a trip's departure is a fixed number of days ahead, so each day moves it (and its seats left)
    assert {line.split(":")[1] for line in daily if line.startswith("trip:")} == {t.slug for t in today.trips}
    # a day moves stock only; a week moves prices and headlines too
    assert {today.product(p.slug).price for p in today.products} == {
        next_day.product(p.slug).price for p in today.products
    }
    weekly = next_week.changes_since(today)
    assert any(line.startswith("article:") for line in weekly)
    assert any(today.product(p.slug).price != next_week.product(p.slug).price for p in today.products)


def test_a_digest_names_the_items_that_differ() -> None:
    expected = site_content(DAY, 0).digest(("product",))
    edited = dict(expected.items)
    edited["product:cast-iron-skillet"] = edited["product:cast-iron-skillet"].replace("|37.99|", "|1.00|")
    found = ContentDigest.of(edited)
    assert found.sha256 != expected.sha256
    assert expected.differences(found) == [
        f"product:cast-iron-skillet: {expected.items['product:cast-iron-skillet']!r} != "
        f"{edited['product:cast-iron-skillet']!r}"
    ]


def test_pictures_are_deterministic_pngs_that_differ_by_product() -> None:
    first = picture("cast-iron-skillet", "pan")
    assert first == picture("cast-iron-skillet", "pan")
    assert first != picture("enamel-milk-pan", "pan")
    image = Image.open(io.BytesIO(first))
    assert (image.format, image.size) == ("PNG", (600, 600))


def test_a_failed_set_up_command_names_the_app_what_failed_and_its_last_lines(tmp_path: Path) -> None:
    script = "import sys; print('ok'); sys.stderr.write('one\\ntwo\\nthree\\nfour\\n'); sys.exit(3)"
    with pytest.raises(AppError) as failed:
        run_command("pretix", [sys.executable, "-c", script], "migrate", "see its log", timeout_s=60)
    assert str(failed.value) == "pretix: migrate failed: two / three / four; see its log"
    with pytest.raises(AppError, match=r"^ghost: npm install failed: .*No such file"):
        run_command("ghost", [str(tmp_path / "npm")], "npm install", "run make apps", timeout_s=60)
    with pytest.raises(AppError, match=r"^oscar: migrate failed: .*timed out after 0.5 seconds"):
        run_command(
            "oscar", [sys.executable, "-c", "import time; time.sleep(30)"], "migrate", "x", timeout_s=0.5
        )
    printed = run_command(
        "oscar",
        [sys.executable, "-c", "import os; print(os.getcwd(), os.environ['MARK'])"],
        "pwd",
        "x",
        timeout_s=60,
        cwd=tmp_path,
        env={"MARK": "seen"},
    )
    assert printed == f"{tmp_path} seen\n"


def test_a_busy_port_is_named_with_the_app_and_the_fix() -> None:
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as busy:
        port = busy.server_address[1]
        with pytest.raises(
            AppError, match=rf"oscar: cannot listen on 127.0.0.1:{port}: .*; choose another port with --port"
        ):
            check_free("oscar", "127.0.0.1", port)


class _Echo(BaseHTTPRequestHandler):
    """A real HTTP server standing behind the front: it answers what it was sent."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        reply = json.dumps(
            {
                "path": self.path,
                "host": self.headers["Host"],
                "proto": self.headers.get("X-Forwarded-Proto"),
                "body": body.decode(),
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Set-Cookie", "csrftoken=abc; Path=/; Secure")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    do_GET = do_POST


@pytest.fixture
def fronted(tmp_path: Path) -> Iterator[AppFront]:
    backend = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    try:
        with AppFront(
            "echo", ("shop.example.test",), backend.server_address[1], DAY, ca_dir=tmp_path / "ca"
        ) as front:
            yield front
    finally:
        backend.shutdown()
        backend.server_close()


def test_the_front_speaks_tls_from_the_ca_and_passes_host_and_scheme(fronted: AppFront) -> None:
    context = ssl.create_default_context(cafile=str(fronted.ca_cert_path))
    connection = http.client.HTTPSConnection("127.0.0.1", fronted.port, context=context)
    connection.sock = context.wrap_socket(
        socket.create_connection(("127.0.0.1", fronted.port)), server_hostname="shop.example.test"
    )
    connection.request(
        "POST",
        "/basket/add/3/",
        body=b"csrfmiddlewaretoken=t&quantity=1",
        headers={"Host": "shop.example.test"},
    )
    answer = connection.getresponse()
    sent = json.loads(answer.read())
    assert sent == {
        "path": "/basket/add/3/",
        "host": "shop.example.test",
        "proto": "https",
        "body": "csrfmiddlewaretoken=t&quantity=1",
    }
    assert answer.getheader("Set-Cookie") == "csrftoken=abc; Path=/; Secure"
    assert answer.getheader("Date") == "Mon, 07 Dec 2026 12:00:00 GMT"
    assert fronted.connections == 1


def test_the_front_refuses_hosts_it_does_not_serve(fronted: AppFront) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", fronted.port)
    connection.request("GET", "/", headers={"Host": "elsewhere.test"})
    assert connection.getresponse().status == 421
    assert fronted.resolve.as_args() == [f"shop.example.test=127.0.0.1:{fronted.port}"]
    assert fronted.host_resolver_rules == f"MAP shop.example.test 127.0.0.1:{fronted.port}"


def test_apps_list_json_says_what_each_app_is_and_whether_it_is_installed() -> None:
    result = run_cli("apps", "list", "--json")
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert set(rows["oscar"]) >= {
        "title",
        "version",
        "stack",
        "source",
        "licence",
        "category",
        "hosts",
        "installed",
    }
    assert rows["oscar"]["licence"] == "BSD-3-Clause" and isinstance(rows["oscar"]["installed"], bool)
    # four apps or more, from two stacks or more (categories: WordPress and Ghost are both news)
    assert len(rows) >= 4
    assert len({row["stack"] for row in rows.values()}) >= 2


def test_a_spec_refuses_unknown_fields() -> None:
    with pytest.raises(ValueError, match="extra"):
        AppSpec.model_validate({**find_spec("oscar").model_dump(), "colour": "blue"})
