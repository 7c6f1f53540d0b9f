"""The predicate vocabulary (paper 3.3, Table 2): names, groups, values and their integer codes.

Every predicate value has a string label (what people and messages read: "T", "In", "GC") and a
small integer code (what the metrics compare). `UNK` (code -1) means the evidence was insufficient.

What the labels stand for (the README's glossary; the rules are in `rules`):

- T / N: true / no (false): the relation holds / does not (contact and the derived predicates).
- UNK: unknown, insufficient evidence (an entity missing or invisible, too few window samples, an
  UNK operand, a confidence under the floor).
- static, per ordered pair (subject, object), first that holds in priority In > Sup > Ab > Be > Ar:
  In: inside (the subject contained in a container); Sup: support, on a surface (resting on it,
  in contact); Ab / Be: above / below; Ar: around (near, without a more specific relation);
  none: no static relation.
- dynamic, per pair over the window: GC: getting close (distance falls); MA: moving apart
  (distance grows); MT: moving together (both move alike); FMT: fixed-moving together (one moves
  in contact with the other, which stays fixed); HT: halting together (both moved, both stopped);
  S: stable (the relative configuration does not change).
- derived (T / N / UNK): grasp(hand, object): the hand holds the object, a state that begins after
  a few frames of contact with the hand moving it or on it and lasts until contact ends (`hold_state`);
  release(hand, object): the event on the frame a hold's contact ends; active_hand(hand):
  the hand touches, approaches or moves with one of its objects; containment_event(object,
  container) / support_event(object, surface): the event on the frame In / Sup begins.
"""
from __future__ import annotations

from typing import Iterable

UNK = -1
UNK_LABEL = "UNK"

CONTACT = "contact"
STATIC = "static"
DYNAMIC = "dynamic"
DERIVED = "derived"
GROUPS = (CONTACT, STATIC, DYNAMIC, DERIVED)

# binary predicates (contact and the derived ones) use T / N
TRUE_LABEL = "T"
FALSE_LABEL = "N"
BINARY_VALUES = (FALSE_LABEL, TRUE_LABEL)  # codes 0, 1

# static spatial relation of an ordered pair; extraction priority In > Sup > Ab > Be > Ar > none
STATIC_VALUES = ("none", "In", "Sup", "Ab", "Be", "Ar")  # codes 0..5
STATIC_PRIORITY = ("In", "Sup", "Ab", "Be", "Ar", "none")

# dynamic spatial relation over a window of w frames
DYNAMIC_VALUES = ("S", "GC", "MA", "MT", "FMT", "HT")  # codes 0..5

GRASP = "grasp"
RELEASE = "release"
ACTIVE_HAND = "active_hand"
CONTAINMENT_EVENT = "containment_event"
SUPPORT_EVENT = "support_event"
DERIVED_PREDICATES = (GRASP, RELEASE, ACTIVE_HAND, CONTAINMENT_EVENT, SUPPORT_EVENT)

#: predicate name -> (group, value labels in code order)
PREDICATES: dict[str, tuple[str, tuple[str, ...]]] = {
    CONTACT: (CONTACT, BINARY_VALUES),
    STATIC: (STATIC, STATIC_VALUES),
    DYNAMIC: (DYNAMIC, DYNAMIC_VALUES),
    **{name: (DERIVED, BINARY_VALUES) for name in DERIVED_PREDICATES},
}


#: predicates of an unordered pair: contact(i, j) is contact(j, i); the others are per ordered pair
UNORDERED = (CONTACT, DYNAMIC)


def group_of(name: str) -> str:
    try:
        return PREDICATES[name][0]
    except KeyError:
        raise ValueError(f"unknown predicate {name!r}; expected one of {tuple(PREDICATES)}") from None


def values_of(name: str) -> tuple[str, ...]:
    """Value labels of predicate `name` in code order (UNK excluded)."""
    group_of(name)
    return PREDICATES[name][1]


_CODES = {(name, label): code for name, (_, values) in PREDICATES.items() for code, label in enumerate(values)}
_CODES.update({(name, UNK_LABEL): UNK for name in PREDICATES})


def encode(name: str, label: str) -> int:
    """Value label -> integer code (UNK -> -1)."""
    code = _CODES.get((name, label))
    if code is None:
        values = values_of(name)
        raise ValueError(f"predicate {name!r} has no value {label!r}; expected one of "
                         f"{values + (UNK_LABEL,)}")
    return code


def encode_all(names: Iterable[str], labels: Iterable[str]) -> list[int]:
    """`encode` of each (name, label) pair, at a dictionary look-up each (a monitor encodes over a
    hundred a frame); the first unknown pair raises `encode`'s error."""
    pairs = list(zip(names, labels))
    try:
        return [_CODES[pair] for pair in pairs]
    except KeyError:
        return [encode(name, label) for name, label in pairs]


def decode(name: str, code: int) -> str:
    """Integer code -> value label (-1 -> "UNK")."""
    if code == UNK:
        return UNK_LABEL
    values = values_of(name)
    if not 0 <= code < len(values):
        raise ValueError(f"predicate {name!r} has no value code {code}; expected -1..{len(values) - 1}")
    return values[code]
