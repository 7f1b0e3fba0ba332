"""``bot.cachetrust``: the trust of a process in its cache folder, from the environment as it
is when asked; entries sealed with an HMAC bound to their kind and key; the secret in no
message, ``repr`` or header."""

from __future__ import annotations

import pytest

from bot import cachetrust

SECRET = "s3cr3t-" * 8


def test_the_environment_decides_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cachetrust.current() == cachetrust.Trust(None, False)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert cachetrust.current() == cachetrust.Trust(None, True) and not cachetrust.current().usable
    monkeypatch.setenv(cachetrust.KEY_ENV, SECRET)
    trust = cachetrust.current()
    assert trust.ci and trust.sealed and trust.usable
    monkeypatch.setenv(cachetrust.KEY_ENV, SECRET[:cachetrust.MIN_KEY_CHARS - 1])
    assert cachetrust.current() == cachetrust.Trust(None, True, short_key=True)
    monkeypatch.delenv("GITHUB_ACTIONS")
    monkeypatch.setenv("CI", "woodpecker")
    assert cachetrust.current().ci


def test_seal_binds_kind_key_and_payload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cachetrust.KEY_ENV, SECRET)
    trust = cachetrust.current()
    head = cachetrust.seal(trust, "lint", "ab" * 16, b"payload")
    assert head.startswith(b"benchbot-cache 2 hmac ")
    assert cachetrust.verify(trust, "lint", "ab" * 16, head, b"payload")
    for kind, k, payload in (("eval", "ab" * 16, b"payload"), ("lint", "cd" * 16, b"payload"),
                             ("lint", "ab" * 16, b"payloaD")):
        assert not cachetrust.verify(trust, kind, k, head, payload)
    unsealed = cachetrust.Trust(None, False)
    checksum = cachetrust.seal(unsealed, "lint", "ab" * 16, b"payload")
    assert checksum.startswith(b"benchbot-cache 2 sha256 ")
    assert not cachetrust.verify(trust, "lint", "ab" * 16, checksum, b"payload")  # a key reads sealed entries only
    assert not cachetrust.verify(unsealed, "lint", "ab" * 16, head, b"payload")


def test_the_secret_is_shown_nowhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cachetrust.KEY_ENV, SECRET)
    trust = cachetrust.current()
    assert trust.mac_key is not None
    shown = repr(trust) + str(trust) + trust.describe() + cachetrust.seal(trust, "t", "ab" * 16, b"x").decode()
    for secret in (SECRET, trust.mac_key.hex()):
        assert secret not in shown
