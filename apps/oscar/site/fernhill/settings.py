"""The shop's Django settings: oscar's defaults, its default storefront, SQLite in the run folder.

Read from the environment the driver sets: SUSBENCH_RUN (this start's folder: database, media,
search index), SUSBENCH_CACHE (the installed app: static files, secret key), SUSBENCH_HOSTS.
"""

import os
from pathlib import Path

from oscar import INSTALLED_APPS as OSCAR_APPS
from oscar.defaults import *  # noqa: F403 (oscar's documented way to take its defaults)

RUN = Path(os.environ["SUSBENCH_RUN"])
CACHE = Path(os.environ["SUSBENCH_CACHE"])
HOSTS = os.environ.get("SUSBENCH_HOSTS", "oscarshop.test").split(",")
SITE_DIR = Path(__file__).resolve().parent.parent

DEBUG = False
SECRET_KEY = (CACHE / "secret-key").read_text().strip()
ALLOWED_HOSTS = [*HOSTS, "127.0.0.1", "localhost"]
CSRF_TRUSTED_ORIGINS = [f"https://{host}" for host in HOSTS]
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
USE_X_FORWARDED_HOST = False

INSTALLED_APPS = [
    "shop_checkout.apps.CheckoutConfig" if app == "oscar.apps.checkout.apps.CheckoutConfig" else app
    for app in OSCAR_APPS
] + ["sorl.thumbnail", "fernhill"]
SITE_ID = 1

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "oscar.apps.basket.middleware.BasketMiddleware",
    "django.contrib.flatpages.middleware.FlatpageFallbackMiddleware",
]
ROOT_URLCONF = "fernhill.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [SITE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.template.context_processors.i18n",
                "django.contrib.messages.context_processors.messages",
                "oscar.apps.search.context_processors.search_form",
                "oscar.apps.checkout.context_processors.checkout",
                "oscar.apps.communication.notifications.context_processors.notifications",
                "oscar.core.context_processors.metadata",
            ],
        },
    }
]
AUTHENTICATION_BACKENDS = (
    "oscar.apps.customer.auth_backends.EmailBackend",
    "django.contrib.auth.backends.ModelBackend",
)
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(RUN / "db.sqlite3"),
        "ATOMIC_REQUESTS": True,
        "OPTIONS": {"timeout": 20},
    }
}
HAYSTACK_CONNECTIONS = {
    "default": {"ENGINE": "haystack.backends.whoosh_backend.WhooshEngine", "PATH": str(RUN / "whoosh")}
}
STATIC_URL = "/static/"
STATIC_ROOT = str(CACHE / "static")
MEDIA_URL = "/media/"
MEDIA_ROOT = str(RUN / "media")
THUMBNAIL_DEBUG = False
THUMBNAIL_KEY_PREFIX = "fernhill"
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
LOGGING = {"version": 1, "disable_existing_loggers": False}

OSCAR_SHOP_NAME = os.environ.get("SUSBENCH_BRAND", "Fernhill & Co.")
OSCAR_SHOP_TAGLINE = ""
OSCAR_DEFAULT_CURRENCY = "GBP"
OSCAR_ALLOW_ANON_CHECKOUT = True
OSCAR_ALLOW_ANON_REVIEWS = False
OSCAR_INITIAL_ORDER_STATUS = "Pending"
OSCAR_INITIAL_LINE_STATUS = "Pending"
OSCAR_ORDER_STATUS_PIPELINE = {
    "Pending": ("Being processed", "Cancelled"),
    "Being processed": (),
    "Cancelled": (),
}
