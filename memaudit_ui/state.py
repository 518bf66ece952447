"""Declared session-state keys and their mirror in the URL query string.

Shared choices live under keys that are *not* widget keys (Streamlit drops a widget's state
when the page that drew it is left). Each run, the frame copies them into the URL so any view
can be shared as a link, and a fresh session reads them back from the URL.

A page may own parameters of its own (:data:`PAGE_URL_KEYS`): the Evidence explorer's
``unit``, which the page reads after calling the frame and writes back with :func:`sync_url`,
and the settings of the Evidence explorer, Budget sweep, Ablations, Certification, External
stores and Generator pages (``frame.LinkSetting``), which the frame reads from a link
(:func:`parse_link_value`) and keeps in the link while they differ from their defaults
(:data:`PAGE_PARAMS_KEY`). Every other page drops them with a note naming their page, so a link
never carries another page's choice (a page link carries the settings of the page it opens:
:func:`page_link_params`). A parameter declared nowhere is warned about and dropped (QA s47:
``budgets=20`` was kept and did nothing).
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Any

import streamlit as st

from memaudit_core.errors import closest_name, cut_repr
from memaudit_core.specs import (
    PLAIN_NUMBER_RULE,
    TooSmallNumber,
    read_int,
    read_plain_number,
)

#: session-state key -> URL parameter. Values are strings in the URL.
URL_KEYS = {
    "ma_package": "package",
    "ma_budget": "budget",
    "ma_store": "store",
    "ma_present": "present",
}
#: Page title -> the URL parameters that page owns (read and written by the page itself).
#: A page setting is in the link only while it differs from its default, so a link stays
#: short and a missing parameter means the default.
PAGE_URL_KEYS: dict[str, tuple[str, ...]] = {
    "Evidence explorer": ("unit", "kinds", "rows", "graph"),
    "Budget sweep": (
        "grid",
        "from",
        "to",
        "step",
        "add_budget",
        "methods",
        "ablation",
        "time",
        "seed_band",
        "first_seed",
        "last_seed",
    ),
    "Ablations & sensitivity": (
        "time",
        "presets",
        "removed",
        "rules",
        "k",
        "noise",
        "level",
        "draws",
        "seed",
        "tab",
    ),
    "Certification": ("time_limit", "add_budget", "pools", "seeds"),
    "External stores": ("keep", "salience_field"),
    "Generator": ("preview",),
}
#: Session-state key: page title -> {parameter: text in the link, or None for the default},
#: the page settings as last chosen, for the links to that page and the URL's upkeep.
PAGE_PARAMS_KEY = "ma_page_params"


def md_code_span(text: str) -> str:
    """``text`` as a Markdown code span: shown verbatim (no escapes, no emoji shortcodes), so
    that what is copied is what the file holds (schema QA s38: the word joiner that guarded a
    shortcode in plain text came along when an id was copied from an upload error)."""
    text = " ".join(text.splitlines())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_value(value: object, limit: int = 200) -> str:
    """A value a user gave (a link's parameter, an id), quoted as messages quote it
    (:func:`cut_repr`) inside a code span: Streamlit makes no emoji of ``:name:`` there, so the
    message needs no invisible word joiner in it and a copied value is the value (QA s46: a
    link warning's ``'sample:nope'`` was copied with a U+2060 after the first colon).

    >>> md_value("writer:nope:x"), md_value(["a"])
    ("`'writer:nope:x'`", "`['a']`")
    """
    return md_code_span(cut_repr(value, limit))


#: Session-state key holding the problems found in the link (shown once by the frame).
PROBLEMS_KEY = "ma_url_problems"
#: Significant digits kept for a budget, in the session and in the URL alike, so a link
#: reproduces exactly the budget the session used (slider floats such as 0.30000000000000004).
BUDGET_DIGITS = 12


@dataclass(frozen=True)
class Choices:
    package_key: str | None
    budget: float | None
    store_key: str | None
    present: bool


def writers_beyond_reference(store_key: str | None) -> tuple[str, ...]:
    """The sidebar's writer when it is not a reference writer (a plugin or bundled blind
    writer), for views that otherwise score the reference writers only; else ``()``.

    >>> writers_beyond_reference("writer:estimated_gvt"), writers_beyond_reference("writer:gvt")
    (('estimated_gvt',), ())
    """
    from memaudit_core.writers import writer_names

    if not store_key or not store_key.startswith("writer:"):
        return ()
    name = store_key.removeprefix("writer:")
    return () if name in writer_names() else (name,)


def normalise_budget(value: float) -> float:
    """A budget as the URL and the slider carry it (floating noise rounded away).

    >>> normalise_budget(0.1 + 0.2)
    0.3
    """
    return float(f"{float(value):.{BUDGET_DIGITS}g}")


def read_link_number(text: str) -> tuple[float | None, str | None]:
    """A number from a link, by the rule the core reads ``gen:`` keys and package files with
    (:func:`memaudit_core.specs.read_plain_number`): ``(value, None)`` (possibly not finite),
    or ``(None, why not)``. QA s47: ``float()`` read ``budget=%D9%A6`` (an Arabic-Indic 6) and
    ``1_0`` without a word, so one view had several links.

    >>> read_link_number("1e3"), read_link_number("abc"), read_link_number("nan")
    ((1000.0, None), (None, 'not a number'), (None, 'not a finite number'))
    >>> read_link_number("1_0")[1].startswith("not a plain number (ASCII digits 0-9")
    True
    """
    try:
        return read_plain_number(text), None
    except TooSmallNumber:
        return None, "too small to hold: it would read as 0"
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None, "not a number"
    if not math.isfinite(value):
        return None, "not a finite number"
    return None, f"not a plain number ({PLAIN_NUMBER_RULE})"


def parse_budget(text: str) -> tuple[float | None, str | None]:
    """A budget from the URL: (value, None) or (None, why it was ignored, in Markdown).

    >>> parse_budget("6"), parse_budget("-1")
    ((6.0, None), (None, "ignored budget=`'-1'` in the link: a budget cannot be negative"))
    """
    shown = md_value(text)
    value, problem = read_link_number(text)
    if value is None:
        return None, f"ignored budget={shown} in the link: {problem}"
    if not math.isfinite(value):
        return None, f"ignored budget={shown} in the link: not a finite number"
    if value < 0:
        return None, f"ignored budget={shown} in the link: a budget cannot be negative"
    if 0 < value < sys.float_info.min:
        # Deep-link QA s38: 1e-320 was shown as 1e-320, 9.999888672e-321 and 9.99989e-321.
        return None, (
            f"ignored budget={shown} in the link: below the smallest normal number "
            f"({sys.float_info.min:.3g}); use 0 or a larger budget"
        )
    return normalise_budget(value), None


def _rounding_note(text: str, budget: float) -> str | None:
    """The note for a link's budget that :func:`normalise_budget` rounded, naming both values
    (QA s49: ``budget=0.1234567890123456`` became 0.123456789012 without a word), or None."""
    given, _ = read_link_number(text)
    if given is None or given == budget:
        return None
    return (
        f"budget={md_value(text)} in the link is rounded to {BUDGET_DIGITS} significant "
        f"digits: the budget used is {md_code_span(url_value(budget))}"
    )


def _last_budget_text(text: str) -> str:
    """How a repeated ``budget`` ends up, naming the value used (QA s49: the repeat warning
    said an unrounded budget "is used"; a refused one is named by its own warning)."""
    budget, problem = parse_budget(text)
    if problem:
        return f"only the last one, {md_value(text)}, is read"
    if _rounding_note(text, budget):
        return (
            f"the last one, {md_value(text)}, is used, rounded to {md_code_span(url_value(budget))}"
        )
    return f"the last one, {md_value(text)}, is used"


#: Session-state key holding the errors (the package asked for could not be opened), shown
#: once by the frame, before the problems.
ERRORS_KEY = "ma_url_errors"


def add_problem(message: str, *, first: bool = False, error: bool = False) -> None:
    """Queue a problem with the link (Markdown: a value from the link goes in
    :func:`md_value`); ``first`` puts it before those already queued;
    ``error`` marks one that left the user without what they asked for (shown as an error,
    not a warning)."""
    problems = st.session_state.setdefault(ERRORS_KEY if error else PROBLEMS_KEY, [])
    problems.insert(0, message) if first else problems.append(message)


def pop_problems() -> list[str]:
    return st.session_state.pop(PROBLEMS_KEY, None) or []


def pop_errors() -> list[str]:
    return st.session_state.pop(ERRORS_KEY, None) or []


#: Session-state key of the query string the app last wrote (:func:`sync_url`).
LAST_URL_KEY = "ma_last_url"
#: True on a run where :func:`init_from_url` took an earlier URL back (Back / Forward).
URL_ADOPTED_KEY = "ma_url_adopted"


def init_from_url(page_title: str | None = None) -> None:
    """Seed the declared keys from the URL query string: on a session's first run, and
    on a run started by the browser's Back or Forward that brought back an earlier view, i.e. a
    URL other than the one the app last wrote (app QA: Back passed through budget and store changes
    without undoing them, because the app wrote its current choice back over the URL).

    The link's other parameters are checked against ``page_title`` (the page drawing):
    :func:`check_link_params`."""
    state = st.session_state
    params = st.query_params
    state[URL_ADOPTED_KEY] = False
    if state.get("ma_initialised"):
        last = state.get(LAST_URL_KEY)
        if last is None or params.to_dict() == last:
            return
        if not _is_history_navigation():
            # Not Back / Forward but a widget's rerun whose query string predates the URL the
            # previous run wrote (the browser had not applied it yet). Adopting it reverted
            # the change just made (QA s19d: two quick arrow presses on the budget slider
            # left the budget above where it started, and the URL one step off the view).
            return
        if not any(param in params for param in URL_KEYS.values()):
            return  # a URL without the app's parameters (st.switch_page) says nothing
        # Pages read their own parameters (the Evidence explorer's unit) again this run.
        state[URL_ADOPTED_KEY] = True
        # Only what the URL holds is taken; a parameter it lacks keeps the session's value.
    for param in (*URL_KEYS.values(), "unit"):
        values = params.get_all(param)
        if len(values) > 1:
            # App QA: ?package=a&package=b opened b and dropped a without a word.
            add_problem(
                f"the link gives {param} {len(values)} times "
                f"({', '.join(md_value(v, 60) for v in values[:5])}"
                f"{', ...' if len(values) > 5 else ''}): "
                + (
                    _last_budget_text(values[-1])
                    if param == "budget"
                    else f"the last one, {md_value(values[-1])}, is used"
                )
            )
    for param in ("package", "store"):
        if param in params and not params[param].strip():
            # Deep-link QA s38: an empty value opened the default without a word.
            add_problem(f"ignored {param}={md_value(params[param])} in the link: empty")
    if params.get("package", "").strip():
        state["ma_package"] = params["package"]
    if "budget" in params:
        budget, problem = parse_budget(params["budget"])
        if problem:
            add_problem(problem)
        else:
            rounded = _rounding_note(params["budget"], budget)
            if rounded:
                st.session_state.setdefault(NOTES_KEY, []).append(rounded)
            # A budget the session already holds came from the app itself (a page switch
            # writes the choices into the new page's URL), not from a link (QA: a sweep click
            # past the total cost was reported as "budget=55 in the link").
            held = state.get("ma_budget")
            if held is None or normalise_budget(held) != budget:
                state["ma_budget_from_url"] = True
            state["ma_budget"] = budget
    if params.get("store", "").strip():
        state["ma_store"] = params["store"]
        state["ma_store_from_url"] = True
    present = params.get("present", "0").lower()
    if present not in ("0", "1", "true", "false", "yes", "no", ""):
        add_problem(f"ignored present={md_value(params['present'])} in the link: use present=1")
    state["ma_present"] = present in ("1", "true", "yes")
    check_link_params(page_title)
    if "page" in params:
        # Conformance QA: DESIGN lists the page among the link's parts, and page=Compare was
        # silently ignored; the page is the link's path here (Streamlit's pages/ folder).
        add_problem(
            f"ignored page={md_value(params['page'])} in the link: the page is the link's "
            "path, e.g. `/Compare?package=...`"
        )
    state["ma_initialised"] = True


#: Session-state key holding notes on the link (another page's settings it carried), shown
#: once by the frame, after the problems.
NOTES_KEY = "ma_url_notes"


def pop_notes() -> list[str]:
    return st.session_state.pop(NOTES_KEY, None) or []


def known_params() -> set[str]:
    """Every parameter some page reads from a link."""
    pages = {param for params in PAGE_URL_KEYS.values() for param in params}
    return {*URL_KEYS.values(), *pages, *IGNORED_PARAMS}


#: Parameters that sites and mail tools add to a shared link (QA s47 review: a link posted on
#: Facebook opened with a warning about ``fbclid``). Dropped from the URL without a word.
TRACKING_PARAMS = frozenset(
    {"fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "igshid", "mc_cid", "mc_eid"}
)


def is_tracking_param(name: str) -> bool:
    """Whether ``name`` is a link-tracking tag, not a (mistyped) setting.

    >>> is_tracking_param("utm_source"), is_tracking_param("fbclid"), is_tracking_param("budgets")
    (True, True, False)
    """
    return name in TRACKING_PARAMS or name.startswith("utm_")


def check_link_params(page_title: str | None) -> None:
    """Name the link's parameters that no page reads (a warning, with the setting meant when
    the name is close to one) and those of another page than ``page_title`` (a note naming
    the page): :func:`sync_url` leaves both out of the URL. QA s47: ``budgets=20`` stayed in
    the URL doing nothing, and Compare dropped ``unit=`` and ``grid=`` without a word."""
    known = known_params()
    own = {*URL_KEYS.values(), *PAGE_URL_KEYS.get(page_title or "", ())}
    for param in st.query_params:
        if param in known:
            if page_title is None or param in own or param in IGNORED_PARAMS:
                continue
            owners = [title for title, params in PAGE_URL_KEYS.items() if param in params]
            pages = " and ".join(f"the {title} page" for title in owners)
            st.session_state.setdefault(NOTES_KEY, []).append(
                f"ignored {param}={md_value(st.query_params[param])} in the link: a setting "
                f"of {pages}, not of the {page_title} page"
            )
            continue
        if is_tracking_param(param):
            continue
        near = closest_name(param, sorted(known - set(IGNORED_PARAMS)))
        add_problem(
            f"link parameter {md_value(param)} is not a MemAudit setting; ignored"
            + (f" (did you mean {md_code_span(near)}?)" if near else "")
        )


def _is_history_navigation() -> bool:
    """True on a run the browser's Back or Forward started (Streamlit flags those reruns).

    A Streamlit without the flag (``requirements.txt`` allows versions from before 1.67)
    gets the earlier rule, any URL the app did not write, so that Back still works there.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    flag = getattr(get_script_run_ctx(), "is_history_navigation", None)
    return True if flag is None else bool(flag)


def choices() -> Choices:
    state = st.session_state
    return Choices(
        state.get("ma_package"),
        state.get("ma_budget"),
        state.get("ma_store"),
        bool(state.get("ma_present", False)),
    )


def url_value(value: Any) -> str:
    """A value as the URL's query string writes it.

    >>> url_value(True), url_value(6.0), url_value(0.1 + 0.2), url_value("gvt")
    ('1', '6', '0.3', 'gvt')
    """
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.{BUDGET_DIGITS}g}"
    return str(value)


_url_value = url_value


def shared_params() -> dict[str, str]:
    """The declared keys as URL parameters (what every page's link carries), for page links:
    a link that already holds them leaves :func:`sync_url` nothing to write, so a page change
    is one browser history entry, not two (app QA: Back took two presses per page)."""
    state = st.session_state
    out: dict[str, str] = {}
    for key, param in URL_KEYS.items():
        value = state.get(key)
        if value is None or (param == "present" and not value):
            continue
        out[param] = url_value(value)
    return out


#: Parameters a link may carry that the app warns about and ignores (the page is the link's
#: path): left out of the URL the app writes back.
IGNORED_PARAMS = ("page",)


def sync_url(extra: dict[str, str | None] | None = None, page_title: str | None = None) -> None:
    """Mirror the declared keys (and page-specific extras) into the URL.

    The page parameters already in the URL are kept, except those another page owns
    (:data:`PAGE_URL_KEYS`) when ``page_title`` names the page drawing; parameters no page
    reads and those the link's warnings said were ignored (:data:`IGNORED_PARAMS`) are left
    out (:func:`check_link_params` names them); an ``extra`` value of ``None``
    removes that parameter. A parameter given more than once is written once (deep-link QA
    s38: an ignored ``page=`` and a repeated ``budget=`` stayed in the URL, so a shared link
    warned again).
    """
    known = known_params()
    current = {
        k: v for k, v in st.query_params.to_dict().items() if k not in IGNORED_PARAMS and k in known
    }
    if page_title is not None:
        foreign = {
            param
            for title, params in PAGE_URL_KEYS.items()
            if title != page_title
            for param in params
        } - set(PAGE_URL_KEYS.get(page_title, ()))
        current_kept = {k: v for k, v in current.items() if k not in foreign}
    else:
        current_kept = current
    wanted = shared_params()
    wanted.update({k: v for k, v in current_kept.items() if k not in URL_KEYS.values()})
    if page_title is not None:
        # The page's link settings, as the frame resolved them this run (from the link, a
        # widget's change, a package change), go into the run's one URL write: each written
        # on its own was a browser history entry of its own (QA s39).
        for param, text in st.session_state.get(PAGE_PARAMS_KEY, {}).get(page_title, {}).items():
            if text is None:
                wanted.pop(param, None)
            else:
                wanted[param] = text
    for k, v in (extra or {}).items():
        if v is None:
            wanted.pop(k, None)
        else:
            wanted[k] = v
    repeated = any(len(st.query_params.get_all(k)) > 1 for k in st.query_params)
    if st.query_params.to_dict() != wanted or repeated:
        st.query_params.from_dict(wanted)
    st.session_state[LAST_URL_KEY] = dict(wanted)


def page_link_params(page_title: str) -> dict[str, str]:
    """The URL parameters of a link to ``page_title``: the shared choices and that page's
    settings as last chosen in this session (so following the link writes nothing more:
    one browser history entry per page change)."""
    out = shared_params()
    settings = st.session_state.get(PAGE_PARAMS_KEY, {}).get(page_title, {})
    out.update({param: text for param, text in settings.items() if text is not None})
    return out


def link_text(value: Any) -> str:
    """A page setting as its link writes it: :func:`url_value`, and a list as its items
    joined by commas (``%`` and ``,`` inside an item escaped as ``%25`` and ``%2C``).

    >>> link_text(["writer:gvt", "store:a,b"]), link_text([]), link_text(0.5)
    ('writer:gvt,store:a%2Cb', '', '0.5')
    """
    if isinstance(value, (list, tuple)):
        return ",".join(str(v).replace("%", "%25").replace(",", "%2C") for v in value)
    return url_value(value)


def _times(count: int) -> str:
    return "twice" if count == 2 else f"{count:,} times"


def _bound_text(bound: float) -> str:
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


def parse_link_value(
    text: str,
    default: Any,
    choices: Any = None,
    bounds: tuple[float | None, float | None] = (None, None),
) -> tuple[Any, str | None]:
    """A page setting read from a link, of the type of its ``default``: ``(value, None)``,
    ``(None, why it was ignored)``, or for a list with unknown items, ``(the known items,
    which were ignored)`` (none known: ignored). ``choices`` are the values allowed (of a
    list's items); ``bounds`` the inclusive range of a number. The reason is Markdown, its
    values in code spans (:func:`md_value`).

    >>> parse_link_value("range", "package grid", ["package grid", "range"])
    ('range', None)
    >>> parse_link_value("yes", False), parse_link_value("2.5", 0, bounds=(0, None))
    ((True, None), (None, 'not a whole number'))
    >>> parse_link_value("0.2", 0.0, bounds=(0.0, 1.0)), parse_link_value("7", 2, bounds=(2, 5))
    ((0.2, None), (None, 'above the largest value allowed, 5'))
    >>> parse_link_value("9007199254740993", 0), parse_link_value("1e3", 0)
    ((9007199254740993, None), (1000, None))
    >>> parse_link_value("gvt,nope,gvt", [], ["gvt", "density"])
    (['gvt'], "`'nope'` is not one of: `'gvt'`, `'density'`; `'gvt'` is given twice")
    >>> parse_link_value("a,x,a,x,a", [], ["a"])
    (['a'], "`'x'` is not one of: `'a'`; `'a'` is given 3 times")
    """

    def one_of(item: Any) -> Any:
        for choice in choices:
            if choice == item:
                return choice
        return None

    def known() -> str:
        listed = ", ".join(
            md_value(c, 60) if isinstance(c, str) else link_text(c) for c in list(choices)[:12]
        )
        return listed + (", ..." if len(choices) > 12 else "")

    if isinstance(default, (list, tuple)):
        items = [
            part.replace("%2C", ",").replace("%2c", ",").replace("%25", "%")
            for part in (text.split(",") if text else [])
        ]
        problems = []
        counts = Counter(items)
        # Each unknown item named once, and repeats counted among the known items only: an
        # unknown one is ignored however often it comes (QA s49: 'fact', 'bogus', 'fact' were
        # "not one of" and 'fact' was also "given twice"; 3000 repeats were "given twice").
        unknown = [i for i in counts if choices is not None and one_of(i) is None]
        if unknown:
            problems.append(
                ", ".join(md_value(i, 60) for i in unknown[:5])
                + (f", ... ({len(unknown)} in all)" if len(unknown) > 5 else "")
                + (" are" if len(unknown) > 1 else " is")
                + f" not one of: {known()}"
            )
        ignored = set(unknown)
        repeated = [i for i, n in counts.items() if n > 1 and i not in ignored]
        if repeated:
            problems.append(
                ", ".join(f"{md_value(i, 60)} is given {_times(counts[i])}" for i in repeated[:5])
                + (f", ... ({len(repeated)} items repeated in all)" if len(repeated) > 5 else "")
            )
        value = list(dict.fromkeys(i if choices is None else one_of(i) for i in items))
        value = [v for v in value if v is not None]
        if items and not value:
            return None, "; ".join(problems)
        return value, "; ".join(problems) or None
    if isinstance(default, bool):
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True, None
        if lowered in ("0", "false", "no", "off"):
            return False, None
        return None, "use 1 or 0"
    if isinstance(default, (int, float)):
        exact = None
        if isinstance(default, int):
            try:
                exact = read_int(text)  # exactly: 9007199254740993 is not a float (QA s39)
            except ValueError:
                pass
        if exact is not None:
            number: float = exact
        else:
            read, problem = read_link_number(text)
            if read is None:
                return None, problem
            number = read
            if not math.isfinite(number):
                return None, "not a finite number"
            if isinstance(default, int):
                if not number.is_integer():
                    return None, "not a whole number"
                if abs(number) > 2**53:
                    return None, "write a whole number this large without an exponent"
                number = int(number)
        low, high = bounds
        if low is not None and number < low:
            return None, f"below the smallest value allowed, {_bound_text(low)}"
        if high is not None and number > high:
            return None, f"above the largest value allowed, {_bound_text(high)}"
        if choices is not None:
            match = one_of(number)
            if match is None:
                return None, f"not one of: {known()}"
            return match, None
        return number, None
    if choices is not None:
        match = one_of(text)
        if match is None:
            return None, f"not one of: {known()}"
        return match, None
    return text, None
