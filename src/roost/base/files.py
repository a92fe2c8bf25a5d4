"""Files written whole: a reader finds the old content or the new one, never half of either.

Every file roost writes for someone else to read (a kept reply, the events log's metadata, the
manifest cache, a host's hook config, the daemon's secrets) goes through here. The content goes
to a private temporary file beside the target (mode 0600 from its first byte, named
``.NAME.PID.RANDOM`` so concurrent writers never share one), which then takes the target's
place in one ``rename`` or ``link``. A write that fails leaves no temporary file behind.

``durable`` also asks the disk: the file is fsynced before it takes the target's place and the
directory after, so a machine that loses power finds the file whole. Roost asks for it where a
lost file costs the person something (the secrets, a host's config); the files written on every
hook event (replies, the events log, caches) do without, as a crash loses the tmux server they
describe anyway.

A file a person keeps (a host's settings, the service unit, maybe linked from a dotfiles
repository) is changed with :func:`update` and :func:`discard`: where it really is, through its
symbolic links, so a link stays and the file it names changes; and only once :func:`unwritable`
has found nothing in the way, or :class:`Unwritable` says what is, with nothing changed.

Imports only ``os``: the hook writes through here.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs the hook ~2 ms
if TYPE_CHECKING:
    from os import PathLike

PRIVATE = 0o600


def replace(
    path: str | PathLike[str], data: bytes | str, *, mode: int = PRIVATE, durable: bool = False
) -> None:
    """Make ``path`` hold ``data`` (text is written as UTF-8) with ``mode``, replacing what was there."""
    target = os.fspath(path)
    temp = _written(target, data, mode, durable)
    try:
        os.replace(temp, target)
    except BaseException:
        _discard(temp)
        raise
    if durable:
        _sync_directory(target)


def unsafe(path: str | PathLike[str], info: os.stat_result) -> str | None:
    """Why a private file (a secret, a token) cannot be trusted as it is: another user's, or
    open to others; None when it is the user's own, mode 0600 or narrower."""
    if info.st_uid != os.getuid():
        return f"{path} belongs to another user"
    mode = info.st_mode & 0o7777
    if mode & 0o077:
        return f"{path} is readable by others (mode {mode:o}); chmod 600 it"
    return None


class Unwritable(Exception):
    """A file a person keeps cannot be changed; the message names it and says why. Raised before
    anything changed, but for a failure no check foresaw (a full disk)."""


def update(path: str | PathLike[str], data: bytes | str, *, mode: int = 0o644) -> None:
    """Make the file ``path`` names hold ``data``, durably: the file its links end at, keeping
    the mode it has (``mode`` for a new one), its directories made as needed."""
    problem = unwritable(path)
    if problem:
        raise Unwritable(problem)
    real = target(path)
    try:
        os.makedirs(os.path.dirname(real) or ".", exist_ok=True)
        if os.path.exists(real):
            mode = os.stat(real).st_mode & 0o7777
        replace(real, data, mode=mode, durable=True)
    except OSError as error:
        raise Unwritable(f"cannot write {os.fspath(path)}: {error.strerror or error}") from error


def discard(path: str | PathLike[str]) -> str:
    """Remove a file roost owns outright and return where it was: through a symbolic link, the
    file the link ends at goes (it is roost's, whoever keeps it), then the link, which would
    name nothing."""
    name = os.fspath(path)
    problem = unremovable(name)
    if problem:
        raise Unwritable(problem)
    real = target(name)
    try:
        os.unlink(real)
        if real != name:
            os.unlink(name)
    except OSError as error:
        raise Unwritable(f"cannot remove {name}: {error.strerror or error}") from error
    return real


def target(path: str | PathLike[str]) -> str:
    """The file that replacing ``path`` must replace: ``path`` itself, or the file its symbolic
    links end at. A dotfiles manager keeps a person's settings as a link into their repository:
    replacing the link would cut the file off from the repository, and leave it unchanged there."""
    name = os.fspath(path)
    return os.path.realpath(name) if os.path.islink(name) else name


def unwritable(path: str | PathLike[str], *, follow: bool = True) -> str | None:
    """Why ``path`` cannot be replaced, made or removed as it stands, in words naming it; None
    when it can. ``follow`` (the default) asks of the file its links end at (:func:`target`),
    refusing a link that ends nowhere; without it, of the link itself, as removing it would.

    A file or directory with no write permission at all is read-only even to root, who could
    write it anyway: someone made it so on purpose (a settings file locked by hand, a Nix store)."""
    name = os.fspath(path)
    real = target(name) if follow else name
    shown = name if real == name else f"{name} (a link to {real})"
    if real != name and not os.path.exists(real):
        return f"{name} is a symbolic link to {real}, which does not exist"
    if os.path.isdir(real) and not os.path.islink(real):
        return f"{shown} is a directory, not a file"
    if os.path.lexists(real) and not os.path.islink(real) and not _open_to_writing(real):
        return f"{shown} is read-only"
    folder = os.path.dirname(real) or "."
    while not os.path.lexists(folder):  # the directories a write would make
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        return f"{shown} cannot be written: {folder} is not a directory"
    if not _open_to_writing(folder):
        return f"{shown} cannot be written: its directory {folder} is read-only"
    return None


def unremovable(path: str | PathLike[str]) -> str | None:
    """Why :func:`discard` would refuse ``path``: the file its links end at, or a link itself,
    cannot be removed; None when both can."""
    return unwritable(path) or unwritable(path, follow=False)


def _open_to_writing(path: str) -> bool:
    return bool(os.stat(path).st_mode & 0o222) and os.access(path, os.W_OK)


def create(path: str | PathLike[str], data: bytes | str, *, mode: int = PRIVATE) -> bool:
    """Make ``path`` hold ``data`` unless it exists already; whether this call made it.

    For a file made once and then only read (a key): two processes racing to make it both
    write, one wins, and both go on to read the winner's. Always durable.
    """
    target = os.fspath(path)
    temp = _written(target, data, mode, durable=True)
    try:
        os.link(temp, target)
    except FileExistsError:
        return False
    finally:
        _discard(temp)
    _sync_directory(target)
    return True


def _written(target: str, data: bytes | str, mode: int, durable: bool) -> str:
    """A temporary file beside ``target`` holding ``data``, with ``mode``."""
    directory, name = os.path.split(target)
    temp = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE)
    try:
        with open(fd, "wb") as out:
            out.write(data.encode() if isinstance(data, str) else data)
            out.flush()
            os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
    except BaseException:
        _discard(temp)
        raise
    return temp


def _discard(temp: str) -> None:
    try:  # noqa: SIM105 -- contextlib would cost the hook ~3 ms
        os.unlink(temp)
    except FileNotFoundError:
        pass


def _sync_directory(target: str) -> None:
    """fsync the directory holding ``target``, so the rename or link itself is on disk."""
    fd = os.open(os.path.dirname(target) or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
