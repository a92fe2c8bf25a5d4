"""The second rule above precedence: a screen rule that says what a higher source's word hides.

Some agents end a failed turn as they end a good one: Gemini CLI fires its AfterAgent hook
after the model API refused the turn, just as after an answer, so the hook says ``done`` over a
screen that shows the error. A hook outranks the screen, so without this rule the badge would
say done, the roster idle, and a notification "done" for a turn that failed.

Such an agent's manifest marks the screen rule that reads the truth with the states it ends
(``overrules = ["done"]`` on a ``[[detect.rules]]`` entry; the engine never names an agent).
When the daemon's screen reader (:mod:`roost.daemon.screenwatch`) reads that rule, settled, on
a pane whose session shows one of those states by a higher source's word, :func:`judge` gives
the evidence, the roster (:meth:`roost.truth.roster.Roster.overrule`) withdraws the higher
sources' word (:func:`saying_above`) and takes the screen's reading in its place, and the
screen reader writes that reading on the pane's badge, where the hook wrote its word, so every
face says the same. ``explain`` keeps the ending under ``overruled``, beside the dialogs the
screen saw close.

It holds once. The same word again from that source, with nothing else said between, is a late
copy of the word already ended (the process scan read the hook's badge before the screen
rewrote it, or the hook's own post came late): the session refuses its activity, and
``explain`` lists it under ``rejected``. Any other word of the source ends that, so the next
turn (its hook's prompt) speaks over the screen again as usual; a rule holds only while it
matches, and its own ``unless_after`` makes the error line history once a newer prompt or
reply is under it, so a later good turn's ``done`` stands. Deciding is pure.
"""

from __future__ import annotations

from collections.abc import Collection

from roost.truth.roster import precedence, records
from roost.truth.roster.provenance import ACTIVITY, ClaimRef, Counts, Provenance


def judge(record: records.Record, holder: str | None, reading: str, overrules: Collection[str]) -> str | None:
    """The evidence that a screen reading of state ``reading``, by a rule that ends
    ``overrules``, ends what ``record`` shows by ``holder``'s word; None when it does not: the
    record's state is not one the rule ends, or no source above the screen holds it."""
    state = record.state
    if (
        state is None
        or state not in overrules
        or state == reading
        or record.liveness == records.ENDED
        or holder is None
        or not precedence.outranks(holder, precedence.SCREEN)
    ):
        return None
    return f"{holder} said {state}, and the screen shows {reading}, which its rule says ends {state}"


def saying_above(
    provenance: Provenance, source: str, counts: Counts, states: Collection[str]
) -> list[ClaimRef]:
    """The claims of sources above ``source`` whose activity says one of ``states`` (in roost's
    words) and shows, or would show once the one above it is withdrawn: what must go for
    ``source``'s word to count. Empty when no higher source holds one of them."""
    held = []
    for candidate in provenance.ranked(ACTIVITY, counts):
        if not precedence.outranks(candidate.ref.source, source):
            break
        if candidate.value.get("state") not in states:
            break
        held.append(candidate.ref)
    return held
