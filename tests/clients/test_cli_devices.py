"""`solitaire devices`, `solitaire device-revoke DEVICE` and `solitaire signin CODE --account
NAME` against a real server (protocol 9), output checked at 80 columns."""

from __future__ import annotations

import io
import re

from rich.console import Console

import protocol as p
from clients.cli import render
from clients.cli.__main__ import build_parser
from tests.support.cliplayer import MakePlayer
from tests.support.procs import ServerProcess


def fits_80(text: str) -> bool:
    return all(len(line) <= 80 for line in text.splitlines())


def test_devices_are_listed_and_a_newer_one_signed_out(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    home, laptop = make_player(server.url), make_player(server.url)
    assert home.run("--name", "devvy", "me").code == 0
    shown = home.run("signin-code")
    code = re.search(r"Sign-in code: ([2-9A-Z]{4}-[2-9A-Z]{4})", shown.out)
    assert code is not None, shown.out
    signed = laptop.run("signin", code.group(1), "--account", "DEVVY")
    assert signed.code == 0, signed.err

    listed = laptop.run("devices")
    assert listed.code == 0, listed.err
    assert fits_80(listed.out), listed.out
    assert "first device" in listed.out and "with a code" in listed.out
    assert "this device" in listed.out and "terminal" in listed.out
    assert "may sign out only devices newer than itself" in listed.out, "on trial"
    doc = laptop.run("--json", "devices").json()
    mine = next(d for d in doc["devices"] if d["current"])
    first = next(d for d in doc["devices"] if d["how"] == "original")
    assert mine["how"] == "code" and not first["can_revoke"] and doc["trusted_at"]

    # The laptop (on trial) cannot sign the first device out; the first device can.
    refused = laptop.run("device-revoke", first["device"])
    assert refused.code == 2 and "trust period" in refused.err, refused.err
    home_view = home.run("devices")
    assert home_view.code == 0 and fits_80(home_view.out), home_view.out
    assert "can sign out" in home_view.out
    done = home.run("device-revoke", mine["device"])
    assert done.code == 0, done.err
    assert f"Device {mine['device']} was signed out" in done.err
    assert fits_80(done.out) and "with a code" not in done.out, done.out
    # The laptop's token no longer works.
    gone = laptop.run("devices")
    assert gone.code != 0
    unknown = home.run("device-revoke", "nosuchdev")
    assert unknown.code == 2 and "no device" in unknown.err


def test_the_device_table_and_the_sign_in_notice_fit_80_columns() -> None:
    devices = (
        p.DeviceInfo(
            device="original",
            name="",
            how="original",
            signed_in_at=1_907_755_200_000,
            current=False,
            can_revoke=False,
        ),
        p.DeviceInfo(
            device="Xq3-k9Zp",
            name="A very long device name given by a client",
            how="code",
            signed_in_at=1_907_841_600_000,
            current=True,
            can_revoke=False,
        ),
    )
    console = Console(width=80, record=True, file=io.StringIO(), color_system=None)
    console.print(render.devices_table(devices, 1_908_446_400_000, 1_907_841_600_000))
    console.print(render.device_signed_in("Firefox on Linux", "Xq3-k9Zp"))
    console.print(render.signin_tries_used(1_907_845_200_000))
    text = console.export_text()
    assert fits_80(text), text
    assert "2030-06-15 12:00" in text and "this device" in text and "7 more day(s)" in text
    assert "solitaire device-revoke Xq3-k9Zp" in text.replace("\n", " ")
    assert "until 2030-06-16 13:00 UTC" in text.replace("\n", " "), text


def test_a_device_id_issued_with_a_leading_dash_can_still_be_signed_out() -> None:
    """Ids issued before they were drawn without one: the notice and the device table spell
    the command argparse reads (`--` ends the options) and the parser takes the id after it."""
    console = Console(width=80, record=True, file=io.StringIO(), color_system=None)
    console.print(render.device_signed_in("laptop", "-dash1ab"))
    text = " ".join(console.export_text().split())
    assert "'solitaire device-revoke -- -dash1ab'" in text, text
    args = build_parser().parse_args(["device-revoke", "--", "-dash1ab"])
    assert args.device == "-dash1ab"
    dashed = p.DeviceInfo(
        device="-dash1ab", name="", how="code", signed_in_at=1, current=False, can_revoke=True
    )
    console.print(render.devices_table((dashed,), None, 2))
    text = " ".join(console.export_text().split())
    assert "'solitaire device-revoke -- -dash1ab'" in text, text
    # Names may start with a dash too: the same '--', or '--player=NAME'.
    assert build_parser().parse_args(["profile", "--", "-bob"]).who == "-bob"
    assert build_parser().parse_args(["history", "--player=-bob"]).player == "-bob"
