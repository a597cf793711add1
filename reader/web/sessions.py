"""Login, when reader listens beyond loopback (READER_PASSWORD): the sessions (random ids
held in memory), the password's minimum length, and the throttle on wrong guesses (per
client address and overall, 429 with Retry-After). The access middleware uses them."""

from __future__ import annotations

import collections
import hashlib
import hmac
import ipaddress
import secrets
import time
from collections.abc import Callable

from starlette.types import Scope

SESSION_COOKIE = "reader_session"

SESSION_LIFETIME = 400 * 86400  # seconds; the cookie's max-age

# Wrong passwords (login form or bearer token): this many per client address, and this many
# from everyone together, within the window; then 429 until the oldest leaves the window.
FAILURES_PER_CLIENT = 5

FAILURES_OVERALL = 50

FAILURE_WINDOW = 300.0  # seconds


def client_key(scope: Scope) -> str:
    """Whom a wrong password is counted against: the address, or its /64 for IPv6, where
    one machine commonly holds a whole /64."""
    client = scope.get("client")
    if not client:
        return "unknown"
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return str(client[0])
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


class Throttle:
    """Counts wrong passwords in a sliding window, per client and overall. The overall
    ceiling is what stops an attacker with many addresses (or everyone behind one proxy);
    its price is that during such an attack the owner waits too, which beats a guessed
    password. Failures are recorded only when a try was allowed, so memory stays bounded
    by FAILURES_OVERALL entries per window."""

    def __init__(self, per_client: int = FAILURES_PER_CLIENT, overall: int = FAILURES_OVERALL,
                 window: float = FAILURE_WINDOW, clock: Callable[[], float] = time.monotonic):
        self.per_client, self.overall, self.window, self.clock = per_client, overall, window, clock
        self._all: collections.deque[float] = collections.deque()
        self._by_client: dict[str, collections.deque[float]] = {}

    def _prune(self, times: collections.deque[float], now: float) -> None:
        while times and times[0] <= now - self.window:
            times.popleft()

    def wait(self, client: str) -> float:
        """Seconds before this client may try a password again (0: now)."""
        now = self.clock()
        self._prune(self._all, now)
        if len(self._all) >= self.overall:
            return self._all[0] + self.window - now
        times = self._by_client.get(client)
        if times is not None:
            self._prune(times, now)
            if len(times) >= self.per_client:
                return times[0] + self.window - now
        return 0.0

    def failed(self, client: str) -> None:
        now = self.clock()
        self._all.append(now)
        self._by_client.setdefault(client, collections.deque()).append(now)
        if len(self._by_client) > 2 * self.overall:
            for key, times in list(self._by_client.items()):
                self._prune(times, now)
                if not times:
                    del self._by_client[key]

    def succeeded(self, client: str) -> None:
        self._by_client.pop(client, None)


class Sessions:
    """Login sessions: a random id per login, kept in this process's memory only.

    Why this design: the old cookie was HMAC(password, constant), the same forever, still
    valid after logout, and a way to test guessed passwords offline. A random id carries
    nothing about the password; logout deletes it server-side; a restart forgets every
    session (one more login, and nothing on disk to steal). Each id is stored with a
    fingerprint of the password it was granted under (HMAC with a per-process random key,
    so the fingerprint itself tests no guesses), and is honoured only while the current
    password has the same fingerprint: changing the password revokes every session even
    if the password someday changes without a restart. Ids are stored hashed and looked up
    by hash, so a lookup's timing says nothing about a near miss. The table is bounded:
    past `limit`, the oldest sessions are dropped."""

    def __init__(self, limit: int = 1000, lifetime: float = SESSION_LIFETIME,
                 clock: Callable[[], float] = time.time):
        self._key = secrets.token_bytes(32)
        self._live: dict[bytes, tuple[bytes, float]] = {}  # hash of id -> (password fingerprint, expiry)
        self.limit, self.lifetime, self.clock = limit, lifetime, clock

    def _fingerprint(self, password: str) -> bytes:
        return hmac.new(self._key, password.encode("utf-8", "surrogatepass"), "sha256").digest()

    @staticmethod
    def _id_hash(session_id: str) -> bytes:
        # a cookie may hold any text (non-ASCII included): it is only ever hashed
        return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).digest()

    def start(self, password: str) -> str:
        session_id = secrets.token_urlsafe(32)
        while len(self._live) >= self.limit:
            del self._live[next(iter(self._live))]  # dicts keep insertion order: the oldest
        self._live[self._id_hash(session_id)] = (self._fingerprint(password), self.clock() + self.lifetime)
        return session_id

    def valid(self, session_id: str | None, password: str) -> bool:
        if not session_id:
            return False
        entry = self._live.get(self._id_hash(session_id))
        if entry is None:
            return False
        fingerprint, expires = entry
        if expires < self.clock() or not hmac.compare_digest(fingerprint, self._fingerprint(password)):
            self._live.pop(self._id_hash(session_id), None)
            return False
        return True

    def end(self, session_id: str | None) -> None:
        if session_id:
            self._live.pop(self._id_hash(session_id), None)
