"""A node's identity from its seed: stable keys, a separate sealing key, a certificate made
from the node key, and pinning that accepts that key alone."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from roost.base import cjson, files
from roost.daemon import secrets
from roost.remote.swarm.fields import b64, unb64
from roost.remote.swarm.identity import Identity, certificate_key, fingerprint, pinned, verify
from tests.swarm.helpers import NOW, node


def test_the_same_seed_gives_the_same_keys_and_the_stored_id_is_kept() -> None:
    seed = bytes(range(32))
    one, two = Identity.from_seed("a1b2c3d4e5f60718", seed), Identity.from_seed("a1b2c3d4e5f60718", seed)
    assert one.public_key == two.public_key and one.x25519_public_key == two.x25519_public_key
    assert one.node_id == "a1b2c3d4e5f60718"
    raw = Ed25519PrivateKey.from_private_bytes(seed).public_key()
    assert one.public_key == raw.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def test_the_sealing_key_is_derived_not_the_signing_key() -> None:
    ident = node("alpha")
    assert ident.x25519_public_key != ident.public_key
    assert len(ident.x25519_public_key) == 32
    assert node("beta").x25519_public_key != ident.x25519_public_key


def test_the_public_key_spellings_and_fingerprint() -> None:
    ident = node("alpha")
    assert unb64(ident.public_b64, 32) == ident.public_key
    assert "=" not in ident.public_b64
    assert bytes.fromhex(ident.public_hex) == ident.public_key
    assert (
        ident.fingerprint
        == hashlib.sha256(ident.public_key).digest()[:16].hex()
        == fingerprint(ident.public_key)
    )
    assert len(ident.fingerprint) == 32


@pytest.mark.parametrize("seed", [b"", bytes(31), bytes(33)])
def test_a_seed_of_another_length_is_refused(seed: bytes) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        Identity.from_seed("n", seed)


@pytest.mark.parametrize("text", ["", "AA=", "A", "a+b/", "AAAA AAA", "ÀÀÀÀ", "AB", 12, None])
def test_base64url_is_read_strictly(text: object) -> None:
    assert unb64(text, 32) is None


def test_a_non_canonical_base64url_spelling_is_refused() -> None:
    assert unb64("AB") is None  # the last character carries bits that are not there
    assert unb64("AA") == b"\x00"


def test_signatures_verify_only_for_their_key_and_data() -> None:
    alpha, beta = node("alpha"), node("beta")
    signature = alpha.sign(b"data")
    assert verify(alpha.public_key, signature, b"data")
    assert not verify(beta.public_key, signature, b"data")
    assert not verify(alpha.public_key, signature, b"datA")
    assert not verify(b"short", signature, b"data")
    assert b64(signature) and len(signature) == 64


def test_the_certificate_carries_the_node_key_and_names_the_node() -> None:
    ident = node("alpha")
    der = ident.certificate()
    cert = x509.load_der_x509_certificate(der)
    assert certificate_key(der) == ident.public_key
    assert cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value == "alpha"
    assert cert.not_valid_before_utc.timestamp() < NOW < cert.not_valid_after_utc.timestamp()
    assert ident.certificate() == der  # the same bytes every time: peers pin it once
    assert node("beta").certificate() != der
    assert pinned(der, ident.public_key)
    pem = cert.public_bytes(serialization.Encoding.PEM)
    assert pinned(pem, ident.public_key)


def test_pinning_refuses_another_key() -> None:
    alpha, beta = node("alpha"), node("beta")
    assert not pinned(alpha.certificate(), beta.public_key)
    assert not pinned(beta.certificate(), alpha.public_key)


def test_pinning_refuses_a_certificate_its_key_did_not_sign() -> None:
    alpha, beta = node("alpha"), node("beta")
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "alpha")])
    cert = x509.load_der_x509_certificate(alpha.certificate())
    forged = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(alpha.signing_key.public_key())
        .serial_number(1)
        .not_valid_before(cert.not_valid_before_utc)
        .not_valid_after(cert.not_valid_after_utc)
        .sign(beta.signing_key, None)  # alpha's key, beta's signature
    )
    assert not pinned(forged.public_bytes(serialization.Encoding.DER), alpha.public_key)


@pytest.mark.parametrize(
    "data", [b"", b"not a certificate", b"-----BEGIN CERTIFICATE-----\nxx\n-----END CERTIFICATE-----\n"]
)
def test_pinning_refuses_what_is_not_a_certificate(data: bytes) -> None:
    assert not pinned(data, node("alpha").public_key)


def test_pinning_refuses_a_certificate_of_another_key_type() -> None:
    import datetime

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "alpha")])
    start = datetime.datetime.fromtimestamp(NOW, datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    assert certificate_key(cert.public_bytes(serialization.Encoding.DER)) is None


def test_the_identity_comes_from_node_key_keeping_its_id(tmp_path: Path) -> None:
    seed = bytes(range(32, 64))
    files.create(tmp_path / "node.key", cjson.document({"id": "a1b2c3d4e5f60718", "key": seed.hex()}))
    ident = Identity.from_seed(*secrets.node_key(tmp_path))
    assert ident.node_id == secrets.node_id(tmp_path) == "a1b2c3d4e5f60718"
    assert ident.public_key == Identity.from_seed("other", seed).public_key


def test_a_fresh_node_key_makes_an_identity(tmp_path: Path) -> None:
    ident, seed = secrets.node_key(tmp_path)
    assert len(seed) == 32 and secrets.node_id(tmp_path) == ident
    assert (tmp_path / "node.key").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("key", [None, 12, "zz" * 32, "ab" * 31, "ab" * 33])
def test_a_node_key_without_a_usable_key_is_refused_but_keeps_its_id(tmp_path: Path, key: object) -> None:
    files.create(tmp_path / "node.key", cjson.document({"id": "a1b2c3d4e5f60718", "key": key}))
    with pytest.raises(secrets.SecretError, match="no usable key"):
        secrets.node_key(tmp_path)
    assert secrets.node_id(tmp_path) == "a1b2c3d4e5f60718"  # the daemon still starts
