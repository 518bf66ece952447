"""The event-graph generator: a hidden, seeded world rendered as a conversation stream.

:func:`build_hidden_graph` draws a hidden world into a :class:`networkx.DiGraph`:

- **entities** (people) with **attributes** whose values change over time. Every attribute is
  a supersession chain of **version** nodes (``HAS_VERSION``); version j+1 ``SUPERSEDES``
  version j;
- **relations** between entities (``RELATED`` edges), static **preferences** (``PREFERS``),
  **abstention** topics (things a person declines to share or does not have);
- **events** with dates: point events and intervals (some told in one turn, some opened in one
  turn and closed in a later one), ordered by ``BEFORE`` edges. A ``BEFORE`` edge is
  *explicit* when a later turn names the earlier event ("5 days after Leo's driving test") and
  *implicit* between chronologically adjacent events; explicit edges and a seeded sample of
  implicit ones are *queried*;
- **sessions** of **turns** (``CONTAINS``), including distractor chatter; a turn ``STATES``
  the versions, events, preferences ... it talks about. Every random draw happens here, from
  one ``random.Random(seed)``.

:func:`event_graph` then derives the package deterministically from the graph:

- experiences: one per turn (``"Maya: I moved to Lisbon last month, so Berlin is no longer
  home."``), with its session and time index;
- evidence units: per attribute with k versions, 1 ``current_truth`` (the last version), k-1
  ``stale`` (the earlier versions) and k-1 ``invalidation`` units (one per supersession);
  ``fact`` (relations, events), ``preference``, ``temporal_order`` (queried ``BEFORE`` edges),
  ``temporal_interval`` (interval start / end), ``abstention`` and ``context`` (the topic of a
  session's small talk). Units carry no explicit weight: a unit weighs the sum of the weights
  of the queries requiring it, and every unit is required by at least one query;
- queries and their weights: current value 2.0, "is X still true" 1.5 for the latest
  supersession and 1.0 for older ones (invalidation + current truth), previous value 0.3,
  relation / preference / "which happened first" / interval duration / unanswerable 1.0,
  event date 0.75, interval start or end 0.5, session small talk 0.2;
- candidates, one per (experience, type), id ``f"{experience}:{type}"``. Coverage follows what
  the candidate's text states: ``raw_span`` (the whole turn) covers everything the turn states
  at 1.0 (an order unit at 0.5 when the turn gives only one of the two dates, an invalidation
  at 0.5 when the turn only implies it); ``atomic_fact`` states the new value only;
  ``summary`` keeps a seeded 0.6-0.8 share; ``tombstone`` covers the invalidation (and half
  the previous value); ``compound_update`` covers current truth, invalidation and the
  previous value; ``graph_edge`` covers a relation fact, or an event and its explicit order;
  ``interval_fact`` covers interval start / end; ``abstention`` covers an abstention unit.
  Distractor chatter offers a ``raw_span`` only, plus a ``summary`` for the turn that opens
  a session's small-talk topic (a low-weight ``context`` unit).

Costs follow ``cost_rule``: ``"words"`` (whitespace word count of the candidate's text),
``"chars"`` (characters) or ``"bytes_overhead"`` (8 + ceil(utf8_bytes / 24)).

Examples
--------
>>> pkg = event_graph(seed=1, n_experiences=12)
>>> pkg.id, len(pkg.experiences)
('event-graph-n12-s1', 12)
>>> pkg.meta["generator"], pkg.meta["seed"]
('event_graph', 1)
>>> g = build_hidden_graph(seed=1, n_experiences=12)
>>> sum(1 for _, d in g.nodes(data=True) if d["type"] == "turn")
12
"""

from __future__ import annotations

import datetime as _dt
import math
import random
from typing import TYPE_CHECKING, Any

from .. import costs
from ..errors import UsageError, cut_repr
from ..package import Package, parse_package
from .base import Family, check_count, param_error, titled, variant_names

if TYPE_CHECKING:
    import networkx as nx

FAMILY = "event_graph"
#: Candidate types this generator can offer (the ``candidate_types`` parameter picks a subset).
OFFERED_TYPES = (
    "raw_span",
    "atomic_fact",
    "summary",
    "tombstone",
    "compound_update",
    "graph_edge",
    "interval_fact",
    "abstention",
)
#: The rules of :data:`memaudit_core.costs.COST_RULES` this family offers (each gives whole
#: costs here).
COST_RULES = ("words", "chars", "bytes_overhead")
MAX_EXPERIENCES = 200_000
DEFAULT_DISTRACTOR_RATE = 0.2
BUDGET_GRID_FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2)

#: Query weights (a unit weighs the sum of the weights of the queries requiring it).
QUERY_WEIGHTS = {
    "now": 2.0,
    "still_latest": 1.5,
    "still_older": 1.0,
    "previous": 0.3,
    "relation": 1.0,
    "preference": 1.0,
    "event_date": 0.75,
    "order": 1.0,
    "interval_start": 0.5,
    "interval_end": 0.5,
    "interval_duration": 1.0,
    "abstention": 1.0,
    "context": 0.2,
}

#: Probability that a point event names an earlier event (explicit BEFORE edge).
P_EXPLICIT_ORDER = 0.4
#: Probability that an implicit BEFORE edge between adjacent events gets a query.
P_IMPLICIT_ORDER_QUERY = 0.25
#: Probability that an informative turn closes the speaker's open interval (when one is open).
P_CLOSE = 0.5
#: Coverage of an order unit by a candidate that states only one of the two dates.
HALF = 0.5
#: Coverage of an order unit or interval end by a summary that keeps only the month.
MONTH_ONLY = 0.3

START_DATE = _dt.date(2024, 1, 1)

# Vocabulary tables stay compact (one table, many short strings per line).
# fmt: off
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)

# --------------------------------------------------------------------------- world vocabulary

FIRST_NAMES = (
    "Maya", "Leo", "Ines", "Tomas", "Aisha", "Jonas", "Priya", "Mateo", "Sofia", "Kenji",
    "Amara", "Lukas", "Nadia", "Oscar", "Hana", "Rafael", "Zoe", "Emil", "Lina", "Omar",
    "Clara", "Felix", "Yara", "Hugo", "Mira", "Daniel", "Elif", "Noah", "Ada", "Ravi",
    "Greta", "Samuel", "Leila", "Marco", "Ingrid", "Tariq", "Julia", "Anton", "Farah", "Pablo",
    "Vera", "Kofi", "Alma", "Ivan", "Selin", "Bruno", "Keiko", "Malik", "Elena", "Jasper",
    "Noor", "Victor", "Lucia", "Arjun", "Freya", "Diego", "Mei", "Oskar", "Rosa", "Idris",
    "Thea", "Karim", "Nina", "Teo",
)
LAST_NAMES = (
    "Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Silva", "Kowalski", "Byrne",
    "Rossi", "Jensen", "Mendes", "Petrov", "Costa", "Weber", "Nakamura", "Khan", "Larsen",
    "Dubois", "Horvat", "Santos", "Fischer", "Ahmed", "Varga", "Quinn", "Ortega", "Berg",
    "Adeyemi", "Keller", "Sato", "Marsh", "Duarte", "Yilmaz", "Brennan", "Vogel", "Park",
    "Ferreira", "Lund", "Okoye", "Castillo", "Richter", "Ito", "Molina", "Falk", "Demir",
    "Hale", "Romano", "Aziz",
)
MAX_ENTITIES = len(FIRST_NAMES) * len(LAST_NAMES)

CITIES = (
    "Berlin", "Lisbon", "Porto", "Madrid", "Valencia", "Paris", "Lyon", "Rome", "Milan",
    "Vienna", "Prague", "Krakow", "Warsaw", "Budapest", "Athens", "Oslo", "Stockholm",
    "Copenhagen", "Helsinki", "Dublin", "Edinburgh", "Manchester", "London", "Amsterdam",
    "Rotterdam", "Brussels", "Zurich", "Geneva", "Munich", "Hamburg", "Toronto", "Montreal",
    "Boston", "Chicago", "Denver", "Seattle", "Austin", "Nairobi", "Cape Town", "Seoul", "Osaka",
    "Melbourne",
)
COMPANIES = (
    "Northwind", "Helios Labs", "Bluefin Analytics", "Corvid Games", "Tallgrass Foods",
    "Quarry Bank", "Lumen Health", "Atlas Freight", "Pinecone Studio", "Marlow & Finch",
    "Orbital Works", "Saltmarsh Press", "Kestrel Robotics", "Juniper Law", "Riverside Clinic",
    "Ironwood Builders", "Copperleaf Energy", "Halcyon Hotels", "Mosaic Media",
    "Granite Insurance",
)

#: Attributes whose values change over time. Templates: {e} entity, {v} value, {old} previous
#: value, {next} the value that replaced {v}.
ATTRIBUTES: dict[str, dict[str, Any]] = {
    "city": {
        "label": "home city",
        "values": CITIES,
        "intro": (
            "I live in {v} these days.",
            "Home for me is {v} at the moment.",
            "I've been living in {v} for a couple of years.",
        ),
        "explicit": (
            "I moved to {v} last month, so {old} is no longer home.",
            "I've left {old} for good, I live in {v} now.",
            "Big news: I moved from {old} to {v}.",
        ),
        "implicit": (
            "I finally moved to {v} last month.",
            "The new flat in {v} is starting to feel like home.",
        ),
        "fact": "{e} lives in {v}.",
        "stale": "{e} used to live in {v}.",
        "invalid": "{e} no longer lives in {v}.",
        "q_now": "Where does {e} live now?",
        "q_prev": "Where did {e} live before moving to {next}?",
        "q_still": "Does {e} still live in {v}?",
        "sum_intro": "{e} is based in {v}.",
        "sum_update": "{e} relocated to {v}.",
        "compound": "{e} moved from {old} to {v}; {old} is no longer current.",
    },
    "employer": {
        "label": "employer",
        "values": COMPANIES,
        "intro": ("I work at {v}.", "I've been at {v} for a while now."),
        "explicit": (
            "I left {old} and started at {v} this week.",
            "I quit {old}; my new job is at {v}.",
        ),
        "implicit": (
            "First week at {v} done, the new team is great.",
            "I just started a new job at {v}.",
        ),
        "fact": "{e} works at {v}.",
        "stale": "{e} used to work at {v}.",
        "invalid": "{e} no longer works at {v}.",
        "q_now": "Where does {e} work now?",
        "q_prev": "Where did {e} work before joining {next}?",
        "q_still": "Does {e} still work at {v}?",
        "sum_intro": "{e} is employed at {v}.",
        "sum_update": "{e} changed jobs to {v}.",
        "compound": "{e} left {old} and now works at {v}.",
    },
    "diet": {
        "label": "diet",
        "values": (
            "vegetarian", "vegan", "pescatarian", "flexitarian", "gluten-free", "dairy-free",
        ),
        "intro": ("I'm {v} at the moment.", "I've been {v} for years."),
        "explicit": (
            "I'm {v} now, I stopped being {old} in the spring.",
            "I'm not {old} any more, I've gone {v}.",
        ),
        "implicit": ("I've gone {v}, it's been surprisingly easy.",),
        "fact": "{e} is {v}.",
        "stale": "{e} used to be {v}.",
        "invalid": "{e} is no longer {v}.",
        "q_now": "What diet does {e} follow now?",
        "q_prev": "What diet did {e} follow before going {next}?",
        "q_still": "Is {e} still {v}?",
        "sum_intro": "{e} follows a {v} diet.",
        "sum_update": "{e} switched to a {v} diet.",
        "compound": "{e} switched from {old} to {v}; no longer {old}.",
    },
    "commute": {
        "label": "commute",
        "values": (
            "by bike", "by train", "by motorbike", "by bus", "on foot", "by tram", "by scooter",
            "by ferry",
        ),
        "intro": ("I get to work {v}.", "I usually commute {v}."),
        "explicit": (
            "I commute {v} now instead of {old}.",
            "No more travelling {old} for me, I go {v} now.",
        ),
        "implicit": ("I've started commuting {v}.",),
        "fact": "{e} commutes {v}.",
        "stale": "{e} used to commute {v}.",
        "invalid": "{e} no longer commutes {v}.",
        "q_now": "How does {e} get to work now?",
        "q_prev": "How did {e} commute before going {next}?",
        "q_still": "Does {e} still commute {v}?",
        "sum_intro": "{e} travels to work {v}.",
        "sum_update": "{e} now travels {v}.",
        "compound": "{e} switched from commuting {old} to commuting {v}.",
    },
    "sport": {
        "label": "main sport",
        "values": (
            "climbing", "swimming", "running", "yoga", "boxing", "cycling", "rowing", "tennis",
            "pilates", "judo",
        ),
        "intro": ("I do {v} twice a week.", "{V} is my thing, I never miss a session."),
        "explicit": (
            "I've given up {old}; {v} is my sport now.",
            "I stopped {old} and switched to {v}.",
        ),
        "implicit": ("I've taken up {v} and I'm hooked.",),
        "fact": "{e}'s main sport is {v}.",
        "stale": "{e}'s main sport used to be {v}.",
        "invalid": "{V} is no longer {e}'s main sport.",
        "q_now": "What is {e}'s main sport now?",
        "q_prev": "What sport did {e} do before {next}?",
        "q_still": "Is {v} still {e}'s main sport?",
        "sum_intro": "{e} practises {v}.",
        "sum_update": "{e} took up {v}.",
        "compound": "{e} gave up {old} and took up {v}.",
    },
    "drink": {
        "label": "morning drink",
        "values": (
            "coffee", "green tea", "black tea", "matcha", "espresso", "herbal tea",
            "hot chocolate", "yerba mate",
        ),
        "intro": ("I can't start the day without {v}.", "Mornings for me mean {v}."),
        "explicit": (
            "I've switched from {old} to {v} in the mornings.",
            "No more {old} in the morning, it's {v} now.",
        ),
        "implicit": ("These days it's {v} every morning for me.",),
        "fact": "{e}'s morning drink is {v}.",
        "stale": "{e}'s morning drink used to be {v}.",
        "invalid": "{V} is no longer {e}'s morning drink.",
        "q_now": "What does {e} drink in the morning now?",
        "q_prev": "What did {e} drink in the mornings before {next}?",
        "q_still": "Is {v} still {e}'s morning drink?",
        "sum_intro": "{e} drinks {v} in the morning.",
        "sum_update": "{e} now has {v} mornings.",
        "compound": "{e} switched from {old} to {v} as the morning drink.",
    },
}
ATTRIBUTE_KEYS = tuple(ATTRIBUTES)

RELATIONS = (
    "cousin", "neighbour", "colleague", "manager", "flatmate", "old school friend",
    "climbing partner", "landlord", "mentor", "ex-partner", "business partner",
    "childhood friend",
)
RELATION_TURNS = (
    "{b} is my {rel}, by the way.",
    "Did I mention that {b} is my {rel}?",
    "{b}? Oh, {b} is my {rel}.",
)

PREFERENCE_ITEMS = (
    "jazz", "opera", "horror films", "cilantro", "olives", "spicy food", "early mornings",
    "crowded beaches", "board games", "karaoke", "cold showers", "podcasts", "reality TV",
    "camping", "museums", "sushi", "musicals", "crosswords", "long train journeys",
    "thunderstorms", "sci-fi novels", "gardening", "chess", "winter", "heavy metal", "poetry",
)
LIKE_TURNS = ("I absolutely love {item}.", "Honestly, {item} is my favourite thing.",
              "Nothing beats {item} for me.")
DISLIKE_TURNS = ("I can't stand {item}.", "{Item} is really not my thing.",
                 "Please never suggest {item} to me.")

BANDS = ("the Night Owls", "Paper Lanterns", "Blue Harbour", "the Quiet Foxes", "Static Bloom")
BOOKS = ("War and Peace", "Middlemarch", "Moby-Dick", "The Odyssey", "Don Quixote")
#: Point events: (past-tense phrase, noun for "{e}'s {noun}").
POINT_EVENTS = (
    ("ran the {city} half marathon", "{city} half marathon"),
    ("passed the driving test", "driving test"),
    ("had a job interview at {company}", "job interview at {company}"),
    ("planted an apple tree in the garden", "apple tree planting"),
    ("gave a talk at a conference in {city}", "conference talk in {city}"),
    ("had knee surgery", "knee surgery"),
    ("saw {band} live in {city}", "{band} concert in {city}"),
    ("got a promotion", "promotion"),
    ("bought a second-hand piano", "piano purchase"),
    ("went to a wedding in {city}", "wedding trip to {city}"),
    ("finished reading {book}", "finishing {book}"),
    ("broke a wrist skiing", "skiing accident"),
    ("ran a charity bake sale", "charity bake sale"),
    ("hosted a dinner party for twelve", "dinner party"),
)
SUBJECTS = ("pottery", "Spanish", "photography", "welding", "first aid", "Italian cooking",
            "data science", "jazz piano")
PROJECTS = ("Aurora", "Basalt", "Cedar", "Drift", "Ember", "Fjord", "Garnet", "Harbor", "Indigo")
PLACES = ("Crete", "Sicily", "the Azores", "Iceland", "Bali", "Patagonia", "the Highlands",
          "Sardinia", "Morocco")
#: Interval events: noun (label "{e}'s {noun}"), one-turn form, opening form, closing form.
INTERVALS = (
    ("work stay in {city}", "I was in {city} for work from {start} to {end}.",
     "I flew to {city} for a long work assignment on {start}.",
     "I got back from the {city} assignment on {end}."),
    ("{subject} course", "I took a {subject} course from {start} to {end}.",
     "I started a {subject} course on {start}.",
     "My {subject} course wrapped up on {end}."),
    ("holiday in {place}", "I was on holiday in {place} from {start} to {end}.",
     "I left for a long holiday in {place} on {start}.",
     "I got back from {place} on {end}."),
    ("{project} project", "I led the {project} project from {start} to {end}.",
     "I started leading the {project} project on {start}.",
     "The {project} project wrapped up on {end}."),
)

#: Unanswerable topics: key, turn, question, answer, unit text, abstention candidate, summary.
ABSTENTIONS = (
    ("salary", "I'd rather not say how much I earn.", "How much does {e} earn?",
     "Unknown: {e} declined to say.", "{e}'s salary is unknown: {e} declined to share it.",
     "{e}'s salary: not disclosed; do not guess.", "{e} keeps money matters private."),
    ("age", "I never tell anyone my age, sorry.", "How old is {e}?",
     "Unknown: {e} does not share it.", "{e}'s age is unknown: {e} never shares it.",
     "{e}'s age: not disclosed; do not guess.", "{e} is private about personal details."),
    ("car", "I've never owned a car, never needed one.", "What car does {e} drive?",
     "None: {e} has never owned a car.", "{e} has no car, so there is no car to name.",
     "{e} owns no car; car questions have no answer.", "{e} lives without a car."),
    ("kids", "No kids for me, and none planned.", "What are {e}'s children called?",
     "There are none: {e} has no children.", "{e} has no children, so there are no names.",
     "{e} has no children; do not invent names.", "{e} has no children."),
    ("vote", "Who I vote for stays between me and the ballot box.",
     "Which party does {e} vote for?", "Unknown: {e} keeps it private.",
     "{e}'s vote is unknown: {e} keeps it private.",
     "{e}'s voting: private; do not guess.", "{e} avoids talking politics."),
    ("address", "I'm not giving out my home address, even to friends online.",
     "What is {e}'s home address?", "Unknown: {e} does not share it.",
     "{e}'s home address is unknown: not shared.",
     "{e}'s address: not disclosed; do not guess.", "{e} guards personal details."),
    ("dog", "I've never had a dog; my building doesn't allow them.",
     "What is {e}'s dog called?", "There is none: {e} has never had a dog.",
     "{e} has no dog, so there is no dog's name.",
     "{e} has no dog; dog questions have no answer.", "{e} has no dog."),
    ("birthday", "I don't celebrate my birthday and I keep the date to myself.",
     "When is {e}'s birthday?", "Unknown: {e} keeps the date private.",
     "{e}'s birthday is unknown: {e} keeps it private.",
     "{e}'s birthday: not disclosed; do not guess.", "{e} does not celebrate birthdays."),
)

#: Session small-talk topics: description (context unit) and lines.
CHATTER_TOPICS = (
    ("the endless rain", ("Is it ever going to stop raining?",
                          "I got soaked on the way here, again.",
                          "The forecast says more rain all week.")),
    ("the broken coffee machine", ("The coffee machine is broken again.",
                                   "Someone should really fix that coffee machine.",
                                   "I've been bringing a flask since the machine broke.")),
    ("last night's football match", ("Did anyone watch the match last night?",
                                     "That penalty in the second half was never a foul.",
                                     "Our team can't defend to save its life.")),
    ("a detective series on TV", ("I stayed up far too late finishing that detective series.",
                                  "No spoilers, but the last episode of that series was wild.",
                                  "Who do you think the killer in that series is?")),
    ("roadworks on the ring road", ("The roadworks on the ring road are a nightmare.",
                                    "It took me forty minutes to get past the roadworks.",
                                    "They've closed another lane on the ring road.")),
    ("the new noodle place", ("The new noodle place downstairs is worth a try.",
                              "I had the noodle place again for lunch, no regrets.",
                              "The queue at the noodle place was out the door.")),
)
FILLER_LINES = (
    "Ha, fair enough.", "Sorry, my connection dropped for a second.", "Anyway, where was I?",
    "Hang on, someone's at the door.", "Right, right, go on.",
    "Good question, let me think about it.", "Ugh, Mondays.",
    "Let me grab a glass of water first.", "Can you hear me okay?",
    "Sorry, I got distracted by a notification.",
)
#: Padding that makes raw turns longer than what they state.
PREFIXES = ("Oh, before I forget: ", "Quick update: ", "By the way: ", "Funny story: ")
SUFFIXES = (
    " Anyway, that's my news.", " It's been a hectic few weeks.",
    " Honestly, I'm still getting used to it.", " Long story, I'll tell you another time.",
    " Not that anyone asked!", " Just thought I'd mention it.",
)

#: Informative turn kinds (besides updates and interval closures), with their draw weights.
INFO_KINDS = ("intro", "relation", "preference", "event", "interval", "abstention")
INFO_WEIGHTS = (0.3, 0.13, 0.15, 0.22, 0.13, 0.07)
FALLBACK = ("intro", "update", "event", "relation", "preference", "interval", "abstention")
# fmt: on


# --------------------------------------------------------------------------- helpers


def _slug(text: str) -> str:
    out = []
    for ch in text.lower():
        if ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _date(day: int) -> _dt.date:
    return START_DATE + _dt.timedelta(days=day)


def _say_date(day: int) -> str:
    d = _date(day)
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def _say_month(day: int) -> str:
    d = _date(day)
    return f"{MONTHS[d.month - 1]} {d.year}"


def _days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


def cost_of(text: str, cost_rule: str) -> int:
    """A candidate's cost under one of this family's cost rules: the product's rule of that
    name (:func:`memaudit_core.costs.cost_of`), as the whole number it always is here.

    >>> cost_of("Maya lives in Lisbon.", "words"), cost_of("Maya lives in Lisbon.", "chars")
    (4, 21)
    >>> cost_of("Maya lives in Lisbon.", "bytes_overhead")
    9
    """
    if cost_rule not in COST_RULES:
        raise _unknown_cost_rule(cost_rule)
    return int(costs.cost_of(text, cost_rule))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_world_params(
    n_experiences: object, n_entities: object, update_rate: object, distractor_rate: object
) -> None:
    check_count(FAMILY, "n_experiences", n_experiences, 1, MAX_EXPERIENCES)
    if not _is_int(n_entities) or not 0 <= n_entities <= MAX_ENTITIES:  # type: ignore[operator]
        raise param_error(
            FAMILY,
            "n_entities",
            f"n_entities must be an integer from 0 (automatic) to {MAX_ENTITIES}, got "
            f"{cut_repr(n_entities)}",
            "count-range",
        )
    if not _is_number(update_rate) or not 0.0 <= update_rate <= 1.0:  # type: ignore[operator]
        raise param_error(
            FAMILY,
            "update_rate",
            f"update_rate must be a number in [0, 1], got {cut_repr(update_rate)}",
            "rate-range",
        )
    if not _is_number(distractor_rate) or not 0.0 <= distractor_rate < 1.0:  # type: ignore[operator]
        raise param_error(
            FAMILY,
            "distractor_rate",
            f"distractor_rate must be a number in [0, 1), got {cut_repr(distractor_rate)}",
            "rate-range",
        )


def resolve_entities(n_experiences: int, n_entities: int = 0) -> int:
    """The entity count: ``n_entities``, or when 0, max(2, ceil(n_experiences / 15)).

    >>> resolve_entities(50), resolve_entities(10_000), resolve_entities(50, 3)
    (4, 667, 3)
    """
    if n_entities:
        return n_entities
    return min(MAX_ENTITIES, max(2, -(-n_experiences // 15)))


def effective_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` (every parameter of :func:`event_graph`) with the values that build what the
    defaults build written as the defaults (:attr:`Family.effective`).

    - ``n_entities`` equal to what 0 picks for ``n_experiences`` (:func:`resolve_entities`)
      is 0 (QA s47: ``n_entities=2`` with 30 experiences was a second id for the package).
    - ``distractor_rate`` of a one-turn conversation is the default: the first turn is never
      chatter, so the rate is never consulted (nor a draw made for it).

    >>> effective_params({"n_experiences": 30, "n_entities": 2, "distractor_rate": 0.5})
    {'n_experiences': 30, 'n_entities': 0, 'distractor_rate': 0.5}
    >>> effective_params({"n_experiences": 1, "n_entities": 3, "distractor_rate": 0.5})
    {'n_experiences': 1, 'n_entities': 3, 'distractor_rate': 0.2}
    """
    out = dict(params)
    n, n_entities, rate = (out.get(k) for k in ("n_experiences", "n_entities", "distractor_rate"))
    if not (_is_int(n) and 1 <= n <= MAX_EXPERIENCES):  # type: ignore[operator]
        return out  # refused by the family, which names it
    if _is_int(n_entities) and n_entities == resolve_entities(n):  # type: ignore[arg-type]
        out["n_entities"] = 0
    if n == 1 and _is_number(rate) and 0.0 <= rate < 1.0:  # type: ignore[operator]
        out["distractor_rate"] = DEFAULT_DISTRACTOR_RATE
    return out


def parse_candidate_types(candidate_types: object) -> tuple[str, ...]:
    """The offered candidate types from ``"all"`` or a comma-separated list (offer order).

    >>> parse_candidate_types("summary, raw_span")
    ('raw_span', 'summary')
    """
    if not isinstance(candidate_types, str):
        raise param_error(
            FAMILY,
            "candidate_types",
            "candidate_types must be 'all' or a comma-separated string, got "
            f"{cut_repr(candidate_types)}",
            "candidate-types",
        )
    if candidate_types.strip().lower() == "all":
        return OFFERED_TYPES
    names = [part.strip() for part in candidate_types.split(",") if part.strip()]
    unknown = [name for name in names if name not in OFFERED_TYPES]
    if unknown:
        raise param_error(
            FAMILY,
            "candidate_types",
            f"unknown candidate type(s) {', '.join(map(repr, unknown))} in candidate_types "
            f"(known: {', '.join(OFFERED_TYPES)}, or 'all')",
            "candidate-types",
        )
    if not names:
        raise param_error(
            FAMILY,
            "candidate_types",
            f"candidate_types {cut_repr(candidate_types)} names no candidate type (use 'all')",
            "candidate-types",
        )
    return tuple(t for t in OFFERED_TYPES if t in names)


def canonical_candidate_types(candidate_types: object) -> str:
    """``candidate_types`` written one way: ``"all"``, or the types in offer order.

    Generator QA s38: "summary,raw_span" and "raw_span,summary", or "ALL" and the default,
    built the same candidates under different ids.

    >>> canonical_candidate_types(" tombstone, atomic_fact"), canonical_candidate_types("ALL")
    ('atomic_fact,tombstone', 'all')
    """
    offered = parse_candidate_types(candidate_types)
    return "all" if offered == OFFERED_TYPES else ",".join(offered)


def canonical_cost_rule(cost_rule: object) -> str:
    """``cost_rule`` if it names a cost rule (written only one way), else UsageError."""
    if not isinstance(cost_rule, str) or cost_rule not in COST_RULES:
        raise _unknown_cost_rule(cost_rule)
    return cost_rule


def _unknown_cost_rule(cost_rule: object) -> UsageError:
    return param_error(
        FAMILY,
        "cost_rule",
        f"unknown cost_rule {cut_repr(cost_rule)} (known: {', '.join(COST_RULES)})",
        "cost-rule",
    )


# --------------------------------------------------------------------------- hidden graph


class _World:
    """Mutable state while the hidden graph is drawn; every draw uses ``self.rng``."""

    def __init__(self, seed: int, n_entities: int) -> None:
        # networkx (0.18 s to import) loads with the first graph, not with the generators:
        # every pool worker of a script that generates packages imports them again.
        import networkx as nx

        self.rng = random.Random(seed)
        self.g = nx.DiGraph()
        self.entities: list[str] = []
        self.name: dict[str, str] = {}
        self.unintroduced: dict[str, list[str]] = {}
        self.chains: dict[str, list[str]] = {}  # entity -> introduced attribute nodes
        self.pairs: set[tuple[str, str]] = set()
        self.prefs: set[tuple[str, str]] = set()
        self.labels: set[tuple[str, str]] = set()
        self.abstained: set[tuple[str, str]] = set()
        self.pending: dict[str, list[tuple[str, int]]] = {}  # entity -> open intervals
        self.recent_points: list[str] = []
        self.n_events = 0
        self._add_entities(n_entities)

    def _add_entities(self, n: int) -> None:
        rng = self.rng
        if n <= len(FIRST_NAMES):
            names = rng.sample(FIRST_NAMES, n)
        else:
            picks = rng.sample(range(MAX_ENTITIES), n)
            names = [
                f"{FIRST_NAMES[i % len(FIRST_NAMES)]} {LAST_NAMES[i // len(FIRST_NAMES)]}"
                for i in picks
            ]
        for name in names:
            node = f"ent:{_slug(name)}"
            self.g.add_node(node, type="entity", name=name, slug=_slug(name))
            self.entities.append(node)
            self.name[node] = name
            self.unintroduced[node] = list(ATTRIBUTE_KEYS)
            self.chains[node] = []
            self.pending[node] = []

    # ---- turn kinds: each returns the turn's core sentence and attributes, or None

    def intro(self, who: str, turn: str, day: int, _session: int) -> tuple[str, dict] | None:
        options = self.unintroduced[who]
        if not options:
            return None
        rng = self.rng
        attr = options.pop(rng.randrange(len(options)))
        spec = ATTRIBUTES[attr]
        value = rng.choice(spec["values"])
        slug = self.g.nodes[who]["slug"]
        anode = f"attr:{slug}:{attr}"
        vnode = f"ver:{slug}:{attr}:0"
        self.g.add_node(anode, type="attribute", entity=who, attr=attr, label=spec["label"])
        self.g.add_edge(who, anode, type="HAS_ATTRIBUTE")
        self.g.add_node(
            vnode, type="version", entity=who, attr=attr, index=0, value=value, turn=turn, day=day
        )
        self.g.add_edge(anode, vnode, type="HAS_VERSION")
        self.g.add_edge(turn, vnode, type="STATES")
        self.chains[who].append(anode)
        text = rng.choice(spec["intro"]).format(v=value, V=_cap(value))
        return text, {"target": vnode}

    def update(self, who: str, turn: str, day: int, _session: int) -> tuple[str, dict] | None:
        rng = self.rng
        g = self.g
        open_chains = []
        for anode in self.chains[who]:
            spec = ATTRIBUTES[g.nodes[anode]["attr"]]
            if g.out_degree(anode) < len(spec["values"]):
                open_chains.append(anode)
        if not open_chains:
            return None
        anode = rng.choice(open_chains)
        attr = g.nodes[anode]["attr"]
        spec = ATTRIBUTES[attr]
        versions = list(g.successors(anode))
        used = [g.nodes[v]["value"] for v in versions]
        value = rng.choice([v for v in spec["values"] if v not in used])
        prev = versions[-1]
        old = g.nodes[prev]["value"]
        index = len(versions)
        vnode = f"ver:{g.nodes[who]['slug']}:{attr}:{index}"
        g.add_node(
            vnode,
            type="version",
            entity=who,
            attr=attr,
            index=index,
            value=value,
            turn=turn,
            day=day,
        )
        g.add_edge(anode, vnode, type="HAS_VERSION")
        g.add_edge(vnode, prev, type="SUPERSEDES", turn=turn)
        g.add_edge(turn, vnode, type="STATES")
        explicit = rng.random() < 0.6
        pool = spec["explicit"] if explicit else spec["implicit"]
        text = rng.choice(pool).format(v=value, V=_cap(value), old=old)
        return text, {"target": vnode, "previous": prev, "explicit": explicit}

    def relation(self, who: str, turn: str, day: int, _session: int) -> tuple[str, dict] | None:
        rng = self.rng
        if len(self.entities) < 2:
            return None
        for _ in range(4):
            other = rng.choice(self.entities)
            key = (min(who, other), max(who, other))
            if other != who and key not in self.pairs:
                break
        else:
            return None
        self.pairs.add(key)
        rel = rng.choice(RELATIONS)
        self.g.add_edge(who, other, type="RELATED", rel=rel, turn=turn)
        text = rng.choice(RELATION_TURNS).format(b=self.name[other], rel=rel)
        return text, {"relation": [who, other]}

    def preference(self, who: str, turn: str, day: int, _session: int) -> tuple[str, dict] | None:
        rng = self.rng
        for _ in range(4):
            item = rng.choice(PREFERENCE_ITEMS)
            if (who, item) not in self.prefs:
                break
        else:
            return None
        self.prefs.add((who, item))
        likes = rng.random() < 0.5
        pnode = f"pref:{self.g.nodes[who]['slug']}:{_slug(item)}"
        self.g.add_node(pnode, type="preference", entity=who, item=item, likes=likes, turn=turn)
        self.g.add_edge(who, pnode, type="PREFERS")
        self.g.add_edge(turn, pnode, type="STATES")
        pool = LIKE_TURNS if likes else DISLIKE_TURNS
        return rng.choice(pool).format(item=item, Item=_cap(item)), {"target": pnode}

    def _fill(self, template: str) -> str:
        rng = self.rng
        return template.format(
            city=rng.choice(CITIES),
            company=rng.choice(COMPANIES),
            band=rng.choice(BANDS),
            book=rng.choice(BOOKS),
            subject=rng.choice(SUBJECTS),
            project=rng.choice(PROJECTS),
            place=rng.choice(PLACES),
            start="{start}",
            end="{end}",
        )

    def _new_event(self, who: str, noun: str) -> str | None:
        if (who, noun) in self.labels:
            return None
        self.labels.add((who, noun))
        self.n_events += 1
        return f"ev{self.n_events}"

    def event(self, who: str, turn: str, day: int, _session: int) -> tuple[str, dict] | None:
        rng = self.rng
        for _ in range(4):
            phrase_t, noun_t = rng.choice(POINT_EVENTS)
            filled = self._fill(phrase_t + "|" + noun_t)
            phrase, noun = filled.split("|")
            ev = self._new_event(who, noun)
            if ev is not None:
                break
        else:
            return None
        ev_day = day - rng.randint(0, 10)
        g = self.g
        g.add_node(
            ev,
            type="event",
            kind="point",
            entity=who,
            noun=noun,
            phrase=phrase,
            day=ev_day,
            turn=turn,
        )
        g.add_edge(who, ev, type="PARTICIPATED")
        g.add_edge(turn, ev, type="STATES")
        text = f"I {phrase} on {_say_date(ev_day)}"
        attrs: dict[str, Any] = {"target": ev}
        earlier = [e for e in self.recent_points if g.nodes[e]["day"] < ev_day]
        if earlier and rng.random() < P_EXPLICIT_ORDER:
            ref = rng.choice(earlier)
            ref_data = g.nodes[ref]
            owner = "my" if ref_data["entity"] == who else f"{self.name[ref_data['entity']]}'s"
            gap = ev_day - ref_data["day"]
            text += f", {_days(gap)} after {owner} {ref_data['noun']}"
            g.add_edge(
                ref,
                ev,
                type="BEFORE",
                explicit=True,
                turn=turn,
                queried=True,
                flip=rng.random() < 0.5,
            )
            attrs["ref"] = ref
        self.recent_points.append(ev)
        if len(self.recent_points) > 30:
            del self.recent_points[0]
        return text + ".", attrs

    def interval(self, who: str, turn: str, day: int, session: int) -> tuple[str, dict] | None:
        rng = self.rng
        for _ in range(4):
            noun_t, whole_t, open_t, close_t = rng.choice(INTERVALS)
            filled = self._fill("|".join((noun_t, whole_t, open_t, close_t)))
            noun, whole, opening, closing = filled.split("|")
            ev = self._new_event(who, noun)
            if ev is not None:
                break
        else:
            return None
        is_open = rng.random() < 0.4
        g = self.g
        if is_open:
            start = day - rng.randint(0, 5)
            g.add_node(
                ev,
                type="event",
                kind="interval",
                entity=who,
                noun=noun,
                day=start,
                end_day=None,
                turn=turn,
                end_turn=None,
                closing=closing,
            )
            self.pending[who].append((ev, session))
            text = opening.format(start=_say_date(start))
        else:
            start = day - rng.randint(3, 40)
            end = min(day, start + rng.randint(1, 14))
            g.add_node(
                ev,
                type="event",
                kind="interval",
                entity=who,
                noun=noun,
                day=start,
                end_day=end,
                turn=turn,
                end_turn=turn,
                closing=closing,
            )
            text = whole.format(start=_say_date(start), end=_say_date(end))
        g.add_edge(who, ev, type="PARTICIPATED")
        g.add_edge(turn, ev, type="STATES", part="start" if is_open else "whole")
        return text, {"target": ev, "open": is_open}

    def can_close(self, who: str, session: int) -> bool:
        """Whether ``who`` has an interval opened in an earlier session that is still open."""
        return any(s < session for _, s in self.pending[who])

    def interval_close(
        self, who: str, turn: str, day: int, session: int
    ) -> tuple[str, dict] | None:
        ready = [i for i, (_, s) in enumerate(self.pending[who]) if s < session]
        if not ready:
            return None
        ev, _ = self.pending[who].pop(self.rng.choice(ready))
        data = self.g.nodes[ev]
        end = max(data["day"] + 1, day - self.rng.randint(0, 2))
        data["end_day"] = end
        data["end_turn"] = turn
        self.g.add_edge(turn, ev, type="STATES", part="end")
        return data["closing"].format(end=_say_date(end)), {"target": ev}

    def abstention(self, who: str, turn: str, day: int, _session: int) -> tuple[str, dict] | None:
        rng = self.rng
        for _ in range(3):
            idx = rng.randrange(len(ABSTENTIONS))
            if (who, ABSTENTIONS[idx][0]) not in self.abstained:
                break
        else:
            return None
        key = ABSTENTIONS[idx][0]
        self.abstained.add((who, key))
        node = f"abst:{self.g.nodes[who]['slug']}:{key}"
        self.g.add_node(node, type="abstention", entity=who, topic=idx, turn=turn)
        self.g.add_edge(who, node, type="DECLINES")
        self.g.add_edge(turn, node, type="STATES")
        return ABSTENTIONS[idx][1], {"target": node}


def build_hidden_graph(
    seed: int = 0,
    n_experiences: int = 50,
    n_entities: int = 0,
    update_rate: float = 0.25,
    distractor_rate: float = DEFAULT_DISTRACTOR_RATE,
) -> nx.DiGraph:
    """Draw the hidden world: entities, supersession chains, events, sessions and turns.

    Node ``type`` is one of entity, attribute, version, preference, event, abstention, session,
    turn; edge ``type`` one of HAS_ATTRIBUTE, HAS_VERSION, SUPERSEDES (newer -> older version),
    RELATED, PREFERS, DECLINES, PARTICIPATED, BEFORE (earlier -> later event; ``explicit`` when
    a turn names the earlier event, ``queried`` when a temporal-order query asks about it),
    CONTAINS (session -> turn) and STATES (turn -> what it states). Turn nodes carry the
    turn's text, speaker, index, session, day and summary quality ``q``. ``G.graph`` holds the
    seed and the parameters. Every draw comes from ``random.Random(seed)``.

    Raises
    ------
    UsageError
        For out-of-range parameters.
    """
    _check_world_params(n_experiences, n_entities, update_rate, distractor_rate)
    n_ent = resolve_entities(n_experiences, n_entities)
    world = _World(seed, n_ent)
    rng = world.rng
    g = world.g
    g.graph.update(
        seed=seed,
        params={
            "n_experiences": n_experiences,
            "n_entities": n_entities,
            "update_rate": update_rate,
            "distractor_rate": distractor_rate,
        },
        n_entities=n_ent,
        start_date=START_DATE.isoformat(),
    )
    width = max(3, len(str(n_experiences - 1)))
    day = 30
    session = 0
    left = 0
    participants: list[str] = []
    topic = 0
    topic_seen = False
    session_node = ""
    for t in range(n_experiences):
        if left == 0:
            session += 1
            left = rng.randint(6, 14)
            day += rng.randint(1, 5)
            size = min(len(world.entities), rng.choices((1, 2, 3), (0.35, 0.45, 0.2))[0])
            participants = rng.sample(world.entities, size)
            topic = rng.randrange(len(CHATTER_TOPICS))
            topic_seen = False
            session_node = f"ses:{session}"
            g.add_node(
                session_node,
                type="session",
                sid=f"s{session}",
                index=session,
                day=day,
                participants=list(participants),
                topic=topic,
                context_turns=[],
            )
        left -= 1
        turn = f"turn:{t}"
        who = rng.choice(participants)
        q = rng.randint(60, 80) / 100
        g.add_node(
            turn,
            type="turn",
            index=t,
            exp=f"e{t:0{width}d}",
            session=session_node,
            speaker=who,
            day=day,
            q=q,
        )
        g.add_edge(session_node, turn, type="CONTAINS")
        result = None
        kind = "chatter"
        if t == 0 or rng.random() >= distractor_rate:
            if rng.random() < update_rate:
                kind = "update"
            elif world.can_close(who, session) and rng.random() < P_CLOSE:
                kind = "interval_close"
            else:
                kind = rng.choices(INFO_KINDS, INFO_WEIGHTS)[0]
            for attempt in (kind, *FALLBACK):
                result = getattr(world, attempt)(who, turn, day, session)
                if result is not None:
                    kind = attempt
                    break
            else:
                kind = "chatter"
        node = g.nodes[turn]
        if result is None:
            if rng.random() < 0.5:
                kind = "chatter_topic"
                core = rng.choice(CHATTER_TOPICS[topic][1])
                node["opens_topic"] = not topic_seen
                topic_seen = True
                g.nodes[session_node]["context_turns"].append(turn)
            else:
                kind = "chatter_filler"
                core = rng.choice(FILLER_LINES)
            text = core
        else:
            core, attrs = result
            node.update(attrs)
            text = core
            if rng.random() < 0.3:
                text = rng.choice(PREFIXES) + text
            if rng.random() < 0.4:
                text += rng.choice(SUFFIXES)
        node["kind"] = kind
        node["text"] = f"{world.name[who]}: {text}"

    # Implicit BEFORE edges between chronologically adjacent events (strictly earlier day).
    events = [n for n, d in g.nodes(data=True) if d["type"] == "event"]
    events.sort(key=lambda e: (g.nodes[e]["day"], int(e[2:])))
    for a, b in zip(events, events[1:], strict=False):
        if g.nodes[a]["day"] < g.nodes[b]["day"] and not g.has_edge(a, b):
            g.add_edge(
                a,
                b,
                type="BEFORE",
                explicit=False,
                turn=None,
                queried=rng.random() < P_IMPLICIT_ORDER_QUERY,
                flip=rng.random() < 0.5,
            )
    return g


def graph_summary(g: nx.DiGraph) -> dict[str, int]:
    """Counts of the hidden graph (what ``meta.graph`` records)."""
    nodes: dict[str, int] = {}
    for _, d in g.nodes(data=True):
        nodes[d["type"]] = nodes.get(d["type"], 0) + 1
    edges: dict[str, int] = {}
    queried = explicit = 0
    for _, _, d in g.edges(data=True):
        edges[d["type"]] = edges.get(d["type"], 0) + 1
        if d["type"] == "BEFORE":
            queried += bool(d["queried"])
            explicit += bool(d["explicit"])
    return {
        "entities": nodes.get("entity", 0),
        "attributes": nodes.get("attribute", 0),
        "versions": nodes.get("version", 0),
        "supersessions": edges.get("SUPERSEDES", 0),
        "relations": edges.get("RELATED", 0),
        "preferences": nodes.get("preference", 0),
        "events": nodes.get("event", 0),
        "before_edges": edges.get("BEFORE", 0),
        "explicit_before_edges": explicit,
        "queried_before_edges": queried,
        "abstentions": nodes.get("abstention", 0),
        "sessions": nodes.get("session", 0),
        "turns": nodes.get("turn", 0),
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
    }


# --------------------------------------------------------------------------- derivation


def _chain_units(g: nx.DiGraph, anode: str) -> list[str]:
    """Unit ids of one attribute's versions: stale ones, then the current truth."""
    data = g.nodes[anode]
    slug = g.nodes[data["entity"]]["slug"]
    k = g.out_degree(anode)
    return [f"stale:{slug}:{data['attr']}:{j}" for j in range(k - 1)] + [
        f"current:{slug}:{data['attr']}"
    ]


class _Deriver:
    """Builds the package's units, queries, experiences and candidates from the graph."""

    def __init__(self, g: nx.DiGraph, offered: tuple[str, ...], cost_rule: str) -> None:
        self.g = g
        self.offered = frozenset(offered)
        self.cost_rule = cost_rule
        self.units: list[dict[str, Any]] = []
        self.queries: list[dict[str, Any]] = []
        self.experiences: list[dict[str, Any]] = []
        self.candidates: list[dict[str, Any]] = []
        self.version_unit: dict[str, str] = {}
        self.invalidation: dict[str, str] = {}  # superseded version -> invalidation unit
        self.orders: dict[str, list[tuple[str, bool]]] = {}  # event -> (unit, explicit)
        self.explicit_order: dict[str, str] = {}  # later event -> its explicit order unit

    def name(self, entity: str) -> str:
        return self.g.nodes[entity]["name"]

    def label(self, ev: str) -> str:
        d = self.g.nodes[ev]
        return f"{self.name(d['entity'])}'s {d['noun']}"

    def unit(self, unit_id: str, kind: str, text: str, meta: dict | None = None) -> str:
        u: dict[str, Any] = {"id": unit_id, "kind": kind, "text": text}
        if meta:
            u["meta"] = meta
        self.units.append(u)
        return unit_id

    def query(self, qid: str, text: str, answer: str, requires: list[str], weight: str) -> None:
        self.queries.append(
            {
                "id": qid,
                "text": text,
                "answer": answer,
                "requires": requires,
                "weight": QUERY_WEIGHTS[weight],
                "meta": {"category": weight},
            }
        )

    # ---- units and queries, walking the graph structure

    def world_units(self) -> None:
        g = self.g
        nodes = list(g.nodes(data=True))
        for anode, d in nodes:
            if d["type"] == "attribute":
                self.chain(anode, d)
        for a, b, d in g.edges(data=True):
            if d["type"] == "RELATED":
                sa, sb = g.nodes[a]["slug"], g.nodes[b]["slug"]
                fact = f"{self.name(b)} is {self.name(a)}'s {d['rel']}."
                uid = self.unit(f"rel:{sa}:{sb}", "fact", fact)
                self.query(
                    f"q:rel:{sa}:{sb}",
                    f"How does {self.name(a)} know {self.name(b)}?",
                    fact,
                    [uid],
                    "relation",
                )
        for pnode, d in nodes:
            if d["type"] == "preference":
                e = self.name(d["entity"])
                verb = "loves" if d["likes"] else "dislikes"
                uid = self.unit(pnode, "preference", f"{e} {verb} {d['item']}.")
                self.query(
                    f"q:{pnode}",
                    f"How does {e} feel about {d['item']}?",
                    f"{e} {verb} it.",
                    [uid],
                    "preference",
                )
        for ev, d in nodes:
            if d["type"] == "event":
                self.event(ev, d)
        for a, b, d in g.edges(data=True):
            if d["type"] == "BEFORE" and d["queried"]:
                uid = self.unit(
                    f"order:{a}:{b}",
                    "temporal_order",
                    f"{_cap(self.label(a))} happened before {self.label(b)}.",
                )
                first, second = (b, a) if d["flip"] else (a, b)
                self.query(
                    f"q:order:{a}:{b}",
                    f"Which happened first: {self.label(first)} or {self.label(second)}?",
                    _cap(self.label(a)),
                    [uid],
                    "order",
                )
                self.orders.setdefault(a, []).append((uid, False))
                self.orders.setdefault(b, []).append((uid, bool(d["explicit"])))
                if d["explicit"]:
                    self.explicit_order[b] = uid
        for anode, d in nodes:
            if d["type"] == "abstention":
                _, _, question, answer, text, _, _ = ABSTENTIONS[d["topic"]]
                e = self.name(d["entity"])
                uid = self.unit(f"abstain:{anode[5:]}", "abstention", text.format(e=e))
                self.query(
                    f"q:abstain:{anode[5:]}",
                    question.format(e=e),
                    answer.format(e=e),
                    [uid],
                    "abstention",
                )
        for _, d in nodes:
            if d["type"] == "session" and d["context_turns"]:
                desc = CHATTER_TOPICS[d["topic"]][0]
                sid = d["sid"]
                uid = self.unit(
                    f"context:{sid}", "context", f"Small talk in session {sid}: {desc}."
                )
                self.query(
                    f"q:context:{sid}",
                    f"What did the small talk in session {sid} revolve around?",
                    _cap(desc),
                    [uid],
                    "context",
                )

    def chain(self, anode: str, d: dict) -> None:
        g = self.g
        spec = ATTRIBUTES[d["attr"]]
        e = self.name(d["entity"])
        slug = g.nodes[d["entity"]]["slug"]
        versions = list(g.successors(anode))
        ids = _chain_units(g, anode)
        values = [g.nodes[v]["value"] for v in versions]
        k = len(versions)
        base = {"entity": slug, "attribute": d["attr"]}
        for j, (v, uid) in enumerate(zip(versions, ids, strict=True)):
            self.version_unit[v] = uid
            if j < k - 1:
                fmt = {"e": e, "v": values[j], "V": _cap(values[j])}
                self.unit(uid, "stale", spec["stale"].format(**fmt), {**base, "version": j})
            else:
                fmt = {"e": e, "v": values[j], "V": _cap(values[j])}
                self.unit(uid, "current_truth", spec["fact"].format(**fmt), {**base, "version": j})
        current = ids[-1]
        current_fact = spec["fact"].format(e=e, v=values[-1], V=_cap(values[-1]))
        for j in range(k - 1):
            fmt = {"e": e, "v": values[j], "V": _cap(values[j])}
            inv = self.unit(
                f"inv:{slug}:{d['attr']}:{j}",
                "invalidation",
                spec["invalid"].format(**fmt),
                {**base, "version": j},
            )
            self.invalidation[versions[j]] = inv
        self.query(
            f"q:now:{slug}:{d['attr']}", spec["q_now"].format(e=e), current_fact, [current], "now"
        )
        for j in range(k - 1):
            fmt = {"e": e, "v": values[j], "V": _cap(values[j]), "next": values[j + 1]}
            self.query(
                f"q:prev:{slug}:{d['attr']}:{j}",
                spec["q_prev"].format(**fmt),
                _cap(values[j]),
                [ids[j]],
                "previous",
            )
            self.query(
                f"q:still:{slug}:{d['attr']}:{j}",
                spec["q_still"].format(**fmt),
                f"No. {current_fact}",
                [self.invalidation[versions[j]], current],
                "still_latest" if j == k - 2 else "still_older",
            )

    def event(self, ev: str, d: dict) -> None:
        label = self.label(ev)
        if d["kind"] == "point":
            fact = f"{self.name(d['entity'])} {d['phrase']} on {_say_date(d['day'])}."
            uid = self.unit(f"event:{ev}", "fact", fact)
            self.query(
                f"q:when:{ev}", f"When was {label}?", _say_date(d["day"]), [uid], "event_date"
            )
            return
        start = self.unit(
            f"start:{ev}", "temporal_interval", f"{_cap(label)} started on {_say_date(d['day'])}."
        )
        self.query(
            f"q:start:{ev}",
            f"When did {label} start?",
            _say_date(d["day"]),
            [start],
            "interval_start",
        )
        if d["end_day"] is None:
            return
        end = self.unit(
            f"end:{ev}", "temporal_interval", f"{_cap(label)} ended on {_say_date(d['end_day'])}."
        )
        self.query(
            f"q:end:{ev}", f"When did {label} end?", _say_date(d["end_day"]), [end], "interval_end"
        )
        length = d["end_day"] - d["day"]
        self.query(
            f"q:duration:{ev}",
            f"How long did {label} last?",
            f"{_days(length)} ({_say_date(d['day'])} to {_say_date(d['end_day'])})",
            [start, end],
            "interval_duration",
        )

    # ---- experiences and candidates, turn by turn

    def add(self, exp: str, ctype: str, text: str, coverage: dict[str, float]) -> None:
        if ctype not in self.offered:
            return
        self.candidates.append(
            {
                "id": f"{exp}:{ctype}",
                "experience": exp,
                "type": ctype,
                "text": text,
                "cost": cost_of(text, self.cost_rule),
                "coverage": {u: c for u, c in coverage.items() if c > 0},
            }
        )

    def turns(self) -> None:
        g = self.g
        turns = [(n, d) for n, d in g.nodes(data=True) if d["type"] == "turn"]
        for _, d in turns:
            exp = d["exp"]
            self.experiences.append(
                {
                    "id": exp,
                    "time": d["index"],
                    "session": g.nodes[d["session"]]["sid"],
                    "text": d["text"],
                    "meta": {
                        "speaker": self.name(d["speaker"]),
                        "date": _date(d["day"]).isoformat(),
                        "kind": d["kind"],
                    },
                }
            )
            getattr(self, f"turn_{d['kind']}")(exp, d)

    def turn_chatter_topic(self, exp: str, d: dict) -> None:
        session = self.g.nodes[d["session"]]
        uid = f"context:{session['sid']}"
        if d.get("opens_topic"):
            self.add(exp, "raw_span", d["text"], {uid: 1.0})
            desc = CHATTER_TOPICS[session["topic"]][0]
            self.add(
                exp, "summary", f"{self.name(d['speaker'])} chatted about {desc}.", {uid: d["q"]}
            )
        else:
            self.add(exp, "raw_span", d["text"], {uid: HALF})

    def turn_chatter_filler(self, exp: str, d: dict) -> None:
        self.add(exp, "raw_span", d["text"], {})

    def turn_intro(self, exp: str, d: dict) -> None:
        v = d["target"]
        vd = self.g.nodes[v]
        spec = ATTRIBUTES[vd["attr"]]
        e = self.name(d["speaker"])
        fmt = {"e": e, "v": vd["value"], "V": _cap(vd["value"])}
        uid = self.version_unit[v]
        self.add(exp, "raw_span", d["text"], {uid: 1.0})
        self.add(exp, "atomic_fact", spec["fact"].format(**fmt), {uid: 1.0})
        self.add(exp, "summary", spec["sum_intro"].format(**fmt), {uid: d["q"]})

    def turn_update(self, exp: str, d: dict) -> None:
        g = self.g
        v, prev = d["target"], d["previous"]
        vd = g.nodes[v]
        spec = ATTRIBUTES[vd["attr"]]
        e = self.name(d["speaker"])
        old = g.nodes[prev]["value"]
        fmt = {"e": e, "v": vd["value"], "V": _cap(vd["value"]), "old": old}
        new_u, old_u, inv_u = self.version_unit[v], self.version_unit[prev], self.invalidation[prev]
        if d["explicit"]:
            raw = {new_u: 1.0, inv_u: 1.0, old_u: 1.0}
        else:
            raw = {new_u: 1.0, inv_u: HALF}
        q = d["q"]
        self.add(exp, "raw_span", d["text"], raw)
        self.add(exp, "atomic_fact", spec["fact"].format(**fmt), {new_u: 1.0})
        self.add(
            exp,
            "tombstone",
            spec["invalid"].format(e=e, v=old, V=_cap(old)),
            {inv_u: 1.0, old_u: HALF},
        )
        self.add(
            exp,
            "compound_update",
            spec["compound"].format(**fmt),
            {new_u: 1.0, inv_u: 1.0, old_u: 1.0},
        )
        self.add(
            exp,
            "summary",
            spec["sum_update"].format(**fmt),
            {new_u: q, inv_u: round(q * 0.75 * raw[inv_u], 2)},
        )

    def turn_relation(self, exp: str, d: dict) -> None:
        a, b = d["relation"]
        g = self.g
        rel = g.edges[a, b]["rel"]
        uid = f"rel:{g.nodes[a]['slug']}:{g.nodes[b]['slug']}"
        na, nb = self.name(a), self.name(b)
        self.add(exp, "raw_span", d["text"], {uid: 1.0})
        self.add(exp, "atomic_fact", f"{nb} is {na}'s {rel}.", {uid: 1.0})
        edge = rel.upper().replace(" ", "_").replace("-", "_")
        self.add(exp, "graph_edge", f"({na}) -[{edge}]-> ({nb})", {uid: 1.0})
        self.add(exp, "summary", f"{na} knows {nb}.", {uid: d["q"]})

    def turn_preference(self, exp: str, d: dict) -> None:
        p = self.g.nodes[d["target"]]
        e = self.name(d["speaker"])
        uid = d["target"]
        verb, keen = ("loves", "is keen on") if p["likes"] else ("dislikes", "is not keen on")
        self.add(exp, "raw_span", d["text"], {uid: 1.0})
        self.add(exp, "atomic_fact", f"{e} {verb} {p['item']}.", {uid: 1.0})
        self.add(exp, "summary", f"{e} {keen} {p['item']}.", {uid: d["q"]})

    def turn_event(self, exp: str, d: dict) -> None:
        ev = d["target"]
        ed = self.g.nodes[ev]
        e = self.name(d["speaker"])
        fact = f"event:{ev}"
        explicit = self.explicit_order.get(ev)
        raw = {fact: 1.0}
        dated = {fact: 1.0}
        summary = {fact: d["q"]}
        for uid, is_explicit in self.orders.get(ev, ()):
            raw[uid] = 1.0 if is_explicit else HALF
            dated[uid] = HALF
            summary[uid] = MONTH_ONLY
        date = _say_date(ed["day"])
        self.add(exp, "raw_span", d["text"], raw)
        self.add(exp, "atomic_fact", f"{e} {ed['phrase']} on {date}.", dated)
        if explicit is not None:
            ref = d["ref"]
            edge_text = f"({self.label(ref)}) -[BEFORE]-> ({self.label(ev)}, {date})"
            summary_text = (
                f"{e} {ed['phrase']} in {_say_month(ed['day'])}, after {self.label(ref)}."
            )
            summary[explicit] = d["q"]
            self.add(exp, "graph_edge", edge_text, {fact: 1.0, explicit: 1.0})
        else:
            self.add(exp, "graph_edge", f"({e}) -[DID]-> ({ed['noun']}, {date})", {fact: 1.0})
            summary_text = f"{e} {ed['phrase']} in {_say_month(ed['day'])}."
        self.add(exp, "summary", summary_text, summary)

    def turn_interval(self, exp: str, d: dict) -> None:
        ev = d["target"]
        ed = self.g.nodes[ev]
        label = _cap(self.label(ev))
        start = f"start:{ev}"
        orders = self.orders.get(ev, ())
        start_date = _say_date(ed["day"])
        if d["open"]:
            raw = {start: 1.0}
            interval = {start: 1.0}
            interval_text = f"{label}: from {start_date}, ongoing."
            summary = {start: MONTH_ONLY}
            summary_text = f"{label} began in {_say_month(ed['day'])}."
        else:
            end = f"end:{ev}"
            raw = {start: 1.0, end: 1.0}
            interval = {start: 1.0, end: 1.0}
            interval_text = f"{label}: {start_date} to {_say_date(ed['end_day'])}."
            summary = {start: MONTH_ONLY, end: MONTH_ONLY}
            summary_text = f"{label} took place in {_say_month(ed['day'])}."
        atomic = {start: 1.0}
        for uid, _ in orders:
            raw[uid] = atomic[uid] = interval[uid] = HALF
            summary[uid] = MONTH_ONLY
        self.add(exp, "raw_span", d["text"], raw)
        self.add(exp, "atomic_fact", f"{label} began on {start_date}.", atomic)
        self.add(exp, "interval_fact", interval_text, interval)
        self.add(exp, "summary", summary_text, summary)

    def turn_interval_close(self, exp: str, d: dict) -> None:
        ev = d["target"]
        ed = self.g.nodes[ev]
        label = _cap(self.label(ev))
        end = f"end:{ev}"
        self.add(exp, "raw_span", d["text"], {end: 1.0})
        self.add(exp, "atomic_fact", f"{label} ended on {_say_date(ed['end_day'])}.", {end: 1.0})
        self.add(exp, "summary", f"{label} is over.", {end: MONTH_ONLY})

    def turn_abstention(self, exp: str, d: dict) -> None:
        a = self.g.nodes[d["target"]]
        _, _, _, _, _, cand, summary = ABSTENTIONS[a["topic"]]
        e = self.name(d["speaker"])
        uid = f"abstain:{d['target'][5:]}"
        self.add(exp, "raw_span", d["text"], {uid: 1.0})
        self.add(exp, "abstention", cand.format(e=e), {uid: 1.0})
        self.add(exp, "summary", summary.format(e=e), {uid: d["q"]})


def event_graph(
    seed: int = 0,
    n_experiences: int = 50,
    n_entities: int = 0,
    update_rate: float = 0.25,
    distractor_rate: float = DEFAULT_DISTRACTOR_RATE,
    candidate_types: str = "all",
    cost_rule: str = "words",
    budget_fraction: float = 0.1,
) -> Package:
    """A package derived from a seeded hidden event graph (see the module docstring).

    Parameters
    ----------
    seed
        Seed of the one ``random.Random`` every draw comes from.
    n_experiences
        Conversation turns (experiences), 1 to 200,000.
    n_entities
        People in the world, 0 to 3,072 (every first and last name paired); 0 (default) picks
        max(2, ceil(n_experiences / 15)).
    update_rate
        Probability that an informative turn updates an attribute already stated (a new
        version superseding the last one), in [0, 1].
    distractor_rate
        Probability that a turn is distractor chatter, in [0, 1). The first turn never is.
    candidate_types
        ``"all"`` or a comma-separated subset of raw_span, atomic_fact, summary, tombstone,
        compound_update, graph_edge, interval_fact, abstention.
    cost_rule
        ``"words"`` (whitespace words of the candidate text), ``"chars"`` or
        ``"bytes_overhead"`` (8 + ceil(utf8_bytes / 24)).
    budget_fraction
        Default budget = ceil(budget_fraction * total candidate cost), in (0, 1]. The budget
        grid is ceil of 1%, 2%, 5%, 10% and 20% of the total cost (distinct values).

    Raises
    ------
    UsageError
        For an out-of-range or unknown parameter value.
    """
    _check_world_params(n_experiences, n_entities, update_rate, distractor_rate)
    candidate_types = canonical_candidate_types(candidate_types)
    offered = parse_candidate_types(candidate_types)
    cost_rule = canonical_cost_rule(cost_rule)
    if not _is_number(budget_fraction) or not 0.0 < budget_fraction <= 1.0:
        raise param_error(
            FAMILY,
            "budget_fraction",
            f"budget_fraction must be a number in (0, 1], got {cut_repr(budget_fraction)}",
            "budget-fraction",
        )
    # Id, title and meta record the values as the defaults when they build the same (QA s47).
    eff = effective_params(
        {
            "n_experiences": n_experiences,
            "n_entities": n_entities,
            "distractor_rate": distractor_rate,
        }
    )
    n_entities, distractor_rate = eff["n_entities"], eff["distractor_rate"]
    g = build_hidden_graph(seed, n_experiences, n_entities, update_rate, distractor_rate)
    deriver = _Deriver(g, offered, cost_rule)
    deriver.world_units()
    deriver.turns()
    total = sum(c["cost"] for c in deriver.candidates)
    budget = max(1, math.ceil(budget_fraction * total)) if total else 1
    budgets = (
        sorted({max(1, math.ceil(f * total)) for f in BUDGET_GRID_FRACTIONS}) if total else [1]
    )
    params = {
        "n_experiences": n_experiences,
        "n_entities": n_entities,
        "update_rate": update_rate,
        "distractor_rate": distractor_rate,
        "candidate_types": candidate_types,
        "cost_rule": cost_rule,
        "budget_fraction": budget_fraction,
    }
    summary = graph_summary(g)
    id_tag, details = variant_names(event_graph, params, shown=("n_experiences",))
    package_id = f"event-graph-n{n_experiences}-s{seed}{id_tag}"
    doc = {
        "memaudit": 1,
        "id": package_id,
        "title": titled("Event graph", [f"n={n_experiences}", f"seed={seed}", *details]),
        "description": (
            f"A conversation of {n_experiences} turns among {summary['entities']} people, "
            f"rendered from a hidden event graph: {summary['versions']} attribute versions in "
            f"{summary['attributes']} supersession chains, {summary['events']} dated events, "
            f"{summary['sessions']} sessions with distractor chatter."
        ),
        "cost_unit": cost_rule,
        "objective": {"saturation": "cap1"},
        "budget": budget,
        "budgets": budgets,
        "experiences": deriver.experiences,
        "units": deriver.units,
        "queries": deriver.queries,
        "candidates": deriver.candidates,
        "meta": {"generator": FAMILY, "params": params, "seed": seed, "graph": summary},
    }
    return parse_package(doc, source=f"generated:{package_id}")


FAMILY_RECORDS: list[Family] = [
    Family(
        FAMILY,
        event_graph,
        True,
        "A conversation rendered from a seeded hidden event graph: supersession chains, dated "
        "events and their order, intervals, preferences, unanswerable questions and chatter.",
        {
            # The ranges _check_world_params enforces, from its constants (QA s45: n_entities
            # gave none, while values past MAX_ENTITIES were refused).
            "n_experiences": f"conversation turns (experiences), 1 to {MAX_EXPERIENCES:,}",
            "n_entities": (
                f"people in the world, 0 to {MAX_ENTITIES:,} (0 = max(2, ceil(n_experiences / 15)))"
            ),
            "update_rate": (
                "probability that an informative turn updates a stated attribute, in [0, 1]"
            ),
            "distractor_rate": "probability that a turn is distractor chatter, in [0, 1)",
            "candidate_types": "'all' or comma-separated offered candidate types",
            "cost_rule": "words | chars | bytes_overhead (8 + ceil(utf8_bytes / 24))",
            "budget_fraction": (
                "default budget as a fraction of the total candidate cost, in (0, 1]"
            ),
        },
        lambda n_experiences, **_: 9 * n_experiences,
        {"candidate_types": canonical_candidate_types, "cost_rule": canonical_cost_rule},
        effective=effective_params,
    )
]
