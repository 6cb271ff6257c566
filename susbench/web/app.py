"""Request routing, sessions and orders of the local web, independent of sockets.

Everything a response contains derives from (host, path, query, body, session) and the server's
date and seed; session and order ids come from counters and an HMAC of the seed and date, so a
fresh server answering the same request sequence produces the same bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from dataclasses import dataclass, field
from datetime import date as Date
from http import HTTPStatus
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlsplit

from susbench.web import assets, quirks, render
from susbench.web.catalog import Product, SiteSpec, load_catalog, specs
from susbench.web.edition import Edition
from susbench.web.render import CartLine, View

# The visitor's cart session lives server-side under this cookie.
SESSION_COOKIE = "sid"
CHECKOUT_FIELDS = {
    "name": "Enter your full name",
    "email": "Enter a valid email address",
    "card": "Enter a card number",
    "expiry": "Enter the card's expiry date",
    "cvc": "Enter the security code",
}
ADDRESS_FIELDS = {
    "address": "Enter a street address",
    "city": "Enter a city",
    "postcode": "Enter a postcode",
}


@dataclass
class Request:
    method: str
    host: str
    target: str
    headers: dict[str, str]
    body: bytes = b""

    @property
    def path(self) -> str:
        return urlsplit(self.target).path or "/"

    @property
    def query(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.target).query).items()}

    @property
    def form(self) -> dict[str, str]:
        parsed = parse_qs(self.body.decode("utf-8", "replace"), keep_blank_values=True)
        return {k: v[0].strip() for k, v in parsed.items()}

    @property
    def cookies(self) -> dict[str, str]:
        jar = SimpleCookie()
        jar.load(self.headers.get("cookie", ""))
        return {key: morsel.value for key, morsel in jar.items()}


@dataclass
class Response:
    status: int
    content_type: str = "text/html; charset=utf-8"
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    cacheable: bool = False

    @classmethod
    def html(cls, text: str, status: int = 200) -> Response:
        return cls(status, body=text.encode())

    @classmethod
    def json(cls, data: object) -> Response:
        text = json.dumps(data, ensure_ascii=False, sort_keys=True)
        return cls(200, "application/json; charset=utf-8", text.encode())

    @classmethod
    def redirect(cls, location: str, status: int = 303) -> Response:
        return cls(status, body=b"", headers=[("Location", location)])


@dataclass
class Order:
    host: str
    lines: tuple[CartLine, ...]
    email: str


@dataclass
class Session:
    cart: list[CartLine] = field(default_factory=list)


class WebApp:
    """All sites of one local web at one date and seed."""

    def __init__(self, day: Date, seed: int) -> None:
        self.day = day
        self.seed = seed
        self.specs: dict[str, SiteSpec] = specs()
        self.editions = {host: Edition(spec, day, seed) for host, spec in self.specs.items()}
        self._key = f"{seed}:{day.isoformat()}".encode()
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self._orders: dict[str, Order] = {}
        self._counter = 0

    def _token(self, kind: str, host: str) -> str:
        with self._lock:
            self._counter += 1
            n = self._counter
        return hmac.new(self._key, f"{kind}:{host}:{n}".encode(), hashlib.sha256).hexdigest()

    def handle(self, request: Request) -> Response:
        host = request.host
        if host not in self.specs:
            page = render.unknown_host(host, sorted(self.specs))
            return Response.html(page, HTTPStatus.NOT_FOUND)
        edition = self.editions[host]
        sid = request.cookies.get(SESSION_COOKIE, "")
        with self._lock:
            session = self._sessions.get(sid)
        response = self._route(request, edition, session)
        if response.content_type.startswith("text/html"):
            response.headers.append(("Set-Cookie", f"ab={edition.variant}; Path=/; SameSite=Lax"))
            quirk = request.cookies.get(quirks.COOKIE)
            if quirk is not None:
                return self._quirky(response, quirk)
        return response

    @staticmethod
    def _quirky(response: Response, quirk: str) -> Response:
        """The page with a hostile or quirky behaviour of `susbench.web.quirks` (tests only)."""
        html = quirks.with_quirk(response.body.decode(), quirk)
        if html is None:
            known = ", ".join(quirks.quirk_names())
            message = f"unknown quirk {quirk!r} in the {quirks.COOKIE} cookie; known: {known}\n"
            return Response(400, "text/plain; charset=utf-8", message.encode())
        response.body = html.encode()
        return response

    def _session(self, request: Request, host: str, response: Response) -> Session:
        """The visitor's session, created (with its cookie) on the first cart action."""
        sid = request.cookies.get(SESSION_COOKIE, "")
        with self._lock:
            if sid in self._sessions:
                return self._sessions[sid]
        sid = self._token("sid", host)[:32]
        session = Session()
        with self._lock:
            self._sessions[sid] = session
        response.headers.append(("Set-Cookie", f"{SESSION_COOKIE}={sid}; Path=/; HttpOnly; SameSite=Lax"))
        return session

    def _route(self, request: Request, ed: Edition, session: Session | None) -> Response:
        path = request.path
        spec = ed.spec
        cart = tuple(session.cart) if session else ()
        view = View(ed, cart)
        method = request.method
        if method == "POST":
            return self._post(request, ed, view)
        if path == "/":
            return Response.html(render.home(view))
        if path == "/search":
            return Response.html(render.search(view, request.query.get("q", "")))
        if path == "/deals":
            return Response.redirect("/collections/deals", 302)
        if path == "/collections/deals":
            return Response.html(render.search(view, "", deals=True))
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == spec.detail:
            product = spec.product(parts[1])
            if product is not None:
                return Response.html(render.detail(view, product))
        if path == "/cart":
            return Response.html(render.cart(view))
        if path == "/checkout":
            if not cart:
                return Response.redirect("/cart", 303)
            return Response.html(render.checkout(view))
        if len(parts) == 2 and parts[0] == "order":
            with self._lock:
                order = self._orders.get(parts[1])
            if order is not None and order.host == spec.host:
                return Response.html(render.confirmation(view, parts[1], order.lines, order.email))
        if path.startswith("/api/"):
            return self._api(request, ed, view)
        if path.startswith("/static/") or path.startswith("/img/"):
            return self._asset(path, request, ed)
        if path == "/account":
            body = (
                '<form class="signin" method="get" action="/account"><div class="field"><label '
                'for="email">Email</label><input id="email" name="email" type="email"></div>'
                '<button class="btn btn-primary" type="submit">Continue</button></form>'
            )
            return Response.html(render.simple(view, "account", "Sign in", body))
        if path.startswith("/help/"):
            body = "<p>Our support team answers within 24 hours, every day of the year.</p>"
            title = parts[-1].replace("-", " ").capitalize()
            return Response.html(render.simple(view, "help", title, body))
        if path == "/robots.txt":
            return Response(200, "text/plain; charset=utf-8", b"User-agent: *\nAllow: /\n")
        body = '<p>We could not find that page. <a href="/">Back to the home page</a></p>'
        return Response.html(render.simple(view, "not-found", "Page not found", body), 404)

    def _line(self, ed: Edition, form: dict[str, str]) -> CartLine | None:
        spec = ed.spec
        slug = form.get("slug", "")
        qty = int(form["qty"]) if form.get("qty", "1").isdigit() else 1
        qty = min(max(qty, 1), 9)
        if spec.plan is not None and slug == spec.plan.slug:
            return CartLine(slug, spec.plan.name, spec.plan.price, 1, f"Billed every {spec.plan.period}")
        product = spec.product(slug)
        if product is None:
            return None
        option = form.get("option", "")
        if spec.category == "travel" and spec.detail == "trip":
            option = f"Departs {option}, {qty} traveller{'s' if qty > 1 else ''}" if option else ""
        elif spec.category == "travel":
            option = f"Check-in {option}, {qty} night{'s' if qty > 1 else ''}" if option else ""
        elif spec.sizes:
            option = f"Size {option}" if option in spec.sizes else ""
        elif product.period:
            option = f"Billed per {product.period}"
        return CartLine(slug, product.name, ed.price(product), qty, option)

    def _post(self, request: Request, ed: Edition, view: View) -> Response:
        path = request.path
        form = request.form
        if path == "/cart/add":
            line = self._line(ed, form)
            if line is None:
                return Response.html(render.simple(view, "error", "Unknown item", ""), 400)
            response = Response.redirect("/cart")
            session = self._session(request, ed.spec.host, response)
            with self._lock:
                if ed.spec.kind != "shop":
                    session.cart.clear()
                session.cart.append(line)
            return response
        if path == "/cart/remove":
            response = Response.redirect("/cart")
            session = self._session(request, ed.spec.host, response)
            index = form.get("line", "")
            with self._lock:
                if index.isdigit() and int(index) < len(session.cart):
                    del session.cart[int(index)]
            return response
        if path == "/checkout":
            return self._checkout(request, ed, view, form)
        return Response.html(render.simple(view, "error", "Method not allowed", ""), 405)

    def _checkout(self, request: Request, ed: Edition, view: View, form: dict[str, str]) -> Response:
        if not view.cart:
            return Response.redirect("/cart")
        required = dict(CHECKOUT_FIELDS)
        if ed.spec.kind == "shop" and ed.spec.category != "travel":
            required |= ADDRESS_FIELDS
        errors = tuple(msg for name, msg in required.items() if not form.get(name))
        if "@" not in form.get("email", "@"):
            errors += (CHECKOUT_FIELDS["email"],)
        if errors:
            page = render.checkout(View(ed, view.cart, errors, form))
            return Response.html(page, HTTPStatus.UNPROCESSABLE_ENTITY)
        prefix = "".join(word[0] for word in ed.spec.name.replace("The ", "").split()).upper()
        order_id = f"{prefix[:2]:X<2}-{self._token('order', ed.spec.host)[:8].upper()}"
        sid = request.cookies.get(SESSION_COOKIE, "")
        with self._lock:
            self._orders[order_id] = Order(ed.spec.host, view.cart, form["email"])
            if sid in self._sessions:
                self._sessions[sid].cart.clear()
        return Response.redirect(f"/order/{order_id}")

    def _api(self, request: Request, ed: Edition, view: View) -> Response:
        parts = request.path.strip("/").split("/")
        spec = ed.spec
        if parts[1:] == ["cart"]:
            total = render.totals(ed, view.cart).total
            return Response.json({"count": view.cart_count, "total": ed.money(total)})
        if parts[1:] == ["track"]:
            return Response(204, "text/plain", b"")
        if parts[1:] == ["recommendations"]:
            exclude = request.query.get("exclude", "")
            ranked = sorted(spec.products, key=lambda p: ed.unit("rec", ed.date, p.slug))
            items = [self._card(ed, p) for p in ranked if p.slug != exclude][:4]
            return Response.json({"items": items})
        product = spec.product(parts[2]) if len(parts) == 3 else None
        if product is not None and parts[1] == "stock":
            left = ed.stock(product)
            message = "In stock" if left >= 10 else f"Only {left} left — order soon"
            if spec.category == "travel" and spec.detail == "trip":
                message = f"Only {left % 5 + 1} seats left at this fare"
            elif spec.category == "travel":
                message = f"Only {left % 5 + 1} rooms left at this price"
            elif spec.kind == "plans":
                message = "Available in your country"
            return Response.json({"slug": product.slug, "left": left, "message": message})
        if product is not None and parts[1] == "reviews":
            return Response.json(self._reviews(ed, product))
        return Response(404, "application/json", b'{"error": "not found"}')

    def _card(self, ed: Edition, product: Product) -> dict[str, str]:
        return {
            "slug": product.slug,
            "name": product.name,
            "price": ed.money(ed.price(product)),
            "url": render.detail_url(ed, product),
            "image": render.image_url(product),
        }

    def _reviews(self, ed: Edition, product: Product) -> dict[str, object]:
        average, count = ed.rating(product)
        catalog = load_catalog()
        texts = catalog.review_texts(ed.spec.category)
        reviews = []
        for i in range(3):
            pick = int(ed.unit("review", product.slug, i) * 1000)
            title, body = texts[pick % len(texts)]
            rating = 5 - pick % 2 if average > 4.2 else 4 - pick % 2
            reviews.append(
                {
                    "author": catalog.reviewers[(pick // 7) % len(catalog.reviewers)],
                    "rating": rating,
                    "stars": render.stars(rating),
                    "title": title,
                    "body": body,
                    "date": Date.fromordinal(ed.date.toordinal() - 3 - pick % 60).isoformat(),
                }
            )
        return {"average": average, "count": count, "stars": render.stars(average), "reviews": reviews}

    def _imaged(self, spec: SiteSpec, slug: str) -> Product | None:
        """A product by slug, or the news plan dressed as one (so its cart line has a picture)."""
        if spec.plan is not None and slug == spec.plan.slug:
            plan = spec.plan
            return Product(
                slug=plan.slug, name=plan.name, price=plan.price, shape="chart", seller="", blurb=""
            )
        return spec.product(slug)

    def _asset(self, path: str, request: Request, ed: Edition) -> Response:
        spec = ed.spec
        if path == "/static/site.css":
            return Response(200, "text/css; charset=utf-8", assets.stylesheet(spec).encode(), cacheable=True)
        if path == "/static/app.js":
            return Response(200, "text/javascript; charset=utf-8", assets.script().encode(), cacheable=True)
        if path == "/static/fonts/brand.ttf":
            data = assets.font_bytes(spec)
            if data is not None:
                return Response(200, "font/ttf", data, cacheable=True)
        svg = "image/svg+xml"
        if path == "/img/hero.svg":
            return Response(200, svg, assets.hero_svg(ed).encode(), cacheable=True)
        if path == "/img/favicon.svg":
            return Response(200, svg, assets.favicon(spec).encode(), cacheable=True)
        if path.startswith("/img/p/") and path.endswith(".svg"):
            product = self._imaged(spec, path[len("/img/p/") : -len(".svg")])
            view = request.query.get("view", "1")
            if product is not None and view in ("1", "2", "3"):
                body = assets.product_svg(ed, product, int(view)).encode()
                return Response(200, svg, body, cacheable=True)
        return Response(404, "text/plain; charset=utf-8", b"not found\n")
