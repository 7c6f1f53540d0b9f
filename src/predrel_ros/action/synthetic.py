"""Scripted predicate streams with known primitives, for tests and the `action` benchmark.

A scene of hand 1, object 2, container 3 and table 4 goes through the phases of a task (pick and
place, insert, remove); each phase fixes the predicate values of the hand-object, object-container,
object-table and container-table pairs and of the hand, laid out exactly as `PredicateExtractor`
emits them (the same predicates per pair, the same orientations), with seeded confidences, UNKs and
value flips. Seconds to build, no simulator, so learnability and timing tests stay fast.
"""
from __future__ import annotations

import numpy as np

from predrel_ros.action.streams import EpisodeStream
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate

HAND, OBJECT, CONTAINER, TABLE = 1, 2, 3, 4
_HO, _OC, _OT, _CT = (HAND, OBJECT), (OBJECT, CONTAINER), (OBJECT, TABLE), (CONTAINER, TABLE)
#: predicates per pair, in the extractor's order
_LAYOUT = {_HO: ("contact", "static", "dynamic", "grasp", "release"),
           _OC: ("contact", "static", "dynamic", "containment_event", "support_event"),
           _OT: ("contact", "static", "dynamic", "support_event"),
           _CT: ("contact", "static", "dynamic", "support_event")}

# phase -> {(pair, predicate): value}; pairs not named keep the idle values
_IDLE = {(_HO, "contact"): "N", (_HO, "static"): "Ar", (_HO, "dynamic"): "S", (_HO, "grasp"): "N",
         (_HO, "release"): "N", (_OC, "contact"): "N", (_OC, "static"): "Ar", (_OC, "dynamic"): "S",
         (_OC, "containment_event"): "N", (_OC, "support_event"): "N", (_OT, "contact"): "T",
         (_OT, "static"): "Sup", (_OT, "dynamic"): "S", (_OT, "support_event"): "N", (_CT, "contact"): "T",
         (_CT, "static"): "Sup", (_CT, "dynamic"): "S", (_CT, "support_event"): "N", "active_hand": "N"}
_PHASES = {
    "idle": {},
    "approach": {(_HO, "static"): "Ab", (_HO, "dynamic"): "GC", "active_hand": "T"},
    "grasp": {(_HO, "contact"): "T", (_HO, "dynamic"): "HT", "active_hand": "T"},
    "transport": {(_HO, "contact"): "T", (_HO, "dynamic"): "MT", (_HO, "grasp"): "T", (_OT, "contact"): "N",
                  (_OT, "static"): "Ab", (_OT, "dynamic"): "MA", "active_hand": "T"},
    "place": {(_HO, "contact"): "T", (_HO, "dynamic"): "MT", (_HO, "grasp"): "T", (_OT, "static"): "Ab",
              (_OT, "contact"): "N", (_OT, "dynamic"): "GC", "active_hand": "T"},
    "insert": {(_HO, "contact"): "T", (_HO, "dynamic"): "MT", (_HO, "grasp"): "T", (_OT, "contact"): "N",
               (_OT, "static"): "Ab", (_OC, "static"): "Ab", (_OC, "dynamic"): "GC", "active_hand": "T"},
    "remove": {(_HO, "contact"): "T", (_HO, "dynamic"): "MT", (_HO, "grasp"): "T", (_OT, "contact"): "N",
               (_OT, "static"): "Ab", (_OC, "static"): "In", (_OC, "dynamic"): "MA", "active_hand": "T"},
    "release": {(_HO, "dynamic"): "MA", "active_hand": "T"},
}
#: one-frame events: phase -> (key, value, on the phase's first (0) or last (-1) frame)
_EVENTS = {"release": ((_HO, "release"), "T", 0), "place": ((_OT, "support_event"), "T", -1),
           "insert": ((_OC, "containment_event"), "T", -1)}
#: the object's resting relation after a phase (object-table and object-container)
_AFTER = {"place": {(_OT, "static"): "Sup", (_OT, "contact"): "T"},
          "insert": {(_OC, "static"): "In", (_OC, "contact"): "T", (_OT, "contact"): "N", (_OT, "static"): "Ab"},
          "remove": {(_OC, "static"): "Ar", (_OC, "contact"): "N"}}
TASKS = {
    "pick_and_place": ("idle", "approach", "grasp", "transport", "place", "release", "idle"),
    "insert": ("idle", "approach", "grasp", "transport", "insert", "release", "idle"),
    "remove": ("idle", "approach", "grasp", "remove", "transport", "place", "release", "idle"),
}


def scripted_stream(task: str, seed: int, frames_per_phase: tuple[int, int] = (8, 16),
                    unk_rate: float = 0.03, flip_rate: float = 0.03, name: str = "") -> EpisodeStream:
    """One episode of `task` (a key of TASKS); phase lengths, confidences and noise drawn from `seed`."""
    rng = np.random.default_rng(seed)
    resting: dict = {}
    frames: list[tuple[int, list[PredicateEstimate]]] = []
    labels: list[str] = []
    if task == "remove":
        resting.update(_AFTER["insert"])
    for phase in TASKS[task]:
        length = int(rng.integers(frames_per_phase[0], frames_per_phase[1] + 1))
        for step in range(length):
            values = {**_IDLE, **resting, **_PHASES[phase]}
            event = _EVENTS.get(phase)
            if event is not None and step == (0 if event[2] == 0 else length - 1):
                values[event[0]] = event[1]
            frame_index = len(labels)
            frames.append((frame_index, _estimates(values, frame_index, rng, unk_rate, flip_rate)))
            labels.append(phase)
        resting.update(_AFTER.get(phase, {}))
    return EpisodeStream(name or f"{task}-{seed}", "synthetic", frames, labels)


def _estimates(values: dict, frame_index: int, rng: np.random.Generator, unk_rate: float,
               flip_rate: float) -> list[PredicateEstimate]:
    out = []
    keys = [(pair, name) for pair, names in _LAYOUT.items() for name in names] + [((HAND, NO_OBJECT), "active_hand")]
    for pair, name in keys:
        value = values[name] if name == "active_hand" else values[(pair, name)]
        draw = rng.random()
        if draw < unk_rate:
            value = vocabulary.UNK_LABEL
        elif draw < unk_rate + flip_rate:
            value = str(rng.choice(vocabulary.values_of(name)))
        confidence = float(rng.uniform(0.6, 1.0))
        out.append(PredicateEstimate(name, pair[0], pair[1], value, confidence, frame_index=frame_index))
    return out


def scripted_streams(count: int, seed: int) -> list[EpisodeStream]:
    """`count` episodes cycling through the tasks, episode i drawn from (seed, i)."""
    tasks = list(TASKS)
    return [scripted_stream(tasks[i % len(tasks)], int(np.random.SeedSequence([seed, i]).generate_state(1)[0]))
            for i in range(count)]
