#!/usr/bin/python3
"""Random, realistic, non-matching inspection patterns for scripts/bench-inspect.sh.

usage: inspect_patterns.py COUNT CANARY [--seed N] [--direction D]

Prints COUNT lines of YAML flow mappings, ready to go under
`inspect.rulesets.NAME.patterns:`. Every pattern has `direction: D`
(default `both`; the hand-off path of (a) uses `client-to-server`, so that
the server-to-client direction needs no scanning and an iperf3 upload is
handed back to XDP after `inspect-bytes`). The regexes do not depend on D. The first pattern is the canary: the
literal CANARY, action alert, which the benchmark sends once on purpose to
prove that the stage runs this ruleset (its own counter slot must read 1).
The other COUNT-1 are drawn from the shapes below, all with action reject, so
a pattern that matched the benchmark's own traffic would reset a connection
and stop the run instead of quietly lowering a number.

Every pattern is at least as improbable in random bytes as eight fixed bytes, so it cannot match iperf3's
random payload by chance in any run this size (one shape is eight random
bytes, probability 2^-64 per position), and none can match an empty string.
Words are consonant-vowel pseudo-words of five or more letters, which occur
neither in iperf3's JSON control messages nor in sluice_connrate's filler
text (the alphabet in order, where no two vowels are closer than four
letters). Hyperscan accepts every shape: no backreferences, no lookaround.
The same seed gives the same patterns, and a larger COUNT extends a smaller
one (the first N of 1000 are the N-pattern ruleset), so the points of the
curve differ only by how many patterns there are.
"""
import random
import sys

CONSONANTS = "bcdfghjklmnpqrstvwxz"
VOWELS = "aeiou"


def word(rng, lo=5, hi=9):
    n = rng.randint(lo, hi)
    return "".join(rng.choice(CONSONANTS if i % 2 == 0 else VOWELS) for i in range(n))


def shape(rng, i):
    w = lambda: word(rng)  # noqa: E731
    k = i % 8
    if k == 0:
        return f"[a-z]{{4}}[0-9]{{2}}{w()}[A-Z]{{3}}", False
    if k == 1:
        return f"{w()}[_-]{w()}=[0-9a-f]{{8,32}}", False
    if k == 2:
        return f"flag\\{{{w()}[A-Za-z0-9_]{{4,32}}\\}}", False
    if k == 3:
        return f"/(?:{w()}|{w()})/{w()}\\.(?:php|cgi|jsp)\\?{w()}=", False
    if k == 4:
        return "".join(f"\\x{rng.randrange(256):02x}" for _ in range(8)), False
    if k == 5:
        return f"{w()}:\\s*[0-9]{{3,5}}\\s+{w()}", True
    if k == 6:
        return f"(?:select|union)\\s+{w()}\\s+from\\s+{w()}", True
    return f"{w()}(?:\\.{w()}){{1,3}}@{w()}\\.(?:com|net|org)", False


def main():
    args = sys.argv[1:]
    seed = 20261130
    direction = "both"
    if "--seed" in args:
        j = args.index("--seed")
        seed = int(args[j + 1])
        del args[j : j + 2]
    if "--direction" in args:
        j = args.index("--direction")
        direction = args[j + 1]
        del args[j : j + 2]
    if direction not in ("both", "client-to-server", "server-to-client"):
        sys.exit("--direction must be both, client-to-server or server-to-client")
    if len(args) != 2:
        sys.exit(__doc__)
    count, canary = int(args[0]), args[1]
    if count < 1:
        sys.exit("COUNT must be at least 1")
    rng = random.Random(seed)
    print(f"- {{ name: canary, regex: '{canary}', direction: {direction}, action: alert }}")
    for i in range(1, count):
        regex, caseless = shape(rng, i)
        assert "'" not in regex
        print(
            f"- {{ name: p{i:04d}, regex: '{regex}', direction: {direction}, action: reject"
            f"{', caseless: true' if caseless else ''} }}"
        )


if __name__ == "__main__":
    main()
