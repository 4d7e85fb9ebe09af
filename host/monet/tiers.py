"""Test tiers: a test that is not marked `sim` must start no sim, one not marked `qemu` no QEMU guest.

While such a test runs, the pytest plugin names it in MONET_TEST_WITHOUT_SIM (or _QEMU); a Vsim or a guest
started then, in the test's process or in a command it runs, is refused with a message naming the test. A
missing mark is then a failing test, not a fast tier (`make test-fast`, `-m "not sim and not qemu"`) that
quietly runs sims.
"""

import os

TIERS = ("sim", "qemu")


def env_name(tier):
    return f"MONET_TEST_WITHOUT_{tier.upper()}"


def unmarked_test(tier):
    """A refusal's text when the test running now is not marked `tier`; None otherwise (and outside tests)."""
    test = os.environ.get(env_name(tier))
    if not test:
        return None
    return (f"{test} starts a {'Vsim' if tier == 'sim' else 'QEMU guest'} but is not marked {tier}: mark it "
            f"(pytest.mark.{tier}) or use the {tier} fixtures, so that the tiers select it")
