"""One failure for everything the swarm's checks refuse, told apart by ``code``.

A caller acts on every refusal the same way (answer 401 with the code, drop the document,
log it), so it is one class of :mod:`roost.errors`' table with the reason as data.
"""

from __future__ import annotations

from roost.errors import Unauthorized


class Refused(Unauthorized):
    """A token, request, record or sealed key the swarm will not accept; ``code`` says why
    (``malformed``, ``forged``, ``expired``, ``used``, ``other_swarm``, ``unknown_node``,
    ``revoked``, ``bad_signature``, ``skew``, ``replayed``, ``too_many``, ``wrong_key``,
    ``unsealable``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)
        self.code = code
