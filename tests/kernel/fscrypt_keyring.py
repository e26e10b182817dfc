"""The filesystem encryption keyring from both sides, for kernel_attack28c (red team A28C-1).

  setup HOME     on the host, as the caller: add the caller's key to HOME's filesystem,
                 make HOME an encrypted directory under it and write HOME/secret.txt
  attack HOME    inside the sandbox: read the state, then add a key of its own, remove the
                 caller's, remove it for all users, ask for the superblock's salt; prints
                 one "NAME: ok" or "NAME: ERRNO" line each
  check HOME     on the host, as the caller: whether HOME/secret.txt still reads, whether
                 the sandbox's key is on the filesystem; then removes the caller's key

Numbers and layouts are linux/fscrypt.h's; a key's identifier is HKDF-SHA512 of the raw key
(unsalted extract, info "fscrypt\\0" + context 1), as fs/crypto computes it.
"""
import errno
import fcntl
import hashlib
import hmac
import os
import struct
import sys

SET_POLICY = 0x800C6613
GET_PWSALT = 0x40106614
GET_POLICY_EX = 0xC0096616
ADD_KEY = 0xC0506617
REMOVE_KEY = 0xC0406618
REMOVE_KEY_ALL_USERS = 0xC0406619
GET_KEY_STATUS = 0xC080661A
SPEC_IDENTIFIER = 2
STATUS_ABSENT, STATUS_PRESENT = 1, 2

CALLER_KEY = bytes(range(64))
SANDBOX_KEY = bytes(0xA5 ^ i for i in range(64))


def identifier(raw):
    prk = hmac.new(bytes(64), raw, hashlib.sha512).digest()
    return hmac.new(prk, b"fscrypt\x00\x01\x01", hashlib.sha512).digest()[:16]


def name(err):
    # Linux's EOPNOTSUPP and ENOTSUP are one number, which Python names ENOTSUP.
    return "EOPNOTSUPP" if err == errno.EOPNOTSUPP else errno.errorcode.get(err, str(err))


def ioctl(path, request, buf):
    """None when the call succeeds, else the errno's name."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, request, buf)
        return None
    except OSError as e:
        return name(e.errno)
    finally:
        os.close(fd)


def add_key(path, raw):
    buf = bytearray(80) + raw
    struct.pack_into("II", buf, 0, SPEC_IDENTIFIER, 0)
    struct.pack_into("I", buf, 40, len(raw))
    return ioctl(path, ADD_KEY, buf)


def key_spec(ident, size):
    buf = bytearray(size)
    struct.pack_into("II", buf, 0, SPEC_IDENTIFIER, 0)
    buf[8:24] = ident
    return buf


def key_status(path, ident):
    buf = key_spec(ident, 128)
    err = ioctl(path, GET_KEY_STATUS, buf)
    return err or {STATUS_ABSENT: "absent", STATUS_PRESENT: "present"}.get(
        struct.unpack_from("I", buf, 64)[0], "other")


def say(name, err):
    print(f"{name}: {err or 'ok'}", flush=True)


def setup(home):
    err = add_key(os.path.dirname(home), CALLER_KEY)
    if err:
        sys.exit(f"setup: adding the caller's key: {err}")
    if not os.path.isdir(home):
        os.mkdir(home)
        policy = struct.pack("BBBB4x", 2, 1, 4, 2) + identifier(CALLER_KEY)  # v2, AES-256
        err = ioctl(home, SET_POLICY, bytearray(policy))
        if err:
            sys.exit(f"setup: encrypting {home}: {err}")
        with open(os.path.join(home, "secret.txt"), "w") as f:
            f.write("home data\n")


def attack(home):
    fs = os.path.dirname(home)
    policy = bytearray(9 + 24)
    struct.pack_into("Q", policy, 0, 24)
    err = ioctl(home, GET_POLICY_EX, policy)
    say("policy-read", err)
    ident = bytes(policy[16:32]) if not err else identifier(CALLER_KEY)
    print(f"key-status-read: {key_status(fs, ident)}", flush=True)
    say("add", add_key(fs, SANDBOX_KEY))
    say("remove", ioctl(home, REMOVE_KEY, key_spec(ident, 64)))
    say("remove-all", ioctl(home, REMOVE_KEY_ALL_USERS, key_spec(ident, 64)))
    say("salt", ioctl(fs, GET_PWSALT, bytearray(16)))


def check(home):
    try:
        with open(os.path.join(home, "secret.txt")) as f:
            print(f"home: {f.read().strip()}", flush=True)
    except OSError as e:
        print(f"home: {name(e.errno)}", flush=True)
    fs = os.path.dirname(home)
    print(f"sandbox-key: {key_status(fs, identifier(SANDBOX_KEY))}", flush=True)
    ioctl(fs, REMOVE_KEY, key_spec(identifier(CALLER_KEY), 64))


{"setup": setup, "attack": attack, "check": check}[sys.argv[1]](sys.argv[2])
