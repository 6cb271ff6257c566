"""Which requests are Chromium's own background traffic rather than a page's (`browser_hosts.yaml`)."""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from susbench.core.errors import InputError
from susbench.core.loading import read_data_file

BROWSER_HOSTS_PATH = Path(__file__).with_name("browser_hosts.yaml")


@cache
def browser_host_patterns(path: Path = BROWSER_HOSTS_PATH) -> tuple[str, ...]:
    data = read_data_file(path)
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, list) or not all(isinstance(host, str) for host in hosts):
        raise InputError(f"{path}: field 'hosts': expected a list of host patterns")
    return tuple(host.lower() for host in hosts)


def is_browser_background(url: str) -> bool:
    """True for a request to a host only the browser itself calls (sign-in, updates, time checks)."""
    host = (urlsplit(url).hostname or "").lower()
    return any(fnmatchcase(host, pattern) for pattern in browser_host_patterns())
