"""Heart Rate Control Point: reset energy expended; a strap without the control point gets a clear
error (exit 69)."""
from harness.ble import addr, pair
from harness.core import Context, one_sentence, scenario


@scenario("reset-energy", "reset-energy writes 0x01 to the strap's control point (strap resets its energy)", order=70)
def reset_energy(ctx: Context) -> None:
    pair(ctx, "A")
    since = ctx.peer.mark("reset-energy")
    result = ctx.hg("reset-energy", addr(ctx, "A"), timeout=90)
    ctx.expect(result.rc == 0, f"`healthgate reset-energy {addr(ctx, 'A')}` did not exit 0", result)
    ctx.expect(ctx.peer.events("A", "energy-reset", since),
               "strap A's control point never received Reset Energy Expended (0x01)", result)


@scenario("reset-energy-no-cp", "reset-energy on a strap without control point: one clear sentence, exit 69",
          order=75)
def reset_energy_without_control_point(ctx: Context) -> None:
    pair(ctx, "C")
    since = ctx.peer.mark("reset-energy on C")
    result = ctx.hg("reset-energy", addr(ctx, "C"), timeout=90)
    ctx.expect(result.rc == 69, "a strap without a Heart Rate Control Point must give exit 69 (unavailable)", result)
    ctx.expect(one_sentence(result.stderr), "the error must be one clear sentence on stderr", result)
    ctx.expect("control point" in result.stderr.lower(),
               "the error should say the strap has no heart-rate control point", result)
    ctx.expect(ctx.peer.events("C", "connected", since),
               "healthgate never connected to the strap to find out (it must discover, not guess)", result)
