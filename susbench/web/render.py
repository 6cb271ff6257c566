"""The one template engine behind every site: the shared page anatomy of docs/reference/web.md.

Pages are built from small functions returning HTML strings; all text is escaped here. Drift
(renamed classes, the moved search form) is applied through the `Edition`, never per site.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from html import escape
from urllib.parse import quote

from susbench.web.catalog import Product
from susbench.web.edition import Edition

ASSET_VERSION = "3"


@dataclass(frozen=True)
class CartLine:
    """One line of a cart: a product (or the news plan), quantity and chosen option."""

    slug: str
    name: str
    unit_price: float
    qty: int
    option: str = ""

    @property
    def total(self) -> float:
        return round(self.unit_price * self.qty, 2)


@dataclass(frozen=True)
class Totals:
    subtotal: float
    fees: tuple[tuple[str, float], ...]
    total: float


@dataclass(frozen=True)
class View:
    """What a page needs besides the edition: the visitor's cart and form state."""

    edition: Edition
    cart: tuple[CartLine, ...] = ()
    errors: tuple[str, ...] = ()
    form: dict[str, str] = field(default_factory=dict)

    @property
    def cart_count(self) -> int:
        return sum(line.qty for line in self.cart)


def e(text: object) -> str:
    return escape(str(text), quote=True)


def detail_url(edition: Edition, product: Product) -> str:
    return f"/{edition.spec.detail}/{product.slug}"


def image_url(product: Product, view: int = 1) -> str:
    return f"/img/p/{product.slug}.svg" if view == 1 else f"/img/p/{product.slug}.svg?view={view}"


def totals(edition: Edition, lines: tuple[CartLine, ...]) -> Totals:
    """Subtotal plus the site's fees (delivery, service, taxes) as its category charges them."""
    subtotal = round(sum(line.total for line in lines), 2)
    fees: list[tuple[str, float]] = []
    category = edition.spec.category
    if lines and category == "food_ordering":
        fees = [("Delivery fee", 2.99), ("Service fee", round(subtotal * 0.05, 2))]
    elif lines and category == "travel":
        fees = [("Taxes and charges", round(subtotal * 0.12, 2))]
    elif lines and category in ("marketplace", "electronics", "fashion", "groceries"):
        fees = [("Shipping", 0.0 if subtotal >= 35 else 4.99)]
    return Totals(subtotal, tuple(fees), round(subtotal + sum(fee for _, fee in fees), 2))


def search_form(edition: Edition, query: str = "") -> str:
    placeholders = {
        "travel": "Where are you going?",
        "news": "Search articles",
        "food_ordering": "Search the menu",
    }
    placeholder = placeholders.get(edition.spec.category, f"Search {edition.spec.name}")
    return (
        '<form class="search" role="search" method="get" action="/search">'
        f'<label class="visually-hidden" for="q">Search</label>'
        f'<input id="q" type="search" name="q" value="{e(query)}" placeholder="{e(placeholder)}" '
        'autocomplete="off">'
        '<button type="submit" class="search-btn" aria-label="Search">'
        '<svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"><circle cx="10" cy="10" '
        'r="7" fill="none" stroke="currentColor" stroke-width="2.5"/><path d="M15 15l6 6" '
        'stroke="currentColor" stroke-width="2.5" stroke-linecap="round"/></svg></button></form>'
    )


def logo_mark(edition: Edition) -> str:
    colors = edition.spec.colors
    initial = e(edition.spec.name.replace("The ", "")[0])
    return (
        '<svg class="logo-mark" viewBox="0 0 32 32" width="32" height="32" aria-hidden="true">'
        f'<rect width="32" height="32" rx="8" fill="{colors.primary}"/>'
        f'<text x="16" y="22" text-anchor="middle" font-size="18" font-weight="700" '
        f'fill="{colors.light}" font-family="inherit">{initial}</text></svg>'
    )


def layout(view: View, page: str, title: str, main: str, query: str = "") -> str:
    """The page frame: promo bar, header (logo, search, nav, cart), main, footer."""
    ed = view.edition
    spec = ed.spec
    header_search = "" if ed.search_in_main else search_form(ed, query)
    if ed.search_in_main and page not in ("home", "search"):
        main = f'<div class="search-strip">{search_form(ed, query)}</div>{main}'
    nav = "".join(f'<li><a href="/search?q={quote(item.lower())}">{e(item)}</a></li>' for item in spec.nav)
    count = view.cart_count
    cart_label = "Basket" if spec.category == "fashion" else "Cart"
    if spec.kind != "shop":
        cart_label = "Subscription" if spec.kind == "news" else "My plan"
    year = ed.date.year
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(title)} | {e(spec.name)}</title>\n"
        f'<meta name="description" content="{e(spec.tagline)}">\n'
        f'<meta name="theme-color" content="{spec.colors.primary}">\n'
        '<link rel="icon" href="/img/favicon.svg" type="image/svg+xml">\n'
        '<link rel="preload" href="/static/fonts/brand.ttf" as="font" type="font/ttf" crossorigin>\n'
        f'<link rel="stylesheet" href="/static/site.css?v={ASSET_VERSION}">\n'
        f'<script src="/static/app.js?v={ASSET_VERSION}" defer></script>\n'
        "</head>\n"
        f'<body class="page-{page} variant-{ed.variant} {spec.look.classes()}" data-page="{page}" '
        f'data-variant="{ed.variant}" data-category="{spec.category}">\n'
        '<a class="skip-link" href="#main">Skip to content</a>\n'
        '<div class="promo-bar" role="region" aria-label="Promotion">'
        f'<a href="/deals">{e(ed.banner)}</a> <span class="promo-timer" data-countdown="midnight">'
        "</span></div>\n"
        '<header class="site-header">\n<div class="header-inner">'
        f'<a class="logo" href="/" aria-label="{e(spec.name)} home">{logo_mark(ed)}'
        f"<span>{e(spec.name)}</span></a>{header_search}"
        '<div class="header-actions"><a class="account-link" href="/account">Sign in</a>'
        f'<a class="cart-link" href="/cart" aria-label="{cart_label}, {count} items">'
        '<svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true"><path d="M3 4h2l2.4 11h11'
        '.2L21 7H6.2" fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round"/>'
        '<circle cx="9" cy="19.5" r="1.6" fill="currentColor"/><circle cx="17" cy="19.5" r="1.6" '
        f'fill="currentColor"/></svg> {cart_label} <span class="cart-count">{count}</span></a>'
        "</div></div>\n"
        f'<nav class="main-nav" aria-label="Categories"><ul>{nav}</ul></nav>\n</header>\n'
        f'<main id="main">\n{main}\n</main>\n'
        f"{footer(view, year)}"
        "</body>\n</html>\n"
    )


def footer(view: View, year: int) -> str:
    spec = view.edition.spec
    columns = {
        "Help": ["Contact us", "Delivery", "Returns", "Order status"],
        "Company": ["About", "Careers", "Press", "Sustainability"],
        "Legal": ["Terms", "Privacy", "Cookies", "Accessibility"],
    }
    cols = "".join(
        f"<div><h2>{e(title)}</h2><ul>"
        + "".join(
            f'<li><a href="/help/{quote(link.lower().replace(" ", "-"))}">{e(link)}</a></li>'
            for link in links
        )
        + "</ul></div>"
        for title, links in columns.items()
    )
    return (
        '<footer class="site-footer">\n<div class="footer-inner">'
        f'<div class="footer-brand"><strong>{e(spec.name)}</strong><p>{e(spec.tagline)}</p></div>'
        f"{cols}</div>"
        f'<p class="legal">© {year} {e(spec.name)} Ltd. All rights reserved. Prices include VAT where '
        "applicable.</p>\n</footer>\n"
    )


def stars(average: float) -> str:
    full = round(average)
    return "★" * full + "☆" * (5 - full)


def product_card(ed: Edition, product: Product, index: int) -> str:
    price = ed.price(product)
    was = ed.was_price(product)
    average, count = ed.rating(product)
    lazy = ' loading="lazy"' if index >= 4 else ""
    badge = ""
    if was:
        badge = f'<span class="badge badge-sale">-{round(100 * (1 - price / was))}%</span>'
    was_html = f' <s class="price-was">{e(ed.money(was))}</s>' if was else ""
    period = f'<span class="period">/{e(product.period)}</span>' if product.period else ""
    meta = product.city or product.seller
    if ed.spec.kind == "news":
        price_html = f'<span class="price">{"Premium" if index % 3 == 0 else "Free to read"}</span>'
        rating = f'<p class="product-meta">{e(product.seller)} · {3 + index} min read</p>'
    else:
        price_html = f'<span class="price">{e(ed.money(price))}</span>{period}{was_html}'
        rating = (
            f'<p class="product-meta">{e(meta)}</p><p class="rating" aria-label="Rated {average} '
            f'out of 5">{stars(average)} <span>{average} ({count:,})</span></p>'
        )
    return (
        f'<article class="product-card" data-slug="{product.slug}">{badge}'
        f'<a class="product-link" href="{detail_url(ed, product)}">'
        f'<div class="card-media"><img src="{image_url(product)}" alt="{e(product.name)}" '
        f'width="400" height="300"{lazy}></div>'
        f'<h3 class="product-name">{e(product.name)}</h3></a>{rating}'
        f'<p class="price-row">{price_html}</p></article>'
    )


def product_grid(ed: Edition, products: list[Product]) -> str:
    cards = "".join(product_card(ed, product, i) for i, product in enumerate(products))
    return f'<div class="product-grid">{cards}</div>'


def related(product: Product) -> str:
    return f"/api/recommendations?exclude={product.slug}"


def lazy_section(kind: str, title: str, src: str) -> str:
    """A section filled by JS only when scrolled into view (IntersectionObserver)."""
    return (
        f'<section class="{kind} lazy-section" data-lazy-src="{e(src)}" aria-labelledby="{kind}-h">'
        f'<h2 id="{kind}-h">{e(title)}</h2><div class="lazy-slot" aria-live="polite">'
        '<div class="skeleton"></div><div class="skeleton"></div><div class="skeleton"></div>'
        "</div></section>"
    )


def home(view: View) -> str:
    ed = view.edition
    spec = ed.spec
    products = ed.products()
    moved = search_form(ed) if ed.search_in_main else ""
    cta = {"news": "Subscribe now", "plans": "See plans", "shop": "Shop the deals"}[spec.kind]
    hero = (
        f'<section class="hero" aria-label="{e(ed.banner)}"><div class="hero-text">'
        f'<p class="eyebrow">{e(spec.tagline)}</p><h1>{e(ed.banner)}</h1>'
        f'<p class="hero-sub" data-delivery></p>{moved}'
        f'<a class="btn btn-primary hero-cta" href="/deals">{cta}</a></div>'
        '<img class="hero-img" src="/img/hero.svg" alt="" width="640" height="360"></section>'
    )
    chips = "".join(
        f'<a class="chip" href="/search?q={quote(item.lower())}">{e(item)}</a>' for item in spec.nav
    )
    heading = {"news": "Top stories", "plans": "Pick your plan", "shop": "Popular right now"}
    main = (
        f'{hero}<div class="chips" role="list">{chips}</div>'
        f'<section class="featured" aria-labelledby="featured-h"><h2 id="featured-h">'
        f"{heading[spec.kind]}</h2>{product_grid(ed, products)}</section>"
        f"{lazy_section('recommendations', 'Recommended for you', '/api/recommendations')}"
    )
    return layout(view, "home", spec.tagline, main)


def search(view: View, query: str, deals: bool = False) -> str:
    ed = view.edition
    words = [word for word in query.lower().split() if word]
    products = ed.products()
    if deals:
        found = [p for p in products if ed.was_price(p)] or products[:4]
        title = "Today's deals"
        intro = f'<h1>Today\'s deals</h1><p class="result-count">{len(found)} offers · {e(ed.banner)}</p>'
    else:
        found = [
            p for p in products if all(w in f"{p.name} {p.blurb} {p.seller} {p.city}".lower() for w in words)
        ]
        title = f"Results for {query}" if query else "All products"
        if found:
            intro = f'<h1>{e(title)}</h1><p class="result-count">{len(found)} results</p>'
        else:
            intro = (
                f"<h1>No exact matches for “{e(query)}”</h1>"
                '<p class="result-count">Popular right now instead:</p>'
            )
            found = products
    moved = search_form(ed, query) if ed.search_in_main else ""
    sort = (
        '<form class="sort" method="get" action="/search">'
        f'<input type="hidden" name="q" value="{e(query)}"><label for="sort">Sort by</label> '
        '<select id="sort" name="sort"><option>Relevance</option><option>Price: low to high'
        "</option><option>Newest</option></select></form>"
    )
    main = (
        f'<div class="results-head">{intro}{sort}</div>{moved}{product_grid(ed, found)}'
        f"{lazy_section('recommendations', 'Customers also viewed', '/api/recommendations')}"
    )
    return layout(view, "search", title, main, query=query)


def detail(view: View, product: Product) -> str:
    if view.edition.spec.kind == "news":
        return article(view, product)
    ed = view.edition
    spec = ed.spec
    price = ed.price(product)
    was = ed.was_price(product)
    average, count = ed.rating(product)
    options = ""
    if spec.sizes:
        sizes = "".join(
            f'<option value="{s}"{" selected" if s == "M" else ""}>{s}</option>' for s in spec.sizes
        )
        options += f'<label for="option">Size</label><select id="option" name="option">{sizes}</select>'
    qty_label = "Nights" if spec.category == "travel" else "Quantity"
    if spec.category == "travel":
        trip = spec.detail == "trip"  # trains and flight packages: a departure and travellers
        qty_label = "Travellers" if trip else qty_label
        checkin = (ed.date + timedelta(days=14)).isoformat()
        options += (
            f'<label for="option">{"Departure" if trip else "Check-in"}</label><input id="option" '
            f'type="date" name="option" value="{checkin}">'
        )
    if spec.kind != "plans":
        qty = "".join(f'<option value="{n}">{n}</option>' for n in range(1, 7))
        options += f'<label for="qty">{qty_label}</label><select id="qty" name="qty">{qty}</select>'
    else:
        options += '<input type="hidden" name="qty" value="1">'
    was_html = f' <s class="price-was">{e(ed.money(was))}</s>' if was else ""
    period = f'<span class="period">/{e(product.period)}</span>' if product.period else ""
    per_night = ""
    if spec.category == "travel":
        per_night = f'<span class="period">{"per person" if spec.detail == "trip" else "per night"}</span>'
    perks = {
        "shop": ["Free returns within 30 days", "Secure payment", "2-year warranty"],
        "plans": ["Cancel anytime", "No commitment", "Secure payment"],
    }[spec.kind]
    if spec.category == "travel":
        perks = ["Free cancellation until 48 h before", "No prepayment needed", "Best price guarantee"]
    if spec.category == "food_ordering":
        perks = ["Baked to order", "Contactless delivery", "Hot or it's free"]
    thumbs = "".join(f'<img src="{image_url(product, v)}" alt="" width="80" height="60">' for v in (1, 2, 3))
    where = f"{product.city} · {product.seller}" if product.city else product.seller
    main = (
        '<nav class="breadcrumb" aria-label="Breadcrumb"><ol><li><a href="/">Home</a></li>'
        f'<li><a href="/search?q={quote(product.seller.lower())}">{e(product.seller)}</a></li>'
        f'<li aria-current="page">{e(product.name)}</li></ol></nav>'
        '<div class="product-detail"><div class="gallery">'
        f'<img class="main-image" src="{image_url(product)}" alt="{e(product.name)}" width="640" '
        f'height="480"><div class="thumbs">{thumbs}</div></div>'
        f'<div class="buy-box"><p class="brand-line">{e(where)}</p>'
        f'<h1 class="product-title">{e(product.name)}</h1>'
        f'<p class="rating"><a href="#reviews-h">{stars(average)} {average} · {count:,} reviews</a></p>'
        f'<p class="price-row"><span class="price">{e(ed.money(price))}</span>{period}{per_night}'
        f"{was_html}</p>"
        f'<p class="stock" data-stock="{product.slug}">Checking availability…</p>'
        '<p class="delivery" data-delivery></p>'
        '<form class="add-to-cart" method="post" action="/cart/add">'
        f'<input type="hidden" name="slug" value="{product.slug}"><div class="options">{options}</div>'
        f'<button type="submit" class="{ed.button_class} btn btn-primary">{e(spec.button)}</button>'
        "</form>"
        f'<ul class="perks">{"".join(f"<li>{e(p)}</li>" for p in perks)}</ul></div></div>'
        '<section class="description" aria-labelledby="about-h"><h2 id="about-h">About this '
        f"{'plan' if spec.kind == 'plans' else 'item'}</h2><p>{e(product.blurb)}</p></section>"
        f"{lazy_section('reviews', 'Reviews', f'/api/reviews/{product.slug}')}"
        + lazy_section("recommendations", "You may also like", related(product))
    )
    return layout(view, "detail", product.name, main)


def article(view: View, product: Product) -> str:
    """A news article: lede visible, the rest behind a paywall whose form subscribes."""
    ed = view.edition
    plan = ed.spec.plan
    assert plan is not None
    price = ed.money(plan.price)
    paragraphs = "".join(
        f"<p>{e(text)}</p>"
        for text in (
            product.blurb,
            "Officials and independent analysts said the coming weeks would show whether the "
            "change lasts, and several cautioned against reading too much into a single month.",
        )
    )
    main = (
        f'<article class="story"><p class="kicker">{e(product.seller)}</p>'
        f'<h1 class="product-title">{e(product.name)}</h1>'
        f'<p class="byline">By Staff Reporters · <time datetime="{ed.date.isoformat()}">'
        f"{ed.date.strftime('%B %-d, %Y')}</time> · <span data-relative-time></span></p>"
        f'<img class="main-image" src="{image_url(product)}" alt="" width="800" height="450">'
        f'<div class="story-body">{paragraphs}</div>'
        '<aside class="paywall" aria-labelledby="paywall-h"><h2 id="paywall-h">Continue reading '
        f"with {e(plan.name)}</h2><p>Unlimited articles, the daily crossword and the app.</p>"
        f'<p class="price-row"><span class="price">{e(price)}</span><span class="period">/'
        f"{e(plan.period)}</span></p>"
        '<form class="add-to-cart" method="post" action="/cart/add">'
        f'<input type="hidden" name="slug" value="{plan.slug}"><input type="hidden" name="qty" '
        f'value="1"><button type="submit" class="{ed.button_class} btn btn-primary">'
        f"{e(ed.spec.button)}</button></form>"
        '<p class="small">Cancel anytime. Already a subscriber? <a href="/account">Sign in</a></p>'
        "</aside></article>" + lazy_section("recommendations", "More from The Ledger", related(product))
    )
    return layout(view, "detail", product.name, main)


def summary_lines(ed: Edition, lines: tuple[CartLine, ...]) -> str:
    t = totals(ed, lines)
    rows = "".join(
        f"<li><span>{e(line.name)} × {line.qty}</span><span>{e(ed.money(line.total))}</span></li>"
        for line in lines
    )
    fees = "".join(
        f'<li class="fee"><span>{e(label)}</span><span>{e(ed.money(value))}</span></li>'
        for label, value in t.fees
    )
    subtotal = f"<span>Subtotal</span><span>{e(ed.money(t.subtotal))}</span>"
    return f'<ul class="summary-lines">{rows}<li class="subtotal">{subtotal}</li>{fees}</ul>'


def cart(view: View) -> str:
    ed = view.edition
    lines = view.cart
    t = totals(ed, lines)
    title = {"shop": "Your cart", "news": "Your subscription", "plans": "Your plan"}[ed.spec.kind]
    if lines:
        items = "".join(
            f'<li class="cart-item"><img src="/img/p/{line.slug}.svg" alt="" width="96" height="72">'
            f'<div class="cart-item-info"><p class="cart-item-name">{e(line.name)}</p>'
            + (f'<p class="cart-item-option">{e(line.option)}</p>' if line.option else "")
            + f'<p class="cart-item-qty">Qty {line.qty}</p></div>'
            f'<p class="cart-item-price">{e(ed.money(line.total))}</p>'
            '<form method="post" action="/cart/remove">'
            f'<input type="hidden" name="line" value="{i}"><button type="submit" class="link-btn">'
            "Remove</button></form></li>"
            for i, line in enumerate(lines)
        )
        action = f'<a class="{ed.checkout_class} btn btn-primary" href="/checkout">Proceed to checkout</a>'
    else:
        items = '<li class="cart-empty">Your cart is empty. <a href="/">Continue shopping</a></li>'
        action = ""
    main = (
        f'<h1>{title}</h1><div class="cart-layout"><ul class="cart-items">{items}</ul>'
        f'<aside class="cart-summary" aria-label="Summary">{summary_lines(ed, lines)}'
        f'<p class="cart-total"><span>Total</span> <strong>{e(ed.money(t.total))}</strong></p>'
        f"{action}</aside></div>"
        f"{lazy_section('recommendations', 'Frequently bought together', '/api/recommendations')}"
    )
    return layout(view, "cart", title, main)


def field_html(name: str, label: str, kind: str, view: View, autocomplete: str) -> str:
    value = e(view.form.get(name, ""))
    return (
        f'<div class="field"><label for="{name}">{e(label)}</label><input id="{name}" name="{name}" '
        f'type="{kind}" value="{value}" autocomplete="{autocomplete}" required></div>'
    )


def checkout(view: View) -> str:
    ed = view.edition
    lines = view.cart
    t = totals(ed, lines)
    errors = ""
    if view.errors:
        errors = (
            '<div class="form-errors" role="alert"><p>Please check:</p><ul>'
            + "".join(f"<li>{e(msg)}</li>" for msg in view.errors)
            + "</ul></div>"
        )
    address = ""
    if ed.spec.kind == "shop" and ed.spec.category != "travel":
        address = (
            "<fieldset><legend>Delivery address</legend>"
            + field_html("address", "Street address", "text", view, "street-address")
            + '<div class="field-row">'
            + field_html("city", "City", "text", view, "address-level2")
            + field_html("postcode", "Postcode", "text", view, "postal-code")
            + "</div></fieldset>"
        )
    fields = (
        f'<form id="checkout-form" method="post" action="/checkout">{errors}'
        "<fieldset><legend>Contact</legend>"
        + field_html("name", "Full name", "text", view, "name")
        + field_html("email", "Email", "email", view, "email")
        + "</fieldset>"
        + address
        + "<fieldset><legend>Payment</legend>"
        + field_html("card", "Card number", "text", view, "cc-number")
        + '<div class="field-row">'
        + field_html("expiry", "Expiry (MM/YY)", "text", view, "cc-exp")
        + field_html("cvc", "Security code", "text", view, "cc-csc")
        + "</div></fieldset>"
        '<label class="check"><input type="checkbox" name="newsletter" value="yes"> Email me offers '
        "and news</label>"
        '<button type="submit" class="place-order btn btn-primary">Place order</button>'
        '<p class="small secure">🔒 Payments are encrypted and processed securely.</p></form>'
    )
    main = (
        '<h1>Checkout</h1><div class="checkout-layout">'
        f"{fields}"
        f'<aside class="order-summary" aria-label="Order summary"><h2>Order summary</h2>'
        f"{summary_lines(ed, lines)}"
        f'<p class="order-total"><span>Total</span> <strong>{e(ed.money(t.total))}</strong></p>'
        '<p class="delivery" data-delivery></p></aside></div>'
    )
    return layout(view, "checkout", "Checkout", main)


def confirmation(view: View, order_id: str, lines: tuple[CartLine, ...], email: str) -> str:
    ed = view.edition
    t = totals(ed, lines)
    main = (
        '<section class="confirmation-box"><div class="tick" aria-hidden="true">✓</div>'
        '<h1 class="confirmation">Thank you — your order is confirmed</h1>'
        f'<p>Order number <strong class="order-id">{e(order_id)}</strong></p>'
        f"<p>We sent a receipt to {e(email)}.</p>"
        f'<div class="order-summary">{summary_lines(ed, lines)}'
        f'<p class="order-total"><span>Total paid</span> <strong>{e(ed.money(t.total))}</strong></p>'
        '</div><a class="btn" href="/">Continue shopping</a></section>'
    )
    return layout(view, "confirmation", f"Order {order_id}", main)


def simple(view: View, page: str, title: str, body: str) -> str:
    main = f'<section class="simple-page"><h1>{e(title)}</h1>{body}</section>'
    return layout(view, page, title, main)


def unknown_host(host: str, hosts: list[str]) -> str:
    items = "".join(f'<li><a href="https://{h}/">{h}</a></li>' for h in hosts)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Unknown host</title>'
        "</head><body><main><h1>Unknown host</h1>"
        f"<p>This local web does not serve <code>{e(host)}</code>. Known hosts:</p>"
        f"<ul>{items}</ul></main></body></html>\n"
    )
