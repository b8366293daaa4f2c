"""Which parts a chain of joints takes, in order: a limb's by names and position, the trunk's by spreading."""

from __future__ import annotations

ADJACENT = 0.5  # consecutive joints taking consecutive parts
REPEAT = 0.6  # a repeated name (``upper_arm.001``): the first segment is the joint

Roles = tuple[str, ...]


def label_chain(roles: list[Roles], parts: tuple[str, ...]) -> list[str | None]:
    """Parts (in order, each at most once) for the joints of a limb chain above its end, given
    the parts each joint's name allows (``roles``, top joint first).

    Best total score: a name naming the part scores 3 (2 if it names two
    parts), an unnamed joint 1, a name naming another part -4; consecutive
    joints taking consecutive parts (the last one next to the hand or foot)
    add 0.5; a repeated name's later segments lose 0.6 each; a joint left
    out whose name names one of the parts costs 1.
    """
    # state: (last part used, whether the previous joint took it) -> (score, parts taken so far)
    states: dict[tuple[int, bool], tuple[float, list[int | None]]] = {(-1, False): (0.0, [])}
    for index in range(len(roles)):
        following: dict[tuple[int, bool], tuple[float, list[int | None]]] = {}
        for (last, taken), (total, labels) in states.items():
            options = [((last, False), total + _skip(roles[index], parts), labels + [None])]
            for part in range(last + 1, len(parts)):
                bonus = ADJACENT if taken and part == last + 1 else 0.0
                options.append(((part, True), total + _score(roles, index, parts[part]) + bonus, labels + [part]))
            for key, value, new in options:
                if key not in following or value > following[key][0] + 1e-9:
                    following[key] = (value, new)
        states = following
    best = max(states.items(), key=lambda item: item[1][0] + (ADJACENT if item[0] == (len(parts) - 1, True)
                                                              else 0.0))
    return [None if part is None else parts[part] for part in best[1][1]]


def _score(roles: list[Roles], index: int, part: str) -> float:
    """What giving ``part`` to joint ``index`` is worth."""
    own = roles[index]
    if not own:
        return 1.0
    if part not in own:
        return -4.0
    repeat = 0
    while index - repeat > 0 and roles[index - repeat - 1] == own:
        repeat += 1
    return (3.0 if len(own) == 1 else 2.0) - REPEAT * repeat


def _skip(own: Roles, parts: tuple[str, ...]) -> float:
    """What leaving a joint without a part costs."""
    return -1.0 if set(own) & set(parts) else 0.0


def spread(count: int, slots: tuple[str, ...], single: str) -> list[str | None]:
    """Slots for a chain of ``count`` joints: ``single`` for one joint; else the first and the last
    slot, the middle slots spread evenly over the joints between, the rest folded."""
    if count == 0:
        return []
    if count == 1:
        return [single]
    out: list[str | None] = [None] * count
    out[0], out[-1] = slots[0], slots[-1]
    middle = slots[1:-1]
    if count - 2 >= len(middle):
        for number, slot in enumerate(middle, 1):
            out[round(number * (count - 1) / (len(middle) + 1))] = slot
    else:
        for index, slot in zip(range(1, count - 1), middle):
            out[index] = slot
    return out
