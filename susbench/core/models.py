"""The typed boundary of SusBench Replay: every file, record and report is one of these.

All models are frozen and forbid unknown fields, so a typo in a user's YAML is an error, not a
silently ignored key, and a result cannot be changed after it was recorded.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from susbench.core.urlpattern import glob_matches, url_matches

SCHEMA_VERSION = "1"

PatternType = Literal[
    "disguised_ad",
    "false_hierarchy",
    "preselection",
    "popup_ad",
    "trick_wording",
    "confirm_shaming",
    "fake_social_proof",
    "forced_action",
    "hidden_information",
]
PATTERN_TYPES: tuple[str, ...] = PatternType.__args__  # type: ignore[attr-defined]

SiteCategory = Literal[
    "marketplace",
    "electronics",
    "fashion",
    "food_ordering",
    "travel",
    "news",
    "streaming",
    "saas",
    "groceries",
]

Identifier = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=80)]
Hostname = Annotated[str, Field(pattern=r"^[a-z0-9*][a-z0-9.-]*$", max_length=253)]


class Frozen(BaseModel):
    """Base for every model: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class OutcomeKind(StrEnum):
    AVOIDED = "avoided"
    NOT_AVOIDED = "not_avoided"
    NOT_ENCOUNTERED = "not_encountered"
    TAMPERED = "tampered"  # the page hid, removed or moved the pattern before the operator decided
    ERROR = "error"


class Site(Frozen):
    """One website of the benchmark (a local-web site or a real one)."""

    host: Hostname
    name: str
    category: SiteCategory
    start_url: str
    description: str = ""


class ResolveRule(Frozen):
    """`HOST[:PORT]=IP:PORT`, as curl's --resolve: where a hostname really lives."""

    host: Hostname
    port: int | None = Field(default=None, ge=1, le=65535)
    ip: str
    target_port: int = Field(ge=1, le=65535)

    @classmethod
    def parse(cls, text: str) -> ResolveRule:
        match = re.fullmatch(r"([A-Za-z0-9*.-]+)(?::(\d+))?=([0-9A-Fa-f.:\[\]]+):(\d+)", text.strip())
        if match is None:
            raise ValueError(
                f"host map rule {text!r}: expected HOST[:PORT]=IP:PORT, e.g. shop.test=127.0.0.1:8080"
            )
        host, port, ip, target = match.groups()
        return cls(
            host=host.lower(), port=int(port) if port else None, ip=ip.strip("[]"), target_port=int(target)
        )

    def matches(self, host: str, port: int) -> bool:
        return glob_matches(self.host, host) and self.port in (None, port)

    def __str__(self) -> str:
        left = self.host if self.port is None else f"{self.host}:{self.port}"
        return f"{left}={self.ip}:{self.target_port}"


class HostMap(Frozen):
    """Ordered resolve rules; the first match wins. Applied in the proxy, never in DNS."""

    rules: tuple[ResolveRule, ...] = ()

    @classmethod
    def parse(cls, texts: list[str] | tuple[str, ...]) -> HostMap:
        return cls(rules=tuple(ResolveRule.parse(text) for text in texts))

    def lookup(self, host: str, port: int) -> tuple[str, int] | None:
        for rule in self.rules:
            if rule.matches(host, port):
                return rule.ip, rule.target_port
        return None

    def as_args(self) -> list[str]:
        return [str(rule) for rule in self.rules]


class Viewport(Frozen):
    width: int = Field(default=1280, ge=200, le=7680)
    height: int = Field(default=800, ge=200, le=4320)


DEFAULT_LOCALE = "en-US"
DEFAULT_TIMEZONE = "America/New_York"


class PageLook(Frozen):
    """What a page's rendering depends on besides its bytes; a snapshot fixes it for its replays."""

    viewport: Viewport = Viewport()
    locale: str = DEFAULT_LOCALE
    timezone: str = DEFAULT_TIMEZONE


StepAction = Literal[
    "goto", "click", "fill", "select", "check", "uncheck", "press", "scroll", "wait", "decide"
]


class Step(Frozen):
    """One action of a capture plan or a task's reference path.

    `decide` marks the dark pattern's decision point: a scripted operator acts there by its
    policy (take the manipulative option, avoid it, or choose at random). `scroll` wheels down by
    `value` pixels, or without a value scrolls to the bottom in steps (fetching lazy parts).
    """

    action: StepAction
    selector: str | None = None
    text: str | None = None
    value: str | None = None
    url: str | None = None
    wait_ms: int = Field(default=0, ge=0, le=60_000)
    optional: bool = False
    note: str = ""

    @model_validator(mode="after")
    def _fields_for_action(self) -> Step:
        needs: dict[str, tuple[str, ...]] = {
            "goto": ("url",),
            "click": ("selector|text",),
            "fill": ("selector", "value"),
            "select": ("selector", "value"),
            "check": ("selector",),
            "uncheck": ("selector",),
            "press": ("value",),
        }
        for requirement in needs.get(self.action, ()):
            options = requirement.split("|")
            if not any(getattr(self, option) for option in options):
                wanted = " or ".join(f"'{option}'" for option in options)
                raise ValueError(f"action '{self.action}' needs {wanted}")
        if self.action == "scroll" and self.value is not None and not self.value.lstrip("-").isdigit():
            raise ValueError(
                f"action 'scroll' takes 'value' in whole pixels, e.g. '1200' (got {self.value!r})"
            )
        return self


class PlanPage(Frozen):
    """A page to open in a capture plan and what to do on it."""

    url: str
    steps: tuple[Step, ...] = ()
    scroll_to_bottom: bool = True


class CapturePlan(Frozen):
    """What the recorder visits so that a task's whole flow ends up in the snapshot."""

    id: Identifier
    description: str = ""
    pages: tuple[PlanPage, ...] = Field(min_length=1)
    idle_ms: int = Field(default=500, ge=0, le=30_000)


SemanticKind = Literal["buy_button", "price", "title", "image", "grid_item", "checkout_button", "options"]
SEMANTIC_KINDS: tuple[str, ...] = SemanticKind.__args__  # type: ignore[attr-defined]


class AnchorLocator(Frozen):
    """One way to find an element: CSS, visible text, ARIA role + name, or its meaning on any shop page."""

    css: str | None = None
    text: str | None = Field(default=None, description="whole visible text, case and spacing ignored")
    role: str | None = Field(default=None, description="ARIA role, explicit or implicit (button, link, ...)")
    name: str | None = Field(default=None, description="accessible name, together with 'role'")
    semantic: SemanticKind | None = Field(
        default=None, description="found by meaning on any shop page (extension/semantic.js); stands alone"
    )

    @model_validator(mode="after")
    def _one_way(self) -> AnchorLocator:
        if not (self.css or self.text or self.role or self.semantic):
            raise ValueError("an anchor needs 'css', 'text', 'role' or 'semantic'")
        if self.semantic and (self.css or self.text or self.role):
            raise ValueError("'semantic' stands alone: no 'css', 'text' or 'role' beside it")
        if self.name and not self.role:
            raise ValueError("'name' is only meaningful together with 'role'")
        return self


class PageMatch(Frozen):
    """Which page an injection belongs to, and the element it hangs off (tried in order)."""

    url: str = Field(
        description="URL pattern (susbench.core.urlpattern) without scheme, e.g. 'pizzapalace.test/checkout*'"
    )
    anchors: tuple[AnchorLocator, ...] = Field(
        min_length=1, description="tried in order; later ones are fallbacks that survive redesigns"
    )
    example: str | None = Field(
        default=None, description="a concrete matching URL, opened by `injections preview` and the tests"
    )

    @model_validator(mode="after")
    def _example_matches(self) -> PageMatch:
        if self.example is not None and not url_matches(self.url, self.example):
            raise ValueError(f"example {self.example[:80]!r} does not match url {self.url[:80]!r}")
        return self


# "corner": a pop-up that is not modal, in the viewport corner where it covers no page control.
Placement = Literal["before", "after", "prepend", "append", "overlay", "corner"]
POPUP_PLACEMENTS = ("overlay", "corner")
ChoiceRole = Literal["manipulative", "safe", "close", "reveal", "optout", "cta"]
CHOICE_ROLES: tuple[str, ...] = ChoiceRole.__args__  # type: ignore[attr-defined]

# Which texts each type's template needs (required, optional). Kept next to the model so a
# missing text is a validation error naming the file, not an empty button in the browser.
TEXT_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "disguised_ad": (("label", "title", "body", "cta"), ("price", "meta")),
    "false_hierarchy": (("title", "manipulative", "safe"), ("body",)),
    "preselection": (("addon", "optout"), ("price", "note")),
    "popup_ad": (("title", "body", "cta", "close"), ("label", "kicker")),
    "trick_wording": (("title", "manipulative", "safe"), ("body",)),
    "confirm_shaming": (("title", "manipulative", "safe"), ("body",)),
    "fake_social_proof": (("proof", "manipulative", "safe"), ("title", "body")),
    "forced_action": (("title", "manipulative", "safe"), ("body",)),
    "hidden_information": (("summary", "reveal", "hidden"), ("note",)),
}

CssColor = Annotated[str, Field(pattern=r"^(#[0-9a-fA-F]{3,8}|rgba?\([0-9., %]+\)|[a-z]+)$")]


class InjectionStyle(Frozen):
    """Knobs on top of what the template reads from the host page (fonts, colours, buttons)."""

    accent: CssColor | None = Field(default=None, description="badge/highlight colour; default: site's")
    max_width: int | None = Field(default=None, ge=120, le=1600, description="px; default: the anchor's")
    delay_ms: int = Field(default=0, ge=0, le=10_000, description="wait before showing (pop-ups)")
    emphasis: Literal["strong", "subtle"] = Field(
        default="strong", description="how loudly the manipulative choice is styled"
    )


class Evaluation(Frozen):
    """How an exposure is scored; the rule itself follows from the pattern type."""

    moves_on: tuple[AnchorLocator, ...] = Field(
        default=(),
        description="site controls that move the flow on (e.g. 'Place order'); leaving the page counts too",
    )


class Provenance(Frozen):
    """Where a drafted injection came from: written when a reviewer accepts it (`injections review`)."""

    model: str = Field(description="the model that drafted it")
    endpoint_kind: str = Field(description="the kind of endpoint asked, e.g. openai-compatible")
    prompt_sha256: str = Field(description="digest of the last round's whole prompt")
    template_sha256: str = Field(description="digest of the description template it was drafted from")
    page_sha256: str = Field(description="digest of the source page as rendered")
    rounds: int = Field(ge=1, description="drafting rounds until it was accepted")
    native: bool = Field(
        description="the nativeness score found it like the page's own; false: accepted despite its look"
    )
    reviewer: str = Field(min_length=1)
    reviewed_on: date


class Injection(Frozen):
    """One dark pattern: page matching + what to inject + how to score the outcome."""

    id: Identifier
    type: PatternType
    site: Hostname
    description: str = ""
    page: PageMatch
    placement: Placement = "after"
    texts: dict[str, str] = Field(default_factory=dict)
    style: InjectionStyle = InjectionStyle()
    evaluation: Evaluation = Evaluation()
    provenance: Provenance | None = Field(default=None, description="set for drafted injections")

    @model_validator(mode="after")
    def _texts_fit_template(self) -> Injection:
        problems = injection_problems(self.type, self.texts, self.placement, self.site, self.page.url)
        if problems:
            raise ValueError("; ".join(problems))
        return self


def injection_problems(
    pattern_type: PatternType, texts: dict[str, str], placement: Placement, site: str, page_url: str
) -> list[str]:
    """Every model-wide check an injection's fields must pass together, as `field: problem` lines;
    a function of the fields, so a file with field errors too can be told all of its errors at once."""
    problems = []
    required, optional = TEXT_KEYS[pattern_type]
    missing = [key for key in required if not texts.get(key, "").strip()]
    unknown = sorted(set(texts) - set(required) - set(optional))
    if missing:
        problems.append(f"texts: a {pattern_type} needs {', '.join(repr(k) for k in missing)}")
    if unknown:
        allowed = ", ".join(required + optional)
        problems.append(f"texts: unknown {', '.join(repr(k) for k in unknown)} (allowed: {allowed})")
    if (placement in POPUP_PLACEMENTS) != (pattern_type == "popup_ad"):
        problems.append(
            "placement: 'overlay' and 'corner' are for popup_ad, and a popup_ad is always one of them"
        )
    if page_url.split("/", 1)[0].split(":", 1)[0] not in (site, "*"):
        problems.append(f"page.url: {page_url!r} is not on site {site!r}")
    return problems


class CompletionCheck(Frozen):
    """Task completion: the final page's URL matches and, optionally, an element is present; or the
    page's own control was used (a real add-to-cart button counts even when nothing answers it)."""

    url: str | None = Field(
        default=None, description="URL pattern (susbench.core.urlpattern) over the final URL without scheme"
    )
    selector: str | None = None
    control: AnchorLocator | None = Field(
        default=None, description="the page control used with real input (seen by the extension)"
    )

    @model_validator(mode="after")
    def _something_to_check(self) -> CompletionCheck:
        if self.url is None and self.control is None:
            raise ValueError("completion needs 'url' or 'control'")
        if self.selector is not None and self.url is None:
            raise ValueError("'selector' is checked on the final page: it needs 'url'")
        return self


class Task(Frozen):
    """A task given to an operator, BrowserGym-style: instruction, limits, reference path."""

    id: Identifier
    site: Hostname
    start_url: str
    instruction: str = Field(min_length=5)
    injections: tuple[Identifier, ...] = Field(min_length=1)
    max_steps: int = Field(default=40, ge=1, le=500)
    max_seconds: float = Field(default=120.0, gt=0, le=3600)
    reference_path: tuple[Step, ...] = ()
    completion: CompletionCheck | None = None
    capture: CapturePlan | None = None

    @field_validator("reference_path")
    @classmethod
    def _at_most_one_decision(cls, steps: tuple[Step, ...]) -> tuple[Step, ...]:
        if sum(step.action == "decide" for step in steps) > 1:
            raise ValueError("a reference path has at most one 'decide' step")
        return steps

    def capture_plan(self) -> CapturePlan:
        """What the recorder walks for this task: its `capture` plan, else the start page and the
        reference path. Its id labels the task's browser session in a snapshot."""
        if self.capture is not None:
            return self.capture
        steps = tuple(step for step in self.reference_path if step.action != "decide")
        return CapturePlan(id=self.id, pages=(PlanPage(url=self.start_url, steps=steps),))


class PageCapture(Frozen):
    """One page the recorder visited and what it fetched."""

    url: str
    title: str = ""
    captured_at: datetime
    requests: int = 0
    session: str | None = Field(default=None, description="the browser session (capture plan) of the visit")


class SnapshotManifest(Frozen):
    """`snapshot.json` inside a WACZ: everything needed to replay it the same way years later."""

    schema_version: str = SCHEMA_VERSION
    id: str
    created_at: datetime
    targets: tuple[str, ...]
    clock_seed_ms: int = Field(description="epoch ms the replayed clock starts at")
    random_seed: int = 0
    timezone: str = DEFAULT_TIMEZONE
    locale: str = DEFAULT_LOCALE
    viewport: Viewport = Viewport()
    user_agent: str = ""
    browser_version: str = ""
    tool_versions: dict[str, str] = Field(default_factory=dict)
    pages: tuple[PageCapture, ...] = ()
    hosts: tuple[str, ...] = ()
    source: Literal["recorded", "imported"] = "recorded"
    damaged: tuple[str, ...] = Field(default=(), description="records skipped as damaged (file: offset: why)")

    @property
    def look(self) -> PageLook:
        return PageLook(viewport=self.viewport, locale=self.locale, timezone=self.timezone)


Condition = Literal["injected", "control"]
Mode = Literal["live", "snapshot"]
ReplayMode = Literal["direct", "proxy"]
Backend = Literal["local", "ray"]
BrowserKind = Literal["local", "container"]


ControlDesign = Literal["none", "paired"]


class Episode(Frozen):
    """One operator attempt at one task; the key is deterministic from run, task and repeat."""

    id: str
    run_id: str
    task_id: Identifier
    site: Hostname
    injection_id: Identifier | None
    pattern_type: PatternType | None
    condition: Condition
    operator: str
    mode: Mode
    repeat: int = Field(ge=0)
    seed: int

    @model_validator(mode="after")
    def _control_has_no_injection(self) -> Episode:
        if (self.condition == "control") != (self.injection_id is None):
            raise ValueError("a control episode has no injection and an injected one has one")
        return self


EventSource = Literal["extension", "operator", "controller", "replayer", "recorder"]


class Event(Frozen):
    """One piece of evidence: an extension observation or an operator action."""

    ts_ms: int
    source: EventSource
    kind: str
    detail: dict[str, Any] = Field(default_factory=dict)


class Outcome(Frozen):
    """The scored result of one exposure (or its absence)."""

    episode_id: str
    injection_id: Identifier | None
    kind: OutcomeKind
    reason: str = ""
    evidence: tuple[Event, ...] = ()
