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


def refuse_in_unmarked_test(tier, doing, error):
    """Raises `error` naming the test running now when it is not marked `tier` (`doing`: what it was about to
    do, "starts a Vsim"); nothing in a marked test or outside tests."""
    test = os.environ.get(env_name(tier))
    if test:
        raise error(f"{test} {doing} but is not marked {tier}: mark it (pytest.mark.{tier}) or use the {tier} "
                    "fixtures, so that the tiers select it")
